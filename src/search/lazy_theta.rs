//! Lazy Theta* (Nash, Koenig & Tovey, "Lazy Theta*: Any-Angle Path Planning
//! and Path Length Analysis in 3D", AAAI 2010), after Theta* (Daniel, Nash,
//! Koenig & Felner, JAIR 39, 2010).
//!
//! Like A* on the vertex graph, but a node generated from `n` takes `n`'s
//! parent as its own, *assuming* the parent sees it. The assumption is
//! checked once, when the node is expanded: if the line of sight fails, the
//! node takes instead the best already-expanded grid neighbour as parent.
//! One line-of-sight check per expansion instead of one per generation.

use bevy_math::DVec2;

use super::vertex_graph::{Graph, Scratch};
use super::{Outcome, SearchContext};

/// Runs Lazy Theta* from `ctx.start` to `ctx.goal`; on success the path is
/// in `out`, start first.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    let graph = Graph::new(ctx);
    let weight = ctx.options.weight();
    let goal_point = ctx.goal.p;
    let h = |p: DVec2| weight * p.distance(goal_point);

    let start = graph.start;
    if !resume {
        graph.seed(scratch, ctx, h(graph.point(start)));
    }

    loop {
        if let Some(stop) = ctx.should_stop() {
            return stop;
        }
        let Some(n) = scratch.pop() else {
            return Outcome::Exhausted;
        };
        // SetVertex: verify the assumed line of sight from the parent.
        let parent = scratch.get(n).parent;
        if n != start && !graph.visible(ctx, parent, n) {
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
            let s = scratch.get_mut(n);
            s.g = best.0;
            s.parent = best.1;
        }
        if graph.finish_or_close(scratch, ctx, n, out) {
            return Outcome::Found;
        }
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
                if scratch.relax(m, g, n_parent, || h(p)) {
                    ctx.stats.generated += 1;
                    ctx.stats.pushed += 1;
                }
            },
        );
    }
}
