//! Anya: optimal any-angle pathfinding (Harabor, Grastien, Oz & Aksakalli,
//! "Optimal Any-Angle Pathfinding In Practice", JAIR 56, 2016).
//!
//! Anya searches over *intervals* of grid lines paired with a *root*, the
//! last turning point of the paths an interval stands for, instead of over
//! points. Successors come from projecting an interval onto the next line and
//! from turning around corners (see [`expand`]); no line-of-sight check is
//! ever made. The `f`-value of a node is the length of the shortest path
//! through its interval ignoring obstacles beyond it, so the search is A* and
//! its first goal is optimal.
//!
//! Differences from the paper, all needed by `SPEC.md`:
//!
//! - Start and goal may be any points, not only vertices. A start off the
//!   grid lines seeds cones onto the two lines that bound its cell row; a goal
//!   off them is found by the nodes that sweep its cell row (see
//!   [`expand`]). Nothing is snapped to a vertex.
//! - Double corners are never passed nor turned at; a start or goal on one
//!   uses only its south-east cell; the map border is blocked.
//! - Interval endpoints are exact (see [`node`]).
//!
//! # Counting work
//!
//! [`SearchStats`](super::SearchStats) counts open-list pops (`popped`, the
//! count the paper's authors report) apart from expansions (`expanded`,
//! which include the steps of intermediate pruning done in place). Mean pops
//! per query on the bundled Moving AI scenarios (every query, start and goal
//! at the scenario's cell corners), beside the authors' Java implementation
//! run on the same queries (pruning on; its own counter of pops;
//! `scripts/reference` runs it). Costs agree to 1e-8 on all 29,467 queries
//! but 107 on the random maps, whose goal is on a double corner: the
//! reference enters it from either side, which `SPEC.md` forbids, so its
//! cost is lower there.
//!
//! | map | this crate | Java reference | ratio |
//! |---|--:|--:|--:|
//! | arena | 1.8 | 5.1 | 0.35 |
//! | `lt_backalley_n` | 19.6 | 32.9 | 0.60 |
//! | AR0011SR | 40.0 | 109.5 | 0.37 |
//! | `Berlin_0_256` | 88.4 | 190.8 | 0.46 |
//! | `BigGameHunters` | 103.7 | 187.1 | 0.55 |
//! | den520d | 104.2 | 173.8 | 0.60 |
//! | lak303d | 245.5 | 480.7 | 0.51 |
//! | brc202d | 646.5 | 969.3 | 0.67 |
//! | `8room_000` | 3,361 | 4,282 | 0.78 |
//! | `random512-10-0` | 2,457 | 3,192 | 0.77 |
//! | `random512-20-0` | 10,075 | 12,019 | 0.84 |
//! | `random512-40-0` | 16,169 | 19,812 | 0.82 |
//! | `maze512-1-0` | 15,859 | 16,186 | 0.98 |
//!
//! How the counts line up with the reference, rule by rule:
//!
//! - **Turns.** The reference makes a corner's successors (its
//!   non-observable successors, rooted at the corner) in the expansion that
//!   reaches the corner. This crate does the same for the pieces a node
//!   projects to and for a flat node's continuation ([`expand`]'s `eager`
//!   mode): a piece that only turns is never queued, and one that also goes
//!   on is queued for that alone. The new root's own pieces turn when they
//!   are popped, so one expansion goes one turn deep. Queueing every turning
//!   piece first and turning when it was popped cost 20-40 % more pops (for
//!   example 245 against 150 on AR0011SR, 1,374 against 964 on brc202d) and
//!   5-15 % more time on most bundled maps.
//! - **Root history.** Both keep the best `g` per root and prune a successor
//!   whose root is known at a lower cost. The reference prunes at insertion
//!   and pops whatever it inserted; this crate records a root's cost when
//!   it turns there and skips a popped node whose root has since been
//!   reached more cheaply (counted in `popped`, not in `expanded`).
//! - **Start and goal.** The reference expands the start as one node; this
//!   crate seeds every cone and flat around the start root at once (no pop).
//!   The reference ends when a popped node's interval holds the goal; this
//!   crate pushes a goal node with the exact path length, one more pop per
//!   query, which lets a goal strictly inside a cell row be found too.
//! - **Intermediate pruning** is applied to each projection, as the
//!   reference does: when projecting an interval (a popped node's, or a new
//!   root's first cone) leaves a single piece with nothing to turn at, that
//!   piece is projected again at once, whatever else the expansion made.
//!   Applying it only when a whole expansion made one successor, as before,
//!   queued 1.1-3.8x as many nodes (150 against 40 pops on AR0011SR, 964
//!   against 647 on brc202d, 17,416 against 15,859 on the maze), because a
//!   projection that also turns at a corner has other successors. Since a
//!   popped node's corners are turned eagerly (above), a piece of its
//!   projection whose ends are corners is intermediate too: its turns are
//!   already made.
//! - **Cul-de-sac pruning** is the paper's: a piece with blocked cells beyond
//!   it and no turn is dropped.
//! - **Following a lone piece.** While each projection of a cone leaves a
//!   lone piece (the usual case between obstacles), the cone is followed
//!   line by line without building nodes: each edge is an exact fraction
//!   moved by an integer step per line, a division only where a run clips
//!   it, and the cells are tested a word at a time. Each line still counts
//!   as an expand call, so `expanded` does not depend on it; the general
//!   projection takes over where the next one splits, ends, or sweeps the
//!   goal's lines.
//! - **Work past the goal.** Once a goal node is pushed, its length bounds
//!   the search: a node whose `f` exceeds it is dropped instead of queued
//!   (it could never be popped before the goal), a lone piece is not
//!   followed past the line where its `f` does, and a corner is not turned
//!   at when the way through it to the goal is longer. Pops are unchanged;
//!   expand calls fall 18 % on arena, 3 % on AR0011SR and 1-2 % on the
//!   other maps. Most of the work above the optimum is done before any goal
//!   node exists: with the optimum itself as the bound from the start (a
//!   measurement, not something a search can know), expand calls would be
//!   60 % fewer than with no bound on arena, 42 % on AR0011SR, 28 % on
//!   den520d and 14 % on lak303d, for 34 %, 15 %, 4 % and none less time.
//!   Putting that work off instead, so that whatever has an `f` above the
//!   best queued waits in the open list (a lone piece no longer followed at
//!   once, a corner no longer turned at eagerly), was measured and is not
//!   used: the queue costs more than the lines and turns it saves. Deferred
//!   lone pieces took lak303d from 246 to 1,083 pops a query and its time up
//!   by half; deferred corners took it to 503 pops and 22 % more time
//!   (den520d 9 %, `random512-20-0` 11 %, AR0011SR unchanged), and waiting
//!   only when `f` is some percent above the best queued deferred too little
//!   to show.
//!
//! # Random maps
//!
//! Where obstacles are single cells scattered everywhere, Anya's work grows
//! with the square of the path's length, grid A*'s more slowly. On
//! `random512-10-0` (every third scenario query, grouped by length):
//!
//! | path length | Anya pops | Anya expand calls | A* expansions | Anya time / A* time |
//! |--:|--:|--:|--:|--:|
//! | 34 | 27 | 85 | 44 | 2.0 |
//! | 224 | 739 | 3,189 | 579 | 3.8 |
//! | 415 | 2,882 | 11,402 | 1,990 | 4.2 |
//! | 606 | 7,509 | 28,681 | 5,688 | 3.7 |
//!
//! Every node whose `f` is below the optimum must be expanded, and those
//! nodes fill the ellipse of points whose distances to start and goal sum to
//! less than the optimum. The obstacles force a detour roughly in proportion
//! to the length, so the ellipse's width grows with the length too, its area
//! with the square, and every obstacle corner inside it is a root. Grid A*
//! solves the 8-connected problem, whose octile heuristic stays closer to
//! that problem's optimum, so its expansions grow more slowly. Knowing the
//! optimum in advance (the bound above) would save about a fifth of Anya's
//! time there: the gap is in the heuristic, not in work above the optimum.
//!
//! The paper (Section 9.1) names overlapping intervals as the cause on
//! these maps: an interval reached from two roots, neither of which the
//! root history prunes. Such a node can be dropped, without losing the
//! optimum, when another node's interval on the same line holds it and
//! that node's root reaches every point of it strictly more cheaply. Along
//! a line, the difference of the two costs (`g` plus the distance from the
//! root) has at most one critical point, where the two roots and the point
//! are collinear, so the interval's ends and that point decide it. Measured
//! with every cone pushed recorded per line and each new cone checked
//! against its line before it is pushed (path lengths unchanged on every
//! scenario query):
//!
//! | map | pops | expand calls | time |
//! |---|--:|--:|--:|
//! | `random512-10-0` | −7 % | −9 % | +16 % |
//! | `random512-20-0` | −14 % | −18 % | +8 % |
//! | `random512-40-0` | −9 % | −8 % | +3 % |
//! | `maze512-1-0` | 0 | 0 | +6 % |
//! | brc202d | −22 % | −18 % | −14 % |
//! | den520d | −14 % | −11 % | −9 % |
//! | lak303d | −8 % | −7 % | −4 % |
//! | AR0011SR | −2 % | −2 % | +19 % |
//!
//! Whole containment by one node prunes too little on the random maps to
//! pay for the checks, so the rule is not used; trimming partly dominated
//! intervals would prune more, but its cut points are not exact.
//!
//! Memory: the root history (best `g` and parent per vertex) is stamped with
//! a generation, so nothing is cleared per query, and paged (see
//! [`super::paged`]), so it grows with the roots searches touch, not with the
//! grid.

