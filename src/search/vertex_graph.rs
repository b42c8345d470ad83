//! The graph the vertex searches run on over a grid (A\*, Lazy Theta\*, the
//! terrain-cost searches): the grid's vertices with their eight grid moves,
//! plus a node for a start or goal that is not a vertex, joined to the
//! corners of its cells.
//!
//! Moves follow `SPEC.md`: a diagonal move crosses a free cell, a straight
//! move runs along an edge with a free cell on at least one side, and no move
//! enters a double corner (a shortest path never turns at one, and passing
//! through one is forbidden) unless it is the start or goal, which then obeys
//! its south-east rule.

use bevy_math::DVec2;

use super::best_first::{NO_PARENT, Scratch, SearchGraph};
use super::paged::{TILE, Tiling};
use super::{Endpoint, SearchContext};
use crate::grid::{Grid, VERTEX_MOVES};
use crate::los::{line_of_sight, los_vertices};

/// Cost of each move of [`VERTEX_MOVES`].
const MOVE_COST: [f64; 8] = {
    let d = core::f64::consts::SQRT_2;
    [1.0, 1.0, 1.0, 1.0, d, d, d, d]
};

/// The moves of [`VERTEX_MOVES`] that point into the south-east quadrant:
/// the only ones a start or goal on a double corner may use.
const SOUTH_EAST_MOVES: u16 = 0b0001_0101;

/// Calls `f` out of line: for the rare edges at a start or goal, so that
/// the edge callback is inlined only where grid moves call it (the hot loop).
#[inline(never)]
fn call_cold(f: &mut dyn FnMut(u32, DVec2, f64), node: u32, p: DVec2, cost: f64) {
    f(node, p, cost);
}

/// Bounding box of the corners of an endpoint's cells, for a quick test.
#[derive(Clone, Copy, Debug)]
struct CornerBox {
    min: [i64; 2],
    max: [i64; 2],
}

/// The search graph for one query.
pub(crate) struct Graph<'a> {
    pub grid: &'a Grid,
    /// Node ids of the vertices; a start or goal that is not a vertex gets
    /// one of its spare ids.
    tiling: Tiling,
    pub start: u32,
    pub goal: u32,
    start_ep: &'a Endpoint,
    goal_ep: &'a Endpoint,
    /// Corner boxes of the start and goal when they are special nodes.
    start_box: Option<CornerBox>,
    goal_box: Option<CornerBox>,
}

impl<'a> Graph<'a> {
    pub(crate) fn new(ctx: &SearchContext<'a>) -> Self {
        let grid = ctx.grid;
        let tiling = Tiling::new(grid.width(), grid.height());
        let node = |ep: &Endpoint, special: u32| match ep.vertex {
            Some([x, y]) => (tiling.id(x, y), None),
            None => {
                let cells = ep.cells();
                let min = [0, 1].map(|a| cells.iter().map(|c| c[a]).min().unwrap_or(0));
                let max = [0, 1].map(|a| cells.iter().map(|c| c[a] + 1).max().unwrap_or(0));
                (special, Some(CornerBox { min, max }))
            }
        };
        let (start, start_box) = node(ctx.start, tiling.spare(0));
        let (goal, goal_box) = node(ctx.goal, tiling.spare(1));
        Graph {
            grid,
            tiling,
            start,
            goal,
            start_ep: ctx.start,
            goal_ep: ctx.goal,
            start_box,
            goal_box,
        }
    }

    #[inline]
    pub(crate) fn xy(&self, id: u32) -> [i64; 2] {
        self.tiling.xy(id)
    }

    #[inline]
    fn id(&self, x: i64, y: i64) -> u32 {
        self.tiling.id(x, y)
    }

    /// Whether `id` is a start or goal that is not a vertex.
    #[inline]
    fn is_special(&self, id: u32) -> bool {
        (id == self.start && self.start_box.is_some())
            || (id == self.goal && self.goal_box.is_some())
    }

    /// The endpoint a node stands for, if it is the start or the goal.
    #[inline]
    fn endpoint(&self, id: u32) -> Option<&'a Endpoint> {
        if id == self.start {
            Some(self.start_ep)
        } else if id == self.goal {
            Some(self.goal_ep)
        } else {
            None
        }
    }

    /// Whether vertex `(x, y)` may be a path point reached from or left
    /// towards `other`: not a double corner, unless it is the start or goal
    /// and `other` lies in its south-east quadrant.
    #[inline]
    fn vertex_usable(&self, x: i64, y: i64, other: DVec2) -> bool {
        if !self.grid.is_double_corner(x, y) {
            return true;
        }
        self.endpoint(self.id(x, y))
            .is_some_and(|e| e.allows_towards(other))
    }
}

