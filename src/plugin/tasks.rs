//! Background planning: who waits for a search, starting searches on the
//! worker pool, and applying their results.
//!
//! Searches run on the plugin's own search threads (see
//! [`AnyAnglePlugin::search_threads`](super::AnyAnglePlugin::search_threads)),
//! never on the main thread. Each owns what it needs: an `Arc<Grid>`
//! snapshot, the start and goal in grid coordinates, the options and a
//! cancel flag. The main thread keeps the agents waiting for a search in
//! three lines (see [who is served first](super#who-is-served-first)),
//! fills the threads' priority channels from them, and reads finished
//! searches without blocking.
//!
//! # Pacing
//!
//! Searches for agents standing in a wall or on a blocked path are sent at
//! once. For the others, the number sent ahead is limited by work, not by a
//! count per frame: the plugin keeps about two frames of work waiting for the
//! threads (from the measured frame time and mean search time), so threads
//! never idle while agents wait and no search starts long after it was sent.
//! The threads always take the most urgent search waiting. A frame with
//! nothing to send or apply costs a few atomic loads.
//!
//! # Tickets
//!
//! Each plan an agent asks for gets a fresh *ticket* (a counter). A result
//! whose ticket is not the agent's current one (the goal changed, the
//! request was replaced, another replan started) or whose agent is gone is
//! dropped. Asking for a new plan raises the old search's cancel flag: a
//! thread skips a job whose flag is up, and a running search stops at its
//! next check.

#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectResource;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::prelude::*;
use bevy_math::{DVec2, URect, UVec2, Vec2};

use super::components::{
    NavPath, PathFailed, PathFailure, PathGoal, PathReady, PathRequest, PathStatus, PlanReason,
    Replanning,
};
use super::cost::Meter;
use super::edit_index::EditIndex;
use super::layers::{ProfileId, ViewKey};
use super::nav_grid::{NavGrid, View};
use super::position::{PositionData, Positions, position};
use super::queue::JobQueue;
use super::replan::{EditCheck, cut_at_blocked_segment, edit_impact, way_out};
use super::settings::PathfindingSettings;
use super::workers::{Job, Outcome, Priority, WorkerPool};
use crate::clearance::{Clearance, MAX_EXIT_DISTANCE};
use crate::grid::{EditKind, Grid};
use crate::los::line_of_sight;
use crate::search::{Algorithm, Path, PlanError, Role};
use crate::terrain::Profile;

/// A cancel flag that is raised when dropped: dropping an agent's state (or
/// replacing its search) cancels the search.
pub(crate) struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
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
    /// The cancel flag of the search sent for the current ticket, if any.
    pub(crate) in_flight: Option<CancelOnDrop>,
    /// The priority of the plan the agent waits for (queued or sent).
    pub(crate) priority: Option<Priority>,
    /// Whether the agent waits in the [`JobQueue`] (with `priority`).
    pub(crate) queued: bool,
    /// The request the current plan answers (to ignore writes of an equal
    /// value).
    pub(crate) request: Option<PathRequest>,
    /// The goal (world) the current plan was started with.
    pub(crate) goal: Option<Vec2>,
    /// A point (grid coordinates) of the region the last plan started in:
    /// the end of its path, or the closest reachable point to an
    /// unreachable goal. Region tests use it for an agent that stands in no
    /// free cell (in a wall, off the grid), whose start the planner moved.
    pub(crate) reachable: Option<DVec2>,
    /// Whether the agent carries the [`Replanning`] marker (or a command
    /// adding it is on its way).
    pub(crate) replanning: bool,
    /// The profile and clearance its last search was sent with, whose grid
    /// its path was planned on (and under which it is counted in
    /// [`Planning::clearances`]); `None` before its first search.
    pub(crate) key: Option<ViewKey>,
}

impl PlanState {
    /// Whether a plan is queued or running for the agent.
    pub(crate) fn busy(&self) -> bool {
        self.priority.is_some()
    }

    /// The profile and clearance of the grid its path was planned on.
    pub(crate) fn key(&self) -> ViewKey {
        self.key.unwrap_or((ProfileId::DEFAULT, Clearance::NONE))
    }
}

/// Marker: the agent's goal is an entity, so its position is watched.
#[derive(Component)]
pub(crate) struct FollowsTarget;

/// How many searches to keep sent ahead, from measured frame and search
/// times.
struct Pace {
    last_frame: Option<Instant>,
    /// Smoothed frame interval.
    frame: Duration,
    /// Smoothed time of one search.
    search: Duration,
    /// `WorkerPool::work_done` when last read.
    seen: (u64, Duration),
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            last_frame: None,
            frame: Duration::from_millis(16),
            // Cautious until measured: a burst of slow searches sent at once
            // would keep urgent ones waiting behind it.
            search: Duration::from_millis(2),
            seen: (0, Duration::ZERO),
        }
    }
}

impl Pace {
    /// Updates the estimates (once a frame).
    fn tick(&mut self, pool: &WorkerPool) {
        let now = Instant::now();
        if let Some(last) = self.last_frame.replace(now) {
            let dt = now
                .duration_since(last)
                .clamp(Duration::from_millis(1), Duration::from_millis(100));
            self.frame = (self.frame * 3 + dt) / 4;
        }
        let (done, busy) = pool.work_done();
        if done > self.seen.0 {
            let n = (done - self.seen.0) as u32;
            let mean = busy.saturating_sub(self.seen.1) / n;
            // Many searches since the last frame: their mean is the news;
            // a few: smoothed.
            let smoothed = if n >= 16 {
                mean
            } else {
                (self.search * 3 + mean) / 4
            };
            self.search = smoothed.max(Duration::from_micros(1));
            self.seen = (done, busy);
        }
    }

