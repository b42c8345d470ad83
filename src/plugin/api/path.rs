//! What an agent gets back: its [`NavPath`], its [`PathStatus`], why it has
//! no path ([`PathFailure`]) and why it was planned ([`PlanReason`]).

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectComponent;
use bevy_math::{DVec2, Vec2};
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use thiserror::Error;

#[cfg(doc)]
use super::PathRequest;
use super::crossing::PathCrossing;
#[cfg(doc)]
use crate::plugin::world::NavPosition;
use crate::search::Algorithm;

/// Where an agent's path stands. A required component of [`PathRequest`].
///
/// The status says whether [`NavPath`] can be followed
/// ([`PathStatus::has_path`]); whether a better plan is on its way is told
/// apart by the [`Replanning`] marker. So an agent keeps `Ready` (or
/// `Fallback`) while it replans after an edit, a settings change or a moved
/// target, and follows its old path meanwhile; `Pending` and `Computing`
/// mean it has nothing to follow yet.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Default, Clone)
)]
pub enum PathStatus {
    /// No followable path yet; waiting to be sent to a search thread, or
    /// for a [`NavGrid`](crate::plugin::NavGrid) to exist.
    #[default]
    Pending,
    /// No followable path yet; its search has been sent to a search thread.
    Computing,
    /// [`NavPath`] leads to the goal. With [`Replanning`], a new plan is on
    /// its way; the path stays followable meanwhile (an edit that blocks it
    /// cuts it short before the blocked segment).
    Ready,
    /// The goal is unreachable; [`NavPath`] leads to the reachable point
    /// closest to it (`SPEC.md`). The agent replans when an edit connects
    /// it to the goal.
    Fallback,
    /// The goal is unreachable and
    /// [`PathfindingSettings::fallback`](crate::plugin::PathfindingSettings::fallback)
    /// is [`FallbackPolicy::Fail`](crate::search::FallbackPolicy::Fail);
    /// [`NavPath`] is empty. The agent replans when an edit connects it to
    /// the goal (an agent in a wall or off the grid: when an edit connects
    /// the region its start was moved to).
    Unreachable,
    /// No path, for the given reason; [`NavPath`] is empty.
    Failed(PathFailure),
}

impl PathStatus {
    /// Whether [`NavPath`] holds a path that can be followed: `Ready` or
    /// `Fallback` (possibly being improved, see [`Replanning`]).
    #[must_use]
    pub fn has_path(&self) -> bool {
        matches!(self, PathStatus::Ready | PathStatus::Fallback)
    }

    /// Whether the agent waits for its first followable path: `Pending` or
    /// `Computing`. (An agent that replans while it follows a path is
    /// marked [`Replanning`] instead.)
    #[must_use]
    pub fn is_busy(&self) -> bool {
        matches!(self, PathStatus::Pending | PathStatus::Computing)
    }
}

/// Marker: a new plan is queued or running for an agent that still follows
/// its current path (status `Ready` or `Fallback`). Added and removed by the
/// plugin.
///
/// ```
/// use bevy_anyangle::plugin::{PathStatus, Replanning};
/// use bevy_ecs::prelude::*;
///
/// // Agents that have a path and are not about to get another one.
/// fn settled(agents: Query<&PathStatus, Without<Replanning>>) -> usize {
///     agents.iter().filter(|s| s.has_path()).count()
/// }
/// # bevy_ecs::system::assert_is_system(|q: Query<&PathStatus, Without<Replanning>>| { settled(q); });
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Default, Clone)
)]
pub struct Replanning;

