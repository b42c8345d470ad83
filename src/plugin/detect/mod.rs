//! When to plan again, and for whom.
//!
//! The systems here run in [`AnyAngleSystems::Detect`](crate::plugin::AnyAngleSystems::Detect) and only queue
//! work; searches start in `Dispatch`. Each one touches agents only when its
//! trigger fired, so a frame where nothing changed costs a few
//! change-detection checks:
//!
//! | trigger | system | who replans |
//! |---|---|---|
//! | `PathRequest` added or its goal changed | `replan_changed_requests` | that agent (path cleared) |
//! | `PathRequest::algorithm` changed | `replan_changed_requests` | that agent, unless it has arrived (path kept) |
//! | `PathfindingSettings` changed | `replan_on_settings_change` | agents using the changed setting, unless arrived (path kept) |
//! | `NavGrid` version or layout changed | `replan_on_grid_edits` | agents whose remaining path the edits affect |
//! | a followed entity moved | `replan_moved_targets` | agents following it |
//! | an agent moved | `track_progress` | that agent, if off its path, or if it had no room and now fits or sees a place that does |
//! | a follower cannot see the waypoint it heads for | `replan_unseen` | that agent, from where it stands (it waits there) |
//!
//! How an edit's effect on each agent is judged is written in
//! [`geometry::impact`](crate::plugin::geometry::impact).

mod edits;

use bevy_ecs::prelude::*;

pub(crate) use edits::{EditWatch, replan_on_grid_edits};

use crate::plugin::agent::{AgentIndex, PlanBook, PlanState, Plans, fail};
use crate::plugin::api::{
    NavPath, PathFailure, PathGoal, PathRequest, PathStatus, PathfindingSettings, PlanReason,
};
use crate::plugin::crowd::{Arrival, CrowdState};
use crate::plugin::geometry::{sees_waypoint, segment_distance};
use crate::plugin::stats::Meter;
use crate::plugin::steer::{self, LocalAvoidance, PathFollower, Unseen};
use crate::plugin::world::OnArea;
use crate::plugin::world::{Fit, NavGrid, PositionChanged, PositionData, plane_of, position};

/// Marker: the agent's goal is an entity, so its position is watched.
#[derive(Component)]
pub(crate) struct FollowsTarget;

type ChangedRequestData = (
    Entity,
    &'static PathRequest,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
    Has<FollowsTarget>,
    PositionData,
);

/// Replans agents whose [`PathRequest`] was added or changed to a different
/// value. A new goal clears the path; a new algorithm alone keeps it (see
/// [`algorithm_switch`]).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_changed_requests(
    meter: Res<Meter>,
    mut plans: Plans,
    nav: Option<Res<NavGrid>>,
    settings: Option<Res<PathfindingSettings>>,
    mut agents: Query<ChangedRequestData, (Changed<PathRequest>, Without<OnArea>)>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    let (book, index) = (&mut *plans.book, &mut *plans.index);
    let default = settings
        .as_deref()
        .map_or_else(|| PathfindingSettings::default().algorithm, |s| s.algorithm);
    for (entity, request, mut state, mut status, mut path, follows, pos) in &mut agents {
        match state.replace_request(*request) {
            Some(old) if old == *request => continue,
            Some(old)
                if old.goal == request.goal
                    && old.radius == request.radius
                    && old.profile == request.profile =>
            {
                let before = old.algorithm.unwrap_or(default);
                let after = request.algorithm.unwrap_or(default);
                if before != after && algorithm_switch(&state, &status, &path) {
                    let reason = switch_reason(&state, &status);
                    book.request(entity, &mut state, &mut status, reason);
                }
                continue;
            }
            _ => {} // a new request or a new goal
        }
        start_request(
            (book, index),
            nav.as_deref(),
            entity,
            request,
            &mut state,
            &mut status,
            &mut path,
            follows,
            pos,
            &mut commands,
        );
    }
}

