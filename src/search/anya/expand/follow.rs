//! A cone followed line by line while each projection leaves a lone piece,
//! its edges kept as exact crossings of the grid lines, without building
//! nodes.

use core::cmp::Ordering;

use bevy_math::DVec2;

use super::{Anya, Turn};
use crate::search::anya::node::{Ep, Node, small_int};
use crate::search::anya::scan;

/// Where a cone edge crosses successive grid lines: `q + rem / den`, with
/// `0 <= rem < den`, and the exact step `s / den` to the next line, divided
/// out only when first taken (most edges are followed for one line).
#[derive(Clone, Copy, Debug)]
struct Crossing {
    q: i64,
    rem: i64,
    den: i64,
    /// The step's numerator.
    s: i64,
    /// The step as `(quotient, remainder)`, once taken.
    step: Option<(i64, i64)>,
}

impl Crossing {
    /// The crossing `n / den` and the step `s / den` per line (`den > 0`).
    #[inline]
    fn new(n: i64, s: i64, den: i64) -> Self {
        Crossing {
            q: n.div_euclid(den),
            rem: n.rem_euclid(den),
            den,
            s,
            step: None,
        }
    }

    /// The crossing with the next line.
    #[inline]
    fn stepped(&mut self) -> Self {
        let (step_q, step_rem) = *self
            .step
            .get_or_insert_with(|| (self.s.div_euclid(self.den), self.s.rem_euclid(self.den)));
        let mut c = *self;
        c.q += step_q;
        c.rem += step_rem;
        if c.rem >= c.den {
            c.rem -= c.den;
            c.q += 1;
        }
        c
    }

    #[inline]
    fn floor(self) -> i64 {
        self.q
    }

    #[inline]
    fn ceil(self) -> i64 {
        self.q + i64::from(self.rem != 0)
    }

    /// Approximately, for traces.
    fn x(self) -> f64 {
        self.q as f64 + self.rem as f64 / self.den as f64
    }

    /// Exact comparison.
    #[inline]
    fn cmp(self, other: Crossing) -> Ordering {
        // rem < den <= 2^25 for coordinates up to 2^24: no overflow.
        self.q
            .cmp(&other.q)
            .then_with(|| (self.rem * other.den).cmp(&(other.rem * self.den)))
    }
}

/// One edge of a cone followed line by line (see [`Anya::follow_lone`]):
/// where it crosses the current line, and a vertex of it other than the
/// root.
#[derive(Clone, Copy, Debug)]
struct Edge {
    at: Crossing,
    o: [i64; 2],
}

impl Edge {
    /// The edge through integer root `(rx, ry)` and vertex `o`, crossing
    /// line `y`, stepping `dir` lines at a time (`o` off the root's row).
    #[inline]
    fn through(rx: i64, ry: i64, o: [i64; 2], y: i64, dir: i8) -> Self {
        let den = o[1] - ry;
        let n = rx * den + (o[0] - rx) * (y - ry);
        let s = (o[0] - rx) * i64::from(dir);
        let at = if den < 0 {
            Crossing::new(-n, -s, -den)
        } else {
            Crossing::new(n, s, den)
        };
        Edge { at, o }
    }

    /// [`Edge::through`] vertex `o`, crossing `o`'s own line (no division).
    #[inline]
    fn at_vertex(rx: i64, ry: i64, o: [i64; 2], dir: i8) -> Self {
        let den = o[1] - ry;
        let s = (o[0] - rx) * i64::from(dir);
        let (s, den) = if den < 0 { (-s, -den) } else { (s, den) };
        Edge {
            at: Crossing {
                q: o[0],
                rem: 0,
                den,
                s,
                step: None,
            },
            o,
        }
    }

    /// Where the edge through endpoint `e` of a node on line `y` crosses
    /// the next line (`y + dir`), if `e`'s point is a vertex.
    #[inline]
    fn next_of(e: Ep, y: i64, rx: i64, ry: i64, dir: i8) -> Option<Self> {
        let o = match e {
            Ep::Int(k) => [k, y],
            Ep::Line(p) => [small_int(p.x)?, small_int(p.y)?],
            Ep::Root => return None,
        };
        Some(Edge::through(rx, ry, o, y + i64::from(dir), dir))
    }

    /// The same edge on the next line.
    #[inline]
    fn stepped(&mut self) -> Self {
        Edge {
            at: self.at.stepped(),
            o: self.o,
        }
    }

