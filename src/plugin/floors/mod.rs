//! Floors and links: walkable areas as entities, links between them, and
//! agents that plan and walk across them.
//!
//! A game with one walkable grid inserts a [`NavGrid`] resource; a game
//! with several (the floors of a building, a bridge over a road, islands)
//! spawns each as an entity with a [`NavArea`], and joins them with
//! [`NavLink`] entities: stairs, ladders, lifts, doors, teleports,
//! jump-downs. An agent stands on an area ([`OnArea`]) and asks for a goal
//! with the same [`PathRequest`] as on one grid, on its own area or on
//! another ([`GoalArea`]); a goal entity to follow stands on its own
//! [`OnArea`]. The plugin plans the shortest route: any-angle legs on each
//! area (Polyanya on the area's mesh for the agent's radius) joined by
//! links, whose length is the legs' lengths plus the links' costs (see
//! [`atlas`](crate::atlas), which does the work, and the specification's
//! "Areas and links").
//!
//! ```
//! use bevy_anyangle::plugin::*;
//! use bevy_app::App;
//! use bevy_math::Vec2;
//!
//! let mut app = App::new();
//! app.add_plugins(AnyAnglePlugin::default());
//! let floor = |picture: &str, x: f32| {
//!     NavArea::new(
//!         NavGrid::from_ascii(picture, GridTransform::new(Vec2::new(x, 0.0), 1.0).unwrap())
//!             .unwrap(),
//!     )
//! };
//! let ground = app.world_mut().spawn(floor("......\n......", 0.0)).id();
//! let upstairs = app.world_mut().spawn(floor("......\n......", 10.0)).id();
//! // Stairs from the ground's east end to the upper floor's west end.
//! app.world_mut().spawn(NavLink::new(
//!     LinkEnd::new(ground, Vec2::new(5.5, 1.0)),
//!     LinkEnd::new(upstairs, Vec2::new(10.5, 1.0)),
//! ));
//! let agent = app
//!     .world_mut()
//!     .spawn((
//!         NavPosition(Vec2::new(0.5, 1.0)),
//!         OnArea(ground),
//!         PathRequest::to(Vec2::new(15.5, 1.0)),
//!         GoalArea(upstairs),
//!     ))
//!     .id();
//! app.finish();
//! app.cleanup();
//! for _ in 0..1000 {
//!     app.update();
//!     if *app.world().get::<PathStatus>(agent).unwrap() == PathStatus::Ready {
//!         break;
//!     }
//!     std::thread::sleep(std::time::Duration::from_millis(1));
//! }
//! let path = app.world().get::<NavPath>(agent).unwrap();
//! assert_eq!(path.crossings.len(), 1, "one link on the way");
//! assert_eq!(path.waypoints, [
//!     Vec2::new(0.5, 1.0),
//!     Vec2::new(5.5, 1.0),
//!     Vec2::new(10.5, 1.0),
//!     Vec2::new(15.5, 1.0),
//! ]);
//! assert!((path.length - 10.0).abs() < 1e-4, "two legs of 5, a link of cost 0");
//! ```
//!
//! # Paths across areas
//!
//! An agent's [`NavPath`] holds the whole route: its waypoints run through
//! every area it crosses, and [`NavPath::crossings`] says ahead of time
//! which links it takes and where ([`PathCrossing`]): waypoint `at` is the
//! link's near end, waypoint `at + 1` its far end. A game may animate or
//! reserve them from there.
//!
//! # Crossing a link
//!
//! A [`PathFollower`] walks each leg like a path on one grid. At a link:
//!
//! - [`LinkCrossing::Walked`] (stairs, ramps, doors): it walks straight to
//!   the far end; on the `Xz` plane its height moves smoothly from one
//!   area's [`NavArea::height`] to the other's. Its [`OnArea`] becomes the
//!   far end's area when it gets there.
//! - [`LinkCrossing::Handed`] (ladders, lifts, teleports, jumps): the
//!   plugin triggers [`LinkReached`] on the agent (and writes it as a
//!   message), marks the agent [`CrossingLink`], and the agent waits. The
//!   game plays the traversal and then triggers [`CrossLink`] on the agent:
//!   the plugin puts it at the far end, on the far area, and it walks on.
//!
//! A game that steers by itself reads the same [`NavPath`]; it moves
//! [`OnArea`] when its agent changes area.
//!
//! # Kept current
//!
//! - An edit of an area's grid (through [`NavArea::grid`]) brings its link
//!   distances up to date and replans exactly the agents whose remaining
//!   legs on that area the new walls meet (within their radius); agents
//!   with a fallback route replan on any edit that frees cells.
//! - A link disabled, removed, narrowed or denied to a profile replans
//!   exactly the agents whose remaining route crosses it (an agent waiting
//!   at it first of all); a link added or enabled replans every agent, as
//!   any route may get shorter through it.
//! - A route planned while areas or links changed is checked against the
//!   areas and links of the moment it arrives, and planned again if a leg
//!   no longer holds or a link it crosses no longer admits the agent.
//!
//! Routes run on the search threads like any search (or on the main thread
//! in slices, where there are none). Agents heading for one goal (one point
//! of one area, one radius class), at least 8 of them, share one job: the
//! legs from the goal's area's link ends to the goal are searched once for
//! all of them ([`Atlas::goal_legs`](crate::atlas::Atlas::goal_legs)), and
//! each gets a route as short as its own search would give
//! ([`PathfindingSettings::shared_searches`](crate::plugin::PathfindingSettings::shared_searches)
//! turns it off). An edit of an area costs the main thread only the marking
//! of the link-table entries it may change; the search threads search them
//! again before their next route (see
//! [`Atlas::edit_area`](crate::atlas::Atlas::edit_area)).
//!
//! # What holds across areas
//!
//! - All areas share one cell size: an agent's [`PathRequest::radius`] is
//!   converted to cells by its own area's. Each distinct radius builds a
//!   mesh and a link table for every area the first time it is asked for.
//! - Routes are Polyanya's, without terrain costs: [`PathRequest::algorithm`]
//!   is not read, and a profile counts only to choose links
//!   ([`NavLink::profiles`]).
//! - [`LocalAvoidance`](crate::plugin::LocalAvoidance) does not steer agents
//!   on areas (they walk their paths as plain followers).

