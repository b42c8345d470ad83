//! Lazy Theta\* (Nash, Koenig & Tovey, "Lazy Theta\*: Any-Angle Path
//! Planning and Path Length Analysis in 3D", AAAI 2010), after Theta\*
//! (Daniel, Nash, Koenig & Felner, JAIR 39, 2010): its rule for the
//! best-first loop, on a grid's vertices or a mesh's corners.
//!
//! Like A\* on the vertex graph, but a node generated from `n` takes `n`'s
//! parent as its own, *assuming* the parent sees it. The assumption is
//! checked once, when the node is expanded: if the line of sight fails, the
//! node takes instead the best already-expanded neighbour as parent.
//! One line-of-sight check per expansion instead of one per generation.

use bevy_math::DVec2;

use super::best_first::{Rule, Scratch, SearchGraph, run, towards};
use super::vertex_graph::Graph;
use super::{Outcome, SearchContext};

/// Lazy Theta\*'s rule on any vertex graph; `h` is the heuristic.
pub(crate) struct LazyTheta<H> {
    pub h: H,
}

impl<G: SearchGraph, H: Fn(DVec2) -> f64> Rule<G> for LazyTheta<H> {
    #[inline]
    fn h(&self, p: DVec2) -> f64 {
        (self.h)(p)
    }

    /// `SetVertex`: verifies the assumed line of sight from the parent, else
    /// takes the expanded neighbour through which the node is nearest.
    /// Without one (an edge seen from one side only), the node waits for
    /// another offer.
    #[expect(
        clippy::inline_always,
        reason = "the search loop's body: its edge callback must inline into the graph's edge loop"
    )]
    #[inline(always)]
    fn mend(
        &mut self,
        graph: &mut G,
        scratch: &mut Scratch,
        ctx: &mut SearchContext<'_>,
        n: u32,
    ) -> bool {
        let parent = scratch.get(n).parent;
        if graph.visible(ctx, parent, n) {
            return true;
        }
        let mut best = (f64::INFINITY, parent);
        graph.neighbours(
            n,
            #[inline(always)]
            |m, _, cost| {
                let ms = scratch.get(m);
                if ms.closed && ms.g + cost < best.0 {
                    best = (ms.g + cost, m);
                }
            },
        );
        if best.0 == f64::INFINITY {
            return false;
        }
        let s = scratch.get_mut(n);
        s.g = best.0;
        s.parent = best.1;
        true
    }

    /// Offers each neighbour the straight path from `n`'s parent, assumed
    /// to see it.
    #[expect(
        clippy::inline_always,
        reason = "the search loop's body: its edge callback must inline into the graph's edge loop"
    )]
    #[inline(always)]
    fn expand(&mut self, graph: &G, scratch: &mut Scratch, ctx: &mut SearchContext<'_>, n: u32) {
        let n_parent = scratch.get(n).parent;
        let g_parent = scratch.get(n_parent).g;
        let parent_point = graph.point(n_parent);
        // (Inlined by hand: left out of line, it costs some 10 % of the
        // search time.)
        graph.neighbours(
            n,
            #[inline(always)]
            |m, p, _| {
                // Path 2, assumed: straight from n's parent.
                let g = g_parent + parent_point.distance(p);
                if scratch.relax(m, g, n_parent, || (self.h)(p)) {
                    ctx.stats.generated += 1;
                    ctx.stats.pushed += 1;
                }
            },
        );
    }
}

/// Runs Lazy Theta\* on the grid from `ctx.start` to `ctx.goal`; on
/// success the path is in `out`, start first.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    let mut graph = Graph::new(ctx);
    let h = towards(ctx, ctx.goal.p);
    run(&mut graph, &mut LazyTheta { h }, scratch, ctx, out, resume)
}
