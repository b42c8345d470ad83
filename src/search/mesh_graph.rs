//! A* and Lazy Theta* over a navigation mesh's polygon corners: valid paths
//! on meshes for agents of a radius, for callers that ask for those planners.
//!
//! The graph's nodes are the corners of the mesh's polygons, the start and
//! the goal; two nodes are joined when one polygon holds both (its
//! polygons are convex: the segment between them lies on the mesh). A\*
//! runs on that graph. Lazy Theta\* (Nash, Koenig & Tovey, AAAI 2010) runs
//! on it as on a grid: a node takes its predecessor's parent, and is checked
//! when expanded to see that parent along a segment on the mesh, else takes
//! the best expanded neighbour instead. Every segment of a path is one the
//! mesh holds, so a path keeps the mesh's distance from the walls; neither
//! planner promises the shortest path (Polyanya does). Both honour the
//! query's node budget, heuristic weight and cancel flag, and run in slices
//! like the grid planners.

use core::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::fast_hash::FastMap;

use bevy_math::DVec2;

use super::{Outcome, SearchContext};
use crate::mesh::locate::{polygons_at, walk_segment};
use crate::mesh::{NavMesh, PORTAL};

/// Scratch memory for searches over a mesh's corners, kept between queries.
#[derive(Default)]
pub(crate) struct MeshGraph {
    /// Node of each corner met, by its lattice coordinates.
    index: FastMap<[i32; 2], u32>,
    nodes: Vec<Node>,
    open: BinaryHeap<Open>,
    /// Polygons around a node.
    around: Vec<u32>,
    /// Polygons holding the goal.
    goal_polys: Vec<u32>,
    /// Neighbours of a node: (node, its point).
    neighbours: Vec<(u32, DVec2)>,
}

/// The start's node.
const START: u32 = 0;
/// The goal's node.
const GOAL: u32 = 1;
/// No node.
const NIL: u32 = u32::MAX;

/// A node: a point (in mesh coordinates) and where the search put it.
#[derive(Clone, Copy)]
struct Node {
    p: DVec2,
    /// A polygon holding the point and its index there (for corners).
    poly: u32,
    slot: u16,
    g: f64,
    parent: u32,
    closed: bool,
}

/// An entry of the open list (smallest `f` first, then largest `g`).
#[derive(Clone, Copy, PartialEq)]
struct Open {
    f: f64,
    g: f64,
    node: u32,
}

