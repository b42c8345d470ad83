//! One area's link table for one agent radius: the exact shortest paths
//! between the link ends in the area, kept current as the area is edited
//! (only the entries an edit can change are searched again).

use std::sync::{Arc, OnceLock};

use bevy_math::DVec2;

use super::{LinkId, Side};
use crate::endpoint::Endpoint;
use crate::geom::{detour_through_rect, polyline_length, segment_rect_distance};
use crate::grid::{EditKind, Grid, GridEdit, RegionId};
use crate::los::line_of_sight;
use crate::mesh::NavMesh;
use crate::mesh::locate::on_mesh;
use crate::search::legs::LegTargets;
use crate::search::{FallbackPolicy, PathKind, PlanOptions, Planner};
use bevy_math::URect;

/// A link end that lies in the area.
#[derive(Clone, Debug)]
pub(super) struct End {
    pub link: LinkId,
    pub side: Side,
    pub point: DVec2,
    /// Whether an agent of the table's radius may stand there (see
    /// [`stands`]).
    pub valid: bool,
    /// The grid region of the point, if it is a valid point of the grid.
    region: Option<RegionId>,
}

impl End {
    /// The grid region of the point, if it is a valid point of the grid.
    pub fn region(&self) -> Option<RegionId> {
        self.region
    }
}

/// Counters of the work a table did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableWork {
    /// One-to-many searches run.
    pub searches: u64,
    /// Entries (pairs of link ends) searched again.
    pub entries: u64,
    /// Mesh chunks rebuilt.
    pub chunks: u64,
    /// Entries whose length changed, and link ends that became usable or
    /// unusable (the routes between ends are searched again only if this
    /// is not 0).
    pub changed: u64,
}

impl core::ops::AddAssign for TableWork {
    fn add_assign(&mut self, other: Self) {
        self.searches += other.searches;
        self.entries += other.entries;
        self.chunks += other.chunks;
        self.changed += other.changed;
    }
}

/// The distances and paths between every two link ends of one area, for
/// one radius.
///
/// An edit may leave marked pairs for later ([`EndTable::sync`] with
/// `defer`): the table is then *pending*, and [`EndTable::settle`] searches
/// them (once, for every clone sharing the table) before a query reads it.
#[derive(Clone)]
pub(super) struct EndTable {
    pub mesh: NavMesh,
    pub ends: Vec<End>,
    /// The valid ends as the far ends of legs searched on the mesh (kept
    /// in step with the mesh and the ends).
    pub targets: Arc<LegTargets>,
    /// The entries as of the last search (marked pairs stale while
    /// pending).
    entries: Entries,
    /// The pairs to search again (`i < j`): scratch, or while pending the
    /// pairs marked and not yet searched.
    dirty: Vec<bool>,
    /// While pending: pairs a freed rectangle may bring closer, to check
    /// (see `check_freed`) before the marked pairs are searched.
    freed: Vec<(URect, Vec<(u32, u32)>)>,
    /// Whether marked pairs wait for a search.
    pending: bool,
    /// While pending: the entries with every marked pair searched, once a
    /// query needed them.
    settled: OnceLock<Entries>,
}

/// A table's entries.
#[derive(Clone, Default)]
struct Entries {
    /// `dist[i * n + j]`: the length of the shortest path between ends `i`
    /// and `j` (symmetric), infinite where none exists.
    dist: Vec<f64>,
    /// `paths[i * n + j]` for `i < j`: that path, from `i` to `j`.
    paths: Vec<Vec<DVec2>>,
    /// `boxes[i * n + j]` for `i < j`: the bounding box of that path.
    boxes: Vec<[DVec2; 2]>,
}

/// Whether an agent may stand at `p`, arrive there and leave from there in
/// any direction: `p` is on the mesh, and for a point agent a valid point
/// of the grid that is no double corner (where two blocked cells meet
/// diagonally, a route through `p` could squeeze between them).
fn stands(mesh: &NavMesh, p: DVec2, found: &mut Vec<u32>) -> bool {
    on_mesh(mesh, p, found)
        && (mesh.radius() > 0.0 || Endpoint::resolve(mesh.grid(), p).is_some_and(|e| !e.restricted))
}

/// Whether a point agent's path through `waypoints`, which comes near
/// the newly blocked cells `lo..=hi`, is still valid on `grid`: it sees
/// along every segment (it may touch their sides and corners), and turns
/// at none of their corners (where it could now squeeze between two
/// blocked cells).
fn still_valid(grid: &Grid, waypoints: &[DVec2], (lo, hi): (DVec2, DVec2)) -> bool {
    let inner = &waypoints[1..waypoints.len().saturating_sub(1).max(1)];
    inner.iter().all(|p| p.cmplt(lo).any() || p.cmpgt(hi).any())
        && waypoints
            .windows(2)
            .all(|w| line_of_sight(grid, w[0], w[1]))
}

