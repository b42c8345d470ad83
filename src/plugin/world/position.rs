//! Where an agent is: its `Transform` or `GlobalTransform` (feature
//! `transform`), or its [`NavPosition`], in the grid's world plane.
//!
//! Every plugin system reads positions through [`PositionData`] and
//! [`position`], so the rule is written down once:
//!
//! 1. an agent with a parent (`ChildOf`) is where its `GlobalTransform`
//!    says (as of the last transform propagation);
//! 2. otherwise, an agent with a `Transform` is at its translation;
//! 3. otherwise, at its `NavPosition`.
//!
//! A 3D translation becomes a 2D position through the [`WorldPlane`] of the
//! [`NavGrid`]'s placement.

use bevy_ecs::prelude::{Changed, Component, Entity, Or, Query};
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectComponent;
use bevy_ecs::system::SystemParam;
#[cfg(feature = "transform")]
use bevy_ecs::{hierarchy::ChildOf, query::Has};
use bevy_math::Vec2;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
#[cfg(feature = "transform")]
use bevy_transform::components::{GlobalTransform, Transform};
#[cfg(feature = "transform")]
use bevy_transform::helper::TransformHelper;

use super::nav_grid::{NavGrid, WorldPlane};

/// An agent's position in world coordinates, for games that do not use
/// `Transform` (or build without the `transform` feature). When an entity
/// has both, its `Transform` wins.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Default, Clone)
)]
pub struct NavPosition(pub Vec2);

/// The area an agent stands on (or a followed target stands on). An agent
/// with an `OnArea` plans across areas and links (see [`floors`](crate::plugin::floors)); one without plans on the
/// [`NavGrid`](crate::plugin::NavGrid) resource.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Clone)
)]
pub struct OnArea(pub Entity);

/// Query data giving an entity's position.
#[cfg(feature = "transform")]
pub(crate) type PositionData = (
    Option<&'static Transform>,
    Option<&'static GlobalTransform>,
    Has<ChildOf>,
    Option<&'static NavPosition>,
);
/// Query data giving an entity's position.
#[cfg(not(feature = "transform"))]
pub(crate) type PositionData = Option<&'static NavPosition>;

/// Query filter: the position may have changed since the system last ran.
#[cfg(feature = "transform")]
pub(crate) type PositionChanged = Or<(
    Changed<Transform>,
    Changed<GlobalTransform>,
    Changed<NavPosition>,
)>;
/// Query filter: the position may have changed since the system last ran.
#[cfg(not(feature = "transform"))]
pub(crate) type PositionChanged = Or<(Changed<NavPosition>,)>;

/// The world plane of the grid, [`WorldPlane::Xy`] without one.
pub(crate) fn plane_of(nav: Option<&NavGrid>) -> WorldPlane {
    nav.map_or(WorldPlane::Xy, |n| n.transform().plane())
}

/// The world position from a [`PositionData`] item.
#[cfg(feature = "transform")]
pub(crate) fn position(
    item: (
        Option<&Transform>,
        Option<&GlobalTransform>,
        bool,
        Option<&NavPosition>,
    ),
    plane: WorldPlane,
) -> Option<Vec2> {
    match item {
        (Some(_), Some(g), true, _) => Some(plane.project(g.translation())),
        (Some(t), ..) => Some(plane.project(t.translation)),
        (None, .., Some(p)) => Some(p.0),
        (None, .., None) => None,
    }
}

/// The world position from a [`PositionData`] item.
#[cfg(not(feature = "transform"))]
pub(crate) fn position(item: Option<&NavPosition>, _plane: WorldPlane) -> Option<Vec2> {
    item.map(|p| p.0)
}

/// Positions of any entities (agents and followed targets), current as of
/// this system: a child's global position is computed from its own and its
/// ancestors' `Transform`s, not read from a `GlobalTransform` that transform
/// propagation last wrote a frame ago (a child spawned this frame has none
/// yet). Used where a search's endpoints are taken.
#[cfg(feature = "transform")]
#[derive(SystemParam)]
pub(crate) struct Positions<'w, 's> {
    items: Query<'w, 's, PositionData>,
    helper: TransformHelper<'w, 's>,
}

/// Positions of any entities (agents and followed targets).
#[cfg(not(feature = "transform"))]
#[derive(SystemParam)]
pub(crate) struct Positions<'w, 's> {
    items: Query<'w, 's, PositionData>,
}

impl Positions<'_, '_> {
    /// Where `entity` is now, in `plane`; `None` without a position.
    pub(crate) fn current(&self, entity: Entity, plane: WorldPlane) -> Option<Vec2> {
        let item = self.items.get(entity).ok()?;
        #[cfg(feature = "transform")]
        if item.2 && item.0.is_some() {
            return self
                .helper
                .compute_global_transform(entity)
                .ok()
                .map(|g| plane.project(g.translation()));
        }
        position(item, plane)
    }
}
