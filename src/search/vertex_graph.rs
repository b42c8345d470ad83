//! The graph Lazy Theta* and grid A* search: the grid's vertices with their
//! eight grid moves, plus a node for a start or goal that is not a vertex,
//! joined to the corners of its cells.
//!
//! Moves follow `SPEC.md`: a diagonal move crosses a free cell, a straight
//! move runs along an edge with a free cell on at least one side, and no move
//! enters a double corner (a shortest path never turns at one, and passing
//! through one is forbidden) unless it is the start or goal, which then obeys
//! its south-east rule.

use bevy_math::DVec2;

use super::heap::OpenList;
use super::{Endpoint, SearchContext};
use crate::geom::dist_i;
use crate::grid::Grid;
use crate::los::{line_of_sight, los_vertices};

/// `parent` of a node that has none yet.
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// The eight grid moves: offset, the cells around the vertex (see
/// [`Grid::vertex_mask`] bits) of which one must be free, and the cost.
const MOVES: [(i64, i64, u8, f64); 8] = [
    (1, 0, 0b1010, 1.0),
    (-1, 0, 0b0101, 1.0),
    (0, 1, 0b1100, 1.0),
    (0, -1, 0b0011, 1.0),
    (1, 1, 0b1000, core::f64::consts::SQRT_2),
    (-1, -1, 0b0001, core::f64::consts::SQRT_2),
    (1, -1, 0b0010, core::f64::consts::SQRT_2),
    (-1, 1, 0b0100, core::f64::consts::SQRT_2),
];

/// Per-node search state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeState {
    pub g: f64,
    pub parent: u32,
    /// The generation this state belongs to; older states read as unseen.
    stamp: u32,
    pub closed: bool,
}

const UNSEEN: NodeState = NodeState {
    g: f64::INFINITY,
    parent: NO_PARENT,
    stamp: 0,
    closed: false,
};

/// Search memory reused across queries: one `NodeState` per node, valid only
/// when stamped with the current generation, so nothing is cleared per query.
#[derive(Default, Debug)]
pub(crate) struct Scratch {
    nodes: Vec<NodeState>,
    generation: u32,
    pub open: OpenList,
}

impl Scratch {
    /// Starts a new query over `count` nodes.
    pub(crate) fn prepare(&mut self, count: usize) {
        if self.nodes.len() < count {
            self.nodes.resize(count, UNSEEN);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.nodes.fill(UNSEEN);
            self.generation = 1;
        }
        self.open.clear();
    }

    /// The state of `node` in this query.
    #[inline]
    pub(crate) fn get(&self, node: u32) -> NodeState {
        let s = self.nodes[node as usize];
        if s.stamp == self.generation {
            s
        } else {
            UNSEEN
        }
    }

