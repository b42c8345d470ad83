//! Polyanya: Anya's intervals over the convex polygons of a navigation mesh (Cui, Harabor & Grastien, IJCAI 2017).
//!
//! A search node is a *cone*: a root (the start or a corner the path turned
//! at), the two lines through the root that bound the paths the node stands
//! for, and the polygon those paths enter next, through an interval of one
//! of its edges. Expanding a node projects the cone across that polygon
//! onto its other edges (one successor per edge the cone reaches), and,
//! where a side of the cone runs exactly through a corner of the entry
//! edge at which a path may turn, turns there: the part of the polygon
//! beyond that side gets the corner as a new root. A node whose root is a
//! vertex of the polygon it enters (a *flat* node: the turn's first step,
//! into the polygons around the corner) sees the whole polygon. An edge in
//! line with the root (grid maps are full of them: walls the path runs
//! along) is seen edge-on: paths run along it to its nearer end and may
//! turn there into the polygon beyond.
//!
//! Every decision is an exact orientation test on the mesh's integer
//! vertices, the start and the goal ([`crate::geom`]); a cone's sides are
//! kept as pairs of those points, never as computed intersections, which
//! only the heuristic uses. The heuristic is Anya's: the length of the
//! shortest way from the root through the interval to the goal, the goal
//! reflected across the interval's line when it lies on the root's side.
//!
//! Pruning, as in the paper: a successor entering a polygon with no other
//! way out (a dead end) that does not hold the goal is dropped; a node
//! whose expansion leaves a single successor is expanded on at once
//! instead of being queued; a root reached more cheaply before is not
//! turned at again, and a queued node whose root has since been reached
//! more cheaply is skipped when popped.
//!
//! [`search_many`] runs the same search from one source towards many
//! targets at once (many agents with one goal: the paths are the same both
//! ways). It has no heuristic to a target; nodes go by their root's cost
//! plus the distance to their interval, and a dead end is kept if it holds
//! any target.

mod expand;
pub(crate) mod focus;
mod geometry;
mod history;
mod targets;

use bevy_math::DVec2;

use self::expand::Search;
use self::geometry::{next, prev};
use self::history::{RootHistory, vertex_key};
use self::targets::{NO_ROOT, Targets};
use super::heap::OpenList;
use super::{Endpoint, Outcome, SearchContext};
use crate::geom::lattice_shift;
use crate::mesh::NavMesh;

/// The root record of the start.
const START: u32 = 0;

/// A root: the start or a corner a path turned at.
#[derive(Clone, Copy, Debug)]
struct Root {
    p: DVec2,
    /// The root before it on the path ([`START`] for the start itself).
    parent: u32,
    /// Length of the path from the start.
    g: f64,
}

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Paths from the root within the cone `hi`..`lo`.
    Cone,
    /// Paths from the root, a vertex of the entry edge, into the whole
    /// polygon.
    Flat,
    /// The goal, reached straight from the root.
    Goal,
}

/// A search node (see the [module docs](self)).
#[derive(Clone, Copy, Debug)]
struct Node {
    root: u32,
    /// The side through the root that bounds the cone at the entry edge's
    /// `hi` end: inside is where [`orient_sign`] of it is `>= 0`.
    ///
    /// [`orient_sign`]: crate::geom::orient_sign
    hi: [DVec2; 2],
    /// The side at the `lo` end: inside is where it is `<= 0`.
    lo: [DVec2; 2],
    /// The polygon entered.
    poly: u32,
    /// The entry edge's index in `poly` (from its `lo` end).
    entry: u16,
    /// The index of the same edge in the polygon expanded into this node
    /// (for [`Search::flush`]'s deferred `f`).
    exit: u16,
    kind: Kind,
    /// `g + h`: for a goal node, the path's length. NaN until
    /// [`Search::flush`] works it out (see [`Search::cone`]).
    f: f64,
}

