//! The best-first loop every vertex search runs, over any graph and any
//! relaxation rule: A\*, Lazy Theta\* and the terrain-cost searches on a
//! grid's vertices, A\* and Lazy Theta\* over a navigation mesh's corners.
//!
//! A search is a [`SearchGraph`] (its nodes, their points, edges and line of
//! sight) and a [`Rule`] (its heuristic, how a popped node's parent is
//! checked, how the successors of an expanded node are offered their
//! paths). [`run`] pops the best node of one open list ([`IndexedHeap`],
//! with its one tie rule), stops where the context says (node budget, end
//! of a slice, cancel flag), lets the rule check the node's parent, ends
//! at the goal or closes the node, and lets the rule relax its successors.
//! It is generic, not dynamic: each graph and rule pair gets its own copy,
//! as fast as a loop written for it.
//!
//! The per-node records ([`NodeState`]: cost, parent, closed, heap handle)
//! live in [`Scratch`], in pages allocated on first touch and stamped with
//! the query's generation, so nothing is cleared between queries.

use bevy_math::DVec2;

use super::heap::{IndexedHeap, NO_HANDLE, f_key};
use super::paged::{Paged, Tiling};
use super::{Outcome, SearchContext};
use crate::grid::Grid;

/// `parent` of a node that has none yet.
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// Per-node search state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeState {
    pub g: f64,
    pub parent: u32,
    /// The generation this state belongs to; older states read as unseen.
    stamp: u32,
    /// The node's handle in [`IndexedHeap`] once it has been queued in this
    /// query, else [`NO_HANDLE`].
    handle: u32,
    pub closed: bool,
}

const UNSEEN: NodeState = NodeState {
    g: f64::INFINITY,
    parent: NO_PARENT,
    stamp: 0,
    handle: NO_HANDLE,
    closed: false,
};

/// Search memory reused across queries: one `NodeState` per node touched,
/// in pages allocated on first touch (see [`Paged`]), valid only when stamped
/// with the current generation, so nothing is cleared per query; and the
/// open list.
#[derive(Debug)]
pub(crate) struct Scratch {
    nodes: Paged<NodeState>,
    generation: u32,
    open: IndexedHeap,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            nodes: Paged::new(UNSEEN),
            generation: 0,
            open: IndexedHeap::default(),
        }
    }
}

impl Scratch {
    /// Allocates the node states of every vertex of `grid` now.
    pub(crate) fn reserve(&mut self, grid: &Grid) {
        let tiling = Tiling::new(grid.width(), grid.height());
        self.nodes.cover(tiling.len());
        for id in tiling.tiles() {
            self.nodes.allocate(id);
        }
    }

    /// Starts a new query over node ids below `len`.
    pub(crate) fn prepare(&mut self, len: usize) {
        self.nodes.cover(len);
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.nodes.reset();
            self.generation = 1;
        }
        self.open.clear();
    }

    /// Makes room for node ids below `len` (for a graph that numbers its
    /// nodes as the search meets them).
    #[inline]
    pub(crate) fn cover(&mut self, len: usize) {
        self.nodes.cover(len);
    }

    /// Bytes held: node pages, their table and the open list.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.nodes.memory_bytes() + self.open.memory_bytes()
    }

    /// Offers `node` a path of cost `g` through `parent`: if that improves
    /// on its cost and it is not closed, records it and (re)queues the node
    /// with key `g + h()`. Returns whether it improved.
    #[expect(
        clippy::inline_always,
        reason = "left to the compiler it is not inlined into A*'s loop: 12 % more instructions (callgrind)"
    )]
    #[inline(always)]
    pub(crate) fn relax(
        &mut self,
        node: u32,
        g: f64,
        parent: u32,
        h: impl FnOnce() -> f64,
    ) -> bool {
        let generation = self.generation;
        let s = self.nodes.get_mut(node);
        if s.stamp != generation {
            *s = NodeState {
                stamp: generation,
                ..UNSEEN
            };
        }
        if s.closed || g >= s.g {
            return false;
        }
        let f = g + h();
        s.g = g;
        s.parent = parent;
        self.open.queue(&mut s.handle, f_key(f), g, node);
        true
    }

    /// Takes the best open node off the open list, and puts its page in
    /// focus (its neighbours are mostly there).
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        let n = self.open.pop()?;
        self.nodes.focus(n);
        Some(n)
    }

    /// The state of `node` in this query.
    #[inline]
    pub(crate) fn get(&self, node: u32) -> NodeState {
        match self.nodes.get(node) {
            Some(s) if s.stamp == self.generation => *s,
            _ => UNSEEN,
        }
    }

    /// Mutable state of `node`, reset first if it is from an older query.
    #[inline]
    pub(crate) fn get_mut(&mut self, node: u32) -> &mut NodeState {
        let generation = self.generation;
        let s = self.nodes.get_mut(node);
        if s.stamp != generation {
            *s = NodeState {
                stamp: generation,
                ..UNSEEN
            };
        }
        s
    }
}

