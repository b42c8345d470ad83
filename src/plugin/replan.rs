//! When to plan again, and for whom.
//!
//! The systems here run in [`AnyAngleSystems::Detect`](super::AnyAngleSystems::Detect) and only queue
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
//!
//! # Which edits affect a path
//!
//! For an agent with a path, the *remaining path* runs from the point of the
//! segment it is on closest to it, through the waypoints after it.
//!
//! - **Blocked** cells affect it iff a remaining segment near them is no
//!   longer visible ([`line_of_sight`] on the edited grid): the path crosses
//!   a newly blocked cell, runs between two blocked cells, or squeezes
//!   through a new double corner. Until the new plan arrives, the old path
//!   is cut short before that segment, so that a follower does not walk
//!   into the wall meanwhile.
//! - **Freed** cells can only shorten it if they reach inside the ellipse
//!   whose foci are the agent and the path's end and whose major axis is the
//!   remaining length: any path through a point outside it is longer. A
//!   freed cell is tested exactly against that ellipse (minimum of the sum
//!   of distances to the foci over the cell's square).
//! - An agent with a fallback path, or whose goal is unreachable, also
//!   replans when its cell and the goal's are now in one region, or when a
//!   freed cell in its region lies closer to the goal than its fallback point.
//!   Blocking a cell can connect it too: an agent on a double corner belongs
//!   to the region of the corner's south-east cell (`SPEC.md`), and once that
//!   cell is blocked, to the region of the cell diagonally across, so a
//!   blocked cell touching the agent's point is tested as well.
//!   For an agent standing in no free cell (in a wall, off the grid) "its
//!   region" is the one the planner moved its start to: the region of its
//!   path's end, or of the closest reachable point the planner reported
//!   with an unreachable goal.

use bevy_ecs::prelude::*;
use bevy_math::{DVec2, URect, Vec2};

use super::components::{NavPath, PathFailure, PathGoal, PathRequest, PathStatus, PlanReason};
use super::cost::Meter;
use super::layers::{ProfileId, ViewKey};
use super::nav_grid::NavGrid;
use super::position::{PositionChanged, PositionData, plane_of, position};
use super::settings::PathfindingSettings;
use super::tasks::{
    FollowsTarget, PathfindingDiagnostics, PlanState, Planning, fail, index_margin, reindex_all,
};
use crate::clearance::Clearance;
use crate::grid::{EditKind, Grid, GridEdit, cell_span};
use crate::los::line_of_sight;
use crate::search::Algorithm;

/// What [`edit_impact`] knows about one agent, in grid coordinates.
pub(crate) struct EditCheck<'a> {
    /// Start of the remaining path for the visibility check: the point of
    /// the agent's segment closest to it (see [`remaining`]).
    pub from: DVec2,
    /// The agent (a focus of the shortcut ellipse).
    pub agent: DVec2,
    /// A point in the agent's region, for the connection tests: the agent
    /// itself, or where it stands in no free cell (in a wall, off the grid)
    /// a point of the region its last plan started in (see
    /// [`region_point`]).
    pub region: DVec2,
    /// The start of the segment `from` lies on, when `from` is not a
    /// waypoint: a segment through a vertex is checked whole too, so that
    /// rounding in `from` cannot hide a blocked vertex ahead.
    pub behind: Option<DVec2>,
    /// The waypoints ahead; empty when the agent has arrived or has no path.
    pub ahead: &'a [DVec2],
    /// The goal asked for.
    pub goal: DVec2,
    /// Whether the goal is unreachable (fallback path or no path).
    pub fallback: bool,
}

/// Relative slack for "strictly shorter", absorbing `f32` world positions.
const SLACK: f64 = 1e-6;