/// Reusable search memory.
#[derive(Default)]
pub(crate) struct Scratch {
    roots: Vec<Root>,
    nodes: Vec<Node>,
    open: OpenList,
    succ: Vec<Node>,
    history: RootHistory,
    start_polys: Vec<u32>,
    goal_polys: Vec<u32>,
    best_goal: f64,
    /// The targets of [`search_many`].
    targets: Targets,
    /// Successors into chunks not built yet (of a mesh built on demand),
    /// each with `poly` the polygon it leaves and `exit` the edge: they go
    /// on once the chunk beyond is built.
    parked: Vec<Node>,
    /// The least `f` of `parked` (infinite when none).
    parked_min: f64,
    /// Whether the mesh may have grown since the parked nodes were looked
    /// at (the search was resumed).
    recheck: bool,
    /// Whether the search has begun (its start found on the mesh).
    begun: bool,
    /// The polygon being expanded (or seeded from).
    here: u32,
    /// The chunk slots the search needs built to go on, when it stopped
    /// with [`Outcome::Unbuilt`].
    pub(crate) wanted: Vec<u32>,
}

impl Scratch {
    /// Bytes held by the buffers.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.roots.capacity() * size_of::<Root>()
            + (self.nodes.capacity() + self.succ.capacity()) * size_of::<Node>()
            + self.open.memory_bytes()
            + self.history.memory_bytes()
            + (self.start_polys.capacity() + self.goal_polys.capacity()) * 4
            + self.targets.memory_bytes()
            + self.parked.capacity() * size_of::<Node>()
            + self.wanted.capacity() * 4
    }

    /// Starts a search from `s` (the point of `start`, in mesh
    /// coordinates): its root, and the polygons it may leave through.
    fn begin(&mut self, mesh: &NavMesh, s: DVec2, start: &Endpoint) {
        self.roots.clear();
        self.nodes.clear();
        self.open.clear();
        self.history.clear();
        self.parked.clear();
        self.parked_min = f64::INFINITY;
        self.recheck = false;
        self.begun = true;
        self.best_goal = f64::INFINITY;
        self.roots.push(Root {
            p: s,
            parent: START,
            g: 0.0,
        });
        if s.x.fract() == 0.0 && s.y.fract() == 0.0 {
            // Never turn at the start again.
            self.history.improve(vertex_key(s), 0.0);
        }
        self.start_polys.clear();
        mesh.polygons_at(s, start.cells(), &mut self.start_polys);
        retain_allowed(mesh, start, &mut self.start_polys);
    }

    /// The path [`search_many`] found to target `k`, from the target to
    /// the source, appended to `out`; `false` if it found none.
    pub(crate) fn path_from_target(&self, k: usize, out: &mut Vec<DVec2>) -> bool {
        let (_, mut r) = self.targets.best[k];
        if r == NO_ROOT {
            return false;
        }
        out.push(self.targets.points[k]);
        loop {
            let root = self.roots[r as usize];
            out.push(root.p);
            if r == START {
                return true;
            }
            r = root.parent;
        }
    }
}

