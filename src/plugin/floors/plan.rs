//! Planning routes for agents on areas: who needs one (new requests, edits
//! and link changes that meet their remaining route), sending the searches,
//! and turning answers into paths.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bevy_ecs::prelude::*;
use bevy_math::{DVec2, Vec2};

use super::sync::{Areas, Change, Opened};
use super::{CrossingLink, GoalArea};
use crate::atlas::{AtlasError, Place, Route, RouteQuery, RouteTask};
use crate::fast_hash::FastMap;
use crate::geom::{detour_through_rect, segment_rect_distance};
use crate::plugin::agent::{CancelOnDrop, Priority, end_in_failure};
use crate::plugin::api::{
    NavPath, PathCrossing, PathFailure, PathGoal, PathReady, PathRequest, PathStatus,
    PathfindingSettings, PlanReason,
};
use crate::plugin::dispatch::{Outcome, RouteGroup, RouteMember, RouteWork, Searches, route_job};
use crate::plugin::stats::Counters;
use crate::plugin::world::OnArea;
use crate::plugin::world::Positions;
use crate::search::{Algorithm, PlanError};

/// How close (cells) beyond its radius a new wall must come to a path for
/// the path to count as blocked: rounding of the world-to-grid conversion.
const TOLERANCE: f64 = 1e-6;

/// An agent's route planning (attached beside [`OnArea`]; not public).
#[derive(Component, Default)]
pub(crate) struct RouteState {
    /// The plan wanted now; answers to another are dropped.
    ticket: u64,
    /// The line it waits in, if it waits.
    queued: Option<Priority>,
    /// Why the plan was asked for.
    reason: PlanReason,
    /// Its search, while one runs (dropping it cancels the search).
    cancel: Option<CancelOnDrop>,
    /// The area its path was planned from or its follower last put it on:
    /// an [`OnArea`] that differs was set by the game.
    pub(crate) area: Option<Entity>,
    /// Its radius in cells, as served, once planned.
    pub(crate) radius: f64,
    /// The atlas version its path was checked against.
    version: u64,
    /// A plan asked for while it walked a link: asked once it is across.
    pub(crate) deferred: Option<(Priority, PlanReason)>,
}

/// Whether `path`'s follower walks a link now (it heads for the link's far
/// end and is not waiting at a handed one).
pub(crate) fn on_walked_link(path: &NavPath, waiting: bool) -> bool {
    !waiting && path.crossings.iter().any(|c| path.next == c.at + 1)
}

/// Agents waiting for a route search, one line per priority, served in
/// the order they joined (those that joined since the last dispatch in the
/// order of their entities: the order of the queries that found them
/// differs between platforms).
#[derive(Resource, Default)]
pub(crate) struct RouteQueue {
    lines: [VecDeque<(Entity, u64)>; 4],
    /// Per line: the entries at its back that joined since the last
    /// dispatch, not yet put in order.
    fresh: [usize; 4],
}

/// Followers on areas to plan again at once: those that stopped because
/// they could not see the waypoint they headed for, and those across a
/// link whose plan waited for them to be.
#[derive(Resource, Default)]
pub(crate) struct RouteUnseen(pub(crate) Vec<(Entity, Priority, PlanReason)>);

/// Route searches answered and not yet applied.
#[derive(Resource, Default)]
pub(crate) struct RouteOutcomes(pub(crate) Vec<Outcome>);

impl RouteQueue {
    /// Asks for a new plan for `entity` with `priority`: a new ticket (an
    /// answer to the old one is dropped, its search cancelled).
    fn request(
        &mut self,
        entity: Entity,
        state: &mut RouteState,
        priority: Priority,
        reason: PlanReason,
    ) {
        state.ticket += 1;
        state.cancel = None;
        let priority = state.queued.map_or(priority, |p| p.min(priority));
        if state.queued.is_none_or(|p| p > priority) {
            state.reason = reason;
        }
        state.queued = Some(priority);
        self.push(entity, state.ticket, priority);
    }