/// The options of every table search: exact, no budget, fallback paths
/// (which count as no path).
fn exact() -> PlanOptions {
    PlanOptions {
        algorithm: crate::search::Algorithm::Polyanya,
        fallback: FallbackPolicy::ClosestReachable,
        heuristic_weight: 1.0,
        node_budget: None,
    }
}

impl EndTable {
    /// A table without ends on `mesh`.
    pub fn new(mesh: NavMesh) -> Self {
        EndTable {
            mesh,
            ends: Vec::new(),
            targets: Arc::default(),
            entries: Entries::default(),
            dirty: Vec::new(),
            freed: Vec::new(),
            pending: false,
            settled: OnceLock::new(),
        }
    }

    /// The entries queries read: the settled ones while pending.
    ///
    /// # Panics
    ///
    /// If the table is pending and was not settled (the atlas settles its
    /// tables before every query).
    #[inline]
    fn read(&self) -> &Entries {
        if self.pending {
            self.settled
                .get()
                .expect("a pending table is settled before it is read")
        } else {
            &self.entries
        }
    }

    /// Whether marked pairs wait for a search ([`EndTable::settle`]).
    pub fn pending(&self) -> bool {
        self.pending && self.settled.get().is_none()
    }

    /// Searches the pairs an edit marked and left for later, once for every
    /// clone sharing this table (the first to call waits for the search,
    /// the others for its result). Nothing to do unless pending.
    pub fn settle(&self, planner: &mut Planner) -> TableWork {
        let mut work = TableWork::default();
        if self.pending {
            self.settled.get_or_init(|| {
                let mut entries = self.entries.clone();
                let mut dirty = self.dirty.clone();
                let (mesh, ends) = (&self.mesh, &self.ends);
                work = check_freed(mesh, ends, &entries.dist, &self.freed, &mut dirty, planner);
                work += search_dirty(mesh, ends, &mut entries, &mut dirty, planner);
                entries
            });
        }
        work
    }

    /// Takes the settled entries in, if a query settled the table; else
    /// (still pending) searches the marked pairs now when `now`.
    fn adopt(&mut self, now: bool, planner: &mut Planner) -> TableWork {
        let mut work = TableWork::default();
        if !self.pending {
            return work;
        }
        if let Some(entries) = self.settled.take() {
            self.entries = entries;
            self.dirty.fill(false);
            self.freed.clear();
            self.pending = false;
        } else if now {
            let (mesh, ends) = (&self.mesh, &self.ends);
            let freed = core::mem::take(&mut self.freed);
            work = check_freed(
                mesh,
                ends,
                &self.entries.dist,
                &freed,
                &mut self.dirty,
                planner,
            );
            work += search_dirty(mesh, ends, &mut self.entries, &mut self.dirty, planner);
            self.pending = false;
        }
        work
    }

    /// The length of the shortest path between ends `i` and `j`.
    #[inline]
    pub fn dist(&self, i: usize, j: usize) -> f64 {
        self.read().dist[i * self.ends.len() + j]
    }

    /// The shortest path from end `i` to end `j`, appended to `out`
    /// without its first point.
    pub fn extend_path(&self, i: usize, j: usize, out: &mut Vec<DVec2>) {
        let n = self.ends.len();
        let paths = &self.read().paths;
        if i < j {
            out.extend_from_slice(&paths[i * n + j][1..]);
        } else {
            let path = &paths[j * n + i];
            out.extend(path.iter().rev().skip(1));
        }
    }

