//! A* and Lazy Theta* over a navigation mesh's polygon corners: valid paths
//! on meshes for agents of a radius, for callers that ask for those planners.
//!
//! The graph's nodes are the corners of the mesh's polygons, the start and
//! the goal; two nodes are joined when one polygon holds both (its
//! polygons are convex: the segment between them lies on the mesh). The
//! graph is built as the search meets it. The searches are the vertex
//! searches' best-first loop ([`run`]) with A\*'s rule or Lazy Theta\*'s
//! (Nash, Koenig & Tovey, AAAI 2010): there a node takes its predecessor's
//! parent, and is checked when expanded to see that parent along a segment
//! on the mesh, else takes the best expanded neighbour instead. Every
//! segment of a path is one the mesh holds, so a path keeps the mesh's
//! distance from the walls; neither planner promises the shortest path
//! (Polyanya does). Both honour the query's node budget, heuristic weight
//! and cancel flag, and run in slices like the grid planners.

use crate::fast_hash::FastMap;

use bevy_math::DVec2;

use super::astar::AStar;
use super::best_first::{Scratch, SearchGraph, run, towards};
use super::lazy_theta::LazyTheta;
use super::{Outcome, SearchContext};
use crate::mesh::locate::{polygons_at, walk_segment};
use crate::mesh::{NavMesh, PORTAL};

/// Scratch memory for searches over a mesh's corners, kept between queries.
#[derive(Default)]
pub(crate) struct MeshGraph {
    lists: Lists,
    scratch: Scratch,
}

/// What a search has met of its graph.
#[derive(Default)]
struct Lists {
    /// Node of each corner met, by its lattice coordinates.
    index: FastMap<[i32; 2], u32>,
    nodes: Vec<Node>,
    /// Polygons around a node.
    around: Vec<u32>,
    /// Polygons holding the goal.
    goal_polys: Vec<u32>,
    /// Neighbours of the node popped last: (node, its point).
    neighbours: Vec<(u32, DVec2)>,
}

/// The start's node.
const START: u32 = 0;
/// The goal's node.
const GOAL: u32 = 1;
/// No polygon.
const NIL: u32 = u32::MAX;

/// A node: a point (in mesh coordinates) and, for a corner, a polygon
/// holding it and its index there.
#[derive(Clone, Copy)]
struct Node {
    p: DVec2,
    poly: u32,
    slot: u16,
}

/// How the search runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A\* over the corners.
    AStar,
    /// A\* over the corners, then each waypoint dropped when the one before
    /// it sees the one after it on the mesh.
    AStarSmoothed,
    /// Lazy Theta\* over the corners.
    LazyTheta,
}

impl MeshGraph {
    /// Searches `mesh` from `from` to `to` (in cells, both on the mesh; `to`
    /// held by `goal_polys` once found) within `ctx`'s node budget, slice
    /// and cancel flag, with its heuristic weight; pushes the path's points
    /// (in cells) onto `out` when found. With `resume`, goes on with the
    /// search it paused last (the same query).
    #[expect(clippy::too_many_arguments, reason = "one query's inputs")]
    pub(crate) fn search(
        &mut self,
        ctx: &mut SearchContext<'_>,
        mesh: &NavMesh,
        from: DVec2,
        to: DVec2,
        mode: Mode,
        found: &mut Vec<u32>,
        out: &mut Vec<DVec2>,
        resume: bool,
    ) -> Outcome {
        let scale = mesh.scale() as f64;
        let t = to * scale;
        let lists = &mut self.lists;
        if !resume {
            lists.index.clear();
            lists.nodes.clear();
            lists.goal_polys.clear();
            polygons_at(mesh, to, &mut lists.goal_polys);
            let point = |p: DVec2| Node {
                p,
                poly: NIL,
                slot: 0,
            };
            lists.nodes.extend([point(from * scale), point(t)]);
        }
        let mut graph = Corners {
            mesh,
            scale,
            from,
            lists,
            found,
        };
        let h = towards(ctx, t);
        let scratch = &mut self.scratch;
        let mut path = Vec::new();
        let outcome = match mode {
            Mode::LazyTheta => run(
                &mut graph,
                &mut LazyTheta { h },
                scratch,
                ctx,
                &mut path,
                resume,
            ),
            Mode::AStar | Mode::AStarSmoothed => run(
                &mut graph,
                &mut AStar { h },
                scratch,
                ctx,
                &mut path,
                resume,
            ),
        };
        if outcome == Outcome::Found {
            if mode == Mode::AStarSmoothed {
                smooth(mesh, &mut path, graph.found);
            }
            out.extend(path);
        }
        outcome
    }
}

/// The graph of one search over a mesh's corners.
struct Corners<'a> {
    mesh: &'a NavMesh,
    /// Mesh coordinates a cell.
    scale: f64,
    /// The start, in cells.
    from: DVec2,
    lists: &'a mut Lists,
    /// Polygons found around a point (a buffer).
    found: &'a mut Vec<u32>,
}

