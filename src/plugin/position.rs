//! Where an agent is: its `Transform` (feature `transform`) or its
//! [`NavPosition`].
//!
//! Every plugin system reads positions through [`PositionData`] and
//! [`position`], so the rule "`Transform` when present, otherwise
//! `NavPosition`" is written down once.

use bevy_ecs::prelude::{Changed, Or};
use bevy_math::Vec2;
#[cfg(feature = "transform")]
use bevy_transform::components::Transform;

use super::components::NavPosition;

/// Query data giving an entity's position.
#[cfg(feature = "transform")]
pub(crate) type PositionData = (Option<&'static Transform>, Option<&'static NavPosition>);
/// Query data giving an entity's position.
#[cfg(not(feature = "transform"))]
pub(crate) type PositionData = Option<&'static NavPosition>;

/// Query filter: the position may have changed since the system last ran.
#[cfg(feature = "transform")]
pub(crate) type PositionChanged = Or<(Changed<Transform>, Changed<NavPosition>)>;
/// Query filter: the position may have changed since the system last ran.
#[cfg(not(feature = "transform"))]
pub(crate) type PositionChanged = Or<(Changed<NavPosition>,)>;

/// The world position from a [`PositionData`] item.
#[cfg(feature = "transform")]
pub(crate) fn position(item: (Option<&Transform>, Option<&NavPosition>)) -> Option<Vec2> {
    match item {
        (Some(t), _) => Some(t.translation.truncate()),
        (None, Some(p)) => Some(p.0),
        (None, None) => None,
    }
}

/// The world position from a [`PositionData`] item.
#[cfg(not(feature = "transform"))]
pub(crate) fn position(item: Option<&NavPosition>) -> Option<Vec2> {
    item.map(|p| p.0)
}
