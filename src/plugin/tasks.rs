//! Background planning: the queue, the searches on
//! [`AsyncComputeTaskPool`], and the one system that applies their results.
//!
//! A search owns everything it needs: an `Arc<Grid>` snapshot, the start and
//! goal in grid coordinates, the options, a cancel flag and a channel sender.
//! It runs on a worker thread with that thread's [`Planner`] and sends its
//! result back over a crossbeam channel; the apply system drains the channel
//! without blocking. The main thread never runs a search.
//!
//! Each plan an agent asks for gets a fresh *ticket* (a global counter). A
//! result whose ticket is not the agent's current one (the goal changed, the
//! request was replaced, another replan started) or whose agent is gone is
//! dropped. An agent waits in the queue at most once, however often it
//! replans while it waits. Asking for a new plan drops the agent's in-flight handle,
//! which raises the old search's cancel flag (checked by
//! [`Planner::plan_cancellable`]) and drops its task.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bevy_ecs::prelude::*;
use bevy_math::{DVec2, Vec2};
use bevy_tasks::{AsyncComputeTaskPool, Task, TaskPool};
use crossbeam_channel::{Receiver, Sender};

use super::components::{
    NavPath, PathFailed, PathFailure, PathGoal, PathReady, PathRequest, PathStatus, PlanReason,
};
use super::nav_grid::NavGrid;
use super::position::{PositionData, position};
use super::replan::{EditCheck, edit_impact};
use super::settings::PathfindingSettings;
use crate::grid::EditKind;
use crate::los::line_of_sight;
use crate::search::{Algorithm, Path, PlanError, PlanOptions, Planner, Role};

thread_local! {
    /// One planner per worker thread; its memory is reused across searches.
    static PLANNER: RefCell<Planner> = RefCell::new(Planner::new());
}

/// Counters shared with the searches.
#[derive(Default)]
struct Shared {
    in_flight: AtomicUsize,
    cancelled: AtomicU64,
}

/// Decrements the in-flight count when a search's future ends or is dropped
/// (a task cancelled before it ran is dropped without running), and counts
/// the searches that ended without delivering a result as cancelled.
struct FlightGuard {
    shared: Arc<Shared>,
    delivered: bool,
}