/// Whether `edits` (already applied to `grid`) call for a new plan, and why.
pub(crate) fn edit_impact(
    grid: &Grid,
    edits: &[GridEdit],
    check: &EditCheck<'_>,
) -> Option<PlanReason> {
    let freed = || {
        edits
            .iter()
            .filter(|e| e.kind != EditKind::Blocked)
            .map(|e| e.rect)
    };

    if first_blocked_segment(grid, edits, check.from, check.behind, check.ahead).is_some() {
        return Some(PlanReason::PathBlocked);
    }
    let freed_any = freed().next().is_some();
    // Freed cells may join the agent's region to the goal's; so may a
    // blocked cell at a double corner the agent stands on, which leaves the
    // corner touching only the region of the cell diagonally across.
    if check.fallback
        && (freed_any
            || edits
                .iter()
                .any(|e| e.kind != EditKind::Freed && rect_distance(e.rect, check.region) == 0.0))
        && connected(grid, check.region, check.goal)
    {
        return Some(PlanReason::RegionsConnected);
    }
    if !freed_any {
        return None;
    }
    if check.fallback
        && let Some(end) = check.ahead.last()
    {
        let now = end.distance(check.goal) * (1.0 - SLACK);
        if freed()
            .any(|r| rect_distance(r, check.goal) < now && rect_meets_region(grid, r, check.region))
        {
            return Some(PlanReason::RegionsConnected);
        }
    }
    if let (Some(first), Some(&end)) = (check.ahead.first(), check.ahead.last()) {
        let remaining = check.agent.distance(*first)
            + check
                .ahead
                .windows(2)
                .map(|w| w[0].distance(w[1]))
                .sum::<f64>();
        let bound = remaining - SLACK * (1.0 + remaining);
        if freed().any(|r| ellipse_sum(r, check.agent, end) < bound) {
            return Some(PlanReason::Shortcut);
        }
    }
    None
}

/// The index in `ahead` of the end of the first segment of the path
/// `from, ahead[0], ahead[1], ...` that `edits` (already applied to `grid`)
/// made invisible.
///
/// `from` is computed (the agent's projection on its segment), so it may lie
/// a rounding error off the exact segment from `behind` to `ahead[0]`: where
/// that segment runs exactly through a vertex, the shifted one may pass it
/// on either side. So the first segment also counts as blocked when the
/// whole exact segment is blocked and an edit lies near its part ahead.
fn first_blocked_segment(
    grid: &Grid,
    edits: &[GridEdit],
    from: DVec2,
    behind: Option<DVec2>,
    ahead: &[DVec2],
) -> Option<usize> {
    let blocked = || {
        edits
            .iter()
            .filter(|e| e.kind != EditKind::Freed)
            .map(|e| e.rect)
    };
    blocked().next()?;
    let mut a = from;
    // The point the path came from before `a`, when `a` is a waypoint.
    let mut came: Option<DVec2> = None;
    for (i, &b) in ahead.iter().enumerate() {
        if blocked().any(|r| segment_near_rect(a, b, r))
            && (!line_of_sight(grid, a, b)
                || (i == 0 && behind.is_some_and(|w| !line_of_sight(grid, w, b)))
                || came.is_some_and(|c| squeezes(grid, c, a, b)))
        {
            return Some(i);
        }
        came = Some(a);
        a = b;
    }
    None
}

/// Whether a path coming from `c` and turning at `v` towards `b` squeezes
/// through `v` between two blocked cells touching there diagonally (a
/// double corner an edit made): each segment alone may be visible, one
/// along the free side of each blocked cell, yet the path crosses from one
/// free cell to the other through the pinch.
fn squeezes(grid: &Grid, c: DVec2, v: DVec2, b: DVec2) -> bool {
    if v.fract() != DVec2::ZERO {
        return false;
    }
    let (x, y) = (v.x as i64, v.y as i64);
    if !grid.is_double_corner(x, y) {
        return false;
    }
    // The free cell around `v` each direction runs into or along (cells
    // are named by their offset from `v`: -1 or 0 each way).
    let free_side = |d: DVec2| {
        let xs: &[i64] = match d.x.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Greater) => &[0],
            Some(std::cmp::Ordering::Less) => &[-1],
            _ => &[-1, 0],
        };
        let ys: &[i64] = match d.y.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Greater) => &[0],
            Some(std::cmp::Ordering::Less) => &[-1],
            _ => &[-1, 0],
        };
        xs.iter()
            .flat_map(|&dx| ys.iter().map(move |&dy| (dx, dy)))
            .find(|&(dx, dy)| grid.is_free_xy(x + dx, y + dy))
    };
    match (free_side(c - v), free_side(b - v)) {
        (Some(incoming), Some(outgoing)) => incoming != outgoing,
        _ => true,
    }
}

/// Cuts `path` short before the first segment ahead that `edits` (changes
/// of `grid`, the grid the agent plans on) blocked,
/// so that a follower stops at the last waypoint it can still reach (or
/// where it stands, if its own segment is blocked) instead of walking into
/// the wall while its new plan is computed.
/// Leaves `path` untouched (not even marked changed) when nothing is
/// blocked; returns whether it cut.
pub(crate) fn cut_at_blocked_segment(
    nav: &NavGrid,
    grid: &Grid,
    edits: &[GridEdit],
    path: &mut Mut<NavPath>,
    agent: DVec2,
) -> bool {
    let (from, behind, ahead) = remaining(path, agent, grid);
    let Some(i) = first_blocked_segment(grid, edits, from, behind, ahead) else {
        return false;
    };
    let path = &mut **path;
    let keep = path.next.min(path.waypoints.len()) + i;
    if keep == 0 {
        // Even the way to the path's first waypoint is blocked.
        stop_here(nav, path, agent);
        return true;
    }
    path.waypoints.truncate(keep);
    path.grid_waypoints.truncate(keep);
    path.next = path.next.min(keep);
    path.cut = true;
    path.length = path
        .waypoints
        .windows(2)
        .fold(0.0, |sum, w| sum + w[0].distance(w[1]));
    true
}

