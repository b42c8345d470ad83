//! One chunk of a mesh for agents of a radius: the grid's obstacles grown by a polygon around the agent's disc, cut exactly on an integer lattice.
//!
//! # The grown obstacles
//!
//! An agent of radius `r` may stand where its disc meets no blocked cell
//! and stays on the grid. The mesh approximates that set from inside: the
//! obstacles (blocked cells, and the grid's outside) are grown by a convex
//! polygon `P` that contains the disc, and the mesh covers what is left.
//! `P` is the intersection of half-planes `n · u <= h(n)`, one per outward
//! normal `n`, with `h(n) >= r |n|`: its edges touch the disc (or lie just
//! outside it), so every point of the mesh is at least `r` from every
//! obstacle, and a point farther than `r + δ` is in it, where `δ` is how
//! far `P`'s corners stick out ([`Disc::tolerance`]). The normals are
//! those of a square (`(±1, 0)`, `(0, ±1)`), an octagon (and `(±1, ±1)`) or
//! a 16-gon (and `(±2, ±1)`, `(±1, ±2)`): the first whose `δ` is at most
//! 0.09 cell (a square for `r` up to 0.21, an octagon up to 1.09, the
//! 16-gon beyond, whose `δ` is about `0.0275 r`: 1/8 cell at `r` = 4.5).
//! Fewer corners leave a path fewer places to turn. Straight walls are
//! offset by exactly `h((1, 0))`, within 1/1024 cell of `r`.
//!
//! # Exact arithmetic
//!
//! Mesh vertices are integers in units of `1 / SCALE` cells, with
//! `SCALE = 60 * 1024`. Every `h(n)` is rounded up to a multiple of 60
//! units, so every line bounding a grown cell is `n · p = c` with `c` a
//! multiple of 60. Any two of the normals have a cross product of 0 to 5
//! in size, which divides 60 when it is not 0: any two such lines that are
//! not parallel, and the chunk's borders, meet at an integer point. So the union of the grown cells is cut
//! exactly: where two boundary lines cross, the crossing is a lattice
//! point, and no vertex is ever rounded.
//!
//! # A chunk
//!
//! 1. The boundary pieces near the chunk: each maximal run of cell edges
//!    between a free and a blocked cell, offset by `h` towards the free
//!    side, and, at each convex corner of the obstacles (a grid vertex with
//!    exactly one blocked cell around it), the chain of `P`'s edges around
//!    it.
//! 2. The pieces are cut where they cross each other or the chunk's
//!    borders; a piece whose midpoint lies strictly inside a grown cell is
//!    inside the obstacles and dropped. What is left is the boundary of the
//!    grown obstacles.
//! 3. A constrained Delaunay triangulation of those pieces and the chunk's
//!    border; triangles whose centroid is strictly inside a grown cell are
//!    dropped, the rest merged into convex polygons as for point agents.
//!
//! A path may turn at a vertex where exactly two boundary pieces meet at a
//! corner of the obstacles that points into the free space (a corner of
//! `P` around a convex corner of a wall).

use std::sync::Arc;

use crate::clearance::{ClearanceError, MAX_RADIUS};
use crate::fast_hash::FastMap;

use super::blocked::BlockedBits;
use super::build::{Built, ChunkRect, Side, polygons_of};
use crate::grid::Grid;

/// Lattice units per cell.
pub(crate) const SCALE: i64 = 60 * 1024;

/// Every normal `P`'s edges may have, counterclockwise from `+x` (a
/// [`Disc`] takes every one, every second or every fourth).
const NORMALS: [[i64; 2]; 16] = [
    [1, 0],
    [2, 1],
    [1, 1],
    [1, 2],
    [0, 1],
    [-1, 2],
    [-1, 1],
    [-2, 1],
    [-1, 0],
    [-2, -1],
    [-1, -1],
    [-1, -2],
    [0, -1],
    [1, -2],
    [1, -1],
    [2, -1],
];

