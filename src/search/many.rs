//! One goal, many starts: the starts that reach the goal (or one fallback
//! target) share one Polyanya search run from there towards all of them;
//! the others are planned alone. Whole, or a slice at a time.

use bevy_math::DVec2;

use super::endpoint::Endpoint;
use super::resolve::{resolve_goal, resolve_start};
use super::{
    Algorithm, Outcome, Path, PathKind, PathQuery, PlanError, PlanOptions, Planner, SearchContext,
    SearchStats, Step, polyanya,
};
use crate::clearance::MAX_EXIT_DISTANCE;
use crate::fast_hash::FastMap;
use crate::geom::polyline_length;
use crate::grid::RegionId;
use crate::mesh::NavMesh;
use crate::mesh::locate::{nearest_on_mesh, on_mesh};

/// One shared search: from `source` (the goal, or a fallback target)
/// towards every target, each a start of `members`.
struct Shared {
    source: Endpoint,
    targets: Vec<Endpoint>,
    members: Vec<Member>,
}

/// A start a shared search answers.
struct Member {
    /// Its place among the starts.
    index: usize,
    /// Where its path starts (moved onto the mesh, for a radius) and what
    /// it was moved from.
    from: DVec2,
    start_moved_from: Option<DVec2>,
    kind: PathKind,
}

/// A one-to-many query between two slices: the answers so far, the shared
/// searches, and the starts left to plan alone.
pub(super) struct ManySearch {
    answers: Vec<Option<Result<Path, PlanError>>>,
    shared: Vec<Shared>,
    /// The shared search under way, and whether it has begun.
    at: usize,
    begun: bool,
    stats: SearchStats,
    /// On a mesh for a radius, the paths of the shared searches are scaled
    /// back to cells and end exactly at the goal.
    exact_goal: Option<DVec2>,
    /// The next start that may have to be planned alone, and whether its
    /// search has begun.
    single: usize,
    single_begun: bool,
}

impl Planner {
    /// Plans a path from each of `starts` to one `goal` on `mesh`, into
    /// `out` (cleared first; one answer per start, in order), for at most
    /// `max_expansions` more expansions: `true` once every answer is in
    /// `out`, `false` while the work goes on. `first` starts afresh;
    /// otherwise the call goes on with the work this planner paused last,
    /// which must be for the same starts, goal and options (the planner
    /// must run no other query in between). The answers are those
    /// [`Planner::plan_many_on_mesh`] gives, however the work is sliced;
    /// each slice runs one shared search's slice, or one start's alone.
    pub fn step_many(
        &mut self,
        mesh: &NavMesh,
        (starts, goal): (&[DVec2], DVec2),
        options: &PlanOptions,
        first: bool,
        max_expansions: u64,
        out: &mut Vec<Result<Path, PlanError>>,
    ) -> bool {
        out.clear();
        match self.many_slice(mesh, starts, goal, options, !first, Some(max_expansions)) {
            Some(answers) => {
                out.extend(answers);
                true
            }
            // (A mesh built on demand that this call cannot build.)
            None if self.wants_chunks() => {
                out.extend(starts.iter().map(|_| Err(PlanError::MeshNotBuilt)));
                true
            }
            None => false,
        }
    }

    /// Where a search on `mesh` from `start` begins, and the point it was
    /// moved from if it moved: `start` itself where it is valid, else the
    /// point the start rule of [`Planner::plan_on_mesh`] moves it to.
    pub(crate) fn start_on_mesh(
        &mut self,
        mesh: &NavMesh,
        start: DVec2,
    ) -> Result<(DVec2, Option<DVec2>), PlanError> {
        if !start.is_finite() {
            return Err(PlanError::NonFinite(super::Role::Start));
        }
        let start = start + DVec2::ZERO;
        if mesh.radius() > 0.0 {
            let within = f64::from(MAX_EXIT_DISTANCE);
            let found = &mut self.polygon_marks.found;
            let from = nearest_on_mesh(mesh, start, within, found).ok_or_else(|| {
                if mesh.polygon_count() == 0 {
                    PlanError::NoFreeCell
                } else {
                    PlanError::NoRoom
                }
            })?;
            Ok((from, (from != start).then_some(start)))
        } else {
            resolve_start(mesh.grid(), start).map(|(ep, moved)| (ep.p, moved))
        }
    }

