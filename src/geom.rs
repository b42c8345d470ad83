//! Exact geometric predicates, and the distances every module measures
//! with: point to segment, point to cell.
//!
//! Every decision the planners make from geometry (which side of a segment a
//! grid corner lies on, whether a line passes exactly through a vertex) goes
//! through [`orientation`], which is exact: for integer and half-integer
//! coordinates it computes in integers, for other `f64` coordinates it uses a
//! floating-point filter and falls back to exact expansion arithmetic
//! (Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast Robust
//! Geometric Predicates", 1997) when the filter cannot decide.

use core::cmp::Ordering;

use bevy_math::DVec2;

/// Where a point `c` lies relative to the directed line `a -> b`, by the sign
/// of the cross product `(b - a) x (c - a)`.
///
/// In the grid's y-down coordinates a positive cross product means `c` is on
/// the right of `a -> b` as seen on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Orientation {
    /// The cross product is positive.
    Positive,
    /// The cross product is negative.
    Negative,
    /// `a`, `b` and `c` are collinear (or two of them coincide).
    Collinear,
}

impl Orientation {
    /// The orientation of an exact sign.
    #[must_use]
    pub fn from_ordering(sign: Ordering) -> Self {
        match sign {
            Ordering::Greater => Orientation::Positive,
            Ordering::Less => Orientation::Negative,
            Ordering::Equal => Orientation::Collinear,
        }
    }

    /// The sign as an [`Ordering`] (`Greater` for positive).
    #[must_use]
    pub fn as_ordering(self) -> Ordering {
        match self {
            Orientation::Positive => Ordering::Greater,
            Orientation::Negative => Ordering::Less,
            Orientation::Collinear => Ordering::Equal,
        }
    }
}

/// Exact orientation of `c` relative to the directed line `a -> b`.
///
/// Exact for every finite input (barring overflow to infinity or underflow
/// below `f64::MIN_POSITIVE`, impossible for grid coordinates).
///
/// ```
/// use bevy_anyangle::geom::{orientation, Orientation};
/// use bevy_anyangle::prelude::DVec2;
///
/// let (a, b) = (DVec2::new(0.1, 0.1), DVec2::new(0.3, 0.3));
/// assert_eq!(orientation(a, b, DVec2::new(1.0, 0.0)), Orientation::Negative);
/// assert_eq!(orientation(a, b, DVec2::new(0.0, 1.0)), Orientation::Positive);
/// // Exactly on the line y = x, and one unit in the last place off it.
/// assert_eq!(orientation(a, b, DVec2::new(0.2, 0.2)), Orientation::Collinear);
/// let above = f64::from_bits(0.2f64.to_bits() + 1);
/// assert_eq!(orientation(a, b, DVec2::new(0.2, above)), Orientation::Positive);
/// ```
#[must_use]
pub fn orientation(a: DVec2, b: DVec2, c: DVec2) -> Orientation {
    Orientation::from_ordering(orient_sign(a, b, c))
}

/// Sign of `(b - a) x (c - a)`, exact.
#[must_use]
#[inline]
pub(crate) fn orient_sign(a: DVec2, b: DVec2, c: DVec2) -> Ordering {
    // Shewchuk's orient2d arrangement: (a - c) x (b - c).
    // ccwerrboundA = (3 + 16 eps) eps with eps = 2^-53.
    const ERR_BOUND: f64 = 3.330_669_073_875_472e-16;
    let detleft = (a.x - c.x) * (b.y - c.y);
    let detright = (a.y - c.y) * (b.x - c.x);
    let det = detleft - detright;
    let bound = ERR_BOUND * (detleft.abs() + detright.abs());
    if det > bound {
        return Ordering::Greater;
    }
    if -det > bound {
        return Ordering::Less;
    }
    if detleft == 0.0 && detright == 0.0 {
        // A floating-point difference is zero only when its operands are
        // equal, so each true product is exactly zero too.
        return Ordering::Equal;
    }
    if small_integers(a, b, c) {
        // Differences and products of integers below 2^25 are exact, and so
        // is their difference: `det` is the true value.
        return det.partial_cmp(&0.0).unwrap_or(Ordering::Equal);
    }
    orient_exact(a, b, c)
}

