//! Cone successors: a new root's first cones, and a cone node's interval
//! projected onto the next grid line, clipped, split at the corners there,
//! and pruned.

use core::cmp::Ordering;

use bevy_math::DVec2;

use super::follow::Follow;
use super::wedge::{Wedge, sgn, sgn_diff};
use super::{Anya, Turn};
use crate::search::anya::node::{Ep, Kind, Node, floor_of, int_of, small_int};
use crate::search::anya::scan;

/// Exact comparison of `an / ad` and `bn / bd` (`ad, bd > 0`): in `i64`
/// when the products fit, the usual case, else in `i128` (numerators may
/// approach 2^50 for coordinates up to 2^24).
#[inline]
fn frac_cmp(an: i64, ad: i64, bn: i64, bd: i64) -> Ordering {
    match (an.checked_mul(bd), bn.checked_mul(ad)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => (i128::from(an) * i128::from(bd)).cmp(&(i128::from(bn) * i128::from(ad))),
    }
}

/// One piece of a split cone interval (see [`Anya::split`]).
#[derive(Clone, Copy, Debug)]
struct Piece {
    /// Left endpoint.
    a: Ep,
    /// Right endpoint.
    b: Ep,
    /// The largest integer `<= a`.
    a_floor: i64,
    /// Whether `a == b`.
    zero: bool,
    /// Whether `a` is the whole interval's left end.
    first: bool,
    /// Whether `b` is the whole interval's right end.
    last: bool,
}

/// The larger of two endpoints on line `y` of a node rooted at `r`.
#[inline]
fn max_ep(a: Ep, b: Ep, r: DVec2, y: i64) -> Ep {
    if a.cmp(b, r, y) == Ordering::Less {
        b
    } else {
        a
    }
}

/// The smaller of two endpoints on line `y` of a node rooted at `r`.
#[inline]
fn min_ep(a: Ep, b: Ep, r: DVec2, y: i64) -> Ep {
    if a.cmp(b, r, y) == Ordering::Greater {
        b
    } else {
        a
    }
}

