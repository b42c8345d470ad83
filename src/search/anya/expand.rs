//! Successors of Anya's search nodes (Algorithm 1 and Appendix Algorithm 4 of
//! the paper), with cul-de-sac pruning, goal detection for any goal point,
//! and the strict visibility rules of `SPEC.md`.
//!
//! # Successors
//!
//! - A *cone* node `(I, r)` on line `y` heading to line `y + dir` projects `I`
//!   through the cell row in between: the projected interval is clipped by
//!   the free run of that cell row and split at every corner of the new line
//!   (observable successors, same root). Each interval endpoint that is a
//!   corner where a taut path may turn becomes a new root (non-observable
//!   successors).
//! - A *flat* node runs along its line up to the next corner whose blocked
//!   cell lies behind; there it continues (same root) and turns (new root).
//! - A new root `c` (the start, or a corner reached from root `p`) sends
//!   successors into a *wedge* of directions: the whole plane for a start,
//!   its south-east quadrant for a start on a double corner, and for a corner
//!   the directions between the extension of `p -> c` and the blocked cell's
//!   edge, which are the only ones in which a path turning at `c` is taut.
//!
//! # Goals anywhere
//!
//! The paper's target is a vertex, found in an interval. Here a goal on a
//! grid line is found the same way, and a goal strictly inside a cell row is
//! found by the nodes that sweep that row: a cone node's projection (its
//! trapezoid between two lines) or a new root's first cone (its triangle).
//! Either pushes a *goal node* with `f = g(root) + |root goal|`, an exact
//! path length, and the search ends when a goal node is popped, as in A*.

use core::cmp::Ordering;

use bevy_math::DVec2;

use super::node::{Ep, Kind, Node, ceil_of, floor_of, int_of, orient, small_int};
use super::scan;
use super::{RootState, Roots, Scratch};
use crate::grid::Grid;
use crate::search::endpoint::Endpoint;
use crate::search::heap::OpenEntry;
use crate::search::{SearchStats, SearchTrace};

/// The directions a new root sends successors into.
#[derive(Clone, Copy, Debug)]
pub(super) enum Wedge {
    /// Every direction (a start that is not on a double corner).
    Full,
    /// Right, down and everything between (a start on a double corner).
    SouthEast,
    /// Directions `v` with `s cross(e, v) >= 0` and `s cross(v, f) >= 0`,
    /// where `e = c - p` continues the incoming segment and `f` runs along
    /// the blocked cell's edge.
    Turn {
        /// The previous root.
        p: DVec2,
        /// `+1` or `-1`: which way the path turns.
        s: i8,
        /// Unit axis direction of the blocked cell's edge.
        f: [i8; 2],
    },
}

/// The sign of an ordering as `-1`, `0` or `+1`.
#[inline]
fn sgn(o: Ordering) -> i8 {
    o as i8
}

/// The sign of `a - b` as `-1`, `0` or `+1` (`a`, `b` finite).
#[inline]
fn sgn_diff(a: f64, b: f64) -> i8 {
    i8::from(a > b) - i8::from(a < b)
}

/// The sign of `v` as `-1`, `0` or `+1` (`v` finite).
#[inline]
fn sgn_f(v: f64) -> i8 {
    sgn_diff(v, 0.0)
}

impl Wedge {
    /// Whether the direction from root `c` to point `q` is in the wedge.
    fn contains(self, c: DVec2, q: DVec2) -> bool {
        match self {
            Wedge::Full => true,
            Wedge::SouthEast => q.x >= c.x && q.y >= c.y,
            Wedge::Turn { p, s, f } => {
                // cross(c - p, q - c) = cross(c - p, q - p).
                if sgn(orient(p, c, q)) * s < 0 {
                    return false;
                }
                // cross(q - c, f) for an axis-aligned f.
                let cross = if f[0] == 0 {
                    sgn_f(q.x - c.x) * f[1]
                } else {
                    -sgn_f(q.y - c.y) * f[0]
                };
                cross * s >= 0
            }
        }
    }

