//! Anya's search nodes and their exact interval endpoints.
//!
//! A node is an interval `[a, b]` of a grid line (`y` integer) together with
//! a *root*: the last turning point of every path the node stands for (the
//! start or a corner vertex). Every point of the interval is visible from the
//! root.
//!
//! # Exact endpoints
//!
//! An endpoint is either a vertex column ([`Ep::Int`]) or the point where a
//! line through the node's root crosses the interval's grid line
//! ([`Ep::Line`], stored as a second point of that line: a grid vertex or the
//! parent root). Every comparison between endpoints, integers and query
//! points is therefore the sign of one orientation determinant over the root
//! and two input points, which [`orient_sign`] computes exactly for any
//! `f64` input. No tolerance decides anything; floating-point values of the
//! endpoints are only used for `f`-values.

use core::cmp::Ordering;

use bevy_math::DVec2;

use crate::geom::orient_sign;

/// An interval endpoint on a grid line, relative to the node's root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Ep {
    /// The vertex column `x = k`.
    Int(i64),
    /// Where the line through the root and this point crosses the grid line.
    /// The point is never on the root's row.
    Line(DVec2),
    /// The root's own `x` (flat nodes rooted at a start that is on a grid line
    /// but not a vertex).
    Root,
}

/// Whether `v` is a multiple of 1/2 (vertices, cell centres).
#[inline]
fn is_half(v: f64) -> bool {
    // A round trip through i64 (cheaper than `fract`, which is a libm call
    // without SSE4.1); NaN and huge values fail it.
    let t = v * 2.0;
    t == (t as i64) as f64
}

/// `v` as an integer, if it is one of magnitude at most 2^24.
///
/// Adding 1.5 * 2^52 moves every `|v| <= 2^24` into the binade whose unit in
/// the last place is 1, so the sum is `v` rounded to an integer, exactly
/// recoverable from its low bits; `v` is an integer iff subtracting gives it
/// back. This avoids the saturating `as i64` cast, several times dearer.
#[inline]
pub(super) fn small_int(v: f64) -> Option<i64> {
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    let t = v + MAGIC;
    (v.abs() <= 16_777_216.0 && t - MAGIC == v).then(|| t.to_bits() as i64 - MAGIC.to_bits() as i64)
}

/// `v` as an integer, if it is one (`v` finite, below 2^63 in magnitude,
/// as coordinates are): a round trip through `i64`, where `fract` would be
/// a library call on the baseline x86-64 target.
#[inline]
pub(super) fn int_of(v: f64) -> Option<i64> {
    let k = v as i64;
    (k as f64 == v).then_some(k)
}

/// The largest integer `<= v` (`v` as for [`int_of`]).
#[inline]
pub(super) fn floor_of(v: f64) -> i64 {
    let k = v as i64;
    k - i64::from(k as f64 > v)
}

/// The smallest integer `>= v` (`v` as for [`int_of`]).
#[inline]
pub(super) fn ceil_of(v: f64) -> i64 {
    let k = v as i64;
    k + i64::from((k as f64) < v)
}

/// The crossing with line `y` of the line through `root` and `o` as an exact
/// fraction `n / d` with `d > 0`, when both points are integer (the root is a
/// vertex, or a start on one, and so is `o`: most endpoints). With
/// coordinates up to 2^24 and `y` a grid line, `n` stays far below 2^63.
#[inline]
fn ratio(root: DVec2, o: DVec2, y: i64) -> Option<(i64, i64)> {
    let (rx, ry) = (small_int(root.x)?, small_int(root.y)?);
    let (ox, oy) = (small_int(o.x)?, small_int(o.y)?);
    let d = oy - ry;
    if d == 0 {
        return None;
    }
    let n = rx * d + (ox - rx) * (y - ry);
    Some(if d < 0 { (-n, -d) } else { (n, d) })
}