    /// Sets the ends to `wanted` (link, side, point), keeping the entries
    /// of ends that stay and searching the rows of new ones.
    pub fn set_ends(
        &mut self,
        wanted: &[(LinkId, Side, DVec2)],
        planner: &mut Planner,
    ) -> TableWork {
        let mut work = self.adopt(true, planner);
        let old_n = self.ends.len();
        let index = |ends: &[End], &(link, side, point): &(LinkId, Side, DVec2)| {
            ends.iter()
                .position(|e| e.link == link && e.side == side && e.point == point)
        };
        let kept: Vec<Option<usize>> = wanted.iter().map(|w| index(&self.ends, w)).collect();
        let n = wanted.len();
        let mut dist = vec![f64::INFINITY; n * n];
        let mut paths = vec![Vec::new(); n * n];
        let mut boxes = vec![[DVec2::ZERO; 2]; n * n];
        for i in 0..n {
            dist[i * n + i] = 0.0;
        }
        for i in 0..n {
            for j in i + 1..n {
                if let (Some(a), Some(b)) = (kept[i], kept[j]) {
                    dist[i * n + j] = self.entries.dist[a * old_n + b];
                    dist[j * n + i] = dist[i * n + j];
                    let (lo, hi) = (a.min(b), a.max(b));
                    let mut path = core::mem::take(&mut self.entries.paths[lo * old_n + hi]);
                    if a > b {
                        path.reverse();
                    }
                    paths[i * n + j] = path;
                    boxes[i * n + j] = self.entries.boxes[lo * old_n + hi];
                }
            }
        }
        let grid = self.mesh.grid().clone();
        let mut found = Vec::new();
        let ends: Vec<End> = wanted
            .iter()
            .zip(&kept)
            .map(|(&(link, side, point), &k)| match k {
                Some(k) => self.ends[k].clone(),
                None => End {
                    link,
                    side,
                    point,
                    valid: stands(&self.mesh, point, &mut found),
                    region: Endpoint::resolve(&grid, point).map(|e| e.region),
                },
            })
            .collect();
        self.ends = ends;
        self.entries = Entries { dist, paths, boxes };
        self.dirty.clear();
        self.dirty.resize(n * n, false);
        for (i, k) in kept.iter().enumerate() {
            if k.is_none() && self.ends[i].valid {
                self.mark_row(i);
            }
        }
        work += self.search_dirty(planner);
        self.refresh_targets();
        work
    }

    /// Works the ends out afresh as the far ends of legs.
    fn refresh_targets(&mut self) {
        let points: Vec<Option<DVec2>> = self
            .ends
            .iter()
            .map(|e| e.valid.then_some(e.point))
            .collect();
        self.targets = Arc::new(LegTargets::new(&self.mesh, &points));
    }

    /// Marks every pair of end `i` with another valid end.
    fn mark_row(&mut self, i: usize) {
        let n = self.ends.len();
        for j in 0..n {
            if j != i && self.ends[j].valid {
                self.dirty[i.min(j) * n + i.max(j)] = true;
            }
        }
    }

    /// Forgets every path of end `i` (it became invalid).
    fn clear_row(&mut self, i: usize) {
        let n = self.ends.len();
        for j in 0..n {
            if j != i {
                self.entries.dist[i * n + j] = f64::INFINITY;
                self.entries.dist[j * n + i] = f64::INFINITY;
                self.entries.paths[i.min(j) * n + i.max(j)].clear();
                self.dirty[i.min(j) * n + i.max(j)] = false;
            }
        }
    }