impl Anya<'_> {
    /// The free run of cell row `cy` around `x` (the cells whose closed
    /// square contains `(x, *)`, those that are free), as `[L, R]`.
    fn base_run(&self, cy: i64, x: f64) -> Option<(i64, i64)> {
        // `x` is on the grid: its cells are in -1..=width.
        let row = self.grid.row_words(cy);
        if let Some(k) = int_of(x) {
            let (lf, rf) = (scan::free_at(row, k - 1), scan::free_at(row, k));
            if !lf && !rf {
                return None;
            }
            let l = if lf { scan::run_left(row, k - 1) } else { k };
            let r = if rf { scan::run_right(row, k) } else { k };
            Some((l, r))
        } else {
            let k = floor_of(x);
            scan::free_at(row, k).then(|| (scan::run_left(row, k), scan::run_right(row, k)))
        }
    }

    /// The cone from new root `c` onto line `ny` (adjacent to `c`, in
    /// direction `dir`), limited to `wedge`.
    pub(super) fn cone_from_root(
        &mut self,
        c: DVec2,
        root: u32,
        g: f64,
        wedge: Wedge,
        dir: i8,
        ny: i64,
    ) {
        if !wedge.may_reach(c, dir) {
            return;
        }
        let cy = if dir > 0 { ny - 1 } else { ny };
        let Some((l, r)) = self.base_run(cy, c.x) else {
            return;
        };
        if let Wedge::Turn { p, s, f } = wedge
            && let Some(cut) = Self::turn_cut_int(c, p, s, f, dir, ny, l, r)
        {
            // As below: the goal test comes after the wedge's direction tests
            // and before the emptiness test; `c` is a vertex.
            let (reaches, cut) = cut;
            if reaches
                && self.goal_cell_row == Some(cy)
                && self.t.x >= l as f64
                && self.t.x <= r as f64
                && wedge.contains(c, self.t)
            {
                self.push_goal(root, c, g);
            }
            if let Some((lo, hi, zero, span)) = cut {
                self.split_onward(root, c, g, ny, dir, [lo, hi], zero, span);
            }
            return;
        }
        let (mut lo, mut hi) = (Ep::Int(l), Ep::Int(r));
        let d = f64::from(dir);
        match wedge {
            Wedge::Full => {}
            Wedge::SouthEast => {
                if dir < 0 {
                    return;
                }
                let k = c.x as i64;
                if k > l {
                    lo = Ep::Int(k);
                }
            }
            Wedge::Turn { p, s, f } => {
                // Bound from e = c - p: cross(e, (x - c.x, d)) = -e.y (x - x_e).
                let ey = sgn_diff(c.y, p.y);
                if ey == 0 {
                    if sgn_diff(c.x, p.x) * dir * s < 0 {
                        return;
                    }
                } else {
                    let bound = Ep::Line(p).normalized(c, ny);
                    if s * ey < 0 {
                        lo = max_ep(lo, bound, c, ny);
                    } else {
                        hi = min_ep(hi, bound, c, ny);
                    }
                }
                // Bound from f: cross((x - c.x, d), f) = (x - c.x) f.y - d f.x.
                if f[1] == 0 {
                    if -(d as i8) * f[0] * s < 0 {
                        return;
                    }
                } else {
                    let k = Ep::Int(c.x as i64);
                    if s * f[1] > 0 {
                        lo = max_ep(lo, k, c, ny);
                    } else {
                        hi = min_ep(hi, k, c, ny);
                    }
                }
            }
        }
        // A goal between c and the new line, seen from c (a start strictly
        // inside a cell row is the caller's direct-visibility case). The
        // wedge may leave the cell row through the run's ends before it
        // reaches the line, so this comes before the emptiness test.
        if int_of(c.y).is_some()
            && self.goal_cell_row == Some(cy)
            && self.t.x >= l as f64
            && self.t.x <= r as f64
            && wedge.contains(c, self.t)
        {
            self.push_goal(root, c, g);
        }
        let order = lo.cmp(hi, c, ny);
        if order == Ordering::Greater {
            return;
        }
        let span = (lo.int_above(c, ny), hi.int_below(c, ny));
        self.split_onward(
            root,
            c,
            g,
            ny,
            dir,
            [lo, hi],
            order == Ordering::Equal,
            span,
        );
    }

    /// [`Wedge::Turn`]'s cut of the run `[l, r]` of line `ny` for an integer
    /// corner `c` and previous root `p`, in exact i64 fractions: `None` when
    /// they are not integers (use the general path). Otherwise whether the
    /// wedge reaches line `ny` at all, and the cut unless it is empty: the
    /// interval, whether it is a single point, and the integers strictly
    /// inside it (as [`Anya::split`] takes them).
    #[expect(
        clippy::too_many_arguments,
        reason = "one wedge cut's full description"
    )]
    #[expect(clippy::type_complexity, reason = "a private fast path's result")]
    fn turn_cut_int(
        c: DVec2,
        p: DVec2,
        s: i8,
        f: [i8; 2],
        dir: i8,
        ny: i64,
        l: i64,
        r: i64,
    ) -> Option<(bool, Option<(Ep, Ep, bool, (i64, i64))>)> {
        let (cx, cy) = (small_int(c.x)?, small_int(c.y)?);
        let (px, py) = (small_int(p.x)?, small_int(p.y)?);
        // (endpoint, numerator, denominator > 0)
        let (mut lo, mut hi) = ((Ep::Int(l), l, 1i64), (Ep::Int(r), r, 1i64));
        let less = |a: (Ep, i64, i64), b: (Ep, i64, i64)| frac_cmp(a.1, a.2, b.1, b.2).is_lt();
        // Bound from e = c - p (see the general path below).
        let ey = sgn(cy.cmp(&py));
        if ey == 0 {
            if sgn(cx.cmp(&px)) * dir * s < 0 {
                return Some((false, None));
            }
        } else {
            let d = py - cy;
            let n = cx * d + (px - cx) * (ny - cy);
            let (n, d) = if d < 0 { (-n, -d) } else { (n, d) };
            let ep = if n % d == 0 {
                Ep::Int(n / d)
            } else {
                Ep::Line(p)
            };
            let bound = (ep, n, d);
            if s * ey < 0 {
                if less(lo, bound) {
                    lo = bound;
                }
            } else if less(bound, hi) {
                hi = bound;
            }
        }
        // Bound from f.
        if f[1] == 0 {
            if -dir * f[0] * s < 0 {
                return Some((false, None));
            }
        } else {
            let k = (Ep::Int(cx), cx, 1);
            if s * f[1] > 0 {
                if less(lo, k) {
                    lo = k;
                }
            } else if less(k, hi) {
                hi = k;
            }
        }
        if less(hi, lo) {
            return Some((true, None));
        }
        let zero = !less(lo, hi);
        let span = (lo.1.div_euclid(lo.2) + 1, (hi.1 - 1).div_euclid(hi.2));
        Some((true, Some((lo.0, hi.0, zero, span))))
    }

    /// [`Anya::split`], then, when that leaves a single piece with nothing
    /// to turn at, its projection at once (see [`Anya::project`]).
    #[expect(clippy::too_many_arguments, reason = "one cone's full description")]
    fn split_onward(
        &mut self,
        root: u32,
        r: DVec2,
        g: f64,
        ny: i64,
        dir: i8,
        ends: [Ep; 2],
        zero: bool,
        span: (i64, i64),
    ) {
        let before = self.scratch.succ.len();
        self.split(root, r, g, ny, dir, ends, zero, span);
        if let Some(only) = self.take_lone(before) {
            self.project(&only, dir);
        }
    }

    /// When the successors made since `succ` held `before` nodes are a
    /// single piece with nothing to turn at, takes it out to be projected at
    /// once (intermediate pruning) and counts it as expanded; drops it
    /// instead when its `f` exceeds [`Anya::best_goal`].
    fn take_lone(&mut self, before: usize) -> Option<Node> {
        match self.scratch.succ[before..] {
            [only] if !only.turn_a && !only.turn_b => {
                self.scratch.succ.pop();
                self.stats.generated += 1;
                if self.best_goal < f64::INFINITY && self.f_value(&only) > self.best_goal {
                    return None;
                }
                self.record(&only);
                Some(only)
            }
            _ => None,
        }
    }

    /// Splits the visible interval `[lo, hi]` of line `ny` (reached from root
    /// `r` heading `dir`) at every corner of the line, and emits the pieces.
    /// `zero`: whether `lo == hi`; `span`: the smallest integer above `lo`
    /// and the largest below `hi` (the callers know them).
    #[expect(clippy::too_many_arguments, reason = "one cone's full description")]
    pub(super) fn split(
        &mut self,
        root: u32,
        r: DVec2,
        g: f64,
        ny: i64,
        dir: i8,
        [lo, hi]: [Ep; 2],
        zero: bool,
        span: (i64, i64),
    ) {
        // Cells in the row beyond the line; the row before is free over
        // [lo, hi], so the corners inside are exactly its changes.
        let far = if dir > 0 { ny } else { ny - 1 };
        let far_row = self.grid.row_words(far);
        let (mut from, to) = span;
        let mut a = lo;
        let mut first = true;
        loop {
            let next = scan::next_transition(far_row, from, to);
            let b = next.map_or(hi, Ep::Int);
            // floor(a) = from - 1: `lo`'s floor on the first piece, the corner
            // `k` after. Only a single piece can be empty (corners lie strictly
            // between `lo` and `hi`).
            let piece = Piece {
                a,
                b,
                a_floor: from - 1,
                zero: zero && first,
                first,
                last: next.is_none(),
            };
            self.piece(root, r, g, ny, dir, piece, far_row);
            match next {
                Some(k) => {
                    a = Ep::Int(k);
                    from = k + 1;
                    first = false;
                }
                None => break,
            }
        }
    }

    /// Emits one cone piece `[a, b]` of line `ny` (cells beyond it uniform),
    /// after goal detection and cul-de-sac pruning.
    #[expect(
        clippy::too_many_arguments,
        reason = "one cone piece's full description"
    )]
    fn piece(
        &mut self,
        root: u32,
        r: DVec2,
        g: f64,
        ny: i64,
        dir: i8,
        piece: Piece,
        far_row: &[u64],
    ) {
        let Piece {
            a,
            b,
            a_floor,
            zero,
            first,
            last,
        } = piece;
        if self.goal_line == Some(ny)
            && a.cmp_point(r, self.t) != Ordering::Greater
            && b.cmp_point(r, self.t) != Ordering::Less
        {
            self.push_goal(root, r, g);
        }
        // `a_floor` is a cell of the line's width: `far_row` holds it.
        let onward = !zero && scan::free_at(far_row, a_floor);
        // A corner between two pieces turns with the piece that has free
        // cells beyond; the ends of the whole interval turn with their piece.
        let wedge_a = match a {
            Ep::Int(k) if onward || first => self.taut_turn([k, ny], r),
            _ => None,
        };
        let wedge_b = match b {
            Ep::Int(k) if !zero && (onward || last) => self.taut_turn([k, ny], r),
            _ => None,
        };
        let (turn_a, turn_b) = (wedge_a.is_some(), wedge_b.is_some());
        if !(onward || turn_a || turn_b) {
            return; // cul-de-sac
        }
        if self.eager {
            if let (Some(wedge), Ep::Int(k)) = (wedge_a, a) {
                self.scratch.turns.push(Turn {
                    v: [k, ny],
                    root,
                    r,
                    g,
                    wedge,
                });
            }
            if a != b
                && let (Some(wedge), Ep::Int(k)) = (wedge_b, b)
            {
                self.scratch.turns.push(Turn {
                    v: [k, ny],
                    root,
                    r,
                    g,
                    wedge,
                });
            }
            if !onward {
                return;
            }
        }
        let (turn_a, turn_b) = if self.eager {
            (false, false)
        } else {
            (turn_a, turn_b)
        };
        self.scratch.succ.push(Node {
            root,
            r,
            g,
            y: ny,
            a,
            b,
            a_floor,
            kind: Kind::Cone { dir },
            turn_a,
            turn_b,
            onward,
        });
    }

    /// Observable successors of a cone node: its interval projected onto the
    /// next line, clipped to the free run below (or above) it. A projection
    /// that leaves a single piece with nothing to turn at (the paper's
    /// intermediate pruning, applied to each projection as the paper's code
    /// does) is projected again at once instead of being queued.
    pub(super) fn project(&mut self, n: &Node, dir: i8) {
        let mut current = *n;
        loop {
            let before = self.scratch.succ.len();
            match self.follow_lone(&current, dir) {
                Follow::Empty => return,
                Follow::At(next) => {
                    current = next;
                    self.project_once(&current, dir);
                }
                Follow::Split => {}
            }
            match self.take_lone(before) {
                Some(only) => current = only,
                None => return,
            }
        }
    }

    /// One projection of cone node `n` (see [`Anya::project`]).
    fn project_once(&mut self, n: &Node, dir: i8) {
        let (r, y) = (n.r, n.y);
        let ny = y + i64::from(dir);
        let cy = if dir > 0 { y } else { y - 1 };
        let k = n.a_floor;
        let row = self.grid.row_words(cy);
        let (l, rr) = (scan::run_left(row, k), scan::run_right(row, k));
        let (la, lb) = (n.a.as_line(r, y), n.b.as_line(r, y));
        if self.goal_cell_row == Some(cy)
            && self.t.x >= l as f64
            && self.t.x <= rr as f64
            && la.cmp_point(r, self.t) != Ordering::Greater
            && lb.cmp_point(r, self.t) != Ordering::Less
        {
            self.push_goal(n.root, r, n.g);
        }
        // An integer root and integer endpoint points (the usual case) give
        // the projected endpoints as exact fractions; clip them in i64.
        let fast = small_int(r.x).zip(small_int(r.y)).and_then(|(rx, ry)| {
            Some((
                n.a.project_int(rx, ry, y, ny)?,
                n.b.project_int(rx, ry, y, ny)?,
            ))
        });
        if let Some(((ea, na, da), (eb, nb, db))) = fast {
            let (lo, nlo, dlo) = if na < l * da {
                (Ep::Int(l), l, 1)
            } else {
                (ea, na, da)
            };
            let (hi, nhi, dhi) = if nb > rr * db {
                (Ep::Int(rr), rr, 1)
            } else {
                (eb, nb, db)
            };
            let order = frac_cmp(nlo, dlo, nhi, dhi);
            if order == Ordering::Greater {
                return;
            }
            // The smallest integer above lo and the largest below hi.
            let span = (nlo.div_euclid(dlo) + 1, (nhi - 1).div_euclid(dhi));
            let zero = order == Ordering::Equal;
            self.split(n.root, r, n.g, ny, dir, [lo, hi], zero, span);
            return;
        }
        let lo = max_ep(la.normalized(r, ny), Ep::Int(l), r, ny);
        let hi = min_ep(lb.normalized(r, ny), Ep::Int(rr), r, ny);
        let order = lo.cmp(hi, r, ny);
        if order == Ordering::Greater {
            return;
        }
        let span = (lo.int_above(r, ny), hi.int_below(r, ny));
        self.split(
            n.root,
            r,
            n.g,
            ny,
            dir,
            [lo, hi],
            order == Ordering::Equal,
            span,
        );
    }
}

