//! How a path crosses a link between areas: [`PathCrossing`] and
//! [`LinkCrossing`] (see [`floors`](crate::plugin::floors)).

use bevy_ecs::entity::Entity;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;

/// How an agent crosses a link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone, Default)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum LinkCrossing {
    /// The follower walks it (stairs, ramps, doors).
    #[default]
    Walked,
    /// The game carries the agent across (ladders, lifts, teleports,
    /// jumps): see [`LinkReached`](crate::plugin::LinkReached) and [`CrossLink`](crate::plugin::CrossLink).
    Handed,
}

/// A link a [`NavPath`](crate::plugin::NavPath) crosses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PathCrossing {
    /// The link entity.
    pub link: Entity,
    /// The index of the link's near end among the path's waypoints; its far
    /// end is the next waypoint.
    pub at: usize,
    /// The area the path leaves.
    pub from_area: Entity,
    /// The area the path enters.
    pub to_area: Entity,
    /// How it is crossed.
    pub crossing: LinkCrossing,
    /// What it adds to the path's length.
    pub cost: f32,
}
