//! `los`: [`line_of_sight`] on a small grid against a brute force written
//! here from `SPEC.md`'s definition of a visible segment, in exact integer
//! arithmetic, and against the reference of the crate's tests.
//!
//! The brute force needs no walk: a segment of positive length is visible
//! iff
//!
//! 1. it meets the open interior of no blocked cell (cells outside the grid
//!    are blocked),
//! 2. every unit edge it runs along (lying on a grid line) has a free cell on
//!    one side, and
//! 3. no vertex strictly between its ends is a double corner.
//!
//! Every point of the segment is either in an open cell interior (rule 1),
//! on a stretch along a grid line (rule 2), or an isolated crossing of a grid
//! line; such a crossing is in the closure of an open interior the segment
//! passes through next to it, which rule 1 made free. Rule 3 is the
//! squeezing rule itself. A segment of length 0 is visible iff its point is
//! in a free cell's closed square.

use core::cmp::Ordering;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;

use super::common::Reference;
use super::input::Input;

/// An exact fraction `n / d`, `d > 0`.
#[derive(Clone, Copy, Debug)]
struct Frac {
    n: i128,
    d: i128,
}

impl Frac {
    fn new(n: i128, d: i128) -> Frac {
        if d < 0 {
            Frac { n: -n, d: -d }
        } else {
            Frac { n, d }
        }
    }

    fn cmp(self, other: Frac) -> Ordering {
        (self.n * other.d).cmp(&(other.n * self.d))
    }

    fn lt(self, other: Frac) -> bool {
        self.cmp(other) == Ordering::Less
    }
}

/// `v * 2^shift` when that is an integer for some `shift <= 60`, as
/// `(numerator, shift)` with the smallest shift.
fn dyadic(v: f64) -> Option<(i128, u32)> {
    (0..=60).find_map(|s| {
        let scaled = v * 2f64.powi(s);
        (scaled.fract() == 0.0 && scaled.abs() < 1e30).then(|| (scaled as i128, s.unsigned_abs()))
    })
}

/// The brute force over any free-cell predicate (outside cells must read as
/// blocked). `a` and `b` are numerators over the common denominator `d`.
struct Brute<F: Fn(i64, i64) -> bool> {
    free: F,
}

impl<F: Fn(i64, i64) -> bool> Brute<F> {
    fn free(&self, x: i128, y: i128) -> bool {
        match (i64::try_from(x), i64::try_from(y)) {
            (Ok(x), Ok(y)) => (self.free)(x, y),
            _ => false,
        }
    }

    fn double_corner(&self, x: i128, y: i128) -> bool {
        let nw = self.free(x - 1, y - 1);
        let ne = self.free(x, y - 1);
        let sw = self.free(x - 1, y);
        let se = self.free(x, y);
        (nw && se && !ne && !sw) || (ne && sw && !nw && !se)
    }

    /// The parameters `t` at which the segment is strictly inside the slab
    /// `k < coordinate / d < k + 1` of one axis, as an open interval
    /// (`None` ends are infinite); `Err` when it never is.
    fn slab(k: i128, from: i128, delta: i128, d: i128) -> Result<(Option<Frac>, Option<Frac>), ()> {
        let (lo, hi) = (k * d, (k + 1) * d);
        match delta.cmp(&0) {
            Ordering::Equal => {
                if lo < from && from < hi {
                    Ok((None, None))
                } else {
                    Err(())
                }
            }
            Ordering::Greater => Ok((
                Some(Frac::new(lo - from, delta)),
                Some(Frac::new(hi - from, delta)),
            )),
            Ordering::Less => Ok((
                Some(Frac::new(hi - from, delta)),
                Some(Frac::new(lo - from, delta)),
            )),
        }
    }

    /// Whether the closed segment meets the open interior of cell `(cx, cy)`.
    fn meets_interior(a: [i128; 2], b: [i128; 2], d: i128, cx: i128, cy: i128) -> bool {
        let (Ok(x), Ok(y)) = (
            Self::slab(cx, a[0], b[0] - a[0], d),
            Self::slab(cy, a[1], b[1] - a[1], d),
        ) else {
            return false;
        };
        let lower = match (x.0, y.0) {
            (Some(p), Some(q)) => Some(if p.lt(q) { q } else { p }),
            (p, q) => p.or(q),
        };
        let upper = match (x.1, y.1) {
            (Some(p), Some(q)) => Some(if p.lt(q) { p } else { q }),
            (p, q) => p.or(q),
        };
        let (zero, one) = (Frac::new(0, 1), Frac::new(1, 1));
        // Some t in [0, 1] with lower < t < upper.
        let ordered = match (lower, upper) {
            (Some(l), Some(u)) => l.lt(u),
            _ => true,
        };
        ordered && lower.is_none_or(|l| l.lt(one)) && upper.is_none_or(|u| zero.lt(u))
    }

