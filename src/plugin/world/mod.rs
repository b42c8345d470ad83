//! The world agents plan in: the [`NavGrid`] resource (the grid, where it
//! lies in the world, its edits), the grids each kind of agent plans on
//! ([`layers`]), and where an agent stands (its `Transform` or
//! [`NavPosition`]).

pub mod layers;
pub mod nav_grid;
mod placement;
mod position;

pub use layers::ProfileId;
pub(crate) use layers::{Fit, ViewKey};
pub(crate) use nav_grid::View;
pub use nav_grid::{GridTransform, NavGrid, NavGridError, WorldPlane};
pub use position::{NavPosition, OnArea};
pub(crate) use position::{PositionChanged, PositionData, Positions, plane_of, position};
