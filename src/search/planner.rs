//! The planner facade: resolves start, goal and fallback, keeps the
//! meshes and the search memory, and dispatches a query to its engine,
//! whole or in slices.

use core::fmt;
use core::sync::atomic::AtomicBool;
use std::cell::RefCell;

use bevy_math::DVec2;

use super::context::{SearchContext, visible};
use super::resolve::{Resolved, resolve};
use super::{
    Algorithm, Outcome, Path, PathQuery, PlanError, PlanOptions, Query, SearchSpace, SearchTrace,
    anya, astar, best_first, costed, lazy_theta, mesh_graph, polyanya, radius,
};
use crate::clearance::Clearance;
use crate::geom::polyline_length;
use crate::grid::Grid;
use crate::mesh::locate::PolygonMarks;

/// A path planner with reusable search memory.
///
/// ```
/// use bevy_anyangle::prelude::*;
///
/// let grid = Grid::from_ascii(
///     "....
///      .##.
///      ....",
/// )
/// .unwrap();
/// let mut planner = Planner::new();
/// let path = planner
///     .plan(&grid, DVec2::new(0.5, 1.5), DVec2::new(3.5, 1.5), &PlanOptions::default())
///     .unwrap();
/// // Around the block: over its top-left corner (1, 1) and top-right corner (3, 1).
/// assert_eq!(path.waypoints.len(), 4);
/// assert!((path.length - (2.0 * 0.5f64.hypot(0.5) + 2.0)).abs() < 1e-9);
/// ```
#[derive(Default)]
pub struct Planner {
    vertex: best_first::Scratch,
    anya: anya::Scratch,
    pub(super) polyanya: polyanya::Scratch,
    /// The leg searches of route queries, kept between their calls (see
    /// [`super::legs`]), and the ticket of the search each runs.
    pub(super) legs: [polyanya::Scratch; super::legs::LEG_SEARCHES],
    pub(super) leg_tickets: [u64; super::legs::LEG_SEARCHES],
    /// The meshes of the last few grids [`Planner::plan`] ran Polyanya on,
    /// the most recently used first.
    meshes: Vec<crate::mesh::NavMesh>,
    /// The query of a search paused between slices.
    paused: Option<Resolved>,
    /// Whether the paused search is a Polyanya search still building its
    /// mesh (its search proper not begun).
    paused_in_mesh: bool,
    /// Marks for walks over a mesh's polygons (fallbacks on meshes for
    /// agents of a radius).
    pub(super) polygon_marks: PolygonMarks,
    /// A search on a mesh for a radius paused between slices.
    pub(super) paused_radius: Option<radius::RadiusSearch>,
    /// Where a search on an eroded grid paused between slices starts (its
    /// start, or where the agent fits).
    pub(super) paused_from: Option<DVec2>,
    /// A one-to-many query paused between slices.
    pub(super) paused_many: Option<super::many::ManySearch>,
    /// Scratch memory for A\* and Lazy Theta\* on meshes for a radius.
    pub(super) mesh_graph: mesh_graph::MeshGraph,
}

/// How far a search run in slices got ([`Planner::plan_slice`]).
#[derive(Debug)]
pub(crate) enum Step {
    /// The search ended, with this answer.
    Done(Result<Path, PlanError>),
    /// The slice ran out; the search goes on at the next call with
    /// `resume`.
    Paused,
}

impl fmt::Debug for Planner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Planner").finish_non_exhaustive()
    }
}

impl Planner {
    /// A planner with empty search memory (it grows on first use).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Allocates now the per-vertex search memory of every planner for the
    /// whole of `grid`, so that no query on it allocates pages later (useful
    /// before timing queries, or before a frame-critical first request).
    ///
    /// Without it, memory on a large grid is allocated page by page as
    /// searches first reach each part of it, which is far less: reserving
    /// costs about 40 bytes per vertex (some 2.7 GB for 8192 x 8192), while a
    /// search that explores a few thousand vertices touches a few pages of
    /// about 100 KB each. Grids up to about 1000 x 1000 are not paged: their
    /// first query allocates memory for the whole grid (at most about 40 MB),
    /// so that the searches' hottest loops skip the page lookup. Reserving
    /// memory that is already held does nothing.
    pub fn reserve(&mut self, grid: &Grid) {
        self.vertex.reserve(grid);
        self.anya.reserve(grid);
    }