    /// Adds `entity`, asking with `ticket`, to the line of `priority`.
    fn push(&mut self, entity: Entity, ticket: u64, priority: Priority) {
        self.lines[priority as usize].push_back((entity, ticket));
        self.fresh[priority as usize] += 1;
    }

    /// The next entry of the line of `priority`.
    fn pop(&mut self, priority: Priority) -> Option<(Entity, u64)> {
        let line = &mut self.lines[priority as usize];
        let next = line.pop_front()?;
        let fresh = &mut self.fresh[priority as usize];
        *fresh = (*fresh).min(line.len());
        Some(next)
    }

    /// Puts the entries that joined since the last call in the order of
    /// their entities.
    fn settle_order(&mut self) {
        for (line, fresh) in self.lines.iter_mut().zip(&mut self.fresh) {
            let n = line.len();
            if *fresh > 1 {
                line.make_contiguous()[n - *fresh..].sort_by_key(|&(e, _)| e.to_bits());
            }
            *fresh = 0;
        }
    }
}

/// The bit of `profile` among [`NavLink::profiles`](super::NavLink::profiles).
fn profile_bit(request: &PathRequest) -> u64 {
    1 << u32::from(request.profile.0).min(63)
}

/// What detection reads and writes of an agent on an area.
type DetectData = (
    Entity,
    Ref<'static, PathRequest>,
    Ref<'static, OnArea>,
    Option<Ref<'static, GoalArea>>,
    &'static mut RouteState,
    &'static mut PathStatus,
    &'static mut NavPath,
    Has<CrossingLink>,
);

/// Finds the agents on areas that need a route: new or changed requests,
/// agents the game moved to another area, and agents whose remaining route
/// this frame's edits or link changes meet (their path is cut before the
/// first segment a new wall meets, so they never walk into it).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn detect_routes(
    areas: Res<Areas>,
    mut queue: ResMut<RouteQueue>,
    mut unseen: ResMut<RouteUnseen>,
    mut agents: Query<DetectData>,
    positions: Positions,
    mut commands: Commands,
) {
    for (entity, priority, reason) in unseen.0.drain(..) {
        if let Ok((.., mut state, _, _, _)) = agents.get_mut(entity) {
            queue.request(entity, &mut state, priority, reason);
        }
    }
    let changes = areas.fresh();
    for (entity, request, on, goal_area, mut state, mut status, mut path, crossing) in &mut agents {
        let state = &mut *state;
        let fresh_request = request.is_changed()
            || goal_area.as_ref().is_some_and(Ref::is_changed)
            || (on.is_changed() && state.area != Some(on.0))
            || (state.ticket == 0 && state.queued.is_none());
        if fresh_request {
            state.area = Some(on.0);
            let priority = if status.has_path() {
                Priority::Refine
            } else {
                Priority::FirstPath
            };
            if !status.has_path() {
                status.set_if_neq(PathStatus::Pending);
            }
            queue.request(entity, state, priority, PlanReason::NewRequest);
            continue;
        }
        if changes.is_empty() {
            continue;
        }
        // (Without a position: no bound, as if it gained from every link.)
        let at = areas
            .area(on.0)
            .and_then(|view| Some(view.to_grid(positions.current(entity, view.transform.plane())?)))
            .unwrap_or(DVec2::NAN);
        let verdict = judge(changes, &path, (on.0, at), state.radius, &status, &areas);
        if let Some((priority, reason, cut_at)) = verdict {
            if crossing && priority > Priority::Urgent {
                continue; // carried across a link now: a better route can wait
            }
            if on_walked_link(&path, crossing) {
                // Off every area until it is across: it stops past the
                // link's far end at the latest, and is planned from there.
                if let Some(k) = cut_at {
                    let k = k.max(path.next);
                    cut(&mut path, k);
                }
                let p = state.deferred.map_or(priority, |(p, _)| p.min(priority));
                state.deferred = Some((p, reason));
                continue;
            }
            if let Some(k) = cut_at {
                cut(&mut path, k);
            }
            if crossing && priority <= Priority::Urgent {
                commands.entity(entity).remove::<CrossingLink>();
            }
            queue.request(entity, state, priority, reason);
        }
    }
}