/// Cuts `path` to where the agent stands (`agent`, grid): a one-point path
/// it has reached, rather than an empty path under a status that promises
/// one, so that a follower stays there.
fn stop_here(nav: &NavGrid, path: &mut NavPath, agent: DVec2) {
    path.waypoints = vec![nav.to_world(agent)];
    path.grid_waypoints = vec![agent];
    path.next = 1;
    path.start_moved = false;
    path.cut = true;
    path.length = 0.0;
}

/// Whether segment `a-b`'s bounding box meets `rect` grown by one cell (a
/// blocked cell can only spoil segments that touch its square or the squares
/// around it: edges shared with blocked neighbours, new double corners).
fn segment_near_rect(a: DVec2, b: DVec2, rect: URect) -> bool {
    let lo = rect.min.as_dvec2() - DVec2::ONE;
    let hi = rect.max.as_dvec2() + DVec2::ONE;
    a.min(b).cmple(hi).all() && a.max(b).cmpge(lo).all()
}

/// Euclidean distance from `p` to the closed square of `rect`.
fn rect_distance(rect: URect, p: DVec2) -> f64 {
    p.distance(p.clamp(rect.min.as_dvec2(), rect.max.as_dvec2()))
}

/// Minimum of `|p - a| + |p - b|` over the closed square of `rect`.
fn ellipse_sum(rect: URect, a: DVec2, b: DVec2) -> f64 {
    let (lo, hi) = (rect.min.as_dvec2(), rect.max.as_dvec2());
    if segment_meets_box(a, b, lo, hi) {
        return a.distance(b);
    }
    // The minimum lies on the boundary; on each edge the function is convex,
    // and its minimiser on the edge's line is where the straight line from a
    // to b (or to b mirrored across that line) crosses it.
    let f = |p: DVec2| p.distance(a) + p.distance(b);
    let mut best = f64::INFINITY;
    for axis in 0..2 {
        let other = 1 - axis;
        for c in [lo[axis], hi[axis]] {
            let mut m = b;
            if (a[axis] - c) * (b[axis] - c) > 0.0 {
                m[axis] = 2.0 * c - b[axis];
            }
            let denom = m[axis] - a[axis];
            let t = if denom == 0.0 {
                a[other]
            } else {
                a[other] + (c - a[axis]) * (m[other] - a[other]) / denom
            };
            let mut p = DVec2::ZERO;
            p[axis] = c;
            p[other] = t.clamp(lo[other], hi[other]);
            best = best.min(f(p));
        }
    }
    best
}