    /// One slice of a one-to-many query (see [`Planner::step_many`]);
    /// `slice` `None` runs it to the end. The answers once done.
    pub(crate) fn many_slice(
        &mut self,
        mesh: &NavMesh,
        starts: &[DVec2],
        goal: DVec2,
        options: &PlanOptions,
        resume: bool,
        slice: Option<u64>,
    ) -> Option<Vec<Result<Path, PlanError>>> {
        self.polyanya.wanted.clear();
        let mut many = match self.paused_many.take() {
            Some(many) if resume => many,
            _ => {
                if mesh.is_on_demand() && self.want_many_ends(mesh, starts, goal) {
                    return None;
                }
                let many = self.many_begin(mesh, starts, goal, options);
                if slice.is_some() {
                    // Setting up (moving each start, finding the ends) is
                    // a slice of its own.
                    self.paused_many = Some(many);
                    return None;
                }
                many
            }
        };
        while many.at < many.shared.len() {
            if self.shared_slice(mesh, options, &mut many, slice) {
                self.paused_many = Some(many);
                return None;
            }
            if slice.is_some() && many.at < many.shared.len() {
                self.paused_many = Some(many);
                return None;
            }
        }
        // Answers without a shared search (a start at its path's end, bad
        // input, a start cut off from the goal on a mesh for a radius, Lazy
        // Theta* or A*, out of a shared search's budget): alone.
        let options = *options;
        while many.single < many.answers.len() {
            let i = many.single;
            if many.answers[i].is_some() {
                many.single += 1;
                continue;
            }
            let query = PathQuery::new(mesh, starts[i], goal).with_options(options);
            let resume = core::mem::replace(&mut many.single_begun, true);
            match self.run(&query, None, resume, slice) {
                Step::Done(answer) => {
                    many.answers[i] = Some(answer);
                    many.single += 1;
                    many.single_begun = false;
                    if slice.is_some() && many.single < many.answers.len() {
                        self.paused_many = Some(many);
                        return None;
                    }
                }
                Step::Paused => {
                    self.paused_many = Some(many);
                    return None;
                }
            }
        }
        Some(
            many.answers
                .into_iter()
                .map(|answer| answer.expect("every start answered"))
                .collect(),
        )
    }

    /// One slice of the shared search `many.at`: `true` if it paused;
    /// once it has ended, its members' answers are in `many` and the next
    /// one is due.
    fn shared_slice(
        &mut self,
        mesh: &NavMesh,
        options: &PlanOptions,
        many: &mut ManySearch,
        slice: Option<u64>,
    ) -> bool {
        let shared = &many.shared[many.at];
        let ends = (&shared.source, &shared.source);
        let mut ctx = SearchContext::new(mesh.grid(), ends, options, None, many.stats, None, slice);
        let outcome = polyanya::search_many(
            &mut ctx,
            mesh,
            &mut self.polyanya,
            &shared.targets,
            many.begun,
        );
        let stats = ctx.stats;
        if matches!(outcome, Outcome::Paused | Outcome::Unbuilt) {
            many.begun = true;
            many.stats = stats;
            return true;
        }
        // (Out of its budget: its starts are planned alone.)
        if matches!(outcome, Outcome::Found | Outcome::Exhausted) {
            let scale = mesh.scale() as f64;
            for (k, member) in shared.members.iter().enumerate() {
                let mut waypoints = Vec::new();
                if !self.polyanya.path_from_target(k, &mut waypoints) {
                    continue; // cut off from the goal: planned alone
                }
                if let Some(goal) = many.exact_goal {
                    for p in &mut waypoints {
                        *p /= scale;
                    }
                    // The ends exactly as asked, not through the lattice.
                    let last = waypoints.len() - 1;
                    (waypoints[0], waypoints[last]) = (member.from, goal);
                }
                let length = polyline_length(&waypoints);
                many.answers[member.index] = Some(Ok(Path {
                    waypoints,
                    length,
                    cost: length,
                    kind: member.kind,
                    start_moved_from: member.start_moved_from,
                    stats,
                }));
            }
        }
        many.at += 1;
        many.begun = false;
        many.stats = SearchStats::default();
        false
    }