/// Exact sign of `(b - a) x (c - a)`.
///
/// A floating-point filter decides most cases. When it cannot (nearly or
/// exactly collinear points, frequent here) and every coordinate is a
/// multiple of 1/2 below 2^20, as vertices and cell centres are, each
/// difference has at most 22 significant bits, each product at most 44 and
/// their difference at most 45, so the plain `f64` determinant is exact and
/// so is its sign. Otherwise [`orient_sign`] decides, with its adaptive exact
/// arithmetic.
#[inline]
pub(super) fn orient(a: DVec2, b: DVec2, c: DVec2) -> Ordering {
    let left = (b.x - a.x) * (c.y - a.y);
    let right = (b.y - a.y) * (c.x - a.x);
    let det = left - right;
    // Shewchuk's bound for this arrangement: (3 + 16 eps) eps, eps = 2^-53.
    let bound = 3.330_669_073_875_472e-16 * (left.abs() + right.abs());
    if det > bound {
        return Ordering::Greater;
    }
    if det < -bound {
        return Ordering::Less;
    }
    if is_half(a.x) && is_half(a.y) && is_half(b.x) && is_half(b.y) && is_half(c.x) && is_half(c.y)
    {
        // `det` is exact here; -0 compares equal to 0.
        return det.partial_cmp(&0.0).unwrap_or(Ordering::Equal);
    }
    orient_sign(a, b, c)
}

/// `ord`, reversed when `flip`.
#[inline]
fn flip_if(ord: Ordering, flip: bool) -> Ordering {
    if flip { ord.reverse() } else { ord }
}

impl Ep {
    /// Approximate `x` of the endpoint on line `y`, for `f`-values.
    #[inline]
    pub(super) fn x(self, root: DVec2, y: f64) -> f64 {
        match self {
            Ep::Int(k) => k as f64,
            Ep::Line(o) => root.x + (o.x - root.x) * (y - root.y) / (o.y - root.y),
            Ep::Root => root.x,
        }
    }

    /// Exact sign of `x - q.x`, where `x` is this endpoint's crossing with the
    /// horizontal line through `q` (for [`Ep::Int`] and [`Ep::Root`], `q`
    /// must lie on the endpoint's own line; [`Ep::Line`] works on any line
    /// other than the root's row).
    #[inline]
    pub(super) fn cmp_point(self, root: DVec2, q: DVec2) -> Ordering {
        match self {
            Ep::Int(k) => (k as f64).total_cmp(&q.x),
            Ep::Root => root.x.total_cmp(&q.x),
            // (X - r) x (q - r) = dy (x - q.x) with X on the line, and X - r
            // is a multiple of (o - r) of sign sign(dy) sign(o.y - r.y).
            Ep::Line(o) => flip_if(orient(root, o, q), o.y < root.y),
        }
    }

    /// Exact comparison of two endpoints on line `y`.
    pub(super) fn cmp(self, other: Ep, root: DVec2, y: i64) -> Ordering {
        let yf = y as f64;
        match (self, other) {
            (Ep::Int(a), Ep::Int(b)) => a.cmp(&b),
            (Ep::Line(o1), Ep::Line(o2)) => {
                let flips =
                    u8::from(yf < root.y) + u8::from(o1.y < root.y) + u8::from(o2.y < root.y);
                flip_if(orient(root, o1, o2), flips % 2 == 1)
            }
            (Ep::Int(k), _) => other.cmp_point(root, DVec2::new(k as f64, yf)).reverse(),
            (_, Ep::Int(k)) => self.cmp_point(root, DVec2::new(k as f64, yf)),
            (Ep::Root, _) => other.cmp_point(root, DVec2::new(root.x, yf)).reverse(),
            (_, Ep::Root) => self.cmp_point(root, DVec2::new(root.x, yf)),
        }
    }

    /// The same point as a line through the root, usable on other rows
    /// (`self` lies on line `y`, which is not the root's row).
    #[inline]
    pub(super) fn as_line(self, root: DVec2, y: i64) -> Ep {
        match self {
            Ep::Int(k) => Ep::Line(DVec2::new(k as f64, y as f64)),
            Ep::Root => Ep::Line(DVec2::new(root.x, y as f64)),
            line @ Ep::Line(_) => line,
        }
    }