/// Whether segment `a-b` meets the closed box `[lo, hi]` (Liang-Barsky).
fn segment_meets_box(a: DVec2, b: DVec2, lo: DVec2, hi: DVec2) -> bool {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for axis in 0..2 {
        if d[axis] == 0.0 {
            if a[axis] < lo[axis] || a[axis] > hi[axis] {
                return false;
            }
        } else {
            let (mut u, mut v) = (
                (lo[axis] - a[axis]) / d[axis],
                (hi[axis] - a[axis]) / d[axis],
            );
            if u > v {
                core::mem::swap(&mut u, &mut v);
            }
            t0 = t0.max(u);
            t1 = t1.min(v);
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

/// The free cells whose closed squares contain `p` (up to four).
fn cells_at(grid: &Grid, p: DVec2) -> impl Iterator<Item = (i64, i64)> + '_ {
    let (xs, ys) = if p.is_finite() {
        (cell_span(p.x), cell_span(p.y))
    } else {
        ([None; 2], [None; 2])
    };
    xs.into_iter()
        .flatten()
        .flat_map(move |x| ys.into_iter().flatten().map(move |y| (x, y)))
        .filter(|&(x, y)| grid.is_free_xy(x, y))
}

/// A point of the region an agent at `agent` plans from: the agent itself
/// if it stands in a free cell, else `reachable`, the point of the region
/// its last plan started in (the planner moved its start there).
fn region_point(grid: &Grid, agent: DVec2, reachable: Option<DVec2>) -> DVec2 {
    match reachable {
        Some(p) if cells_at(grid, agent).next().is_none() => p,
        _ => agent,
    }
}

/// Whether points `a` and `b` touch a common region (conservative at double
/// corners).
fn connected(grid: &Grid, a: DVec2, b: DVec2) -> bool {
    cells_at(grid, a).any(|(ax, ay)| {
        let ra = grid.region(ax, ay);
        cells_at(grid, b).any(|(bx, by)| grid.region(bx, by) == ra)
    })
}

/// Whether a free cell of `rect` is in a region touching point `p` (true for
/// very large rectangles, to stay cheap).
fn rect_meets_region(grid: &Grid, rect: URect, p: DVec2) -> bool {
    if u64::from(rect.width()) * u64::from(rect.height()) > 4096 {
        return true;
    }
    let mine: Vec<_> = cells_at(grid, p)
        .filter_map(|(x, y)| grid.region(x, y))
        .collect();
    (rect.min.y..rect.max.y).any(|y| {
        (rect.min.x..rect.max.x).any(|x| {
            grid.region(i64::from(x), i64::from(y))
                .is_some_and(|r| mine.contains(&r))
        })
    })
}

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
    mut planning: ResMut<Planning>,
    nav: Option<Res<NavGrid>>,
    settings: Option<Res<PathfindingSettings>>,
    mut agents: Query<ChangedRequestData, Changed<PathRequest>>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    let default = settings
        .as_deref()
        .map_or_else(|| PathfindingSettings::default().algorithm, |s| s.algorithm);
    for (entity, request, mut state, mut status, mut path, follows, pos) in &mut agents {
        match state.request.replace(*request) {
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
                    planning.request(entity, &mut state, &mut status, reason);
                }
                continue;
            }
            _ => {} // a new request or a new goal
        }
        start_request(
            &mut planning,
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
        state.reason
    }
}

/// Plans an agent with a new goal: clears its path and queues a first plan.
#[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
fn start_request(
    planning: &mut Planning,
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
    planning.unindex(entity);
    if let Some(nav) = nav
        && let Some(here) = position(pos, nav.transform().plane())
    {
        let clearance = nav.clearance_of(request.radius).unwrap_or_default();
        planning.index_waiting(nav, entity, nav.to_grid(here), clearance);
    }
    // The old path is gone: the agent has nothing to follow, and any
    // plan asked for before is moot.
    status.set_if_neq(PathStatus::Pending);
    planning.request(entity, state, status, PlanReason::NewRequest);
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
    if state.queued {
        return false;
    }
    state.in_flight.is_some() || status.has_path() && !path.is_finished()
}

/// Replans the agents a settings change concerns (see
/// [`PathfindingSettings`]).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_on_settings_change(
    meter: Res<Meter>,
    settings: Option<Res<PathfindingSettings>>,
    mut last: Local<Option<PathfindingSettings>>,
    mut planning: ResMut<Planning>,
    mut agents: Query<(
        Entity,
        &PathRequest,
        &mut PlanState,
        &mut PathStatus,
        &NavPath,
    )>,
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
        if state.request.is_none() || state.queued {
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
            ) || state.in_flight.is_some())
        {
            PlanReason::FallbackChanged
        } else {
            continue;
        };
        planning.request(entity, &mut state, &mut status, reason);
    }
}

