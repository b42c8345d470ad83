//! What an agent asks for: [`PathRequest`] and its [`PathGoal`].

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectComponent;
use bevy_math::Vec2;

#[cfg(doc)]
use super::path::PathFailure;
use super::path::{NavPath, PathStatus};
#[cfg(doc)]
use crate::plugin::world::NavPosition;
use crate::plugin::world::ProfileId;
use crate::search::Algorithm;

/// Where an agent wants to go.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub enum PathGoal {
    /// A fixed world point.
    Point(Vec2),
    /// Another entity's position (its `Transform` when it has one and the
    /// `transform` feature is on, else its [`NavPosition`]). The agent
    /// replans when the entity moves farther than
    /// [`PathfindingSettings::replan_distance`](crate::plugin::PathfindingSettings::replan_distance)
    /// from the end of the path.
    Entity(Entity),
}

/// Asks the plugin for a path: put it on an agent.
///
/// The agent's own position comes from its `Transform` (feature `transform`,
/// on by default), projected on the grid's
/// [`WorldPlane`](crate::plugin::WorldPlane): `(x, y)` by default, `(x, z)` on the XZ
/// plane. A child entity (`ChildOf`) is where its global transform puts it.
/// An agent without a `Transform` uses its [`NavPosition`]; with both, the
/// `Transform` wins. An agent with neither ends in
/// [`PathFailure::NoPosition`].
///
/// Changing the goal cancels the search in flight, clears the [`NavPath`]
/// and plans again. Changing only the algorithm behaves like changing
/// [`PathfindingSettings::algorithm`](crate::plugin::PathfindingSettings::algorithm):
/// an agent with a path ahead keeps following it while the new planner's
/// path is planned, and an agent that has arrived is left alone. Writing an
/// equal value does nothing. So a game that rewrites the goal every frame (a chaser
/// copying its prey's position into [`PathGoal::Point`]) cancels its search
/// every frame and may never get a path: give it
/// [`PathRequest::follow`] (a [`PathGoal::Entity`]) instead, which keeps the
/// path and replans only when the target moves away from its end.
///
/// An agent wider than a point gives its [`PathRequest::radius`], and
/// every point of its path keeps at least that distance from every wall:
///
/// - by default ([`PathfindingSettings::radius_meshes`](crate::plugin::PathfindingSettings::radius_meshes)),
///   it plans on the navigation mesh of the points where its disc fits
///   ([`NavMesh::with_radius`](crate::mesh::NavMesh::with_radius)): it goes
///   wherever a disc of its radius plus at most 0.09 cell fits (a disc 0.6
///   cells wide through a door 1 cell wide). Anya and Polyanya give the
///   shortest paths there; Lazy Theta\* and A\* plan over the corners of
///   the mesh's polygons. Radii are classed by rounding up to a multiple of
///   1/64 cell: agents of one class and profile share a mesh, which each
///   search thread builds on first use and keeps in step with the grid's
///   edits;
/// - with meshes turned off, or for a profile whose costs differ, it plans
///   on the grid eroded for that radius (see [`crate::clearance`]), which
///   closes corridors under 3 cells wide.
///
/// Changing the radius or the profile plans again as a new goal does.
///
/// Removing it cancels the search; a finished plan (path and
/// status) stays in place, while an agent still waiting for one ends with
/// status [`PathFailure::RequestRemoved`] and an empty path (no event).
///
/// ```
/// use bevy_anyangle::plugin::{NavPosition, PathRequest};
/// use bevy_anyangle::prelude::*;
/// use bevy_ecs::prelude::*;
/// use bevy_math::Vec2;
///
/// let mut world = World::new();
/// let agent = world
///     .spawn((NavPosition(Vec2::new(1.5, 1.5)), PathRequest::to(Vec2::new(9.5, 3.5))))
///     .id();
/// let chaser = world
///     .spawn((NavPosition(Vec2::ZERO), PathRequest::follow(agent).with_algorithm(Algorithm::Anya)))
///     .id();
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[require(PathStatus, NavPath)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Clone)
)]
pub struct PathRequest {
    /// The goal.
    pub goal: PathGoal,
    /// This agent's planner; `None` uses
    /// [`PathfindingSettings::algorithm`](crate::plugin::PathfindingSettings::algorithm).
    pub algorithm: Option<Algorithm>,
    /// The agent's radius in world units; 0 (the default) is a point. Its
    /// path keeps at least this distance from every blocked cell and from
    /// the grid's edge (see [`PathRequest`] for what fits where). A
    /// radius that is negative, not finite, or above
    /// [`MAX_RADIUS`](crate::clearance::MAX_RADIUS) cells fails the request
    /// with [`PathFailure::BadRadius`].
    pub radius: f32,
    /// How the agent moves over terrain: a profile registered with
    /// [`NavGrid::add_profile`](crate::plugin::NavGrid::add_profile), by default
    /// [`ProfileId::DEFAULT`] (ground and swamp passable). A profile whose
    /// costs differ is planned with Lazy Theta\* (Theta\* with costs) when
    /// no planner is named here, and fails with
    /// [`PathFailure::CostsNotSupported`] when Anya or Polyanya is named.
    pub profile: ProfileId,
}

impl PathRequest {
    /// A request for a path to the world point `goal`.
    #[must_use]
    pub fn to(goal: Vec2) -> Self {
        PathRequest {
            goal: PathGoal::Point(goal),
            algorithm: None,
            radius: 0.0,
            profile: ProfileId::DEFAULT,
        }
    }

    /// A request for a path to `target`'s position, kept up to date as it
    /// moves.
    #[must_use]
    pub fn follow(target: Entity) -> Self {
        PathRequest {
            goal: PathGoal::Entity(target),
            algorithm: None,
            radius: 0.0,
            profile: ProfileId::DEFAULT,
        }
    }

    /// This request with its own planner.
    #[must_use]
    pub fn with_algorithm(self, algorithm: Algorithm) -> Self {
        PathRequest {
            algorithm: Some(algorithm),
            ..self
        }
    }

    /// This request for an agent of radius `radius` (world units, see
    /// [`PathRequest::radius`]).
    #[must_use]
    pub fn with_radius(self, radius: f32) -> Self {
        PathRequest { radius, ..self }
    }

    /// This request for an agent moving by `profile` (see
    /// [`PathRequest::profile`]).
    #[must_use]
    pub fn with_profile(self, profile: ProfileId) -> Self {
        PathRequest { profile, ..self }
    }
}