/// The reason of a replan for a new planner: [`PlanReason::AlgorithmChanged`]
/// for an agent with a path, the reason of the search it replaces for one
/// still waiting for its first path.
fn switch_reason(state: &PlanState, status: &PathStatus) -> PlanReason {
    if status.has_path() {
        PlanReason::AlgorithmChanged
    } else {
        state.reason()
    }
}

/// Plans an agent with a new goal: clears its path and queues a first plan.
#[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
fn start_request(
    (book, index): (&mut PlanBook, &mut AgentIndex),
    nav: Option<&NavGrid>,
    entity: Entity,
    request: &PathRequest,
    state: &mut PlanState,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    follows: bool,
    pos: <PositionData as bevy_ecs::query::QueryData>::Item<'_, '_>,
    commands: &mut Commands,
) {
    if !path.is_empty() {
        **path = NavPath::default();
    }
    index.unindex(entity);
    if let Some(nav) = nav
        && let Some(here) = position(pos, nav.transform().plane())
    {
        let fit = nav.disc_of(request.radius).unwrap_or(Fit::POINT);
        index.index_waiting(nav, entity, nav.to_grid(here), fit);
    }
    // The old path is gone: the agent has nothing to follow, and any
    // plan asked for before is moot.
    status.set_if_neq(PathStatus::Pending);
    book.request(entity, state, status, PlanReason::NewRequest);
    let wants = matches!(request.goal, PathGoal::Entity(_));
    if wants && !follows {
        commands.entity(entity).insert(FollowsTarget);
    } else if !wants && follows {
        commands.entity(entity).remove::<FollowsTarget>();
    }
}

/// Whether an agent whose planner changed (in its [`PathRequest`] or in
/// [`PathfindingSettings::algorithm`]) plans again. Both changes follow
/// this one rule: an agent with a path ahead keeps following it while the
/// new planner's path is planned ([`PlanReason::AlgorithmChanged`]); one
/// whose search is running is planned again with the new planner (one still
/// waiting in line gets the new planner when its search starts); one that
/// has arrived, or whose goal is unreachable with no path, stays as it is
/// until its request changes or an edit concerns it.
fn algorithm_switch(state: &PlanState, status: &PathStatus, path: &NavPath) -> bool {
    if state.queued() {
        return false;
    }
    state.in_flight() || status.has_path() && !path.is_finished()
}

/// Replans the agents a settings change concerns (see
/// [`PathfindingSettings`]).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_on_settings_change(
    meter: Res<Meter>,
    settings: Option<Res<PathfindingSettings>>,
    mut last: Local<Option<PathfindingSettings>>,
    mut book: ResMut<PlanBook>,
    mut agents: Query<
        (
            Entity,
            &PathRequest,
            &mut PlanState,
            &mut PathStatus,
            &NavPath,
        ),
        Without<OnArea>,
    >,
) {
    let _cost = meter.start();
    let settings = settings.as_deref().copied().unwrap_or_default();
    let Some(old) = last.replace(settings) else {
        return;
    };
    let algorithm = old.algorithm != settings.algorithm;
    let fallback = old.fallback != settings.fallback;
    let budget = match (old.node_budget, settings.node_budget) {
        (Some(_), None) => true,
        (Some(a), Some(b)) => b > a,
        (None, _) => false,
    };
    if !algorithm && !fallback && !budget {
        return;
    }
    for (entity, request, mut state, mut status, path) in &mut agents {
        if state.request().is_none() || state.queued() {
            continue; // not planned yet, or waiting: it will use the new settings
        }
        let reason = if budget
            && matches!(
                *status,
                PathStatus::Failed(PathFailure::BudgetExhausted { .. })
            ) {
            PlanReason::BudgetChanged
        } else if algorithm
            && request.algorithm.is_none()
            && algorithm_switch(&state, &status, path)
        {
            switch_reason(&state, &status)
        } else if fallback
            && (matches!(
                *status,
                PathStatus::Fallback | PathStatus::Unreachable | PathStatus::Computing
            ) || state.in_flight())
        {
            PlanReason::FallbackChanged
        } else {
            continue;
        };
        book.request(entity, &mut state, &mut status, reason);
    }
}