/// Replans the agents whose remaining path the latest grid edits affect
/// (see the [module docs](self)); every agent if the grid was replaced.
///
/// Only the agents the edit index reports near an edit are looked at (and
/// those watching for freed cells when cells were freed), so the cost
/// follows the agents an edit can affect, not the number of agents.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_on_grid_edits(
    meter: Res<Meter>,
    nav: Res<NavGrid>,
    settings: Option<Res<PathfindingSettings>>,
    mut planning: ResMut<Planning>,
    mut agents: Query<
        (
            Entity,
            &mut PlanState,
            &mut PathStatus,
            &mut NavPath,
            PositionData,
        ),
        With<PathRequest>,
    >,
    mut diagnostics: ResMut<PathfindingDiagnostics>,
) {
    let _cost = meter.start();
    if nav.layout_id() == planning.seen_layout && nav.version() == planning.seen_version {
        return;
    }
    let settings = settings.as_deref().copied().unwrap_or_default();
    let since = planning.seen_version;
    let edits = if nav.layout_id() == planning.seen_layout {
        nav.edits_since(since)
    } else {
        None
    };
    planning.seen_layout = nav.layout_id();
    planning.seen_version = nav.version();
    let planning = &mut *planning;
    let plane = nav.transform().plane();
    let Some(edits) = edits else {
        // A new grid (or a gap in the edit log): every path is suspect.
        let margin = index_margin(&nav, &settings);
        reindex_all(
            planning,
            &nav,
            margin,
            agents.iter().map(|(e, state, status, path, pos)| {
                (e, path, status, position(pos, plane), state.key().1)
            }),
        );
        for (entity, mut state, mut status, _, _) in &mut agents {
            let wants = status.has_path()
                || matches!(
                    *status,
                    PathStatus::Unreachable
                        | PathStatus::Failed(
                            PathFailure::NoFreeCell
                                | PathFailure::NoRoom
                                | PathFailure::BudgetExhausted { .. }
                        )
                );
            if wants && !state.queued {
                planning.request(entity, &mut state, &mut status, PlanReason::GridReplaced);
            }
        }
        return;
    };
    // Who may be concerned: (agent, index of the edit), `u32::MAX` for "any
    // freed cell".
    let hits = &mut planning.hits;
    hits.clear();
    for (i, e) in edits.iter().enumerate() {
        if e.kind != EditKind::Freed {
            planning
                .segments
                .query(e.rect, |a| hits.push((a, i as u32)));
        }
        if e.kind != EditKind::Blocked {
            planning
                .ellipses
                .query(e.rect, |a| hits.push((a, i as u32)));
        }
    }
    let freed_any = edits.iter().any(|e| e.kind != EditKind::Blocked);
    if freed_any {
        hits.extend(planning.watch_freed.iter().map(|&a| (a, u32::MAX)));
    }
    hits.sort_unstable_by_key(|&(e, i)| (e.to_bits(), i));
    hits.dedup();
    let hits = std::mem::take(&mut planning.hits);
    let mut mine = std::mem::take(&mut planning.scratch_edits);
    let mut at = 0;
    while at < hits.len() {
        let entity = hits[at].0;
        let mut end = at;
        while end < hits.len() && hits[end].0 == entity {
            end += 1;
        }
        let group = &hits[at..end];
        at = end;
        let Ok((entity, mut state, mut status, mut path, pos)) = agents.get_mut(entity) else {
            continue;
        };
        // The edits near this agent (all of them for a watcher); for an
        // agent with a clearance, what they changed on its eroded grid.
        mine.clear();
        let key = state.key();
        if *status == PathStatus::Failed(PathFailure::NoRoom) {
            // An edit near an agent with no room where it stands (it is
            // indexed by the cells that matter) may make room: try again.
            if !state.queued {
                planning.request(
                    entity,
                    &mut state,
                    &mut status,
                    PlanReason::RegionsConnected,
                );
            }
            continue;
        }
        let mut freed = freed_any;
        if key == (ProfileId::DEFAULT, Clearance::NONE) {
            if group.last().is_some_and(|&(_, i)| i == u32::MAX) {
                mine.extend_from_slice(edits);
            } else {
                mine.extend(group.iter().map(|&(_, i)| edits[i as usize]));
            }
        } else {
            match nav.view(key).and_then(|v| v.edits_since(since)) {
                Some(changed) => {
                    mine.extend_from_slice(changed);
                    freed = changed.iter().any(|e| e.kind != EditKind::Blocked);
                }
                None => {
                    // Its eroded grid is newer than the edits: plan again.
                    if !state.queued {
                        planning.request(entity, &mut state, &mut status, PlanReason::GridReplaced);
                    }
                    continue;
                }
            }
            if mine.is_empty() {
                continue; // nothing changed on its eroded grid
            }
        }
        diagnostics.edit_checks += 1;
        check_agent(
            &nav,
            planning,
            &mine,
            freed,
            entity,
            &mut state,
            &mut status,
            &mut path,
            position(pos, plane).map(|p| nav.to_grid(p)),
        );
    }
    planning.hits = hits;
    planning.scratch_edits = mine;
}