    /// Searches to keep waiting for the threads: two frames of work.
    fn target(&self, workers: usize) -> usize {
        let per_frame = (2.0 * self.frame.as_secs_f64() / self.search.as_secs_f64()) as usize;
        (per_frame * workers).clamp(8 * workers, 1 << 16)
    }
}

/// The plugin's planning state (not public): the queue, the worker pool,
/// the edit index and what the edit check has seen.
#[derive(Resource)]
pub(crate) struct Planning {
    pub(crate) queue: JobQueue,
    pool: WorkerPool,
    /// Whether the pool was last told to hold its threads.
    paused: bool,
    pace: Pace,
    next_ticket: u64,
    /// Grid versions of the searches sent and not answered, with counts.
    versions_in_flight: BTreeMap<u64, usize>,
    /// Agents with a path, by the cells near its segments (for blocked
    /// cells).
    pub(crate) segments: EditIndex,
    /// Agents with a path, by the box of the ellipse a shortcut must reach
    /// into (for freed cells).
    pub(crate) ellipses: EditIndex,
    /// Agents that any freed cell may concern: fallback paths, unreachable
    /// goals, grids without a free cell.
    pub(crate) watch_freed: EntityHashSet,
    /// Markers to add (`true`) or remove.
    markers: Vec<(Entity, bool)>,
    /// The grid layout and version the edit check has seen.
    pub(crate) seen_layout: u64,
    pub(crate) seen_version: u64,
    /// Reused by the edit check.
    pub(crate) hits: Vec<(Entity, u32)>,
    pub(crate) scratch_edits: Vec<crate::grid::GridEdit>,
    /// How many agents use each profile and clearance ([`PlanState::key`]): the
    /// [`NavGrid`] keeps an eroded grid for each.
    clearances: BTreeMap<ViewKey, u32>,
    /// Whether `clearances` gained or lost a key since the grid was told.
    clearances_changed: bool,
}

impl Planning {
    /// Planning with `threads` search threads.
    pub(crate) fn new(threads: usize) -> Self {
        Planning {
            queue: JobQueue::default(),
            pool: WorkerPool::new(threads),
            paused: false,
            pace: Pace::default(),
            next_ticket: 0,
            versions_in_flight: BTreeMap::new(),
            segments: EditIndex::new(1, 1),
            ellipses: EditIndex::new(1, 1),
            watch_freed: EntityHashSet::default(),
            markers: Vec::new(),
            seen_layout: 0,
            seen_version: 0,
            hits: Vec::new(),
            scratch_edits: Vec::new(),
            clearances: BTreeMap::new(),
            clearances_changed: false,
        }
    }

    /// Counts the agent under clearance `new` (`None`: under none).
    pub(crate) fn count_clearance(&mut self, state: &mut PlanState, new: Option<ViewKey>) {
        if state.key == new {
            return;
        }
        if let Some(old) = state.key
            && let Some(n) = self.clearances.get_mut(&old)
        {
            *n -= 1;
            if *n == 0 {
                self.clearances.remove(&old);
                self.clearances_changed = true;
            }
        }
        if let Some(new) = new {
            let n = self.clearances.entry(new).or_insert(0);
            self.clearances_changed |= *n == 0;
            *n += 1;
        }
        state.key = new;
    }

    /// Has `nav` keep the eroded grids of the clearances in use (and drop
    /// the others) if that set changed, or if `nav` lacks one.
    fn sync_clearances(&mut self, nav: &mut NavGrid) {
        let missing = || self.clearances.keys().any(|&k| nav.view(k).is_none());
        if self.clearances_changed || missing() {
            nav.keep_views(self.clearances.keys().copied());
            self.clearances_changed = false;
        }
    }

