//! Planning on a mesh for agents of a radius: endpoints moved onto the mesh, Polyanya between them, a fallback to the closest point the agent can reach.

use bevy_math::DVec2;

use super::endpoint::Endpoint;
use super::mesh_graph::Mode;
use super::polyanya;
use super::{
    Algorithm, Outcome, Path, PathKind, PlanError, PlanOptions, Planner, Role, SearchContext,
    SearchStats,
};
use crate::clearance::{MAX_EXIT_DISTANCE, keeps_distance, wall_distance};
use crate::geom::{orient_sign, polyline_length};
use crate::los::line_of_sight;
use crate::mesh::{NONE, NavMesh};
use core::cmp::Ordering;

impl Planner {
    /// [`Planner::plan_on_mesh`] on a mesh of [`NavMesh::with_radius`].
    pub(crate) fn plan_on_radius_mesh(
        &mut self,
        mesh: &NavMesh,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        if !start.is_finite() {
            return Err(PlanError::NonFinite(Role::Start));
        }
        if !goal.is_finite() {
            return Err(PlanError::NonFinite(Role::Goal));
        }
        let (start, goal) = (start + DVec2::ZERO, goal + DVec2::ZERO);
        let within = f64::from(MAX_EXIT_DISTANCE);
        let found = &mut self.polygon_marks.found;
        let from =
            nearest_on_mesh(mesh, start, within, found).ok_or(if mesh.polygon_count() == 0 {
                PlanError::NoFreeCell
            } else {
                PlanError::NoRoom
            })?;
        let start_moved_from = (from != start).then_some(start);
        // A goal on the mesh is searched for at once. Only when it is off
        // the mesh, or the search finds it cut off, does the walk over the
        // start's polygons look for the closest point the agent can reach.
        let goal_on_mesh = on_mesh(mesh, goal, &mut self.polygon_marks.found);
        let fallback = |planner: &mut Planner| -> Result<(DVec2, PathKind), PlanError> {
            let closest = closest_reachable(mesh, from, goal, &mut planner.polygon_marks);
            if options.fallback == super::FallbackPolicy::Fail {
                return Err(PlanError::Unreachable { closest });
            }
            Ok((
                closest,
                PathKind::Fallback {
                    requested_goal: goal,
                },
            ))
        };
        let (to, kind) = if goal_on_mesh {
            (goal, PathKind::Found)
        } else {
            fallback(self)?
        };
        match self.search_radius_mesh(mesh, from, to, kind, start_moved_from, options)? {
            Some(path) => Ok(path),
            None => {
                let (to, kind) = fallback(self)?;
                self.search_radius_mesh(mesh, from, to, kind, start_moved_from, options)?
                    .ok_or(PlanError::SearchFailed {
                        stats: SearchStats::default(),
                    })
            }
        }
    }