    /// The endpoint in canonical form.
    #[inline]
    fn ep(self) -> Ep {
        if self.at.rem == 0 {
            Ep::Int(self.at.q)
        } else {
            Ep::Line(DVec2::new(self.o[0] as f64, self.o[1] as f64))
        }
    }
}

/// Where [`Anya::follow_lone`] left a cone.
pub(super) enum Follow {
    /// Its projection is empty: it has no successors.
    Empty,
    /// At this node, to be projected by the general projection.
    At(Node),
    /// Its last projection is made: its pieces are in `succ`.
    Split,
}

impl Anya<'_> {
    /// Projects cone node `n` line after line while each projection leaves a
    /// lone piece that intermediate pruning would take at once, the usual
    /// case, without building nodes: each edge of the cone is an exact
    /// fraction moved by an integer step per line (a division only where a
    /// run clips the interval and the edge changes). Where a projection
    /// splits, has nothing beyond it, is a single point or turns outside an
    /// eager expansion, makes its pieces from the edges it has and gives
    /// [`Follow::Split`]; gives the node to project in the general way
    /// before a projection that sweeps the goal's lines, and `n` itself
    /// when the root or an endpoint point is not integer (rare).
    pub(super) fn follow_lone(&mut self, n: &Node, dir: i8) -> Follow {
        let (Some(rx), Some(ry)) = (small_int(n.r.x), small_int(n.r.y)) else {
            return Follow::At(*n);
        };
        let d = i64::from(dir);
        let mut y = n.y;
        let sweeps_goal = |anya: &Self, ny: i64| {
            anya.goal_line == Some(ny) || anya.goal_cell_row == Some(ny.min(ny - d))
        };
        if sweeps_goal(self, y + d) {
            return Follow::At(*n);
        }
        // The cone's edges where they cross the next line, and the cell of
        // the current line's left end.
        let (Some(mut na), Some(mut nb)) = (
            Edge::next_of(n.a, n.y, rx, ry, dir),
            Edge::next_of(n.b, n.y, rx, ry, dir),
        ) else {
            return Follow::At(*n);
        };
        let mut k = n.a_floor;
        // Cells of the next cell row known to be free (the last line's
        // cells beyond).
        let mut known: Option<(i64, i64)> = None;
        let grid = self.grid;
        // The cell row crossed next; each line's row beyond is the next
        // line's row crossed.
        let mut row = grid.row_words(if dir > 0 { y } else { y + d });
        loop {
            let ny = y + d;
            let far = if dir > 0 { ny } else { ny - 1 };
            let far_row = grid.row_words(far);
            let (mut lo, mut hi) = (na, nb);
            // The run of the crossed cell row holding cell `k` clips the
            // projection unless every cell from `k` to the projected
            // interval is free, the usual case.
            let (from, to) = (na.at.floor().min(k), (nb.at.ceil() - 1).max(k));
            let open = match known {
                Some((kf, kt)) => {
                    scan::all_free(row, from, kf - 1) && scan::all_free(row, kt + 1, to)
                }
                None => scan::all_free(row, from, to),
            };
            if !open {
                let (l, rr) = (scan::run_left(row, k), scan::run_right(row, k));
                if na.at.q < l {
                    lo = Edge::at_vertex(rx, ry, [l, ny], dir);
                }
                if nb.at.ceil() > rr {
                    hi = Edge::at_vertex(rx, ry, [rr, ny], dir);
                }
            }
            // Where the general projection would take over on this line,
            // its pieces are made from the edges found here.
            let split = |anya: &mut Self, zero: bool| {
                let span = (lo.at.floor() + 1, hi.at.ceil() - 1);
                anya.split(n.root, n.r, n.g, ny, dir, [lo.ep(), hi.ep()], zero, span);
                Follow::Split
            };
            match lo.at.cmp(hi.at) {
                Ordering::Greater => return Follow::Empty,
                Ordering::Equal => return split(self, true),
                Ordering::Less => {}
            }
            if self.best_goal < f64::INFINITY && self.beyond_goal(n, ny, lo, hi) {
                return Follow::Empty;
            }
            // A lone piece with free cells beyond: no corner of line `ny`
            // strictly inside, and the first cell beyond free.
            let (a_floor, b_ceil) = (lo.at.floor(), hi.at.ceil());
            if !scan::all_free(far_row, a_floor, b_ceil - 1) {
                return split(self, false);
            }
            known = Some((a_floor, b_ceil - 1));
            // An end on a vertex has its inner cells free on both sides of
            // the line; it can only be a corner if exactly one outer cell is
            // blocked.
            let wedge_a = if lo.at.rem == 0
                && scan::free_at(row, a_floor - 1) != scan::free_at(far_row, a_floor - 1)
            {
                self.taut_turn([a_floor, ny], n.r)
            } else {
                None
            };
            let wedge_b =
                if hi.at.rem == 0 && scan::free_at(row, b_ceil) != scan::free_at(far_row, b_ceil) {
                    self.taut_turn([b_ceil, ny], n.r)
                } else {
                    None
                };
            if (wedge_a.is_some() || wedge_b.is_some()) && !self.eager {
                return split(self, false);
            }
            for (v, wedge) in [([a_floor, ny], wedge_a), ([b_ceil, ny], wedge_b)] {
                if let Some(wedge) = wedge {
                    self.scratch.turns.push(Turn {
                        v,
                        root: n.root,
                        r: n.r,
                        g: n.g,
                        wedge,
                    });
                }
            }
            self.stats.generated += 1;
            self.stats.expanded += 1;
            if let Some(trace) = self.trace.as_deref_mut() {
                trace.interval(ny as u32, lo.at.x(), hi.at.x(), n.r);
            }
            y = ny;
            if sweeps_goal(self, y + d) {
                return Follow::At(Node {
                    y,
                    a: lo.ep(),
                    b: hi.ep(),
                    a_floor: lo.at.floor(),
                    turn_a: false,
                    turn_b: false,
                    onward: true,
                    ..*n
                });
            }
            k = lo.at.floor();
            (na, nb) = (lo.stepped(), hi.stepped());
            row = far_row;
        }
    }

    /// Whether the interval `[lo, hi]` of line `ny`, seen from `n`'s root,
    /// has an `f` above [`Anya::best_goal`]: then neither it nor anything
    /// beyond it is needed. A cheap lower bound (the root's distance to the
    /// line plus the line's distance to the goal, across the lines) answers
    /// most lines; the exact `f` the others.
    fn beyond_goal(&self, n: &Node, ny: i64, lo: Edge, hi: Edge) -> bool {
        let y = ny as f64;
        if n.g + (y - n.r.y).abs() + (y - self.t.y).abs() > self.best_goal {
            return true;
        }
        let line = Node {
            y: ny,
            a: lo.ep(),
            b: hi.ep(),
            ..*n
        };
        self.f_value(&line) > self.best_goal
    }
}