    /// Asks for a new plan for `entity`: cancels the running search, takes a
    /// new ticket and queues the agent with the priority `reason` calls for
    /// (raising it if it already waits). An agent with a followable path
    /// keeps it and its status and gets the [`Replanning`] marker; one
    /// without is marked `Pending`.
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
        let has_path = status.has_path();
        let wanted = match reason {
            PlanReason::StartBlocked => Priority::Walled,
            PlanReason::PathBlocked => Priority::Urgent,
            _ if !has_path => Priority::FirstPath,
            _ => Priority::Refine,
        };
        // A plan still wanted for a more urgent reason keeps its place in
        // line, and its reason unless the request itself changed.
        let (reason, priority) = match state.priority {
            Some(old) if old < wanted && reason != PlanReason::NewRequest => (state.reason, old),
            Some(old) if old < wanted => (reason, old),
            _ => (reason, wanted),
        };
        state.reason = reason;
        if !state.queued || state.priority != Some(priority) {
            self.queue.push(entity, priority);
        }
        state.queued = true;
        state.priority = Some(priority);
        if has_path {
            self.mark(entity, state, true);
        } else {
            status.set_if_neq(PathStatus::Pending);
        }
    }

    /// Adds or removes the [`Replanning`] marker (applied by
    /// [`sync_markers`]).
    fn mark(&mut self, entity: Entity, state: &mut PlanState, on: bool) {
        if state.replanning != on {
            state.replanning = on;
            self.markers.push((entity, on));
        }
    }

    /// Ends the agent's planning: not waiting, no marker.
    fn settle(&mut self, entity: Entity, state: &mut PlanState) {
        state.in_flight = None;
        state.priority = None;
        state.queued = false;
        self.mark(entity, state, false);
    }

    /// Forgets everything about an agent whose request is gone.
    pub(crate) fn forget(&mut self, entity: Entity, state: &mut PlanState) {
        self.settle(entity, state);
        self.unindex(entity);
    }

    /// Puts the agent's path and status into the edit index (see
    /// [`super::replan`]): its segments and shortcut ellipse if it has a
    /// path, the freed-cells watch list if its goal is unreachable or the
    /// grid had no free cell. An agent walking back to its path's start
    /// ([`NavPath::next`] 0) from `here` (grid) has that segment indexed
    /// too, so that an edit across it is seen.
    #[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
    pub(crate) fn index(
        &mut self,
        nav: &NavGrid,
        entity: Entity,
        path: &NavPath,
        status: &PathStatus,
        margin: u32,
        here: Option<DVec2>,
        clearance: Clearance,
    ) {
        self.fit(nav);
        // An edit changes the eroded grid up to `reach` cells away.
        let margin = margin + clearance.reach();
        let watch = matches!(
            status,
            PathStatus::Fallback
                | PathStatus::Unreachable
                | PathStatus::Failed(PathFailure::NoFreeCell)
        ) || path.fallback;
        if watch {
            self.watch_freed.insert(entity);
        } else {
            self.watch_freed.remove(&entity);
        }
        let gw = &path.grid_waypoints;
        if gw.is_empty() {
            self.segments.remove(entity);
            self.ellipses.remove(entity);
            return;
        }
        let walk_back = here
            .filter(|h| path.next == 0 && h.is_finite() && *h != gw[0])
            .map(|h| [h, gw[0]]);
        self.segments.set(
            entity,
            segment_boxes(gw, margin).chain(
                walk_back
                    .iter()
                    .flat_map(move |pair| segment_boxes(pair, margin)),
            ),
        );
        let length = crate::geom::polyline_length(gw);
        let reach = f64::from(clearance.reach());
        self.ellipses.set(
            entity,
            [ellipse_box(gw[0], gw[gw.len() - 1], length + 2.0 * reach)],
        );
    }

    /// Sizes the edit index for `nav`'s grid (emptying it if the size
    /// changed).
    fn fit(&mut self, nav: &NavGrid) {
        let size = (nav.grid().width(), nav.grid().height());
        if self.segments.size() != size {
            self.segments = EditIndex::new(size.0, size.1);
            self.ellipses = EditIndex::new(size.0, size.1);
        }
    }

    /// Puts an agent that waits for its first path into the edit index by
    /// where it stands (`here`, grid), so that blocking its cell raises it
    /// to the front of the line.
    pub(crate) fn index_waiting(
        &mut self,
        nav: &NavGrid,
        entity: Entity,
        here: DVec2,
        clearance: Clearance,
    ) {
        self.fit(nav);
        self.ellipses.remove(entity);
        if here.is_finite() {
            let near = DVec2::splat(1.0 + f64::from(clearance.reach()));
            self.segments
                .set(entity, [cell_box(here - near, here + near)]);
        } else {
            self.segments.remove(entity);
        }
    }

    /// Has cells freed near an agent that does not fit where it stands
    /// ([`PathFailure::NoRoom`]) plan it again: those within sight of a
    /// place it may walk to ([`MAX_EXIT_DISTANCE`]), plus the reach of its
    /// clearance.
    pub(crate) fn watch_room(&mut self, entity: Entity, here: DVec2, clearance: Clearance) {
        if here.is_finite() {
            let near = DVec2::splat(f64::from(MAX_EXIT_DISTANCE + clearance.reach() + 1));
            self.ellipses
                .set(entity, [cell_box(here - near, here + near)]);
        }
    }

    /// Removes the agent from the edit index.
    pub(crate) fn unindex(&mut self, entity: Entity) {
        self.segments.remove(entity);
        self.ellipses.remove(entity);
        self.watch_freed.remove(&entity);
    }

    /// Whether searches are sent, running, or waiting for the main thread.
    pub(crate) fn active(&self) -> bool {
        self.pool.outstanding() > 0 || !self.queue.is_empty()
    }

    /// The oldest grid version a search still in flight uses.
    fn oldest_version_in_flight(&self) -> Option<u64> {
        self.versions_in_flight.keys().next().copied()
    }
}

/// Boxes (cells) around a path's segments, `margin` cells wider on each
/// side; long segments are cut into pieces of at most 32 cells each way, so
/// that a box does not cover far more than its segment.
fn segment_boxes(waypoints: &[DVec2], margin: u32) -> impl Iterator<Item = URect> + '_ {
    let m = f64::from(margin);
    let last = waypoints.len() - 1;
    let end = std::iter::once((waypoints[last], waypoints[last]));
    waypoints
        .windows(2)
        .flat_map(|w| {
            let (a, b) = (w[0], w[1]);
            let extent = (b - a).abs().max_element();
            let pieces = ((extent / 32.0).ceil() as usize).max(1);
            (0..pieces).map(move |i| {
                let t0 = i as f64 / pieces as f64;
                let t1 = (i + 1) as f64 / pieces as f64;
                (a.lerp(b, t0), a.lerp(b, t1))
            })
        })
        .chain(end)
        .map(move |(a, b)| cell_box(a.min(b) - m, a.max(b) + m))
}