    /// Brings the mesh and the table up to date with `grid`, edited by
    /// `edits` since the table last saw it (or `None`: replaced, every
    /// entry searched again). With `defer`, the pairs the edits may change
    /// are marked and left for [`EndTable::settle`] (with those an earlier
    /// edit left, unless a query settled them meanwhile); `changed` then
    /// counts them as changed.
    pub fn sync(
        &mut self,
        grid: &Grid,
        edits: Option<&[GridEdit]>,
        planner: &mut Planner,
        defer: bool,
    ) -> TableWork {
        let mut work = self.adopt(edits.is_none(), planner);
        let n = self.ends.len();
        if !self.pending {
            self.dirty.clear();
            self.dirty.resize(n * n, false);
        }
        let Some(edits) = edits else {
            self.mesh = if self.mesh.radius() > 0.0 {
                NavMesh::with_radius(grid, self.mesh.radius()).expect("a radius the mesh had")
            } else {
                NavMesh::build(grid)
            };
            work.chunks = self.mesh.chunk_count() as u64;
            let mut found = Vec::new();
            for i in 0..n {
                let end = &mut self.ends[i];
                end.valid = stands(&self.mesh, end.point, &mut found);
                end.region = Endpoint::resolve(grid, end.point).map(|e| e.region);
            }
            for i in 0..n {
                self.clear_row(i);
            }
            for i in 0..n {
                if self.ends[i].valid {
                    self.mark_row(i);
                }
            }
            work += self.search_dirty(planner);
            self.refresh_targets();
            return work;
        };
        work.chunks = self.mesh.sync(grid) as u64;
        // How far an edit reaches: the radius, the mesh's tolerance, and
        // a margin for rounding.
        let reach = self.mesh.radius() + self.mesh.tolerance() + 1e-9;
        // A disc's path that comes within `reach` of a newly blocked cell
        // is searched again; a point's only if it no longer sees through.
        let point = self.mesh.radius() == 0.0;
        let mut found = Vec::new();
        for i in 0..n {
            let end = &mut self.ends[i];
            end.region = Endpoint::resolve(grid, end.point).map(|e| e.region);
            let near = edits.iter().any(|e| {
                let (lo, hi) = (e.rect.min.as_dvec2(), e.rect.max.as_dvec2());
                end.point.distance(end.point.clamp(lo, hi)) <= reach + 1.0
            });
            if near {
                let valid = stands(&self.mesh, end.point, &mut found);
                if valid != end.valid {
                    end.valid = valid;
                    work.changed += 1;
                    if valid {
                        self.mark_row(i);
                    } else {
                        self.clear_row(i);
                    }
                }
            }
        }
        // Pairs a way through freed cells might bring closer, with the
        // edit: checked again below.
        let mut maybe: Vec<(usize, usize, usize)> = Vec::new();
        let rects: Vec<(DVec2, DVec2)> = edits
            .iter()
            .map(|e| (e.rect.min.as_dvec2(), e.rect.max.as_dvec2()))
            .collect();
        // Each end's distance to each edit's rectangle: their sum bounds
        // any way through it from below, cheaply.
        let away: Vec<f64> = rects
            .iter()
            .flat_map(|&(lo, hi)| {
                self.ends
                    .iter()
                    .map(move |e| e.point.distance(e.point.clamp(lo, hi)))
            })
            .collect();
        for i in 0..n {
            if !self.ends[i].valid {
                continue;
            }
            for j in i + 1..n {
                if !self.ends[j].valid || self.dirty[i * n + j] {
                    continue;
                }
                let d = self.entries.dist[i * n + j];
                let path = &self.entries.paths[i * n + j];
                let same_region =
                    self.ends[i].region.is_some() && self.ends[i].region == self.ends[j].region;
                let [low, high] = self.entries.boxes[i * n + j];
                for (k, e) in edits.iter().enumerate() {
                    let (lo, hi) = rects[k];
                    let blocks = matches!(e.kind, EditKind::Blocked | EditKind::Mixed);
                    let frees = matches!(e.kind, EditKind::Freed | EditKind::Mixed);
                    // A path the blocked cells do not come near stays
                    // valid (and nothing shorter appears).
                    if d.is_finite()
                        && blocks
                        && (low - reach).cmple(hi).all()
                        && (high + reach).cmpge(lo).all()
                        && path
                            .windows(2)
                            .any(|w| segment_rect_distance(w[0], w[1], lo, hi) <= reach)
                        && (!point || !still_valid(grid, path, (lo, hi)))
                    {
                        self.dirty[i * n + j] = true;
                        break;
                    }
                    // Only a way through the freed cells can be shorter
                    // (or join two ends cut off from each other).
                    let (a, b) = (self.ends[i].point, self.ends[j].point);
                    if frees
                        && if d.is_finite() {
                            away[k * n + i] + away[k * n + j] - 2.0 * reach < d
                                && detour_through_rect(a, b, lo, hi) - 2.0 * reach < d
                        } else {
                            same_region
                        }
                    {
                        maybe.push((i, j, k));
                    }
                }
            }
        }
        // Pairs a freed rectangle may bring closer: for a point agent and
        // cells all freed, checked by a search from the rectangle (left for
        // later with `defer`); the others marked at once.
        let mut freed: Vec<(URect, Vec<(u32, u32)>)> = Vec::new();
        for &(i, j, k) in &maybe {
            let e = &edits[k];
            if point && e.kind == EditKind::Freed {
                match freed.iter_mut().find(|(r, _)| *r == e.rect) {
                    Some((_, pairs)) => pairs.push((i as u32, j as u32)),
                    None => freed.push((e.rect, vec![(i as u32, j as u32)])),
                }
            } else {
                self.dirty[i * n + j] = true;
            }
        }
        if defer {
            self.freed.append(&mut freed);
        } else {
            work += check_freed(
                &self.mesh,
                &self.ends,
                &self.entries.dist,
                &freed,
                &mut self.dirty,
                planner,
            );
        }
        if defer {
            let marked = self.dirty.iter().filter(|&&d| d).count() as u64
                + self.freed.iter().map(|(_, p)| p.len() as u64).sum::<u64>();
            self.pending = marked > 0;
            self.settled = OnceLock::new();
            work.entries += marked;
            work.changed += marked;
        } else {
            work += self.search_dirty(planner);
        }
        self.refresh_targets();
        work
    }

