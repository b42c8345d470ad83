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

mod cone;
mod flat;
mod follow;
mod wedge;

use bevy_math::DVec2;

pub(super) use self::wedge::Wedge;
use super::node::{Ep, Kind, Node, ceil_of, floor_of, int_of};
use super::{RootState, Roots, Scratch};
use crate::grid::Grid;
use crate::search::endpoint::Endpoint;
use crate::search::heap::OpenEntry;
use crate::search::{SearchStats, SearchTrace};

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
