//! Where a grid lies in the world: [`GridTransform`], the [`WorldPlane`] it
//! lies in, and [`NavGridError`], why a placement or a grid could not be
//! built.

use bevy_math::{DVec2, Vec2, Vec3};
use thiserror::Error;

use crate::grid::{GridError, MAX_DIMENSION, MapParseError};

/// Why a [`NavGrid`](crate::plugin::NavGrid) or [`GridTransform`] could not be built.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum NavGridError {
    /// The cell size is not a finite, normal number greater than zero (zero,
    /// negative, NaN, infinite, or subnormal: below `f32::MIN_POSITIVE`,
    /// where world points would round to the wrong cell).
    #[error("cell size {0} is not a finite, normal number greater than zero")]
    BadCellSize(f32),
    /// The origin has a NaN or infinite coordinate.
    #[error("origin {0} is not a finite point")]
    BadOrigin(Vec2),
    /// A grid of [`MAX_DIMENSION`] cells each way placed this way would
    /// reach beyond the finite `f32` world coordinates.
    #[error(
        "origin {origin} with cell size {cell_size} puts grids of up to {max} cells beyond finite f32 coordinates",
        max = MAX_DIMENSION
    )]
    TooLarge {
        /// The origin asked for.
        origin: Vec2,
        /// The cell size asked for.
        cell_size: f32,
    },
    /// The map text could not be parsed.
    #[error(transparent)]
    Parse(#[from] MapParseError),
    /// Terrain or profiles were asked of a grid built without terrain (see
    /// [`NavGrid::from_terrain`](crate::plugin::NavGrid::from_terrain)).
    #[error("the grid was built without terrain")]
    NoTerrain,
    /// 65,535 profiles are registered already.
    #[error("too many movement profiles")]
    TooManyProfiles,
    /// A terrain edit left the grid.
    #[error(transparent)]
    Edit(#[from] GridError),
}

/// The plane of the world the grid lies in, and so which two coordinates of
/// a 3D position are the agent's 2D position.
///
/// Every 2D world point of the plugin ([`NavPath::waypoints`],
/// [`NavPosition`], [`PathGoal::Point`], the goals of [`NavGrid`](crate::plugin::NavGrid)'s world
/// methods) is in this plane's coordinates.
///
/// [`NavPath::waypoints`]: crate::plugin::NavPath::waypoints
/// [`NavPosition`]: crate::plugin::NavPosition
/// [`PathGoal::Point`]: crate::plugin::PathGoal::Point
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "reflect", derive(bevy_reflect::Reflect))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WorldPlane {
    /// The XY plane of a 2D game, y up: a position is
    /// `(translation.x, translation.y)`, and steering keeps `translation.z`.
    /// The grid's first row is at the top (largest y).
    #[default]
    Xy,
    /// The XZ ground plane of a 3D game with y up: a position is
    /// `(translation.x, translation.z)`, and steering keeps `translation.y`
    /// (the agent's height). The grid's first row is at the smallest z, so
    /// a map reads as drawn from a camera looking down with -z up the
    /// screen (Bevy's forward).
    Xz,
}

impl WorldPlane {
    /// The 2D position of the 3D point `p` in this plane.
    #[must_use]
    pub fn project(self, p: Vec3) -> Vec2 {
        match self {
            WorldPlane::Xy => p.truncate(),
            WorldPlane::Xz => Vec2::new(p.x, p.z),
        }
    }

    /// The 3D point at 2D position `p` of this plane, `height` off it (the
    /// z coordinate for [`WorldPlane::Xy`], y for [`WorldPlane::Xz`]).
    #[must_use]
    pub fn lift(self, p: Vec2, height: f32) -> Vec3 {
        match self {
            WorldPlane::Xy => p.extend(height),
            WorldPlane::Xz => Vec3::new(p.x, height, p.y),
        }
    }

    /// The coordinate of `p` off the plane (its z for [`WorldPlane::Xy`],
    /// its y for [`WorldPlane::Xz`]).
    #[must_use]
    pub fn height(self, p: Vec3) -> f32 {
        match self {
            WorldPlane::Xy => p.z,
            WorldPlane::Xz => p.y,
        }
    }
}

/// Where a grid lies in the world: the plane, the world position of its
/// minimum corner and the side of one cell, in world units.
///
/// See the [`nav_grid`](super::nav_grid) module docs for the y-up / y-down
/// convention.
///
/// With the `serde` feature it serializes as its fields; deserializing
/// checks them as [`GridTransform::new`] does.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "reflect", derive(bevy_reflect::Reflect))]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "GridTransformFields")
)]
pub struct GridTransform {
    origin: Vec2,
    cell_size: f32,
    plane: WorldPlane,
}

