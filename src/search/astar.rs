//! A\*: its rule for the best-first loop (on a grid's vertices or a mesh's
//! corners), A\* on the 8-connected vertex grid (the baseline), and
//! line-of-sight post-smoothing ("A\* PS", Botea, Müller & Schaeffer 2004,
//! as evaluated in Daniel et al., JAIR 39, 2010).
//!
//! The octile heuristic is consistent for moves of cost 1 and sqrt 2; for a
//! goal that is not a vertex it is the octile distance to the best corner of
//! the goal's cells plus the straight distance from that corner to the goal,
//! which is consistent too (a minimum of consistent heuristics).

use bevy_math::DVec2;

use super::best_first::{Rule, Scratch, SearchGraph, run};
use super::vertex_graph::Graph;
use super::{Endpoint, Outcome, SearchContext};
use crate::los::line_of_sight;

/// A\*'s rule on any vertex graph: an expanded node offers each neighbour
/// the path through itself and the edge between them; `h` is the heuristic.
pub(crate) struct AStar<H> {
    pub h: H,
}

impl<G: SearchGraph, H: Fn(DVec2) -> f64> Rule<G> for AStar<H> {
    #[inline]
    fn h(&self, p: DVec2) -> f64 {
        (self.h)(p)
    }

    #[expect(
        clippy::inline_always,
        reason = "the search loop's body: its edge callback must inline into the graph's edge loop"
    )]
    #[inline(always)]
    fn expand(&mut self, graph: &G, scratch: &mut Scratch, ctx: &mut SearchContext<'_>, n: u32) {
        let g_n = scratch.get(n).g;
        // (Inlined by hand, as in Lazy Theta*.)
        graph.neighbours(
            n,
            #[inline(always)]
            |m, p, cost| {
                if scratch.relax(m, g_n + cost, n, || (self.h)(p)) {
                    ctx.stats.generated += 1;
                    ctx.stats.pushed += 1;
                }
            },
        );
    }
}

fn octile(a: DVec2, b: DVec2) -> f64 {
    let d = (a - b).abs();
    d.max_element() + (core::f64::consts::SQRT_2 - 1.0) * d.min_element()
}

/// Runs A* from `ctx.start` to `ctx.goal`; on success the path is in `out`.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    let mut graph = Graph::new(ctx);
    let weight = ctx.options.weight();
    // Targets for the heuristic: the goal vertex, or the goal's cell corners
    // with the straight remainder to the goal point.
    let goal = ctx.goal;
    let mut targets = [(DVec2::ZERO, 0.0); 16];
    let mut target_count = 0;
    if goal.vertex.is_some() {
        targets[0] = (goal.p, 0.0);
        target_count = 1;
    } else {
        for c in goal.cells() {
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let corner = DVec2::new((c[0] + dx) as f64, (c[1] + dy) as f64);
                targets[target_count] = (corner, corner.distance(goal.p));
                target_count += 1;
            }
        }
    }
    let targets = &targets[..target_count];
    let h = |p: DVec2| {
        if p == goal.p {
            return 0.0;
        }
        weight
            * targets
                .iter()
                .map(|(t, rest)| octile(p, *t) + rest)
                .fold(f64::INFINITY, f64::min)
    };

    run(&mut graph, &mut AStar { h }, scratch, ctx, out, resume)
}

/// Whether a leg between two path points is usable (visible, and allowed by
/// the south-east rule at a start or goal on a double corner).
fn leg_ok(ctx: &mut SearchContext<'_>, a: DVec2, b: DVec2) -> bool {
    ctx.stats.los_checks += 1;
    let rule = |e: &Endpoint, p: DVec2, other: DVec2| p != e.p || e.allows_towards(other);
    rule(ctx.start, a, b) && rule(ctx.goal, b, a) && line_of_sight(ctx.grid, a, b)
}

/// Greedy post-smoothing in place: keeps a waypoint only where the previous
/// kept one cannot see the next.
pub(crate) fn smooth(ctx: &mut SearchContext<'_>, path: &mut Vec<DVec2>) {
    if path.len() < 3 {
        return;
    }
    let mut kept = 1; // path[..kept] is the smoothed prefix
    for j in 1..path.len() - 1 {
        let anchor = path[kept - 1];
        if !leg_ok(ctx, anchor, path[j + 1]) {
            path[kept] = path[j];
            kept += 1;
        }
    }
    let last = path[path.len() - 1];
    path[kept] = last;
    path.truncate(kept + 1);
}