    /// [`Planner::plan_many_on_mesh`] on a mesh of [`NavMesh::with_radius`]:
    /// for a goal on the mesh, the starts, each moved onto the mesh as
    /// [`Planner::plan_on_mesh`] moves it, share one Polyanya search from
    /// the goal. The others (bad input, a start already at the goal or cut
    /// off from it, a goal off the mesh, whose fallback target depends on
    /// the start's part of the mesh, and Lazy Theta\* or A\*) are planned
    /// one by one.
    pub(crate) fn plan_many_on_radius_mesh(
        &mut self,
        mesh: &NavMesh,
        starts: &[DVec2],
        goal: DVec2,
        options: &PlanOptions,
        out: &mut Vec<Result<Path, PlanError>>,
    ) {
        let mut answers: Vec<Option<Result<Path, PlanError>>> = Vec::with_capacity(starts.len());
        answers.resize_with(starts.len(), || None);
        let goal = goal + DVec2::ZERO;
        let exact = matches!(options.algorithm, Algorithm::Anya | Algorithm::Polyanya);
        let goal_ep =
            (exact && goal.is_finite() && on_mesh(mesh, goal, &mut self.polygon_marks.found))
                .then(|| Endpoint::resolve(mesh.grid(), goal))
                .flatten();
        if let Some(goal_ep) = goal_ep {
            let within = f64::from(MAX_EXIT_DISTANCE);
            // (Which start each target is, where it was moved to, and from
            // where.)
            let mut members: Vec<(usize, DVec2, Option<DVec2>)> = Vec::new();
            let mut targets = Vec::new();
            for (i, &start) in starts.iter().enumerate() {
                if !start.is_finite() {
                    continue;
                }
                let start = start + DVec2::ZERO;
                let found = &mut self.polygon_marks.found;
                let Some(from) = nearest_on_mesh(mesh, start, within, found) else {
                    continue;
                };
                if let (true, Some(end)) = (from != goal, Endpoint::resolve(mesh.grid(), from)) {
                    targets.push(end);
                    members.push((i, from, (from != start).then_some(start)));
                }
            }
            let mut ctx = SearchContext::whole(mesh.grid(), &goal_ep, &goal_ep, options);
            let outcome = if targets.is_empty() {
                Outcome::Exhausted
            } else {
                polyanya::search_many(&mut ctx, mesh, &mut self.polyanya, &targets)
            };
            if matches!(outcome, Outcome::Found | Outcome::Exhausted) {
                let scale = mesh.scale() as f64;
                for (k, &(i, from, moved)) in members.iter().enumerate() {
                    let mut waypoints = Vec::new();
                    if !self.polyanya.path_from_target(k, &mut waypoints) {
                        continue; // cut off from the goal: a fallback, alone
                    }
                    for p in &mut waypoints {
                        *p /= scale;
                    }
                    // The ends exactly as asked, not through the lattice.
                    let last = waypoints.len() - 1;
                    (waypoints[0], waypoints[last]) = (from, goal);
                    let length = polyline_length(&waypoints);
                    answers[i] = Some(Ok(Path {
                        waypoints,
                        length,
                        cost: length,
                        kind: PathKind::Found,
                        start_moved_from: moved,
                        stats: ctx.stats,
                    }));
                }
            }
        }
        out.extend(answers.into_iter().zip(starts).map(|(answer, &start)| {
            answer.unwrap_or_else(|| self.plan_on_mesh(mesh, start, goal, options))
        }));
    }

    /// Polyanya from `from` to `to`, both on `mesh`; `None` if `to` is cut
    /// off from `from`.
    fn search_radius_mesh(
        &mut self,
        mesh: &NavMesh,
        from: DVec2,
        to: DVec2,
        kind: PathKind,
        start_moved_from: Option<DVec2>,
        options: &PlanOptions,
    ) -> Result<Option<Path>, PlanError> {
        let grid = mesh.grid();
        let resolve = |p: DVec2| Endpoint::resolve(grid, p).ok_or(PlanError::NoRoom);
        let (start_ep, goal_ep) = (resolve(from)?, resolve(to)?);
        let mut ctx = SearchContext::whole(grid, &start_ep, &goal_ep, options);
        let mut waypoints = Vec::new();
        let outcome = if from == to {
            waypoints.push(from);
            Outcome::Found
        } else if in_sight(mesh, from, to, &mut self.polygon_marks.found) {
            waypoints.extend([from, to]);
            Outcome::Found
        } else {
            let mode = match options.algorithm {
                Algorithm::LazyTheta => Some(Mode::LazyTheta),
                Algorithm::AStar => Some(Mode::AStar),
                Algorithm::AStarSmoothed => Some(Mode::AStarSmoothed),
                Algorithm::Anya | Algorithm::Polyanya => None,
            };
            match mode {
                Some(mode) => self.mesh_graph.search(
                    mesh,
                    from,
                    to,
                    mode,
                    ctx.stop_at,
                    &mut ctx.stats,
                    &mut self.polygon_marks.found,
                    &mut waypoints,
                ),
                None => polyanya::search(&mut ctx, mesh, &mut self.polyanya, &mut waypoints, false),
            }
        };
        let stats = ctx.stats;
        match outcome {
            Outcome::Found => {
                let length = polyline_length(&waypoints);
                Ok(Some(Path {
                    waypoints,
                    length,
                    cost: length,
                    kind,
                    start_moved_from,
                    stats,
                }))
            }
            Outcome::Exhausted => Ok(None),
            Outcome::Budget => Err(PlanError::BudgetExhausted { stats }),
            Outcome::Cancelled => Err(PlanError::Cancelled),
            Outcome::Paused => Err(PlanError::SearchFailed { stats }),
        }
    }
}

