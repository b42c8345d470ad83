//! An agent's planning state, and the only code that changes it.
//!
//! Every agent carries a [`PlanState`] (attached by the plugin beside its
//! [`PathRequest`]). Its fields are private to this module: the other stages
//! read them through getters and move an agent from phase to phase only
//! through the named transitions below, methods of [`PlanState`] where the
//! agent alone changes, of [`PlanBook`] where the job queue, the tickets, the
//! [`Replanning`] markers to add or remove or the clearances in use change
//! with it:
//!
//! ```text
//!           request              begin                 finish
//!   Idle ────────────▶ Queued(p) ───────▶ InFlight(p) ─────────▶ Idle
//!    ▲                  ▲  │   ▲               │
//!    │                  │  └───┘ request       │
//!    │                  └──────────────────────┘ request (cancels the search)
//!    └──── stop (a failure) or forget: from any phase
//! ```
//!
//! - [`PlanBook::request`]: a new plan is wanted (a new ticket; a running
//!   search is cancelled; the agent waits in the line its reason calls for,
//!   or a more urgent one it already waits in).
//! - [`PlanState::begin`]: its search was sent to the search threads.
//! - [`PlanState::receive`]: a search answered; accepted only if it answers
//!   the agent's current ticket and request. The agent stays in flight until
//!   the answer is applied ([`PlanBook::finish`]), turned into a failure
//!   ([`PlanBook::stop`]) or replaced ([`PlanBook::request`]).
//! - [`PlanBook::forget`]: the request is gone.
//! - [`PlanState::record_region`]: a failed search told where it started.
//! - [`PlanState::replace_request`] records the request plans answer;
//!   [`PlanBook::use_grid`] the grid (profile and clearance) they run on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy_ecs::prelude::*;
use bevy_math::{DVec2, Vec2};

use super::queue::{JobQueue, Priority};
#[cfg(doc)]
use crate::plugin::api::Replanning;
use crate::plugin::api::{PathRequest, PathStatus, PlanReason};
use crate::plugin::world::{Fit, NavGrid, ProfileId, ViewKey};

/// A cancel flag that is raised when dropped: dropping an agent's state (or
/// replacing its search) cancels the search.
pub(crate) struct CancelOnDrop(Arc<AtomicBool>);

