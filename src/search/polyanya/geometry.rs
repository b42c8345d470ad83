//! The geometry of cones and intervals: exact orientation tests, polygon
//! vertex order, and the distances the heuristics are made of.

use bevy_math::DVec2;
use core::cmp::Ordering;

use crate::geom::orient_sign;

/// The vertex after `m` of a polygon of `n` vertices.
#[inline]
pub(super) fn next(m: usize, n: usize) -> usize {
    if m + 1 == n { 0 } else { m + 1 }
}

/// The vertex before `m` of a polygon of `n` vertices.
#[inline]
pub(super) fn prev(m: usize, n: usize) -> usize {
    if m == 0 { n - 1 } else { m - 1 }
}

/// Orientation of `c` relative to the line `a -> b`, exact. With `lattice`,
/// every point is a multiple of 1/2 below 2^15 (mesh vertices, and a start
/// and goal on vertices or cell centres): the floating-point cross product
/// is then exact, and its sign the answer.
#[inline]
pub(super) fn orient(lattice: bool, a: DVec2, b: DVec2, c: DVec2) -> Ordering {
    if lattice {
        let det = (b - a).perp_dot(c - a);
        if det > 0.0 {
            Ordering::Greater
        } else if det < 0.0 {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    } else {
        orient_sign(a, b, c)
    }
}

/// Where the line `line` meets the line through `a` and `b` (for the
/// heuristic only), clamped to the segment `a b`.
#[inline]
pub(super) fn clip(line: &[DVec2; 2], a: DVec2, b: DVec2) -> DVec2 {
    let d = line[1] - line[0];
    let e = b - a;
    let den = e.perp_dot(d);
    if den == 0.0 {
        return a;
    }
    let s = ((line[0] - a).perp_dot(d) / den).clamp(0.0, 1.0);
    a + e * s
}

/// Distance from `r` to the segment `a b`: no path from `r` beyond the
/// segment is shorter.
#[inline]
pub(super) fn segment_distance(r: DVec2, a: DVec2, b: DVec2) -> f64 {
    let e = b - a;
    let len2 = e.length_squared();
    let s = if len2 == 0.0 {
        0.0
    } else {
        ((r - a).dot(e) / len2).clamp(0.0, 1.0)
    };
    r.distance(a + e * s)
}

/// Length of the shortest way from `r` through the segment `a b` to `t`
/// (`t` reflected across the segment's line when it is on `r`'s side).
#[inline]
pub(super) fn heuristic(r: DVec2, a: DVec2, b: DVec2, t: DVec2) -> f64 {
    let e = b - a;
    let (sr, st) = (e.perp_dot(r - a), e.perp_dot(t - a));
    let t = if (sr > 0.0 && st > 0.0) || (sr < 0.0 && st < 0.0) {
        let len2 = e.length_squared();
        if len2 == 0.0 {
            t
        } else {
            let foot = a + e * ((t - a).dot(e) / len2);
            2.0 * foot - t
        }
    } else {
        t
    };
    let (oa, ob) = ((a - r).perp_dot(t - r), (b - r).perp_dot(t - r));
    if (oa <= 0.0 && ob >= 0.0) || (oa >= 0.0 && ob <= 0.0) {
        r.distance(t)
    } else {
        (r.distance(a) + a.distance(t)).min(r.distance(b) + b.distance(t))
    }
}

#[cfg(test)]
mod tests {
    use super::{heuristic, segment_distance};
    use crate::test_rng::Rng;
    use bevy_math::DVec2;

    #[test]
    fn the_segment_distance_is_the_nearest_point_of_the_segment() {
        let mut rng = Rng(0x5e9_0002);
        let point = |rng: &mut Rng| DVec2::new(f64::from(rng.below(21)), f64::from(rng.below(21)));
        for _ in 0..2000 {
            let (r, a, b) = (point(&mut rng), point(&mut rng), point(&mut rng));
            let sampled = (0..=2000)
                .map(|k| r.distance(a.lerp(b, f64::from(k) / 2000.0)))
                .fold(f64::INFINITY, f64::min);
            let d = segment_distance(r, a, b);
            assert!(
                d <= sampled + 1e-9 && sampled - d < 1e-2,
                "{r} {a} {b}: {d} {sampled}"
            );
        }
    }

    /// The shortest way through the segment, by sampling it finely.
    fn sampled(r: DVec2, a: DVec2, b: DVec2, t: DVec2) -> f64 {
        (0..=4000)
            .map(|k| {
                let x = a.lerp(b, f64::from(k) / 4000.0);
                r.distance(x) + x.distance(t)
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn the_heuristic_is_the_shortest_way_through_the_segment() {
        let mut rng = Rng(0x9e1_0001);
        let point = |rng: &mut Rng| {
            DVec2::new(
                f64::from(rng.below(41)) / 2.0,
                f64::from(rng.below(41)) / 2.0,
            )
        };
        for _ in 0..3000 {
            let (r, a, b, t) = (
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
            );
            if a == b {
                continue;
            }
            // With `t` on `r`'s side, the way through is to its mirror image
            // across the segment's line.
            let e = b - a;
            let (sr, st) = (e.perp_dot(r - a), e.perp_dot(t - a));
            let target = if sr * st > 0.0 {
                let foot = a + e * ((t - a).dot(e) / e.length_squared());
                2.0 * foot - t
            } else {
                t
            };
            let h = heuristic(r, a, b, t);
            let want = sampled(r, a, b, target);
            // Never above the true minimum (admissible), and close to it.
            assert!(h <= want + 1e-9, "{r} {a} {b} {t}: {h} > {want}");
            assert!(want - h < 1e-3, "{r} {a} {b} {t}: {h} < {want}");
        }
    }
}