/// The cells meeting the closed box `[lo, hi]` (grid coordinates), clamped
/// at 0 (the index clips the far side).
fn cell_box(lo: DVec2, hi: DVec2) -> URect {
    let lo = lo.floor().max(DVec2::ZERO);
    let hi = (hi.floor() + DVec2::ONE).max(DVec2::ZERO);
    let cap = f64::from(u32::MAX);
    URect::from_corners(
        UVec2::new(lo.x.min(cap) as u32, lo.y.min(cap) as u32),
        UVec2::new(hi.x.min(cap) as u32, hi.y.min(cap) as u32),
    )
}

/// The cells meeting the bounding box of the ellipse `|p - a| + |p - b| <=
/// length` (a freed cell outside it cannot shorten a path of that length
/// from `a` to `b`), one cell wider for rounding.
fn ellipse_box(a: DVec2, b: DVec2, length: f64) -> URect {
    let c = (a + b) / 2.0;
    let major = (length / 2.0).max(a.distance(b) / 2.0);
    let focal = a.distance(b) / 2.0;
    let minor = (major * major - focal * focal).max(0.0).sqrt();
    let (cos, sin) = if focal > 0.0 {
        let d = (b - a) / (2.0 * focal);
        (d.x, d.y)
    } else {
        (1.0, 0.0)
    };
    let ex = (major * major * cos * cos + minor * minor * sin * sin).sqrt();
    let ey = (major * major * sin * sin + minor * minor * cos * cos).sqrt();
    let half = DVec2::new(ex, ey) + DVec2::ONE;
    cell_box(c - half, c + half)
}

/// How far (cells) an agent may stand off its path's segments and still be
/// found through them: one cell for edits beside the path, plus the
/// off-path distance (at most 8 cells; farther agents replan anyway).
pub(crate) fn index_margin(nav: &NavGrid, settings: &PathfindingSettings) -> u32 {
    let off = f64::from(settings.replan_threshold()) / f64::from(nav.transform().cell_size());
    1 + if off.is_finite() {
        off.ceil().min(8.0) as u32
    } else {
        8
    }
}

/// Counters describing the plugin's background work, updated every frame
/// something happens. Read-only for games (the plugin overwrites it).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, PartialEq, Default, Clone)
)]
pub struct PathfindingDiagnostics {
    /// Searches started since the app began.
    pub searches_started: u64,
    /// Results applied to agents (paths, fallbacks and failures).
    pub results_applied: u64,
    /// Results thrown away because their agent was gone, had asked for a
    /// newer plan, the grid changed under the path, or the agent could no
    /// longer see the path's start (it is then planned again from where it
    /// is).
    pub results_discarded: u64,
    /// Searches stopped by their cancel flag (before or while running).
    pub searches_cancelled: u64,
    /// Searches sent to the search threads and not yet applied.
    pub in_flight: usize,
    /// Agents waiting to be sent to the search threads (or for a
    /// [`NavGrid`]); entries of agents whose request was removed meanwhile
    /// are counted until the queue reaches them.
    pub queued: usize,
    /// Search threads: one per worker, plus stand-ins while long searches
    /// run.
    pub search_threads: usize,
    /// Agents the edit check looked at since the app began (the edit index
    /// hands it only the agents near an edit).
    pub edit_checks: u64,
    /// Searches the search threads ran since the app began (to the end, or
    /// until cancelled while running; not those cancelled before they
    /// started).
    pub searches_finished: u64,
    /// The time those searches took on the search threads, in all. The
    /// mean search time is `search_time / searches_finished`.
    pub search_time: Duration,
    /// The time the plugin's systems took in the schedule's last run: its
    /// cost to the frame, apart from the searches on their own threads.
    pub frame_cost: Duration,
}

impl PathfindingDiagnostics {
    /// The mean time of a finished search so far, or zero before the first.
    #[must_use]
    pub fn mean_search_time(&self) -> Duration {
        if self.searches_finished == 0 {
            Duration::ZERO
        } else {
            let mean = self.search_time.as_nanos() / u128::from(self.searches_finished);
            Duration::from_nanos(u64::try_from(mean).unwrap_or(u64::MAX))
        }
    }
}

/// Sets the agent's status to a failure, clears its path and fires
/// [`PathFailed`].
#[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
pub(crate) fn fail(
    commands: &mut Commands,
    planning: &mut Planning,
    entity: Entity,
    state: &mut PlanState,
    reason: PlanReason,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    new_status: PathStatus,
) {
    planning.settle(entity, state);
    status.set_if_neq(new_status.clone());
    if !path.is_empty() {
        **path = NavPath::default();
    }
    planning.unindex(entity);
    if matches!(
        new_status,
        PathStatus::Unreachable | PathStatus::Failed(PathFailure::NoFreeCell)
    ) {
        planning.watch_freed.insert(entity);
    }
    let failed = PathFailed {
        entity,
        reason,
        status: new_status,
    };
    commands.write_message(failed.clone());
    commands.trigger(failed);
}

type AgentData = (
    &'static PathRequest,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
    PositionData,
);