    /// Mutable state of `node`, reset first if it is from an older query.
    #[inline]
    pub(crate) fn get_mut(&mut self, node: u32) -> &mut NodeState {
        let generation = self.generation;
        let s = &mut self.nodes[node as usize];
        if s.stamp != generation {
            *s = NodeState {
                stamp: generation,
                ..UNSEEN
            };
        }
        s
    }
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
    /// `width + 1`: vertices per row.
    w1: i64,
    /// Number of vertex nodes; special nodes follow.
    pub vertex_count: u32,
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
        let w1 = i64::from(grid.width()) + 1;
        let vertex_count = (w1 * (i64::from(grid.height()) + 1)) as u32;
        let node = |ep: &Endpoint, special: u32| match ep.vertex {
            Some([x, y]) => ((y * w1 + x) as u32, None),
            None => {
                let cells = ep.cells();
                let min = [0, 1].map(|a| cells.iter().map(|c| c[a]).min().unwrap_or(0));
                let max = [0, 1].map(|a| cells.iter().map(|c| c[a] + 1).max().unwrap_or(0));
                (special, Some(CornerBox { min, max }))
            }
        };
        let (start, start_box) = node(ctx.start, vertex_count);
        let (goal, goal_box) = node(ctx.goal, vertex_count + 1);
        Graph {
            grid,
            w1,
            vertex_count,
            start,
            goal,
            start_ep: ctx.start,
            goal_ep: ctx.goal,
            start_box,
            goal_box,
        }
    }

    /// Nodes in the graph (vertices plus two special slots).
    pub(crate) fn node_count(&self) -> usize {
        self.vertex_count as usize + 2
    }

    #[inline]
    pub(crate) fn xy(&self, id: u32) -> [i64; 2] {
        let id = i64::from(id);
        [id % self.w1, id / self.w1]
    }

    #[inline]
    fn id(&self, x: i64, y: i64) -> u32 {
        (y * self.w1 + x) as u32
    }

    /// The point of a node.
    #[inline]
    pub(crate) fn point(&self, id: u32) -> DVec2 {
        if id == self.start && self.start_box.is_some() {
            self.start_ep.p
        } else if id == self.goal && self.goal_box.is_some() {
            self.goal_ep.p
        } else {
            let [x, y] = self.xy(id);
            DVec2::new(x as f64, y as f64)
        }
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

    /// Calls `f(neighbour, cost)` for every edge at `id`.
    #[inline]
    pub(crate) fn neighbours(&self, id: u32, mut f: impl FnMut(u32, f64)) {
        let special = |b: Option<CornerBox>, node: u32| b.is_some() && node == id;
        if special(self.start_box, self.start) || special(self.goal_box, self.goal) {
            let ep = self.endpoint(id).expect("special nodes are endpoints");
            for c in ep.cells() {
                for [x, y] in [
                    [c[0], c[1]],
                    [c[0] + 1, c[1]],
                    [c[0], c[1] + 1],
                    [c[0] + 1, c[1] + 1],
                ] {
                    if self.vertex_usable(x, y, ep.p) {
                        f(self.id(x, y), ep.p.distance(DVec2::new(x as f64, y as f64)));
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
            if other >= self.vertex_count && ep.cells().iter().any(|c| other_ep.has_cell(*c)) {
                f(other, ep.p.distance(other_ep.p));
            }
            return;
        }
        let [x, y] = self.xy(id);
        let here = DVec2::new(x as f64, y as f64);
        let m = self.grid.vertex_mask(x, y);
        let restricted = self.endpoint(id).is_some_and(|e| e.restricted);
        for (dx, dy, need, cost) in MOVES {
            if m & need == 0 {
                continue;
            }
            if restricted && (dx < 0 || dy < 0) {
                continue;
            }
            let (nx, ny) = (x + dx, y + dy);
            if self.vertex_usable(nx, ny, here) {
                f(self.id(nx, ny), cost);
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
                    f(node, here.distance(ep.p));
                }
            }
        }
    }

    /// Whether the segment between two nodes is a usable path leg (visible,
    /// and allowed by the south-east rule at a start or goal on a double
    /// corner). Counts a line-of-sight check.
    #[inline]
    pub(crate) fn visible(&self, ctx: &mut SearchContext<'_>, a: u32, b: u32) -> bool {
        ctx.stats.los_checks += 1;
        let (pa, pb) = (self.point(a), self.point(b));
        for (n, other) in [(a, pb), (b, pa)] {
            if let Some(e) = self.endpoint(n)
                && !e.allows_towards(other)
            {
                return false;
            }
        }
        if a < self.vertex_count && b < self.vertex_count {
            los_vertices(self.grid, self.xy(a), self.xy(b))
        } else {
            line_of_sight(self.grid, pa, pb)
        }
    }

    /// Euclidean distance between two nodes.
    #[inline]
    pub(crate) fn distance(&self, a: u32, b: u32) -> f64 {
        if a < self.vertex_count && b < self.vertex_count {
            dist_i(self.xy(a), self.xy(b))
        } else {
            self.point(a).distance(self.point(b))
        }
    }

    /// Writes the path ending at `goal` into `out`, start first.
    pub(crate) fn reconstruct(&self, scratch: &Scratch, out: &mut Vec<DVec2>) {
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
