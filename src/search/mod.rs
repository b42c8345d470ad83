//! Planning: one entry point, several planners, one result type.
//!
//! [`Planner::plan`] validates the endpoints, answers unreachable goals from
//! the grid's region labels without searching (with a fallback path to the
//! closest reachable point, see [`FallbackPolicy`]), then runs the chosen
//! [`Algorithm`]. A `Planner` owns its search memory and reuses it from one
//! query to the next. On large grids that memory grows with what searches
//! touch, not with the grid: per-vertex records live in pages allocated the
//! first time a search reaches them and kept afterwards, so a query that
//! stays where earlier ones went allocates nothing (see
//! [`Planner::memory_bytes`]).
//! [`plan`] uses one `Planner` per thread.
//!
//! # Endpoints
//!
//! Start and goal may be any points of `[0, width] x [0, height]` (grid
//! coordinates, see [`crate::grid`]), not only vertices: the path begins
//! exactly at the start and ends exactly at the goal.
//!
//! - A start or goal on a double corner belongs to the cell to its
//!   south-east (`(floor x, floor y)`), and the path may only leave or arrive
//!   through that cell (the GPPC convention of `SPEC.md`).
//! - A start that is not a valid point (inside an obstacle, outside the grid,
//!   or on a double corner whose south-east cell is blocked) is moved to the
//!   nearest valid point; [`Path::start_moved_from`] reports it.
//! - A goal that is not reachable from the start (blocked, outside, or in
//!   another region) is answered by [`FallbackPolicy`].

mod anya;
mod astar;
mod costed;
mod endpoint;
mod heap;
mod lazy_theta;
mod mesh_graph;
mod paged;
mod polyanya;
mod radius;
#[cfg(test)]
mod slice_tests;
mod task;
mod trace;
mod vertex_graph;

#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use core::fmt;
use core::str::FromStr;
use core::sync::atomic::AtomicBool;
use std::cell::RefCell;

use bevy_math::DVec2;
use thiserror::Error;

use crate::geom::polyline_length;
use crate::grid::Grid;
pub(crate) use costed::Costs;
pub(crate) use endpoint::Endpoint;
pub(crate) use endpoint::{nearest_valid_point, owned_point};
pub use task::PlanTask;
pub use trace::{ExpandedPoint, SearchTrace, TraceInterval};

/// Which planner to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Algorithm {
    /// Lazy Theta* (Nash, Koenig & Tovey, AAAI 2010): any-angle,
    /// near-shortest (often exactly shortest). On maps of scattered
    /// single-cell noise it can be faster than Anya.
    LazyTheta,
    /// Anya (Harabor, Grastien, Oz & Aksakalli, JAIR 2016): truly shortest
    /// any-angle paths, no preprocessing. The default; [`Algorithm::Polyanya`]
    /// gives the same paths faster where a mesh of the grid can be kept (see
    /// `docs/compare.md`).
    #[default]
    Anya,
    /// A* on the 8-connected vertex grid: shortest among paths along grid
    /// edges and cell diagonals. The baseline.
    AStar,
    /// [`Algorithm::AStar`] followed by line-of-sight post-smoothing
    /// ("A* PS"): each waypoint is joined to the farthest later one it sees.
    AStarSmoothed,
    /// Polyanya (Cui, Harabor & Grastien, IJCAI 2017): truly shortest
    /// any-angle paths, the same lengths as [`Algorithm::Anya`], searched
    /// over a navigation mesh of the grid ([`crate::mesh::NavMesh`]) instead
    /// of its rows. The mesh is built once per grid and kept in step with
    /// its edits chunk by chunk; [`Planner::plan`] keeps the meshes of its
    /// last few grids (see [`Planner::mesh`]), [`Planner::plan_on_mesh`]
    /// takes one the caller keeps. On game maps and mazes it answers in
    /// about half of Anya's time (see `docs/compare.md`); on maps of
    /// scattered single-cell noise the mesh is fragmented, and with 40 % of
    /// the cells blocked Anya is faster.
    Polyanya,
}