/// Runs Polyanya on `mesh` (whose grid is `ctx.grid`), appending the path's
/// waypoints to `out` when found. See [`super::anya::search`] for `resume`.
pub(crate) fn search(
    ctx: &mut SearchContext<'_>,
    mesh: &NavMesh,
    scratch: &mut Scratch,
    out: &mut Vec<DVec2>,
    resume: bool,
) -> Outcome {
    // In mesh coordinates: cells, or a finer lattice for agents of a radius.
    let scale = mesh.scale();
    let (s, t) = (ctx.start.p * scale as f64, ctx.goal.p * scale as f64);
    let lattice = scale == 1 && lattice_shift(&[s, t]).is_some();
    scratch.wanted.clear();
    let resume = resume && scratch.begun;
    scratch.recheck = resume;
    if !resume {
        // (A mesh built on demand: the chunks of both ends first.)
        mesh.unbuilt_of_cells(ctx.start.cells(), &mut scratch.wanted);
        mesh.unbuilt_of_cells(ctx.goal.cells(), &mut scratch.wanted);
        if !scratch.wanted.is_empty() {
            scratch.begun = false;
            return Outcome::Unbuilt;
        }
        scratch.begin(mesh, s, ctx.start);
        scratch.goal_polys.clear();
        mesh.polygons_at(t, ctx.goal.cells(), &mut scratch.goal_polys);
        retain_allowed(mesh, ctx.goal, &mut scratch.goal_polys);
        let mut search = Search::<false> {
            mesh,
            t,
            lattice,
            defer: false,
            scratch,
        };
        search.seed(s);
        search.flush(&mut ctx.stats, None);
    }
    let mut search = Search::<false> {
        mesh,
        t,
        lattice,
        defer: true,
        scratch,
    };
    loop {
        let node = match search.pop(ctx) {
            Ok(node) => node,
            Err(stop) => return stop,
        };
        if node.kind == Kind::Goal {
            let first = out.len();
            search.path(node.root, out);
            if scale != 1 {
                let points = &mut out[first..];
                for p in points.iter_mut() {
                    *p /= scale as f64;
                }
                // The ends exactly as asked, not through the lattice.
                let last = points.len() - 1;
                (points[0], points[last]) = (ctx.start.p, ctx.goal.p);
            }
            return Outcome::Found;
        }
        search.expand_popped(ctx, node);
    }
}

/// Runs Polyanya from `ctx.start` to every point of `targets` at once, on
/// `mesh`: the shortest path to each, as long as the path a search from it
/// to the source would find (visibility is the same both ways). Nodes are
/// popped by their root's cost plus the distance to their interval, a
/// bound for any target beyond it; the search ends once every target has a
/// way no longer than the next node's bound, or when nothing is left
/// (targets not reached then have none). Read the paths with
/// [`Scratch::path_from_target`] (in mesh coordinates: on a mesh for a
/// radius, divide by [`NavMesh::scale`]).
pub(crate) fn search_many(
    ctx: &mut SearchContext<'_>,
    mesh: &NavMesh,
    scratch: &mut Scratch,
    targets: &[Endpoint],
    resume: bool,
) -> Outcome {
    // In mesh coordinates: cells, or a finer lattice for agents of a radius.
    let scale = mesh.scale() as f64;
    let s = ctx.start.p * scale;
    scratch.wanted.clear();
    let resume = resume && scratch.begun;
    scratch.recheck = resume;
    if !resume {
        // (A mesh built on demand: the chunks of every end first.)
        mesh.unbuilt_of_cells(ctx.start.cells(), &mut scratch.wanted);
        for end in targets {
            mesh.unbuilt_of_cells(end.cells(), &mut scratch.wanted);
        }
        if !scratch.wanted.is_empty() {
            scratch.begun = false;
            return Outcome::Unbuilt;
        }
        many_begin(mesh, scratch, s, ctx.start, targets);
        seed_many(ctx, mesh, scratch, s);
    }
    let lattice = scratch.targets.lattice;
    let mut search = Search::<true> {
        mesh,
        t: s,
        lattice,
        defer: true,
        scratch,
    };
    search_many_from(ctx, &mut search)
}

/// Queues the first nodes of a search from `s` (in mesh coordinates) set
/// up towards many targets, by the distance to their intervals.
fn seed_many(ctx: &mut SearchContext<'_>, mesh: &NavMesh, scratch: &mut Scratch, s: DVec2) {
    let lattice = scratch.targets.lattice;
    let mut search = Search::<true> {
        mesh,
        t: s,
        lattice,
        defer: false,
        scratch,
    };
    search.seed(s);
    search.flush(&mut ctx.stats, None);
}

