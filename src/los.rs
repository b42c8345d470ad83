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
use crate::grid::Grid;

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
    match lattice_shift(&[a, b]) {
        Some(0) => segment_visible(grid, Lattice::<0>::of(a), Lattice::<0>::of(b)),
        Some(_) => segment_visible(grid, Lattice::<1>::of(a), Lattice::<1>::of(b)),
        None => segment_visible(grid, a, b),
    }
}

/// Vertex-to-vertex line of sight, in integers. Vertices must lie in
/// `[0, width] x [0, height]`.
#[inline]
#[must_use]
pub(crate) fn los_vertices(grid: &Grid, a: [i64; 2], b: [i64; 2]) -> bool {
    segment_visible(grid, Lattice::<0>(a), Lattice::<0>(b))
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
    (p.ceil(0) - 1..=p.floor(0)).any(|x| (p.ceil(1) - 1..=p.floor(1)).any(|y| grid.is_free(x, y)))
}

/// A segment parallel to `axis` (0: horizontal), walking in direction `s`.
fn axis_visible<P: WalkPoint>(grid: &Grid, a: P, b: P, axis: usize, s: i64) -> bool {
    let other = 1 - axis;
    let free = |u: i64, v: i64| {
        if axis == 0 {
            grid.is_free(u, v)
        } else {
            grid.is_free(v, u)
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
        if !grid.is_free(cx, cy) {
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
                if !grid.is_free(cx + sx, cy) && !grid.is_free(cx, cy + sy) {
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
    fn border_edges_are_walkable_but_not_outside() {
        let g = Grid::new(3, 3).unwrap();
        assert!(line_of_sight(&g, v(0.0, 0.0), v(3.0, 0.0)));
        assert!(line_of_sight(&g, v(0.0, 0.0), v(0.0, 3.0)));
        assert!(line_of_sight(&g, v(0.0, 0.0), v(3.0, 3.0)));
        assert!(!line_of_sight(&g, v(0.0, 0.0), v(3.1, 0.0)));
        assert!(!line_of_sight(&g, v(-0.5, 0.0), v(1.0, 0.0)));
    }

    #[test]
    fn edges_between_two_blocked_cells_are_not() {
        let g = Grid::from_ascii("...\n##.\n##.\n").unwrap();
        assert!(
            line_of_sight(&g, v(0.0, 1.0), v(2.0, 1.0)),
            "free cells above"
        );
        assert!(
            !line_of_sight(&g, v(1.0, 1.0), v(1.0, 3.0)),
            "between the two blocked columns"
        );
        assert!(
            line_of_sight(&g, v(2.0, 1.0), v(2.0, 3.0)),
            "free cells to the right"
        );
        assert!(!line_of_sight(&g, v(0.0, 2.0), v(2.0, 2.0)));
    }

    #[test]
    fn double_corners_block_straight_and_diagonal_passage() {
        let g = Grid::from_ascii(".#.\n#..\n...").unwrap();
        // (1, 1) is a double corner: (0,0),(1,1) free, (1,0),(0,1) blocked.
        assert!(g.is_double_corner(1, 1));
        assert!(!line_of_sight(&g, v(0.0, 0.0), v(2.0, 2.0)));
        assert!(!line_of_sight(&g, v(0.5, 0.5), v(1.5, 1.5)));
        assert!(
            line_of_sight(&g, v(0.5, 0.5), v(1.0, 1.0)),
            "ending at it is fine"
        );
        assert!(line_of_sight(&g, v(1.0, 1.0), v(2.0, 2.0)));
        // Along grid line y = 1 through the double corner.
        assert!(!line_of_sight(&g, v(0.5, 1.0), v(1.5, 1.0)));
        // Along x = 1.
        assert!(!line_of_sight(&g, v(1.0, 0.5), v(1.0, 1.5)));
    }

    #[test]
    fn touching_a_blocked_corner_is_fine() {
        let g = Grid::from_ascii("...\n.#.\n...").unwrap();
        assert!(line_of_sight(&g, v(0.0, 3.0), v(1.0, 2.0)));
        assert!(
            line_of_sight(&g, v(0.0, 2.0), v(2.0, 0.0)),
            "touches the corner (1, 1)"
        );
        assert!(line_of_sight(&g, v(0.0, 0.0), v(1.0, 1.0)));
        assert!(line_of_sight(&g, v(0.0, 2.0), v(1.0, 1.0)));
        assert!(!line_of_sight(&g, v(1.0, 2.0), v(2.0, 1.0)));
        assert!(
            line_of_sight(&g, v(0.0, 1.0), v(3.0, 1.0)),
            "along the top edge"
        );
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