mod expand;
mod node;
mod scan;
#[cfg(test)]
mod tests;

use bevy_math::DVec2;

use self::expand::{Anya, Turn, Wedge};
use self::node::{Kind, Node};
use super::heap::OpenList;
use super::paged::{Paged, Tiling};
use super::{Outcome, SearchContext};

/// One root's entry in the root history.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RootState {
    /// Best known cost from the start.
    g: f64,
    /// The root it was reached from.
    parent: u32,
    /// The generation this entry belongs to; older entries read as unseen.
    stamp: u32,
}

/// A root no path has reached yet in this query.
const UNSEEN: RootState = RootState {
    g: f64::INFINITY,
    parent: 0,
    stamp: 0,
};

/// Best `g` and parent per root, valid when stamped with the current
/// generation (the root history of the paper, Section 6), in pages allocated
/// on first touch.
#[derive(Debug)]
pub(crate) struct Roots {
    states: Paged<RootState>,
    generation: u32,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            states: Paged::new(UNSEEN),
            generation: 0,
        }
    }
}

impl Roots {
    /// Starts a query over root ids below `len`.
    fn prepare(&mut self, len: usize) {
        self.states.cover(len);
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.states.reset();
            self.generation = 1;
        }
    }

    /// The parent of root `id`, if it was reached in this query.
    fn parent(&self, id: u32) -> Option<u32> {
        match self.states.get(id) {
            Some(s) if s.stamp == self.generation => Some(s.parent),
            _ => None,
        }
    }
}

