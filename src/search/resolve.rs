//! The start, goal and fallback rules every grid query follows: the start
//! moved to the nearest valid point if need be, an unreachable goal
//! replaced by its fallback target (or refused, as the policy says).

use bevy_math::DVec2;

use super::{FallbackPolicy, PathKind, PlanError, PlanOptions, Query, Role, SearchStats};
use crate::endpoint::{Endpoint, nearest_valid_point};
use crate::grid::Grid;

/// What a search paused between slices needs besides its scratch memory:
/// the query as [`Planner::plan_slice`](super::Planner::plan_slice) resolved it, and the work done.
pub(super) struct Resolved {
    pub(super) start: Endpoint,
    pub(super) goal: Endpoint,
    pub(super) kind: PathKind,
    pub(super) start_moved_from: Option<DVec2>,
    pub(super) stats: SearchStats,
}

/// Checks a query's endpoints and resolves them: the start moved to the
/// nearest valid point if need be, an unreachable goal replaced by its
/// fallback target (or refused, as the policy says).
pub(super) fn resolve(query: &Query<'_>) -> Result<Resolved, PlanError> {
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
pub(super) fn resolve_start(
    grid: &Grid,
    start: DVec2,
) -> Result<(Endpoint, Option<DVec2>), PlanError> {
    Ok(match Endpoint::resolve(grid, start) {
        Some(ep) => (ep, None),
        None => {
            let p = nearest_valid_point(grid, start, None).ok_or(PlanError::NoFreeCell)?;
            let ep = Endpoint::resolve(grid, p).expect("nearest_valid_point returns valid points");
            (ep, Some(start))
        }
    })
}

/// The end of the paths from region `region` towards `goal` (a valid
/// `goal`): the goal itself if it is in that region, else its fallback
/// target there, or the error the policy asks for.
pub(super) fn resolve_goal(
    grid: &Grid,
    goal: DVec2,
    region: crate::grid::RegionId,
    options: &PlanOptions,
) -> Result<(Endpoint, PathKind), PlanError> {
    match Endpoint::resolve(grid, goal) {
        Some(ep) if ep.region == region => Ok((ep, PathKind::Found)),
        _ => {
            let p = nearest_valid_point(grid, goal, Some(region))
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