    /// Bytes of search memory this planner holds: the per-vertex pages and
    /// their page tables, the open lists and node buffers (not counting the
    /// few hundred bytes of the `Planner` value itself).
    ///
    /// It only grows: pages are kept for later queries, on this grid or
    /// another (drop the planner to release them). It stays small on large
    /// grids as long as searches stay local: a query whose search explores a
    /// few thousand vertices of an 8192 x 8192 grid leaves it at a few MB.
    /// On grids up to about 1000 x 1000 it is the whole grid's, at most
    /// about 40 MB, from the first query on (see [`Planner::reserve`]).
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.vertex.memory_bytes()
            + self.anya.memory_bytes()
            + self.polyanya.memory_bytes()
            + self
                .legs
                .iter()
                .map(polyanya::Scratch::memory_bytes)
                .sum::<usize>()
    }

    /// The navigation mesh this planner keeps for [`Algorithm::Polyanya`]
    /// on the last grid [`Planner::plan`] ran Polyanya on, as it was then
    /// (`None` before the first such query, and while a search run in steps,
    /// as [`PlanTask`](super::PlanTask) runs them, is still building it). It
    /// is not counted in [`Planner::memory_bytes`]; see [`NavMesh::memory_bytes`](crate::mesh::NavMesh::memory_bytes).
    ///
    /// A planner keeps up to [`Planner::KEPT_MESHES`] meshes (for example
    /// of a grid and the eroded grids of a few agent sizes), each
    /// brought up to date with its grid's edits when a query comes: a query
    /// on a grid that is a clone of a kept mesh's grid, edited or not, syncs
    /// that mesh (rebuilding only the chunks the edits touched); a query on
    /// an unrelated grid builds a new mesh, dropping the least recently used
    /// one when all are taken.
    #[must_use]
    pub fn mesh(&self) -> Option<&crate::mesh::NavMesh> {
        // (A mesh whose building a sliced search paused is not shown.)
        self.meshes
            .iter()
            .find(|m| m.radius() == 0.0)
            .filter(|m| m.is_complete())
    }

    /// Builds now (or brings up to date) the navigation mesh
    /// [`Algorithm::Polyanya`] uses on `grid`, so that the next Polyanya
    /// query on it does not (useful before timing queries, or before a
    /// frame-critical first request). See [`Planner::mesh`].
    pub fn prepare_mesh(&mut self, grid: &Grid) {
        sync_mesh(&mut self.meshes, grid, 0.0, &mut { u64::MAX });
    }

    /// How many navigation meshes a planner keeps (see [`Planner::mesh`]).
    pub const KEPT_MESHES: usize = 4;

    /// Plans with Polyanya ([`Algorithm::Polyanya`], whatever
    /// `options.algorithm` says, on a mesh for a radius: see below) on
    /// `mesh`, from `start` to `goal`, with
    /// the rules of [`Planner::plan`] on the mesh's grid
    /// ([`NavMesh::grid`](crate::mesh::NavMesh::grid)). For callers that keep
    /// a mesh in step with their grid themselves (see
    /// [`NavMesh::sync`](crate::mesh::NavMesh::sync)); [`Planner::plan`] with
    /// [`Algorithm::Polyanya`] keeps one itself.
    ///
    /// On a mesh for agents of a radius
    /// ([`NavMesh::with_radius`](crate::mesh::NavMesh::with_radius)) the
    /// rules are those of `SPEC.md` for such meshes: a start off the mesh
    /// moves to the nearest point of it that it sees (reported in
    /// [`Path::start_moved_from`]); a goal off the mesh or cut off from the
    /// start gets a fallback path to the closest point the agent can reach.
    /// There `options.algorithm` chooses the planner: Anya and Polyanya
    /// give Polyanya's shortest paths; Lazy Theta\*, A\* and smoothed A\*
    /// run over the corners of the mesh's polygons (two corners of one
    /// polygon see each other), valid and usually longer.
    ///
    /// # Errors
    ///
    /// As [`Planner::plan`]; on a mesh for a radius also
    /// [`PlanError::NoRoom`] when no point of the mesh is within
    /// [`MAX_EXIT_DISTANCE`](crate::clearance::MAX_EXIT_DISTANCE) cells in
    /// sight of the start.
    pub fn plan_on_mesh(
        &mut self,
        mesh: &crate::mesh::NavMesh,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        self.find(&PathQuery::new(mesh, start, goal).with_options(*options))
    }

    /// Plans a path from each of `starts` to one `goal` on `mesh` (a mesh
    /// of point agents), into `out` (cleared first; one answer per start,
    /// in order): each answer is what [`Planner::plan_on_mesh`] gives for
    /// that start, a path as long (the same exact shortest length, to
    /// rounding), but the starts that reach the goal itself share one
    /// Polyanya search run from the goal towards all of them at once. That
    /// search has no single target to head for: it spreads out from the
    /// goal, as far as the farthest start, and ends when every start has
    /// its path. With one start it costs as much as 1.2-4.5 single
    /// searches on the bundled maps (the most where open space makes single
    /// searches cheap), and little more per start after that: it pays from
    /// 2 to 9 starts on. Starts that cannot reach the goal share a search in the
    /// same way, one per fallback target (one per region of the grid they
    /// stand in). Answers without a search (a start at its path's end, bad
    /// input) are planned one by one. On a mesh for a radius
    /// ([`NavMesh::with_radius`](crate::mesh::NavMesh::with_radius)) the
    /// starts share a search when the goal is on the mesh, each start moved
    /// onto the mesh as `plan_on_mesh` moves it; starts cut off from the
    /// goal, every start when the goal is off the mesh (their fallback
    /// targets depend on where each start is), and Lazy Theta\* or A\*
    /// (`options.algorithm`) are planned one by one. The paths of a shared
    /// search carry its [`SearchStats`](super::SearchStats).
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    /// use bevy_anyangle::prelude::*;
    ///
    /// let grid = Grid::from_ascii("....\n.##.\n....").unwrap();
    /// let mesh = NavMesh::build(&grid);
    /// let starts = [DVec2::new(0.0, 0.0), DVec2::new(4.0, 0.0), DVec2::new(0.5, 2.5)];
    /// let mut answers = Vec::new();
    /// let options = PlanOptions::with_algorithm(Algorithm::Polyanya);
    /// Planner::new().plan_many_on_mesh(&mesh, &starts, DVec2::new(4.0, 3.0), &options, &mut answers);
    /// assert_eq!(answers.len(), 3);
    /// // As long as each start's own search, around the wall.
    /// let first = answers[0].as_ref().unwrap();
    /// assert_eq!(first.waypoints.len(), 3);
    /// let alone = Planner::new().plan_on_mesh(&mesh, starts[0], DVec2::new(4.0, 3.0), &options).unwrap();
    /// assert!((first.length - alone.length).abs() < 1e-9);
    /// ```
    pub fn plan_many_on_mesh(
        &mut self,
        mesh: &crate::mesh::NavMesh,
        starts: &[DVec2],
        goal: DVec2,
        options: &PlanOptions,
        out: &mut Vec<Result<Path, PlanError>>,
    ) {
        out.clear();
        match self.many_slice(mesh, starts, goal, options, false, None) {
            Some(answers) => out.extend(answers),
            // (A mesh built on demand that this call cannot build.)
            None => out.extend(starts.iter().map(|_| Err(PlanError::MeshNotBuilt))),
        }
    }

    /// Plans a path from `start` to `goal` (grid coordinates) on `grid`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::NonFinite`] if a coordinate is NaN or infinite.
    /// - [`PlanError::NoFreeCell`] if the grid has no free cell.
    /// - [`PlanError::Unreachable`] if the goal is unreachable and the policy
    ///   is [`FallbackPolicy::Fail`](super::FallbackPolicy::Fail).
    /// - [`PlanError::BudgetExhausted`] if the node budget runs out.
    pub fn plan(
        &mut self,
        grid: &Grid,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        self.find(&PathQuery::new(grid, start, goal).with_options(*options))
    }

    /// Like [`Planner::plan`], but gives up with [`PlanError::Cancelled`]
    /// soon after `cancel` becomes `true` (checked every 1024 expansions).
    ///
    /// # Errors
    ///
    /// As [`Planner::plan`], plus [`PlanError::Cancelled`].
    pub fn plan_cancellable(
        &mut self,
        grid: &Grid,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
        cancel: &AtomicBool,
    ) -> Result<Path, PlanError> {
        let query = PathQuery::new(grid, start, goal).with_options(*options);
        self.find(&query.with_cancel(cancel))
    }

    /// Like [`Planner::plan`], and records in `trace` (cleared first) what
    /// the search expands: points for Lazy Theta* and A*, intervals for Anya
    /// (see [`SearchTrace`]). The path is the one [`Planner::plan`] returns.
    ///
    /// # Errors
    ///
    /// As [`Planner::plan`].
    pub fn plan_traced(
        &mut self,
        grid: &Grid,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
        trace: &mut SearchTrace,
    ) -> Result<Path, PlanError> {
        let query = PathQuery::new(grid, start, goal).with_options(*options);
        self.find_traced(&query, trace)
    }

    /// Plans for an agent of a clearance: on `eroded`, the eroded grid of
    /// `base` for `clearance`, from
    /// [`start_point`](crate::clearance::start_point) (the path then records
    /// the requested start in [`Path::start_moved_from`], as for a start
    /// moved out of a wall).
    ///
    /// # Errors
    ///
    /// As [`Planner::plan`], plus [`PlanError::NoRoom`] when `start_point`
    /// finds no place where the agent fits.
    ///
    /// ```
    /// use bevy_anyangle::clearance::{Clearance, erode};
    /// use bevy_anyangle::prelude::*;
    ///
    /// let base = Grid::from_ascii(
    ///     "@@@@@@@@@@
    ///      @........@
    ///      @........@
    ///      @........@
    ///      @........@
    ///      @@@@@@@@@@",
    /// )
    /// .unwrap();
    /// let eroded = erode(&base, Clearance::from_radius(0.5).unwrap());
    /// let start = DVec2::new(1.5, 1.5); // too close to the wall
    /// let path = Planner::new()
    ///     .plan_with_clearance(
    ///         &base,
    ///         &eroded,
    ///         Clearance::from_radius(0.5).unwrap(),
    ///         start,
    ///         DVec2::new(7.0, 3.5),
    ///         &PlanOptions::default(),
    ///     )
    ///     .unwrap();
    /// assert_eq!(path.start_moved_from, Some(start));
    /// assert_eq!(path.start(), DVec2::new(2.0, 2.0));
    /// ```
    pub fn plan_with_clearance(
        &mut self,
        base: &Grid,
        eroded: &Grid,
        clearance: Clearance,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        let space = SearchSpace::Eroded {
            base,
            eroded,
            clearance,
        };
        self.find(&PathQuery::new(space, start, goal).with_options(*options))
    }

    /// Plans over terrain with costs: the path from `start` to `goal` on
    /// `grid`, which must be `terrain.grid(profile)` (the profile's free and
    /// blocked cells; kept by the caller so that it is not rebuilt for each
    /// query), whose [`Path::cost`] is the sum of its segments' costs under
    /// `profile` (see [`crate::terrain::segment_cost`]).
    ///
    /// - With a uniform profile ([`Profile::is_uniform`](crate::terrain::Profile::is_uniform)),
    ///   costs are lengths: every planner runs as [`Planner::plan`] does.
    /// - Otherwise Lazy Theta\* runs Theta\* with costs (valid, near the
    ///   cheapest) and A\* (with or without smoothing) the cheapest
    ///   8-connected path, not smoothed; Anya is refused.
    ///
    /// Start, goal, fallback and budget rules are those of [`Planner::plan`]
    /// (the fallback target is the closest point, not the cheapest).
    ///
    /// ```
    /// use bevy_anyangle::prelude::*;
    /// use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};
    ///
    /// // A swamp across the middle, with a dry way round at the bottom.
    /// let terrain = TerrainMap::from_ascii(
    ///     "...SSS...
    ///      ...SSS...
    ///      ...SSS...
    ///      .........",
    /// )
    /// .unwrap();
    /// let slow = Profile::default().with(Terrain::SWAMP, 5.0).unwrap();
    /// let grid = terrain.grid(&slow);
    /// let options = PlanOptions::with_algorithm(Algorithm::LazyTheta);
    /// let path = Planner::new()
    ///     .plan_with_costs(&grid, &terrain, &slow, DVec2::new(0.5, 0.5), DVec2::new(8.5, 0.5), &options)
    ///     .unwrap();
    /// assert!(path.cost < 8.0 * 5.0, "round the swamp, not through it");
    /// assert!(path.waypoints.iter().any(|p| p.y >= 3.0));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Planner::plan`], plus [`PlanError::CostsNotSupported`] for Anya
    /// with a non-uniform profile and [`PlanError::TerrainSize`] if `grid`
    /// and `terrain` differ in size.
    pub fn plan_with_costs(
        &mut self,
        grid: &Grid,
        terrain: &crate::terrain::TerrainMap,
        profile: &crate::terrain::Profile,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        let query = PathQuery::new(grid, start, goal).with_options(*options);
        self.find(&query.with_costs(terrain, profile))
    }

    /// [`Planner::plan`] with an optional cancel flag, an optional trace
    /// and terrain costs when `costs` is given (a non-uniform profile;
    /// Theta\* or A\*), with no checks of the costs.
    #[cfg(test)]
    #[expect(clippy::too_many_arguments, reason = "the planner's inputs")]
    pub(crate) fn plan_core(
        &mut self,
        grid: &Grid,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
        cancel: Option<&AtomicBool>,
        trace: Option<&mut SearchTrace>,
        costs: Option<costed::Costs<'_>>,
    ) -> Result<Path, PlanError> {
        let query = Query {
            grid,
            start,
            goal,
            options,
            cancel,
            costs,
            mesh: None,
        };
        match self.plan_slice(&query, trace, false, None) {
            Step::Done(answer) => answer,
            // (Without a slice limit a search never pauses.)
            Step::Paused => Err(PlanError::SearchFailed {
                stats: super::SearchStats::default(),
            }),
        }
    }

    /// A query on a grid (or a point agent's mesh) in slices: runs the search for at most
    /// `slice` more expansions (`None`: to the end) and returns
    /// [`Step::Paused`] if it has not ended by then. With `resume`, it goes
    /// on with the search this planner paused last, whose `query` must be
    /// the same (the query is only read again for its grid, options, cancel
    /// flag and costs); without one paused, it starts afresh. Without
    /// `resume`, it starts afresh and drops any paused search. The answer is
    /// the one the query gives run whole, however the work is sliced.
    pub(crate) fn plan_slice(
        &mut self,
        query: &Query<'_>,
        mut trace: Option<&mut SearchTrace>,
        resume: bool,
        slice: Option<u64>,
    ) -> Step {
        let in_mesh = core::mem::take(&mut self.paused_in_mesh);
        self.polyanya.wanted.clear();
        let (resolved, resume) = match self.paused.take() {
            Some(resolved) if resume => (resolved, true),
            _ => {
                if let Some(t) = trace.as_deref_mut() {
                    t.reset(query.options.algorithm);
                }
                match resolve(query) {
                    Ok(resolved) => (resolved, false),
                    Err(error) => return Step::Done(Err(error)),
                }
            }
        };
        let options = query.options;
        let ends = (&resolved.start, &resolved.goal);
        let mut ctx = SearchContext::new(
            query.grid,
            ends,
            options,
            query.cancel,
            resolved.stats,
            trace,
            slice,
        );
        let mut waypoints = Vec::new();
        let (start_ep, goal_ep) = (&resolved.start, &resolved.goal);
        let outcome = if !resume && start_ep.p == goal_ep.p {
            waypoints.push(start_ep.p);
            Outcome::Found
        } else if let Some(costs) = query.costs {
            // (No straight-line shortcut: it need not be the cheapest.)
            let any_angle = options.algorithm == Algorithm::LazyTheta;
            let vertex = &mut self.vertex;
            costed::search(&mut ctx, costs, any_angle, vertex, &mut waypoints, resume)
        } else if !resume
            && options.algorithm.is_any_angle()
            && visible(&mut ctx, start_ep, goal_ep)
        {
            waypoints.extend([start_ep.p, goal_ep.p]);
            Outcome::Found
        } else {
            match options.algorithm {
                Algorithm::LazyTheta => {
                    lazy_theta::search(&mut ctx, &mut self.vertex, &mut waypoints, resume)
                }
                Algorithm::Anya => anya::search(&mut ctx, &mut self.anya, &mut waypoints, resume),
                Algorithm::Polyanya => {
                    let cancelled = || {
                        query
                            .cancel
                            .is_some_and(|flag| flag.load(core::sync::atomic::Ordering::Relaxed))
                    };
                    let mesh = match query.mesh {
                        Some(mesh) => Some(mesh),
                        // (A paused search resumes on the same grid: the
                        // kept mesh is already in step with it.)
                        None if resume && !in_mesh => {
                            Some(self.meshes.first().expect("kept for the paused search"))
                        }
                        None if cancelled() => None,
                        // Building a new mesh is part of the slice's work:
                        // on a large grid it takes several slices, a chunk
                        // or more each (an update after edits is made at
                        // once).
                        None => {
                            let left = ctx.stop_at.saturating_sub(ctx.stats.expanded);
                            let mut work = if slice.is_some() { left } else { u64::MAX };
                            let mesh = sync_mesh(&mut self.meshes, query.grid, 0.0, &mut work);
                            if mesh.is_some() && slice.is_some() {
                                // The search gets what is left (at least an
                                // expansion, so that every slice moves on).
                                ctx.stop_at = ctx.stop_at.min(ctx.stats.expanded + work.max(1));
                            }
                            mesh
                        }
                    };
                    match mesh {
                        Some(mesh) => polyanya::search(
                            &mut ctx,
                            mesh,
                            &mut self.polyanya,
                            &mut waypoints,
                            resume && !in_mesh,
                        ),
                        None if cancelled() => Outcome::Cancelled,
                        None => {
                            self.paused_in_mesh = true;
                            Outcome::Paused
                        }
                    }
                }
                Algorithm::AStarSmoothed => {
                    let o = astar::search(&mut ctx, &mut self.vertex, &mut waypoints, resume);
                    if o == Outcome::Found {
                        astar::smooth(&mut ctx, &mut waypoints);
                    }
                    o
                }
                Algorithm::AStar => {
                    astar::search(&mut ctx, &mut self.vertex, &mut waypoints, resume)
                }
            }
        };
        let stats = ctx.stats;
        let answer = match outcome {
            Outcome::Found => Ok(Path {
                length: polyline_length(&waypoints),
                cost: query
                    .costs
                    .map_or_else(|| polyline_length(&waypoints), |c| c.polyline(&waypoints)),
                waypoints,
                kind: resolved.kind,
                start_moved_from: resolved.start_moved_from,
                stats,
            }),
            Outcome::Budget => Err(PlanError::BudgetExhausted { stats }),
            Outcome::Cancelled => Err(PlanError::Cancelled),
            Outcome::Exhausted => Err(PlanError::SearchFailed { stats }),
            Outcome::Paused | Outcome::Unbuilt => {
                self.paused = Some(Resolved { stats, ..resolved });
                return Step::Paused;
            }
        };
        Step::Done(answer)
    }
}