/// Anya's reusable search memory.
#[derive(Default, Debug)]
pub(crate) struct Scratch {
    /// The root history.
    roots: Roots,
    /// Every node made in this query; the open list holds indices into it.
    nodes: Vec<Node>,
    /// Successors of the node being expanded.
    succ: Vec<Node>,
    /// Corners the node being expanded turns at (see [`Anya::eager`]).
    turns: Vec<Turn>,
    open: OpenList,
    /// Root ids of the vertices of this query's grid; the start has spare
    /// id 0.
    tiling: Tiling,
    /// The shortest goal node pushed so far, kept while a search is paused.
    best_goal: f64,
}

impl Scratch {
    /// Allocates the root history of every vertex of `grid` now (see
    /// `Planner::reserve`).
    pub(crate) fn reserve(&mut self, grid: &crate::grid::Grid) {
        let tiling = Tiling::new(grid.width(), grid.height());
        self.roots.states.cover(tiling.len());
        for id in tiling.tiles() {
            self.roots.states.allocate(id);
        }
    }

    /// Bytes held: root history pages and table, nodes and the open list.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.roots.states.memory_bytes()
            + (self.nodes.capacity() + self.succ.capacity()) * size_of::<Node>()
            + self.turns.capacity() * size_of::<Turn>()
            + self.open.memory_bytes()
    }

    /// The root id of vertex `(x, y)`.
    #[inline]
    fn vertex_id(&self, x: i64, y: i64) -> u32 {
        self.tiling.id(x, y)
    }
}

