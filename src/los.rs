//! Line of sight: the visibility rule of `SPEC.md`, written down once.
//!
//! Segment `a-b` is *visible* iff every point on it lies in (the closed square
//! of) a free cell and its relative interior does not pass through a double
//! corner. So a segment may run along the edge of a blocked cell or touch a
//! blocked cell's corner, but may not cross a blocked cell's interior, run
//! along an edge shared by two blocked cells (the map border included: the
//! outside is blocked), or squeeze between two diagonal blockers.
//!
//! The walk visits the cells the segment crosses one by one. Which side of the
//! next grid corner the segment passes is decided by an exact orientation
//! test: integer arithmetic for vertices and half-integer points (cell
//! centres), exact floating-point expansions for any other point. It never
//! allocates and never divides.

use core::cmp::Ordering;

use bevy_math::DVec2;

use crate::geom::{lattice_shift, orient_i64, orient_sign};
use crate::grid::{BitPlane, Grid};

/// Whether segment `a-b` is visible on `grid` (see the [module docs](self)).
///
/// Points outside `[0, width] x [0, height]` and non-finite points are never
/// visible. A zero-length segment is visible iff its point is traversable.
///
/// ```
/// use bevy_anyangle::{grid::Grid, los::line_of_sight};
/// use bevy_anyangle::prelude::DVec2;
///
/// let grid = Grid::from_ascii(
///     "..#
///      #..",
/// )
/// .unwrap();
/// let v = |x, y| DVec2::new(x, y);
/// assert!(line_of_sight(&grid, v(0.0, 0.0), v(2.0, 0.0)), "along the top border of free cells");
/// assert!(!line_of_sight(&grid, v(0.5, 0.5), v(2.5, 0.5)), "through a blocked cell");
/// assert!(!line_of_sight(&grid, v(0.0, 2.0), v(2.0, 0.0)), "squeezes through the double corner (1, 1)");
/// assert!(line_of_sight(&grid, v(0.5, 0.5), v(2.5, 1.5)));
/// ```
#[must_use]
pub fn line_of_sight(grid: &Grid, a: DVec2, b: DVec2) -> bool {
    if !grid.contains_point(a) || !grid.contains_point(b) {
        return false;
    }
    // -0.0 is 0: the walk orders coordinates with `total_cmp`, which would
    // put it below +0.0.
    let (a, b) = (a + DVec2::ZERO, b + DVec2::ZERO);
    match lattice_shift(&[a, b]) {
        Some(0) => los_lattice::<0>(grid, Lattice::<0>::of(a).0, Lattice::<0>::of(b).0),
        Some(_) => los_lattice::<1>(grid, Lattice::<1>::of(a).0, Lattice::<1>::of(b).0),
        None => segment_visible(grid, a, b),
    }
}

/// Vertex-to-vertex line of sight, in integers. Vertices must lie in
/// `[0, width] x [0, height]`.
#[inline]
#[must_use]
pub(crate) fn los_vertices(grid: &Grid, a: [i64; 2], b: [i64; 2]) -> bool {
    los_lattice::<0>(grid, a, b)
}

/// Line of sight between lattice points with coordinates `n / 2^S` (`S = 0`:
/// vertices, `S = 1`: also cell centres and edge midpoints), given by their
/// numerators; the points must lie in the grid.
///
/// Instead of visiting cells one by one, it visits the rows the segment
/// crosses (or the columns, whichever are fewer, using the grid's
/// column-major copy) and checks each one's span of cells with word masks;
/// the span ends come from an incremental exact division (no division in the
/// loop). For `S = 1` it walks the grid refined into half cells, which has
/// the same free points and the same double corners.
fn los_lattice<const S: u32>(grid: &Grid, a: [i64; 2], b: [i64; 2]) -> bool {
    if a == b {
        return point_traversable(grid, Lattice::<S>(a));
    }
    if (b[1] - a[1]).abs() <= (b[0] - a[0]).abs() {
        // Few rows: walk rows. (u, v) are (cell within line, line).
        spans_visible::<S>(grid.rows(), a, b, |u, v| grid.is_double_corner(u, v))
    } else {
        // Few columns: the same walk on the transposed grid.
        spans_visible::<S>(grid.cols(), [a[1], a[0]], [b[1], b[0]], |u, v| {
            grid.is_double_corner(v, u)
        })
    }
}

