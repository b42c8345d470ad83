//! The words every planning route shares: the query ([`PathQuery`]: where
//! to search, from where to where, how), which planner to run, the
//! options, the path a search returns, its statistics and its errors.

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::AtomicBool;

use bevy_math::DVec2;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use thiserror::Error;

use super::costed;
use crate::clearance::Clearance;
use crate::grid::Grid;
use crate::mesh::NavMesh;
use crate::terrain::{Profile, TerrainMap};

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
    /// its edits chunk by chunk; [`Planner::plan`](super::Planner::plan)
    /// keeps the meshes of its last few grids (see
    /// [`Planner::mesh`](super::Planner::mesh)),
    /// [`Planner::plan_on_mesh`](super::Planner::plan_on_mesh) takes one the
    /// caller keeps. On game maps and mazes it answers in
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
    /// ([`Planner::plan_with_costs`](super::Planner::plan_with_costs)) the
    /// sum of its segments' costs.
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
    /// [`Planner::plan_with_costs`](super::Planner::plan_with_costs) was
    /// asked for Anya with a profile whose passable costs differ: Anya finds
    /// shortest paths, not cheapest ones.
    /// Ask for Lazy Theta\* (Theta\* with costs) or A\* instead.
    #[error("{0} does not plan with terrain costs (use Lazy Theta* or A*)")]
    CostsNotSupported(Algorithm),
    /// The terrain map and the grid given to
    /// [`Planner::plan_with_costs`](super::Planner::plan_with_costs) differ in
    /// size.
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
    /// The mesh was made with
    /// [`NavMesh::on_demand`](crate::mesh::NavMesh::on_demand) and the
    /// query needs chunks of it not built yet: plan with
    /// [`Planner::plan_on_growing_mesh`](super::Planner::plan_on_growing_mesh),
    /// which builds them.
    #[error("the query needs chunks of the mesh that are not built yet")]
    MeshNotBuilt,
    /// The search ended without a path although the region labels say the
    /// goal is reachable. This is a bug in the crate; please report it.
    #[error("internal error: the search found no path to a reachable goal")]
    SearchFailed {
        /// Work done.
        stats: SearchStats,
    },
}

/// One query's inputs, as [`Planner::plan_slice`](super::Planner::plan_slice) reads them.
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

/// Where a [`PathQuery`] searches.
#[derive(Clone, Copy, Debug)]
pub enum SearchSpace<'a> {
    /// A grid, for a point agent ([`Planner::plan`](super::Planner::plan)'s
    /// route).
    Grid(&'a Grid),
    /// A grid eroded for an agent's clearance: `eroded` is `base` eroded
    /// for `clearance` ([`erode`](crate::clearance::erode), or an
    /// [`ErodedGrid`](crate::clearance::ErodedGrid)'s grid). A start where
    /// the agent does not fit is first moved to where it does
    /// ([`start_point`](crate::clearance::start_point)), and the path
    /// records the requested start in [`Path::start_moved_from`].
    Eroded {
        /// The grid the agent walks on.
        base: &'a Grid,
        /// `base` eroded for `clearance`.
        eroded: &'a Grid,
        /// The agent's clearance.
        clearance: Clearance,
    },
    /// A navigation mesh: a point agent's mesh is searched by Polyanya
    /// whatever the planner asked for; a mesh for a radius
    /// ([`NavMesh::with_radius`]) by the planner asked for (Anya and
    /// Polyanya: Polyanya; Lazy Theta\* and A\*: over the polygons' corners).
    Mesh(&'a NavMesh),
}

/// Terrain costs for a [`PathQuery`] on a grid or an eroded grid: each
/// cell's terrain, and what `profile` makes each terrain cost (see
/// [`Planner::plan_with_costs`](super::Planner::plan_with_costs) for which
/// planners take them). The grid searched must be `terrain.grid(profile)`,
/// eroded for an agent's clearance if it has one.
#[derive(Clone, Copy, Debug)]
pub struct TerrainCosts<'a> {
    /// The terrain of every cell.
    pub terrain: &'a TerrainMap,
    /// The cost of each terrain.
    pub profile: &'a Profile,
}

impl<'a> From<&'a Grid> for SearchSpace<'a> {
    fn from(grid: &'a Grid) -> Self {
        SearchSpace::Grid(grid)
    }
}

impl<'a> From<&'a NavMesh> for SearchSpace<'a> {
    fn from(mesh: &'a NavMesh) -> Self {
        SearchSpace::Mesh(mesh)
    }
}

/// One path query, the input of every planner: where to search, from where
/// to where (grid coordinates), with which options, an optional cancel flag
/// and optional terrain costs. [`Planner::find`](super::Planner::find) answers it whole,
/// [`Planner::step`](super::Planner::step) a slice at a time; the answer is
/// the same.
///
/// ```
/// use bevy_anyangle::prelude::*;
///
/// let grid = Grid::from_ascii("....\n.##.\n....").unwrap();
/// let query = PathQuery::new(&grid, DVec2::new(0.5, 1.5), DVec2::new(3.5, 1.5))
///     .with_algorithm(Algorithm::LazyTheta);
/// let path = Planner::new().find(&query).unwrap();
/// assert_eq!(path.end(), DVec2::new(3.5, 1.5));
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct PathQuery<'a> {
    /// Where to search.
    pub space: SearchSpace<'a>,
    /// Where the path starts (grid coordinates).
    pub start: DVec2,
    /// Where it should end.
    pub goal: DVec2,
    /// The planner, fallback policy, heuristic weight and node budget.
    pub options: PlanOptions,
    /// Raised, the search gives up with [`PlanError::Cancelled`] soon
    /// after (checked every 1024 expansions).
    pub cancel: Option<&'a AtomicBool>,
    /// Terrain costs, for a profile whose costs differ; `None`: a path's
    /// cost is its length.
    pub costs: Option<TerrainCosts<'a>>,
}

impl<'a> PathQuery<'a> {
    /// A query from `start` to `goal` in `space` (a `&Grid`, a `&NavMesh`,
    /// or any [`SearchSpace`]) with the default options and no cancel flag.
    #[must_use]
    pub fn new(space: impl Into<SearchSpace<'a>>, start: DVec2, goal: DVec2) -> Self {
        PathQuery {
            space: space.into(),
            start,
            goal,
            options: PlanOptions::default(),
            cancel: None,
            costs: None,
        }
    }

    /// The query with `options`.
    #[must_use]
    pub fn with_options(self, options: PlanOptions) -> Self {
        PathQuery { options, ..self }
    }

    /// The query with `algorithm` (the other options kept).
    #[must_use]
    pub fn with_algorithm(mut self, algorithm: Algorithm) -> Self {
        self.options.algorithm = algorithm;
        self
    }

    /// The query under `profile`'s costs over `terrain`.
    #[must_use]
    pub fn with_costs(self, terrain: &'a TerrainMap, profile: &'a Profile) -> Self {
        PathQuery {
            costs: Some(TerrainCosts { terrain, profile }),
            ..self
        }
    }

    /// The query with a cancel flag.
    #[must_use]
    pub fn with_cancel(self, cancel: &'a AtomicBool) -> Self {
        PathQuery {
            cancel: Some(cancel),
            ..self
        }
    }
}