/// Sends queued agents' searches to the search threads, most urgent first,
/// as far as the pacing allows (see the [module docs](self)).
#[expect(
    clippy::needless_pass_by_value,
    clippy::too_many_arguments,
    reason = "system parameters"
)]
pub(crate) fn dispatch_searches(
    meter: Res<Meter>,
    mut planning: ResMut<Planning>,
    settings: Option<Res<PathfindingSettings>>,
    nav: Option<ResMut<NavGrid>>,
    mut agents: Query<AgentData>,
    positions: Positions,
    mut diagnostics: ResMut<PathfindingDiagnostics>,
    mut commands: Commands,
    #[cfg(feature = "debug-gizmos")] traced: Query<(), With<super::debug::TraceSearch>>,
) {
    let _cost = meter.start();
    let settings = settings.as_deref().copied().unwrap_or_default();
    let planning = &mut *planning;
    if planning.paused != settings.paused {
        planning.paused = settings.paused;
        planning.pool.set_paused(settings.paused);
    }
    if !planning.active() {
        return;
    }
    planning.pace.tick(&planning.pool);
    if planning.pool.outstanding() > 0 {
        planning.pool.supervise();
    }
    let Some(mut nav) = nav else {
        diagnostics.queued = planning.queue.len();
        return;
    };
    // Eroded grids are kept for the clearances agents use, outside change
    // detection: they are derived from the grid, not edits of it.
    let nav = nav.bypass_change_detection();
    let workers = planning.pool.workers();
    let target = planning.pace.target(workers);
    let cap = settings
        .max_searches_in_flight
        .map_or(usize::MAX, |m| m.max(1));
    // Searches for agents in a wall or on a blocked path go out at once;
    // the others as the threads need them (each of those priorities' channel
    // holds about two frames of work). The threads take the most urgent
    // first, so the order of the lines is the order of service.
    for priority in Priority::ALL {
        let paced = priority >= Priority::FirstPath;
        while (!paced || planning.pool.waiting(priority) < target)
            && planning.pool.outstanding() < cap
        {
            let Some(entity) = planning.queue.pop_line(priority) else {
                break;
            };
            #[cfg(feature = "debug-gizmos")]
            let trace = traced.contains(entity);
            #[cfg(not(feature = "debug-gizmos"))]
            let trace = false;
            send_search(
                planning,
                &settings,
                nav,
                (entity, priority, trace),
                &mut agents,
                &positions,
                &mut diagnostics,
                &mut commands,
            );
        }
    }
    diagnostics.in_flight = planning.pool.outstanding();
    diagnostics.queued = planning.queue.len();
    diagnostics.search_threads = planning.pool.threads();
}