/// Whether every coordinate is an integer of magnitude below 2^25 (grid
/// vertices), where [`orient_sign`]'s floating-point determinant is exact.
#[inline]
fn small_integers(a: DVec2, b: DVec2, c: DVec2) -> bool {
    [a.x, a.y, b.x, b.y, c.x, c.y].iter().all(|&v| {
        let i = v as i32;
        f64::from(i) == v && i.unsigned_abs() < 1 << 25
    })
}

/// Exact sign of `(a - c) x (b - c)` by expansion arithmetic.
#[cold]
fn orient_exact(a: DVec2, b: DVec2, c: DVec2) -> Ordering {
    // (a - c) x (b - c) = ax*by - ax*cy - cx*by - ay*bx + ay*cx + cy*bx
    let products = [
        (a.x, b.y),
        (-a.x, c.y),
        (-c.x, b.y),
        (-a.y, b.x),
        (a.y, c.x),
        (c.y, b.x),
    ];
    let mut expansion = [0.0f64; 12];
    let mut len = 0;
    for (p, q) in products {
        let (hi, lo) = two_product(p, q);
        for term in [lo, hi] {
            let mut carry = term;
            for component in &mut expansion[..len] {
                let (s, e) = two_sum(carry, *component);
                *component = e;
                carry = s;
            }
            expansion[len] = carry;
            len += 1;
        }
    }
    // A non-overlapping expansion in increasing magnitude: its sign is the
    // sign of its most significant non-zero component.
    expansion[..len]
        .iter()
        .rev()
        .find(|v| **v != 0.0)
        .map_or(Ordering::Equal, |v| {
            v.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
        })
}

#[inline]
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let hi = a * b;
    (hi, a.mul_add(b, -hi))
}

#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bv = s - a;
    let av = s - bv;
    (s, (a - av) + (b - bv))
}

/// Sign of the cross product `(b - a) x (c - a)` for integer points.
#[inline]
#[must_use]
pub(crate) fn orient_i64(a: [i64; 2], b: [i64; 2], c: [i64; 2]) -> Ordering {
    ((b[0] - a[0]) * (c[1] - a[1])).cmp(&((b[1] - a[1]) * (c[0] - a[0])))
}

/// If every coordinate of `points` is a multiple of `1 / 2^shift` for
/// `shift` in `0..=1` (vertices and half-integer points such as cell
/// centres), returns the smallest such `shift`.
#[must_use]
pub(crate) fn lattice_shift(points: &[DVec2]) -> Option<u32> {
    let fits = |scale: f64| {
        points.iter().all(|p| {
            let (x, y) = (p.x * scale, p.y * scale);
            x.fract() == 0.0 && y.fract() == 0.0 && x.abs() < 1e15 && y.abs() < 1e15
        })
    };
    if fits(1.0) {
        Some(0)
    } else if fits(2.0) {
        Some(1)
    } else {
        None
    }
}