/// What the moved-target check reads and writes of an agent.
type FollowerOfTargetData = (
    Entity,
    &'static PathRequest,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
);

/// Replans agents whose followed entity moved farther than
/// [`PathfindingSettings::replan_distance`] from the goal they planned for;
/// fails those whose entity is gone.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_moved_targets(
    meter: Res<Meter>,
    settings: Option<Res<PathfindingSettings>>,
    nav: Option<Res<NavGrid>>,
    mut plans: Plans,
    mut agents: Query<FollowerOfTargetData, (With<FollowsTarget>, Without<OnArea>)>,
    positions: Query<PositionData>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    let (book, index) = (&mut *plans.book, &mut *plans.index);
    let settings = settings.as_deref().copied().unwrap_or_default();
    let plane = plane_of(nav.as_deref());
    for (entity, request, mut state, mut status, mut path) in &mut agents {
        let PathGoal::Entity(target) = request.goal else {
            continue;
        };
        if !(status.has_path() || *status == PathStatus::Unreachable) || state.plan_pending() {
            continue; // nothing planned yet, or a new plan is on its way
        }
        match positions
            .get(target)
            .ok()
            .and_then(|item| position(item, plane))
        {
            None => {
                fail(
                    &mut commands,
                    book,
                    index,
                    entity,
                    &mut state,
                    PlanReason::TargetMoved,
                    &mut status,
                    &mut path,
                    PathStatus::Failed(PathFailure::TargetLost(target)),
                );
            }
            Some(p) => {
                let moved = state.goal().is_none_or(|g| {
                    let d = p.distance(g);
                    d.is_nan() || d > settings.replan_threshold() + OFF_PATH_TOLERANCE
                });
                if moved {
                    book.request(entity, &mut state, &mut status, PlanReason::TargetMoved);
                }
            }
        }
    }
}

/// Plans again, from where they are, the followers steering found unable
/// to see the waypoint they head for ([`Unseen`]): the game moved them, or a
/// crowd pushed them, to where it is hidden, and they wait there for the
/// new path ([`PlanReason::OffPath`]).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_unseen(
    meter: Res<Meter>,
    mut unseen: ResMut<Unseen>,
    mut book: ResMut<PlanBook>,
    mut agents: Query<(&mut PlanState, &mut PathStatus)>,
) {
    let _cost = meter.start();
    // (In the order of the entities, not of the sets steering walked.)
    unseen.0.sort_unstable_by_key(|e| e.to_bits());
    for entity in unseen.0.drain(..) {
        if let Ok((mut state, mut status)) = agents.get_mut(entity)
            && status.has_path()
            && !state.plan_pending()
        {
            book.request(entity, &mut state, &mut status, PlanReason::OffPath);
        }
    }
}

type ProgressData = (
    Entity,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
    PositionData,
    Option<(&'static CrowdState, &'static LocalAvoidance)>,
    Option<&'static PathFollower>,
    &'static PathRequest,
);