mod follow;
mod plan;
mod sync;

use bevy_ecs::prelude::*;
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectComponent;
use bevy_math::Vec2;

pub(crate) use follow::{follow_routes, on_cross_link};
pub(crate) use plan::{
    RouteOutcomes, RouteQueue, RouteState, RouteUnseen, apply_routes, detect_routes,
    dispatch_routes,
};
pub(crate) use sync::{Areas, sync_areas};

use crate::plugin::api::{LinkCrossing, PathCrossing};
use crate::plugin::world::NavGrid;
#[cfg(doc)]
use crate::plugin::world::OnArea;
#[cfg(doc)]
use crate::plugin::{NavPath, PathFollower, PathRequest};

/// A walkable area: a grid placed in the world, as an entity.
///
/// Edit it through [`NavArea::grid`] (the same edits as the one-grid
/// [`NavGrid`] resource); the plugin follows the edits. With the `reflect`
/// feature its grid is reflected as an opaque value, as the resource's is.
#[derive(Component, Clone, Debug)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, Clone)
)]
pub struct NavArea {
    /// The area's grid and where it lies in the world.
    pub grid: NavGrid,
    /// Its height, for 3D games: followers on the `Xz` plane stand at this
    /// `translation.y`. On the `Xy` plane it is not read.
    pub height: f32,
}

impl NavArea {
    /// An area at height 0.
    #[must_use]
    pub fn new(grid: NavGrid) -> Self {
        NavArea { grid, height: 0.0 }
    }

    /// This area at height `height`.
    #[must_use]
    pub fn with_height(self, height: f32) -> Self {
        NavArea { height, ..self }
    }
}