impl CancelOnDrop {
    /// A new flag, lowered, and the handle a search checks.
    pub(crate) fn new() -> (CancelOnDrop, Arc<AtomicBool>) {
        let flag = Arc::new(AtomicBool::new(false));
        (CancelOnDrop(Arc::clone(&flag)), flag)
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Where an agent's plan stands.
#[derive(Default)]
enum Phase {
    /// No plan is wanted.
    #[default]
    Idle,
    /// Waiting in the job queue's line of this priority.
    Queued(Priority),
    /// Its search was sent with this priority; dropping the flag cancels it.
    InFlight {
        priority: Priority,
        _cancel: CancelOnDrop,
    },
}

/// The plugin's bookkeeping for one agent (attached beside each
/// [`PathRequest`]; not public). Written only by [`PlanBook`].
#[derive(Component, Default)]
pub(crate) struct PlanState {
    /// The ticket of the plan the agent waits for or last received.
    ticket: u64,
    /// Why that plan was asked for.
    reason: PlanReason,
    phase: Phase,
    /// The request the current plan answers (to ignore writes of an equal
    /// value).
    request: Option<PathRequest>,
    /// The goal (world) the current plan was started with.
    goal: Option<Vec2>,
    /// A point (grid coordinates) of the region the last plan started in:
    /// the end of its path, or the closest reachable point to an
    /// unreachable goal. Region tests use it for an agent that stands in no
    /// free cell (in a wall, off the grid), whose start the planner moved.
    reachable: Option<DVec2>,
    /// Whether the agent carries the [`Replanning`] marker (or a command
    /// adding it is on its way).
    replanning: bool,
    /// The queue's frame the agent began waiting for a plan in: kept while
    /// it waits, in line or in flight, however often it is queued again
    /// (an answer thrown away, a search cancelled by a newer request), so
    /// that it keeps its age (see [`JobQueue`](super::queue::JobQueue)).
    since: Option<u32>,
    /// The profile and clearance its last search was sent with, whose grid
    /// its path was planned on (and under which it is counted by
    /// [`PlanBook`]); `None` before its first search.
    key: Option<ViewKey>,
}

impl PlanState {
    /// The ticket of the plan the agent waits for or last received.
    pub(crate) fn ticket(&self) -> u64 {
        self.ticket
    }

    /// Why the current plan was asked for.
    pub(crate) fn reason(&self) -> PlanReason {
        self.reason
    }

    /// Whether a plan is queued or running for the agent.
    pub(crate) fn plan_pending(&self) -> bool {
        !matches!(self.phase, Phase::Idle)
    }

    /// Whether the agent waits in the job queue.
    pub(crate) fn queued(&self) -> bool {
        matches!(self.phase, Phase::Queued(_))
    }

    /// Whether the agent waits in the queue's line of `priority` (an entry
    /// of another line is stale).
    pub(crate) fn waits_in(&self, priority: Priority) -> bool {
        matches!(self.phase, Phase::Queued(p) if p == priority)
    }

    /// Whether its search has been sent and not yet answered.
    pub(crate) fn in_flight(&self) -> bool {
        matches!(self.phase, Phase::InFlight { .. })
    }

    /// The priority of the plan the agent waits for (queued or sent).
    pub(crate) fn priority(&self) -> Option<Priority> {
        match self.phase {
            Phase::Idle => None,
            Phase::Queued(p) | Phase::InFlight { priority: p, .. } => Some(p),
        }
    }

    /// The request the current plan answers; `None` before the first.
    pub(crate) fn request(&self) -> Option<&PathRequest> {
        self.request.as_ref()
    }

    /// The goal (world) the last search was started with.
    pub(crate) fn goal(&self) -> Option<Vec2> {
        self.goal
    }

    /// A point of the region the last plan started in (see the field).
    pub(crate) fn reachable(&self) -> Option<DVec2> {
        self.reachable
    }

    /// The profile and fit of the grid its path was planned on.
    pub(crate) fn key(&self) -> ViewKey {
        self.key.unwrap_or((ProfileId::DEFAULT, Fit::POINT))
    }

    /// Records a point of the region its last search started in (see
    /// [`PlanState::reachable`]), as the search's answer told it.
    pub(crate) fn record_region(&mut self, reachable: Option<DVec2>) {
        self.reachable = reachable;
    }

    // Transitions that touch nothing but the agent's own state.

    /// Records the request the agent's plans now answer; returns the one
    /// before (`None` for a new agent).
    pub(crate) fn replace_request(&mut self, request: PathRequest) -> Option<PathRequest> {
        self.request.replace(request)
    }

    /// The agent's search was sent (to `goal`, on the grid of `key`, which
    /// [`PlanBook::use_grid`] counted): it is in flight until answered, and
    /// an agent with nothing to follow is marked `Computing`.
    pub(crate) fn begin(&mut self, status: &mut Mut<PathStatus>, cancel: CancelOnDrop, goal: Vec2) {
        let priority = self.priority().unwrap_or(Priority::FirstPath);
        self.phase = Phase::InFlight {
            priority,
            _cancel: cancel,
        };
        self.goal = Some(goal);
        if **status == PathStatus::Pending {
            **status = PathStatus::Computing;
        }
    }

    /// Whether a search's answer (for `ticket`, planned for `request`) is
    /// still wanted, and if so why it was asked for. An answer to an older
    /// ticket, to an agent now waiting in line, or to a request changed
    /// since (by a system not ordered against the plugin's) is not.
    pub(crate) fn receive(&self, ticket: u64, request: &PathRequest) -> Option<PlanReason> {
        (self.ticket == ticket && !self.queued() && self.request.as_ref() == Some(request))
            .then_some(self.reason)
    }
}

/// The agents' plans (not public): the job queue, the tickets, the
/// [`Replanning`] markers to sync and how many agents use each grid. The
/// transitions of [`PlanState`] are its methods.
#[derive(Resource, Default)]
pub(crate) struct PlanBook {
    queue: JobQueue,
    next_ticket: u64,
    /// Markers to add (`true`) or remove.
    markers: Vec<(Entity, bool)>,
    /// How many agents use each profile and clearance ([`PlanState::key`]):
    /// the [`NavGrid`] keeps an eroded grid for each.
    clearances: BTreeMap<ViewKey, u32>,
    /// Whether `clearances` gained or lost a key since the grid was told.
    clearances_changed: bool,
}

impl PlanBook {
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
        let (reason, priority) = match state.priority() {
            Some(old) if old < wanted && reason != PlanReason::NewRequest => (state.reason, old),
            Some(old) if old < wanted => (reason, old),
            _ => (reason, wanted),
        };
        state.reason = reason;
        let since = *state.since.get_or_insert(self.queue.frame());
        if !state.waits_in(priority) {
            self.queue.push(entity, priority, since);
        }
        // Replacing an in-flight phase drops its flag: the search stops.
        state.phase = Phase::Queued(priority);
        if has_path {
            self.mark(entity, state, true);
        } else {
            status.set_if_neq(PathStatus::Pending);
        }
    }

    /// The agent's answer was applied: planning ends, and `reachable` is a
    /// point of the region its search started in (see
    /// [`PlanState::reachable`]).
    pub(crate) fn finish(
        &mut self,
        entity: Entity,
        state: &mut PlanState,
        reachable: Option<DVec2>,
    ) {
        state.record_region(reachable);
        self.stop(entity, state);
    }

    /// Planning ends without a new path (a failure, or nothing to do): not
    /// waiting, no search, no marker.
    pub(crate) fn stop(&mut self, entity: Entity, state: &mut PlanState) {
        state.phase = Phase::Idle;
        state.since = None;
        self.mark(entity, state, false);
    }

    /// Forgets everything about an agent whose request is gone: its search
    /// is cancelled, its grid no longer counted, and inserting a request
    /// again plans afresh.
    pub(crate) fn forget(&mut self, entity: Entity, state: &mut PlanState) {
        self.stop(entity, state);
        self.use_grid(state, None);
        state.request = None;
        state.ticket = 0;
    }

    /// Counts the agent under the grid of `key` (`None`: under none).
    pub(crate) fn use_grid(&mut self, state: &mut PlanState, key: Option<ViewKey>) {
        if state.key == key {
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
        if let Some(new) = key {
            let n = self.clearances.entry(new).or_insert(0);
            self.clearances_changed |= *n == 0;
            *n += 1;
        }
        state.key = key;
    }

    /// The radii of the meshes agents use (64ths of a cell).
    pub(crate) fn disc_radii(&self) -> impl Iterator<Item = u32> + '_ {
        self.clearances.keys().filter_map(|&(_, fit)| match fit {
            Fit::Disc(n) => Some(n),
            Fit::Eroded(_) => None,
        })
    }

    /// Has `nav` keep the eroded grids of the clearances in use (and drop
    /// the others) if that set changed, or if `nav` lacks one.
    pub(crate) fn sync_clearances(&mut self, nav: &mut NavGrid) {
        let missing = || self.clearances.keys().any(|&k| nav.view(k).is_none());
        if self.clearances_changed || missing() {
            nav.keep_views(self.clearances.keys().copied());
            self.clearances_changed = false;
        }
    }

    /// The next queued agent of the line of `priority` (possibly a stale
    /// entry: see [`PlanState::waits_in`]).
    pub(crate) fn pop_line(&mut self, priority: Priority) -> Option<Entity> {
        self.queue.pop_line(priority)
    }

    /// The queued agent that has waited longest of those at the front of
    /// the lines that age, with its line, if it has waited at least
    /// `frames` frames (possibly a stale entry).
    pub(crate) fn pop_aged(&mut self, frames: u32) -> Option<(Entity, Priority)> {
        self.queue.pop_aged(frames)
    }

    /// A frame has passed (for the queue's ages).
    pub(crate) fn next_frame(&mut self) {
        self.queue.next_frame();
    }

    /// The most frames a queued entry has waited (stale ones included).
    pub(crate) fn longest_wait(&self) -> u32 {
        self.queue.longest_wait()
    }

    /// The first `n` queued agents of the line of `priority`, left in the
    /// queue (possibly stale entries). One that is sent now leaves its
    /// entry behind as a stale one.
    pub(crate) fn peek_line(&self, priority: Priority, n: usize) -> impl Iterator<Item = Entity> {
        self.queue.peek_line(priority, n)
    }

    /// Entries waiting in the queue (stale ones included).
    pub(crate) fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Whether no entry waits in the queue.
    pub(crate) fn queue_is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The [`Replanning`] markers to add (`true`) or remove since the last
    /// call.
    pub(crate) fn drain_markers(&mut self) -> std::vec::Drain<'_, (Entity, bool)> {
        self.markers.drain(..)
    }

