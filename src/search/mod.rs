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
mod best_first;
mod context;
mod costed;
mod heap;
mod lazy_theta;
pub(crate) mod legs;
mod many;
mod mesh_graph;
mod paged;
mod planner;
mod polyanya;
mod query;
mod radius;
mod resolve;
mod route;
#[cfg(test)]
mod slice_tests;
mod task;
mod trace;
mod vertex_graph;

pub(crate) use crate::endpoint;
pub(crate) use crate::endpoint::Endpoint;
pub(crate) use context::{Outcome, SearchContext};
pub(crate) use costed::Costs;
pub(crate) use planner::Step;
pub use planner::{Planner, plan};
pub(crate) use query::Query;
pub use query::{
    Algorithm, DEFAULT_NODE_BUDGET, FallbackPolicy, Path, PathKind, PathQuery, PlanError,
    PlanOptions, Role, SearchSpace, SearchStats, TerrainCosts, UnknownAlgorithm,
};
pub use task::PlanTask;
pub use trace::{ExpandedPoint, SearchTrace, TraceInterval};
