//! Point location in a [`NavMesh`]: the polygons that hold a point (found
//! through the blocks of cells each chunk lists its polygons by), whether a
//! segment runs inside the mesh, the polygons connected to a point's, and
//! the mesh's nearest point to one off it.

use core::cmp::Ordering;

use bevy_math::DVec2;

use super::{BLOCK, LOCAL_BITS, NONE, NavMesh, PORTAL};
use crate::clearance::{keeps_distance, wall_distance};
use crate::geom::{closest_on_segment, orient_sign};
use crate::los::line_of_sight;

impl NavMesh {
    /// The chunk of cell `(x, y)` (a cell of the grid) and its point
    /// location block in that chunk.
    fn block_of(&self, x: i64, y: i64) -> (u32, usize) {
        let s = i64::from(self.chunk);
        let c = ((y / s) as u32) * self.chunks_x + (x / s) as u32;
        let rect = self.chunks[c as usize].rect;
        let bw = (rect.x1 - rect.x0 + BLOCK - 1) / BLOCK;
        (
            c,
            ((y - rect.y0) / BLOCK * bw + (x - rect.x0) / BLOCK) as usize,
        )
    }

    /// The polygons whose bounding box meets block `b` of chunk `c`.
    fn block_polygons(&self, c: u32, b: usize) -> impl Iterator<Item = u32> + '_ {
        let chunk = &self.chunks[c as usize];
        // (A chunk not built yet, of a mesh built on demand: none.)
        let range = if chunk.base == super::UNBUILT {
            0..0
        } else {
            chunk.block_start[b] as usize..chunk.block_start[b + 1] as usize
        };
        let base = chunk.base;
        chunk.block_polys[range]
            .iter()
            .map(move |&local| (base << LOCAL_BITS) | u32::from(local))
    }

    /// Pushes onto `out` the polygons whose bounding box meets the point
    /// location block of cell `(x, y)` (a cell of the grid).
    pub(crate) fn polygons_meeting_cell(&self, x: i64, y: i64, out: &mut Vec<u32>) {
        let (c, b) = self.block_of(x, y);
        out.extend(self.block_polygons(c, b));
    }

    /// Pushes onto `out` every polygon whose closed area contains `p`,
    /// looking at the polygons of `cells`' chunks that may meet them (grid
    /// cells whose closed squares hold `p`).
    pub(crate) fn polygons_at(&self, p: DVec2, cells: &[[i64; 2]], out: &mut Vec<u32>) {
        let mut seen: [(u32, usize); 4] = [(u32::MAX, 0); 4];
        for (k, cell) in cells.iter().enumerate() {
            let (c, b) = self.block_of(cell[0], cell[1]);
            // Cells around a point often share a block: scan each once.
            if seen.contains(&(c, b)) {
                continue;
            }
            if let Some(slot) = seen.get_mut(k) {
                *slot = (c, b);
            }
            for id in self.block_polygons(c, b) {
                if !out.contains(&id) && self.polygon(id).contains(p) {
                    out.push(id);
                }
            }
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
    pub(crate) found: Vec<u32>,
    /// The edges into chunks not built yet (polygon, edge) the last walk
    /// met, on a mesh built on demand.
    pub(crate) portals: Vec<(u32, usize)>,
}

impl PolygonMarks {
    fn reset(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamps.clear();
            self.stamp = 1;
        }
        self.queue.clear();
        self.portals.clear();
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
pub(crate) fn on_mesh(mesh: &NavMesh, p: DVec2, found: &mut Vec<u32>) -> bool {
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
pub(crate) fn in_sight(mesh: &NavMesh, a: DVec2, b: DVec2, found: &mut Vec<u32>) -> bool {
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
        if next >= PORTAL {
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
        for (k, slot) in mesh.polygon(id).slots.iter().enumerate() {
            if slot.neigh < PORTAL && marks.mark(slot.neigh) {
                marks.queue.push(slot.neigh);
            } else if slot.neigh == PORTAL {
                marks.portals.push((id, k));
            }
        }
    }
    false
}

/// The point closest to `goal` on the polygons connected to `from`'s (of
/// points as close, the one with the smaller `y`, then `x`).
pub(crate) fn closest_reachable(
    mesh: &NavMesh,
    from: DVec2,
    goal: DVec2,
    marks: &mut PolygonMarks,
) -> DVec2 {
    let mut best = (from.distance_squared(goal), from);
    walk(mesh, from, marks, |id| {
        if let Some(q) = closest_in(mesh, id, goal)
            && closer(q.distance_squared(goal), q, best)
        {
            best = (q.distance_squared(goal), q);
        }
        false
    });
    best.1
}

/// Whether `q`, at squared distance `d2` from a goal, comes before `best`
/// (a squared distance and its point) as the point closest to it: the
/// nearer, and of two as near, the one with the smaller `y`, then `x` (so
/// that ties go the same way whichever polygons are looked at first).
fn closer(d2: f64, q: DVec2, best: (f64, DVec2)) -> bool {
    (d2, q.y, q.x) < (best.0, best.1.y, best.1.x)
}

/// The polygons whose point-location blocks meet the cells within `r`
/// (on either axis) of `p` (in cells), each once, in id order: every
/// polygon with a point within `r` of `p`.
fn polygons_near(mesh: &NavMesh, p: DVec2, r: f64) -> Vec<u32> {
    let grid = mesh.grid();
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
    ids
}

/// The mesh's point closest to `p` (in cells; of points as close, the one
/// with the smaller `y`, then `x`) and its distance, if one lies within `r`
/// cells (on a mesh built on demand, its chunks within `r`
/// cells of `p` built: then no point elsewhere is closer).
pub(crate) fn closest_within(mesh: &NavMesh, p: DVec2, r: f64) -> Option<(f64, DVec2)> {
    let mut best: Option<(f64, DVec2)> = None;
    for id in polygons_near(mesh, p, r) {
        if let Some(q) = closest_in(mesh, id, p) {
            let d2 = q.distance_squared(p);
            if d2.sqrt() <= r && best.is_none_or(|b| closer(d2, q, b)) {
                best = Some((d2, q));
            }
        }
    }
    best.map(|(d2, q)| (d2.sqrt(), q))
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
        let x = closest_on_segment(q, a, b);
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
pub(crate) fn nearest_on_mesh(
    mesh: &NavMesh,
    p: DVec2,
    within: f64,
    found: &mut Vec<u32>,
) -> Option<DVec2> {
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
        for id in polygons_near(mesh, p, r) {
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