/// The mesh of `grid` for agents of `radius` (0: points) among those a
/// planner keeps (see [`Planner::mesh`]), moved to the front and brought up
/// to date with it, or a new one built for at most about `work` units
/// ([`NavMesh::sync_within`](crate::mesh::NavMesh::sync_within)); `None` if
/// that was not enough (the next call goes on).
fn sync_mesh<'m>(
    kept: &'m mut Vec<crate::mesh::NavMesh>,
    grid: &Grid,
    radius: f64,
    work: &mut u64,
) -> Option<&'m crate::mesh::NavMesh> {
    let kin = kept
        .iter()
        .enumerate()
        .filter(|(_, m)| m.radius() == radius)
        .map(|(i, m)| (m.grid().shared_row_bands(grid), i))
        .max();
    match kin {
        Some((shared, i)) if shared > 0 => {
            let mesh = kept.remove(i);
            kept.insert(0, mesh);
        }
        _ => {
            kept.truncate(Planner::KEPT_MESHES - 1);
            kept.insert(0, crate::mesh::NavMesh::unbuilt_with_radius(grid, radius));
        }
    }
    let mesh = &mut kept[0];
    mesh.sync_within(grid, work).then_some(&*mesh)
}

thread_local! {
    static PLANNER: RefCell<Planner> = RefCell::new(Planner::new());
}

/// Plans with this thread's [`Planner`] (its memory is reused by later calls
/// on the same thread).
///
/// # Errors
///
/// As [`Planner::plan`].
///
/// ```
/// use bevy_anyangle::prelude::*;
///
/// let grid = Grid::new(10, 10).unwrap();
/// let path = plan(&grid, DVec2::new(0.5, 0.5), DVec2::new(9.5, 9.5), &PlanOptions::default()).unwrap();
/// assert_eq!(path.waypoints, vec![DVec2::new(0.5, 0.5), DVec2::new(9.5, 9.5)]);
/// ```
pub fn plan(
    grid: &Grid,
    start: DVec2,
    goal: DVec2,
    options: &PlanOptions,
) -> Result<Path, PlanError> {
    PLANNER.with(|p| match p.try_borrow_mut() {
        Ok(mut planner) => planner.plan(grid, start, goal, options),
        // Re-entrant use (a planner called from inside a planner) gets fresh memory.
        Err(_) => Planner::new().plan(grid, start, goal, options),
    })
}