/// Sends one queued agent's search (or fails it if it has no valid
/// endpoints); skips a stale queue entry.
#[expect(
    clippy::too_many_arguments,
    reason = "the dispatch system's parameters"
)]
fn send_search(
    planning: &mut Planning,
    settings: &PathfindingSettings,
    nav: &mut NavGrid,
    (entity, priority, trace): (Entity, Priority, bool),
    agents: &mut Query<AgentData>,
    positions: &Positions,
    diagnostics: &mut PathfindingDiagnostics,
    commands: &mut Commands,
) {
    let Ok((request, mut state, mut status, mut path, _)) = agents.get_mut(entity) else {
        return;
    };
    if !state.queued || state.priority != Some(priority) {
        return; // a stale entry: the agent waits elsewhere or not at all
    }
    state.queued = false;
    let plane = nav.transform().plane();
    let target_of = |e: Entity| positions.current(e, plane);
    let here = positions.current(entity, plane);
    let Search {
        start,
        goal,
        key,
        algorithm,
        costed,
    } = match prepare(request, here, target_of, nav, settings) {
        Ok(search) => search,
        Err(failure) => {
            let reason = state.reason;
            fail(
                commands,
                planning,
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
    planning.count_clearance(&mut state, Some(key));
    planning.sync_clearances(nav);
    // (The grid keeps the grid of every profile and clearance counted.)
    let Some((grid, base)) = nav.view(key).map(|v| (v.snapshot(), v.base_snapshot())) else {
        let reason = state.reason;
        let failure = PathFailure::Internal(format!("no grid for {key:?}"));
        fail(
            commands,
            planning,
            entity,
            &mut state,
            reason,
            &mut status,
            &mut path,
            PathStatus::Failed(failure),
        );
        return;
    };
    let costs = costed.and_then(|p| Some((nav.terrain_snapshot()?, p)));
    let cancel = Arc::new(AtomicBool::new(false));
    *planning
        .versions_in_flight
        .entry(nav.version())
        .or_default() += 1;
    planning.pool.send(
        Job {
            entity,
            ticket: state.ticket,
            layout_id: nav.layout_id(),
            grid_version: nav.version(),
            key,
            grid,
            base: (!key.1.is_none()).then_some(base),
            costs,
            start: nav.to_grid(start),
            goal_grid: nav.to_grid(goal),
            goal,
            algorithm,
            options: settings.plan_options(algorithm),
            cancel: Arc::clone(&cancel),
            #[cfg(feature = "debug-gizmos")]
            trace,
        },
        priority,
    );
    #[cfg(not(feature = "debug-gizmos"))]
    let _ = trace;
    state.in_flight = Some(CancelOnDrop(cancel));
    state.goal = Some(goal);
    if *status == PathStatus::Pending {
        *status = PathStatus::Computing;
    }
    diagnostics.searches_started += 1;
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
/// when no planner is named for the agent, else the request fails.
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
        (Some(Algorithm::Anya), Some(_)) => return Err(PathFailure::CostsNotSupported),
        (Some(a), _) => a,
        (None, Some(_)) if settings.algorithm == Algorithm::Anya => Algorithm::LazyTheta,
        (None, _) => settings.algorithm,
    };
    Ok(Search {
        start,
        goal,
        key: (request.profile, clearance),
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

/// Applies finished searches: writes [`NavPath`] and [`PathStatus`] and fires
/// [`PathReady`] or [`PathFailed`]. Never blocks.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn apply_results(
    meter: Res<Meter>,
    mut planning: ResMut<Planning>,
    settings: Option<Res<PathfindingSettings>>,
    mut nav: Option<ResMut<NavGrid>>,
    mut agents: Query<AgentData>,
    mut diagnostics: ResMut<PathfindingDiagnostics>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    let planning = &mut *planning;
    let cancelled = planning.pool.cancelled();
    if diagnostics.searches_cancelled != cancelled {
        diagnostics.searches_cancelled = cancelled;
    }
    let (finished, busy) = planning.pool.work_done();
    if diagnostics.searches_finished != finished {
        diagnostics.searches_finished = finished;
        diagnostics.search_time = busy;
    }
    if !planning.pool.has_outcomes() {
        keep_needed_edits(planning, nav.as_mut());
        return;
    }
    let settings = settings.as_deref().copied().unwrap_or_default();
    let outcomes: Vec<Outcome> = planning.pool.outcomes().collect();
    for done in outcomes {
        #[cfg(feature = "debug-gizmos")]
        let mut done = done;
        planning.pool.answered();
        if let Some(n) = planning.versions_in_flight.get_mut(&done.grid_version) {
            *n -= 1;
            if *n == 0 {
                planning.versions_in_flight.remove(&done.grid_version);
            }
        }
        // A cancelled search is counted as such, not as a discarded result.
        let discarded = u64::from(done.result.is_some());
        let Ok((request, mut state, mut status, mut path, pos)) = agents.get_mut(done.entity)
        else {
            diagnostics.results_discarded += discarded;
            continue;
        };
        // A request changed since `Detect` ran this frame (by a system not
        // ordered against the plugin's) is replanned next frame; its old
        // result must not show meanwhile.
        if state.ticket != done.ticket || state.queued || state.request.as_ref() != Some(request) {
            diagnostics.results_discarded += discarded;
            continue;
        }
        state.in_flight = None;
        // (A search cancelled before it ran has an empty trace.)
        #[cfg(feature = "debug-gizmos")]
        if let Some((trace, took)) = done.trace.take()
            && done.result.is_some()
        {
            super::debug::keep_trace(&mut commands, done.entity, *trace, done.start, took);
        }
        let reason = state.reason;
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
        let Some(result) = done.result.as_ref() else {
            // Cancelled, yet still wanted: plan again.
            planning.request(done.entity, &mut state, &mut status, reason);
            continue;
        };
        // The grid may have changed while the search ran. A path that freed
        // cells might shorten is still valid: it is applied, and a better one
        // planned after it. A path an edit blocked is applied up to the
        // blocked segment, like a live path, and planned again at once: the
        // agent makes progress (an agent in a wall walks out) meanwhile.
        // The grid (eroded for the agent's clearance) the search ran on,
        // as it is now.
        let Some(view) = nav
            .view(done.key)
            .filter(|_| nav.layout_id() == done.layout_id)
        else {
            diagnostics.results_discarded += 1;
            planning.request(
                done.entity,
                &mut state,
                &mut status,
                PlanReason::GridReplaced,
            );
            continue;
        };
        let refine = match staleness(nav, view, &done, result) {
            Some(
                why @ (PlanReason::Shortcut
                | PlanReason::RegionsConnected
                | PlanReason::PathBlocked),
            ) if matches!(result, Ok(found) if !found.waypoints.is_empty()) => Some(why),
            Some(why) => {
                diagnostics.results_discarded += 1;
                planning.request(done.entity, &mut state, &mut status, why);
                continue;
            }
            None => None,
        };
        let here = position(pos, nav.transform().plane()).map(|p| nav.to_grid(p));
        let found = match result {
            Ok(found) if !found.waypoints.is_empty() => found,
            Ok(_) => {
                diagnostics.results_applied += 1;
                let failure = PathFailure::Internal("the planner returned no waypoints".into());
                fail(
                    &mut commands,
                    planning,
                    done.entity,
                    &mut state,
                    reason,
                    &mut status,
                    &mut path,
                    PathStatus::Failed(failure),
                );
                continue;
            }
            // "No room" holds where the search started. An agent that has
            // moved on since (walking out of a place an edit closed in on,
            // or moved by the game) to where a place that fits it is in
            // sight is planned again from where it stands.
            Err(PlanError::NoRoom)
                if here.is_some_and(|p| view.start_point(done.key.1, p).is_some()) =>
            {
                diagnostics.results_discarded += 1;
                planning.request(done.entity, &mut state, &mut status, reason);
                continue;
            }
            Err(error) => {
                diagnostics.results_applied += 1;
                state.reachable = match error {
                    PlanError::Unreachable { closest } => Some(*closest),
                    _ => None,
                };
                let failed = match error {
                    PlanError::Unreachable { .. } => PathStatus::Unreachable,
                    PlanError::NonFinite(Role::Start) => {
                        PathStatus::Failed(PathFailure::NonFiniteStart)
                    }
                    PlanError::NonFinite(Role::Goal) => {
                        PathStatus::Failed(PathFailure::NonFiniteGoal)
                    }
                    PlanError::NoFreeCell => PathStatus::Failed(PathFailure::NoFreeCell),
                    PlanError::NoRoom => PathStatus::Failed(PathFailure::NoRoom),
                    PlanError::BudgetExhausted { stats } => {
                        PathStatus::Failed(PathFailure::BudgetExhausted {
                            expanded: stats.expanded,
                        })
                    }
                    other => PathStatus::Failed(PathFailure::Internal(other.to_string())),
                };
                fail(
                    &mut commands,
                    planning,
                    done.entity,
                    &mut state,
                    reason,
                    &mut status,
                    &mut path,
                    failed,
                );
                // An agent in a wall walks out all the same: its path is
                // the way out alone.
                if let Some(here) = here
                    && !view.grid.is_point_traversable(here)
                    && let Some(way_out) =
                        way_out(nav, done.key, here, Some(done.algorithm), done.goal, false)
                {
                    *path = way_out;
                    let margin = index_margin(nav, &settings);
                    planning.index(
                        nav,
                        done.entity,
                        &path,
                        &status,
                        margin,
                        Some(here),
                        done.key.1,
                    );
                } else if let Some(here) = here {
                    // Where it stands, so that a wall raised under it is seen.
                    planning.index_waiting(nav, done.entity, here, done.key.1);
                    if matches!(error, PlanError::NoRoom) {
                        planning.watch_room(done.entity, here, done.key.1);
                    }
                }
                continue;
            }
        };
        let joined = join(view.grid, found, here, done.start).filter(|j| {
            // Walking back to where the search started is no use when an
            // edit blocked the path beyond (unless that is the way out of a
            // wall).
            !(refine == Some(PlanReason::PathBlocked) && j.next == 0 && !j.start_moved)
        });
        let Some(joined) = joined else {
            // The agent moved out of sight of the path while it was planned:
            // plan again from where it is (it keeps its old path meanwhile).
            diagnostics.results_discarded += 1;
            let why = refine.unwrap_or(reason);
            planning.request(done.entity, &mut state, &mut status, why);
            continue;
        };
        diagnostics.results_applied += 1;
        state.reachable = found.waypoints.last().copied();
        let fallback = found.is_fallback();
        let waypoints: Vec<Vec2> = joined.waypoints.iter().map(|&p| nav.to_world(p)).collect();
        let length = (joined.length * f64::from(nav.transform().cell_size())) as f32;
        *path = NavPath {
            waypoints,
            grid_waypoints: joined.waypoints,
            length,
            next: joined.next,
            grid_version: nav.version(),
            algorithm: Some(done.algorithm),
            goal: done.goal,
            fallback,
            start_moved: joined.start_moved,
            cut: false,
        };
        let at = here.unwrap_or(path.grid_waypoints[0]);
        let refine = match (refine, view.edits_since(done.grid_version)) {
            (Some(PlanReason::PathBlocked), Some(edits)) => {
                let agent = at;
                // The join may have skipped the blocked part. An agent still
                // in a wall is served first.
                let walled = !view.grid.is_point_traversable(agent);
                cut_at_blocked_segment(nav, view.grid, edits, &mut path, agent).then_some(
                    if walled {
                        PlanReason::StartBlocked
                    } else {
                        PlanReason::PathBlocked
                    },
                )
            }
            (other, ..) => other,
        };
        let new_status = if fallback {
            PathStatus::Fallback
        } else {
            PathStatus::Ready
        };
        status.set_if_neq(new_status);
        planning.settle(done.entity, &mut state);
        let margin = index_margin(nav, &settings);
        planning.index(nav, done.entity, &path, &status, margin, here, done.key.1);
        let ready = PathReady {
            entity: done.entity,
            reason,
            fallback,
            length: path.length,
        };
        commands.write_message(ready);
        commands.trigger(ready);
        if let Some(why) = refine {
            planning.request(done.entity, &mut state, &mut status, why);
        }
    }
    keep_needed_edits(planning, nav.as_mut());
    diagnostics.searches_cancelled = planning.pool.cancelled();
    diagnostics.in_flight = planning.pool.outstanding();
    diagnostics.queued = planning.queue.len();
}

/// Tells the grid to keep the edits that searches still in flight (and the
/// edit check) need; older ones may go. Every frame, so that the log does
/// not grow while no search runs.
fn keep_needed_edits(planning: &Planning, nav: Option<&mut ResMut<NavGrid>>) {
    if let Some(nav) = nav {
        let keep = planning
            .oldest_version_in_flight()
            .map_or(planning.seen_version, |v| v.min(planning.seen_version));
        nav.bypass_change_detection().keep_edits_after(keep);
    }
}

/// Adds and removes [`Replanning`] markers as planning asked.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn sync_markers(
    meter: Res<Meter>,
    mut planning: ResMut<Planning>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    if planning.markers.is_empty() {
        return;
    }
    for (entity, on) in planning.markers.drain(..) {
        if on {
            commands.entity(entity).try_insert(Replanning);
        } else {
            commands.entity(entity).try_remove::<Replanning>();
        }
    }
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

/// Joins a found path to where the agent is now (`here`, grid), which is not
/// where the search started (`start`) if the agent kept moving meanwhile.
/// Every segment the agent will walk is visible on the current grid:
///
/// - if the agent is where the search started, the path is followed as
///   planned (from a start the planner moved out of a wall, the agent first
///   walks straight to the path's start, the shortest way out);
/// - else if it sees waypoint 1, that replaces waypoint 0; failing that,
///   the last waypoint it sees (it walked past the first ones on its old
///   path) does;
/// - else if it sees waypoint 0, it walks back there first
///   ([`NavPath::next`] is 0);
/// - else `None`: the agent must be planned again from where it is.
///
/// The sight tests use the current grid, not the search's snapshot: it is
/// the one the agent walks on, and the rest of the path has already been
/// checked against the edits made since ([`staleness`]).
fn join(grid: &Grid, found: &Path, here: Option<DVec2>, start: DVec2) -> Option<Followed> {
    let moved = found.start_moved_from.is_some();
    let planned = || Followed {
        waypoints: found.waypoints.clone(),
        length: found.length,
        next: usize::from(!moved).min(found.waypoints.len()),
        start_moved: moved,
    };
    let Some(here) = here else {
        return Some(planned());
    };
    let w = &found.waypoints;
    if here == start || (!moved && here == w[0]) {
        return Some(planned());
    }
    let seen = if w.len() > 1 && line_of_sight(grid, here, w[1]) {
        Some(1)
    } else {
        (2..w.len())
            .rev()
            .find(|&k| line_of_sight(grid, here, w[k]))
    };
    if let Some(k) = seen {
        let mut waypoints = Vec::with_capacity(w.len() - k + 1);
        waypoints.push(here);
        waypoints.extend_from_slice(&w[k..]);
        let length = crate::geom::polyline_length(&waypoints);
        return Some(Followed {
            waypoints,
            length,
            next: 1,
            start_moved: false,
        });
    }
    line_of_sight(grid, here, w[0]).then(|| Followed {
        next: 0,
        ..planned()
    })
}

/// Whether a result planned on an older grid must be thrown away (and why):
/// the grid was replaced, or the edits made during the search affect the
/// path exactly as they would affect a live one (see [`super::replan`]), or
/// connect an unreachable goal.
fn staleness(
    nav: &NavGrid,
    view: View<'_>,
    done: &Outcome,
    result: &Result<Path, PlanError>,
) -> Option<PlanReason> {
    if nav.layout_id() != done.layout_id {
        return Some(PlanReason::GridReplaced);
    }
    if nav.version() == done.grid_version {
        return None;
    }
    let Some(edits) = view.edits_since(done.grid_version) else {
        return Some(PlanReason::GridReplaced);
    };
    let goal = nav.to_grid(done.goal);
    let check = match result {
        Ok(found) if !found.waypoints.is_empty() => {
            let first =
                usize::from(found.start_moved_from.is_none()).min(found.waypoints.len() - 1);
            EditCheck {
                behind: None,
                from: found.waypoints[0],
                agent: found.waypoints[0],
                region: found.waypoints[0],
                ahead: &found.waypoints[first..],
                goal,
                fallback: found.is_fallback(),
            }
        }
        // The grid had no free cell, or none the agent could walk to; any
        // freed cell may give it one.
        Err(PlanError::NoFreeCell) => {
            return edits
                .iter()
                .any(|e| e.kind != EditKind::Blocked)
                .then_some(PlanReason::RegionsConnected);
        }
        // No room where the agent stands: any edit of the grid itself near it
        // may open a way (a freed cell) or change how close to a wall it
        // may come on the way (a blocked one).
        Err(PlanError::NoRoom) => {
            let near = f64::from(MAX_EXIT_DISTANCE + done.key.1.reach() + 1);
            let Some(edits) = nav.edits_since(done.grid_version) else {
                return Some(PlanReason::GridReplaced);
            };
            return edits
                .iter()
                .any(|e| {
                    let (lo, hi) = (e.rect.min.as_dvec2(), e.rect.max.as_dvec2());
                    (done.start - done.start.clamp(lo, hi)).abs().max_element() <= near
                })
                .then_some(PlanReason::RegionsConnected);
        }
        // The start may lie in a wall or off the grid; `closest` lies in
        // the region the search started in.
        &Err(PlanError::Unreachable { closest }) => EditCheck {
            behind: None,
            from: done.start,
            agent: done.start,
            region: closest,
            ahead: &[],
            goal,
            fallback: true,
        },
        _ => return None,
    };
    edit_impact(view.grid, edits, &check)
}

/// Cancels the search of an agent whose [`PathRequest`] is removed (or which
/// is despawned), and forgets the request so that inserting it again plans.
/// An agent still waiting for its first plan is marked
/// [`PathFailure::RequestRemoved`], so that it does not look busy forever.
#[expect(clippy::needless_pass_by_value, reason = "observer parameters")]
pub(crate) fn on_request_removed(
    removed: On<Remove<PathRequest>>,
    mut planning: ResMut<Planning>,
    mut agents: Query<(&mut PlanState, &mut PathStatus, &mut NavPath)>,
) {
    if let Ok((mut state, mut status, mut path)) = agents.get_mut(removed.entity) {
        planning.forget(removed.entity, &mut state);
        planning.count_clearance(&mut state, None);
        state.request = None;
        state.ticket = 0;
        if status.is_busy() {
            *status = PathStatus::Failed(PathFailure::RequestRemoved);
            if !path.is_empty() {
                *path = NavPath::default();
            }
        }
    } else {
        planning.unindex(removed.entity);
    }
}

/// Every agent's state, for rebuilding the edit index after the grid was
/// replaced.
/// Agents without a path are indexed by where they stand (`here`, world).
pub(crate) fn reindex_all<'a>(
    planning: &mut Planning,
    nav: &NavGrid,
    margin: u32,
    agents: impl Iterator<Item = (Entity, &'a NavPath, &'a PathStatus, Option<Vec2>, Clearance)>,
) {
    let (w, h) = (nav.grid().width(), nav.grid().height());
    planning.segments = EditIndex::new(w, h);
    planning.ellipses = EditIndex::new(w, h);
    planning.watch_freed.clear();
    for (entity, path, status, here, clearance) in agents {
        let here_grid = here.map(|p| nav.to_grid(p));
        planning.index(nav, entity, path, status, margin, here_grid, clearance);
        if let Some(here) = here
            && path.is_empty()
        {
            planning.index_waiting(nav, entity, nav.to_grid(here), clearance);
        }
    }
}