/// The edit check of one agent (see [`replan_on_grid_edits`]); `edits` are
/// the edits near it.
#[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
fn check_agent(
    nav: &NavGrid,
    planning: &mut Planning,
    edits: &[GridEdit],
    freed_any: bool,
    entity: Entity,
    state: &mut PlanState,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    agent: Option<DVec2>,
) {
    if matches!(
        **status,
        PathStatus::Failed(PathFailure::NoFreeCell | PathFailure::NoRoom)
    ) {
        if freed_any && !state.queued {
            planning.request(entity, state, status, PlanReason::RegionsConnected);
        }
        return;
    }
    // The grid the agent plans on: eroded for its clearance.
    let Some(grid) = nav.view(state.key()).map(|v| v.grid) else {
        return;
    };
    // An agent whose cell was blocked under it walks out first (and one
    // already in a wall that is planned again keeps that urgency).
    let in_wall = agent.is_some_and(|p| !grid.is_point_traversable(p));
    let walled = in_wall
        && agent.is_some_and(|p| {
            edits
                .iter()
                .any(|e| e.kind != EditKind::Freed && point_in_rect(p, e.rect))
        });
    if state.busy() {
        // Its result is checked when it arrives; meanwhile the old path a
        // follower may still walk must not lead into a new wall, and a
        // blocked path goes to the front of the line.
        let cut = match agent {
            Some(agent) if !path.is_empty() => {
                cut_at_blocked_segment(nav, grid, edits, path, agent)
            }
            _ => false,
        };
        if walled && let Some(agent) = agent {
            walk_out(nav, state.key(), path, agent);
        }
        if in_wall && state.reason != PlanReason::StartBlocked {
            planning.request(entity, state, status, PlanReason::StartBlocked);
        } else if cut && state.priority > Some(super::workers::Priority::Urgent) {
            planning.request(entity, state, status, PlanReason::PathBlocked);
        }
        return;
    }
    let Some(agent) = agent else {
        return;
    };
    // Whatever its status (a failed search included), an agent walled in
    // is planned again, to get the way out at least.
    if walled {
        walk_out(nav, state.key(), path, agent);
        planning.request(entity, state, status, PlanReason::StartBlocked);
        return;
    }
    let unreachable = **status == PathStatus::Unreachable;
    if !(status.has_path() || unreachable) {
        return;
    }
    let goal = nav.to_grid(if unreachable {
        state.goal.unwrap_or(Vec2::NAN)
    } else {
        path.goal
    });
    let (from, behind, ahead) = remaining(path, agent, grid);
    let check = EditCheck {
        from,
        behind,
        agent,
        region: region_point(grid, agent, state.reachable),
        ahead,
        goal,
        fallback: unreachable || path.fallback,
    };
    if let Some(reason) = edit_impact(grid, edits, &check) {
        if reason == PlanReason::PathBlocked {
            cut_at_blocked_segment(nav, grid, edits, path, agent);
        }
        planning.request(entity, state, status, reason);
    }
}

/// Gives an agent a wall was raised under (at `agent`, grid) the way out
/// at once, so that it does not wait in the wall for its new search (which
/// starts with the same way out). Where there is none (no walkable point;
/// for a clearance, no place that fits it in sight), stops an agent with a
/// path where it stands: that path may lead on into the new wall.
fn walk_out(nav: &NavGrid, key: ViewKey, path: &mut Mut<NavPath>, agent: DVec2) {
    let old = &**path;
    match way_out(nav, key, agent, old.algorithm, old.goal, old.fallback) {
        Some(way_out) => **path = way_out,
        None if !old.is_empty() => stop_here(nav, path, agent),
        None => {}
    }
}

/// The way out of a wall for an agent at `agent` (grid): a path of the
/// nearest walkable point alone, walked to exactly (`start_moved`); `None`
/// if the grid has no walkable point. For an agent with a clearance, out of
/// a place where it does not fit: the place where it fits that
/// [`start_point`](crate::clearance::start_point) picks, `None` if none.
pub(crate) fn way_out(
    nav: &NavGrid,
    key: ViewKey,
    agent: DVec2,
    algorithm: Option<Algorithm>,
    goal: Vec2,
    fallback: bool,
) -> Option<NavPath> {
    // For a clearance, the nearest place where it fits that it reaches in
    // a straight line without crossing a wall.
    let view = nav.view(key)?;
    let exit = if key.1.is_none() {
        crate::search::nearest_valid_point(view.grid, agent, None)?
    } else {
        view.start_point(key.1, agent)?
    };
    Some(NavPath {
        waypoints: vec![nav.to_world(exit)],
        grid_waypoints: vec![exit],
        length: (agent.distance(exit) * f64::from(nav.transform().cell_size())) as f32,
        next: 0,
        grid_version: nav.version(),
        algorithm,
        goal,
        fallback,
        start_moved: true,
        cut: false,
    })
}

/// Whether point `p` (grid) lies in the closed square of `rect`'s cells.
fn point_in_rect(p: DVec2, rect: URect) -> bool {
    p.cmpge(rect.min.as_dvec2()).all() && p.cmple(rect.max.as_dvec2()).all()
}