/// The graph a vertex search runs on.
pub(crate) trait SearchGraph {
    /// The start's node.
    fn start(&self) -> u32;

    /// The goal's node.
    fn goal(&self) -> u32;

    /// One more than the largest node id known when the search starts.
    fn id_bound(&self) -> usize;

    /// The point of a node (the coordinates edge costs and the heuristic
    /// are measured in).
    fn point(&self, n: u32) -> DVec2;

    /// The point of a node in grid coordinates, for the search trace.
    #[inline]
    fn traced_point(&self, n: u32) -> DVec2 {
        self.point(n)
    }

    /// Called once `n` is popped, before its edges are listed: a graph that
    /// builds itself as the search goes makes `n`'s neighbours here, and
    /// gives their ids room in `scratch`.
    #[inline]
    fn reach(&mut self, n: u32, scratch: &mut Scratch) {
        let _ = (n, scratch);
    }

    /// Calls `f(neighbour, its point, cost)` for every edge at `n`.
    fn neighbours(&self, n: u32, f: impl FnMut(u32, DVec2, f64));

    /// Whether the segment between two nodes is a usable path leg. Counts a
    /// line-of-sight check.
    fn visible(&mut self, ctx: &mut SearchContext<'_>, a: u32, b: u32) -> bool;

    /// Writes the path ending at the goal (reached) into `out`, start first.
    fn path(&self, scratch: &Scratch, out: &mut Vec<DVec2>);
}

/// How a vertex search relaxes: its heuristic, the check of a popped
/// node's parent, and the offers to an expanded node's successors.
pub(crate) trait Rule<G: SearchGraph> {
    /// The (weighted) heuristic at point `p`.
    fn h(&self, p: DVec2) -> f64;

    /// Checks the parent popped node `n` (not the start) was queued with,
    /// and mends its parent and cost if need be. Returns `false` if `n` has
    /// no parent it can use yet: it is then left unexpanded (not closed; a
    /// later offer may queue it again). By default the parent stands.
    #[expect(
        clippy::inline_always,
        reason = "an empty default, to vanish from the loops that keep it"
    )]
    #[inline(always)]
    fn mend(
        &mut self,
        graph: &mut G,
        scratch: &mut Scratch,
        ctx: &mut SearchContext<'_>,
        n: u32,
    ) -> bool {
        let _ = (graph, scratch, ctx, n);
        true
    }

    /// Offers the successors of `n`, just closed, their paths through `n`
    /// (or its parent), counting the nodes generated and pushed.
    fn expand(&mut self, graph: &G, scratch: &mut Scratch, ctx: &mut SearchContext<'_>, n: u32);
}

/// The heuristic of a search towards `to` with `ctx`'s weight: `w` times
/// the straight distance.
#[inline]
pub(crate) fn towards(ctx: &SearchContext<'_>, to: DVec2) -> impl Fn(DVec2) -> f64 + Copy + use<> {
    let weight = ctx.options.weight();
    move |p: DVec2| weight * p.distance(to)
}

/// Runs the best-first search of `rule` on `graph` from its start to its
/// goal, within `ctx`'s node budget, slice and cancel flag; on success the
/// path is in `out`, start first. With `resume`, goes on with the search
/// `scratch` holds, paused at the end of a slice (the same query).
///
/// Counts each node pushed, popped and expanded (the goal is popped, not
/// expanded), and traces each node expanded with the parent it was expanded
/// with.
#[expect(
    clippy::inline_always,
    reason = "the one copy of each search loop belongs in its caller"
)]
#[inline(always)]
pub(crate) fn run<G: SearchGraph, R: Rule<G>>(
    graph: &mut G,
    rule: &mut R,
    scratch: &mut Scratch,
    ctx: &mut SearchContext<'_>,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    let (start, goal) = (graph.start(), graph.goal());
    if !resume {
        let h_start = rule.h(graph.point(start));
        scratch.prepare(graph.id_bound());
        scratch.relax(start, 0.0, start, || h_start);
        ctx.stats.generated += 1;
        ctx.stats.pushed += 1;
    }
    loop {
        if let Some(stop) = ctx.should_stop() {
            return stop;
        }
        let Some(n) = scratch.pop() else {
            return Outcome::Exhausted;
        };
        ctx.stats.popped += 1;
        graph.reach(n, scratch);
        if n != start && !rule.mend(graph, scratch, ctx, n) {
            continue;
        }
        if n == goal {
            graph.path(scratch, out);
            return Outcome::Found;
        }
        let s = scratch.get_mut(n);
        s.closed = true;
        let parent = s.parent;
        ctx.stats.expanded += 1;
        if let Some(trace) = ctx.trace.as_deref_mut() {
            trace.point(graph.traced_point(n), graph.traced_point(parent));
        }
        rule.expand(graph, scratch, ctx, n);
    }
}