/// What `changes` mean for an agent on `area` at `at` (grid coordinates)
/// with `path`, radius `radius` (cells) and status `status`: the line to
/// plan it in, why, and where its path must end meanwhile (the index of the
/// first waypoint past which a new wall lies); `None` if they do not
/// concern it.
fn judge(
    changes: &[(u64, Change)],
    path: &NavPath,
    (area, at): (Entity, DVec2),
    radius: f64,
    status: &PathStatus,
    areas: &Areas,
) -> Option<(Priority, PlanReason, Option<usize>)> {
    match status {
        // Its search is under way and checked when it answers.
        PathStatus::Pending | PathStatus::Computing => return None,
        // Unreachable or failed: a change that opens a way may help (walls
        // that close one, or links that admit fewer agents, cannot).
        PathStatus::Unreachable | PathStatus::Failed(_) => {
            let opens = changes.iter().any(|(_, c)| {
                matches!(
                    c,
                    Change::Freed(..) | Change::Replaced(_) | Change::LinkWidened(_)
                )
            });
            return opens.then_some((Priority::FirstPath, PlanReason::RegionsConnected, None));
        }
        PathStatus::Ready | PathStatus::Fallback => {}
    }
    let mut verdict: Option<(Priority, PlanReason, Option<usize>)> = None;
    let mut worst = |p: Priority, r: PlanReason, cut: Option<usize>| {
        let keep = verdict.is_some_and(|(q, ..)| q <= p);
        if !keep {
            verdict = Some((p, r, cut));
        } else if let (Some((_, _, c)), Some(k)) = (verdict.as_mut(), cut) {
            *c = Some(c.map_or(k, |c| c.min(k)));
        }
    };
    let first = path.next.saturating_sub(1);
    for &(_, change) in changes {
        match change {
            Change::Blocked(on, rect) => {
                let lo = rect.min.as_dvec2();
                let hi = rect.max.as_dvec2();
                let reach = radius + TOLERANCE;
                let hit = leg_segments(path, first).find(|&(k, seg_area)| {
                    seg_area == on && {
                        let (a, b) = (path.grid_waypoints[k], path.grid_waypoints[k + 1]);
                        segment_rect_distance(a, b, lo, hi) <= reach
                    }
                });
                let stands = path.is_finished() && area == on && {
                    let here = path.grid_waypoints.last().copied().unwrap_or(DVec2::NAN);
                    segment_rect_distance(here, here, lo, hi) <= reach
                };
                if let Some((k, _)) = hit {
                    worst(Priority::Urgent, PlanReason::PathBlocked, Some(k));
                } else if stands {
                    worst(Priority::Walled, PlanReason::StartBlocked, None);
                }
            }
            Change::Freed(..) | Change::LinkWidened(_) if path.fallback => {
                worst(Priority::Refine, PlanReason::RegionsConnected, None);
            }
            Change::Freed(on, rect) => {
                if leg_shortcut(path, first, on, rect) {
                    worst(Priority::Refine, PlanReason::Shortcut, None);
                }
            }
            Change::Replaced(on) => {
                let meets = area == on || leg_segments(path, first).any(|(_, a)| a == on);
                if meets {
                    worst(Priority::Urgent, PlanReason::GridReplaced, Some(first));
                }
            }
            Change::LinkNarrowed(link) => {
                // Cut at the near end of its crossing still ahead.
                let ahead = path
                    .crossings
                    .iter()
                    .find(|c| c.link == link && c.at + 1 >= path.next);
                if let Some(c) = ahead {
                    worst(
                        Priority::Urgent,
                        PlanReason::LinkChanged,
                        Some(c.at.max(first)),
                    );
                }
            }
            Change::LinkCostlier(link) => {
                if path
                    .crossings
                    .iter()
                    .any(|c| c.link == link && c.at + 1 >= path.next)
                {
                    worst(Priority::Refine, PlanReason::LinkChanged, None);
                }
            }
            Change::LinkWidened(opened) => {
                let rest = remaining_cost(path, at, areas);
                if rest
                    .is_none_or(|rest| may_shorten(&opened, path, (area, at), radius, rest, areas))
                {
                    worst(Priority::Refine, PlanReason::LinkChanged, None);
                }
            }
        }
    }
    verdict
}