/// The start of the remaining path, the start of the segment it lies on
/// (when it is not a waypoint) and the waypoints ahead, in grid coordinates.
/// On a segment, the remaining path starts at the point of the segment
/// closest to the agent: the part behind it no longer matters. An agent
/// walking to the path's start ([`NavPath::next`] 0) starts there itself,
/// unless it stands in a wall (its way out crosses blocked cells by
/// design).
fn remaining<'a>(
    path: &'a NavPath,
    agent: DVec2,
    grid: &Grid,
) -> (DVec2, Option<DVec2>, &'a [DVec2]) {
    let gw = &path.grid_waypoints;
    let next = path.next.min(gw.len());
    let ahead = &gw[next..];
    match (next.checked_sub(1).map(|i| gw[i]), ahead.first()) {
        (Some(a), Some(&b)) => {
            let from = closest_on_segment(agent, a, b);
            (from, (from != a).then_some(a), ahead)
        }
        (Some(a), None) => (a, None, ahead),
        (None, Some(&first)) if !grid.is_point_traversable(agent) => (first, None, ahead),
        (None, _) => (agent, None, ahead),
    }
}

/// The point of segment `a-b` closest to `p` (`a` if `p` is not finite).
/// A sub-segment of a visible segment is visible, so the remaining path can
/// be checked from here.
fn closest_on_segment(p: DVec2, a: DVec2, b: DVec2) -> DVec2 {
    let d = b - a;
    let len2 = d.length_squared();
    let t = (p - a).dot(d) / len2;
    if t.is_finite() && t > 0.0 {
        if t >= 1.0 { b } else { a + d * t }
    } else {
        a
    }
}

/// Replans agents whose followed entity moved farther than
/// [`PathfindingSettings::replan_distance`] from the goal they planned for;
/// fails those whose entity is gone.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_moved_targets(
    meter: Res<Meter>,
    settings: Option<Res<PathfindingSettings>>,
    nav: Option<Res<NavGrid>>,
    mut planning: ResMut<Planning>,
    mut agents: Query<
        (
            Entity,
            &PathRequest,
            &mut PlanState,
            &mut PathStatus,
            &mut NavPath,
        ),
        With<FollowsTarget>,
    >,
    positions: Query<PositionData>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    let settings = settings.as_deref().copied().unwrap_or_default();
    let plane = plane_of(nav.as_deref());
    for (entity, request, mut state, mut status, mut path) in &mut agents {
        let PathGoal::Entity(target) = request.goal else {
            continue;
        };
        if !(status.has_path() || *status == PathStatus::Unreachable) || state.busy() {
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
                    &mut planning,
                    entity,
                    &mut state,
                    PlanReason::TargetMoved,
                    &mut status,
                    &mut path,
                    PathStatus::Failed(PathFailure::TargetLost(target)),
                );
            }
            Some(p) => {
                let moved = state.goal.is_none_or(|g| {
                    let d = p.distance(g);
                    d.is_nan() || d > settings.replan_threshold() + OFF_PATH_TOLERANCE
                });
                if moved {
                    planning.request(entity, &mut state, &mut status, PlanReason::TargetMoved);
                }
            }
        }
    }
}

type ProgressData = (
    Entity,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
    PositionData,
);

/// For agents that moved: advances [`NavPath::next`] past waypoints they
/// have passed (without triggering `Changed<NavPath>`), and replans those
/// farther than [`PathfindingSettings::replan_distance`] from their path,
/// and those with no room where their search started
/// ([`PathFailure::NoRoom`]) that now fit or see a place that does.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn track_progress(
    meter: Res<Meter>,
    settings: Option<Res<PathfindingSettings>>,
    nav: Option<Res<NavGrid>>,
    mut planning: ResMut<Planning>,
    mut agents: Query<ProgressData, (With<PathRequest>, PositionChanged)>,
) {
    let _cost = meter.start();
    let settings = settings.as_deref().copied().unwrap_or_default();
    let plane = plane_of(nav.as_deref());
    for (entity, mut state, mut status, mut path, pos) in &mut agents {
        if *status == PathStatus::Failed(PathFailure::NoRoom) {
            // Moved (by the game) from where its search found no room: from
            // here it may fit, or see a place that does.
            if !state.busy()
                && let (Some(nav), Some(p)) = (nav.as_deref(), position(pos, plane))
                && let Some(view) = nav.view(state.key())
                && view.start_point(state.key().1, nav.to_grid(p)).is_some()
            {
                planning.request(entity, &mut state, &mut status, PlanReason::Moved);
            }
            continue;
        }
        if !status.has_path() {
            continue;
        }
        let Some(p) = position(pos, plane) else {
            continue;
        };
        let path = path.bypass_change_detection();
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
        } else {
            p.distance(w[w.len() - 1])
        };
        if off > settings.replan_threshold() + OFF_PATH_TOLERANCE && !state.busy() {
            planning.request(entity, &mut state, &mut status, PlanReason::OffPath);
        }
    }
}

