//! Expanding Polyanya's search nodes: a cone projected across its polygon,
//! turns at the corners its sides run through, and successors queued.

use bevy_math::DVec2;
use core::cmp::Ordering;

use super::geometry::{clip, heuristic, next, orient, prev, segment_distance};
use super::history::{tolerance, vertex_key};
use super::{Kind, Node, Root, START, Scratch, root_parent};
use crate::mesh::{NONE, NavMesh, PORTAL, Polygon};
use crate::search::heap::OpenEntry;
use crate::search::{Outcome, SearchContext, SearchStats};

/// One search's view of its inputs.
///
/// With `MANY`, a search towards many targets: nodes go by the distance to
/// their interval, or with `FOCUSED` by the way to one target, `t` (see
/// [`super::focus`]).
pub(super) struct Search<'a, const MANY: bool, const FOCUSED: bool = false> {
    pub(super) mesh: &'a NavMesh,
    pub(super) t: DVec2,
    /// Start and goal are multiples of 1/2 (see [`orient`]).
    pub(super) lattice: bool,
    /// Whether [`Search::cone`] may leave `f` to [`Search::flush`]: all
    /// successors come from one polygon (not so while seeding).
    pub(super) defer: bool,
    pub(super) scratch: &'a mut Scratch,
}

impl<const MANY: bool, const FOCUSED: bool> Search<'_, MANY, FOCUSED> {
    /// Orientation of `c` relative to `a -> b` (see [`orient`]).
    #[inline]
    fn orient(&self, a: DVec2, b: DVec2, c: DVec2) -> Ordering {
        orient(self.lattice, a, b, c)
    }

    /// Side of `w` relative to a cone side.
    #[inline]
    fn side(&self, line: &[DVec2; 2], w: DVec2) -> Ordering {
        orient(self.lattice, line[0], line[1], w)
    }

    /// Whether `poly` holds the goal (one of the targets, when `MANY`).
    #[inline]
    fn is_goal_poly(&self, poly: u32) -> bool {
        if MANY {
            self.scratch.targets.holds(poly)
        } else {
            self.scratch.goal_polys.contains(&poly)
        }
    }

    /// Reaches the goal (every target, when `MANY`) in `poly` for which
    /// `seen` holds straight from `root`, if `in_goal` (`poly` holds it).
    #[inline]
    fn reach(&mut self, root: u32, poly: u32, in_goal: bool, seen: impl Fn(&Self, DVec2) -> bool) {
        if !in_goal {
            return;
        }
        let r = self.scratch.roots[root as usize];
        if !MANY {
            if seen(self, self.t) {
                self.goal(root, r.g + r.p.distance(self.t));
            }
            return;
        }
        for k in self.scratch.targets.range(poly) {
            let id = self.scratch.targets.by_poly[k].1;
            let t = self.scratch.targets.points[id as usize];
            if seen(self, t) {
                self.scratch.targets.offer(id, r.g + r.p.distance(t), root);
            }
        }
    }

    /// The next node off the open list, or why the search stops.
    #[inline]
    pub(super) fn pop(&mut self, ctx: &mut SearchContext<'_>) -> Result<Node, Outcome> {
        if let Some(stop) = ctx.should_stop() {
            return Err(stop);
        }
        if !self.scratch.parked.is_empty() {
            self.parked_stop()?;
        }
        let id = self.scratch.open.pop().ok_or(Outcome::Exhausted)?;
        ctx.stats.popped += 1;
        Ok(self.scratch.nodes[id as usize])
    }

    /// Expands `node`, just popped, unless its root was reached more
    /// cheaply since; expands on at once while a single successor is left,
    /// then queues the successors.
    #[inline]
    pub(super) fn expand_popped(&mut self, ctx: &mut SearchContext<'_>, mut node: Node) {
        let root = self.scratch.roots[node.root as usize];
        if node.root != START
            && self.scratch.history.get(vertex_key(root.p)) < root.g - tolerance(root.g)
        {
            return;
        }
        loop {
            ctx.stats.expanded += 1;
            if let Some(trace) = ctx.trace.as_deref_mut() {
                let parent = self.scratch.roots[root_parent(&self.scratch.roots, node.root)].p;
                trace.point(self.scratch.roots[node.root as usize].p, parent);
            }
            self.scratch.succ.clear();
            self.expand(&node);
            if self.scratch.succ.len() == 1 && self.scratch.succ[0].kind != Kind::Goal {
                ctx.stats.generated += 1;
                node = self.scratch.succ[0];
                continue;
            }
            break;
        }
        self.flush(&mut ctx.stats, Some(&self.mesh.polygon(node.poly)));
    }

    /// On a mesh built on demand, with nodes parked at chunks not built
    /// yet: after the mesh grew, the parked nodes whose chunk is built go
    /// to the open list; then, if a parked node may lead to a shorter way
    /// than the best open node (or the open list is empty), the search
    /// stops for the chunks beyond the parked nodes of the least `f` (with
    /// many targets, within a chunk's side of it) ([`Outcome::Unbuilt`]).
    #[cold]
    #[inline(never)]
    fn parked_stop(&mut self) -> Result<(), Outcome> {
        if core::mem::take(&mut self.scratch.recheck) {
            self.unpark();
        }
        let sc = &mut *self.scratch;
        // What a parked node would have to beat to matter.
        let bound = if MANY {
            if sc.targets.found == sc.targets.points.len() {
                sc.targets.worst.0
            } else {
                f64::INFINITY
            }
        } else {
            sc.best_goal
        };
        if sc.parked_min >= bound {
            sc.parked.clear();
            sc.parked_min = f64::INFINITY;
            return Ok(());
        }
        let top = sc
            .open
            .peek()
            .map_or(f64::INFINITY, |id| sc.nodes[id as usize].f);
        if sc.parked_min >= top {
            return Ok(());
        }
        // (A search towards one goal needs exactly those chunks next. One
        // towards many targets spreads out evenly: the chunks of the next
        // chunk's width of its front at once, in fewer stops.)
        let horizon = if MANY && !FOCUSED {
            sc.parked_min + self.mesh.chunk_side() as f64
        } else {
            sc.parked_min
        };
        sc.wanted.clear();
        for node in &sc.parked {
            if node.f <= horizon {
                sc.wanted
                    .push(self.mesh.slot_across(node.poly, usize::from(node.exit)));
            }
        }
        sc.wanted.sort_unstable();
        sc.wanted.dedup();
        Err(Outcome::Unbuilt)
    }

    /// Moves the parked nodes whose chunk is built now to the open list
    /// (or drops them, when a wall or a dead end without the goal lies
    /// beyond after all).
    fn unpark(&mut self) {
        let mut parked = core::mem::take(&mut self.scratch.parked);
        // Those still waiting are moved to the front, in order.
        let mut kept = 0;
        let mut least = f64::INFINITY;
        for k in 0..parked.len() {
            let mut node = parked[k];
            let slot = self.mesh.polygon(node.poly).slots[usize::from(node.exit)];
            if slot.neigh == PORTAL {
                least = least.min(node.f);
                parked[kept] = node;
                kept += 1;
                continue;
            }
            if slot.neigh == NONE || (slot.dead_end && !self.is_goal_poly(slot.neigh)) {
                continue;
            }
            node.poly = slot.neigh;
            node.entry = slot.twin;
            let g = self.scratch.roots[node.root as usize].g;
            let id = self.scratch.nodes.len() as u32;
            self.scratch.nodes.push(node);
            self.scratch.open.push(OpenEntry {
                f: node.f,
                g,
                node: id,
            });
        }
        parked.truncate(kept);
        self.scratch.parked = parked;
        self.scratch.parked_min = least;
    }

    /// Parks `node` (its `f` set, `poly` and `exit` naming the polygon it
    /// leaves and the edge) at a chunk not built yet, unless it cannot beat
    /// a goal already found.
    #[cold]
    #[inline(never)]
    fn park(&mut self, node: Node) {
        if node.f > self.scratch.best_goal + tolerance(node.f) {
            return;
        }
        self.scratch.parked_min = self.scratch.parked_min.min(node.f);
        self.scratch.parked.push(node);
    }

    /// Seeds the start's cones: every edge of every start polygon that
    /// does not hold the start.
    pub(super) fn seed(&mut self, s: DVec2) {
        let polys = core::mem::take(&mut self.scratch.start_polys);
        for &id in &polys {
            self.scratch.here = id;
            let in_goal = self.is_goal_poly(id);
            self.reach(START, id, in_goal, |_, _| true);
            let poly = self.mesh.polygon(id);
            let n = poly.len();
            for m in 0..n {
                let (a, b) = (poly.at(m), poly.at(next(m, n)));
                if self.orient(s, a, b) != Ordering::Equal {
                    self.cone(START, [s, a], [s, b], &poly, m);
                    continue;
                }
                // An edge in line with the start: paths run along it to its
                // nearer end and may turn there into the polygon beyond.
                let on_edge = (a - s).dot(b - s) <= 0.0;
                if on_edge || poly.slots[m].neigh == NONE {
                    continue;
                }
                self.along_nearer(START, &poly, m);
            }
        }
        self.scratch.start_polys = polys;
    }

    /// Queues a successor through edge `m` of `poly` (unless the edge is an
    /// obstacle or leads into a dead end without the goal).
    #[inline(always)]
    #[expect(
        clippy::inline_always,
        reason = "7 % fewer instructions a query (callgrind, den520d): the two sides are passed in registers, not copied"
    )]
    fn cone(&mut self, root: u32, hi: [DVec2; 2], lo: [DVec2; 2], poly: &Polygon<'_>, m: usize) {
        let next = poly.slots[m].neigh;
        if next >= PORTAL {
            if next == PORTAL {
                let f = self.cone_f(root, &hi, &lo, poly, m);
                self.park(Node {
                    root,
                    hi,
                    lo,
                    poly: self.scratch.here,
                    entry: 0,
                    exit: m as u16,
                    kind: Kind::Cone,
                    f,
                });
            }
            return;
        }
        if poly.slots[m].dead_end && !self.is_goal_poly(next) {
            return;
        }
        // Until a goal is found nothing is pruned on `f`, and a successor
        // expanded on at once needs none: `flush` works it out.
        let f = if self.defer && self.scratch.best_goal == f64::INFINITY {
            f64::NAN
        } else {
            let f = self.cone_f(root, &hi, &lo, poly, m);
            if f > self.scratch.best_goal + tolerance(f) {
                return;
            }
            f
        };
        self.scratch.succ.push(Node {
            root,
            hi,
            lo,
            poly: next,
            entry: poly.slots[m].twin,
            exit: m as u16,
            kind: Kind::Cone,
            f,
        });
    }

    /// `f` of a cone from `root` through edge `m` of `poly`.
    #[inline]
    fn cone_f(
        &self,
        root: u32,
        hi: &[DVec2; 2],
        lo: &[DVec2; 2],
        poly: &Polygon<'_>,
        m: usize,
    ) -> f64 {
        // The interval: from the `hi` side's crossing near vertex `m` to the
        // `lo` side's near the next vertex.
        let (a, b) = (poly.at(m), poly.at(self::next(m, poly.len())));
        let hi_pt = if hi[1] == a { a } else { clip(hi, a, b) };
        let lo_pt = if lo[1] == b { b } else { clip(lo, a, b) };
        let r = self.scratch.roots[root as usize];
        if MANY && !FOCUSED {
            r.g + segment_distance(r.p, lo_pt, hi_pt)
        } else {
            r.g + heuristic(r.p, lo_pt, hi_pt, self.t)
        }
    }

    /// Queues a flat successor: from `root`, a vertex of edge `m` of
    /// `poly`, into the polygon beyond that edge.
    #[inline]
    fn flat(&mut self, root: u32, poly: &Polygon<'_>, m: usize) {
        let next = poly.slots[m].neigh;
        if next == NONE || (poly.slots[m].dead_end && !self.is_goal_poly(next)) {
            return;
        }
        let r = self.scratch.roots[root as usize];
        // (Many targets: the root is on the polygon's boundary.)
        let f = if MANY && !FOCUSED {
            r.g
        } else {
            r.g + r.p.distance(self.t)
        };
        if f > self.scratch.best_goal + tolerance(f) {
            return;
        }
        if next == PORTAL {
            self.park(Node {
                root,
                hi: [DVec2::ZERO; 2],
                lo: [DVec2::ZERO; 2],
                poly: self.scratch.here,
                entry: 0,
                exit: m as u16,
                kind: Kind::Flat,
                f,
            });
            return;
        }
        self.scratch.succ.push(Node {
            root,
            hi: [DVec2::ZERO; 2],
            lo: [DVec2::ZERO; 2],
            poly: next,
            entry: poly.slots[m].twin,
            exit: m as u16,
            kind: Kind::Flat,
            f,
        });
    }

    /// For edge `m` of `poly` in line with `root`'s point, reached along
    /// that line: turns at the edge's end `near` (the nearer one), if paths
    /// may turn there, into the polygon beyond the edge.
    fn along(&mut self, root: u32, poly: &Polygon<'_>, m: usize, near: usize) {
        if poly.slots[m].neigh != NONE
            && poly.slots[near].turn
            && let Some(turned) = self.turn_at(root, poly.at(near))
        {
            self.flat(turned, poly, m);
        }
    }

    /// [`Search::along`] at the end of edge `m` nearer to `root`'s point.
    fn along_nearer(&mut self, root: u32, poly: &Polygon<'_>, m: usize) {
        let r = self.scratch.roots[root as usize].p;
        let b = (m + 1) % poly.len();
        let near = if r.distance_squared(poly.at(m)) < r.distance_squared(poly.at(b)) {
            m
        } else {
            b
        };
        self.along(root, poly, m, near);
    }

    /// Queues the goal, reached straight from `root` with a path of length
    /// `f`.
    fn goal(&mut self, root: u32, f: f64) {
        if f < self.scratch.best_goal {
            self.scratch.best_goal = f;
            self.scratch.succ.push(Node {
                root,
                hi: [DVec2::ZERO; 2],
                lo: [DVec2::ZERO; 2],
                poly: NONE,
                entry: 0,
                exit: 0,
                kind: Kind::Goal,
                f,
            });
        }
    }

    /// A new root at corner `v` of the mesh, turned at from `parent` (or
    /// `None` if it was reached more cheaply before).
    fn turn_at(&mut self, parent: u32, v: DVec2) -> Option<u32> {
        let from = self.scratch.roots[parent as usize];
        let g = from.g + from.p.distance(v);
        if self.scratch.best_goal < f64::INFINITY && g + v.distance(self.t) > self.scratch.best_goal
        {
            return None;
        }
        let key = vertex_key(v);
        if !self.scratch.history.improve(key, g) {
            return None;
        }
        self.scratch.roots.push(Root { p: v, parent, g });
        Some(self.scratch.roots.len() as u32 - 1)
    }

    /// Expands `node` into its polygon; successors go to `scratch.succ`.
    fn expand(&mut self, node: &Node) {
        let mesh = self.mesh;
        self.scratch.here = node.poly;
        let poly = mesh.polygon(node.poly);
        let n = poly.len();
        let i = usize::from(node.entry);
        let (vlo, vhi) = (i, next(i, n));
        let root = self.scratch.roots[node.root as usize];
        let r = root.p;
        let in_goal = self.is_goal_poly(node.poly);
        if node.kind == Kind::Flat {
            self.reach(node.root, node.poly, in_goal, |_, _| true);
            for m in 0..n {
                if m == vlo {
                    continue;
                }
                let (a, b) = (poly.at(m), poly.at(next(m, n)));
                if a == r || b == r {
                    self.flat(node.root, &poly, m);
                } else if self.orient(r, a, b) != Ordering::Equal {
                    self.cone(node.root, [r, a], [r, b], &poly, m);
                } else {
                    self.along_nearer(node.root, &poly, m);
                }
            }
            return;
        }
        let (hi, lo) = (node.hi, node.lo);
        self.reach(node.root, node.poly, in_goal, |s, t| {
            s.side(&hi, t).is_ge() && s.side(&lo, t).is_le()
        });
        // Observable successors: the far edges the cone reaches.
        let mut m = vhi;
        let mut pa = poly.at(m);
        let mut s_hi_a = self.side(&hi, pa);
        while m != vlo {
            let b = next(m, n);
            let pb = poly.at(b);
            let s_hi_b = self.side(&hi, pb);
            if s_hi_a.is_eq() && s_hi_b.is_eq() && m != vhi {
                // Along the cone's side: a path may run to `pa` and turn.
                self.along(node.root, &poly, m, m);
            }
            if s_hi_b.is_gt() {
                let s_lo_a = self.side(&lo, pa);
                if s_lo_a.is_ge() {
                    break;
                }
                let h = if s_hi_a.is_gt() { [r, pa] } else { hi };
                let l = if self.side(&lo, pb).is_lt() {
                    [r, pb]
                } else {
                    lo
                };
                self.cone(node.root, h, l, &poly, m);
            }
            s_hi_a = s_hi_b;
            (m, pa) = (b, pb);
        }
        let mut m = vlo;
        while m != vhi {
            let a = prev(m, n);
            if !(self.side(&lo, poly.at(a)).is_eq() && self.side(&lo, poly.at(m)).is_eq()) {
                break;
            }
            if m != vlo {
                self.along(node.root, &poly, a, m);
            }
            m = a;
        }
        // Turns at the entry edge's ends.
        if poly.slots[vhi].turn && self.side(&hi, poly.at(vhi)).is_eq() {
            let v = poly.at(vhi);
            if let Some(nr) = self.turn_at(node.root, v) {
                self.reach(nr, node.poly, in_goal, |s, t| s.side(&hi, t).is_lt());
                // Past the first edge, each edge's near end is strictly
                // beyond `hi` (the loop goes on only while the far ends are).
                let (mut m, mut pa) = (vhi, v);
                while m != vlo {
                    let b = next(m, n);
                    let pb = poly.at(b);
                    let s_b = self.side(&hi, pb);
                    if m == vhi {
                        if s_b.is_le() {
                            self.flat(nr, &poly, m);
                        }
                    } else if self.orient(v, pa, pb) == Ordering::Equal {
                        self.along_nearer(nr, &poly, m);
                    } else {
                        let l = if s_b.is_lt() { [v, pb] } else { hi };
                        self.cone(nr, [v, pa], l, &poly, m);
                    }
                    if s_b.is_ge() {
                        break;
                    }
                    (m, pa) = (b, pb);
                }
            }
        }
        if poly.slots[vlo].turn && self.side(&lo, poly.at(vlo)).is_eq() {
            let v = poly.at(vlo);
            if let Some(nr) = self.turn_at(node.root, v) {
                self.reach(nr, node.poly, in_goal, |s, t| s.side(&lo, t).is_gt());
                // Likewise beyond `lo`.
                let (mut m, mut pb) = (vlo, v);
                while m != vhi {
                    let a = prev(m, n);
                    let pa = poly.at(a);
                    let s_a = self.side(&lo, pa);
                    if m == vlo {
                        if s_a.is_ge() {
                            self.flat(nr, &poly, a);
                        }
                    } else if self.orient(v, pa, pb) == Ordering::Equal {
                        self.along_nearer(nr, &poly, a);
                    } else {
                        let h = if s_a.is_gt() { [v, pa] } else { lo };
                        self.cone(nr, h, [v, pb], &poly, a);
                    }
                    if s_a.is_le() {
                        break;
                    }
                    (m, pb) = (a, pa);
                }
            }
        }
    }

    /// Moves the successors in `scratch.succ` to the open list with their
    /// `f` values (dropping those that cannot beat a goal already found).
    /// `from` is the polygon they were expanded from, for those whose `f`
    /// was left to work out here.
    pub(super) fn flush(&mut self, stats: &mut SearchStats, from: Option<&Polygon<'_>>) {
        let mut succ = core::mem::take(&mut self.scratch.succ);
        for node in &mut succ {
            let root = self.scratch.roots[node.root as usize];
            if node.f.is_nan()
                && let Some(poly) = from
            {
                node.f = self.cone_f(node.root, &node.hi, &node.lo, poly, usize::from(node.exit));
            }
            let f = node.f;
            debug_assert!(!f.is_nan(), "a successor's f was left unset");
            if f > self.scratch.best_goal + tolerance(f) {
                continue;
            }
            stats.generated += 1;
            stats.pushed += 1;
            let id = self.scratch.nodes.len() as u32;
            self.scratch.nodes.push(*node);
            self.scratch.open.push(OpenEntry {
                f,
                g: root.g,
                node: id,
            });
        }
        self.scratch.succ = succ;
        self.scratch.succ.clear();
    }

    /// The waypoints of the path ending at the goal through root `r`.
    pub(super) fn path(&self, mut r: u32, out: &mut Vec<DVec2>) {
        let first = out.len();
        out.push(self.t);
        loop {
            let root = self.scratch.roots[r as usize];
            out.push(root.p);
            if r == START {
                break;
            }
            r = root.parent;
        }
        out[first..].reverse();
    }
}