/// The cost of the rest of `path`'s route for its agent at `at` (grid
/// coordinates of the area it stands on): its legs' lengths and its links'
/// costs, in the grid units the atlas adds up; `None` while it walks or
/// waits at a link.
fn remaining_cost(path: &NavPath, at: DVec2, areas: &Areas) -> Option<f64> {
    let points = &path.grid_waypoints;
    if path.next >= points.len() {
        return Some(0.0);
    }
    if path.crossings.iter().any(|c| c.at + 1 == path.next) {
        return None;
    }
    let mut total = at.distance(points[path.next]);
    for k in path.next..points.len() - 1 {
        total += match path.crossings.iter().find(|c| c.at == k) {
            Some(c) => f64::from(c.cost) / areas.area(c.from_area)?.cell(),
            None => points[k].distance(points[k + 1]),
        };
    }
    Some(total)
}

/// Whether a route through `opened` may cost less than `rest` for an agent
/// of radius `radius` on `area` at `at` (grid coordinates) heading for the
/// end of `path`: its bound is not above `rest`. The bound: the way to the
/// link's near end (straight, on the agent's area; else at least the way
/// out of that area through the nearest link end), the link's cost, and the
/// way on from its far end (straight, on the goal's area; else at least
/// the way into that area from the nearest link end).
fn may_shorten(
    opened: &Opened,
    path: &NavPath,
    (area, at): (Entity, DVec2),
    radius: f64,
    rest: f64,
    areas: &Areas,
) -> bool {
    if radius > opened.max_radius {
        return false;
    }
    let last = path.grid_waypoints.len().saturating_sub(1);
    let (goal_area, goal) = (path.area_of(last), path.grid_waypoints.get(last).copied());
    // The least cost of leaving `area` from `at` by a link (`out`), or of
    // entering the goal's area by one and walking to the goal.
    let by_links = |out: bool| {
        let (on, point) = if out {
            (Some(area), Some(at))
        } else {
            (goal_area, goal)
        };
        let (Some(on), Some(point)) = (on, point) else {
            return 0.0;
        };
        areas
            .ends_on(on)
            .iter()
            .filter(|e| radius <= e.max_radius && if out { e.leave } else { e.enter })
            .map(|e| point.distance(e.point) + e.cost)
            .fold(f64::INFINITY, f64::min)
    };
    let (leave, enter) = (by_links(true), by_links(false));
    let through = |(near_area, near): (Entity, DVec2), (far_area, far): (Entity, DVec2)| {
        let to = if near_area == area {
            at.distance(near)
        } else {
            leave
        };
        let on = match goal {
            Some(goal) if goal_area == Some(far_area) => far.distance(goal),
            _ => enter,
        };
        to + opened.cost + on
    };
    let [a, b] = opened.ends;
    let mut bound = through(a, b);
    if opened.both_ways {
        bound = bound.min(through(b, a));
    }
    // (A bound or a rest that is not a number proves nothing.)
    bound
        .partial_cmp(&(rest + SLACK * (1.0 + rest)))
        .is_none_or(core::cmp::Ordering::is_lt)
}