/// The smallest radius a [`Disc`] is built for, in cells: below it, `P`'s
/// rounded edges would not all touch it.
pub(crate) const MIN_RADIUS: f64 = 1.0 / 64.0;

/// The largest tolerance [`Disc::new`] accepts before taking a polygon
/// with more edges, in cells.
const TOLERANCE: f64 = 0.09;

/// The polygon `P` that agents of one radius grow the obstacles by (see
/// the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Disc {
    /// The radius asked for, in cells.
    radius: f64,
    /// The normals of its edges, counterclockwise from `+x`: 4, 8 or 16 of
    /// [`NORMALS`], the same number in each quadrant.
    normals: Vec<[i64; 2]>,
    /// `h(n)` per normal, in lattice units.
    h: Vec<i64>,
    /// `P`'s corner between edge `k` and edge `k + 1`, in lattice units.
    corners: Vec<[i64; 2]>,
    /// How many cells from a blocked cell its grown polygon reaches.
    reach: i64,
}

/// `h(n)` for radius `r` (cells): `60 * ceil(r |n| 1024)` lattice units, a
/// hair over, so that rounding never brings an edge inside the disc.
fn h(r: f64, n: [i64; 2]) -> i64 {
    let length = ((n[0] * n[0] + n[1] * n[1]) as f64).sqrt();
    let units = (r * length * 1024.0 * (1.0 + 1e-12)).ceil() as i64;
    60 * units.max(1)
}

/// The corner of the edges of normals `a` and `b` (consecutive) at `ha` and
/// `hb`, in lattice units.
fn corner(a: [i64; 2], b: [i64; 2], ha: i64, hb: i64) -> [i64; 2] {
    // Consecutive normals have a cross product of 1: the corner is a
    // lattice point.
    let det = a[0] * b[1] - a[1] * b[0];
    debug_assert_eq!(det, 1);
    [(ha * b[1] - hb * a[1]) / det, (a[0] * hb - b[0] * ha) / det]
}

impl Disc {
    /// The disc of a valid `radius` (`None` for 0, a point agent's), or
    /// why the radius is refused: negative or not finite, or above
    /// [`MAX_RADIUS`].
    pub(super) fn checked(radius: f64) -> Result<Option<Arc<Disc>>, ClearanceError> {
        if !radius.is_finite() || radius < 0.0 {
            return Err(ClearanceError::BadRadius(radius));
        }
        if radius > MAX_RADIUS {
            return Err(ClearanceError::TooLarge(radius));
        }
        Ok((radius > 0.0).then(|| Arc::new(Disc::new(radius))))
    }

    /// The polygon for agents of radius `radius` cells (at least
    /// [`MIN_RADIUS`]; the caller checks it is finite and at most
    /// [`crate::clearance::MAX_RADIUS`]).
    ///
    /// The polygon is a square, an octagon or the 16-gon, the first whose
    /// corners stay within [`TOLERANCE`] of the disc (the 16-gon beyond):
    /// fewer corners, fewer places for a path to turn.
    pub(crate) fn new(radius: f64) -> Disc {
        Disc::with_normals(radius, Disc::step_for(radius))
    }

    /// [`Disc::tolerance`] of [`Disc::new`]'s polygon for `radius`, computed
    /// without building it. Callers ask for a few radii over and over (an
    /// edit's reach per agent): the last answer is kept, per thread.
    pub(crate) fn tolerance_of(radius: f64) -> f64 {
        std::thread_local! {
            static LAST: core::cell::Cell<(u64, f64)> =
                const { core::cell::Cell::new((u64::MAX, 0.0)) };
        }
        let key = radius.to_bits();
        LAST.with(|last| match last.get() {
            (k, tolerance) if k == key => tolerance,
            _ => {
                let tolerance = Disc::far(radius, Disc::step_for(radius)) - radius;
                last.set((key, tolerance));
                tolerance
            }
        })
    }