    /// [`Ep::as_line`] then [`Ep::normalized`] onto line `ny`, for a root at
    /// the integer point `(rx, ry)` and an endpoint (on line `y`, not the
    /// root's row) whose point is integer too: the canonical endpoint on
    /// `ny` and its exact crossing `n / d`, `d > 0`. `None` when the point is
    /// not an integer one (use the general path).
    #[inline]
    pub(super) fn project_int(self, rx: i64, ry: i64, y: i64, ny: i64) -> Option<(Ep, i64, i64)> {
        let (ox, oy, line) = match self {
            Ep::Int(k) => (k, y, Ep::Line(DVec2::new(k as f64, y as f64))),
            Ep::Line(o) => (small_int(o.x)?, small_int(o.y)?, self),
            Ep::Root => return None,
        };
        let d = oy - ry;
        if d == 0 {
            return None;
        }
        let n = rx * d + (ox - rx) * (ny - ry);
        let (n, d) = if d < 0 { (-n, -d) } else { (n, d) };
        let ep = if n % d == 0 { Ep::Int(n / d) } else { line };
        Some((ep, n, d))
    }

    /// The canonical form on line `y`: a line crossing exactly at a vertex
    /// becomes [`Ep::Int`], so "is a vertex" is a pattern match.
    #[inline]
    pub(super) fn normalized(self, root: DVec2, y: i64) -> Ep {
        if let Ep::Line(o) = self {
            if let Some((n, d)) = ratio(root, o, y) {
                return if n % d == 0 { Ep::Int(n / d) } else { self };
            }
            let k = self.x(root, y as f64).round();
            if k.is_finite() && self.cmp_point(root, DVec2::new(k, y as f64)) == Ordering::Equal {
                return Ep::Int(k as i64);
            }
        }
        self
    }

    /// The largest integer `<= x` (exact; `self` normalized, on line `y`).
    #[inline]
    pub(super) fn floor(self, root: DVec2, y: i64) -> i64 {
        match self {
            Ep::Int(k) => k,
            Ep::Root => floor_of(root.x),
            Ep::Line(o) => {
                if let Some((n, d)) = ratio(root, o, y) {
                    return n.div_euclid(d);
                }
                let mut k = self.x(root, y as f64).floor() as i64;
                let at = |k: i64| self.cmp_point(root, DVec2::new(k as f64, y as f64));
                while at(k) == Ordering::Less {
                    k -= 1;
                }
                while at(k + 1) != Ordering::Less {
                    k += 1;
                }
                k
            }
        }
    }

    /// The smallest integer `> x`.
    #[inline]
    pub(super) fn int_above(self, root: DVec2, y: i64) -> i64 {
        self.floor(root, y) + 1
    }

    /// The largest integer `< x`.
    #[inline]
    pub(super) fn int_below(self, root: DVec2, y: i64) -> i64 {
        match self {
            Ep::Int(k) => return k - 1,
            Ep::Line(o) => {
                if let Some((n, d)) = ratio(root, o, y) {
                    return (n - 1).div_euclid(d);
                }
            }
            Ep::Root => {}
        }
        let f = self.floor(root, y);
        if self.cmp(Ep::Int(f), root, y) == Ordering::Equal {
            f - 1
        } else {
            f
        }
    }
}

/// What a node's interval is, relative to its root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The root is off the interval's line; paths continue away from it, to
    /// line `y + dir`.
    Cone {
        /// `+1` (down, `y` growing) or `-1` (up).
        dir: i8,
    },
    /// The root is on the interval's line; paths continue along it.
    Flat {
        /// `+1` (right) or `-1` (left).
        dir: i8,
    },
    /// The goal, seen from the root: `g` is the whole path's length.
    Goal,
}

/// One search node.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// The root's id in the root history.
    pub root: u32,
    /// The root point.
    pub r: DVec2,
    /// The root's `g` when the node was made; stale once the root improves.
    pub g: f64,
    /// The interval's grid line.
    pub y: i64,
    /// Left endpoint.
    pub a: Ep,
    /// Right endpoint (`a <= b`).
    pub b: Ep,
    /// The largest integer `<= a` on line `y` (0 for goal nodes).
    pub a_floor: i64,
    /// Cone, flat or goal.
    pub kind: Kind,
    /// Whether `a` is a corner where taut paths from the root may turn.
    pub turn_a: bool,
    /// Whether `b` is a corner where taut paths from the root may turn.
    pub turn_b: bool,
    /// Whether paths may go on past the interval's interior (free cells
    /// beyond a cone interval, a walkable edge beyond a flat one).
    pub onward: bool,
}