/// Whether freeing `rect` (grid cells of area `on`) may shorten a leg of
/// `path` on that area from waypoint `first` on: the rectangle reaches
/// inside the ellipse of the points whose distances to the leg's ends sum
/// to less than the leg's length.
fn leg_shortcut(path: &NavPath, first: usize, on: Entity, rect: bevy_math::URect) -> bool {
    let (lo, hi) = (rect.min.as_dvec2(), rect.max.as_dvec2());
    let mut leg: Option<(usize, usize, f64)> = None;
    let mut check = |(a, b, length): (usize, usize, f64)| {
        let (a, b) = (path.grid_waypoints[a], path.grid_waypoints[b]);
        let bound = length - SLACK * (1.0 + length);
        detour_through_rect(a, b, lo, hi) < bound
    };
    for (k, area) in leg_segments(path, first) {
        let (a, b) = (path.grid_waypoints[k], path.grid_waypoints[k + 1]);
        match leg.as_mut() {
            Some((_, end, length)) if *end == k && area == on => {
                *end = k + 1;
                *length += a.distance(b);
            }
            _ => {
                if leg.is_some_and(&mut check) {
                    return true;
                }
                leg = (area == on).then_some((k, k + 1, a.distance(b)));
            }
        }
    }
    leg.is_some_and(check)
}

/// Relative slack for "strictly shorter", absorbing `f32` world positions.
const SLACK: f64 = 1e-6;

/// The segments of `path` from waypoint `first` on that lie on one area
/// (not the crossings): the index of each one's first waypoint and its
/// area.
fn leg_segments(path: &NavPath, first: usize) -> impl Iterator<Item = (usize, Entity)> + '_ {
    let n = path.grid_waypoints.len().min(path.waypoints.len());
    (first..n.saturating_sub(1))
        .filter(|&k| path.crossings.iter().all(|c| c.at != k)) // (a link)
        .filter_map(|k| Some((k, path.area_of(k)?)))
}

/// Cuts `path` to end at waypoint `k` (the agent walks no further until its
/// new route comes).
fn cut(path: &mut NavPath, k: usize) {
    let k = k.max(path.next.saturating_sub(1));
    if k + 1 >= path.waypoints.len() {
        return;
    }
    path.waypoints.truncate(k + 1);
    path.grid_waypoints.truncate(k + 1);
    path.crossings.retain(|c| c.at < k);
    path.cut = true;
    path.next = path.next.min(path.waypoints.len());
}

/// What dispatch reads and writes of an agent on an area.
type DispatchData = (
    &'static PathRequest,
    &'static OnArea,
    Option<&'static GoalArea>,
    &'static mut RouteState,
    &'static mut PathStatus,
    &'static mut NavPath,
);

/// Agents heading for one goal (one point of one area, one radius class)
/// that share one job when at least this many wait: the legs to the goal
/// are searched once for all of them.
const MIN_GROUP: usize = 8;

/// The most agents one job answers.
const MAX_GROUP: usize = 4096;

/// An agent whose route search is about to be sent.
struct Ready {
    entity: Entity,
    ticket: u64,
    query: RouteQuery,
    cancel: Arc<AtomicBool>,
}

/// Agents about to be sent, by goal.
struct Bucket {
    goal: Vec2,
    /// The fewest members that share a job.
    min_group: usize,
    members: Vec<Ready>,
}

impl Bucket {
    /// The jobs this bucket makes.
    fn jobs(&self) -> usize {
        if self.members.len() >= self.min_group {
            1
        } else {
            self.members.len()
        }
    }
}