/// The area of an agent's goal point, when it is not the area the agent
/// stands on. (A goal entity's area is its own [`OnArea`].)
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Clone)
)]
pub struct GoalArea(pub Entity);

/// One end of a [`NavLink`]: a point (world coordinates) on an area.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub struct LinkEnd {
    /// The area entity.
    pub area: Entity,
    /// The point, in world coordinates of the area's plane.
    pub point: Vec2,
}

impl LinkEnd {
    /// The point `point` on area `area`.
    #[must_use]
    pub fn new(area: Entity, point: Vec2) -> Self {
        LinkEnd { area, point }
    }
}

/// A link between two areas (or two points of one area), as an entity.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Clone)
)]
pub struct NavLink {
    /// Where it starts.
    pub from: LinkEnd,
    /// Where it ends.
    pub to: LinkEnd,
    /// What crossing it adds to a route's length (world units, at least 0).
    pub cost: f32,
    /// Whether it may be crossed from `to` to `from` too.
    pub both_ways: bool,
    /// The widest agent (radius, world units) it admits.
    pub max_radius: f32,
    /// The movement profiles it admits: bit `i` for
    /// [`ProfileId`](crate::plugin::ProfileId) `i` (profiles from 63 on
    /// share bit 63).
    pub profiles: u64,
    /// Whether it may be crossed at all (a door open or closed).
    pub enabled: bool,
    /// How it is crossed.
    pub crossing: LinkCrossing,
}

impl NavLink {
    /// A walked link both ways between `from` and `to`, of cost 0, for
    /// every agent, enabled.
    #[must_use]
    pub fn new(from: LinkEnd, to: LinkEnd) -> Self {
        NavLink {
            from,
            to,
            cost: 0.0,
            both_ways: true,
            max_radius: f32::INFINITY,
            profiles: u64::MAX,
            enabled: true,
            crossing: LinkCrossing::Walked,
        }
    }

    /// This link with cost `cost`.
    #[must_use]
    pub fn with_cost(self, cost: f32) -> Self {
        NavLink { cost, ..self }
    }

    /// This link, from `from` to `to` only.
    #[must_use]
    pub fn one_way(self) -> Self {
        NavLink {
            both_ways: false,
            ..self
        }
    }

    /// This link for agents of radius at most `max_radius`.
    #[must_use]
    pub fn with_max_radius(self, max_radius: f32) -> Self {
        NavLink { max_radius, ..self }
    }

    /// This link for the profiles of bit mask `profiles` only.
    #[must_use]
    pub fn with_profiles(self, profiles: u64) -> Self {
        NavLink { profiles, ..self }
    }

    /// This link, enabled or not.
    #[must_use]
    pub fn with_enabled(self, enabled: bool) -> Self {
        NavLink { enabled, ..self }
    }

    /// This link, handed to the game to cross (see
    /// [`LinkCrossing::Handed`]).
    #[must_use]
    pub fn handed(self) -> Self {
        NavLink {
            crossing: LinkCrossing::Handed,
            ..self
        }
    }
}

/// On an agent waiting for the game to carry it across a
/// [`LinkCrossing::Handed`] link (see [`LinkReached`]).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Clone)
)]
pub struct CrossingLink(pub PathCrossing);

/// A follower reached a [`LinkCrossing::Handed`] link and waits: triggered
/// on the agent (`On<LinkReached>`) and written as a message. The game
/// carries it across and then triggers [`CrossLink`].
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub struct LinkReached {
    /// The agent.
    pub entity: Entity,
    /// The link, where it is on the path, and the areas it joins.
    pub crossing: PathCrossing,
    /// Its far end (world coordinates), where the agent goes on.
    pub far_end: Vec2,
}

/// Triggered by the game on an agent waiting at a handed link
/// ([`CrossingLink`]): the agent is across. The plugin puts it at the link's
/// far end, on the far area, and it walks on. On an agent that waits at no
/// link it does nothing.
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub struct CrossLink {
    /// The agent.
    pub entity: Entity,
}