impl Default for GridTransform {
    /// Origin `(0, 0)`, cells of size 1, the XY plane.
    fn default() -> Self {
        GridTransform {
            origin: Vec2::ZERO,
            cell_size: 1.0,
            plane: WorldPlane::Xy,
        }
    }
}

/// A [`GridTransform`] as written in a file, checked when it becomes one.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct GridTransformFields {
    origin: Vec2,
    cell_size: f32,
    #[serde(default)]
    plane: WorldPlane,
}

#[cfg(feature = "serde")]
impl TryFrom<GridTransformFields> for GridTransform {
    type Error = NavGridError;

    fn try_from(f: GridTransformFields) -> Result<Self, NavGridError> {
        Ok(GridTransform::new(f.origin, f.cell_size)?.with_plane(f.plane))
    }
}

impl GridTransform {
    /// A transform placing the grid's bottom-left corner at `origin`, with
    /// square cells of side `cell_size` world units.
    ///
    /// # Errors
    ///
    /// [`NavGridError::BadCellSize`] unless `cell_size` is finite, normal
    /// (not subnormal) and positive; [`NavGridError::BadOrigin`] if `origin` is not finite;
    /// [`NavGridError::TooLarge`] if a grid of [`MAX_DIMENSION`] cells each
    /// way would reach beyond `f32::MAX` in world units (so every point of
    /// any grid placed by a transform has finite world coordinates).
    pub fn new(origin: Vec2, cell_size: f32) -> Result<Self, NavGridError> {
        if !(cell_size.is_normal() && cell_size > 0.0) {
            return Err(NavGridError::BadCellSize(cell_size));
        }
        if !origin.is_finite() {
            return Err(NavGridError::BadOrigin(origin));
        }
        let reach =
            origin.abs().as_dvec2().max_element() + f64::from(cell_size) * f64::from(MAX_DIMENSION);
        if reach > f64::from(f32::MAX) {
            return Err(NavGridError::TooLarge { origin, cell_size });
        }
        Ok(GridTransform {
            origin,
            cell_size,
            plane: WorldPlane::Xy,
        })
    }

    /// This placement in another plane of the world (see [`WorldPlane`]);
    /// `origin` is then the corner with the smallest coordinates of that
    /// plane.
    ///
    /// ```
    /// use bevy_anyangle::plugin::{GridTransform, NavGrid, WorldPlane};
    /// use bevy_math::{UVec2, Vec2};
    ///
    /// // A 3D game: the grid on the ground, x from -4 to 4, z from -2 to 2.
    /// let placement = GridTransform::new(Vec2::new(-4.0, -2.0), 1.0)
    ///     .unwrap()
    ///     .with_plane(WorldPlane::Xz);
    /// let nav = NavGrid::from_ascii("........\n........\n........\n.......@", placement).unwrap();
    /// // The picture's first row is the far side (smallest z).
    /// assert_eq!(nav.cell_at(Vec2::new(-3.5, -1.5)), Some(UVec2::new(0, 0)));
    /// assert!(!nav.is_free_at(Vec2::new(3.5, 1.5)));
    /// ```
    #[must_use]
    pub fn with_plane(self, plane: WorldPlane) -> Self {
        GridTransform { plane, ..self }
    }

    /// World position (in [`GridTransform::plane`] coordinates) of the
    /// grid's minimum corner: bottom-left in the XY plane.
    #[must_use]
    pub fn origin(&self) -> Vec2 {
        self.origin
    }

    /// The plane of the world the grid lies in.
    #[must_use]
    pub fn plane(&self) -> WorldPlane {
        self.plane
    }

    /// Side of one cell, in world units.
    #[must_use]
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// World point to grid coordinates (y-down, in cells) of a grid of
    /// `rows` rows placed this way.
    pub(crate) fn to_grid(self, rows: u32, p: Vec2) -> DVec2 {
        let cs = f64::from(self.cell_size);
        let o = self.origin.as_dvec2();
        let q = p.as_dvec2();
        let (x, y) = ((q.x - o.x) / cs, (q.y - o.y) / cs);
        match self.plane {
            WorldPlane::Xy => DVec2::new(x, f64::from(rows) - y),
            WorldPlane::Xz => DVec2::new(x, y),
        }
    }

    /// Grid coordinates of a grid of `rows` rows placed this way to a world
    /// point.
    pub(crate) fn to_world(self, rows: u32, p: DVec2) -> Vec2 {
        let cs = f64::from(self.cell_size);
        let o = self.origin.as_dvec2();
        let y = match self.plane {
            WorldPlane::Xy => f64::from(rows) - p.y,
            WorldPlane::Xz => p.y,
        };
        DVec2::new(o.x + p.x * cs, o.y + y * cs).as_vec2()
    }
}