/// The walk of [`los_lattice`] over one bit plane, in plane coordinates
/// `(u, v)` scaled by `2^S`: `v` indexes lines, `u` cells within a line;
/// `a != b` and `|v_b - v_a| <= |u_b - u_a|`. `double(u, v)` says whether
/// plane vertex `(u, v)` (unscaled) is a double corner (a property that
/// transposing the grid keeps).
#[inline]
fn spans_visible<const S: u32>(
    plane: &BitPlane,
    a: [i64; 2],
    b: [i64; 2],
    double: impl Fn(i64, i64) -> bool,
) -> bool {
    let grid_point = |n: i64| n & ((1 << S) - 1) == 0;
    // Walk towards increasing v (and increasing u along a line).
    let (a, b) = if (a[1], a[0]) <= (b[1], b[0]) {
        (a, b)
    } else {
        (b, a)
    };
    let (du, dv) = (b[0] - a[0], b[1] - a[1]);
    if dv == 0 {
        let (u0, u1) = (a[0] >> S, -((-b[0]) >> S));
        return if grid_point(a[1]) {
            along_line_visible(plane, a[1] >> S, u0, u1)
        } else {
            // Inside a line: every cell crossed must be free.
            plane.all_free(a[1] >> S, u0, u1 - 1)
        };
    }
    // u on (refined) line boundary v = v_a + k is u_a + k du / dv; keep
    // q = floor(k du / dv) and rem = k du - q dv for the current boundary.
    let (step_q, step_r) = (du.div_euclid(dv), du.rem_euclid(dv));
    let walk = Walk {
        a,
        end: b[1],
        dv,
        step_q,
        step_r,
    };
    let double = |u: i64, v: i64| grid_point(u) && grid_point(v) && double(u >> S, v >> S);
    if du >= 0 {
        walk.run::<S, true>(plane, double)
    } else {
        walk.run::<S, false>(plane, double)
    }
}

/// The row loop of [`spans_visible`] for a segment that is not parallel to
/// the lines: from `a` (refined plane coordinates) up to line boundary
/// `end`, `u` advancing by `step_q + step_r / dv` per line.
struct Walk {
    a: [i64; 2],
    end: i64,
    dv: i64,
    step_q: i64,
    step_r: i64,
}

impl Walk {
    /// `RIGHT`: `u` grows along the walk (`du >= 0`). `double(u, v)`: whether
    /// refined vertex `(u, v)` is a grid vertex that is a double corner.
    // Out of line: the loop then gets the registers to itself.
    #[inline(never)]
    fn run<const S: u32, const RIGHT: bool>(
        &self,
        plane: &BitPlane,
        double: impl Fn(i64, i64) -> bool,
    ) -> bool {
        let Walk {
            a,
            end,
            dv,
            step_q,
            step_r,
        } = *self;
        let stride = plane.stride();
        // Positions are kept as u + 2^S: then the stored bit of the
        // (refined) cell at position x is x >> S (cell c's bit is c + 1).
        let one = 1i64 << S;
        // floor(u) on the current boundary is at `floor`, rem / dv is the
        // fraction. `back` is the end of the span on the previous boundary:
        // its floor when u grows, else its ceiling (both a[0] at the start,
        // a lattice point).
        let (mut floor, mut rem, mut back) = (a[0] + one, 0i64, a[0] + one);
        let mut left = end - a[1];
        // The current line is `words[base..base + stride]`, in band `band`
        // (or, when `base` is the band's length, the first line of the next).
        let (mut band, mut base) = plane.locate(a[1] >> S);
        let mut words = plane.band(band);
        // S = 1: the refined lines of one grid line are checked together,
        // as the union of their spans (contiguous: they share a boundary
        // point); `acc` is the span gathered so far in the current line.
        let mut acc = (i64::MAX, i64::MIN);
        loop {
            rem += step_r;
            let carry = rem >= dv;
            if carry {
                rem -= dv;
            }
            floor += step_q + i64::from(carry);
            let exact = rem == 0;
            // (Refined) cells crossed in line v: between u(v) and u(v + 1).
            let (lo, hi) = if RIGHT {
                (back, floor - i64::from(exact))
            } else {
                (floor, back - 1)
            };
            back = if RIGHT {
                floor
            } else {
                floor + i64::from(!exact)
            };
            left -= 1;
            let v = end - left;
            let (lo, hi) = if S == 0 {
                (lo, hi)
            } else {
                (acc.0.min(lo), acc.1.max(hi))
            };
            // Next boundary inside the same grid line: check later.
            if left != 0 && v & (one - 1) != 0 {
                acc = (lo, hi);
                continue;
            }
            acc = (i64::MAX, i64::MIN);
            let (b0, b1) = ((lo >> S) as usize, (hi >> S) as usize);
            let (w0, w1) = (b0 / 64, b1 / 64);
            let low = u64::MAX << (b0 % 64);
            let high = u64::MAX >> (63 - b1 % 64);
            // `base` reaches the end of the band when the line is the first
            // of the next band. The bounds check of the word read finds it,
            // so the usual case pays no extra test.
            if w0 == w1 {
                let m = low & high;
                let word = if let Some(&word) = words.get(base + w0) {
                    word
                } else {
                    band += 1;
                    words = plane.band(band);
                    base = 0;
                    words[w0]
                };
                if word & m != m {
                    return false;
                }
            } else {
                if base == words.len() {
                    band += 1;
                    words = plane.band(band);
                    base = 0;
                }
                if !BitPlane::all_free_slow(&words[base..base + stride], w0, w1, low, high) {
                    return false;
                }
            }
            if left == 0 {
                return true;
            }
            // Passing exactly through a grid vertex on the next boundary
            // (strictly inside the segment): it must not be a double corner.
            // (A boundary inside a grid line has no grid vertex.)
            if exact && double(floor - one, v) {
                return false;
            }
            base += stride;
        }
    }
}

