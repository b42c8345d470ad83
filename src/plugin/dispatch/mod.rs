//! Dispatch: queued agents' searches go to the search executor, most urgent
//! first, as far as the pacing allows.
//!
//! Searches run on the plugin's own search threads (see
//! [`AnyAnglePlugin::search_threads`](crate::plugin::AnyAnglePlugin::search_threads)),
//! or, where there are none, on the main thread in slices within a budget a
//! frame (see [`main_thread`]). Each owns what it needs: an `Arc<Grid>`
//! snapshot, the start and goal in grid coordinates, the options and a
//! cancel flag. The main thread keeps the agents waiting for a search in
//! lines (see [who is served first](crate::plugin#who-is-served-first)),
//! fills the executor's priority lines from them, and reads finished
//! searches without blocking.
//!
//! | module | what it holds |
//! |---|---|
//! | `executor` | [`Searches`]: the one seam between the plugin and where searches run |
//! | `job` | one search to run, its answer, and the routine both executors run it with |
//! | `workers` | the worker pool: search threads and their priority channels |
//! | `main_thread` | the main-thread executor: searches in slices within a budget a frame |
//! | `pace` | how many searches to keep sent ahead |
//! | `fair` | fair turns: every fourth search begun comes from the lines of agents with no path yet or refining one, in turn |
//! | `lockstep` | lockstep ledger: each answer applied in the frame fixed when its search was sent |
//! | `mesh_share` | mesh store: one mesh per (profile, radius class) in use, shared by every search, and the newest grids they follow |
//! | `groups` | shared-goal groups: waiting point agents with one goal, answered by one search from it |
//!
//! # Tickets
//!
//! Each plan an agent asks for gets a fresh *ticket* (a counter). A result
//! whose ticket is not the agent's current one (the goal changed, the
//! request was replaced, another replan started) or whose agent is gone is
//! dropped. Asking for a new plan raises the old search's cancel flag: a
//! thread skips a job whose flag is up, and a running search stops at its
//! next check.

mod executor;
mod fair;
mod groups;
mod job;
mod lockstep;
mod main_thread;
mod mesh_share;
mod pace;
mod route;
mod workers;

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use bevy_platform::time::Instant;

pub(crate) use executor::Searches;
pub(crate) use job::{Outcome, route_job};
pub(crate) use route::{RouteGroup, RouteMember, RouteWork};

use crate::fast_hash::FastMap;
use crate::plugin::agent::{
    AgentIndex, CancelOnDrop, MAX_WAIT, PlanBook, PlanState, Priority, fail,
};
use crate::plugin::api::{
    NavPath, PathFailure, PathGoal, PathRequest, PathStatus, PathfindingSettings,
};
use crate::plugin::stats::{Counters, Meter};
use crate::plugin::world::{Fit, NavGrid, Positions, ViewKey};
use crate::search::Algorithm;
use crate::terrain::Profile;
use groups::Gather;
use job::Job;

/// What dispatch reads and writes of an agent.
type AgentData = (
    &'static PathRequest,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
);

/// The planning resources dispatch and apply change.
#[derive(bevy_ecs::system::SystemParam)]
pub(crate) struct Planning<'w> {
    /// The job queue, tickets, markers and clearances.
    pub(crate) book: ResMut<'w, PlanBook>,
    /// The edit index.
    pub(crate) index: ResMut<'w, AgentIndex>,
    /// The searches sent and not yet applied.
    pub(crate) searches: ResMut<'w, Searches>,
    /// The counters behind the diagnostics.
    pub(crate) counters: ResMut<'w, Counters>,
}

/// Puts the executor in the mode the settings name (lockstep or not,
/// paused or not), before any search of the frame is sent.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn configure_searches(
    settings: Option<Res<PathfindingSettings>>,
    mut searches: ResMut<Searches>,
) {
    let settings = settings.as_deref().copied().unwrap_or_default();
    searches.set_lockstep(settings.lockstep);
    searches.set_mesh_building(settings.mesh_building);
    searches.set_paused(settings.paused);
}