impl Algorithm {
    /// Every algorithm, in a stable order.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::LazyTheta,
        Algorithm::Anya,
        Algorithm::AStar,
        Algorithm::AStarSmoothed,
        Algorithm::Polyanya,
    ];

    /// The command-line name: `lazy-theta`, `anya`, `astar`, `astar-ps`,
    /// `polyanya`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::LazyTheta => "lazy-theta",
            Algorithm::Anya => "anya",
            Algorithm::AStar => "astar",
            Algorithm::AStarSmoothed => "astar-ps",
            Algorithm::Polyanya => "polyanya",
        }
    }

    /// Whether paths may turn anywhere (not only along grid moves).
    #[must_use]
    pub fn is_any_angle(self) -> bool {
        !matches!(self, Algorithm::AStar)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An algorithm name that [`Algorithm::from_str`] does not know.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown algorithm {0:?} (expected lazy-theta, anya, astar, astar-ps or polyanya)")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownAlgorithm(s.to_owned()))
    }
}

/// What to do when the goal cannot be reached from the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FallbackPolicy {
    /// Plan to the *fallback target* of `SPEC.md`: the point of the start's
    /// region closest (Euclidean) to the goal. The path is marked
    /// [`PathKind::Fallback`]. Where that point is a double corner that
    /// belongs to a cell outside the region (so it is no valid goal), the
    /// path ends 1/1024 of a cell from it along both axes, inside the
    /// region's cell.
    #[default]
    ClosestReachable,
    /// Fail with [`PlanError::Unreachable`].
    Fail,
}

/// The node budget of [`PlanOptions::default`] and of the plugin's default
/// settings: one million expansions.
///
/// Every scenario query of the bundled benchmark maps (up to 512 x 512
/// cells, mazes and random maps included) needs at most about a quarter of
/// it, and A* and Lazy Theta* expand each vertex at most once, so they never
/// reach it on a grid with fewer vertices than this. What it stops is a
/// search that would run for minutes: on an open 8192 x 8192 grid with a
/// large walled pocket, Lazy Theta* took 48 s and 13 M expansions to go round
/// it (110-118 s and 11 M for a corner-to-corner query), A* 4 s; with this budget
/// they give up after 1-10 s (Lazy Theta*, whose line-of-sight checks grow
/// with the map) and 0.2 s (A*). Anya solved the same queries in under
/// 25,000 expansions.
///
/// At the budget a search returns [`PlanError::BudgetExhausted`]; set
/// [`PlanOptions::node_budget`] to `None` for no limit.
pub const DEFAULT_NODE_BUDGET: u64 = 1_000_000;

/// Settings for one query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanOptions {
    /// The planner.
    pub algorithm: Algorithm,
    /// Unreachable goals: fallback path or error.
    pub fallback: FallbackPolicy,
    /// Heuristic weight `w` in `f = g + w h` for Lazy Theta* and A*.
    /// `1.0` (the default) keeps A* optimal; larger values expand fewer nodes
    /// for longer paths. Anya ignores it (its pruning needs `w = 1`).
    /// Values below 1 or not finite are treated as 1.
    pub heuristic_weight: f64,
    /// Give up after expanding this many nodes ([`PlanError::BudgetExhausted`]).
    /// `None`: no limit. Default: [`DEFAULT_NODE_BUDGET`].
    pub node_budget: Option<u64>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            algorithm: Algorithm::default(),
            fallback: FallbackPolicy::default(),
            heuristic_weight: 1.0,
            node_budget: Some(DEFAULT_NODE_BUDGET),
        }
    }
}

impl PlanOptions {
    /// Default options with the given algorithm.
    #[must_use]
    pub fn with_algorithm(algorithm: Algorithm) -> Self {
        PlanOptions {
            algorithm,
            ..Self::default()
        }
    }

    pub(crate) fn weight(&self) -> f64 {
        if self.heuristic_weight.is_finite() && self.heuristic_weight > 1.0 {
            self.heuristic_weight
        } else {
            1.0
        }
    }
}

/// Work a search did.
///
/// The four node counts are kept apart so that they compare with other
/// implementations, which count differently. For the vertex-graph planners
/// (Lazy Theta*, A*) a node is a vertex: `popped` is `expanded` plus the
/// goal, and `generated` equals `pushed`. For Anya a node is an interval
/// with a root: a node with exactly one successor that can only be projected
/// further is expanded in place, without a trip through the open list, so
/// `expanded` (every expansion) exceeds `popped` (the open-list pops, the
/// count Anya's authors report), and `generated` exceeds `pushed` by the
/// nodes expanded in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Nodes expanded (their successors made), counting each step of
    /// Anya's intermediate pruning.
    pub expanded: u64,
    /// Nodes made as successors, whether pushed to the open list or (Anya)
    /// expanded at once.
    pub generated: u64,
    /// Nodes pushed to the open list.
    pub pushed: u64,
    /// Nodes taken from the open list, stale entries and the goal included.
    pub popped: u64,
    /// Line-of-sight checks made.
    pub los_checks: u64,
}