/// Sets a search from `s` (the point of `start`, in mesh coordinates)
/// towards `targets` up: its root, its start polygons and its targets, not
/// yet seeded.
fn many_begin(
    mesh: &NavMesh,
    scratch: &mut Scratch,
    s: DVec2,
    start: &Endpoint,
    targets: &[Endpoint],
) {
    scratch.begin(mesh, s, start);
    let prepared = TargetPolys::new(mesh, targets, &mut scratch.goal_polys);
    scratch.targets.set(s, &prepared);
}

/// Targets in mesh coordinates and the polygons each may be reached
/// through, worked out once for many searches.
#[derive(Clone, Debug, Default)]
pub(crate) struct TargetPolys {
    points: Vec<DVec2>,
    /// (polygon, target), sorted.
    by_poly: Vec<(u32, u32)>,
    /// Whether every point is a multiple of 1/2.
    lattice: bool,
}

impl TargetPolys {
    /// `targets` (in cells) on `mesh`; `found` is scratch memory.
    pub(crate) fn new(mesh: &NavMesh, targets: &[Endpoint], found: &mut Vec<u32>) -> Self {
        let scale = mesh.scale() as f64;
        let mut prepared = TargetPolys {
            points: Vec::with_capacity(targets.len()),
            by_poly: Vec::new(),
            lattice: scale == 1.0,
        };
        for (k, end) in targets.iter().enumerate() {
            let p = end.p * scale;
            prepared.points.push(p);
            prepared.lattice &= lattice_shift(&[p]).is_some();
            found.clear();
            mesh.polygons_at(p, end.cells(), found);
            retain_allowed(mesh, end, found);
            prepared
                .by_poly
                .extend(found.iter().map(|&poly| (poly, k as u32)));
        }
        prepared.by_poly.sort_unstable();
        prepared
    }
}

impl Targets {
    /// The targets of a search from `s` (in mesh coordinates), none
    /// reached yet.
    fn set(&mut self, s: DVec2, prepared: &TargetPolys) {
        self.points.clear();
        self.points.extend_from_slice(&prepared.points);
        self.by_poly.clear();
        self.by_poly.extend_from_slice(&prepared.by_poly);
        self.best.clear();
        self.best
            .resize(prepared.points.len(), (f64::INFINITY, NO_ROOT));
        self.found = 0;
        self.worst = (0.0, 0);
        self.lattice = prepared.lattice && lattice_shift(&[s]).is_some();
    }
}

/// [`search_many`]'s loop, from where its search stands: pops until every
/// target has its path and none can get a shorter one, or the search stops
/// (out of budget, cancelled, or paused at the end of a slice).
fn search_many_from(ctx: &mut SearchContext<'_>, search: &mut Search<'_, true>) -> Outcome {
    loop {
        let node = match search.pop(ctx) {
            Ok(node) => node,
            Err(stop) => return stop,
        };
        let tg = &search.scratch.targets;
        if tg.found == tg.points.len() && node.f >= tg.worst.0 {
            return Outcome::Found;
        }
        search.expand_popped(ctx, node);
    }
}

/// The index of root `r`'s parent record.
fn root_parent(roots: &[Root], r: u32) -> usize {
    roots[r as usize].parent as usize
}

/// Keeps the polygons of `polys` through which a path may leave or reach
/// `end` (all of them but at a double corner, where
/// [`Endpoint::allows_towards`] keeps those on its south-east side: both of
/// the polygon's edges at the point head that way).
fn retain_allowed(mesh: &NavMesh, end: &Endpoint, polys: &mut Vec<u32>) {
    if !end.restricted {
        return;
    }
    polys.retain(|&id| {
        let poly = mesh.polygon(id);
        let n = poly.len();
        (0..n).find(|&k| poly.at(k) == end.p).is_some_and(|k| {
            end.allows_towards(poly.at(next(k, n))) && end.allows_towards(poly.at(prev(k, n)))
        })
    });
}