/// Sends queued agents' searches to the executor, most urgent first, as far
/// as the pacing allows (see [`pace`]); without search threads, runs them
/// for the main thread's budget.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
#[cfg_attr(
    feature = "debug-gizmos",
    expect(
        clippy::too_many_arguments,
        reason = "system parameters; the debug view adds which agents to trace"
    )
)]
pub(crate) fn dispatch_searches(
    meter: Res<Meter>,
    mut planning: Planning,
    settings: Option<Res<PathfindingSettings>>,
    mut nav: Option<ResMut<NavGrid>>,
    mut agents: Query<AgentData>,
    positions: Positions,
    mut commands: Commands,
    #[cfg(feature = "debug-gizmos")] traced: Query<(), With<crate::plugin::debug::TraceSearch>>,
) {
    let cost = meter.start();
    let settings = settings.as_deref().copied().unwrap_or_default();
    planning.book.next_frame();
    if planning.searches.outstanding() == 0 && planning.book.queue_is_empty() {
        planning.counters.0.longest_wait = 0;
        return;
    }
    planning.searches.tick(settings.main_thread_budget);
    // Without search threads, the searches run here, for what is left of
    // the budget once the plugin's other systems had their share of the
    // frame; sent a batch at a time, so that none waits long after it was
    // sent and the budget is used while agents wait.
    // What applying the answers and steering will cost after the searches
    // (as of late) is kept out of it too, up to half of it (a frame that
    // applied thousands of answers at once must not starve the next ones).
    let after = meter.after_searches().min(settings.main_thread_budget / 2);
    let budget = settings
        .main_thread_budget
        .saturating_sub(meter.so_far() + cost.elapsed() + after);
    let began = Instant::now();
    // In lockstep mode, pausing holds the searches not yet sent (those
    // sent are each due in their frame).
    let hold = settings.paused && planning.searches.lockstep();
    loop {
        let popped = match nav.as_mut().filter(|_| !hold) {
            Some(nav) => send_searches(
                &mut planning,
                &settings,
                nav.bypass_change_detection(),
                &mut agents,
                &positions,
                &mut commands,
                #[cfg(feature = "debug-gizmos")]
                &traced,
            ),
            None => 0,
        };
        let left = budget.saturating_sub(began.elapsed());
        let idle = planning.searches.work(left);
        if !idle || popped == 0 || planning.book.queue_is_empty() {
            break;
        }
    }
    meter.searches_ended(meter.so_far() + cost.elapsed());
    let counters = &mut planning.counters.0;
    counters.in_flight = planning.searches.outstanding();
    counters.queued = planning.book.queued();
    counters.longest_wait = planning.book.longest_wait();
    counters.search_threads = planning.searches.threads();
}

