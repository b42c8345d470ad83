//! What the plugin does to a path, with no ECS in sight: the part still
//! ahead of an agent, cutting it before a blocked segment, the way out of a
//! wall, and joining a new path to where the agent is now.

use std::ops::DerefMut;

use bevy_math::{DVec2, Vec2};

use super::impact::first_blocked_segment;
pub(crate) use crate::geom::closest_on_segment;
use crate::grid::{Grid, GridEdit};
use crate::los::line_of_sight;
use crate::plugin::api::{NavPath, polyline_length};
use crate::plugin::world::{NavGrid, ViewKey};
use crate::search::{Algorithm, Path};

/// Cuts `path` short before the first segment ahead that `edits` (changes
/// of `grid`, the grid the agent plans on) blocked (for an agent of
/// `radius` > 0 on a mesh, that comes closer than `radius` to them),
/// so that a follower stops at the last waypoint it can still reach (or
/// where it stands, if its own segment is blocked) instead of walking into
/// the wall while its new plan is computed.
/// Leaves `path` untouched (not even marked changed) when nothing is
/// blocked; returns whether it cut.
pub(crate) fn cut_at_blocked_segment(
    nav: &NavGrid,
    grid: &Grid,
    edits: &[GridEdit],
    radius: f64,
    path: &mut impl DerefMut<Target = NavPath>,
    agent: DVec2,
) -> bool {
    let (from, behind, ahead) = remaining(path, agent, grid, radius);
    let Some(i) = first_blocked_segment(grid, edits, from, behind, ahead, radius) else {
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
    path.length = polyline_length(&path.waypoints);
    true
}

/// Cuts `path` to where the agent stands (`agent`, grid): a one-point path
/// it has reached, rather than an empty path under a status that promises
/// one, so that a follower stays there.
pub(crate) fn stop_here(nav: &NavGrid, path: &mut NavPath, agent: DVec2) {
    path.waypoints = vec![nav.to_world(agent)];
    path.grid_waypoints = vec![agent];
    path.next = 1;
    path.start_moved = false;
    path.cut = true;
    path.length = 0.0;
}

/// Gives an agent a wall was raised under (at `agent`, grid) the way out
/// at once, so that it does not wait in the wall for its new search (which
/// starts with the same way out). Where there is none (no walkable point;
/// for a clearance, no place that fits it in sight), stops an agent with a
/// path where it stands: that path may lead on into the new wall.
pub(crate) fn walk_out(
    nav: &NavGrid,
    key: ViewKey,
    path: &mut impl DerefMut<Target = NavPath>,
    agent: DVec2,
) {
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
        crate::endpoint::nearest_valid_point(view.grid, agent, None)?
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
        crossings: Vec::new(),
        start_area: None,
    })
}

/// The start of the remaining path, the start of the segment it lies on
/// (when it is not a waypoint) and the waypoints ahead, in grid coordinates.
/// On a segment, the remaining path starts at the point of the segment
/// closest to the agent: the part behind it no longer matters. An agent
/// walking to the path's start ([`NavPath::next`] 0) starts there itself,
/// unless it stands in a wall (its way out crosses blocked cells by
/// design).
pub(crate) fn remaining<'a>(
    path: &'a NavPath,
    agent: DVec2,
    grid: &Grid,
    radius: f64,
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
        (None, Some(&first)) if !fits(grid, radius, agent) => (first, None, ahead),
        (None, _) => (agent, None, ahead),
    }
}

/// How much closer than its radius to a wall an agent planning on a mesh
/// may stand and still count as fitting (cells): the rounding of `f32`
/// world positions.
const FIT_SLACK: f64 = 1e-4;

/// Whether an agent at `p` (grid) stands where it may plan from as it is:
/// on a free point of `grid`, and for an agent of `radius` > 0 planning on
/// a mesh (`grid` its profile's), at least `radius` from every wall.
pub(crate) fn fits(grid: &Grid, radius: f64, p: DVec2) -> bool {
    if radius == 0.0 {
        return grid.is_point_traversable(p);
    }
    crate::clearance::wall_distance(grid, p, radius.ceil() as u32) >= radius - FIT_SLACK
}

/// Whether an agent at `a` may walk straight to `b` (grid): `a-b` is
/// visible on `grid`, and for an agent of `radius` > 0 planning on a mesh
/// (`grid` its profile's), keeps `radius` from every wall.
pub(crate) fn sees(grid: &Grid, radius: f64, a: DVec2, b: DVec2) -> bool {
    line_of_sight(grid, a, b)
        && (radius == 0.0 || crate::clearance::keeps_distance(grid, a, b, radius))
}

/// Whether an agent at `from` (world) that plans on the grid of `key` sees
/// waypoint `next` of `path` ([`sees`], on that grid); `false` where there
/// is no such grid or waypoint.
pub(crate) fn sees_waypoint(
    nav: &NavGrid,
    key: ViewKey,
    path: &NavPath,
    from: Vec2,
    next: usize,
) -> bool {
    let Some(view) = nav.view(key) else {
        return false;
    };
    let to = match (path.grid_waypoints.get(next), path.waypoints.get(next)) {
        (Some(&to), _) if path.grid_waypoints.len() == path.waypoints.len() => to,
        (_, Some(&to)) => nav.to_grid(to),
        _ => return false,
    };
    sees(view.grid, view.disc, nav.to_grid(from), to)
}

/// Distance from `p` to segment `a-b` (world units).
pub(crate) fn segment_distance(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    crate::geom::segment_distance(p.as_dvec2(), a.as_dvec2(), b.as_dvec2()) as f32
}

/// A found path as the agent will follow it.
pub(crate) struct Followed {
    /// Grid waypoints.
    pub(crate) waypoints: Vec<DVec2>,
    /// Length in grid units.
    pub(crate) length: f64,
    /// The waypoint to head for ([`NavPath::next`]).
    pub(crate) next: usize,
    /// Whether the path starts at a point the start was moved to.
    pub(crate) start_moved: bool,
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
/// checked against the edits made since (by the apply stage). For an agent
/// of `radius` > 0 planning on a mesh (`grid` its profile's), a waypoint is
/// seen when the segment to it also keeps `radius` from every wall.
pub(crate) fn join(
    grid: &Grid,
    radius: f64,
    found: &Path,
    here: Option<DVec2>,
    start: DVec2,
) -> Option<Followed> {
    let sees = |a: DVec2, b: DVec2| sees(grid, radius, a, b);
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
    let seen = if w.len() > 1 && sees(here, w[1]) {
        Some(1)
    } else {
        (2..w.len()).rev().find(|&k| sees(here, w[k]))
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
    sees(here, w[0]).then(|| Followed {
        next: 0,
        ..planned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