#[cfg(test)]
mod tests {
    use core::cmp::Ordering;

    use super::{Crossing, Edge};
    use crate::test_rng::Rng;

    /// Stepping a crossing line after line gives the exact floor and
    /// remainder of the crossing each line, and comparisons are exact.
    #[test]
    fn crossings_step_and_compare_exactly() {
        let mut rng = Rng(0xdec0_de01);
        let int = |rng: &mut Rng, n: u32| i64::from(rng.below(2 * n + 1)) - i64::from(n);
        for _ in 0..2000 {
            let (rx, ry) = (int(&mut rng, 300), int(&mut rng, 300));
            let o = [int(&mut rng, 300), ry + int(&mut rng, 40)];
            if o[1] == ry {
                continue;
            }
            let dir = if rng.below(2) == 0 { -1i8 } else { 1 };
            let y = ry + int(&mut rng, 40);
            let mut e = Edge::through(rx, ry, o, y, dir).at;
            for k in 0..30 {
                let line = y + k * i64::from(dir);
                // x = rx + (ox - rx) (line - ry) / (oy - ry), as a fraction.
                let (mut n, mut d) = (rx * (o[1] - ry) + (o[0] - rx) * (line - ry), o[1] - ry);
                if d < 0 {
                    (n, d) = (-n, -d);
                }
                assert_eq!((e.q, e.rem, e.den), (n.div_euclid(d), n.rem_euclid(d), d));
                assert_eq!(e.ceil(), n.div_euclid(d) + i64::from(n % d != 0));
                e = e.stepped();
            }
        }
        for _ in 0..2000 {
            let a = Crossing::new(int(&mut rng, 500), 0, i64::from(rng.below(30)) + 1);
            let b = Crossing::new(int(&mut rng, 500), 0, i64::from(rng.below(30)) + 1);
            let want = (i128::from(a.q * a.den + a.rem) * i128::from(b.den))
                .cmp(&(i128::from(b.q * b.den + b.rem) * i128::from(a.den)));
            assert_eq!(a.cmp(b), want);
            assert_eq!(b.cmp(a), want.reverse());
            assert_eq!(a.cmp(a), Ordering::Equal);
        }
    }
}