    /// Whether the wedge from root `c` may reach the grid line next to `c`
    /// in direction `dir` (`false` only when a turn's wedge points away from
    /// it: the direction tests of [`Anya::cone_from_root`], before any
    /// scan).
    #[inline]
    fn may_reach(self, c: DVec2, dir: i8) -> bool {
        match self {
            Wedge::Turn { p, s, f } => {
                !((c.y == p.y && sgn_diff(c.x, p.x) * dir * s < 0)
                    || (f[1] == 0 && -dir * f[0] * s < 0))
            }
            _ => true,
        }
    }

    /// [`Wedge::contains`] for the direction `(dir, 0)` along root `c`'s
    /// grid line, without arithmetic on points.
    #[inline]
    fn contains_along_x(self, c: DVec2, dir: i8) -> bool {
        match self {
            Wedge::Full => true,
            Wedge::SouthEast => dir > 0,
            Wedge::Turn { p, s, f } => {
                // cross(c - p, (dir, 0)) = -dir (c.y - p.y), exact in sign.
                if -dir * sgn_diff(c.y, p.y) * s < 0 {
                    return false;
                }
                // cross((dir, 0), f) = dir f.y.
                dir * f[1] * s >= 0
            }
        }
    }
}

/// For each mask of four cells' free flags (see [`Grid::vertex_mask`]),
/// the bit of the one blocked cell when exactly one is blocked, else 4.
const LONE_BLOCKED: [u8; 16] = {
    let mut table = [4u8; 16];
    let mut bit = 0;
    while bit < 4 {
        table[0xF ^ (1 << bit)] = bit as u8;
        bit += 1;
    }
    table
};

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
enum Follow {
    /// Its projection is empty: it has no successors.
    Empty,
    /// At this node, to be projected by the general projection.
    At(Node),
    /// Its last projection is made: its pieces are in `succ`.
    Split,
}

/// A turn at corner `v` found while expanding a node, made once the
/// expansion is done (see [`Anya::eager`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Turn {
    v: [i64; 2],
    root: u32,
    r: DVec2,
    g: f64,
    /// The taut wedge at `v` (see [`Anya::taut_turn`]).
    wedge: Wedge,
}

/// One query's search: the grid, the goal, and the scratch memory.
pub(super) struct Anya<'a> {
    /// The grid searched.
    pub grid: &'a Grid,
    /// The goal endpoint (its double-corner restriction).
    pub goal: &'a Endpoint,
    /// The goal point.
    pub t: DVec2,
    /// The goal's grid line, if it is on one.
    pub goal_line: Option<i64>,
    /// The goal's cell row, if it is strictly inside one.
    pub goal_cell_row: Option<i64>,
    /// Root history, node arena, open list.
    pub scratch: &'a mut Scratch,
    /// Counters of the query.
    pub stats: &'a mut SearchStats,
    /// Where to record the intervals expanded, if anywhere.
    pub trace: Option<&'a mut SearchTrace>,
    /// Whether the pieces being emitted turn at once: a node's projected
    /// pieces (and its flat continuation) hand their corners to
    /// [`Scratch::turns`], and the new roots' successors are made in the same
    /// expansion, as the paper's non-observable successors are, instead of
    /// queueing the piece only to turn when it is popped. The new roots'
    /// own pieces turn when they are popped (`false`), so one expansion
    /// goes one turn deep.
    pub eager: bool,
    /// The length of the shortest path to the goal found so far (the
    /// smallest `g` of a goal node pushed), infinite until one is: a node
    /// whose `f` exceeds it can never be popped before that goal node, so it
    /// is dropped, and the work it would lead to is not done (see
    /// [`Anya::beyond_goal`]).
    pub best_goal: f64,
}