/// Sends queued agents' searches, most urgent first, as far as the pacing
/// allows; returns how many entries it took from the queue. Eroded grids are kept in `nav` for the clearances agents use,
/// outside change detection: they are derived from the grid, not edits of
/// it.
fn send_searches(
    planning: &mut Planning,
    settings: &PathfindingSettings,
    nav: &mut NavGrid,
    agents: &mut Query<AgentData>,
    positions: &Positions,
    commands: &mut Commands,
    #[cfg(feature = "debug-gizmos")] traced: &Query<(), With<crate::plugin::debug::TraceSearch>>,
) -> usize {
    let mut popped = 0;
    let cap = settings
        .max_searches_in_flight
        .map_or(usize::MAX, |m| m.max(1));
    // Searches that may share one from their goal are held back until the
    // end, and count as the group jobs they would fill.
    let mut gather = Gather::default();
    // (In lockstep mode groups are as large on threads as on the main
    // thread: the same agents share a search on either.)
    let max_group = if planning.searches.threads() == 0 || planning.searches.lockstep() {
        groups::MAX_GROUP_MAIN_THREAD
    } else {
        groups::MAX_GROUP_THREADS
    };
    // Sends (or holds back) the search of one agent taken from a line, as
    // a search of priority `send_as`.
    let take = |planning: &mut Planning,
                nav: &mut NavGrid,
                agents: &mut Query<AgentData>,
                commands: &mut Commands,
                gather: &mut Gather,
                (entity, priority, send_as): (Entity, Priority, Priority)| {
        #[cfg(feature = "debug-gizmos")]
        let trace = traced.contains(entity);
        #[cfg(not(feature = "debug-gizmos"))]
        let trace = false;
        send_search(
            planning,
            settings,
            nav,
            (entity, priority, send_as, trace),
            agents,
            positions,
            commands,
            (gather, max_group),
        );
    };
    // First the agents that have waited long, longest first whatever their
    // line, as searches of the most urgent priority: ahead of every search
    // sent before them (but for agents in a wall), so that no agent waits
    // unboundedly behind more urgent ones. Then every line: searches for
    // agents in a wall or on a blocked path go out at once; the others as
    // the threads need them (each of those priorities' channel holds about
    // two frames of work, so that their backlog waits here, where it
    // ages). The threads take the most urgent first (but for fair turns,
    // see `fair`), so the order of the lines is the order of service.
    let lines = Priority::ALL.map(Some);
    for line in [None].into_iter().chain(lines) {
        let send_as = line.unwrap_or(Priority::Walled);
        while planning.searches.has_room(send_as, cap, gather.jobs())
            && gather.held() < groups::MAX_GATHERED
        {
            let next = match line {
                None => planning.book.pop_aged(MAX_WAIT),
                Some(priority) => planning.book.pop_line(priority).map(|e| (e, priority)),
            };
            let Some((entity, priority)) = next else {
                break;
            };
            popped += 1;
            take(
                planning,
                nav,
                agents,
                commands,
                &mut gather,
                (entity, priority, send_as),
            );
        }
    }
    // Agents further down the paced lines heading for a goal a held-back
    // search has, and that would gather with it, join it now if that makes
    // a group (their entries stay behind, stale).
    if gather.held() > 0 && gather.held() < groups::MAX_GATHERED {
        let plane = nav.transform().plane();
        let version = (nav.layout_id(), nav.version());
        let lines = [Priority::Urgent, Priority::FirstPath, Priority::Refine];
        // (An agent may have a stale entry beside its live one.)
        let mut seen = EntityHashSet::default();
        let mut joining: Vec<(Entity, Priority, groups::Key)> = lines
            .into_iter()
            .flat_map(|p| {
                planning
                    .book
                    .peek_line(p, groups::LOOKAHEAD)
                    .map(move |e| (e, p))
            })
            .filter_map(|(e, priority)| {
                let (request, state, ..) = agents.get(e).ok()?;
                if !state.waits_in(priority) || !gather.heads_for(request.goal) || !seen.insert(e) {
                    return None;
                }
                let here = positions.current(e, plane);
                let target_of = |t: Entity| positions.current(t, plane);
                let search = prepare(request, here, target_of, nav, settings).ok()?;
                let key = groups::Key::new(
                    version,
                    search.key,
                    search.algorithm,
                    nav.to_grid(search.goal),
                );
                (gather.members(&key) > 0).then_some((e, priority, key))
            })
            .collect();
        let mut counts: FastMap<groups::Key, usize> = FastMap::default();
        for (.., key) in &joining {
            *counts.entry(*key).or_insert_with(|| gather.members(key)) += 1;
        }
        joining.retain(|(.., key)| counts[key] >= groups::MIN_GROUP);
        for (entity, priority, _) in joining {
            if gather.held() >= groups::MAX_GATHERED {
                break;
            }
            take(
                planning,
                nav,
                agents,
                commands,
                &mut gather,
                (entity, priority, priority),
            );
        }
    }
    let shared = gather.flush(&mut planning.searches, max_group);
    planning.counters.0.shared_searches += shared as u64;
    popped
}

