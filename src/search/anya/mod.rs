//! Anya (Harabor, Grastien, Oz & Aksakalli, "Optimal Any-Angle Pathfinding
//! In Practice", JAIR 56, 2016). Placeholder until the planner lands: it
//! serves queries with A* and post-smoothing so the API is stable.

use bevy_math::DVec2;

use super::vertex_graph;
use super::{Outcome, SearchContext};

/// Anya's reusable search memory.
#[derive(Default, Debug)]
pub(crate) struct Scratch {
    vertex: vertex_graph::Scratch,
}

/// Runs Anya from `ctx.start` to `ctx.goal`; on success the path is in `out`.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
) -> Outcome {
    let o = super::astar::search(ctx, &mut scratch.vertex, out);
    if o == Outcome::Found {
        super::astar::smooth(ctx, out);
    }
    o
}