/// Slack added to [`PathfindingSettings::replan_distance`] so that rounding
/// never makes an agent on its path count as off it (world units).
const OFF_PATH_TOLERANCE: f32 = 1e-4;

/// Distance from `p` to segment `a-b` (world units).
pub(crate) fn segment_distance(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let d = b - a;
    let len2 = d.length_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(d) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + d * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_ellipse_sum(rect: URect, a: DVec2, b: DVec2) -> f64 {
        let (lo, hi) = (rect.min.as_dvec2(), rect.max.as_dvec2());
        let n = 200;
        let mut best = f64::INFINITY;
        for i in 0..=n {
            for j in 0..=n {
                let p = lo + (hi - lo) * DVec2::new(f64::from(i), f64::from(j)) / f64::from(n);
                best = best.min(p.distance(a) + p.distance(b));
            }
        }
        best
    }

    #[test]
    fn ellipse_sum_matches_brute_force() {
        let rects = [
            URect::new(5, 5, 6, 6),
            URect::new(2, 8, 7, 9),
            URect::new(10, 0, 11, 20),
        ];
        let points = [
            DVec2::new(0.5, 0.5),
            DVec2::new(3.0, 12.0),
            DVec2::new(8.25, 5.5),
            DVec2::new(20.0, 3.0),
            DVec2::new(5.5, 0.0),
        ];
        for r in rects {
            for a in points {
                for b in points {
                    let exact = ellipse_sum(r, a, b);
                    let brute = brute_ellipse_sum(r, a, b);
                    assert!(exact <= brute + 1e-9, "{r:?} {a} {b}: {exact} > {brute}");
                    assert!(brute - exact < 0.05, "{r:?} {a} {b}: {exact} << {brute}");
                }
            }
        }
    }

    #[test]
    fn blocked_cell_on_path_is_detected_and_far_cell_is_not() {
        let mut grid = Grid::new(10, 10).unwrap();
        let ahead = [DVec2::new(9.5, 0.5)];
        let check = EditCheck {
            behind: None,
            from: DVec2::new(0.5, 0.5),
            agent: DVec2::new(0.5, 0.5),
            region: DVec2::new(0.5, 0.5),
            ahead: &ahead,
            goal: DVec2::new(9.5, 0.5),
            fallback: false,
        };
        grid.set_free(bevy_math::UVec2::new(5, 5), false).unwrap();
        let far: Vec<GridEdit> = grid.edits_since(0).copied().collect();
        assert_eq!(edit_impact(&grid, &far, &check), None);
        grid.set_free(bevy_math::UVec2::new(5, 0), false).unwrap();
        let near: Vec<GridEdit> = grid.edits_since(1).copied().collect();
        assert_eq!(
            edit_impact(&grid, &near, &check),
            Some(PlanReason::PathBlocked)
        );
    }

    /// A path along row line y = 5 that turns at vertex (5, 5) and goes
    /// back along it: once cells (5, 4) and (4, 5) are blocked, (5, 5) is a
    /// double corner and the path squeezes through it, although each of
    /// its segments runs along the free side of a blocked cell.
    #[test]
    fn a_waypoint_an_edit_turns_into_a_double_corner_blocks_the_path() {
        let mut grid = Grid::new(10, 10).unwrap();
        let ahead = [DVec2::new(5.0, 5.0), DVec2::new(2.0, 5.0)];
        let from = DVec2::new(8.0, 5.0);
        grid.edit(|e| {
            e.set_free(bevy_math::UVec2::new(5, 4), false)?;
            e.set_free(bevy_math::UVec2::new(4, 5), false)
        })
        .unwrap();
        let edits: Vec<GridEdit> = grid.edits_since(0).copied().collect();
        assert!(grid.is_double_corner(5, 5));
        assert!(line_of_sight(&grid, from, ahead[0]) && line_of_sight(&grid, ahead[0], ahead[1]));
        assert_eq!(
            first_blocked_segment(&grid, &edits, from, None, &ahead),
            Some(1)
        );
        // Turning back to the side it came from is no squeeze.
        let back = [DVec2::new(5.0, 5.0), DVec2::new(9.0, 7.0)];
        assert_eq!(
            first_blocked_segment(&grid, &edits, from, None, &back),
            None
        );
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "exact results")]
    fn segment_distance_handles_degenerate_segments() {
        let p = Vec2::new(3.0, 4.0);
        assert_eq!(segment_distance(p, Vec2::ZERO, Vec2::ZERO), 5.0);
        assert_eq!(
            segment_distance(p, Vec2::new(0.0, 4.0), Vec2::new(10.0, 4.0)),
            0.0
        );
    }
}