/// Whether a path reaches the requested goal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathKind {
    /// The path ends at the requested goal.
    Found,
    /// The goal is unreachable; the path ends at the closest reachable point
    /// instead (the fallback target of `SPEC.md`).
    Fallback {
        /// The goal that was asked for.
        requested_goal: DVec2,
    },
}

/// A planned path, in grid coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// Waypoints from the (possibly moved) start to the goal (or fallback
    /// target), each consecutive pair mutually visible. A single point when
    /// start and goal coincide.
    pub waypoints: Vec<DVec2>,
    /// Euclidean length of the polyline.
    pub length: f64,
    /// What the path costs: its length, or with terrain costs
    /// ([`Planner::plan_with_costs`]) the sum of its segments' costs.
    pub cost: f64,
    /// Whether the path reaches the goal or falls back.
    pub kind: PathKind,
    /// If the requested start was not a valid point, where it was: the path
    /// then starts at the nearest valid point instead.
    pub start_moved_from: Option<DVec2>,
    /// Work the search did.
    pub stats: SearchStats,
}

impl Path {
    /// Whether this is a fallback path (the goal itself was unreachable).
    #[must_use]
    pub fn is_fallback(&self) -> bool {
        matches!(self.kind, PathKind::Fallback { .. })
    }

    /// The first waypoint.
    #[must_use]
    pub fn start(&self) -> DVec2 {
        self.waypoints[0]
    }

    /// The last waypoint.
    #[must_use]
    pub fn end(&self) -> DVec2 {
        self.waypoints[self.waypoints.len() - 1]
    }
}

/// Which end of a query a problem concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The start point.
    Start,
    /// The goal point.
    Goal,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Start => "start",
            Role::Goal => "goal",
        })
    }
}

/// Why no path was returned.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PlanError {
    /// A coordinate is NaN or infinite.
    #[error("the {0} point is not finite")]
    NonFinite(Role),
    /// The grid has no free cell, so there is nowhere to start.
    #[error("the grid has no free cell")]
    NoFreeCell,
    /// The goal is not reachable and the policy is [`FallbackPolicy::Fail`].
    #[error("the goal is not reachable from the start (closest reachable point: {closest})")]
    Unreachable {
        /// The fallback target that [`FallbackPolicy::ClosestReachable`]
        /// would have planned to.
        closest: DVec2,
    },
    /// The search expanded [`PlanOptions::node_budget`] nodes without
    /// finishing.
    #[error("the search gave up after expanding {} nodes (node budget)", stats.expanded)]
    BudgetExhausted {
        /// Work done before giving up.
        stats: SearchStats,
    },
    /// The cancel flag was raised while searching.
    #[error("the search was cancelled")]
    Cancelled,
    /// [`Planner::plan_with_costs`] was asked for Anya with a profile whose
    /// passable costs differ: Anya finds shortest paths, not cheapest ones.
    /// Ask for Lazy Theta\* (Theta\* with costs) or A\* instead.
    #[error("{0} does not plan with terrain costs (use Lazy Theta* or A*)")]
    CostsNotSupported(Algorithm),
    /// The terrain map and the grid given to [`Planner::plan_with_costs`]
    /// differ in size.
    #[error("the terrain map is {terrain:?} cells, the grid {grid:?}")]
    TerrainSize {
        /// The terrain map's width and height.
        terrain: (u32, u32),
        /// The grid's width and height.
        grid: (u32, u32),
    },
    /// An agent with a clearance stands where it does not fit, and no point
    /// where it fits can be reached from there in a straight line (see
    /// [`crate::clearance::start_point`]).
    #[error("the agent does not fit where it stands and sees no place where it does")]
    NoRoom,
    /// The search ended without a path although the region labels say the
    /// goal is reachable. This is a bug in the crate; please report it.
    #[error("internal error: the search found no path to a reachable goal")]
    SearchFailed {
        /// Work done.
        stats: SearchStats,
    },
}

/// How a search core ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The waypoints are in the output vector, start first.
    Found,
    /// The open list ran dry.
    Exhausted,
    /// The node budget ran out.
    Budget,
    /// The cancel flag was raised.
    Cancelled,
    /// The slice of expansions asked for is done; the search can go on
    /// from its scratch memory.
    Paused,
}