    /// Every how many of [`NORMALS`] `radius`'s polygon takes: the first
    /// of 4, 2, 1 whose corners stay within [`TOLERANCE`] of the disc.
    fn step_for(radius: f64) -> usize {
        [4, 2]
            .into_iter()
            .find(|&step| Disc::far(radius, step) - radius <= TOLERANCE)
            .unwrap_or(1)
    }

    /// How far (cells) the farthest corner of the polygon with every
    /// `step`-th of [`NORMALS`] lies from the centre.
    fn far(radius: f64, step: usize) -> f64 {
        let r = radius.max(MIN_RADIUS);
        let m = NORMALS.len() / step;
        (0..m)
            .map(|k| {
                let (a, b) = (NORMALS[k * step], NORMALS[(k + 1) % m * step]);
                let c = corner(a, b, h(r, a), h(r, b));
                length(c)
            })
            .fold(0.0, f64::max)
            / SCALE as f64
    }

    /// The polygon with every `step`-th of [`NORMALS`].
    fn with_normals(radius: f64, step: usize) -> Disc {
        let r = radius.max(MIN_RADIUS);
        let normals: Vec<[i64; 2]> = NORMALS.iter().copied().step_by(step).collect();
        let m = normals.len();
        let h: Vec<i64> = normals.iter().map(|&n| h(r, n)).collect();
        let corners: Vec<[i64; 2]> = (0..m)
            .map(|k| corner(normals[k], normals[(k + 1) % m], h[k], h[(k + 1) % m]))
            .collect();
        let far = corners
            .iter()
            .map(|c| c[0].abs().max(c[1].abs()))
            .max()
            .unwrap_or(0);
        Disc {
            radius,
            normals,
            h,
            corners,
            reach: far.div_euclid(SCALE) + 1,
        }
    }

    /// The radius asked for, in cells.
    pub(crate) fn radius(&self) -> f64 {
        self.radius
    }

    /// How far beyond the radius `P` reaches at most, in cells: the mesh
    /// holds every point at least `radius + tolerance` from the obstacles.
    pub(crate) fn tolerance(&self) -> f64 {
        let far = self.corners.iter().map(|&c| length(c)).fold(0.0, f64::max);
        far / SCALE as f64 - self.radius
    }

    /// How many cells beyond a blocked cell its grown polygon reaches: an
    /// edit changes the mesh at most this many cells from the edited cells.
    pub(crate) fn reach(&self) -> i64 {
        self.reach
    }

    /// Whether `p` (in lattice units, times `k`) lies strictly inside the
    /// grown obstacles, looking at `blocked(x, y)` around it.
    fn strictly_inside(&self, p: [i64; 2], k: i64, blocked: &impl Fn(i64, i64) -> bool) -> bool {
        let unit = SCALE * k;
        // `P` reaches `h[0]` along each axis: only the cells whose nearest
        // point is closer than that along both axes can hold `p`.
        let extent = self.h[0] * k;
        let lo = |v: i64| (v - extent).div_euclid(unit);
        let hi = |v: i64| (v + extent - 1).div_euclid(unit);
        let quarter = self.normals.len() / 4 + 1;
        for y in lo(p[1])..=hi(p[1]) {
            for x in lo(p[0])..=hi(p[0]) {
                if !blocked(x, y) {
                    continue;
                }
                // The offset from the cell's nearest point; `P` is symmetric
                // about both axes, so its size along each axis is what counts.
                let dx = (x * unit - p[0]).max(p[0] - (x + 1) * unit).max(0);
                let dy = (y * unit - p[1]).max(p[1] - (y + 1) * unit).max(0);
                if self.normals[..quarter]
                    .iter()
                    .zip(&self.h[..quarter])
                    .all(|(n, h)| n[0] * dx + n[1] * dy < h * k)
                {
                    return true;
                }
            }
        }
        false
    }
}

/// A straight piece of the grown obstacles' boundary: the obstacles lie on
/// the side where `normal · p < c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    a: [i64; 2],
    b: [i64; 2],
    /// The outward normal, one of [`NORMALS`].
    normal: [i64; 2],
}