impl Eq for Open {}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .f
            .total_cmp(&self.f)
            .then(self.g.total_cmp(&other.g))
            .then(other.node.cmp(&self.node))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
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
        let (s, t) = (from * scale, to * scale);
        let weight = ctx.options.weight();
        if !resume {
            self.index.clear();
            self.nodes.clear();
            self.open.clear();
            self.goal_polys.clear();
            polygons_at(mesh, to, &mut self.goal_polys);
            let point = |p: DVec2| Node {
                p,
                poly: NIL,
                slot: 0,
                g: f64::INFINITY,
                parent: NIL,
                closed: false,
            };
            self.nodes.push(Node {
                g: 0.0,
                parent: START,
                ..point(s)
            });
            self.nodes.push(point(t));
            self.open.push(Open {
                f: weight * s.distance(t),
                g: 0.0,
                node: START,
            });
        }
        let lazy = mode == Mode::LazyTheta;
        while let Some(entry) = self.open.pop() {
            let Open { g, node, .. } = entry;
            let n = node as usize;
            if self.nodes[n].closed || g > self.nodes[n].g {
                continue;
            }
            match ctx.should_stop() {
                Some(Outcome::Budget) => {
                    ctx.stats.popped += 1;
                    return Outcome::Budget;
                }
                Some(stop) => {
                    // Paused or cancelled: the node is expanded on resuming.
                    self.open.push(entry);
                    return stop;
                }
                None => {}
            }
            let stats = &mut ctx.stats;
            stats.popped += 1;
            self.neighbours_of(mesh, node, found);
            if lazy && node != START {
                // The parent was taken on trust: check it sees the node,
                // else take the best expanded neighbour.
                let parent = self.nodes[n].parent;
                stats.los_checks += 1;
                if !sees(mesh, self.nodes[parent as usize].p, self.nodes[n].p, found) {
                    let p = self.nodes[n].p;
                    let best = self
                        .neighbours
                        .iter()
                        .filter(|&&(m, _)| self.nodes[m as usize].closed)
                        .map(|&(m, q)| (self.nodes[m as usize].g + q.distance(p), m))
                        .min_by(|a, b| a.0.total_cmp(&b.0));
                    // (The node was generated from an expanded neighbour,
                    // which it sees: there is one.)
                    let Some((g, m)) = best else {
                        continue;
                    };
                    self.nodes[n].g = g;
                    self.nodes[n].parent = m;
                }
            }
            self.nodes[n].closed = true;
            stats.expanded += 1;
            if node == GOAL {
                let mut path = Vec::new();
                let mut at = GOAL;
                while at != START {
                    path.push(self.nodes[at as usize].p / scale);
                    at = self.nodes[at as usize].parent;
                }
                path.push(from);
                path.reverse();
                if mode == Mode::AStarSmoothed {
                    smooth(mesh, &mut path, found);
                }
                out.extend(path);
                return Outcome::Found;
            }
            let (p, gn) = (self.nodes[n].p, self.nodes[n].g);
            let (via, gv) = if lazy && node != START {
                let parent = self.nodes[n].parent;
                (parent, self.nodes[parent as usize].g)
            } else {
                (node, gn)
            };
            let via_p = self.nodes[via as usize].p;
            for k in 0..self.neighbours.len() {
                let (m, q) = self.neighbours[k];
                let mi = m as usize;
                if self.nodes[mi].closed {
                    continue;
                }
                stats.generated += 1;
                let (parent, g) = if via == node {
                    (node, gn + p.distance(q))
                } else {
                    (via, gv + via_p.distance(q))
                };
                if g < self.nodes[mi].g {
                    self.nodes[mi].g = g;
                    self.nodes[mi].parent = parent;
                    stats.pushed += 1;
                    self.open.push(Open {
                        f: g + weight * q.distance(t),
                        g,
                        node: m,
                    });
                }
            }
        }
        Outcome::Exhausted
    }

    /// Fills `self.neighbours` with the nodes that share a polygon with
    /// `node` (the goal among them where it does).
    fn neighbours_of(&mut self, mesh: &NavMesh, node: u32, found: &mut Vec<u32>) {
        self.around.clear();
        let n = self.nodes[node as usize];
        if n.poly == NIL {
            // The start or the goal: the polygons holding it.
            found.clear();
            polygons_at(mesh, n.p / mesh.scale() as f64, found);
            self.around.extend_from_slice(found);
        } else {
            polygons_around(mesh, n.poly, usize::from(n.slot), &mut self.around);
        }
        self.neighbours.clear();
        for i in 0..self.around.len() {
            let id = self.around[i];
            let poly = mesh.polygon(id);
            for (k, slot) in poly.slots.iter().enumerate() {
                let key = slot.v;
                let m = match self.index.get(&key) {
                    Some(&m) => m,
                    None => {
                        let m = self.nodes.len() as u32;
                        self.nodes.push(Node {
                            p: poly.at(k),
                            poly: id,
                            slot: k as u16,
                            g: f64::INFINITY,
                            parent: NIL,
                            closed: false,
                        });
                        self.index.insert(key, m);
                        m
                    }
                };
                if m != node {
                    self.neighbours.push((m, poly.at(k)));
                }
            }
            if node != GOAL && self.goal_polys.contains(&id) {
                self.neighbours.push((GOAL, self.nodes[GOAL as usize].p));
            }
        }
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