/// Runs Anya from `ctx.start` to `ctx.goal`; on success the path is in `out`,
/// `ctx.start.p` first and `ctx.goal.p` last.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    let grid = ctx.grid;
    if !resume {
        scratch.tiling = Tiling::new(grid.width(), grid.height());
        scratch.roots.prepare(scratch.tiling.len());
        scratch.nodes.clear();
        scratch.succ.clear();
        scratch.turns.clear();
        scratch.open.clear();
        scratch.best_goal = f64::INFINITY;
    }
    let start_id = scratch.tiling.spare(0);

    let (s, t) = (ctx.start.p, ctx.goal.p);
    let on_line = |v: f64| (v.fract() == 0.0).then_some(v as i64);
    let mut stats = ctx.stats;
    let best_goal = scratch.best_goal;
    let mut anya = Anya {
        grid,
        goal: ctx.goal,
        t,
        goal_line: on_line(t.y),
        goal_cell_row: if t.y.fract() == 0.0 {
            None
        } else {
            Some(t.y.floor() as i64)
        },
        scratch,
        stats: &mut stats,
        trace: ctx.trace.take(),
        eager: false,
        best_goal,
    };

    if !resume {
        anya.scratch.roots.improve(start_id, 0.0, start_id);
        if let Some([x, y]) = ctx.start.vertex {
            // Never turn at the start vertex again.
            let id = anya.scratch.vertex_id(x, y);
            anya.scratch.roots.improve(id, 0.0, start_id);
        }
        let wedge = if ctx.start.restricted {
            Wedge::SouthEast
        } else {
            Wedge::Full
        };
        anya.seed_root(s, start_id, 0.0, wedge);
        flush(&mut anya);
    }

    let outcome = loop {
        let Some(id) = anya.scratch.open.pop() else {
            break Outcome::Exhausted;
        };
        anya.stats.popped += 1;
        let node = anya.scratch.nodes[id as usize];
        if node.kind == Kind::Goal {
            // Parent links strictly decrease g, so they always reach the
            // start; a broken chain would be a bug, reported as a failed
            // search rather than a panic.
            break if reconstruct(&anya, &node, start_id, s, out) {
                Outcome::Found
            } else {
                Outcome::Exhausted
            };
        }
        if node.g > anya.scratch.roots.g(node.root) {
            continue; // stale: its root has since been reached more cheaply
        }
        // (A lone piece that can only be projected again is projected at
        // once inside the expansion: intermediate pruning.)
        anya.record(&node);
        anya.expand(&node);
        flush(&mut anya);
        // Between two expansions the whole search is in `scratch`: a search
        // paused here goes on from it.
        ctx.stats = *anya.stats;
        if let Some(stop) = ctx.should_stop() {
            anya.scratch.best_goal = anya.best_goal;
            return stop;
        }
    };
    ctx.stats = stats;
    outcome
}

/// Moves the pending successors to the open list.
fn flush(anya: &mut Anya<'_>) {
    while let Some(n) = anya.scratch.succ.pop() {
        anya.push(n);
    }
}

/// Writes the path ending at goal node `goal` into `out`, start first.
/// Returns `false` if the root parent links do not lead to the start.
fn reconstruct(
    anya: &Anya<'_>,
    goal: &Node,
    start_id: u32,
    s: DVec2,
    out: &mut Vec<DVec2>,
) -> bool {
    out.clear();
    out.push(anya.t);
    let roots = &anya.scratch.roots;
    let tiling = anya.scratch.tiling;
    let mut id = goal.root;
    for _ in 0..tiling.len() {
        if id == start_id {
            out.push(s);
            out.reverse();
            return true;
        }
        let [x, y] = tiling.xy(id);
        out.push(DVec2::new(x as f64, y as f64));
        let Some(parent) = roots.parent(id) else {
            break;
        };
        id = parent;
    }
    out.clear();
    false
}