/// Why an agent has no path.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub enum PathFailure {
    /// The goal point has a NaN or infinite coordinate.
    #[error("the goal is not a finite point")]
    NonFiniteGoal,
    /// The agent's position has a NaN or infinite coordinate.
    #[error("the agent's position is not a finite point")]
    NonFiniteStart,
    /// The agent has neither a `Transform` nor a [`NavPosition`].
    #[error("the agent has no position (neither Transform nor NavPosition)")]
    NoPosition,
    /// The goal entity is gone or has no position.
    #[error("the goal entity {0} is gone or has no position")]
    TargetLost(Entity),
    /// The grid has no free cell at all (for an agent with a radius: its
    /// mesh or eroded grid has none, nowhere is wide enough for it).
    #[error("the grid has no free cell (wide enough for the agent)")]
    NoFreeCell,
    /// The agent has a [`PathRequest::radius`], stands where it does not fit
    /// (too close to a wall), and no place where it fits is in sight within
    /// [`MAX_EXIT_DISTANCE`](crate::clearance::MAX_EXIT_DISTANCE) cells (see
    /// [`start_point`](crate::clearance::start_point), and
    /// [`Planner::plan_on_mesh`](crate::search::Planner::plan_on_mesh) for
    /// agents on meshes). It is planned again when cells are edited near it,
    /// and when it is moved (by the game) to where it fits (on an eroded
    /// grid, or sees such a place) ([`PlanReason::Moved`]). (Judged
    /// where its search started: an agent that has moved meanwhile to where
    /// it sees such a place is planned again from there instead.)
    #[error("the agent does not fit where it stands and sees no place where it does")]
    NoRoom,
    /// The request's [`PathRequest::profile`] is not registered with the
    /// [`NavGrid`](crate::plugin::NavGrid).
    #[error("the request's movement profile is not registered with the grid")]
    UnknownProfile,
    /// The request names Anya or Polyanya for a profile whose costs differ:
    /// they find shortest paths, not cheapest ones.
    #[error(
        "Anya and Polyanya do not plan with terrain costs (name Lazy Theta* or A*, or no planner)"
    )]
    CostsNotSupported,
    /// The request's [`PathRequest::radius`] is negative, not finite, or
    /// above [`MAX_RADIUS`](crate::clearance::MAX_RADIUS) cells.
    #[error("the agent's radius is negative, not finite, or too large for the grid")]
    BadRadius,
    /// The search expanded
    /// [`PathfindingSettings::node_budget`](crate::plugin::PathfindingSettings::node_budget)
    /// nodes without finishing.
    #[error("the search gave up after expanding {expanded} nodes (node budget)")]
    BudgetExhausted {
        /// Nodes expanded before giving up.
        expanded: u64,
    },
    /// The [`PathRequest`] was removed while its search was queued or
    /// running; the search was cancelled.
    #[error("the path request was removed before its search finished")]
    RequestRemoved,
    /// The planner found no path to a goal its region labels call reachable:
    /// a bug in the crate.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Why the plugin (re)planned an agent's path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PlanReason {
    /// A [`PathRequest`] was added, replaced by a different one, or changed.
    #[default]
    NewRequest,
    /// The agent was farther off its path than
    /// [`PathfindingSettings::replan_distance`](crate::plugin::PathfindingSettings::replan_distance),
    /// or a [`PathFollower`](crate::plugin::PathFollower) was moved (by the
    /// game, or by a crowd) to where it cannot see the waypoint it heads
    /// for.
    OffPath,
    /// The followed entity moved away from the path's end.
    TargetMoved,
    /// The agent's planner changed ([`PathRequest::algorithm`], or
    /// [`PathfindingSettings::algorithm`](crate::plugin::PathfindingSettings::algorithm)
    /// for agents that use it) while it had a path ahead or a search
    /// running.
    AlgorithmChanged,
    /// [`PathfindingSettings::fallback`](crate::plugin::PathfindingSettings::fallback)
    /// changed and the agent's goal is unreachable.
    FallbackChanged,
    /// [`PathfindingSettings::node_budget`](crate::plugin::PathfindingSettings::node_budget)
    /// was raised or removed and the agent's last search ran out of it.
    BudgetChanged,
    /// An edit blocked a cell the remaining path crosses.
    PathBlocked,
    /// An edit blocked the cell the agent stands in: the new path starts
    /// with the shortest way out.
    StartBlocked,
    /// An edit freed cells that could shorten the remaining path.
    Shortcut,
    /// An edit connected the agent's region to its unreachable goal, or freed
    /// a reachable cell closer to it than the fallback point.
    RegionsConnected,
    /// A new [`NavGrid`](crate::plugin::NavGrid) was inserted or its transform
    /// changed. Paths planned before may cross the new grid's walls: each
    /// agent's path is cut to where it stands (or, if it now stands in a
    /// wall, becomes the way out of it) until its new path comes.
    GridReplaced,
    /// A link changed: one the path crosses was disabled, narrowed, removed
    /// or made costlier, or one was added, opened or made cheaper and may
    /// give a shorter route (see [`floors`](crate::plugin::floors)).
    LinkChanged,
    /// The agent had no room where its last search started
    /// ([`PathFailure::NoRoom`]) and was moved to where it fits, or sees a
    /// place that does (an agent planned on the mesh for its radius: moved
    /// at all, and its search from there tells).
    Moved,
}

