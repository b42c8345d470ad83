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

use bevy_math::DVec2;
use core::cmp::Ordering;

use super::heap::{OpenEntry, OpenList};
use super::{Endpoint, Outcome, SearchContext};
use crate::geom::{lattice_shift, orient_sign};
use crate::mesh::{NONE, NavMesh, Polygon};

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
    }

    /// Starts a search from `s` (the point of `start`, in mesh
    /// coordinates): its root, and the polygons it may leave through.
    fn begin(&mut self, mesh: &NavMesh, s: DVec2, start: &Endpoint) {
        self.roots.clear();
        self.nodes.clear();
        self.open.clear();
        self.history.clear();
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

/// No root: a target not reached.
const NO_ROOT: u32 = u32::MAX;

/// The targets of a one-to-many search and the best way to each found so
/// far.
#[derive(Default)]
struct Targets {
    points: Vec<DVec2>,
    /// (polygon, target) for each polygon through which a target may be
    /// reached, sorted.
    by_poly: Vec<(u32, u32)>,
    /// Per target: the shortest length found and the root it is reached
    /// from straight ([`NO_ROOT`] if none yet).
    best: Vec<(f64, u32)>,
    /// How many targets have a way.
    found: usize,
    /// The longest of those ways, and its target.
    worst: (f64, u32),
}

impl Targets {
    fn memory_bytes(&self) -> usize {
        self.points.capacity() * 16 + self.by_poly.capacity() * 8 + self.best.capacity() * 16
    }

    /// Whether a target lies in `poly`.
    #[inline]
    fn holds(&self, poly: u32) -> bool {
        self.by_poly
            .binary_search_by_key(&poly, |&(p, _)| p)
            .is_ok()
    }

    /// The indices in `by_poly` of the targets in `poly`.
    #[inline]
    fn range(&self, poly: u32) -> core::ops::Range<usize> {
        let from = self.by_poly.partition_point(|&(p, _)| p < poly);
        let to = from + self.by_poly[from..].partition_point(|&(p, _)| p == poly);
        from..to
    }

    /// Target `id` is reached with a path of `length`, straight from `root`.
    #[inline]
    fn offer(&mut self, id: u32, length: f64, root: u32) {
        let best = &mut self.best[id as usize];
        if best.1 == NO_ROOT {
            self.found += 1;
        } else if length >= best.0 {
            return;
        }
        *best = (length, root);
        if length >= self.worst.0 {
            self.worst = (length, id);
        } else if id == self.worst.1 {
            // (The longest got shorter: rare, as a target's first way is
            // mostly its best.)
            self.worst = (0.0, 0);
            for (k, b) in self.best.iter().enumerate() {
                if b.1 != NO_ROOT && b.0 >= self.worst.0 {
                    self.worst = (b.0, k as u32);
                }
            }
        }
    }
}

/// The cheapest cost each corner was turned at so far, by vertex: open
/// addressing with generation stamps, so nothing is cleared per query.
#[derive(Default)]
struct RootHistory {
    /// One probe reads one record.
    slots: Vec<HistorySlot>,
    stamp: u32,
    len: usize,
}

/// A [`RootHistory`] record: live when its stamp is the history's.
#[derive(Clone, Copy, Default)]
struct HistorySlot {
    key: u64,
    g: f64,
    stamp: u32,
}

impl RootHistory {
    fn memory_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<HistorySlot>()
    }

    fn clear(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.fill(HistorySlot::default());
            self.stamp = 1;
        }
        self.len = 0;
        if self.slots.is_empty() {
            self.grow(1024);
        }
    }

    fn grow(&mut self, cap: usize) {
        let old = core::mem::replace(&mut self.slots, vec![HistorySlot::default(); cap]);
        if self.stamp == 0 {
            self.stamp = 1;
        }
        self.len = 0;
        let stamp = self.stamp;
        for slot in old.into_iter().filter(|s| s.stamp == stamp) {
            self.improve(slot.key, slot.g);
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = ((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize) & mask;
        loop {
            let s = &self.slots[i];
            if s.stamp != self.stamp || s.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The best cost known for `key`.
    #[inline]
    fn get(&self, key: u64) -> f64 {
        let s = &self.slots[self.slot(key)];
        if s.stamp == self.stamp {
            s.g
        } else {
            f64::INFINITY
        }
    }

    /// Records `g` for `key` unless a lower cost is known; returns whether
    /// `g` is (about) as good as the best known.
    fn improve(&mut self, key: u64, g: f64) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(self.slots.len() * 2);
        }
        let i = self.slot(key);
        let stamp = self.stamp;
        let s = &mut self.slots[i];
        if s.stamp == stamp {
            if s.g < g - tolerance(g) {
                return false;
            }
            if g < s.g {
                s.g = g;
            }
            return true;
        }
        *s = HistorySlot { key, g, stamp };
        self.len += 1;
        true
    }
}

/// How much cheaper another way to a root must be to prune this one:
/// floating-point sums of the same path's segments differ in the last
/// places.
#[inline]
fn tolerance(g: f64) -> f64 {
    1e-10 * g.max(1.0)
}

/// The vertex after `m` of a polygon of `n` vertices.
#[inline]
fn next(m: usize, n: usize) -> usize {
    if m + 1 == n { 0 } else { m + 1 }
}

/// The vertex before `m` of a polygon of `n` vertices.
#[inline]
fn prev(m: usize, n: usize) -> usize {
    if m == 0 { n - 1 } else { m - 1 }
}

/// Orientation of `c` relative to the line `a -> b`, exact. With `lattice`,
/// every point is a multiple of 1/2 below 2^15 (mesh vertices, and a start
/// and goal on vertices or cell centres): the floating-point cross product
/// is then exact, and its sign the answer.
#[inline]
fn orient(lattice: bool, a: DVec2, b: DVec2, c: DVec2) -> Ordering {
    if lattice {
        let det = (b - a).perp_dot(c - a);
        if det > 0.0 {
            Ordering::Greater
        } else if det < 0.0 {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    } else {
        orient_sign(a, b, c)
    }
}

/// Where the line `line` meets the line through `a` and `b` (for the
/// heuristic only), clamped to the segment `a b`.
#[inline]
fn clip(line: &[DVec2; 2], a: DVec2, b: DVec2) -> DVec2 {
    let d = line[1] - line[0];
    let e = b - a;
    let den = e.perp_dot(d);
    if den == 0.0 {
        return a;
    }
    let s = ((line[0] - a).perp_dot(d) / den).clamp(0.0, 1.0);
    a + e * s
}

/// Distance from `r` to the segment `a b`: no path from `r` beyond the
/// segment is shorter.
#[inline]
fn segment_distance(r: DVec2, a: DVec2, b: DVec2) -> f64 {
    let e = b - a;
    let len2 = e.length_squared();
    let s = if len2 == 0.0 {
        0.0
    } else {
        ((r - a).dot(e) / len2).clamp(0.0, 1.0)
    };
    r.distance(a + e * s)
}

/// Length of the shortest way from `r` through the segment `a b` to `t`
/// (`t` reflected across the segment's line when it is on `r`'s side).
#[inline]
fn heuristic(r: DVec2, a: DVec2, b: DVec2, t: DVec2) -> f64 {
    let e = b - a;
    let (sr, st) = (e.perp_dot(r - a), e.perp_dot(t - a));
    let t = if (sr > 0.0 && st > 0.0) || (sr < 0.0 && st < 0.0) {
        let len2 = e.length_squared();
        if len2 == 0.0 {
            t
        } else {
            let foot = a + e * ((t - a).dot(e) / len2);
            2.0 * foot - t
        }
    } else {
        t
    };
    let (oa, ob) = ((a - r).perp_dot(t - r), (b - r).perp_dot(t - r));
    if (oa <= 0.0 && ob >= 0.0) || (oa >= 0.0 && ob <= 0.0) {
        r.distance(t)
    } else {
        (r.distance(a) + a.distance(t)).min(r.distance(b) + b.distance(t))
    }
}

/// The root history's key of a mesh vertex (non-negative integers below
/// 2^31).
#[inline]
fn vertex_key(p: DVec2) -> u64 {
    // (Through i32: one conversion instruction, where f64 to u64 takes
    // several.)
    (u64::from(p.y as i32 as u32) << 32) | u64::from(p.x as i32 as u32)
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
    if !resume {
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
) -> Outcome {
    // In mesh coordinates: cells, or a finer lattice for agents of a radius.
    let scale = mesh.scale() as f64;
    let s = ctx.start.p * scale;
    scratch.begin(mesh, s, ctx.start);
    let tg = &mut scratch.targets;
    tg.points.clear();
    tg.by_poly.clear();
    tg.best.clear();
    tg.found = 0;
    tg.worst = (0.0, 0);
    let mut lattice = scale == 1.0 && lattice_shift(&[s]).is_some();
    for (k, end) in targets.iter().enumerate() {
        let p = end.p * scale;
        tg.points.push(p);
        tg.best.push((f64::INFINITY, NO_ROOT));
        lattice &= lattice_shift(&[p]).is_some();
        scratch.goal_polys.clear();
        mesh.polygons_at(p, end.cells(), &mut scratch.goal_polys);
        retain_allowed(mesh, end, &mut scratch.goal_polys);
        tg.by_poly
            .extend(scratch.goal_polys.iter().map(|&poly| (poly, k as u32)));
    }
    tg.by_poly.sort_unstable();
    let mut search = Search::<true> {
        mesh,
        t: s,
        lattice,
        defer: false,
        scratch,
    };
    search.seed(s);
    search.flush(&mut ctx.stats, None);
    search.defer = true;
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

/// One search's view of its inputs.
struct Search<'a, const MANY: bool> {
    mesh: &'a NavMesh,
    t: DVec2,
    /// Start and goal are multiples of 1/2 (see [`orient`]).
    lattice: bool,
    /// Whether [`Search::cone`] may leave `f` to [`Search::flush`]: all
    /// successors come from one polygon (not so while seeding).
    defer: bool,
    scratch: &'a mut Scratch,
}

impl<const MANY: bool> Search<'_, MANY> {
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
    fn pop(&mut self, ctx: &mut SearchContext<'_>) -> Result<Node, Outcome> {
        if let Some(stop) = ctx.should_stop() {
            return Err(stop);
        }
        let id = self.scratch.open.pop().ok_or(Outcome::Exhausted)?;
        ctx.stats.popped += 1;
        Ok(self.scratch.nodes[id as usize])
    }

    /// Expands `node`, just popped, unless its root was reached more
    /// cheaply since; expands on at once while a single successor is left,
    /// then queues the successors.
    #[inline]
    fn expand_popped(&mut self, ctx: &mut SearchContext<'_>, mut node: Node) {
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

    /// Seeds the start's cones: every edge of every start polygon that
    /// does not hold the start.
    fn seed(&mut self, s: DVec2) {
        let polys = core::mem::take(&mut self.scratch.start_polys);
        for &id in &polys {
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
        if next == NONE || (poly.slots[m].dead_end && !self.is_goal_poly(next)) {
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
        if MANY {
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
        let f = if MANY {
            r.g
        } else {
            r.g + r.p.distance(self.t)
        };
        if f > self.scratch.best_goal + tolerance(f) {
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
    fn flush(&mut self, stats: &mut super::SearchStats, from: Option<&Polygon<'_>>) {
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
    fn path(&self, mut r: u32, out: &mut Vec<DVec2>) {
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

#[cfg(test)]
mod tests {
    use super::{NO_ROOT, Targets, heuristic, segment_distance};
    use crate::test_rng::Rng;
    use bevy_math::DVec2;

    #[test]
    fn targets_keep_their_longest_way_as_ways_shorten() {
        let mut rng = Rng(0x0003_17a2_6e75);
        for _ in 0..200 {
            let n = 1 + rng.below(12) as usize;
            let mut t = Targets {
                best: vec![(f64::INFINITY, NO_ROOT); n],
                ..Targets::default()
            };
            for _ in 0..60 {
                let id = rng.below(n as u32);
                let length = f64::from(rng.below(50));
                let before = t.best[id as usize];
                t.offer(id, length, 7);
                let now = t.best[id as usize];
                if before.1 == NO_ROOT || length < before.0 {
                    assert_eq!(now, (length, 7));
                } else {
                    assert_eq!(now, before);
                }
                let found: Vec<f64> = t
                    .best
                    .iter()
                    .filter(|b| b.1 != NO_ROOT)
                    .map(|b| b.0)
                    .collect();
                assert_eq!(t.found, found.len());
                let worst = found.iter().copied().fold(0.0, f64::max);
                assert_eq!(t.worst.0, worst);
                assert_eq!(t.best[t.worst.1 as usize].0, worst);
            }
        }
    }

    #[test]
    fn the_segment_distance_is_the_nearest_point_of_the_segment() {
        let mut rng = Rng(0x5e9_0002);
        let point = |rng: &mut Rng| DVec2::new(f64::from(rng.below(21)), f64::from(rng.below(21)));
        for _ in 0..2000 {
            let (r, a, b) = (point(&mut rng), point(&mut rng), point(&mut rng));
            let sampled = (0..=2000)
                .map(|k| r.distance(a.lerp(b, f64::from(k) / 2000.0)))
                .fold(f64::INFINITY, f64::min);
            let d = segment_distance(r, a, b);
            assert!(
                d <= sampled + 1e-9 && sampled - d < 1e-2,
                "{r} {a} {b}: {d} {sampled}"
            );
        }
    }

    /// The shortest way through the segment, by sampling it finely.
    fn sampled(r: DVec2, a: DVec2, b: DVec2, t: DVec2) -> f64 {
        (0..=4000)
            .map(|k| {
                let x = a.lerp(b, f64::from(k) / 4000.0);
                r.distance(x) + x.distance(t)
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn the_heuristic_is_the_shortest_way_through_the_segment() {
        let mut rng = Rng(0x9e1_0001);
        let point = |rng: &mut Rng| {
            DVec2::new(
                f64::from(rng.below(41)) / 2.0,
                f64::from(rng.below(41)) / 2.0,
            )
        };
        for _ in 0..3000 {
            let (r, a, b, t) = (
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
            );
            if a == b {
                continue;
            }
            // With `t` on `r`'s side, the way through is to its mirror image
            // across the segment's line.
            let e = b - a;
            let (sr, st) = (e.perp_dot(r - a), e.perp_dot(t - a));
            let target = if sr * st > 0.0 {
                let foot = a + e * ((t - a).dot(e) / e.length_squared());
                2.0 * foot - t
            } else {
                t
            };
            let h = heuristic(r, a, b, t);
            let want = sampled(r, a, b, target);
            // Never above the true minimum (admissible), and close to it.
            assert!(h <= want + 1e-9, "{r} {a} {b} {t}: {h} > {want}");
            assert!(want - h < 1e-3, "{r} {a} {b} {t}: {h} < {want}");
        }
    }
}
