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
/// An agent planned from where it does not fit (the planner moved its
/// start) that still does not fit where it stands now (moved meanwhile by a
/// crowd, or on its way out): with a clearance, `exit` is where it fits
/// that [`start_point`](crate::clearance::start_point) finds from `here`,
/// and it walks out there, then to the path's start if it sees it; a disc
/// takes the way out as planned, straight to the path's start, if that way
/// comes no closer to a wall than it stands now. Else `None`.
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
    (here, exit): (Option<DVec2>, Option<DVec2>),
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
    if moved && let Some(exit) = exit.filter(|&e| e != here) {
        // With a clearance, planned from where it does not fit, moved since
        // to where it still does not: out to where it fits from here (as
        // the planner would go), then on to the path's start.
        if exit == w[0] {
            return Some(planned());
        }
        let mut waypoints = Vec::with_capacity(w.len() + 1);
        waypoints.push(exit);
        waypoints.extend_from_slice(w);
        let length = crate::geom::polyline_length(&waypoints);
        return sees(exit, w[0]).then_some(Followed {
            waypoints,
            length,
            next: 0,
            start_moved: true,
        });
    }
    if moved && radius > 0.0 {
        // A disc planned from where it does not fit, moved since (pushed by
        // a crowd, or walking out) to where it still does not: it walks
        // out to the path's start as planned if the way there comes no
        // closer to a wall than it stands now.
        let clear = crate::clearance::wall_distance(grid, here, radius.ceil() as u32);
        if clear < radius - FIT_SLACK {
            let out = clear > 0.0
                && line_of_sight(grid, here, w[0])
                && crate::clearance::keeps_distance(grid, here, w[0], clear);
            return out.then(planned);
        }
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
    use crate::search::{PathKind, SearchStats};

    /// A 10 x 10 grid whose first column is blocked, and a path for a disc
    /// of radius 1 planned from `start` (0.5 from the wall: it does not
    /// fit), moved out to (2, 5) and on to (8, 5).
    fn walled_start(start: DVec2) -> (Grid, Path) {
        let row = format!("#{}", ".".repeat(9));
        let grid = Grid::from_ascii(&[row.as_str(); 10].join("\n")).unwrap();
        let waypoints = vec![DVec2::new(2.0, 5.0), DVec2::new(8.0, 5.0)];
        let path = Path {
            length: crate::geom::polyline_length(&waypoints),
            cost: 6.0,
            waypoints,
            kind: PathKind::Found,
            start_moved_from: Some(start),
            stats: SearchStats::default(),
        };
        (grid, path)
    }

    #[test]
    fn a_disc_pushed_on_its_way_out_still_walks_out() {
        let start = DVec2::new(1.5, 5.0);
        let (grid, path) = walled_start(start);
        // Pushed along the wall: still 0.5 from it, the way out keeps that.
        let joined = join(
            &grid,
            1.0,
            &path,
            (Some(DVec2::new(1.5, 5.02)), None),
            start,
        )
        .unwrap();
        assert_eq!((joined.next, joined.start_moved), (0, true));
        assert_eq!(joined.waypoints, path.waypoints);
        // Where the search started: as planned.
        let joined = join(&grid, 1.0, &path, (Some(start), None), start).unwrap();
        assert_eq!((joined.next, joined.start_moved), (0, true));
        // Pushed into the wall: planned again.
        assert!(join(&grid, 1.0, &path, (Some(DVec2::new(0.5, 5.0)), None), start).is_none());
    }

    #[test]
    fn an_agent_with_a_clearance_moved_on_its_way_out_walks_out_from_where_it_is() {
        // Planned on an eroded grid (here the grid itself) from (1.5, 5),
        // moved to (1.5, 5.3): out to where it fits from there, then to the
        // path's start.
        let start = DVec2::new(1.5, 5.0);
        let (grid, path) = walled_start(start);
        let (here, exit) = (DVec2::new(1.5, 5.3), DVec2::new(2.0, 5.3));
        let joined = join(&grid, 0.0, &path, (Some(here), Some(exit)), start).unwrap();
        assert_eq!((joined.next, joined.start_moved), (0, true));
        assert_eq!(
            joined.waypoints,
            [exit, path.waypoints[0], path.waypoints[1]]
        );
        assert!((joined.length - (0.3 + 6.0)).abs() < 1e-12);
        // Out to the path's start itself: as planned.
        let joined = join(
            &grid,
            0.0,
            &path,
            (Some(here), Some(path.waypoints[0])),
            start,
        );
        assert_eq!(joined.unwrap().waypoints, path.waypoints);
        // Where it fits from there does not see the path's start.
        let exit = DVec2::new(0.5, 5.3);
        assert!(join(&grid, 0.0, &path, (Some(here), Some(exit)), start).is_none());
    }

    #[test]
    fn a_disc_walks_out_no_closer_to_a_wall_than_it_stands() {
        // A block at (2, 6) beside the way out from (1.5, 7.5) to (2, 5):
        // it passes about 0.2 from the block, closer than the 0.5 the
        // agent stands from the wall.
        let row = format!("#{}", ".".repeat(9));
        let mut rows = vec![row.clone(); 10];
        rows[6] = format!("#.#{}", ".".repeat(7));
        let grid = Grid::from_ascii(&rows.join("\n")).unwrap();
        let (_, path) = walled_start(DVec2::new(1.5, 7.5));
        let here = DVec2::new(1.5, 7.6);
        assert!(crate::clearance::wall_distance(&grid, here, 1) >= 0.5 - 1e-12);
        assert!(join(&grid, 1.0, &path, (Some(here), None), DVec2::new(1.5, 7.5)).is_none());
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
