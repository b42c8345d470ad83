//! Which grid edits affect an agent's plan, and why: exact tests on the
//! grid the agent plans on, with no ECS in sight.
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
//!
//! # Agents of a radius on a mesh
//!
//! An agent that plans on a mesh for its radius `r` ([`EditCheck::radius`])
//! is checked against the edits of its profile's grid, grown by what they
//! change on the mesh:
//!
//! - **Blocked** cells affect it iff a remaining segment comes closer than
//!   `r` to them (up to a rounding slack): the path no longer keeps its
//!   distance.
//! - **Freed** cells change the mesh within `r + δ` of them (`δ` the mesh's
//!   tolerance, [`EditCheck::reach`]), so they may shorten the path iff the
//!   shortcut ellipse reaches within that distance of them.
//! - An agent with a fallback path, or whose goal is unreachable, replans
//!   when a freed cell lies in its region of the grid (where a point could
//!   walk from it): that may widen a way too narrow for it, anywhere.

use bevy_math::{DVec2, URect};

use crate::geom;
use crate::grid::{EditKind, Grid, GridEdit, cell_span};
use crate::los::line_of_sight;
use crate::plugin::api::PlanReason;

/// What [`edit_impact`] knows about one agent, in grid coordinates.
pub(crate) struct EditCheck<'a> {
    /// Start of the remaining path for the visibility check: the point of
    /// the agent's segment closest to it (see [`remaining`](super::remaining)).
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
    /// For an agent of a radius planning on a mesh: its radius in cells
    /// (`grid` is then its profile's); 0 otherwise.
    pub radius: f64,
    /// For such an agent: how far from an edited cell the mesh may change
    /// (the radius plus the mesh's tolerance).
    pub reach: f64,
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

    if first_blocked_segment(
        grid,
        edits,
        check.from,
        check.behind,
        check.ahead,
        check.radius,
    )
    .is_some()
    {
        return Some(PlanReason::PathBlocked);
    }
    let freed_any = freed().next().is_some();
    if check.radius > 0.0 {
        if !freed_any {
            return None;
        }
        if check.fallback {
            return freed()
                .any(|r| rect_meets_region(grid, r, check.region))
                .then_some(PlanReason::RegionsConnected);
        }
        return shortcut(check, freed(), check.reach);
    }
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
    shortcut(check, freed(), 0.0)
}

/// [`PlanReason::Shortcut`] if one of the `freed` rectangles, grown by
/// `grow` cells, reaches inside the agent's shortcut ellipse.
fn shortcut(
    check: &EditCheck<'_>,
    mut freed: impl Iterator<Item = URect>,
    grow: f64,
) -> Option<PlanReason> {
    let (Some(first), Some(&end)) = (check.ahead.first(), check.ahead.last()) else {
        return None;
    };
    let remaining = check.agent.distance(*first)
        + check
            .ahead
            .windows(2)
            .map(|w| w[0].distance(w[1]))
            .sum::<f64>();
    let bound = remaining - SLACK * (1.0 + remaining);
    // (A point within `grow` of the rectangle has a sum of distances at
    // most `2 grow` below the rectangle's.)
    freed
        .any(|r| ellipse_sum(r, check.agent, end) - 2.0 * grow < bound)
        .then_some(PlanReason::Shortcut)
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
///
/// For an agent of `radius` > 0 planning on a mesh (`grid` its profile's),
/// a segment is blocked when it comes closer than `radius` to a blocked
/// edit (the whole segment from `behind` for the first one).
pub(crate) fn first_blocked_segment(
    grid: &Grid,
    edits: &[GridEdit],
    from: DVec2,
    behind: Option<DVec2>,
    ahead: &[DVec2],
    radius: f64,
) -> Option<usize> {
    let blocked = || {
        edits
            .iter()
            .filter(|e| e.kind != EditKind::Freed)
            .map(|e| e.rect)
    };
    blocked().next()?;
    if radius > 0.0 {
        // (The slack absorbs the rounding of `f32` world positions.)
        let near =
            |a: DVec2, b: DVec2| blocked().any(|r| segment_rect_distance(a, b, r) < radius + SLACK);
        let mut a = from;
        for (i, &b) in ahead.iter().enumerate() {
            if near(a, b) || (i == 0 && behind.is_some_and(|w| near(w, b))) {
                return Some(i);
            }
            a = b;
        }
        return None;
    }
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

/// Whether segment `a-b`'s bounding box meets `rect` grown by one cell (a
/// blocked cell can only spoil segments that touch its square or the squares
/// around it: edges shared with blocked neighbours, new double corners).
fn segment_near_rect(a: DVec2, b: DVec2, rect: URect) -> bool {
    let lo = rect.min.as_dvec2() - DVec2::ONE;
    let hi = rect.max.as_dvec2() + DVec2::ONE;
    a.min(b).cmple(hi).all() && a.max(b).cmpge(lo).all()
}

/// Euclidean distance from segment `a-b` to the closed square of `rect`.
fn segment_rect_distance(a: DVec2, b: DVec2, rect: URect) -> f64 {
    geom::segment_rect_distance(a, b, rect.min.as_dvec2(), rect.max.as_dvec2())
}

/// Euclidean distance from `p` to the closed square of `rect`.
pub(crate) fn rect_distance(rect: URect, p: DVec2) -> f64 {
    p.distance(p.clamp(rect.min.as_dvec2(), rect.max.as_dvec2()))
}

/// Minimum of `|p - a| + |p - b|` over the closed square of `rect`.
fn ellipse_sum(rect: URect, a: DVec2, b: DVec2) -> f64 {
    geom::detour_through_rect(a, b, rect.min.as_dvec2(), rect.max.as_dvec2())
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
pub(crate) fn region_point(grid: &Grid, agent: DVec2, reachable: Option<DVec2>) -> DVec2 {
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

/// Whether point `p` (grid) lies in the closed square of `rect`'s cells.
pub(crate) fn point_in_rect(p: DVec2, rect: URect) -> bool {
    p.cmpge(rect.min.as_dvec2()).all() && p.cmple(rect.max.as_dvec2()).all()
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
            radius: 0.0,
            reach: 0.0,
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
            first_blocked_segment(&grid, &edits, from, None, &ahead, 0.0),
            Some(1)
        );
        // Turning back to the side it came from is no squeeze.
        let back = [DVec2::new(5.0, 5.0), DVec2::new(9.0, 7.0)];
        assert_eq!(
            first_blocked_segment(&grid, &edits, from, None, &back, 0.0),
            None
        );
    }
}