impl Piece {
    fn c(&self) -> i64 {
        dot(self.normal, self.a)
    }
}

#[inline]
fn dot(a: [i64; 2], b: [i64; 2]) -> i64 {
    a[0] * b[0] + a[1] * b[1]
}

#[inline]
fn cross(a: [i64; 2], b: [i64; 2]) -> i64 {
    a[0] * b[1] - a[1] * b[0]
}

#[inline]
fn sub(a: [i64; 2], b: [i64; 2]) -> [i64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

/// Whether `p`, on the line of segment `a b`, lies on the closed segment.
#[inline]
fn within(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> bool {
    p[0] >= a[0].min(b[0])
        && p[0] <= a[0].max(b[0])
        && p[1] >= a[1].min(b[1])
        && p[1] <= a[1].max(b[1])
}

/// The boundary pieces of the grown obstacles that may reach the cells
/// `area` (the chunk grown by the disc's reach), uncut. `cells` holds the
/// cells of `area` and one more around it.
fn raw_pieces(disc: &Disc, area: ChunkRect, cells: &BlockedBits) -> Vec<Piece> {
    let s = SCALE;
    let mut pieces = Vec::new();
    // Runs of cell edges: horizontal lines y = j between rows j - 1 and j,
    // then vertical lines x = i between columns i - 1 and i, offset by `h`
    // towards the free side.
    let offset = |line: i64, sign: i64| line * s + sign * disc.h[0];
    cells.horizontal_runs((area.x0, area.x1), (area.y0, area.y1), |y, a, b, sign| {
        let at = offset(y, sign);
        pieces.push(Piece {
            a: [a * s, at],
            b: [b * s, at],
            normal: [0, sign],
        });
    });
    cells.vertical_runs((area.x0, area.x1), (area.y0, area.y1), |x, a, b, sign| {
        let at = offset(x, sign);
        pieces.push(Piece {
            a: [at, a * s],
            b: [at, b * s],
            normal: [sign, 0],
        });
    });
    // Convex corners: P's edges around them, from the one along the first
    // axis to the one along the second. The free quadrant faces away from
    // the blocked cell: its normals are `q m / 4 ..= (q + 1) m / 4`.
    let m = disc.normals.len();
    cells.convex_corners((area.x0, area.x1), (area.y0, area.y1), |x, y, q| {
        let (first, last) = (q * m / 4, (q + 1) * m / 4);
        let v = [x * s, y * s];
        let axis = |k: usize| {
            let n = disc.normals[k % m];
            [v[0] + n[0] * disc.h[k % m], v[1] + n[1] * disc.h[k % m]]
        };
        let mut from = axis(first);
        for k in first..last {
            let c = disc.corners[k % m];
            let to = [v[0] + c[0], v[1] + c[1]];
            pieces.push(Piece {
                a: from,
                b: to,
                normal: disc.normals[k % m],
            });
            from = to;
        }
        pieces.push(Piece {
            a: from,
            b: axis(last),
            normal: disc.normals[last % m],
        });
    });
    pieces.retain(|p| p.a != p.b);
    pieces
}

/// Cuts `pieces` wherever they cross or touch each other or one of the
/// `cuts` lines (`normal · p = c`); returns the pieces cut.
fn cut(pieces: &[Piece], cuts: &[([i64; 2], i64)], bin: i64) -> Vec<Piece> {
    // Pieces by bins of `bin` lattice units, by bounding box.
    let lo = |p: &Piece| [p.a[0].min(p.b[0]), p.a[1].min(p.b[1])];
    let hi = |p: &Piece| [p.a[0].max(p.b[0]), p.a[1].max(p.b[1])];
    let (mut min, mut max) = ([i64::MAX; 2], [i64::MIN; 2]);
    for p in pieces {
        let (l, h) = (lo(p), hi(p));
        for k in 0..2 {
            min[k] = min[k].min(l[k]);
            max[k] = max[k].max(h[k]);
        }
    }
    // Every piece's ends and the points where it is cut, as (piece, place
    // along it, point).
    let mut marks: Vec<(u32, i64, [i64; 2])> = Vec::with_capacity(pieces.len() * 3);
    let mark = |marks: &mut Vec<(u32, i64, [i64; 2])>, i: u32, x: [i64; 2]| {
        let p = &pieces[i as usize];
        marks.push((i, dot(sub(x, p.a), sub(p.b, p.a)), x));
    };
    for (i, p) in pieces.iter().enumerate() {
        mark(&mut marks, i as u32, p.a);
        mark(&mut marks, i as u32, p.b);
    }
    if !pieces.is_empty() {
        let bw = ((max[0] - min[0]) / bin + 1) as usize;
        let bh = ((max[1] - min[1]) / bin + 1) as usize;
        // The bins' pieces, bin after bin: `of[first[b]..first[b + 1]]`.
        let bins_of = |p: &Piece| {
            let (l, h) = (lo(p), hi(p));
            let (bx, by) = ((l[0] - min[0]) / bin, (l[1] - min[1]) / bin);
            let (ex, ey) = ((h[0] - min[0]) / bin, (h[1] - min[1]) / bin);
            (by..=ey).flat_map(move |y| (bx..=ex).map(move |x| y as usize * bw + x as usize))
        };
        let mut first = vec![0u32; bw * bh + 1];
        for p in pieces {
            for b in bins_of(p) {
                first[b + 1] += 1;
            }
        }
        for b in 0..bw * bh {
            first[b + 1] += first[b];
        }
        let mut fill = first.clone();
        let mut of = vec![0u32; first[bw * bh] as usize];
        for (i, p) in pieces.iter().enumerate() {
            for b in bins_of(p) {
                of[fill[b] as usize] = i as u32;
                fill[b] += 1;
            }
        }
        for b in 0..bw * bh {
            let list = &of[first[b] as usize..first[b + 1] as usize];
            for (x, &i) in list.iter().enumerate() {
                for &j in &list[x + 1..] {
                    let (p, q) = (pieces[i as usize], pieces[j as usize]);
                    // Two pieces whose boxes meet share the bin of the
                    // boxes' common part's low corner: tested there only.
                    let (lp, lq, hp, hq) = (lo(&p), lo(&q), hi(&p), hi(&q));
                    let corner = [lp[0].max(lq[0]), lp[1].max(lq[1])];
                    if corner[0] > hp[0].min(hq[0])
                        || corner[1] > hp[1].min(hq[1])
                        || ((corner[1] - min[1]) / bin) as usize * bw
                            + ((corner[0] - min[0]) / bin) as usize
                            != b
                    {
                        continue;
                    }
                    if let Some(m) = meet(p, q) {
                        for point in m.into_iter().flatten() {
                            mark(&mut marks, i, point);
                            mark(&mut marks, j, point);
                        }
                    }
                }
            }
        }
    }
    for (i, p) in pieces.iter().enumerate() {
        for &(n, c) in cuts {
            let (pn, pc) = (p.normal, p.c());
            let det = cross(pn, n);
            if det == 0 {
                continue;
            }
            let x = [(pc * n[1] - c * pn[1]) / det, (pn[0] * c - n[0] * pc) / det];
            if within(p.a, p.b, x) {
                mark(&mut marks, i as u32, x);
            }
        }
    }
    // Each piece's marks in order along it (a place is one point): the
    // pieces between them.
    marks.sort_unstable();
    marks.dedup();
    let mut out = Vec::with_capacity(pieces.len() * 2);
    for w in marks.windows(2) {
        if w[0].0 == w[1].0 {
            out.push(Piece {
                a: w[0].2,
                b: w[1].2,
                normal: pieces[w[0].0 as usize].normal,
            });
        }
    }
    out
}

/// Where pieces `p` and `q` cross or touch: up to two points (the ends of
/// their overlap when they lie on one line).
fn meet(p: Piece, q: Piece) -> Option<[Option<[i64; 2]>; 2]> {
    let (pn, qn) = (p.normal, q.normal);
    let det = cross(pn, qn);
    if det == 0 {
        // Parallel: on one line iff q's ends are on p's line.
        if dot(pn, q.a) != p.c() {
            return None;
        }
        let inside = |x: [i64; 2]| within(p.a, p.b, x) && within(q.a, q.b, x);
        let mut out = [None, None];
        let mut k = 0;
        for x in [p.a, p.b, q.a, q.b] {
            if inside(x) && k < 2 && out[..k].iter().all(|o| *o != Some(x)) {
                out[k] = Some(x);
                k += 1;
            }
        }
        return (k > 0).then_some(out);
    }
    let (pc, qc) = (p.c(), q.c());
    let num = [pc * qn[1] - qc * pn[1], pn[0] * qc - qn[0] * pc];
    debug_assert!(
        num[0] % det == 0 && num[1] % det == 0,
        "lines meet on the lattice"
    );
    let x = [num[0] / det, num[1] / det];
    (within(p.a, p.b, x) && within(q.a, q.b, x)).then_some([Some(x), None])
}

/// Builds the polygons of chunk `rect` of `grid` for agents of `disc`
/// (vertices in lattice units, see the [module docs](self)).
pub(crate) fn build_chunk(grid: &Grid, rect: ChunkRect, disc: &Disc) -> Built {
    let s = SCALE;
    let reach = disc.reach + 1;
    let area = ChunkRect {
        x0: rect.x0 - reach,
        y0: rect.y0 - reach,
        x1: rect.x1 + reach,
        y1: rect.y1 + reach,
    };
    // The cells of the area (and one more around it) as a bitmap.
    let (ax0, ay0) = (area.x0 - 1 - disc.reach, area.y0 - 1 - disc.reach);
    let aw = area.x1 - area.x0 + 2 * (disc.reach + 1) + 1;
    let ah = area.y1 - area.y0 + 2 * (disc.reach + 1) + 1;
    let cells = BlockedBits::new(grid, ax0, ay0, aw, ah);
    let blocked = |x: i64, y: i64| {
        if cells.holds(x, y) {
            cells.blocked(x, y)
        } else {
            !grid.is_free_xy(x, y)
        }
    };
    let raw = raw_pieces(disc, area, &cells);
    let borders = [
        ([1, 0], rect.x0 * s),
        ([1, 0], rect.x1 * s),
        ([0, 1], rect.y0 * s),
        ([0, 1], rect.y1 * s),
    ];
    let pieces = cut(&raw, &borders, 2 * s);
    // The boundary: pieces not strictly inside the grown obstacles, near
    // the chunk (a cell around it, to settle turns on its border).
    let near = |p: [i64; 2], k: i64| {
        p[0] >= (rect.x0 - 1) * s * k
            && p[0] <= (rect.x1 + 1) * s * k
            && p[1] >= (rect.y0 - 1) * s * k
            && p[1] <= (rect.y1 + 1) * s * k
    };
    let mut boundary: Vec<Piece> = pieces
        .into_iter()
        .filter(|p| {
            let m = [p.a[0] + p.b[0], p.a[1] + p.b[1]];
            (near(p.a, 1) || near(p.b, 1) || near(m, 2)) && !disc.strictly_inside(m, 2, &blocked)
        })
        .collect();
    // (Pieces on one line from two sources, cut at the same points, come
    // out twice.)
    boundary.sort_unstable_by_key(|p| {
        let (a, b) = if p.a <= p.b { (p.a, p.b) } else { (p.b, p.a) };
        (a, b, p.normal)
    });
    boundary.dedup_by(|p, q| {
        let key = |p: &Piece| if p.a <= p.b { (p.a, p.b) } else { (p.b, p.a) };
        key(p) == key(q)
    });

    // Turns: vertices where exactly two pieces meet at a corner pointing
    // into the free space.
    let mut incident: FastMap<[i64; 2], (u8, [i64; 2], [i64; 2])> = FastMap::default();
    for p in &boundary {
        for (v, other) in [(p.a, p.b), (p.b, p.a)] {
            let e = incident.entry(v).or_insert((0, other, p.normal));
            if e.0 == 1 {
                let (a, na) = (e.1, e.2);
                let turn = dot(p.normal, sub(a, v)) < 0 && dot(na, sub(other, v)) < 0;
                *e = (if turn { 2 } else { 3 }, a, e.2);
            } else if e.0 >= 2 {
                e.0 = 3;
            } else {
                e.0 = 1;
            }
        }
    }
    let turn = |v: [i64; 2]| incident.get(&v).is_some_and(|e| e.0 == 2);

    // The triangulation's input: the pieces inside the chunk and its border,
    // cut at every vertex on it.
    let inside = |p: [i64; 2]| {
        p[0] >= rect.x0 * s && p[0] <= rect.x1 * s && p[1] >= rect.y0 * s && p[1] <= rect.y1 * s
    };
    let mut index: FastMap<[i64; 2], usize> = FastMap::default();
    let mut points: Vec<[i64; 2]> = Vec::new();
    let mut vertex = |p: [i64; 2], points: &mut Vec<[i64; 2]>| -> usize {
        *index.entry(p).or_insert_with(|| {
            points.push(p);
            points.len() - 1
        })
    };
    let mut edges: Vec<[usize; 2]> = Vec::new();
    for p in &boundary {
        let m = [p.a[0] + p.b[0], p.a[1] + p.b[1]];
        if inside([m[0] / 2, m[1] / 2]) && inside(p.a) && inside(p.b) {
            let (a, b) = (vertex(p.a, &mut points), vertex(p.b, &mut points));
            edges.push([a, b]);
        }
    }
    let corners = [
        [rect.x0 * s, rect.y0 * s],
        [rect.x1 * s, rect.y0 * s],
        [rect.x1 * s, rect.y1 * s],
        [rect.x0 * s, rect.y1 * s],
    ];
    for c in corners {
        vertex(c, &mut points);
    }
    // The border is cut at every boundary vertex on it, from this side or
    // the other, so that the next chunk cuts it at the same points.
    let ends: Vec<[i64; 2]> = boundary
        .iter()
        .flat_map(|p| [p.a, p.b])
        .chain(corners)
        .collect();
    for k in 0..4 {
        let (a, b) = (corners[k], corners[(k + 1) % 4]);
        let mut on: Vec<[i64; 2]> = ends
            .iter()
            .copied()
            .filter(|&p| cross(sub(b, a), sub(p, a)) == 0 && within(a, b, p))
            .collect();
        on.sort_unstable();
        on.dedup();
        let d = sub(b, a);
        on.sort_unstable_by_key(|&p| dot(sub(p, a), d));
        for w in on.windows(2) {
            let (i, j) = (vertex(w[0], &mut points), vertex(w[1], &mut points));
            edges.push([i, j]);
        }
    }
    edges.sort_unstable_by_key(|e| (e[0].min(e[1]), e[0].max(e[1])));
    edges.dedup_by_key(|e| (e[0].min(e[1]), e[0].max(e[1])));

    let local: Vec<[i32; 2]> = points
        .iter()
        .map(|p| {
            [
                i32::try_from(p[0]).expect("grids of at most 2^15 cells fit the lattice"),
                i32::try_from(p[1]).expect("grids of at most 2^15 cells fit the lattice"),
            ]
        })
        .collect();
    // Triangles outside the grown obstacles (by their centroid, times 3).
    let keep = |p: [[i32; 2]; 3]| {
        let sum = |k: usize| i64::from(p[0][k]) + i64::from(p[1][k]) + i64::from(p[2][k]);
        !disc.strictly_inside([sum(0), sum(1)], 3, &blocked)
    };
    let turn = |v: [i32; 2]| turn([i64::from(v[0]), i64::from(v[1])]);
    // A border edge with a chunk beyond it: the next chunk's polygons meet
    // it there, or nothing does (settled when chunks are linked).
    let (gw, gh) = (i64::from(grid.width()), i64::from(grid.height()));
    let portal = |a: [i32; 2], b: [i32; 2]| {
        let (pa, pb) = (
            [i64::from(a[0]), i64::from(a[1])],
            [i64::from(b[0]), i64::from(b[1])],
        );
        let side = if pa[1] == pb[1] && pa[1] == rect.y0 * s && rect.y0 > 0 {
            (Side::North, a[0].min(b[0]))
        } else if pa[1] == pb[1] && pa[1] == rect.y1 * s && rect.y1 < gh {
            (Side::South, a[0].min(b[0]))
        } else if pa[0] == pb[0] && pa[0] == rect.x0 * s && rect.x0 > 0 {
            (Side::West, a[1].min(b[1]))
        } else if pa[0] == pb[0] && pa[0] == rect.x1 * s && rect.x1 < gw {
            (Side::East, a[1].min(b[1]))
        } else {
            return None;
        };
        Some(side)
    };
    polygons_of(&local, edges, keep, turn, portal)
}

/// The length of lattice vector `c`, the same to the bit on every platform:
/// the square sum is exact (the lattice coordinates are far below 2^26) and
/// a square root is correctly rounded, where `hypot` comes from the
/// platform's maths library.
fn length(c: [i64; 2]) -> f64 {
    let (x, y) = (c[0] as f64, c[1] as f64);
    (x * x + y * y).sqrt()
}

#[cfg(test)]
mod tests {
    use super::{Disc, MIN_RADIUS, SCALE, cross, sub};

    #[test]
    fn the_tolerance_computed_without_the_polygon_is_the_polygons() {
        let mut r = MIN_RADIUS;
        while r < 300.0 {
            assert_eq!(Disc::tolerance_of(r), Disc::new(r).tolerance(), "r = {r}");
            r = r * 1.07 + 1.0 / 64.0;
        }
    }

    #[test]
    fn every_edge_of_the_polygon_lies_outside_the_disc_and_its_corners_turn_left() {
        let mut r = MIN_RADIUS;
        while r < 300.0 {
            let disc = Disc::new(r);
            let m = disc.normals.len();
            assert!([4, 8, 16].contains(&m), "r = {r}: {m} normals");
            for k in 0..m {
                let n = disc.normals[k];
                // The edge's distance from the centre, in cells, against r.
                let length = ((n[0] * n[0] + n[1] * n[1]) as f64).sqrt();
                let distance = disc.h[k] as f64 / length / SCALE as f64;
                assert!(
                    distance >= r,
                    "r = {r}: edge {k} is {distance} from the centre"
                );
                assert!(
                    distance <= r + 1.0 / 1024.0 + 1e-9,
                    "r = {r}: edge {k} at {distance}"
                );
                // The corners go round counterclockwise, each on its two
                // edges: a convex polygon with every edge there.
                let (c, next) = (disc.corners[k], disc.corners[(k + 1) % m]);
                assert!(cross(c, next) > 0, "r = {r}: corners {k}, {}", k + 1);
                let prev = disc.corners[(k + m - 1) % m];
                let (a, b) = (sub(c, prev), sub(next, c));
                assert!(cross(a, b) > 0, "r = {r}: corner {k} does not turn left");
                let on = |corner: [i64; 2], edge: usize| {
                    let n = disc.normals[edge % m];
                    n[0] * corner[0] + n[1] * corner[1] == disc.h[edge % m]
                };
                assert!(
                    on(c, k) && on(c, k + 1),
                    "r = {r}: corner {k} is off its edges"
                );
            }
            r *= 1.07;
        }
    }
}