/// Sends waiting agents' route searches, most urgent first, as far as the
/// pacing allows; agents heading for one goal share a job (see
/// [`MIN_GROUP`]).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
#[expect(clippy::too_many_arguments, reason = "system parameters")]
pub(crate) fn dispatch_routes(
    mut areas: ResMut<Areas>,
    mut queue: ResMut<RouteQueue>,
    mut searches: ResMut<Searches>,
    settings: Option<Res<PathfindingSettings>>,
    mut agents: Query<DispatchData>,
    targets: Query<&OnArea>,
    positions: Positions,
    mut counters: ResMut<Counters>,
    mut commands: Commands,
) {
    let settings = settings.as_deref().copied().unwrap_or_default();
    let cap = settings
        .max_searches_in_flight
        .map_or(usize::MAX, |m| m.max(1));
    let min_group = if settings.shared_searches {
        MIN_GROUP
    } else {
        usize::MAX
    };
    let mut buckets: Vec<Bucket> = Vec::new();
    let mut by_goal: FastMap<(u32, u64, u64, u64), usize> = FastMap::default();
    queue.settle_order();
    for priority in Priority::ALL {
        let mut held = 0;
        while searches.has_room(priority, cap, held) {
            let Some((entity, ticket)) = queue.pop(priority) else {
                break;
            };
            let Ok((request, on, goal_area, mut state, mut status, mut path)) =
                agents.get_mut(entity)
            else {
                continue;
            };
            if state.ticket != ticket || state.queued != Some(priority) {
                continue; // stale: asked again since, in this line or another
            }
            state.queued = None;
            let asked = route_query(
                &mut areas,
                request,
                (entity, on.0, goal_area),
                &targets,
                &positions,
            );
            let (query, goal) = match asked {
                Ok(asked) => asked,
                Err(Wait) => {
                    // An area not synced yet: asked again next frame.
                    state.queued = Some(priority);
                    queue.push(entity, ticket, priority);
                    break;
                }
                Err(Fail(failure)) => {
                    end_in_failure(
                        &mut commands,
                        entity,
                        state.reason,
                        &mut status,
                        &mut path,
                        PathStatus::Failed(failure),
                    );
                    continue;
                }
            };
            state.radius = query.radius;
            let (cancel, flag) = CancelOnDrop::new();
            state.cancel = Some(cancel);
            if !status.has_path() {
                status.set_if_neq(PathStatus::Computing);
            }
            let to = query.to;
            let key = (
                to.area.index() as u32,
                to.point.x.to_bits(),
                to.point.y.to_bits(),
                query.radius.to_bits(),
            );
            let b = match by_goal.get(&key) {
                Some(&b) if buckets[b].members.len() < MAX_GROUP => b,
                _ => {
                    by_goal.insert(key, buckets.len());
                    buckets.push(Bucket {
                        goal,
                        min_group,
                        members: Vec::new(),
                    });
                    buckets.len() - 1
                }
            };
            counters.0.searches_started += 1;
            held -= buckets[b].jobs();
            buckets[b].members.push(Ready {
                entity,
                ticket,
                query,
                cancel: flag,
            });
            held += buckets[b].jobs();
        }
        let shared = send(&mut areas, &mut searches, priority, buckets.drain(..));
        counters.0.shared_searches += shared;
        by_goal.clear();
    }
}

/// Sends the searches of `buckets` with `priority`: a job for each bucket
/// of at least its `min_group` agents, one for each agent of the others.
/// Returns the jobs shared by several agents.
fn send(
    areas: &mut Areas,
    searches: &mut Searches,
    priority: Priority,
    buckets: impl Iterator<Item = Bucket>,
) -> u64 {
    let mut shared = 0;
    for bucket in buckets {
        let atlas = areas.snapshot();
        let grid = || Arc::clone(&areas.placeholder);
        if bucket.members.len() >= bucket.min_group {
            shared += 1;
            let mut members = bucket.members.into_iter();
            let Some(first) = members.next() else {
                continue;
            };
            let rest: Vec<RouteMember> = members
                .map(|m| RouteMember {
                    entity: m.entity,
                    ticket: m.ticket,
                    task: RouteTask::new(m.query),
                    cancel: m.cancel,
                    answer: None,
                })
                .collect();
            let group = RouteGroup::new(first.query.to, first.query.radius, rest);
            let work = RouteWork {
                atlas,
                task: RouteTask::new(first.query),
                answer: None,
                group: Some(Box::new(group)),
            };
            let job = route_job(
                (first.entity, first.ticket, bucket.goal),
                work,
                grid(),
                first.cancel,
            );
            searches.send(job, priority);
            continue;
        }
        for m in bucket.members {
            let work = RouteWork {
                atlas: Arc::clone(&atlas),
                task: RouteTask::new(m.query),
                answer: None,
                group: None,
            };
            let job = route_job((m.entity, m.ticket, bucket.goal), work, grid(), m.cancel);
            searches.send(job, priority);
        }
    }
    shared
}