#[cfg(test)]
mod tests {
    use core::cmp::Ordering;

    use super::frac_cmp;
    use crate::test_rng::Rng;

    /// Fraction comparisons agree with `i128` cross products, for small
    /// values and for products that overflow `i64`.
    #[test]
    fn fraction_comparisons_are_exact() {
        let mut rng = Rng(0x0f4a_c7e5);
        for round in 0..4000 {
            // Numerators up to 2^50 and denominators up to 2^25 in half the
            // rounds: their products leave i64.
            let (nb, db) = if round % 2 == 0 { (50, 25) } else { (12, 6) };
            // A uniform value of `bits` bits.
            let mut draw = |bits: u32| {
                let v = u64::from(rng.below(u32::MAX)) << 32 | u64::from(rng.below(u32::MAX));
                (v >> (64 - bits)) as i64
            };
            let (an, bn) = (draw(nb) - (1 << (nb - 1)), draw(nb) - (1 << (nb - 1)));
            let (ad, bd) = (draw(db) + 1, draw(db) + 1);
            let want = (i128::from(an) * i128::from(bd)).cmp(&(i128::from(bn) * i128::from(ad)));
            assert_eq!(frac_cmp(an, ad, bn, bd), want, "{an}/{ad} vs {bn}/{bd}");
            assert_eq!(frac_cmp(an, ad, an, ad), Ordering::Equal);
        }
    }
}