    /// Searches every marked pair again: one one-to-many search from the
    /// end with the most marked pairs towards its partners, until none is
    /// left.
    fn search_dirty(&mut self, planner: &mut Planner) -> TableWork {
        search_dirty(
            &self.mesh,
            &self.ends,
            &mut self.entries,
            &mut self.dirty,
            planner,
        )
    }
}

/// Marks in `dirty` the pairs of each `(rect, pairs)` of `freed` that a way
/// through the freed cells of `rect` may bring closer than `dist` says.
/// For a point agent's mesh, one search from the rectangle's centre gives
/// the exact distance `g` from every end to it: a way through any point of
/// the (free, convex) rectangle is at least `g(i) + g(j)` less its
/// diagonal, a far better bound than the straight lines'. (A rectangle
/// blocked again since is no way through: its centre reaches no end.)
fn check_freed(
    mesh: &NavMesh,
    ends: &[End],
    dist: &[f64],
    freed: &[(URect, Vec<(u32, u32)>)],
    dirty: &mut [bool],
    planner: &mut Planner,
) -> TableWork {
    let n = ends.len();
    let mut work = TableWork::default();
    let options = exact();
    let starts: Vec<DVec2> = ends.iter().map(|e| e.point).collect();
    let mut answers = Vec::new();
    for (rect, pairs) in freed {
        let centre = (rect.min + rect.max).as_dvec2() / 2.0;
        planner.plan_many_on_mesh(mesh, &starts, centre, &options, &mut answers);
        work.searches += 1;
        let g: Vec<f64> = answers
            .iter()
            .zip(ends)
            .map(|(answer, end)| match answer {
                Ok(path) if end.valid && path.kind == PathKind::Found => path.length,
                _ => f64::INFINITY,
            })
            .collect();
        let diagonal = (rect.max - rect.min).as_dvec2().length();
        for &(i, j) in pairs {
            let (i, j) = (i as usize, j as usize);
            if g[i] + g[j] - diagonal - 1e-9 < dist[i * n + j] {
                dirty[i * n + j] = true;
            }
        }
    }
    work
}

/// Searches every marked pair of `dirty` again (and unmarks it), into
/// `entries`: one one-to-many search from the end with the most marked
/// pairs towards its partners, until none is left.
fn search_dirty(
    mesh: &NavMesh,
    ends: &[End],
    entries: &mut Entries,
    dirty: &mut [bool],
    planner: &mut Planner,
) -> TableWork {
    {
        let n = ends.len();
        let mut work = TableWork::default();
        let mut count = vec![0_u32; n];
        for i in 0..n {
            for j in i + 1..n {
                if dirty[i * n + j] {
                    count[i] += 1;
                    count[j] += 1;
                }
            }
        }
        let options = exact();
        let mut starts = Vec::new();
        let mut partners = Vec::new();
        let mut answers = Vec::new();
        while let Some((source, &most)) = count.iter().enumerate().max_by_key(|&(i, c)| (*c, n - i))
        {
            if most == 0 {
                break;
            }
            starts.clear();
            partners.clear();
            for (j, c) in count.iter_mut().enumerate() {
                let k = source.min(j) * n + source.max(j);
                if j != source && dirty[k] {
                    dirty[k] = false;
                    *c -= 1;
                    partners.push(j);
                    starts.push(ends[j].point);
                }
            }
            count[source] = 0;
            planner.plan_many_on_mesh(mesh, &starts, ends[source].point, &options, &mut answers);
            work.searches += 1;
            work.entries += partners.len() as u64;
            for (&j, answer) in partners.iter().zip(answers.drain(..)) {
                let (lo, hi) = (source.min(j), source.max(j));
                let path = &mut entries.paths[lo * n + hi];
                path.clear();
                let mut d = f64::INFINITY;
                if let Ok(found) = answer
                    && found.kind == PathKind::Found
                    && found.start_moved_from.is_none()
                {
                    d = polyline_length(&found.waypoints);
                    // The answer runs from `j` to `source`.
                    path.extend_from_slice(&found.waypoints);
                    if j > source {
                        path.reverse();
                    }
                    entries.boxes[lo * n + hi] = path
                        .iter()
                        .fold([DVec2::INFINITY, DVec2::NEG_INFINITY], |[lo, hi], &p| {
                            [lo.min(p), hi.max(p)]
                        });
                }
                if entries.dist[source * n + j].to_bits() != d.to_bits() {
                    work.changed += 1;
                }
                entries.dist[source * n + j] = d;
                entries.dist[j * n + source] = d;
            }
        }
        work
    }
}