/// Segment along the boundary between lines `v - 1` and `v`, from vertex
/// `u0` to `u1 > u0`: every unit edge needs a free cell on one side, and no
/// vertex strictly between may be a double corner.
fn along_line_visible(plane: &BitPlane, v: i64, u0: i64, u1: i64) -> bool {
    // Chunks of up to 63 vertices w = w0 + i; bit i of `*_lo` is cell w - 1,
    // of `*_hi` cell w (the stored bit of cell c is c + 1).
    let mut w0 = u0;
    while w0 < u1 {
        let n = (u1 - w0).min(63);
        let bit = w0 as usize;
        let (a_lo, a_hi) = (plane.bits_at(v - 1, bit), plane.bits_at(v - 1, bit + 1));
        let (b_lo, b_hi) = (plane.bits_at(v, bit), plane.bits_at(v, bit + 1));
        // Edge w .. w + 1 (i in 0..n) runs along cell w of both lines.
        let edges = (1u64 << n) - 1;
        if (a_hi | b_hi) & edges != edges {
            return false;
        }
        // Interior vertices: i in 0..n except the segment's first vertex.
        let inner = if w0 == u0 { edges & !1 } else { edges };
        let double = (a_lo & b_hi & !a_hi & !b_lo) | (a_hi & b_lo & !a_lo & !b_hi);
        if double & inner != 0 {
            return false;
        }
        w0 += n;
    }
    true
}

/// A point the walk can work with exactly.
trait WalkPoint: Copy {
    /// Floor of coordinate `axis` (0 = x, 1 = y).
    fn floor(self, axis: usize) -> i64;
    /// Ceiling of coordinate `axis`.
    fn ceil(self, axis: usize) -> i64;
    /// Compares coordinate `axis` of `self` and `other`.
    fn cmp_axis(self, other: Self, axis: usize) -> Ordering;
    /// Sign of `(b - a) x (corner - a)` for an integer `corner`.
    fn orient(a: Self, b: Self, corner: [i64; 2]) -> Ordering;
}

/// A point with coordinates `n / 2^S`, `n` integer.
#[derive(Clone, Copy)]
struct Lattice<const S: u32>([i64; 2]);

impl<const S: u32> Lattice<S> {
    fn of(p: DVec2) -> Self {
        let scale = f64::from(1u32 << S);
        Lattice([(p.x * scale) as i64, (p.y * scale) as i64])
    }
}

