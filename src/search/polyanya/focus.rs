//! A one-to-many search answered one target at a time: nodes go by the way
//! to the target asked for (A\*'s order), and the search asks for the next
//! target from where it stands, its open nodes ordered afresh.
//!
//! Every expansion offers a way to each target in the polygon it expands
//! (as [`super::search_many`] does), so a target is reached however the
//! nodes were ordered when its polygon was expanded. Target `k` is done once
//! it has a way no longer than the best open node's `f` towards it: `f`
//! towards `k` bounds every way to `k` that is still open (the heuristic is
//! consistent for each target), and the nodes closed so far were closed
//! with their shortest roots whatever the order.

use bevy_math::DVec2;

use super::expand::Search;
use super::geometry::{clip, heuristic, next};
use super::targets::NO_ROOT;
use super::{Kind, Scratch, TargetPolys};
use crate::mesh::NavMesh;
use crate::search::{Outcome, SearchContext};

/// No target asked for yet.
pub(super) const NO_FOCUS: u32 = u32::MAX;

/// Sets up a search on `mesh` from `ctx.start` towards `targets`, run by
/// [`focus_run`].
pub(crate) fn focus_begin(
    ctx: &mut SearchContext<'_>,
    mesh: &NavMesh,
    scratch: &mut Scratch,
    targets: &TargetPolys,
) {
    let s = ctx.start.p * mesh.scale() as f64;
    scratch.begin(mesh, s, ctx.start);
    scratch.targets.set(s, targets);
    scratch.targets.focus = NO_FOCUS;
    // (Its first nodes go by the distance to their intervals: ordered
    // afresh towards the first target asked for.)
    super::seed_many(ctx, mesh, scratch, s);
}

/// Goes on with the search [`focus_begin`] set up until target `k` has
/// its shortest way ([`Outcome::Found`], read it with
/// [`Scratch::path_from_target`]), or none is left ([`Outcome::Exhausted`]:
/// the target has the way found, if any, which is then the shortest), or
/// the search stops (out of budget, cancelled, or paused).
pub(crate) fn focus_run(
    ctx: &mut SearchContext<'_>,
    mesh: &NavMesh,
    scratch: &mut Scratch,
    k: usize,
) -> Outcome {
    let t = scratch.targets.points[k];
    let lattice = scratch.targets.lattice;
    if scratch.targets.focus != k as u32 {
        scratch.targets.focus = k as u32;
        rekey(mesh, scratch, t);
    }
    let mut search = Search::<true, true> {
        mesh,
        t,
        lattice,
        defer: true,
        scratch,
    };
    loop {
        let (best, root) = search.scratch.targets.best[k];
        if root != NO_ROOT
            && search
                .scratch
                .open
                .peek()
                .is_none_or(|id| search.scratch.nodes[id as usize].f >= best)
        {
            return Outcome::Found;
        }
        let node = match search.pop(ctx) {
            Ok(node) => node,
            Err(stop) => return stop,
        };
        search.expand_popped(ctx, node);
    }
}

/// Orders the open nodes by the way through them to `t`: each node's `f`
/// is what [`Search::cone`] or [`Search::flat`] would give it towards `t`.
fn rekey(mesh: &NavMesh, scratch: &mut Scratch, t: DVec2) {
    let Scratch {
        roots, nodes, open, ..
    } = scratch;
    open.rekey(|id| {
        let node = &mut nodes[id as usize];
        let r = roots[node.root as usize];
        node.f = match node.kind {
            Kind::Cone => {
                // The interval on the entry edge, its ends as the polygon
                // the node was made from saw them: `a` at the `hi` side.
                let poly = mesh.polygon(node.poly);
                let e = usize::from(node.entry);
                let (a, b) = (poly.at(next(e, poly.len())), poly.at(e));
                let hi_pt = if node.hi[1] == a {
                    a
                } else {
                    clip(&node.hi, a, b)
                };
                let lo_pt = if node.lo[1] == b {
                    b
                } else {
                    clip(&node.lo, a, b)
                };
                r.g + heuristic(r.p, lo_pt, hi_pt, t)
            }
            Kind::Flat => r.g + r.p.distance(t),
            Kind::Goal => node.f,
        };
        (node.f, r.g)
    });
}