    fn visible(&self, a: [i128; 2], b: [i128; 2], d: i128) -> bool {
        let floor = |v: i128| v.div_euclid(d);
        let ceil = |v: i128| -(-v).div_euclid(d);
        if a == b {
            let span = |v: i128| {
                if v.rem_euclid(d) == 0 {
                    (floor(v) - 1, floor(v))
                } else {
                    (floor(v), floor(v))
                }
            };
            let ((x0, x1), (y0, y1)) = (span(a[0]), span(a[1]));
            return (x0..=x1).any(|x| (y0..=y1).any(|y| self.free(x, y)));
        }
        let (minx, maxx) = (a[0].min(b[0]), a[0].max(b[0]));
        let (miny, maxy) = (a[1].min(b[1]), a[1].max(b[1]));
        // Rule 1.
        for cy in floor(miny) - 1..=ceil(maxy) {
            for cx in floor(minx) - 1..=ceil(maxx) {
                if !self.free(cx, cy) && Self::meets_interior(a, b, d, cx, cy) {
                    return false;
                }
            }
        }
        // Rule 2: along a horizontal grid line, then a vertical one.
        if a[1] == b[1] && a[1].rem_euclid(d) == 0 {
            let y = a[1] / d;
            for x in floor(minx)..ceil(maxx) {
                let (lo, hi) = ((x * d).max(minx), ((x + 1) * d).min(maxx));
                if lo < hi && !self.free(x, y - 1) && !self.free(x, y) {
                    return false;
                }
            }
        }
        if a[0] == b[0] && a[0].rem_euclid(d) == 0 {
            let x = a[0] / d;
            for y in floor(miny)..ceil(maxy) {
                let (lo, hi) = ((y * d).max(miny), ((y + 1) * d).min(maxy));
                if lo < hi && !self.free(x - 1, y) && !self.free(x, y) {
                    return false;
                }
            }
        }
        // Rule 3.
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        for vy in ceil(miny)..=floor(maxy) {
            for vx in ceil(minx)..=floor(maxx) {
                let (px, py) = (vx * d, vy * d);
                let on_line = (px - a[0]) * dy == (py - a[1]) * dx;
                let inside = (px - a[0]) * dx + (py - a[1]) * dy > 0
                    && (b[0] - px) * dx + (b[1] - py) * dy > 0;
                if on_line && inside && self.double_corner(vx, vy) {
                    return false;
                }
            }
        }
        true
    }
}

/// The brute-force answer for segment `a-b` on `grid`.
fn brute_visible(grid: &Grid, a: DVec2, b: DVec2) -> bool {
    let coords = [a.x, a.y, b.x, b.y].map(|v| dyadic(v).expect("decoded points are dyadic"));
    let shift = coords.iter().map(|c| c.1).max().unwrap_or(0);
    let [ax, ay, bx, by] = coords.map(|(n, s)| n << (shift - s));
    let brute = Brute {
        free: |x, y| grid.is_free_xy(x, y),
    };
    brute.visible([ax, ay], [bx, by], 1 << shift)
}

/// Runs the `los` check on one input.
///
/// # Panics
///
/// When [`line_of_sight`] disagrees with the brute force (or is not
/// symmetric), or the brute force disagrees with the reference.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let mut grid = input.grid();
    for _round in 0..2 {
        let reference = Reference::new(&grid);
        for _ in 0..=input.below(8) {
            let (w, h) = (grid.width(), grid.height());
            let a = input.point(w, h);
            // Often a short hop from `a`, so that visible segments are common.
            let b = if input.bit() {
                a + DVec2::new(
                    f64::from(input.below(9)) * 0.5 - 2.0,
                    f64::from(input.below(9)) * 0.5 - 2.0,
                )
            } else {
                input.point(w, h)
            };
            let expected = brute_visible(&grid, a, b);
            let got = line_of_sight(&grid, a, b);
            let back = line_of_sight(&grid, b, a);
            let theirs = reference.visible(a, b);
            assert!(
                got == expected && back == expected && theirs == Some(expected),
                "segment {a:?} - {b:?}: line_of_sight {got}, reversed {back}, brute force {expected}, \
                 reference {theirs:?}, on\n{}",
                reference.picture()
            );
        }
        if input.is_empty() {
            break;
        }
        let (w, h) = (grid.width(), grid.height());
        for _ in 0..=input.below(4) {
            let cell = UVec2::new(input.below(w), input.below(h));
            let free = input.bit();
            grid.set_free(cell, free).expect("a cell of the grid");
        }
    }
}
