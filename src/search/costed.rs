//! Theta* and A* on terrain whose cells cost more than their length to cross.
//!
//! Both search the vertex graph of the profile's grid with the exact segment
//! costs of [`crate::terrain::segment_cost`]; the heuristic is the straight
//! distance to the goal (every cost multiplier is at least 1, so it never
//! overestimates).
//!
//! - **A\*** moves along the 8 grid moves; a straight move runs along a cell
//!   edge and pays the cheaper of its two cells, a diagonal one crosses one
//!   cell. Its paths are the cheapest 8-connected ones.
//! - **Theta\*** (Daniel, Nash, Koenig & Felner, JAIR 39, 2010, with the
//!   non-uniform costs of its section on them), checked lazily: a node is
//!   queued with its cost by one grid move from the node that reached it
//!   (path 1, cheap: one or two cells), and when it is popped it takes its
//!   parent's parent as parent instead if that parent sees it and the
//!   straight segment costs less (path 2). With costs a straight segment is
//!   not always cheaper, so it is costed, once per node popped rather than
//!   for every neighbour of every expansion. Its paths are valid and near
//!   the cheapest, not always the cheapest.

use bevy_math::DVec2;

use super::best_first::{Rule, Scratch, SearchGraph, run, towards};
use super::vertex_graph::Graph;
use super::{Outcome, SearchContext};
use crate::terrain::{Profile, TerrainMap, move_cost, segment_cost};

/// The terrain and profile a search weighs.
#[derive(Clone, Copy)]
pub(crate) struct Costs<'a> {
    pub terrain: &'a TerrainMap,
    pub profile: &'a Profile,
}

impl Costs<'_> {
    /// The cost of segment `a-b`, `None` if impassable.
    #[inline]
    pub(crate) fn segment(&self, a: DVec2, b: DVec2) -> Option<f64> {
        segment_cost(self.terrain, self.profile, a, b)
    }

    /// The cost of the edge `a-b` of the vertex graph, of length `length`
    /// (see [`move_cost`]).
    #[inline]
    pub(crate) fn grid_move(&self, a: DVec2, b: DVec2, length: f64) -> Option<f64> {
        move_cost(self.terrain, self.profile, a, b, length)
    }

    /// The cost of a polyline (impassable legs count as infinite).
    pub(crate) fn polyline(&self, points: &[DVec2]) -> f64 {
        points
            .windows(2)
            .map(|w| self.segment(w[0], w[1]).unwrap_or(f64::INFINITY))
            .sum()
    }
}

/// The most edges a node has: 4 corners of up to 4 cells around a start or
/// goal, plus the direct edge; 8 moves plus 4 onto specials for a vertex.
const MAX_EDGES: usize = 32;

/// The terrain-cost searches' rule on any vertex graph: Theta\* (checked
/// lazily) with `any_angle`, else A\*; `h` is the heuristic.
struct Costed<'a, H> {
    costs: Costs<'a>,
    any_angle: bool,
    h: H,
    /// The edges of the node being expanded.
    edges: [(u32, DVec2, f64); MAX_EDGES],
}

impl<G: SearchGraph, H: Fn(DVec2) -> f64> Rule<G> for Costed<'_, H> {
    #[inline]
    fn h(&self, p: DVec2) -> f64 {
        (self.h)(p)
    }

    /// Path 2, checked when the node is popped: straight from its parent's
    /// parent, if that sees it and costs less (the node was queued with its
    /// cost from its parent, an upper bound).
    #[inline]
    fn mend(
        &mut self,
        graph: &mut G,
        scratch: &mut Scratch,
        ctx: &mut SearchContext<'_>,
        n: u32,
    ) -> bool {
        if !self.any_angle {
            return true;
        }
        let state = scratch.get(n);
        let grand = scratch.get(state.parent).parent;
        if grand != state.parent
            && graph.visible(ctx, grand, n)
            && let Some(c) = self.costs.segment(graph.point(grand), graph.point(n))
        {
            let g = scratch.get(grand).g + c;
            if g < state.g {
                let s = scratch.get_mut(n);
                s.g = g;
                s.parent = grand;
            }
        }
        true
    }

    /// Path 1: from `n`, one grid move (or a move within a start or goal's
    /// cell), cheap to cost.
    #[inline]
    fn expand(&mut self, graph: &G, scratch: &mut Scratch, ctx: &mut SearchContext<'_>, n: u32) {
        let g_n = scratch.get(n).g;
        let here = graph.point(n);
        let mut count = 0;
        let edges = &mut self.edges;
        graph.neighbours(n, |m, p, length| {
            if count < MAX_EDGES {
                edges[count] = (m, p, length);
                count += 1;
            }
        });
        for &(m, p, length) in &self.edges[..count] {
            if scratch.get(m).closed {
                continue;
            }
            if let Some(c) = self.costs.grid_move(here, p, length)
                && scratch.relax(m, g_n + c, n, || (self.h)(p))
            {
                ctx.stats.generated += 1;
                ctx.stats.pushed += 1;
            }
        }
    }
}

/// Runs Theta\* (`any_angle`) or A\* with `costs` from `ctx.start` to
/// `ctx.goal`; on success the path is in `out`, start first.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    costs: Costs<'_>,
    any_angle: bool,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    let mut graph = Graph::new(ctx);
    let h = towards(ctx, ctx.goal.p);
    let mut rule = Costed {
        costs,
        any_angle,
        h,
        edges: [(0, DVec2::ZERO, 0.0); MAX_EDGES],
    };
    run(&mut graph, &mut rule, scratch, ctx, out, resume)
}