/// Why a route query could not be made.
enum NoQuery {
    /// Not yet: an area is not known yet.
    Wait,
    /// Never, as asked.
    Fail(PathFailure),
}
use NoQuery::{Fail, Wait};

/// The route query for agent `entity` standing on `area`, and its goal
/// (world).
fn route_query(
    areas: &mut Areas,
    request: &PathRequest,
    (entity, area, goal_area): (Entity, Entity, Option<&GoalArea>),
    targets: &Query<&OnArea>,
    positions: &Positions,
) -> Result<(RouteQuery, Vec2), NoQuery> {
    let start_area = areas.area(area).ok_or(Wait)?;
    let plane = start_area.transform.plane();
    let here = positions
        .current(entity, plane)
        .ok_or(Fail(PathFailure::NoPosition))?;
    if !here.is_finite() {
        return Err(Fail(PathFailure::NonFiniteStart));
    }
    let (goal_on, goal) = match request.goal {
        PathGoal::Point(p) => (goal_area.map_or(area, |g| g.0), p),
        PathGoal::Entity(target) => {
            let on = targets
                .get(target)
                .map_err(|_| Fail(PathFailure::TargetLost(target)))?;
            let p = positions
                .current(target, plane)
                .ok_or(Fail(PathFailure::TargetLost(target)))?;
            (on.0, p)
        }
    };
    if !goal.is_finite() {
        return Err(Fail(PathFailure::NonFiniteGoal));
    }
    let goal_view = areas.area(goal_on).ok_or(Wait)?;
    let radius = if request.radius.is_finite() && request.radius >= 0.0 {
        f64::from(request.radius) / start_area.cell()
    } else {
        return Err(Fail(PathFailure::BadRadius));
    };
    let radius = areas
        .serve(radius)
        .map_err(|_| Fail(PathFailure::BadRadius))?;
    let query = RouteQuery::new(
        Place::new(start_area.id, start_area.to_grid(here)),
        Place::new(goal_view.id, goal_view.to_grid(goal)),
    )
    .with_radius(radius)
    .with_profiles(profile_bit(request));
    Ok((query, goal))
}

/// What applying reads and writes of an agent on an area.
type ApplyData = (
    &'static OnArea,
    &'static mut RouteState,
    &'static mut PathStatus,
    &'static mut NavPath,
    Has<CrossingLink>,
);