    /// On a mesh built on demand, before a one-to-many query: lists in
    /// `polyanya.wanted` the chunks not built yet that setting it up reads
    /// next (those of the goal and every start; on a mesh for a radius,
    /// for a start off the mesh, those of the next ring around it that the
    /// look for the mesh's nearest point reads, ring by ring up to
    /// [`MAX_EXIT_DISTANCE`]); `true` if there are any.
    fn want_many_ends(&mut self, mesh: &NavMesh, starts: &[DVec2], goal: DVec2) -> bool {
        let wanted = &mut self.polyanya.wanted;
        let ends = || starts.iter().chain([&goal]).filter(|p| p.is_finite());
        for &p in ends() {
            mesh.unbuilt_at(p, wanted);
        }
        if wanted.is_empty() && mesh.radius() > 0.0 {
            // Starts off the mesh move to the nearest point in sight
            // (looked for ring by ring: the chunks of the rings it reads).
            let within = f64::from(MAX_EXIT_DISTANCE);
            let found = &mut self.polygon_marks.found;
            for &p in starts.iter().filter(|p| p.is_finite()) {
                if !on_mesh(mesh, p, found) {
                    mesh.want_rings(p, within, wanted, |m, r| {
                        nearest_on_mesh(m, p, within, found).is_some_and(|q| q.distance(p) <= r)
                    });
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        !wanted.is_empty()
    }

    /// Sets a one-to-many query up: which starts share which search.
    fn many_begin(
        &mut self,
        mesh: &NavMesh,
        starts: &[DVec2],
        goal: DVec2,
        options: &PlanOptions,
    ) -> ManySearch {
        let mut answers: Vec<Option<Result<Path, PlanError>>> = Vec::with_capacity(starts.len());
        answers.resize_with(starts.len(), || None);
        let (shared, exact_goal) = if mesh.radius() > 0.0 {
            (
                self.radius_shared(mesh, starts, goal, options),
                Some(goal + DVec2::ZERO),
            )
        } else {
            (point_shared(mesh, starts, goal, options), None)
        };
        ManySearch {
            answers,
            shared,
            at: 0,
            begun: false,
            stats: SearchStats::default(),
            exact_goal,
            single: 0,
            single_begun: false,
        }
    }

    /// On a mesh for a radius, for a goal on the mesh and Anya or
    /// Polyanya: one search from the goal for the starts, each moved onto
    /// the mesh as a single search moves it. The others are planned alone:
    /// bad input, a start already at the goal, a goal off the mesh (whose
    /// fallback target depends on the start's part of the mesh), Lazy
    /// Theta\* and A\*.
    fn radius_shared(
        &mut self,
        mesh: &NavMesh,
        starts: &[DVec2],
        goal: DVec2,
        options: &PlanOptions,
    ) -> Vec<Shared> {
        let goal = goal + DVec2::ZERO;
        let exact = matches!(options.algorithm, Algorithm::Anya | Algorithm::Polyanya);
        let source =
            (exact && goal.is_finite() && on_mesh(mesh, goal, &mut self.polygon_marks.found))
                .then(|| Endpoint::resolve(mesh.grid(), goal))
                .flatten();
        let Some(source) = source else {
            return Vec::new();
        };
        let within = f64::from(MAX_EXIT_DISTANCE);
        let mut shared = Shared {
            source,
            targets: Vec::new(),
            members: Vec::new(),
        };
        for (index, &start) in starts.iter().enumerate() {
            if !start.is_finite() {
                continue;
            }
            let start = start + DVec2::ZERO;
            let found = &mut self.polygon_marks.found;
            let Some(from) = nearest_on_mesh(mesh, start, within, found) else {
                continue;
            };
            if let (true, Some(end)) = (from != goal, Endpoint::resolve(mesh.grid(), from)) {
                shared.targets.push(end);
                shared.members.push(Member {
                    index,
                    from,
                    start_moved_from: (from != start).then_some(start),
                    kind: PathKind::Found,
                });
            }
        }
        if shared.targets.is_empty() {
            Vec::new()
        } else {
            vec![shared]
        }
    }
}

/// On a point agent's mesh: the starts resolved, grouped by the point their
/// paths end at (the goal, or a fallback target shared by the starts of one
/// region), one shared search each. A start without a search (at its path's
/// end, bad input) is left to be planned alone.
fn point_shared(
    mesh: &NavMesh,
    starts: &[DVec2],
    goal: DVec2,
    options: &PlanOptions,
) -> Vec<Shared> {
    let grid = mesh.grid();
    let options = PlanOptions {
        algorithm: Algorithm::Polyanya,
        ..*options
    };
    // The ends, worked out once per region of the grid.
    let mut ends: FastMap<RegionId, Option<(Endpoint, PathKind)>> = FastMap::default();
    // (start index, start, its end, kind, moved from)
    let mut resolved = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        if !(start.is_finite() && goal.is_finite()) {
            continue;
        }
        let found = {
            resolve_start(grid, start + DVec2::ZERO)
                .ok()
                .and_then(|(start, moved)| {
                    let (end, kind) = ends
                        .entry(start.region)
                        .or_insert_with(|| {
                            resolve_goal(grid, goal + DVec2::ZERO, start.region, &options).ok()
                        })
                        .clone()?;
                    (end.p != start.p).then_some((i, start, end, kind, moved))
                })
        };
        resolved.extend(found);
    }
    let end_key = |e: &Endpoint| (e.region, e.p.x.to_bits(), e.p.y.to_bits());
    resolved.sort_by_key(|r| end_key(&r.2));
    resolved
        .chunk_by(|a, b| end_key(&a.2) == end_key(&b.2))
        .map(|group| Shared {
            source: group[0].2.clone(),
            targets: group.iter().map(|r| r.1.clone()).collect(),
            members: group
                .iter()
                .map(|r| Member {
                    index: r.0,
                    from: r.1.p,
                    start_moved_from: r.4,
                    kind: r.3,
                })
                .collect(),
        })
        .collect()
}