impl SearchGraph for Graph<'_> {
    #[inline]
    fn start(&self) -> u32 {
        self.start
    }

    #[inline]
    fn goal(&self) -> u32 {
        self.goal
    }

    fn id_bound(&self) -> usize {
        self.tiling.len()
    }

    /// The point of a node.
    #[inline]
    fn point(&self, id: u32) -> DVec2 {
        if id == self.start && self.start_box.is_some() {
            self.start_ep.p
        } else if id == self.goal && self.goal_box.is_some() {
            self.goal_ep.p
        } else {
            let [x, y] = self.xy(id);
            DVec2::new(x as f64, y as f64)
        }
    }

    /// Calls `f(neighbour, its point, cost)` for every edge at `id`.
    #[inline]
    fn neighbours(&self, id: u32, mut f: impl FnMut(u32, DVec2, f64)) {
        if self.is_special(id) {
            let ep = self.endpoint(id).expect("special nodes are endpoints");
            for c in ep.cells() {
                for [x, y] in [
                    [c[0], c[1]],
                    [c[0] + 1, c[1]],
                    [c[0], c[1] + 1],
                    [c[0] + 1, c[1] + 1],
                ] {
                    if self.vertex_usable(x, y, ep.p) {
                        let p = DVec2::new(x as f64, y as f64);
                        call_cold(&mut f, self.id(x, y), p, ep.p.distance(p));
                    }
                }
            }
            // Start and goal in one cell: the direct segment.
            let other = if id == self.start {
                self.goal
            } else {
                self.start
            };
            let other_ep = self.endpoint(other).expect("start and goal are endpoints");
            // (A vertex goal or start is one of the corners above.)
            if self.is_special(other) && ep.cells().iter().any(|c| other_ep.has_cell(*c)) {
                call_cold(&mut f, other, other_ep.p, ep.p.distance(other_ep.p));
            }
            return;
        }
        let [x, y] = self.xy(id);
        let here = DVec2::new(x as f64, y as f64);
        let info = self.grid.vertex_info(x, y);
        let restricted = self.endpoint(id).is_some_and(|e| e.restricted);
        let mut moves = info & 0xff;
        let interior = Tiling::is_inner(x) && Tiling::is_inner(y);
        if restricted {
            moves &= SOUTH_EAST_MOVES;
        }
        while moves != 0 {
            let i = moves.trailing_zeros() as usize;
            moves &= moves - 1;
            let (dx, dy, _) = VERTEX_MOVES[i];
            // Within a tile, a move is a fixed step of ids.
            let m = if interior {
                (i64::from(id) + dy * TILE + dx) as u32
            } else {
                self.id(x + dx, y + dy)
            };
            f(
                m,
                DVec2::new((x + dx) as f64, (y + dy) as f64),
                MOVE_COST[i],
            );
        }
        // Moves onto a start or goal on a double corner (left out of the
        // precomputed moves, which never enter a double corner).
        for (node, ep) in [(self.start, self.start_ep), (self.goal, self.goal_ep)] {
            if let Some([ex, ey]) = ep.vertex
                && ep.restricted
                && (ex - x).abs() <= 1
                && (ey - y).abs() <= 1
                && node != id
                && ep.allows_towards(here)
            {
                let i = VERTEX_MOVES
                    .iter()
                    .position(|m| (m.0, m.1) == (ex - x, ey - y))
                    .expect("a neighbouring vertex is one move away");
                let cells = (info >> 8) as u8;
                if cells & VERTEX_MOVES[i].2 != 0 && (!restricted || SOUTH_EAST_MOVES >> i & 1 == 1)
                {
                    call_cold(&mut f, node, ep.p, MOVE_COST[i]);
                }
            }
        }
        for (b, node) in [(self.start_box, self.start), (self.goal_box, self.goal)] {
            if let Some(b) = b
                && (b.min[0]..=b.max[0]).contains(&x)
                && (b.min[1]..=b.max[1]).contains(&y)
            {
                let ep = self.endpoint(node).expect("special nodes are endpoints");
                let touches = ep
                    .cells()
                    .iter()
                    .any(|c| (x - c[0]) & !1 == 0 && (y - c[1]) & !1 == 0);
                if touches && self.vertex_usable(x, y, ep.p) {
                    call_cold(&mut f, node, ep.p, here.distance(ep.p));
                }
            }
        }
    }

    /// Whether the segment between two nodes is a usable path leg (visible,
    /// and allowed by the south-east rule at a start or goal on a double
    /// corner). Counts a line-of-sight check.
    #[inline]
    fn visible(&mut self, ctx: &mut SearchContext<'_>, a: u32, b: u32) -> bool {
        ctx.stats.los_checks += 1;
        let endpoint = |n: u32| n == self.start || n == self.goal;
        if !endpoint(a) && !endpoint(b) {
            // Two plain vertices (only a start or goal can be a special
            // node), so no south-east rule applies.
            return los_vertices(self.grid, self.xy(a), self.xy(b));
        }
        let (pa, pb) = (self.point(a), self.point(b));
        for (n, other) in [(a, pb), (b, pa)] {
            if let Some(e) = self.endpoint(n)
                && !e.allows_towards(other)
            {
                return false;
            }
        }
        if !self.is_special(a) && !self.is_special(b) {
            los_vertices(self.grid, self.xy(a), self.xy(b))
        } else {
            line_of_sight(self.grid, pa, pb)
        }
    }

    /// Writes the path ending at `goal` into `out`, start first.
    fn path(&self, scratch: &Scratch, out: &mut Vec<DVec2>) {
        out.clear();
        let mut n = self.goal;
        loop {
            out.push(self.point(n));
            if n == self.start {
                break;
            }
            n = scratch.get(n).parent;
            debug_assert_ne!(
                n, NO_PARENT,
                "every reached node has a parent chain to the start"
            );
        }
        out.reverse();
    }
}