/// Length of a polyline.
#[must_use]
pub fn polyline_length(points: &[DVec2]) -> f64 {
    points.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// The point of segment `a-b` closest to `p`: exactly `a` or `b` past
/// either end, and `a` if the segment is a point or `p` is not finite. A
/// sub-segment of a visible segment is visible, so a point put there sees
/// what the segment sees.
#[must_use]
pub(crate) fn closest_on_segment(p: DVec2, a: DVec2, b: DVec2) -> DVec2 {
    let d = b - a;
    let t = (p - a).dot(d) / d.length_squared();
    if t.is_finite() && t > 0.0 {
        if t >= 1.0 { b } else { a + d * t }
    } else {
        a
    }
}

/// The distance from `p` to segment `a-b`.
#[must_use]
pub(crate) fn segment_distance(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    p.distance(closest_on_segment(p, a, b))
}

/// The point of cell `(x, y)`'s closed square closest to `p`.
#[inline]
#[must_use]
pub(crate) fn closest_in_cell(p: DVec2, x: i64, y: i64) -> DVec2 {
    let low = DVec2::new(x as f64, y as f64);
    p.clamp(low, low + DVec2::ONE)
}

/// The distance from `p` to cell `(x, y)`'s closed square.
#[inline]
#[must_use]
pub(crate) fn cell_distance(p: DVec2, x: i64, y: i64) -> f64 {
    p.distance(closest_in_cell(p, x, y))
}

/// The distance from segment `a-b` to the closed axis-aligned rectangle
/// `lo..=hi`: 0 where they meet.
#[must_use]
pub(crate) fn segment_rect_distance(a: DVec2, b: DVec2, lo: DVec2, hi: DVec2) -> f64 {
    if segment_meets_rect(a, b, lo, hi) {
        return 0.0;
    }
    let corners = [lo, DVec2::new(hi.x, lo.y), hi, DVec2::new(lo.x, hi.y)];
    let ends = a.distance(a.clamp(lo, hi)).min(b.distance(b.clamp(lo, hi)));
    corners
        .iter()
        .map(|&c| segment_distance(c, a, b))
        .fold(ends, f64::min)
}

/// Whether segment `a-b` meets the closed rectangle `lo..=hi` (clipped
/// against each slab in turn).
fn segment_meets_rect(a: DVec2, b: DVec2, lo: DVec2, hi: DVec2) -> bool {
    let d = b - a;
    let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
    for (start, step, low, high) in [(a.x, d.x, lo.x, hi.x), (a.y, d.y, lo.y, hi.y)] {
        if step == 0.0 {
            if start < low || start > high {
                return false;
            }
            continue;
        }
        let (mut u, mut v) = ((low - start) / step, (high - start) / step);
        if u > v {
            core::mem::swap(&mut u, &mut v);
        }
        t0 = t0.max(u);
        t1 = t1.min(v);
        if t0 > t1 {
            return false;
        }
    }
    true
}

/// The shortest way from `a` to `b` through some point of the closed
/// rectangle `lo..=hi`, ignoring obstacles: `min |a - p| + |p - b|` over
/// its points `p` (`|a - b|` where the segment meets the rectangle). No
/// path through the rectangle is shorter.
#[must_use]
pub(crate) fn detour_through_rect(a: DVec2, b: DVec2, lo: DVec2, hi: DVec2) -> f64 {
    if segment_meets_rect(a, b, lo, hi) {
        return a.distance(b);
    }
    // Outside, the minimum lies on an edge; along an edge the sum is convex
    // and least where the straight line from `a` to `b` (or to `b`'s mirror
    // image when both lie on one side) crosses the edge's line.
    let via = |p: DVec2| a.distance(p) + p.distance(b);
    let mut best = f64::INFINITY;
    for axis in 0..2 {
        let (u, v) = (axis, 1 - axis); // u varies along the edge, v is fixed
        for fixed in [lo[v], hi[v]] {
            let mut far = b;
            if (a[v] - fixed) * (b[v] - fixed) > 0.0 {
                far[v] = 2.0 * fixed - b[v];
            }
            let mut at = DVec2::ZERO;
            at[v] = fixed;
            for along in [lo[u], hi[u]] {
                at[u] = along;
                best = best.min(via(at));
            }
            if far[v] != a[v] {
                let t = (fixed - a[v]) / (far[v] - a[v]);
                at[u] = (a[u] + t * (far[u] - a[u])).clamp(lo[u], hi[u]);
                best = best.min(via(at));
            }
        }
    }
    best
}

#[cfg(test)]
mod rect_tests {
    use super::*;

    /// Against dense sampling of the rectangle (and of the segment).
    #[test]
    fn rectangle_distances_match_sampling() {
        let mut seed = 7_u64;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) % 1000) as f64 / 100.0
        };
        for _ in 0..300 {
            let (a, b) = (DVec2::new(next(), next()), DVec2::new(next(), next()));
            let lo = DVec2::new(next(), next()).min(DVec2::splat(8.0));
            let hi = lo + DVec2::new(next() / 5.0, next() / 5.0);
            let steps = 200;
            let (mut detour, mut distance) = (f64::INFINITY, f64::INFINITY);
            for i in 0..=steps {
                for j in 0..=steps {
                    let t = DVec2::new(f64::from(i), f64::from(j)) / f64::from(steps);
                    let p = lo + (hi - lo) * t;
                    detour = detour.min(a.distance(p) + p.distance(b));
                    distance = distance.min(segment_distance(p, a, b));
                }
            }
            let exact = detour_through_rect(a, b, lo, hi);
            assert!(
                exact <= detour + 1e-12,
                "{a} {b} {lo} {hi}: {exact} > {detour}"
            );
            assert!(
                exact >= detour - 0.03,
                "{a} {b} {lo} {hi}: {exact} << {detour}"
            );
            let d = segment_rect_distance(a, b, lo, hi);
            assert!(
                d <= distance + 1e-12 && d >= distance - 0.03,
                "{a} {b} {lo} {hi}: {d} {distance}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(clippy::float_cmp, reason = "exact results")]
    fn distances_to_segments_and_cells() {
        let (a, b) = (DVec2::new(1.0, 1.0), DVec2::new(4.0, 1.0));
        // Past the ends: exactly the ends.
        assert_eq!(closest_on_segment(DVec2::new(7.0, 5.0), a, b), b);
        assert_eq!(closest_on_segment(DVec2::new(-2.0, 5.0), a, b), a);
        assert_eq!(segment_distance(DVec2::new(2.5, 3.0), a, b), 2.0);
        // A segment that is a point, and a point that is not finite.
        assert_eq!(segment_distance(DVec2::new(4.0, 5.0), a, a), 5.0);
        assert_eq!(closest_on_segment(DVec2::NAN, a, b), a);
        // Inside, beside and diagonally off a cell.
        assert_eq!(cell_distance(DVec2::new(2.5, 3.5), 2, 3), 0.0);
        assert_eq!(cell_distance(DVec2::new(4.5, 3.5), 2, 3), 1.5);
        assert_eq!(cell_distance(DVec2::new(6.0, 8.0), 2, 3), 5.0);
    }

    #[test]
    fn exact_on_near_degenerate_inputs() {
        // Points on the line y = x scaled by awkward decimals.
        let a = DVec2::new(0.1, 0.1);
        let b = DVec2::new(0.7, 0.7);
        for k in 0..100 {
            let t = f64::from(k) * 0.013;
            let c = DVec2::new(t, t);
            // c lies exactly on the line y = x, and so do a and b.
            assert_eq!(orient_sign(a, b, c), Ordering::Equal, "t = {t}");
            let up = DVec2::new(t, f64::from_bits(t.to_bits() + 1));
            if t > 0.0 {
                assert_eq!(orient_sign(a, b, up), Ordering::Greater, "t = {t}");
            }
        }
    }

    #[test]
    fn filter_and_exact_agree_on_lattice_points() {
        for ax in -3..3i64 {
            for by in -3..3i64 {
                for cx in -3..3i64 {
                    let (a, b, c) = ([ax, 1], [2, by], [cx, cx - 1]);
                    let f = |p: [i64; 2]| DVec2::new(p[0] as f64, p[1] as f64);
                    assert_eq!(orient_sign(f(a), f(b), f(c)), orient_i64(a, b, c));
                    assert_eq!(orient_exact(f(a), f(b), f(c)), orient_i64(a, b, c));
                }
            }
        }
    }

    #[test]
    fn lattice_detection() {
        assert_eq!(lattice_shift(&[DVec2::new(1.0, 2.0)]), Some(0));
        assert_eq!(lattice_shift(&[DVec2::new(1.5, 2.0)]), Some(1));
        assert_eq!(lattice_shift(&[DVec2::new(1.25, 2.0)]), None);
    }
}