/// What a search core gets besides its scratch memory.
pub(crate) struct SearchContext<'a> {
    pub grid: &'a Grid,
    pub start: &'a Endpoint,
    pub goal: &'a Endpoint,
    pub options: &'a PlanOptions,
    pub cancel: Option<&'a AtomicBool>,
    pub stats: SearchStats,
    /// Where to record what the search expands, if anywhere.
    pub trace: Option<&'a mut SearchTrace>,
    /// Stop (out of budget, or paused) once this many nodes are expanded.
    pub stop_at: u64,
}

impl<'a> SearchContext<'a> {
    /// A whole search (no cancel flag, no trace) on `grid` from `start` to
    /// `goal`, within `options`' node budget.
    pub(crate) fn whole(
        grid: &'a Grid,
        start: &'a Endpoint,
        goal: &'a Endpoint,
        options: &'a PlanOptions,
    ) -> Self {
        SearchContext {
            grid,
            start,
            goal,
            options,
            cancel: None,
            stats: SearchStats::default(),
            trace: None,
            stop_at: options.node_budget.unwrap_or(u64::MAX),
        }
    }

    /// Checked between expansions: whether to stop, and why. The node
    /// budget and the end of a slice are checked each time, the cancel flag
    /// every 1024 expansions.
    #[inline]
    pub(crate) fn should_stop(&self) -> Option<Outcome> {
        if self.stats.expanded >= self.stop_at {
            let spent = self
                .options
                .node_budget
                .is_some_and(|budget| self.stats.expanded >= budget);
            return Some(if spent {
                Outcome::Budget
            } else {
                Outcome::Paused
            });
        }
        if self.stats.expanded.is_multiple_of(1024)
            && let Some(flag) = self.cancel
            && flag.load(core::sync::atomic::Ordering::Relaxed)
        {
            return Some(Outcome::Cancelled);
        }
        None
    }
}

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
    vertex: vertex_graph::Scratch,
    anya: anya::Scratch,
    polyanya: polyanya::Scratch,
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
    polygon_marks: radius::PolygonMarks,
    /// Scratch memory for A\* and Lazy Theta\* on meshes for a radius.
    mesh_graph: mesh_graph::MeshGraph,
}