/// An agent's path, in world coordinates. A required component of
/// [`PathRequest`]; empty until the first search finishes.
#[derive(Component, Clone, Debug, Default, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NavPath {
    /// Waypoints in world coordinates, to the goal or fallback point.
    ///
    /// The path is joined to where the agent is when it arrives, only by
    /// segments the agent can see: the first waypoint is the agent's
    /// position if it sees a later waypoint of the planned path (the ones
    /// before that are dropped); otherwise it is where the search started
    /// (or the nearest walkable point to it, see [`NavPath::start_moved`])
    /// and [`NavPath::next`] is 0: a follower walks back to it first.
    pub waypoints: Vec<Vec2>,
    /// The same waypoints in grid coordinates (y-down, cells), exactly as the
    /// planner returned them.
    pub grid_waypoints: Vec<DVec2>,
    /// Total length in world units.
    pub length: f32,
    /// Index of the waypoint the agent heads for: 1 on a new path, 0 when
    /// the agent must first walk to the path's start (see
    /// [`NavPath::waypoints`]); `waypoints.len()` once it has arrived. The plugin advances it as the agent moves (without
    /// triggering `Changed<NavPath>`); games that steer themselves may too.
    pub next: usize,
    /// [`NavGrid::version`](crate::plugin::NavGrid::version) of the grid the path
    /// was checked against when it was applied: every segment is visible on
    /// that version of the grid.
    pub grid_version: u64,
    /// The planner that produced the path; `None` while there is no path.
    pub algorithm: Option<Algorithm>,
    /// The goal asked for, in world coordinates. For a fallback path it
    /// differs from the last waypoint.
    pub goal: Vec2,
    /// Whether the goal was unreachable and the path ends at the closest
    /// reachable point instead.
    pub fallback: bool,
    /// Whether the agent stood in a wall or off the grid: the path then
    /// starts at the nearest walkable point and [`NavPath::next`] starts at
    /// 0, so a follower walks there first.
    pub start_moved: bool,
    /// Whether the path was cut short before a segment an edit blocked (it
    /// ends at the last waypoint the agent can still reach), or to where a
    /// [`PathFollower`](crate::plugin::PathFollower) moved off its path
    /// stands because it cannot see the waypoint it headed for: it does not
    /// end at the goal, and a new plan is on its way. A [`PathFollower`](crate::plugin::PathFollower)
    /// walks all the way to such an end (its arrive radius applies to real
    /// ends only).
    pub cut: bool,
    /// The links the path crosses, in order (empty on one grid; see
    /// [`floors`](crate::plugin::floors)).
    pub crossings: Vec<PathCrossing>,
    /// The area entity the path starts on (`None` on one grid).
    pub start_area: Option<Entity>,
}

impl NavPath {
    /// Whether there is no path.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.waypoints.is_empty()
    }

    /// The waypoint the agent heads for, or `None` when arrived or empty.
    #[must_use]
    pub fn next_waypoint(&self) -> Option<Vec2> {
        self.waypoints.get(self.next).copied()
    }

    /// The waypoints still ahead, starting with [`NavPath::next_waypoint`].
    #[must_use]
    pub fn remaining(&self) -> &[Vec2] {
        self.waypoints.get(self.next..).unwrap_or(&[])
    }

    /// The last waypoint (the goal, or the fallback point).
    #[must_use]
    pub fn end(&self) -> Option<Vec2> {
        self.waypoints.last().copied()
    }

    /// The area entity waypoint `k` lies on, for a path across areas (a
    /// link's near end: the area the path leaves there); `None` on one grid.
    #[must_use]
    pub fn area_of(&self, k: usize) -> Option<Entity> {
        let mut area = self.start_area;
        for c in &self.crossings {
            if c.at >= k {
                break;
            }
            area = Some(c.to_area);
        }
        area
    }

    /// Whether the agent has reached the last waypoint.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.next >= self.waypoints.len()
    }

    /// Length of the rest of the path for an agent at `from`: to the next
    /// waypoint, then along the remaining ones.
    #[must_use]
    pub fn remaining_length(&self, from: Vec2) -> f32 {
        let rest = self.remaining();
        let Some(first) = rest.first() else {
            return 0.0;
        };
        from.distance(*first) + polyline_length(rest)
    }
}

/// The length of the polyline through `points` (world units; 0 for fewer
/// than two).
pub(crate) fn polyline_length(points: &[Vec2]) -> f32 {
    points
        .windows(2)
        .fold(0.0, |sum, w| sum + w[0].distance(w[1]))
}