impl Drop for FlightGuard {
    fn drop(&mut self) {
        if !self.delivered {
            self.shared.cancelled.fetch_add(1, Ordering::Relaxed);
        }
        self.shared.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A search running for an agent. Dropping it cancels the search.
pub(crate) struct InFlight {
    cancel: Arc<AtomicBool>,
    _task: Task<()>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// The plugin's bookkeeping for one agent (a required component of
/// [`PathRequest`]; not public).
#[derive(Component, Default)]
pub(crate) struct PlanState {
    /// The ticket of the plan the agent waits for or last received.
    pub(crate) ticket: u64,
    /// Why that plan was asked for.
    pub(crate) reason: PlanReason,
    /// The running search, if any.
    pub(crate) in_flight: Option<InFlight>,
    /// The request the current plan answers (to ignore writes of an equal
    /// value).
    pub(crate) request: Option<PathRequest>,
    /// The goal (world) the current plan was started with.
    pub(crate) goal: Option<Vec2>,
    /// Whether the agent waits in [`Planning`]'s queue for a search slot.
    /// The queue holds each waiting agent once, however often it replans
    /// meanwhile (it may also hold entries of agents whose request was
    /// removed; those have this flag cleared and are skipped).
    pub(crate) queued: bool,
    /// A point (grid coordinates) of the region the last plan started in:
    /// the end of its path, or the closest reachable point to an
    /// unreachable goal. Region tests use it for an agent that stands in no
    /// free cell (in a wall, off the grid), whose start the planner moved.
    pub(crate) reachable: Option<DVec2>,
}

/// Marker: the agent's goal is an entity, so its position is watched.
#[derive(Component)]
pub(crate) struct FollowsTarget;

/// What a search sends back.
struct PlanResult {
    entity: Entity,
    ticket: u64,
    /// The start in grid coordinates.
    start: DVec2,
    layout_id: u64,
    grid_version: u64,
    algorithm: Algorithm,
    goal: Vec2,
    result: Result<Path, PlanError>,
}

/// The plugin's queue and channel (not public).
#[derive(Resource)]
pub(crate) struct Planning {
    queue: VecDeque<Entity>,
    next_ticket: u64,
    sender: Sender<PlanResult>,
    receiver: Receiver<PlanResult>,
    shared: Arc<Shared>,
    /// The grid layout and version the edit-replanning system has seen.
    pub(crate) seen_layout: u64,
    pub(crate) seen_version: u64,
}

impl Default for Planning {
    fn default() -> Self {
        let (sender, receiver) = crossbeam_channel::unbounded();
        Planning {
            queue: VecDeque::new(),
            next_ticket: 0,
            sender,
            receiver,
            shared: Arc::default(),
            seen_layout: 0,
            seen_version: 0,
        }
    }
}

impl Planning {
    /// Asks for a new plan for `entity`: cancels the running search, takes a
    /// new ticket, queues the agent (unless it already waits) and marks it
    /// `Pending`. The current [`NavPath`] is left alone.
    pub(crate) fn request(
        &mut self,
        entity: Entity,
        state: &mut PlanState,
        status: &mut Mut<PathStatus>,
        reason: PlanReason,
    ) {
        state.in_flight = None;
        self.next_ticket += 1;
        state.ticket = self.next_ticket;
        state.reason = reason;
        if !state.queued {
            state.queued = true;
            self.queue.push_back(entity);
        }
        status.set_if_neq(PathStatus::Pending);
    }
}

/// Counters describing the plugin's background work, updated every frame
/// something happens. Read-only for games (the plugin overwrites it).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathfindingDiagnostics {
    /// Searches started since the app began.
    pub searches_started: u64,
    /// Results applied to agents (paths, fallbacks and failures).
    pub results_applied: u64,
    /// Results thrown away because their agent was gone, had asked for a
    /// newer plan, or the grid changed under the path.
    pub results_discarded: u64,
    /// Searches stopped by their cancel flag before finishing.
    pub searches_cancelled: u64,
    /// Searches running now.
    pub in_flight: usize,
    /// Agents waiting for a search slot (or for a [`NavGrid`]), each counted
    /// once; entries of agents whose request was removed meanwhile are
    /// counted until the queue reaches them.
    pub queued: usize,
}

/// Sets the agent's status to a failure, clears its path and fires
/// [`PathFailed`].
fn fail(
    commands: &mut Commands,
    entity: Entity,
    reason: PlanReason,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    new_status: PathStatus,
) {
    status.set_if_neq(new_status.clone());
    if !path.is_empty() {
        **path = NavPath::default();
    }
    commands.trigger(PathFailed {
        entity,
        reason,
        status: new_status,
    });
}

/// Starts queued searches while fewer than
/// [`PathfindingSettings::max_searches_in_flight`] run.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn dispatch_searches(
    mut planning: ResMut<Planning>,
    settings: Option<Res<PathfindingSettings>>,
    nav: Option<Res<NavGrid>>,
    mut agents: Query<(
        &PathRequest,
        &mut PlanState,
        &mut PathStatus,
        &mut NavPath,
        PositionData,
    )>,
    positions: Query<PositionData>,
    mut diagnostics: ResMut<PathfindingDiagnostics>,
    mut commands: Commands,
) {
    if planning.queue.is_empty() {
        return;
    }
    let Some(nav) = nav else {
        if diagnostics.queued != planning.queue.len() {
            diagnostics.queued = planning.queue.len();
        }
        return;
    };
    let settings = settings.as_deref().copied().unwrap_or_default();
    let max = settings.max_searches_in_flight.max(1);
    let pool = AsyncComputeTaskPool::get_or_init(TaskPool::new);
    let planning = &mut *planning;
    while planning.shared.in_flight.load(Ordering::Acquire) < max {
        let Some(entity) = planning.queue.pop_front() else {
            break;
        };
        let Ok((request, mut state, mut status, mut path, pos)) = agents.get_mut(entity) else {
            continue;
        };
        if !std::mem::take(&mut state.queued) {
            continue;
        }
        let ticket = state.ticket;
        let target = |e: Entity| positions.get(e).ok().and_then(position);
        let (start, goal) = match endpoints(request, position(pos), target) {
            Ok(points) => points,
            Err(failure) => {
                let reason = state.reason;
                let failed = PathStatus::Failed(failure);
                fail(
                    &mut commands,
                    entity,
                    reason,
                    &mut status,
                    &mut path,
                    failed,
                );
                continue;
            }
        };
        let algorithm = request.algorithm.unwrap_or(settings.algorithm);
        let job = Job {
            entity,
            ticket,
            layout_id: nav.layout_id(),
            grid: nav.snapshot(),
            start: nav.to_grid(start),
            goal_grid: nav.to_grid(goal),
            goal,
            algorithm,
            options: settings.plan_options(algorithm),
        };
        state.in_flight = Some(spawn(pool, job, planning));
        state.goal = Some(goal);
        status.set_if_neq(PathStatus::Computing);
        diagnostics.searches_started += 1;
    }
    diagnostics.in_flight = planning.shared.in_flight.load(Ordering::Acquire);
    diagnostics.queued = planning.queue.len();
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

/// One search to run.
struct Job {
    entity: Entity,
    ticket: u64,
    layout_id: u64,
    grid: Arc<crate::grid::Grid>,
    start: DVec2,
    goal_grid: DVec2,
    goal: Vec2,
    algorithm: Algorithm,
    options: PlanOptions,
}

fn spawn(pool: &TaskPool, job: Job, planning: &Planning) -> InFlight {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let sender = planning.sender.clone();
    planning.shared.in_flight.fetch_add(1, Ordering::AcqRel);
    let guard = FlightGuard {
        shared: Arc::clone(&planning.shared),
        delivered: false,
    };
    let task = pool.spawn(async move {
        // Move the whole guard in (a field use alone would capture only the
        // field), so it lives exactly as long as the search.
        let mut guard = guard;
        if flag.load(Ordering::Relaxed) {
            return; // dropping the guard counts it as cancelled
        }
        let result = PLANNER.with(|planner| match planner.try_borrow_mut() {
            Ok(mut planner) => {
                planner.plan_cancellable(&job.grid, job.start, job.goal_grid, &job.options, &flag)
            }
            Err(_) => Planner::new().plan_cancellable(
                &job.grid,
                job.start,
                job.goal_grid,
                &job.options,
                &flag,
            ),
        });
        if matches!(result, Err(PlanError::Cancelled)) {
            return;
        }
        // The receiver lives in a resource; if the app is gone, nobody cares.
        let _ = sender.send(PlanResult {
            entity: job.entity,
            ticket: job.ticket,
            start: job.start,
            layout_id: job.layout_id,
            grid_version: job.grid.version(),
            algorithm: job.algorithm,
            goal: job.goal,
            result,
        });
        guard.delivered = true;
    });
    InFlight {
        cancel,
        _task: task,
    }
}

/// Applies finished searches: writes [`NavPath`] and [`PathStatus`] and fires
/// [`PathReady`] or [`PathFailed`]. Never blocks.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn apply_results(
    mut planning: ResMut<Planning>,
    nav: Option<Res<NavGrid>>,
    mut agents: Query<(
        &PathRequest,
        &mut PlanState,
        &mut PathStatus,
        &mut NavPath,
        PositionData,
    )>,
    mut diagnostics: ResMut<PathfindingDiagnostics>,
    mut commands: Commands,
) {
    let cancelled = planning.shared.cancelled.load(Ordering::Relaxed);
    let in_flight = planning.shared.in_flight.load(Ordering::Acquire);
    if diagnostics.searches_cancelled != cancelled || diagnostics.in_flight != in_flight {
        diagnostics.searches_cancelled = cancelled;
        diagnostics.in_flight = in_flight;
    }
    if planning.receiver.is_empty() {
        return;
    }
    let results: Vec<PlanResult> = planning.receiver.try_iter().collect();
    for done in results {
        let Ok((request, mut state, mut status, mut path, pos)) = agents.get_mut(done.entity)
        else {
            diagnostics.results_discarded += 1;
            continue;
        };
        // A request changed since `Detect` ran this frame (by a system not
        // ordered against the plugin's) is replanned next frame; its old
        // result must not show meanwhile.
        if state.ticket != done.ticket || state.request.as_ref() != Some(request) {
            diagnostics.results_discarded += 1;
            continue;
        }
        state.in_flight = None;
        let reason = state.reason;
        // The grid may have changed while the search ran.
        let Some(nav) = nav.as_deref() else {
            diagnostics.results_discarded += 1;
            planning.request(
                done.entity,
                &mut state,
                &mut status,
                PlanReason::GridReplaced,
            );
            continue;
        };
        if let Some(why) = staleness(nav, &done) {
            diagnostics.results_discarded += 1;
            planning.request(done.entity, &mut state, &mut status, why);
            continue;
        }
        diagnostics.results_applied += 1;
        state.reachable = match &done.result {
            Ok(found) => found.waypoints.last().copied(),
            Err(PlanError::Unreachable { closest }) => Some(*closest),
            Err(_) => None,
        };
        let found = match done.result {
            Ok(found) if !found.waypoints.is_empty() => found,
            Ok(_) => {
                let failure = PathFailure::Internal("the planner returned no waypoints".into());
                let failed = PathStatus::Failed(failure);
                fail(
                    &mut commands,
                    done.entity,
                    reason,
                    &mut status,
                    &mut path,
                    failed,
                );
                continue;
            }
            Err(error) => {
                let failed = match error {
                    PlanError::Unreachable { .. } => PathStatus::Unreachable,
                    PlanError::NonFinite(Role::Start) => {
                        PathStatus::Failed(PathFailure::NonFiniteStart)
                    }
                    PlanError::NonFinite(Role::Goal) => {
                        PathStatus::Failed(PathFailure::NonFiniteGoal)
                    }
                    PlanError::NoFreeCell => PathStatus::Failed(PathFailure::NoFreeCell),
                    PlanError::BudgetExhausted { stats } => {
                        PathStatus::Failed(PathFailure::BudgetExhausted {
                            expanded: stats.expanded,
                        })
                    }
                    other => PathStatus::Failed(PathFailure::Internal(other.to_string())),
                };
                fail(
                    &mut commands,
                    done.entity,
                    reason,
                    &mut status,
                    &mut path,
                    failed,
                );
                continue;
            }
        };
        let fallback = found.is_fallback();
        let here = position(pos);
        let start = from_where_the_agent_is(nav, found, here);
        let waypoints: Vec<Vec2> = start.waypoints.iter().map(|&p| nav.to_world(p)).collect();
        let length = (start.length * f64::from(nav.transform().cell_size())) as f32;
        *path = NavPath {
            waypoints,
            grid_waypoints: start.waypoints,
            length,
            next: start.next,
            grid_version: done.grid_version,
            algorithm: done.algorithm,
            goal: done.goal,
            fallback,
            start_moved: start.start_moved,
        };
        status.set_if_neq(if fallback {
            PathStatus::Fallback
        } else {
            PathStatus::Ready
        });
        commands.trigger(PathReady {
            entity: done.entity,
            reason,
            fallback,
            length,
        });
    }
    diagnostics.searches_cancelled = planning.shared.cancelled.load(Ordering::Relaxed);
    diagnostics.in_flight = planning.shared.in_flight.load(Ordering::Acquire);
    diagnostics.queued = planning.queue.len();
}

/// A found path as the agent will follow it.
struct Followed {
    /// Grid waypoints.
    waypoints: Vec<DVec2>,
    /// Length in grid units.
    length: f64,
    /// The waypoint to head for ([`NavPath::next`]).
    next: usize,
    /// Whether the path starts at a point the start was moved to.
    start_moved: bool,
}

/// Makes a found path start where the agent is now (`here`, world), which
/// is not where it was when the search began if it kept moving meanwhile:
/// if the agent sees waypoint 1 on the current grid, it replaces waypoint 0
/// and the agent heads for waypoint 1; otherwise the path is kept and the
/// agent heads back to waypoint 0 first (as from a moved start).
///
/// The sight test uses the current grid, not the search's snapshot: it is
/// the one the agent walks on, and the rest of the path has already been
/// checked against the edits made since ([`staleness`]).
fn from_where_the_agent_is(nav: &NavGrid, found: Path, here: Option<Vec2>) -> Followed {
    let moved = found.start_moved_from.is_some();
    let mut waypoints = found.waypoints;
    let here = here.map(|p| nav.to_grid(p));
    let (Some(&first), Some(&second)) = (waypoints.first(), waypoints.get(1)) else {
        // A single point: the agent is there unless its start was moved.
        let next = usize::from(!moved).min(waypoints.len());
        return Followed {
            waypoints,
            length: found.length,
            next,
            start_moved: moved,
        };
    };
    if here == Some(first) {
        return Followed {
            waypoints,
            length: found.length,
            next: 1,
            start_moved: moved,
        };
    }
    match here {
        Some(here) if line_of_sight(nav.grid(), here, second) => {
            let length = found.length - first.distance(second) + here.distance(second);
            waypoints[0] = here;
            Followed {
                waypoints,
                length,
                next: 1,
                start_moved: false,
            }
        }
        _ => Followed {
            waypoints,
            length: found.length,
            next: 0,
            start_moved: moved,
        },
    }
}

/// Whether a result planned on an older grid must be thrown away (and why):
/// the grid was replaced, or the edits made during the search affect the
/// path exactly as they would affect a live one (see [`super::replan`]), or
/// connect an unreachable goal.
fn staleness(nav: &NavGrid, done: &PlanResult) -> Option<PlanReason> {
    if nav.layout_id() != done.layout_id {
        return Some(PlanReason::GridReplaced);
    }
    if nav.version() == done.grid_version {
        return None;
    }
    let Some(edits) = nav.edits_since(done.grid_version) else {
        return Some(PlanReason::GridReplaced);
    };
    let goal = nav.to_grid(done.goal);
    let check = match &done.result {
        Ok(found) if !found.waypoints.is_empty() => {
            let first =
                usize::from(found.start_moved_from.is_none()).min(found.waypoints.len() - 1);
            EditCheck {
                from: found.waypoints[0],
                agent: found.waypoints[0],
                region: found.waypoints[0],
                ahead: &found.waypoints[first..],
                goal,
                fallback: found.is_fallback(),
            }
        }
        // The grid had no free cell; any freed cell gives the agent one.
        Err(PlanError::NoFreeCell) => {
            return edits
                .iter()
                .any(|e| e.kind != EditKind::Blocked)
                .then_some(PlanReason::RegionsConnected);
        }
        // The start may lie in a wall or off the grid; `closest` lies in
        // the region the search started in.
        &Err(PlanError::Unreachable { closest }) => EditCheck {
            from: done.start,
            agent: done.start,
            region: closest,
            ahead: &[],
            goal,
            fallback: true,
        },
        _ => return None,
    };
    edit_impact(nav.grid(), edits, &check)
}

/// Cancels the search of an agent whose [`PathRequest`] is removed (or which
/// is despawned), and forgets the request so that inserting it again plans.
/// An agent still waiting for a plan is marked
/// [`PathFailure::RequestRemoved`], so that it does not look busy forever.
#[expect(clippy::needless_pass_by_value, reason = "observer parameters")]
pub(crate) fn on_request_removed(
    removed: On<Remove<PathRequest>>,
    mut agents: Query<(&mut PlanState, &mut PathStatus, &mut NavPath)>,
) {
    if let Ok((mut state, mut status, mut path)) = agents.get_mut(removed.entity) {
        state.in_flight = None;
        state.request = None;
        state.ticket = 0;
        state.queued = false;
        if status.is_busy() {
            *status = PathStatus::Failed(PathFailure::RequestRemoved);
            if !path.is_empty() {
                *path = NavPath::default();
            }
        }
    }
}