/// What a search paused between slices needs besides its scratch memory:
/// the query as [`Planner::plan_slice`] resolved it, and the work done.
struct Resolved {
    start: Endpoint,
    goal: Endpoint,
    kind: PathKind,
    start_moved_from: Option<DVec2>,
    stats: SearchStats,
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
        self.vertex.memory_bytes() + self.anya.memory_bytes() + self.polyanya.memory_bytes()
    }

    /// The navigation mesh this planner keeps for [`Algorithm::Polyanya`]
    /// on the last grid [`Planner::plan`] ran Polyanya on, as it was then
    /// (`None` before the first such query, and while a search run in steps,
    /// as [`PlanTask`] runs them, is still building it). It is not counted in
    /// [`Planner::memory_bytes`]; see [`NavMesh::memory_bytes`](crate::mesh::NavMesh::memory_bytes).
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
        if mesh.radius() > 0.0 {
            return self.plan_on_radius_mesh(mesh, start, goal, options);
        }
        let options = PlanOptions {
            algorithm: Algorithm::Polyanya,
            ..*options
        };
        let query = Query {
            grid: mesh.grid(),
            start,
            goal,
            options: &options,
            cancel: None,
            costs: None,
            mesh: Some(mesh),
        };
        match self.plan_slice(&query, None, false, None) {
            Step::Done(answer) => answer,
            Step::Paused => Err(PlanError::SearchFailed {
                stats: SearchStats::default(),
            }),
        }
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
    /// search carry its [`SearchStats`].
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
        if mesh.radius() > 0.0 {
            self.plan_many_on_radius_mesh(mesh, starts, goal, options, out);
            return;
        }
        let options = PlanOptions {
            algorithm: Algorithm::Polyanya,
            ..*options
        };
        // The starts resolved, by the point their paths end at (the goal,
        // or a fallback target shared by the starts of one region); the
        // others are answered one by one.
        let grid = mesh.grid();
        let mut shared: Vec<(usize, Resolved)> = Vec::new();
        let mut answers: Vec<Option<Result<Path, PlanError>>> = Vec::with_capacity(starts.len());
        // The ends, worked out once per region of the grid.
        let mut ends: crate::fast_hash::FastMap<
            crate::grid::RegionId,
            Option<(Endpoint, PathKind)>,
        > = crate::fast_hash::FastMap::default();
        for (i, &start) in starts.iter().enumerate() {
            let resolved = if start.is_finite() && goal.is_finite() {
                resolve_start(grid, start + DVec2::ZERO)
                    .ok()
                    .and_then(|(start, moved)| {
                        let (end, kind) = ends
                            .entry(start.region)
                            .or_insert_with(|| {
                                resolve_goal(grid, goal + DVec2::ZERO, start.region, &options).ok()
                            })
                            .clone()?;
                        (end.p != start.p).then_some(Resolved {
                            start,
                            goal: end,
                            kind,
                            start_moved_from: moved,
                            stats: SearchStats::default(),
                        })
                    })
            } else {
                None
            };
            match resolved {
                Some(r) => {
                    shared.push((i, r));
                    answers.push(None);
                }
                None => answers.push(Some(self.plan_on_mesh(mesh, start, goal, &options))),
            }
        }
        let end_key = |r: &Resolved| (r.goal.region, r.goal.p.x.to_bits(), r.goal.p.y.to_bits());
        shared.sort_by_key(|(_, r)| end_key(r));
        let mut targets = Vec::new();
        for group in shared.chunk_by(|(_, a), (_, b)| end_key(a) == end_key(b)) {
            let source = group[0].1.goal.clone();
            targets.clear();
            targets.extend(group.iter().map(|(_, r)| r.start.clone()));
            let mut ctx = SearchContext::whole(mesh.grid(), &source, &source, &options);
            let outcome = polyanya::search_many(&mut ctx, mesh, &mut self.polyanya, &targets);
            if !matches!(outcome, Outcome::Found | Outcome::Exhausted) {
                continue;
            }
            for (k, (i, r)) in group.iter().enumerate() {
                let mut waypoints = Vec::new();
                if self.polyanya.path_from_target(k, &mut waypoints) {
                    let length = polyline_length(&waypoints);
                    answers[*i] = Some(Ok(Path {
                        length,
                        cost: length,
                        waypoints,
                        kind: r.kind,
                        start_moved_from: r.start_moved_from,
                        stats: ctx.stats,
                    }));
                }
            }
        }
        // (Not reached by a shared search: out of its node budget.)
        out.extend(answers.into_iter().zip(starts).map(|(answer, &start)| {
            answer.unwrap_or_else(|| self.plan_on_mesh(mesh, start, goal, &options))
        }));
    }

    /// Plans a path from `start` to `goal` (grid coordinates) on `grid`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::NonFinite`] if a coordinate is NaN or infinite.
    /// - [`PlanError::NoFreeCell`] if the grid has no free cell.
    /// - [`PlanError::Unreachable`] if the goal is unreachable and the policy
    ///   is [`FallbackPolicy::Fail`].
    /// - [`PlanError::BudgetExhausted`] if the node budget runs out.
    pub fn plan(
        &mut self,
        grid: &Grid,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        self.plan_inner(grid, start, goal, options, None, None)
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
        self.plan_inner(grid, start, goal, options, Some(cancel), None)
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
        self.plan_inner(grid, start, goal, options, None, Some(trace))
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
        if (terrain.width(), terrain.height()) != (grid.width(), grid.height()) {
            return Err(PlanError::TerrainSize {
                terrain: (terrain.width(), terrain.height()),
                grid: (grid.width(), grid.height()),
            });
        }
        if profile.is_uniform() {
            return self.plan(grid, start, goal, options);
        }
        if matches!(options.algorithm, Algorithm::Anya | Algorithm::Polyanya) {
            return Err(PlanError::CostsNotSupported(options.algorithm));
        }
        let costs = costed::Costs { terrain, profile };
        self.plan_core(grid, start, goal, options, None, None, Some(costs))
    }

    /// The one planning routine: [`Planner::plan`] with an optional cancel
    /// flag and an optional trace.
    pub(crate) fn plan_inner(
        &mut self,
        grid: &Grid,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
        cancel: Option<&AtomicBool>,
        trace: Option<&mut SearchTrace>,
    ) -> Result<Path, PlanError> {
        self.plan_core(grid, start, goal, options, cancel, trace, None)
    }

    /// [`Planner::plan_inner`], with terrain costs when `costs` is given
    /// (a non-uniform profile; Theta\* or A\*).
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
                stats: SearchStats::default(),
            }),
        }
    }

    /// [`Planner::plan_core`] in slices: runs the search for at most
    /// `slice` more expansions (`None`: to the end) and returns
    /// [`Step::Paused`] if it has not ended by then. With `resume`, it goes
    /// on with the search this planner paused last, whose `query` must be
    /// the same (the query is only read again for its grid, options, cancel
    /// flag and costs); without one paused, it starts afresh. Without
    /// `resume`, it starts afresh and drops any paused search. The answer is
    /// the one [`Planner::plan_core`] gives, however the work is sliced.
    pub(crate) fn plan_slice(
        &mut self,
        query: &Query<'_>,
        mut trace: Option<&mut SearchTrace>,
        resume: bool,
        slice: Option<u64>,
    ) -> Step {
        let in_mesh = core::mem::take(&mut self.paused_in_mesh);
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
        let budget = options.node_budget.unwrap_or(u64::MAX);
        let stop_at = slice.map_or(budget, |n| {
            budget.min(resolved.stats.expanded.saturating_add(n.max(1)))
        });
        let mut ctx = SearchContext {
            grid: query.grid,
            start: &resolved.start,
            goal: &resolved.goal,
            options,
            cancel: query.cancel,
            stats: resolved.stats,
            trace,
            stop_at,
        };
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
            && endpoint::visible(&mut ctx, start_ep, goal_ep)
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
            Outcome::Paused => {
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

/// One query's inputs, as [`Planner::plan_slice`] reads them.
pub(crate) struct Query<'a> {
    pub grid: &'a Grid,
    pub start: DVec2,
    pub goal: DVec2,
    pub options: &'a PlanOptions,
    pub cancel: Option<&'a AtomicBool>,
    /// Terrain costs, for a non-uniform profile (Theta\* or A\*).
    pub costs: Option<costed::Costs<'a>>,
    /// The mesh Polyanya searches, when the caller keeps one (the
    /// planner's own otherwise); its grid is `grid`.
    pub mesh: Option<&'a crate::mesh::NavMesh>,
}

/// Checks a query's endpoints and resolves them: the start moved to the
/// nearest valid point if need be, an unreachable goal replaced by its
/// fallback target (or refused, as the policy says).
fn resolve(query: &Query<'_>) -> Result<Resolved, PlanError> {
    let Query {
        grid,
        start,
        goal,
        options,
        ..
    } = *query;
    if !start.is_finite() {
        return Err(PlanError::NonFinite(Role::Start));
    }
    if !goal.is_finite() {
        return Err(PlanError::NonFinite(Role::Goal));
    }
    // -0.0 is the number 0: make it +0.0 so that ordering by bits or
    // `total_cmp` treats it as such.
    let (start, goal) = (start + DVec2::ZERO, goal + DVec2::ZERO);
    let (start_ep, start_moved_from) = resolve_start(grid, start)?;
    let (goal_ep, kind) = resolve_goal(grid, goal, start_ep.region, options)?;
    Ok(Resolved {
        start: start_ep,
        goal: goal_ep,
        kind,
        start_moved_from,
        stats: SearchStats::default(),
    })
}

/// The start of a path from `start` (finite, not -0.0): the point itself
/// if valid, else the nearest valid point, with `start` as where it moved
/// from.
fn resolve_start(grid: &Grid, start: DVec2) -> Result<(Endpoint, Option<DVec2>), PlanError> {
    Ok(match Endpoint::resolve(grid, start) {
        Some(ep) => (ep, None),
        None => {
            let p =
                endpoint::nearest_valid_point(grid, start, None).ok_or(PlanError::NoFreeCell)?;
            let ep = Endpoint::resolve(grid, p).expect("nearest_valid_point returns valid points");
            (ep, Some(start))
        }
    })
}

/// The end of the paths from region `region` towards `goal` (a valid
/// `goal`): the goal itself if it is in that region, else its fallback
/// target there, or the error the policy asks for.
fn resolve_goal(
    grid: &Grid,
    goal: DVec2,
    region: crate::grid::RegionId,
    options: &PlanOptions,
) -> Result<(Endpoint, PathKind), PlanError> {
    match Endpoint::resolve(grid, goal) {
        Some(ep) if ep.region == region => Ok((ep, PathKind::Found)),
        _ => {
            let p = endpoint::nearest_valid_point(grid, goal, Some(region))
                .expect("the start's region has a free cell");
            if options.fallback == FallbackPolicy::Fail {
                return Err(PlanError::Unreachable { closest: p });
            }
            let ep = Endpoint::resolve(grid, p).expect("nearest_valid_point returns valid points");
            Ok((
                ep,
                PathKind::Fallback {
                    requested_goal: goal,
                },
            ))
        }
    }
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