/// Applies finished route searches: writes [`NavPath`] and [`PathStatus`],
/// triggers [`PathReady`] or [`PathFailed`]. A route planned while areas
/// or links changed is checked against those changes like a live path and
/// planned again if they concern it.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn apply_routes(
    areas: Res<Areas>,
    mut outcomes: ResMut<RouteOutcomes>,
    mut queue: ResMut<RouteQueue>,
    mut agents: Query<ApplyData>,
    mut commands: Commands,
) {
    for done in outcomes.0.drain(..) {
        let Ok((on, mut state, mut status, mut path, waiting)) = agents.get_mut(done.entity) else {
            continue;
        };
        if state.ticket != done.ticket || state.queued.is_some() {
            continue;
        }
        state.cancel = None;
        let reason = state.reason;
        if on_walked_link(&path, waiting) {
            // Planned from before it stepped onto a link: again from its far
            // end, once there.
            state.deferred = Some((Priority::FirstPath, reason));
            continue;
        }
        let Some(answer) = done.route else {
            continue;
        };
        let Some(result) = answer.answer else {
            // Cancelled, yet wanted: asked again.
            queue.request(done.entity, &mut state, Priority::FirstPath, reason);
            continue;
        };
        let route = match result {
            Ok(route) => route,
            Err(error) => {
                let new_status = match error {
                    AtlasError::Plan(PlanError::Unreachable { .. }) => PathStatus::Unreachable,
                    AtlasError::Plan(PlanError::NoFreeCell) => {
                        PathStatus::Failed(PathFailure::NoFreeCell)
                    }
                    AtlasError::Radius(_) | AtlasError::RadiusNotServed(_) => {
                        PathStatus::Failed(PathFailure::BadRadius)
                    }
                    other => PathStatus::Failed(PathFailure::Internal(other.to_string())),
                };
                end_in_failure(
                    &mut commands,
                    done.entity,
                    reason,
                    &mut status,
                    &mut path,
                    new_status,
                );
                continue;
            }
        };
        let Some(new_path) = to_path(&areas, &route, done.goal) else {
            // An area or link of it is gone: planned again.
            queue.request(
                done.entity,
                &mut state,
                Priority::Urgent,
                PlanReason::GridReplaced,
            );
            continue;
        };
        if new_path.start_area != Some(on.0) {
            // It changed area meanwhile (carried across a link, or moved by
            // the game): planned again from where it is.
            queue.request(done.entity, &mut state, Priority::FirstPath, reason);
            continue;
        }
        // Changes made while it was searched: as for a live path.
        let Some(changes) = areas.changes_after(answer.atlas_version) else {
            queue.request(done.entity, &mut state, Priority::FirstPath, reason);
            continue;
        };
        let start_area = new_path.start_area.unwrap_or(Entity::PLACEHOLDER);
        let at = new_path
            .grid_waypoints
            .first()
            .copied()
            .unwrap_or(DVec2::NAN);
        let verdict = judge(
            changes,
            &new_path,
            (start_area, at),
            state.radius,
            &PathStatus::Ready,
            &areas,
        );
        if let Some((priority, _, _)) = verdict
            && priority <= Priority::Urgent
        {
            queue.request(done.entity, &mut state, Priority::FirstPath, reason);
            continue;
        }
        let fallback = route.is_fallback();
        // A new route replaces a crossing under way.
        commands.entity(done.entity).remove::<CrossingLink>();
        state.version = areas.atlas().version();
        state.area = new_path.start_area;
        *path = new_path;
        status.set_if_neq(if fallback {
            PathStatus::Fallback
        } else {
            PathStatus::Ready
        });
        let ready = PathReady {
            entity: done.entity,
            reason,
            fallback,
            length: path.length,
        };
        commands.write_message(ready);
        commands.trigger(ready);
        if let Some((priority, why, _)) = verdict {
            queue.request(done.entity, &mut state, priority, why);
        }
    }
}

/// The [`NavPath`] of `route` in world coordinates (`None` if an area or
/// link of it is no longer known).
fn to_path(areas: &Areas, route: &Route, goal: Vec2) -> Option<NavPath> {
    let mut path = NavPath {
        algorithm: Some(Algorithm::Polyanya),
        goal,
        fallback: route.is_fallback(),
        start_moved: route.start_moved_from.is_some(),
        grid_version: areas.atlas().version(),
        ..NavPath::default()
    };
    let mut length = 0.0;
    for leg in &route.legs {
        let entity = areas.area_entity(leg.area)?;
        let here = areas.area(entity)?;
        if path.start_area.is_none() {
            path.start_area = Some(entity);
        }
        if let Some(c) = path.crossings.last_mut() {
            c.to_area = entity;
        }
        for &p in &leg.waypoints {
            path.grid_waypoints.push(p);
            path.waypoints.push(here.to_world(p));
        }
        length += leg.length * here.cell();
        if let Some(crossing) = leg.then {
            let (link, kind) = areas.link(crossing.link)?;
            let cost = crossing.cost * here.cell();
            length += cost;
            path.crossings.push(PathCrossing {
                link,
                at: path.waypoints.len() - 1,
                from_area: entity,
                to_area: entity,
                crossing: kind,
                cost: cost as f32,
            });
        }
    }
    path.length = length as f32;
    path.next = usize::from(!path.start_moved).min(path.waypoints.len());
    Some(path)
}