impl<const S: u32> WalkPoint for Lattice<S> {
    #[inline]
    fn floor(self, axis: usize) -> i64 {
        self.0[axis] >> S
    }
    #[inline]
    fn ceil(self, axis: usize) -> i64 {
        -((-self.0[axis]) >> S)
    }
    #[inline]
    fn cmp_axis(self, other: Self, axis: usize) -> Ordering {
        self.0[axis].cmp(&other.0[axis])
    }
    #[inline]
    fn orient(a: Self, b: Self, corner: [i64; 2]) -> Ordering {
        orient_i64(a.0, b.0, [corner[0] << S, corner[1] << S])
    }
}

impl WalkPoint for DVec2 {
    #[inline]
    fn floor(self, axis: usize) -> i64 {
        self[axis].floor() as i64
    }
    #[inline]
    fn ceil(self, axis: usize) -> i64 {
        self[axis].ceil() as i64
    }
    #[inline]
    fn cmp_axis(self, other: Self, axis: usize) -> Ordering {
        self[axis].total_cmp(&other[axis])
    }
    #[inline]
    fn orient(a: Self, b: Self, corner: [i64; 2]) -> Ordering {
        orient_sign(a, b, DVec2::new(corner[0] as f64, corner[1] as f64))
    }
}

#[inline]
fn sign(o: Ordering) -> i64 {
    o as i64
}

/// The first cell a walk from `a` in direction `s` (non-zero) along `axis`
/// enters, and the last one it occupies before reaching `b`.
#[inline]
fn span<P: WalkPoint>(a: P, b: P, axis: usize, s: i64) -> (i64, i64) {
    if s > 0 {
        (a.floor(axis), b.ceil(axis) - 1)
    } else {
        (a.ceil(axis) - 1, b.floor(axis))
    }
}

fn segment_visible<P: WalkPoint>(grid: &Grid, a: P, b: P) -> bool {
    let sx = sign(b.cmp_axis(a, 0));
    let sy = sign(b.cmp_axis(a, 1));
    match (sx, sy) {
        (0, 0) => point_traversable(grid, a),
        (_, 0) => axis_visible(grid, a, b, 0, sx),
        (0, _) => axis_visible(grid, a, b, 1, sy),
        _ => diagonal_visible(grid, a, b, sx, sy),
    }
}

fn point_traversable<P: WalkPoint>(grid: &Grid, p: P) -> bool {
    (p.ceil(0) - 1..=p.floor(0))
        .any(|x| (p.ceil(1) - 1..=p.floor(1)).any(|y| grid.is_free_xy(x, y)))
}

/// A segment parallel to `axis` (0: horizontal), walking in direction `s`.
fn axis_visible<P: WalkPoint>(grid: &Grid, a: P, b: P, axis: usize, s: i64) -> bool {
    let other = 1 - axis;
    let free = |u: i64, v: i64| {
        if axis == 0 {
            grid.is_free_xy(u, v)
        } else {
            grid.is_free_xy(v, u)
        }
    };
    let (first, last) = span(a, b, axis, s);
    let (v0, v1) = (a.floor(other), a.ceil(other));
    let mut u = first;
    if v0 != v1 {
        // Strictly inside row (or column) v0: every cell crossed must be free.
        loop {
            if !free(u, v0) {
                return false;
            }
            if u == last {
                return true;
            }
            u += s;
        }
    }
    // On grid line v0: each unit edge needs a free cell on one side, and no
    // vertex strictly inside the segment may be a double corner.
    let k = v0;
    loop {
        if !free(u, k - 1) && !free(u, k) {
            return false;
        }
        if u == last {
            return true;
        }
        let vertex = if s > 0 { u + 1 } else { u };
        let double = if axis == 0 {
            grid.is_double_corner(vertex, k)
        } else {
            grid.is_double_corner(k, vertex)
        };
        if double {
            return false;
        }
        u += s;
    }
}