    /// Adds or removes the [`Replanning`] marker (applied by
    /// [`sync_markers`](super::sync_markers)).
    fn mark(&mut self, entity: Entity, state: &mut PlanState, on: bool) {
        if state.replanning != on {
            state.replanning = on;
            self.markers.push((entity, on));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One agent in a world, for the transitions that take `Mut`.
    fn agent(status: PathStatus) -> (World, Entity) {
        let mut world = World::new();
        let e = world.spawn((PlanState::default(), status)).id();
        (world, e)
    }

    fn step<R>(
        world: &mut World,
        book: &mut PlanBook,
        e: Entity,
        f: impl FnOnce(&mut PlanBook, &mut PlanState, &mut Mut<PathStatus>) -> R,
    ) -> R {
        let mut entity = world.entity_mut(e);
        let mut state = entity.take::<PlanState>().unwrap();
        let r = {
            let mut status = entity.get_mut::<PathStatus>().unwrap();
            f(book, &mut state, &mut status)
        };
        entity.insert(state);
        r
    }

    fn state(world: &World, e: Entity) -> &PlanState {
        world.get::<PlanState>(e).unwrap()
    }

    #[test]
    fn a_first_request_queues_the_agent_as_pending() {
        let (mut world, e) = agent(PathStatus::Pending);
        let mut book = PlanBook::default();
        step(&mut world, &mut book, e, |b, s, st| {
            b.request(e, s, st, PlanReason::NewRequest);
        });
        let s = state(&world, e);
        assert!(s.waits_in(Priority::FirstPath) && s.plan_pending() && !s.in_flight());
        assert_eq!(s.ticket(), 1);
        assert_eq!(book.queued(), 1);
        assert!(book.markers.is_empty(), "no path: no Replanning marker");
        assert_eq!(book.pop_line(Priority::FirstPath), Some(e));
    }

    #[test]
    fn an_agent_with_a_path_replans_under_the_marker_and_keeps_its_status() {
        let (mut world, e) = agent(PathStatus::Ready);
        let mut book = PlanBook::default();
        step(&mut world, &mut book, e, |b, s, st| {
            b.request(e, s, st, PlanReason::Shortcut);
        });
        assert!(state(&world, e).waits_in(Priority::Refine));
        assert_eq!(*world.get::<PathStatus>(e).unwrap(), PathStatus::Ready);
        assert_eq!(book.drain_markers().collect::<Vec<_>>(), [(e, true)]);
        step(&mut world, &mut book, e, |b, s, _| b.finish(e, s, None));
        assert!(!state(&world, e).plan_pending());
        assert_eq!(book.drain_markers().collect::<Vec<_>>(), [(e, false)]);
    }

    #[test]
    fn a_less_urgent_request_keeps_the_place_and_reason_in_line() {
        let (mut world, e) = agent(PathStatus::Ready);
        let mut book = PlanBook::default();
        step(&mut world, &mut book, e, |b, s, st| {
            b.request(e, s, st, PlanReason::PathBlocked);
            b.request(e, s, st, PlanReason::Shortcut);
        });
        let s = state(&world, e);
        assert!(s.waits_in(Priority::Urgent));
        assert_eq!(s.reason(), PlanReason::PathBlocked);
        assert_eq!(s.ticket(), 2, "every request takes a new ticket");
        assert_eq!(book.queued(), 1, "queued once");
        // A more urgent one moves it to the front line.
        step(&mut world, &mut book, e, |b, s, st| {
            b.request(e, s, st, PlanReason::StartBlocked);
        });
        assert!(state(&world, e).waits_in(Priority::Walled));
        assert_eq!(book.queued(), 2, "the old entry is stale");
    }

    #[test]
    fn a_new_request_cancels_the_search_in_flight_and_its_answer_is_refused() {
        let (mut world, e) = agent(PathStatus::Pending);
        let mut book = PlanBook::default();
        let request = PathRequest::to(Vec2::ONE);
        let (cancel, flag) = CancelOnDrop::new();
        step(&mut world, &mut book, e, |b, s, st| {
            assert_eq!(s.replace_request(request), None);
            b.request(e, s, st, PlanReason::NewRequest);
            s.begin(st, cancel, Vec2::ONE);
        });
        assert!(state(&world, e).in_flight());
        assert_eq!(*world.get::<PathStatus>(e).unwrap(), PathStatus::Computing);
        assert_eq!(
            state(&world, e).receive(1, &request),
            Some(PlanReason::NewRequest)
        );
        assert_eq!(
            state(&world, e).receive(1, &PathRequest::to(Vec2::ZERO)),
            None
        );
        step(&mut world, &mut book, e, |b, s, st| {
            b.request(e, s, st, PlanReason::OffPath);
        });
        assert!(flag.load(Ordering::Relaxed), "the old search is cancelled");
        assert_eq!(state(&world, e).receive(1, &request), None, "old ticket");
        assert_eq!(state(&world, e).receive(2, &request), None, "still queued");
    }

    #[test]
    fn forgetting_an_agent_cancels_its_search_and_uncounts_its_grid() {
        let (mut world, e) = agent(PathStatus::Pending);
        let mut book = PlanBook::default();
        let key = (ProfileId::DEFAULT, Fit::POINT);
        let (cancel, flag) = CancelOnDrop::new();
        step(&mut world, &mut book, e, |b, s, st| {
            s.replace_request(PathRequest::to(Vec2::ONE));
            b.request(e, s, st, PlanReason::NewRequest);
            b.use_grid(s, Some(key));
            s.begin(st, cancel, Vec2::ONE);
        });
        assert_eq!(book.clearances.get(&key), Some(&1));
        step(&mut world, &mut book, e, |b, s, _| b.forget(e, s));
        let s = state(&world, e);
        assert!(flag.load(Ordering::Relaxed));
        assert!(!s.plan_pending() && s.request().is_none() && s.ticket() == 0);
        assert!(book.clearances.is_empty() && book.clearances_changed);
    }
}