impl Corners<'_> {
    /// Fills `neighbours` with the nodes that share a polygon with `node`
    /// (the goal among them where it does), numbering the corners met for
    /// the first time.
    fn list_neighbours(&mut self, node: u32) {
        let (mesh, lists) = (self.mesh, &mut *self.lists);
        lists.around.clear();
        let n = lists.nodes[node as usize];
        if n.poly == NIL {
            // The start or the goal: the polygons holding it.
            self.found.clear();
            polygons_at(mesh, n.p / self.scale, self.found);
            lists.around.extend_from_slice(self.found);
        } else {
            polygons_around(mesh, n.poly, usize::from(n.slot), &mut lists.around);
        }
        lists.neighbours.clear();
        for i in 0..lists.around.len() {
            let id = lists.around[i];
            let poly = mesh.polygon(id);
            for (k, slot) in poly.slots.iter().enumerate() {
                let m = *lists.index.entry(slot.v).or_insert_with(|| {
                    lists.nodes.push(Node {
                        p: poly.at(k),
                        poly: id,
                        slot: k as u16,
                    });
                    lists.nodes.len() as u32 - 1
                });
                if m != node {
                    lists.neighbours.push((m, poly.at(k)));
                }
            }
            if node != GOAL && lists.goal_polys.contains(&id) {
                lists.neighbours.push((GOAL, lists.nodes[GOAL as usize].p));
            }
        }
    }
}

impl SearchGraph for Corners<'_> {
    #[inline]
    fn start(&self) -> u32 {
        START
    }

    #[inline]
    fn goal(&self) -> u32 {
        GOAL
    }

    fn id_bound(&self) -> usize {
        self.lists.nodes.len()
    }

    #[inline]
    fn point(&self, n: u32) -> DVec2 {
        self.lists.nodes[n as usize].p
    }

    fn traced_point(&self, n: u32) -> DVec2 {
        self.point(n) / self.scale
    }

    fn reach(&mut self, n: u32, scratch: &mut Scratch) {
        self.list_neighbours(n);
        scratch.cover(self.lists.nodes.len());
    }

    /// The neighbours of the node popped last.
    #[inline]
    fn neighbours(&self, n: u32, mut f: impl FnMut(u32, DVec2, f64)) {
        let p = self.point(n);
        for &(m, q) in &self.lists.neighbours {
            f(m, q, p.distance(q));
        }
    }

    fn visible(&mut self, ctx: &mut SearchContext<'_>, a: u32, b: u32) -> bool {
        ctx.stats.los_checks += 1;
        sees(self.mesh, self.point(a), self.point(b), self.found)
    }

    /// The path in cells, from exactly the start.
    fn path(&self, scratch: &Scratch, out: &mut Vec<DVec2>) {
        out.clear();
        let mut at = GOAL;
        while at != START {
            out.push(self.point(at) / self.scale);
            at = scratch.get(at).parent;
        }
        out.push(self.from);
        out.reverse();
    }
}

/// Pushes onto `out` the polygons around corner `k` of polygon `id`,
/// turning across the edges that meet there (both ways, until a wall).
fn polygons_around(mesh: &NavMesh, id: u32, k: usize, out: &mut Vec<u32>) {
    out.push(id);
    // Counter-clockwise: across the edge leaving the corner.
    let (mut poly, mut at) = (id, k);
    loop {
        let p = mesh.polygon(poly);
        let slot = p.slots[at];
        if slot.neigh >= PORTAL {
            break;
        }
        let next = mesh.polygon(slot.neigh);
        poly = slot.neigh;
        // That edge runs the other way there: the corner ends it.
        at = (usize::from(slot.twin) + 1) % next.len();
        if out.contains(&poly) {
            return;
        }
        out.push(poly);
    }
    // Clockwise: across the edge arriving at the corner.
    let (mut poly, mut at) = (id, k);
    loop {
        let p = mesh.polygon(poly);
        let before = (at + p.len() - 1) % p.len();
        let slot = p.slots[before];
        if slot.neigh >= PORTAL {
            break;
        }
        poly = slot.neigh;
        at = usize::from(slot.twin);
        if out.contains(&poly) {
            return;
        }
        out.push(poly);
    }
}

/// How many polygons [`sees`] walks through before it gives up.
const SIGHT_STEPS: usize = 256;

/// Whether segment `a b` (mesh coordinates, `a` on the mesh) lies on the
/// mesh: walks from each polygon holding `a` through the edges the segment
/// crosses, with exact orientation tests; one that passes through a corner
/// counts as unseen (conservative).
fn sees(mesh: &NavMesh, a: DVec2, b: DVec2, found: &mut Vec<u32>) -> bool {
    found.clear();
    polygons_at(mesh, a / mesh.scale() as f64, found);
    found
        .iter()
        .any(|&first| walk_segment(mesh, first, a, b, SIGHT_STEPS))
}

/// Drops each waypoint of `path` (in cells) whose neighbours see each other
/// on the mesh.
fn smooth(mesh: &NavMesh, path: &mut Vec<DVec2>, found: &mut Vec<u32>) {
    let scale = mesh.scale() as f64;
    let mut kept = vec![path[0]];
    for i in 1..path.len() - 1 {
        let last = *kept.last().expect("the start is kept");
        if !sees(mesh, last * scale, path[i + 1] * scale, found) {
            kept.push(path[i]);
        }
    }
    kept.push(path[path.len() - 1]);
    *path = kept;
}