/// For agents that moved: advances [`NavPath::next`] past waypoints they
/// have passed (without triggering `Changed<NavPath>`), and replans those
/// farther than [`PathfindingSettings::replan_distance`] from their path
/// (for an agent with [`LocalAvoidance`]
/// that arrived, from where it came to rest),
/// and those with no room where their search started
/// ([`PathFailure::NoRoom`]) that now fit or see a place that does (an
/// agent on a mesh for its radius: that moved at all, for a search to
/// tell).
/// A [`PathFollower`] that had arrived and was moved (less than that) off
/// its path's end (an agent with `LocalAvoidance` and a radius that reached
/// the end itself: more than its radius) walks back to it: its
/// [`NavPath::next`] is the end again.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn track_progress(
    meter: Res<Meter>,
    settings: Option<Res<PathfindingSettings>>,
    nav: Option<Res<NavGrid>>,
    mut book: ResMut<PlanBook>,
    mut agents: Query<ProgressData, (PositionChanged, Without<OnArea>)>,
) {
    let _cost = meter.start();
    let settings = settings.as_deref().copied().unwrap_or_default();
    let plane = plane_of(nav.as_deref());
    for (entity, mut state, mut status, mut nav_path, pos, in_crowd, follower, request) in
        &mut agents
    {
        if *status == PathStatus::Failed(PathFailure::NoRoom) {
            // Moved (by the game) from where its search found no room: from
            // here it may fit, or see a place that does.
            if !state.plan_pending()
                && let (Some(nav), Some(p)) = (nav.as_deref(), position(pos, plane))
                && let Some(view) = nav.view(state.key())
                && view.may_find_room(state.key().1, nav.to_grid(p), None)
            {
                book.request(entity, &mut state, &mut status, PlanReason::Moved);
            }
            continue;
        }
        if !status.has_path() {
            continue;
        }
        let Some(p) = position(pos, plane) else {
            continue;
        };
        let path = nav_path.bypass_change_detection();
        let w = &path.waypoints;
        if path.next == 0 || w.is_empty() {
            continue; // walking to the path's start: no reference segment yet
        }
        while path.next < w.len().saturating_sub(1)
            && segment_distance(p, w[path.next], w[path.next + 1])
                < segment_distance(p, w[path.next - 1], w[path.next])
        {
            path.next += 1;
        }
        let off = if path.next < w.len() {
            segment_distance(p, w[path.next - 1], w[path.next])
        } else if let Some(rest) = in_crowd.and_then(|(crowd, _)| crowd.rest()) {
            // Arrived in a crowd, which spreads out around its goal: off
            // where it came to rest.
            p.distance(rest)
        } else {
            p.distance(w[w.len() - 1])
        };
        if off > settings.replan_threshold() + OFF_PATH_TOLERANCE {
            if !state.plan_pending() {
                book.request(entity, &mut state, &mut status, PlanReason::OffPath);
            }
        } else if let Some(follower) = follower
            && path.next >= w.len()
        {
            // Moved off the end it had reached: a plain follower farther
            // than its arrive radius; an agent in a crowd that reached its
            // end itself farther than its radius from it, one held up by
            // others close to its end out of the reach it was held up in and
            // farther than its radius from where it came to rest (one that
            // came to rest beside others at a shared end keeps the rule
            // above). It walks
            // back (marked changed, so that steering takes it up again), or
            // plans again from where it is if it cannot see the end from
            // there.
            let end = p.distance(w[w.len() - 1]);
            let r = request.radius + OFF_PATH_TOLERANCE;
            let back = match in_crowd {
                Some((crowd, _)) if steer::in_crowd(request.radius) => match crowd.arrival() {
                    Some(Arrival::AtEnd) => end > r,
                    // Out of the reach in which it was held up.
                    Some(Arrival::HeldUp) => {
                        let cell = nav.as_deref().map_or(1.0, |n| n.transform().cell_size());
                        end > crowd.held_reach(cell) + OFF_PATH_TOLERANCE && off > r
                    }
                    Some(Arrival::Beside) | None => false,
                },
                _ => end > follower.arrive_radius.max(0.0) + OFF_PATH_TOLERANCE,
            };
            // Only a visible end is handed back to steering: games that
            // steer themselves read it too.
            let last = w.len() - 1;
            if back {
                if nav
                    .as_deref()
                    .is_some_and(|nav| sees_waypoint(nav, state.key(), path, p, last))
                {
                    nav_path.next = last;
                } else if !state.plan_pending() {
                    book.request(entity, &mut state, &mut status, PlanReason::OffPath);
                }
            }
        }
    }
}

/// Slack added to [`PathfindingSettings::replan_distance`] so that rounding
/// never makes an agent on its path count as off it (world units).
const OFF_PATH_TOLERANCE: f32 = 1e-4;