/// Polygon marks for the walks over a mesh's polygons: a generation stamp
/// per polygon id, so that nothing is cleared per query.
#[derive(Default)]
pub(crate) struct PolygonMarks {
    stamps: crate::fast_hash::FastMap<u32, u32>,
    stamp: u32,
    queue: Vec<u32>,
    /// Polygons found at a point.
    found: Vec<u32>,
}

impl PolygonMarks {
    fn reset(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamps.clear();
            self.stamp = 1;
        }
        self.queue.clear();
    }

    /// Marks `id`; returns whether it was not marked yet.
    fn mark(&mut self, id: u32) -> bool {
        let s = self.stamps.entry(id).or_insert(0);
        let new = *s != self.stamp;
        *s = self.stamp;
        new
    }
}

/// Pushes onto `out` the polygons holding `p` (in cells).
pub(crate) fn polygons_at(mesh: &NavMesh, p: DVec2, out: &mut Vec<u32>) {
    let q = p * mesh.scale() as f64;
    let mut cells = [[0i64; 2]; 4];
    let mut n = 0;
    for c in [
        [p.x.floor(), p.y.floor()],
        [p.x.ceil() - 1.0, p.y.floor()],
        [p.x.floor(), p.y.ceil() - 1.0],
        [p.x.ceil() - 1.0, p.y.ceil() - 1.0],
    ] {
        let c = [c[0] as i64, c[1] as i64];
        if mesh.grid().contains_xy(c[0], c[1]) && !cells[..n].contains(&c) {
            cells[n] = c;
            n += 1;
        }
    }
    mesh.polygons_at(q, &cells[..n], out);
}

/// Whether `p` (in cells) lies on the mesh.
fn on_mesh(mesh: &NavMesh, p: DVec2, found: &mut Vec<u32>) -> bool {
    found.clear();
    polygons_at(mesh, p, found);
    !found.is_empty()
}

/// How many polygons [`in_sight`] walks through before it leaves the
/// answer to the search.
const SIGHT_STEPS: usize = 64;

/// Whether the segment `a b` (in cells, both on the mesh) runs inside the
/// mesh: walks from `a`'s polygon through the edges the segment leaves by,
/// with exact orientation tests. A segment through a vertex, or longer than
/// [`SIGHT_STEPS`] polygons, gives `false`, and the search decides.
fn in_sight(mesh: &NavMesh, a: DVec2, b: DVec2, found: &mut Vec<u32>) -> bool {
    if !on_mesh(mesh, a, found) {
        return false;
    }
    let scale = mesh.scale() as f64;
    walk_segment(mesh, found[0], a * scale, b * scale, SIGHT_STEPS)
}

/// Whether segment `s t` (mesh coordinates, `s` in polygon `id`) runs
/// inside the mesh: walks from polygon `id` through the edges the segment
/// leaves by, with exact orientation tests, for at most `steps` polygons.
/// A segment through a vertex, or one that needs more polygons, gives
/// `false`.
pub(crate) fn walk_segment(mesh: &NavMesh, mut id: u32, s: DVec2, t: DVec2, steps: usize) -> bool {
    for _ in 0..steps {
        let poly = mesh.polygon(id);
        if poly.contains(t) {
            return true;
        }
        let n = poly.len();
        let exit = (0..n).find(|&k| {
            let (u, v) = (poly.at(k), poly.at((k + 1) % n));
            orient_sign(u, v, t) == Ordering::Less && {
                let (su, sv) = (orient_sign(s, t, u), orient_sign(s, t, v));
                su != Ordering::Equal && sv != Ordering::Equal && su != sv
            }
        });
        let Some(k) = exit else {
            return false;
        };
        let next = poly.slots[k].neigh;
        if next >= crate::mesh::PORTAL {
            return false;
        }
        id = next;
    }
    false
}

/// Visits the polygons connected to those holding `from`, calling `visit`
/// on each until it returns `true`; returns whether one did.
fn walk(
    mesh: &NavMesh,
    from: DVec2,
    marks: &mut PolygonMarks,
    mut visit: impl FnMut(u32) -> bool,
) -> bool {
    marks.reset();
    let mut first = Vec::new();
    polygons_at(mesh, from, &mut first);
    for id in first {
        if marks.mark(id) {
            marks.queue.push(id);
        }
    }
    while let Some(id) = marks.queue.pop() {
        if visit(id) {
            return true;
        }
        for slot in mesh.polygon(id).slots {
            if slot.neigh < crate::mesh::PORTAL && marks.mark(slot.neigh) {
                marks.queue.push(slot.neigh);
            }
        }
    }
    false
}