/// A segment with both coordinates changing.
fn diagonal_visible<P: WalkPoint>(grid: &Grid, a: P, b: P, sx: i64, sy: i64) -> bool {
    let (mut cx, ex) = span(a, b, 0, sx);
    let (mut cy, ey) = span(a, b, 1, sy);
    // The walk takes exactly one step in x, in y, or in both per cell, so it
    // ends after at most this many cells (a guard against misuse only).
    let mut budget = (ex - cx).abs() + (ey - cy).abs() + 1;
    let flip = sx * sy;
    loop {
        if !grid.is_free_xy(cx, cy) {
            return false;
        }
        if cx == ex && cy == ey {
            return true;
        }
        budget -= 1;
        if budget < 0 {
            debug_assert!(false, "line-of-sight walk overshot its end cell");
            return false;
        }
        let corner = [
            if sx > 0 { cx + 1 } else { cx },
            if sy > 0 { cy + 1 } else { cy },
        ];
        match sign(P::orient(a, b, corner)) * flip {
            1 => cx += sx,
            -1 => cy += sy,
            _ => {
                // Through the corner: squeezing between two blocked cells is
                // forbidden (the cell beyond is checked on the next turn).
                if !grid.is_free_xy(cx + sx, cy) && !grid.is_free_xy(cx, cy + sy) {
                    return false;
                }
                cx += sx;
                cy += sy;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64) -> DVec2 {
        DVec2::new(x, y)
    }

    #[test]
    fn row_spans_agree_with_the_cell_walk() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..60 {
            let (w, h) = if round % 2 == 0 {
                (1 + next() % 200, 1 + next() % 9)
            } else {
                (1 + next() % 9, 1 + next() % 200)
            };
            let density = next() % 60;
            let mut g = Grid::new(w as u32, h as u32).unwrap();
            for y in 0..h {
                for x in 0..w {
                    if next() % 100 < density {
                        g.set_free(bevy_math::UVec2::new(x as u32, y as u32), false)
                            .unwrap();
                    }
                }
            }
            for _ in 0..400 {
                let a = [(next() % (w + 1)) as i64, (next() % (h + 1)) as i64];
                let b = [(next() % (w + 1)) as i64, (next() % (h + 1)) as i64];
                let walk = segment_visible(&g, Lattice::<0>(a), Lattice::<0>(b));
                assert_eq!(
                    los_vertices(&g, a, b),
                    walk,
                    "round {round}: {a:?} -> {b:?}"
                );
            }
        }
    }

    /// Long walks step from one band of stored lines to the next.
    #[test]
    fn long_walks_across_bands_agree_with_the_cell_walk() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (w, h) = (230u64, 290u64);
        let mut g = Grid::new(w as u32, h as u32).unwrap();
        for _ in 0..300 {
            let cell = bevy_math::UVec2::new(next(w) as u32, next(h) as u32);
            g.set_free(cell, false).unwrap();
        }
        let mut seen = 0;
        for _ in 0..4000 {
            let a = [next(w + 1) as i64, next(h + 1) as i64];
            let b = [next(w + 1) as i64, next(h + 1) as i64];
            let walk = segment_visible(&g, Lattice::<0>(a), Lattice::<0>(b));
            assert_eq!(los_vertices(&g, a, b), walk, "{a:?} -> {b:?}");
            let (ac, bc) = ([2 * a[0] + 1, 2 * a[1] + 1], [2 * b[0] - 1, 2 * b[1] - 1]);
            let inside = |p: [i64; 2]| {
                (0..=2 * w as i64).contains(&p[0]) && (0..=2 * h as i64).contains(&p[1])
            };
            if inside(ac) && inside(bc) {
                let walk = segment_visible(&g, Lattice::<1>(ac), Lattice::<1>(bc));
                assert_eq!(los_lattice::<1>(&g, ac, bc), walk, "{ac:?} -> {bc:?} / 2");
            }
            seen += usize::from(walk);
        }
        assert!(seen > 100, "some long segments are visible: {seen}");
    }

    #[test]
    fn float_points_agree_with_lattice_points() {
        let g = Grid::from_ascii("....#\n.#...\n...#.\n#....").unwrap();
        let pts: Vec<DVec2> = (0..=10)
            .flat_map(|x| (0..=8).map(move |y| v(f64::from(x) * 0.5, f64::from(y) * 0.5)))
            .collect();
        for &a in &pts {
            for &b in &pts {
                let lattice = line_of_sight(&g, a, b);
                assert_eq!(segment_visible(&g, a, b), lattice, "{a} -> {b}");
                assert_eq!(line_of_sight(&g, b, a), lattice, "symmetry {a} -> {b}");
            }
        }
    }
}