/// Sends one queued agent's search (or fails it if it has no valid
/// endpoints), or holds it back in `gather` if it may share one; skips a
/// stale queue entry.
#[expect(clippy::too_many_arguments, reason = "dispatch's state, passed on")]
fn send_search(
    planning: &mut Planning,
    settings: &PathfindingSettings,
    nav: &mut NavGrid,
    (entity, priority, send_as, trace): (Entity, Priority, Priority, bool),
    agents: &mut Query<AgentData>,
    positions: &Positions,
    commands: &mut Commands,
    (gather, max_group): (&mut Gather, usize),
) {
    let Ok((request, mut state, mut status, mut path)) = agents.get_mut(entity) else {
        return;
    };
    if !state.waits_in(priority) {
        return; // a stale entry: the agent waits elsewhere or not at all
    }
    let plane = nav.transform().plane();
    let target_of = |e: Entity| positions.current(e, plane);
    let here = positions.current(entity, plane);
    let search = prepare(request, here, target_of, nav, settings).and_then(|search| {
        planning.book.use_grid(&mut state, Some(search.key));
        planning.book.sync_clearances(nav);
        // (The meshes of radii no longer in use go.)
        planning
            .searches
            .mesh_share()
            .set_radii(planning.book.disc_radii());
        // (The grid keeps the grid of every profile and clearance counted.)
        let key = search.key;
        nav.view(key)
            .map(|v| (search, v.snapshot(), v.base_snapshot()))
            .ok_or_else(|| PathFailure::Internal(format!("no grid for {key:?}")))
    });
    let (search, grid, base) = match search {
        Ok(found) => found,
        Err(failure) => {
            let reason = state.reason();
            fail(
                commands,
                &mut planning.book,
                &mut planning.index,
                entity,
                &mut state,
                reason,
                &mut status,
                &mut path,
                PathStatus::Failed(failure),
            );
            return;
        }
    };
    let Search {
        start,
        goal,
        key,
        algorithm,
        costed,
    } = search;
    let costs = costed.and_then(|p| Some((nav.terrain_snapshot()?, p)));
    let (cancel, flag) = CancelOnDrop::new();
    // A search on a mesh may run on a newer grid than its own.
    let share = planning.searches.mesh_share();
    if job::on_shared_mesh(key, algorithm, costs.is_some()) {
        share.offer(nav.layout_id(), key.0, nav.version(), &grid);
    }
    let job = Job {
        seq: 0,
        entity,
        ticket: state.ticket(),
        layout_id: nav.layout_id(),
        grid_version: nav.version(),
        searched_version: nav.version(),
        share,
        key,
        grid,
        base: matches!(key.1, Fit::Eroded(c) if !c.is_none()).then_some(base),
        costs,
        start: nav.to_grid(start),
        goal_grid: nav.to_grid(goal),
        goal,
        algorithm,
        options: settings.plan_options(algorithm),
        cancel: flag,
        #[cfg(feature = "debug-gizmos")]
        trace,
        group: None,
        route: None,
    };
    if settings.shared_searches && Gather::may_share(&job) {
        gather.hold(job, request.goal, send_as, max_group);
    } else {
        planning.searches.send(job, send_as);
    }
    #[cfg(not(feature = "debug-gizmos"))]
    let _ = trace;
    state.begin(&mut status, cancel, goal);
    planning.counters.0.searches_started += 1;
}

/// What a search is sent with, besides the grid.
struct Search {
    start: Vec2,
    goal: Vec2,
    key: ViewKey,
    algorithm: Algorithm,
    /// The profile, if its costs differ.
    costed: Option<Profile>,
}

/// What a request is searched with, or why it cannot be: its endpoints, the
/// grid its profile and radius plan on, and the planner. A profile whose
/// costs differ is planned by Theta* (or A*) with those costs; Anya only
/// when no planner is named for the agent, else the request fails. An agent
/// of a radius plans on the mesh of its profile's grid for its radius
/// (unless the settings say otherwise), with costs on the eroded grid.
fn prepare(
    request: &PathRequest,
    here: Option<Vec2>,
    target: impl Fn(Entity) -> Option<Vec2>,
    nav: &NavGrid,
    settings: &PathfindingSettings,
) -> Result<Search, PathFailure> {
    let (start, goal) = endpoints(request, here, target)?;
    let clearance = nav
        .clearance_of(request.radius)
        .map_err(|_| PathFailure::BadRadius)?;
    let profile = nav
        .profile(request.profile)
        .ok_or(PathFailure::UnknownProfile)?;
    let costed = (!profile.is_uniform()).then(|| profile.clone());
    let algorithm = match (request.algorithm, &costed) {
        (Some(Algorithm::Anya | Algorithm::Polyanya), Some(_)) => {
            return Err(PathFailure::CostsNotSupported);
        }
        (Some(a), _) => a,
        (None, Some(_)) if matches!(settings.algorithm, Algorithm::Anya | Algorithm::Polyanya) => {
            Algorithm::LazyTheta
        }
        (None, _) => settings.algorithm,
    };
    let fit = if !clearance.is_none() && settings.radius_meshes && costed.is_none() {
        nav.disc_of(request.radius)
            .map_err(|_| PathFailure::BadRadius)?
    } else {
        Fit::Eroded(clearance)
    };
    Ok(Search {
        start,
        goal,
        key: (request.profile, fit),
        algorithm,
        costed,
    })
}

/// The world start and goal of a request, or why there are none.
fn endpoints(
    request: &PathRequest,
    start: Option<Vec2>,
    target: impl Fn(Entity) -> Option<Vec2>,
) -> Result<(Vec2, Vec2), PathFailure> {
    let start = start.ok_or(PathFailure::NoPosition)?;
    if !start.is_finite() {
        return Err(PathFailure::NonFiniteStart);
    }
    let goal = match request.goal {
        PathGoal::Point(p) => p,
        PathGoal::Entity(e) => target(e).ok_or(PathFailure::TargetLost(e))?,
    };
    if !goal.is_finite() {
        return Err(PathFailure::NonFiniteGoal);
    }
    Ok((start, goal))
}