/// The point closest to `goal` on the polygons connected to `from`'s.
fn closest_reachable(mesh: &NavMesh, from: DVec2, goal: DVec2, marks: &mut PolygonMarks) -> DVec2 {
    let mut best = (from.distance_squared(goal), from);
    walk(mesh, from, marks, |id| {
        if let Some(q) = closest_in(mesh, id, goal)
            && q.distance_squared(goal) < best.0
        {
            best = (q.distance_squared(goal), q);
        }
        false
    });
    best.1
}

/// The point of polygon `id` closest to `p` (in cells), checked to lie in
/// it (`None` if rounding puts every candidate outside).
fn closest_in(mesh: &NavMesh, id: u32, p: DVec2) -> Option<DVec2> {
    let scale = mesh.scale() as f64;
    let poly = mesh.polygon(id);
    let q = p * scale;
    if poly.contains(q) {
        return Some(p);
    }
    let n = poly.len();
    let mut best = (f64::INFINITY, DVec2::ZERO);
    for k in 0..n {
        let (a, b) = (poly.at(k), poly.at((k + 1) % n));
        let e = b - a;
        let t = ((q - a).dot(e) / e.length_squared()).clamp(0.0, 1.0);
        let x = if t.is_finite() { a + e * t } else { a };
        let d = x.distance_squared(q);
        if d < best.0 {
            best = (d, x);
        }
    }
    // Rounding may leave the foot a hair outside: nudge it towards the
    // polygon's centroid until it is in.
    let centroid = (0..n).map(|k| poly.at(k)).sum::<DVec2>() / n as f64;
    let mut nudge = 1e-9;
    while nudge < 1.0 {
        let x = best.1 + (centroid - best.1) * nudge;
        let cell = x / scale;
        if poly.contains(cell * scale) {
            return Some(cell);
        }
        nudge *= 16.0;
    }
    None
}

/// Where a path from `p` starts on the mesh: `p` itself when it lies on the
/// mesh; else the mesh's nearest point within `within` cells that `p` sees
/// on the grid (walking there in a straight line), or, for a `p` inside an
/// obstacle or off the grid, the nearest point at all (as a point agent in a
/// wall walks straight out).
fn nearest_on_mesh(mesh: &NavMesh, p: DVec2, within: f64, found: &mut Vec<u32>) -> Option<DVec2> {
    if on_mesh(mesh, p, found) {
        return Some(p);
    }
    let mut best: Option<(f64, DVec2)> = None;
    let grid = mesh.grid();
    let sight = grid.is_point_traversable(p);
    // From free space, the walk comes no closer to a wall than the radius,
    // or than `p` is already (as on eroded grids).
    let keep = if sight {
        wall_distance(grid, p, mesh.radius().ceil() as u32).min(mesh.radius())
    } else {
        0.0
    };
    let mut radius = 1.0_f64;
    loop {
        let r = radius.min(within);
        let (x0, x1) = ((p.x - r).floor() as i64, (p.x + r).floor() as i64);
        let (y0, y1) = ((p.y - r).floor() as i64, (p.y + r).floor() as i64);
        let mut ids = Vec::new();
        for y in y0.max(0)..=y1.min(i64::from(grid.height()) - 1) {
            for x in x0.max(0)..=x1.min(i64::from(grid.width()) - 1) {
                mesh.polygons_meeting_cell(x, y, &mut ids);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            if id == NONE {
                continue;
            }
            if let Some(q) = closest_in(mesh, id, p) {
                let d = q.distance(p);
                if d <= within
                    && best.is_none_or(|(bd, _)| d < bd)
                    && (!sight || (line_of_sight(grid, p, q) && keeps_distance(grid, p, q, keep)))
                {
                    best = Some((d, q));
                }
            }
        }
        // Cells within `r` hold every point closer than `r`.
        if best.is_some_and(|(d, _)| d <= r) || r >= within {
            return best.map(|(_, q)| q);
        }
        radius *= 2.0;
    }
}