impl Anya<'_> {
    /// Vertex `(x, y)` as a point.
    #[inline]
    fn vpoint(x: i64, y: i64) -> DVec2 {
        DVec2::new(x as f64, y as f64)
    }

    /// `f` of a node: `g` plus the shortest way through the interval to the
    /// goal, by Lemmas 1 and 2 (the goal mirrored through the interval's line
    /// when it lies on the root's side).
    fn f_value(&self, n: &Node) -> f64 {
        let (r, t) = (n.r, self.t);
        let y = n.y as f64;
        let (xa, xb) = (n.a.x(r, y), n.b.x(r, y));
        let (lo, hi) = (xa.min(xb), xa.max(xb));
        let x = match n.kind {
            Kind::Goal => return n.g,
            Kind::Flat { .. } => r.x,
            Kind::Cone { .. } => {
                let ty = if (t.y - y) * (r.y - y) > 0.0 {
                    2.0 * y - t.y
                } else {
                    t.y
                };
                // r and the (mirrored) goal are on opposite sides of the line
                // or the goal is on it: ty - r.y is never 0.
                r.x + (t.x - r.x) * (y - r.y) / (ty - r.y)
            }
        };
        let p = DVec2::new(x.clamp(lo, hi), y);
        n.g + r.distance(p) + p.distance(t)
    }

    /// Puts a node on the open list.
    pub(super) fn push(&mut self, n: Node) {
        let f = self.f_value(&n);
        if f > self.best_goal {
            self.stats.generated += 1;
            return;
        }
        let id = self.scratch.nodes.len() as u32;
        self.scratch.nodes.push(n);
        // Ties pop the larger `g` first, so a goal node (`g = f`) wins.
        self.scratch.open.push(OpenEntry {
            f,
            g: n.g,
            node: id,
        });
        self.stats.generated += 1;
        self.stats.pushed += 1;
    }

    /// Pushes a goal node: the goal seen from root `r`.
    fn push_goal(&mut self, root: u32, r: DVec2, g: f64) {
        if !self.goal.allows_towards(r) {
            return;
        }
        let g = g + r.distance(self.t);
        if g > self.best_goal {
            return;
        }
        self.best_goal = g;
        self.push(Node {
            root,
            r,
            g,
            y: 0,
            a: Ep::Int(0),
            b: Ep::Int(0),
            a_floor: 0,
            kind: Kind::Goal,
            turn_a: false,
            turn_b: false,
            onward: false,
        });
    }

    /// The free flags of the four cells around vertex `(x, y)` (see
    /// [`Grid::vertex_mask`]), read from the grid's precomputed vertex info
    /// when the vertex is on the grid (always, for interval endpoints).
    #[expect(
        clippy::inline_always,
        reason = "measured: plain `inline` left it a call on the hottest path"
    )]
    #[inline(always)]
    fn mask(&self, x: i64, y: i64) -> u8 {
        let (w, h) = (u64::from(self.grid.width()), u64::from(self.grid.height()));
        // One unsigned comparison per axis: negative values wrap above.
        if x as u64 <= w && y as u64 <= h {
            (self.grid.vertex_info(x, y) >> 8) as u8
        } else {
            self.grid.vertex_mask(x, y)
        }
    }

    /// Whether corner candidate `v` is a vertex where a taut path from `r`
    /// may turn: exactly one of its cells is blocked, the incoming segment
    /// neither points into that cell nor runs along its edge, and the cell is
    /// strictly on one side of the incoming line. Returns the wedge.
    #[expect(
        clippy::inline_always,
        reason = "measured: most calls end at the first test, cheaper than a call"
    )]
    #[inline(always)]
    fn taut_turn(&self, v: [i64; 2], r: DVec2) -> Option<Wedge> {
        // Quadrant of the blocked cell: 0 = (x-1, y-1), 1 = (x, y-1),
        // 2 = (x-1, y), 3 = (x, y). Most candidates are no corner: this
        // test stays inline, the rest is a call.
        let blocked = LONE_BLOCKED[usize::from(self.mask(v[0], v[1]) & 0xF)];
        if blocked > 3 {
            return None;
        }
        Self::corner_wedge(v, r, blocked)
    }

    /// [`Anya::taut_turn`] at a vertex whose only blocked cell is in
    /// quadrant `blocked`.
    #[inline(never)]
    fn corner_wedge(v: [i64; 2], r: DVec2, blocked: u8) -> Option<Wedge> {
        let sx: i8 = if blocked & 1 == 1 { 1 } else { -1 };
        let sy: i8 = if blocked & 2 == 2 { 1 } else { -1 };
        let vp = Self::vpoint(v[0], v[1]);
        let (dx, dy) = (vp.x - r.x, vp.y - r.y);
        let (ex, ey) = (sgn_f(dx), sgn_f(dy));
        // Into the blocked cell, or along one of its edges.
        if (ey == sy && (ex == sx || ex == 0)) || (ey == 0 && ex == sx) {
            return None;
        }
        // The side of the incoming line the cell is on: the sign of
        // cross(v - r, centre - v) = (sy dx - sx dy) / 2. The differences
        // are exact for a vertex root (almost always); otherwise each is
        // within one rounding of the truth, and a result within the bound
        // of that error is decided exactly.
        let t = f64::from(sy) * dx - f64::from(sx) * dy;
        let s = if t.abs() > 1e-15 * (dx.abs() + dy.abs()) {
            sgn_f(t)
        } else {
            let centre = DVec2::new(vp.x + 0.5 * f64::from(sx), vp.y + 0.5 * f64::from(sy));
            sgn(orient(r, vp, centre))
        };
        if s == 0 {
            return None;
        }
        // Rotating from e towards the cell, the first of its two edges met is
        // the one with the cell on its `s` side.
        let f = if sx * sy == s { [sx, 0] } else { [0, sy] };
        Some(Wedge::Turn { p: r, s, f })
    }

    /// Turns at corner `v` coming from root `root` (point `r`, cost `g`):
    /// if this improves `v`'s entry in the root history, sends successors
    /// into the taut wedge.
    fn turn(&mut self, v: [i64; 2], root: u32, r: DVec2, g: f64) {
        if let Some(wedge) = self.taut_turn(v, r) {
            self.turn_into(v, root, r, g, wedge);
        }
    }

    /// [`Anya::turn`] at a corner whose taut wedge is known.
    fn turn_into(&mut self, v: [i64; 2], root: u32, r: DVec2, g: f64, wedge: Wedge) {
        let vp = Self::vpoint(v[0], v[1]);
        let gv = g + r.distance(vp);
        // Every path on from `v` is at least this long.
        if self.best_goal < f64::INFINITY && gv + vp.distance(self.t) > self.best_goal {
            return;
        }
        let id = self.scratch.vertex_id(v[0], v[1]);
        if !self.scratch.roots.improve(id, gv, root) {
            return;
        }
        self.seed_root(vp, id, gv, wedge);
    }

    /// Successors of a new root `c` (id `root`, cost `g`) in `wedge`: cones
    /// onto the grid lines above and below and flats along its own line.
    pub(super) fn seed_root(&mut self, c: DVec2, root: u32, g: f64, wedge: Wedge) {
        let height = i64::from(self.grid.height());
        if let Some(y) = int_of(c.y) {
            for dir in [-1i8, 1] {
                let ny = y + i64::from(dir);
                if (0..=height).contains(&ny) && wedge.may_reach(c, dir) {
                    self.cone_from_root(c, root, g, wedge, dir, ny);
                }
                if wedge.contains_along_x(c, dir) {
                    self.flat(root, c, g, y, dir, None);
                }
            }
        } else {
            self.cone_from_root(c, root, g, wedge, -1, floor_of(c.y));
            self.cone_from_root(c, root, g, wedge, 1, ceil_of(c.y));
        }
    }

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
    fn cone_from_root(&mut self, c: DVec2, root: u32, g: f64, wedge: Wedge, dir: i8, ny: i64) {
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
    fn split(
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

    /// The flat interval of line `y` from `from` (a vertex, or the root itself
    /// when `None`) in direction `dir`, up to the next corner with its blocked
    /// cell behind or the end of the walkable stretch.
    fn flat(&mut self, root: u32, r: DVec2, g: f64, y: i64, dir: i8, from: Option<i64>) {
        let x = from.map_or(r.x, |k| k as f64);
        let (up, dn) = (self.grid.row_words(y - 1), self.grid.row_words(y));
        let first = if let Some(k) = int_of(x) {
            // The edge ahead needs a free side.
            let cx = if dir > 0 { k } else { k - 1 };
            // (`k` is a vertex of the grid: `cx` is in -1..=width.)
            if !scan::free_at(up, cx) && !scan::free_at(dn, cx) {
                return;
            }
            k + i64::from(dir)
        } else if dir > 0 {
            ceil_of(x)
        } else {
            floor_of(x)
        };
        let end = if dir > 0 {
            scan::flat_right(up, dn, first)
        } else {
            scan::flat_left(up, dn, first)
        };
        let near = from.map_or(Ep::Root, Ep::Int);
        let (a, b) = if dir > 0 {
            (near, Ep::Int(end))
        } else {
            (Ep::Int(end), near)
        };
        if self.goal_line == Some(y)
            && a.cmp_point(r, self.t) != Ordering::Greater
            && b.cmp_point(r, self.t) != Ordering::Less
        {
            self.push_goal(root, r, g);
        }
        // The walk stopped at a corner with its blocked cell behind (where it
        // may go on and turn) or where it cannot go on.
        let Some(wedge) = self.taut_turn([end, y], r) else {
            return;
        };
        let (turn_a, turn_b) = if self.eager {
            self.scratch.turns.push(Turn {
                v: [end, y],
                root,
                r,
                g,
                wedge,
            });
            (false, false)
        } else if dir > 0 {
            (false, true)
        } else {
            (true, false)
        };
        self.scratch.succ.push(Node {
            root,
            r,
            g,
            y,
            a,
            b,
            a_floor: a.floor(r, y),
            kind: Kind::Flat { dir },
            turn_a,
            turn_b,
            onward: true,
        });
    }

    /// Expands node `n` (not a goal node): its successors go to
    /// `scratch.succ`, goal nodes straight to the open list.
    pub(super) fn expand(&mut self, n: &Node) {
        if n.turn_a
            && let Ep::Int(k) = n.a
        {
            self.turn([k, n.y], n.root, n.r, n.g);
        }
        if n.turn_b
            && let Ep::Int(k) = n.b
            && n.a != n.b
        {
            self.turn([k, n.y], n.root, n.r, n.g);
        }
        if !n.onward {
            return;
        }
        self.eager = true;
        match n.kind {
            Kind::Flat { dir } => {
                let far = if dir > 0 { n.b } else { n.a };
                if let Ep::Int(k) = far {
                    self.flat(n.root, n.r, n.g, n.y, dir, Some(k));
                }
            }
            Kind::Cone { dir } => self.project(n, dir),
            Kind::Goal => {}
        }
        self.eager = false;
        // (Turning now, not eagerly, adds nothing to `turns`.)
        for i in 0..self.scratch.turns.len() {
            let t = self.scratch.turns[i];
            self.turn_into(t.v, t.root, t.r, t.g, t.wedge);
        }
        self.scratch.turns.clear();
    }

    /// Observable successors of a cone node: its interval projected onto the
    /// next line, clipped to the free run below (or above) it. A projection
    /// that leaves a single piece with nothing to turn at (the paper's
    /// intermediate pruning, applied to each projection as the paper's code
    /// does) is projected again at once instead of being queued.
    fn project(&mut self, n: &Node, dir: i8) {
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
    fn follow_lone(&mut self, n: &Node, dir: i8) -> Follow {
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

    /// Counts an expansion of `n` and records it in the trace.
    #[inline]
    pub(super) fn record(&mut self, n: &Node) {
        self.stats.expanded += 1;
        if let Some(trace) = self.trace.as_deref_mut() {
            let y = n.y as f64;
            let (left, right) = (n.a.x(n.r, y), n.b.x(n.r, y));
            trace.interval(n.y as u32, left, right, n.r);
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

/// Root-history helpers used by [`Anya`].
impl Roots {
    /// Records `g` for root `id` with parent `parent` if it is strictly
    /// better than what is known; returns whether it was.
    #[inline]
    pub(super) fn improve(&mut self, id: u32, g: f64, parent: u32) -> bool {
        let generation = self.generation;
        let s = self.states.get_mut(id);
        if s.stamp == generation && s.g <= g {
            return false;
        }
        *s = RootState {
            g,
            parent,
            stamp: generation,
        };
        true
    }

    /// The best known `g` of root `id`.
    #[inline]
    pub(super) fn g(&self, id: u32) -> f64 {
        match self.states.get(id) {
            Some(s) if s.stamp == self.generation => s.g,
            _ => f64::INFINITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use core::cmp::Ordering;

    use super::{Crossing, Edge, frac_cmp};
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
