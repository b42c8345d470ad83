//! [`NavGrid`]: the walkable grid as a Bevy resource, placed in the world.
//!
//! A game inserts one `NavGrid` resource. It holds the core [`Grid`] behind an
//! [`Arc`] together with a [`GridTransform`] that places the grid in the
//! world, and it is the only way to edit the grid while the plugin runs:
//!
//! ```
//! use bevy_anyangle::plugin::{GridTransform, NavGrid};
//! use bevy_anyangle::prelude::*;
//! use bevy_math::{Rect, Vec2};
//!
//! let transform = GridTransform::new(Vec2::new(-8.0, -4.0), 2.0).unwrap();
//! let mut nav = NavGrid::from_ascii(
//!     "........
//!      ..####..
//!      ........
//!      ........",
//!     transform,
//! )
//! .unwrap();
//! // The grid covers the world rectangle [-8, 8] x [-4, 4]; the text's top row
//! // is the top of the world rectangle.
//! assert_eq!(nav.cell_at(Vec2::new(-7.0, 3.0)), Some(UVec2::new(0, 0)));
//! assert_eq!(nav.cell_center(UVec2::new(0, 3)), Vec2::new(-7.0, -3.0));
//! assert!(!nav.is_free_at(Vec2::new(-3.0, 1.0)), "cell (2, 1) is a wall");
//!
//! // Edits bump the version and are logged for the replanning system.
//! let before = nav.version();
//! nav.set_world_rect_free(Rect::new(-3.5, 0.5, 0.5, 1.5), true);
//! assert!(nav.version() > before);
//! assert!(nav.is_free_at(Vec2::new(-3.0, 1.0)));
//! assert_eq!(nav.edits_since(before).map(<[_]>::len), Some(1));
//! ```
//!
//! # World and grid coordinates
//!
//! Grid coordinates are y-**down** (row 0 is the top row of a Moving AI map,
//! see [`crate::grid`]); Bevy's world is y-**up**. The [`GridTransform`]
//! maps one to the other without flipping the picture: the grid occupies the
//! world rectangle from `origin` (its bottom-left corner) to
//! `origin + cell_size * (width, height)`, and the first row of the map is
//! the top row of that rectangle. Grid point `(gx, gy)` is world point
//! `(origin.x + cell_size * gx, origin.y + cell_size * (height - gy))`.
//!
//! A 3D game puts the grid on the ground with
//! [`GridTransform::with_plane`]`(`[`WorldPlane::Xz`]`)`: 2D world points are
//! then `(x, z)`, grid point `(gx, gy)` is `(origin.x + cell_size * gx,
//! origin.y + cell_size * gy)`, and the map's first row is at the smallest
//! z, the far side for a camera looking down with -z up the screen.
//!
//! # Snapshots
//!
//! Background searches run on [`NavGrid::snapshot`], an `Arc<Grid>`. An
//! edit while searches hold a snapshot clones the grid first
//! ([`Arc::make_mut`]), so edits never wait for, or race with, a search; a
//! search finishes on the grid it started with, and the plugin checks its
//! result against the edits made meanwhile. The clone is cheap: it shares
//! the grid's storage chunks, and the edit copies only those it writes to
//! (see [`crate::grid`]).

use std::sync::Arc;

#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectResource;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::resource::Resource;
use bevy_math::{DVec2, Rect, URect, UVec2, Vec2};

pub(crate) use super::layers::View;
use super::layers::{Fit, Layers, ProfileId, ViewKey};
pub use super::placement::{GridTransform, NavGridError, WorldPlane};
use crate::clearance::{Clearance, ClearanceError};
use crate::grid::{Grid, GridEdit, GridEditor, GridError};
use crate::los::line_of_sight;
use crate::terrain::{Profile, Terrain, TerrainMap};

/// How many edits [`NavGrid`] remembers for [`NavGrid::edits_since`] beyond
/// those the plugin still needs (see [`NavGrid::edits_since`]).
const EDIT_HISTORY: usize = 1 << 16;

/// Source of [`NavGrid::layout_id`] values.
static NEXT_LAYOUT_ID: AtomicU64 = AtomicU64::new(1);

fn fresh_layout_id() -> u64 {
    NEXT_LAYOUT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The navigation grid resource: the core [`Grid`], its place in the world,
/// and a log of recent edits.
///
/// See the [module docs](self) for an example and the coordinate convention.
///
/// A clone is a new layout (it gets its own [`NavGrid::layout_id`]): its
/// versions count on from the original's but its cells may go their own
/// way, so inserting it back as the resource counts as replacing the grid.
///
/// With the `reflect` feature it is reflected as an opaque value: an
/// inspector shows it (its `Debug` form) and may replace it whole, which the
/// plugin treats as a new grid; single cells change only through its
/// methods, so that every edit is logged and the agents it concerns replan.
#[derive(Resource, Debug)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(opaque, Resource, Debug, Clone)
)]
pub struct NavGrid {
    grid: Arc<Grid>,
    transform: GridTransform,
    layout_id: u64,
    /// Edits with `version > log_floor`, oldest first; complete.
    log: Vec<GridEdit>,
    log_floor: u64,
    /// Edits after this version are kept however many there are (the
    /// plugin still needs them).
    keep_after: Option<u64>,
    /// The terrain, the profiles' grids and the eroded grids agents use
    /// (see [`NavGrid::grid_for`]).
    layers: Layers,
}

impl Clone for NavGrid {
    /// A copy with a fresh [`NavGrid::layout_id`] (see [`NavGrid`]).
    fn clone(&self) -> Self {
        NavGrid {
            grid: Arc::clone(&self.grid),
            transform: self.transform,
            layout_id: fresh_layout_id(),
            log: self.log.clone(),
            log_floor: self.log_floor,
            keep_after: None,
            layers: self.layers.clone(),
        }
    }
}

impl NavGrid {
    /// Wraps `grid`, placed in the world by `transform`.
    #[must_use]
    pub fn new(grid: Grid, transform: GridTransform) -> Self {
        Self::with_layers(grid, transform, Layers::new(None))
    }

    fn with_layers(mut grid: Grid, transform: GridTransform, layers: Layers) -> Self {
        let version = grid.version();
        grid.clear_edits_through(version);
        NavGrid {
            grid: Arc::new(grid),
            transform,
            layout_id: fresh_layout_id(),
            log: Vec::new(),
            log_floor: version,
            keep_after: None,
            layers,
        }
    }

    /// A grid built from terrain: its own grid (the default profile's) is
    /// free where the terrain is ground or swamp, and it keeps the terrain,
    /// so that profiles can be added ([`NavGrid::add_profile`]) and terrain
    /// edited ([`NavGrid::set_terrain`]).
    #[must_use]
    pub fn from_terrain(terrain: TerrainMap, transform: GridTransform) -> Self {
        let grid = terrain.grid(&Profile::default());
        Self::with_layers(grid, transform, Layers::new(Some(terrain)))
    }

    /// Parses a Moving AI `.map` file (see [`Grid::from_movingai`]), keeping
    /// its terrain (see [`NavGrid::from_terrain`]).
    ///
    /// # Errors
    ///
    /// [`NavGridError::Parse`] naming the offending line.
    pub fn from_movingai(text: &str, transform: GridTransform) -> Result<Self, NavGridError> {
        Ok(Self::from_terrain(
            TerrainMap::from_movingai(text)?,
            transform,
        ))
    }

    /// Builds the grid from an ASCII picture (see [`Grid::from_ascii`]); the
    /// picture's top line is the top of the grid in the world.
    ///
    /// # Errors
    ///
    /// [`NavGridError::Parse`] naming the offending line.
    pub fn from_ascii(picture: &str, transform: GridTransform) -> Result<Self, NavGridError> {
        Ok(Self::new(Grid::from_ascii(picture)?, transform))
    }

    /// The current grid.
    #[must_use]
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// A cheap immutable snapshot of the current grid, for background work.
    /// Later edits do not change it.
    #[must_use]
    pub fn snapshot(&self) -> Arc<Grid> {
        Arc::clone(&self.grid)
    }

    /// The grid's placement in the world.
    #[must_use]
    pub fn transform(&self) -> GridTransform {
        self.transform
    }

    /// Moves or rescales the grid in the world. Every path planned before is
    /// in old world coordinates, so the plugin stops every agent where it
    /// stands and replans it
    /// ([`PlanReason::GridReplaced`](crate::plugin::PlanReason::GridReplaced)).
    pub fn set_transform(&mut self, transform: GridTransform) {
        if transform != self.transform {
            self.transform = transform;
            self.layout_id = fresh_layout_id();
        }
    }

    /// Identifies this grid's layout: it changes when a new `NavGrid` is
    /// built or cloned, or the transform changes (not on cell edits, see
    /// [`NavGrid::version`]). Versions are only comparable within one layout.
    #[must_use]
    pub fn layout_id(&self) -> u64 {
        self.layout_id
    }

    /// The grid's version: plus one per edit that changed a cell.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.grid.version()
    }

    /// The edits made after `version`, oldest first, or `None` if the log no
    /// longer reaches back that far or `version` is in the future.
    ///
    /// The log keeps every edit the plugin has not checked yet, and every
    /// edit made since a search still in flight took its snapshot; beyond
    /// those, the last 65,536 edits.
    #[must_use]
    pub fn edits_since(&self, version: u64) -> Option<&[GridEdit]> {
        if version < self.log_floor || version > self.version() {
            return None;
        }
        let first = self.log.partition_point(|e| e.version <= version);
        Some(&self.log[first..])
    }

    /// Keeps every edit made after `version` in the log (the plugin calls
    /// this each frame with the oldest version it still needs).
    pub(crate) fn keep_edits_after(&mut self, version: u64) {
        self.keep_after = Some(version);
    }

    /// Applies `f` to the grid and moves the edits it made into the log.
    fn modify<R>(&mut self, f: impl FnOnce(&mut Grid) -> R) -> R {
        self.apply(f, None)
    }

    /// [`NavGrid::modify`] after the terrain changed in `terrain_rect`: the
    /// profile grids and eroded grids follow, and a change of a profile's
    /// grid alone still counts as an edit (the `NavGrid`'s version goes up, its
    /// log names the rectangle as [`EditKind::Mixed`](crate::grid::EditKind::Mixed)).
    fn apply<R>(&mut self, f: impl FnOnce(&mut Grid) -> R, terrain_rect: Option<URect>) -> R {
        let before = self.grid.version();
        let grid = Arc::make_mut(&mut self.grid);
        let result = f(grid);
        let main_rects: Vec<URect> = grid.edits_since(before).map(|e| e.rect).collect();
        let terrain_rects = terrain_rect.as_slice();
        let profiles_changed = self.layers.follow(grid, &main_rects, terrain_rects);
        if profiles_changed
            && grid.version() == before
            && let Some(rect) = terrain_rect
        {
            grid.touch(rect);
        }
        let after = grid.version();
        if after != before {
            self.log.extend(grid.edits_since(before).copied());
            grid.clear_edits_through(after);
            self.layers.commit(&self.grid, &main_rects, after);
            if self.log.len() > EDIT_HISTORY {
                // Drop the older half, but nothing the plugin still needs.
                let mut drop = self.log.len() - EDIT_HISTORY / 2;
                if let Some(keep) = self.keep_after {
                    drop = drop.min(self.log.partition_point(|e| e.version <= keep));
                }
                if drop > 0 {
                    self.log_floor = self.log[drop - 1].version;
                    self.log.drain(..drop);
                    self.layers.trim(self.log_floor);
                }
            }
        }
        result
    }

    /// The clearance class of an agent of radius `radius` (world units) on
    /// this grid: the radius in cells, `radius / cell_size`, classed by
    /// [`Clearance::from_radius`].
    ///
    /// # Errors
    ///
    /// A [`ClearanceError`] for a negative or non-finite radius, or one above
    /// [`MAX_RADIUS`](crate::clearance::MAX_RADIUS) cells.
    pub fn clearance_of(&self, radius: f32) -> Result<Clearance, ClearanceError> {
        Clearance::from_radius(f64::from(radius) / f64::from(self.transform.cell_size()))
    }

    /// The mesh class of an agent of `radius` (world units) on this grid:
    /// its radius in cells rounded up to a multiple of 1/64 cell
    /// ([`Fit::Disc`]), or [`Fit::POINT`] for 0.
    pub(crate) fn disc_of(&self, radius: f32) -> Result<Fit, ClearanceError> {
        let clearance = self.clearance_of(radius)?;
        if clearance.is_none() {
            return Ok(Fit::POINT);
        }
        let cells = f64::from(radius) / f64::from(self.transform.cell_size());
        // (At most 64 × MAX_RADIUS, and at least 1 above 0.)
        Ok(Fit::Disc(((cells * 64.0).ceil() as u32).max(1)))
    }

    /// The grid agents of `profile` and `clearance` plan on: the profile's
    /// grid (for [`ProfileId::DEFAULT`] the `NavGrid`'s own) for
    /// [`Clearance::NONE`], else its eroded grid (see [`crate::clearance`])
    /// if one is kept: the plugin keeps one for every (profile, clearance)
    /// its agents use, from the frame an agent asks for it to the frame the
    /// last one is gone, and [`NavGrid::keep_clearance`] keeps one for good.
    /// `None` for a profile not registered here.
    #[must_use]
    pub fn grid_for(&self, profile: ProfileId, clearance: Clearance) -> Option<&Grid> {
        self.view((profile, Fit::Eroded(clearance))).map(|v| v.grid)
    }

    /// The (profile, clearance) pairs whose eroded grids are kept (for
    /// agents of a radius planned by Lazy Theta\* or A\*; see
    /// [`PathRequest`](crate::plugin::PathRequest)).
    pub fn clearances(&self) -> impl Iterator<Item = (ProfileId, Clearance)> + '_ {
        self.layers.kept()
    }

    /// Builds the eroded grid of `profile` and `clearance` now (if it is not
    /// kept yet), for a game that would rather pay for it while loading than
    /// in the frame its first agent of that size appears: eroding costs
    /// about as much as building the grid (half a millisecond for 256 x 256
    /// cells, tens of milliseconds for 2048 x 2048). It is kept until the
    /// grid is replaced (a new `NavGrid`), even with no agent using it;
    /// keeping it up to date costs each later edit near it a few
    /// microseconds. Does nothing for a profile not registered here.
    pub fn keep_clearance(&mut self, profile: ProfileId, clearance: Clearance) {
        let version = self.version();
        self.layers.pin(&self.grid, (profile, clearance), version);
    }

    /// Registers a movement profile: agents naming it in
    /// [`PathRequest::profile`](crate::plugin::PathRequest::profile) plan on a grid
    /// free where its terrain is passable (and, if its costs differ, with
    /// those costs: Lazy Theta\* or A\*, see
    /// [`Planner::plan_with_costs`](crate::search::Planner::plan_with_costs)).
    /// An equal profile registered before keeps its id; the default profile
    /// is [`ProfileId::DEFAULT`].
    ///
    /// ```
    /// use bevy_anyangle::plugin::{GridTransform, NavGrid};
    /// use bevy_anyangle::prelude::*;
    /// use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};
    ///
    /// let terrain = TerrainMap::from_ascii("..WW..").unwrap();
    /// let mut nav = NavGrid::from_terrain(terrain, GridTransform::default());
    /// let boat = nav
    ///     .add_profile(Profile::impassable().with(Terrain::WATER, 1.0).unwrap())
    ///     .unwrap();
    /// let water = nav.grid_for(boat, Clearance::NONE).unwrap();
    /// assert!(water.is_free(UVec2::new(2, 0)) && !water.is_free(UVec2::new(0, 0)));
    /// ```
    ///
    /// # Errors
    ///
    /// [`NavGridError::NoTerrain`] for a grid built without terrain
    /// ([`NavGrid::new`], [`NavGrid::from_ascii`]);
    /// [`NavGridError::TooManyProfiles`] past 65,535 profiles.
    pub fn add_profile(&mut self, profile: Profile) -> Result<ProfileId, NavGridError> {
        if self.layers.terrain.is_none() {
            return Err(NavGridError::NoTerrain);
        }
        let version = self.version();
        self.layers
            .add_profile(profile, version)
            .ok_or(NavGridError::TooManyProfiles)
    }

    /// The profile registered as `id`.
    #[must_use]
    pub fn profile(&self, id: ProfileId) -> Option<&Profile> {
        self.layers.profile(id)
    }

    /// The terrain, for a grid built from terrain.
    #[must_use]
    pub fn terrain(&self) -> Option<&TerrainMap> {
        self.layers.terrain.as_ref()
    }

    /// Sets the terrain of every cell of `rect` (half-open, in cells); the
    /// `NavGrid`'s own grid and every profile's follow, and the agents whose
    /// grids changed on their path replan. Returns whether a cell changed.
    /// (Cell edits such as [`NavGrid::set_cell_free`] change the terrain
    /// too: a freed cell becomes ground, a blocked one out of bounds, unless
    /// its terrain already says so.)
    ///
    /// A change of cost alone (road to swamp for an agent that may cross
    /// both) changes no grid and replans no agent.
    ///
    /// # Errors
    ///
    /// [`NavGridError::NoTerrain`] for a grid built without terrain,
    /// [`NavGridError::Edit`] for a rectangle that leaves the grid.
    pub fn set_terrain(&mut self, rect: URect, terrain: Terrain) -> Result<bool, NavGridError> {
        let Some(map) = self.layers.terrain.as_mut() else {
            return Err(NavGridError::NoTerrain);
        };
        if !map.set_rect(rect, terrain)? {
            return Ok(false);
        }
        let free = Profile::default().cost(terrain).is_some();
        self.apply(|g| g.set_rect_free(rect, free), Some(rect))?;
        Ok(true)
    }

    /// The grid, changes and base of `key`, if kept.
    pub(crate) fn view(&self, key: ViewKey) -> Option<View<'_>> {
        self.layers
            .view(&self.grid, &self.log, self.log_floor, self.version(), key)
    }

    /// A snapshot of the terrain, for a search with costs.
    pub(crate) fn terrain_snapshot(&mut self) -> Option<Arc<TerrainMap>> {
        self.layers.terrain_snapshot()
    }

    /// Keeps exactly the eroded grids of `used` (and those kept for good),
    /// building the missing ones.
    pub(crate) fn keep_views(&mut self, used: impl Iterator<Item = ViewKey> + Clone) {
        let version = self.version();
        self.layers.keep(&self.grid, used, version);
    }

    /// Sets one cell free or blocked; returns whether it changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the cell is not in the grid.
    pub fn set_cell_free(&mut self, cell: UVec2, free: bool) -> Result<bool, GridError> {
        self.modify(|g| g.set_free(cell, free))
    }

    /// Sets every cell of `rect` (half-open: `max` excluded, see
    /// [`cell_in_rect`](crate::grid::cell_in_rect); in cells)
    /// free or blocked; returns whether any changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the rectangle leaves the grid.
    pub fn set_rect_free(&mut self, rect: URect, free: bool) -> Result<bool, GridError> {
        self.modify(|g| g.set_rect_free(rect, free))
    }

    /// Several edits at once, with one region update at the end (see
    /// [`Grid::edit`]).
    ///
    /// # Errors
    ///
    /// The first [`GridError`] an edit returns; edits before it stay applied.
    pub fn edit<R>(
        &mut self,
        f: impl FnOnce(&mut GridEditor<'_>) -> Result<R, GridError>,
    ) -> Result<R, GridError> {
        self.modify(|g| g.edit(f))
    }

    /// Sets the cell containing world point `p` free or blocked; returns
    /// whether it changed (`false` if `p` is outside the grid or not finite).
    pub fn set_world_point_free(&mut self, p: Vec2, free: bool) -> bool {
        self.cell_at(p)
            .is_some_and(|cell| self.set_cell_free(cell, free).unwrap_or(false))
    }

    /// Sets every cell overlapping the world rectangle `rect` (clipped to the
    /// grid) free or blocked; returns whether any changed.
    pub fn set_world_rect_free(&mut self, rect: Rect, free: bool) -> bool {
        self.cells_overlapping(rect)
            .is_some_and(|cells| self.set_rect_free(cells, free).unwrap_or(false))
    }

    /// The cells (`max` exclusive) whose interiors overlap the world
    /// rectangle `rect`, clipped to the grid; `None` if there are none.
    #[must_use]
    pub fn cells_overlapping(&self, rect: Rect) -> Option<URect> {
        if !(rect.min.is_finite() && rect.max.is_finite()) || rect.is_empty() {
            return None;
        }
        let a = self.to_grid(rect.min);
        let b = self.to_grid(rect.max);
        let (w, h) = (f64::from(self.grid.width()), f64::from(self.grid.height()));
        let lo = a.min(b).max(DVec2::ZERO);
        let hi = a.max(b).min(DVec2::new(w, h));
        let (x0, y0) = (lo.x.floor(), lo.y.floor());
        let (x1, y1) = (hi.x.ceil(), hi.y.ceil());
        (x0 < x1 && y0 < y1).then(|| URect::new(x0 as u32, y0 as u32, x1 as u32, y1 as u32))
    }

    /// World point to grid coordinates (y-down, in cells).
    #[must_use]
    pub fn to_grid(&self, p: Vec2) -> DVec2 {
        self.transform.to_grid(self.grid.height(), p)
    }

    /// Grid coordinates to a world point.
    #[must_use]
    pub fn to_world(&self, p: DVec2) -> Vec2 {
        self.transform.to_world(self.grid.height(), p)
    }

    /// The cell containing world point `p` (on a cell edge: the cell to its
    /// right, or below in grid terms), or `None` outside the grid.
    #[must_use]
    pub fn cell_at(&self, p: Vec2) -> Option<UVec2> {
        let g = self.to_grid(p);
        if !g.is_finite() {
            return None;
        }
        let (x, y) = (g.x.floor(), g.y.floor());
        self.grid
            .contains_xy(x as i64, y as i64)
            .then(|| UVec2::new(x as u32, y as u32))
    }

    /// World position of the centre of `cell` (it need not be in the grid).
    #[must_use]
    pub fn cell_center(&self, cell: UVec2) -> Vec2 {
        self.to_world(cell.as_dvec2() + DVec2::splat(0.5))
    }

    /// Whether world point `p` is traversable (in a free cell's closed
    /// square).
    #[must_use]
    pub fn is_free_at(&self, p: Vec2) -> bool {
        self.grid.is_point_traversable(self.to_grid(p))
    }

    /// Whether the straight segment between world points `a` and `b` is
    /// walkable (see [`line_of_sight`]).
    #[must_use]
    pub fn line_of_sight(&self, a: Vec2, b: Vec2) -> bool {
        line_of_sight(&self.grid, self.to_grid(a), self.to_grid(b))
    }

    /// The world rectangle the grid covers.
    #[must_use]
    pub fn world_rect(&self) -> Rect {
        let size = self.grid.size().as_vec2() * self.transform.cell_size();
        Rect::from_corners(self.transform.origin(), self.transform.origin() + size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "serde")]
    #[test]
    fn placements_round_trip_through_serde_and_bad_ones_are_refused() {
        let t = GridTransform::new(Vec2::new(-4.0, 2.5), 0.5)
            .unwrap()
            .with_plane(WorldPlane::Xz);
        let text = ron::to_string(&t).unwrap();
        assert_eq!(ron::from_str::<GridTransform>(&text).unwrap(), t);
        let bad = text.replace("0.5", "0.0");
        let err = ron::from_str::<GridTransform>(&bad).unwrap_err();
        assert!(err.to_string().contains("cell size"), "{err}");
        // The plane may be left out: XY.
        let plain = ron::from_str::<GridTransform>("(origin: (1.0, 2.0), cell_size: 2.0)").unwrap();
        assert_eq!(plain, GridTransform::new(Vec2::new(1.0, 2.0), 2.0).unwrap());
    }

    #[test]
    fn world_and_grid_round_trip() {
        let nav = NavGrid::new(
            Grid::new(10, 5).unwrap(),
            GridTransform::new(Vec2::new(100.0, -50.0), 4.0).unwrap(),
        );
        let g = DVec2::new(2.5, 1.0);
        let w = nav.to_world(g);
        assert_eq!(w, Vec2::new(110.0, -34.0));
        assert_eq!(nav.to_grid(w), g);
        assert_eq!(nav.world_rect(), Rect::new(100.0, -50.0, 140.0, -30.0));
        assert_eq!(nav.cell_at(Vec2::new(99.0, -40.0)), None);
        assert_eq!(nav.cell_at(Vec2::new(f32::NAN, 0.0)), None);
    }

    #[test]
    fn bad_transforms_are_errors() {
        assert!(GridTransform::new(Vec2::ZERO, 0.0).is_err());
        assert!(GridTransform::new(Vec2::ZERO, f32::NAN).is_err());
        assert!(GridTransform::new(Vec2::ZERO, 1e-45).is_err(), "subnormal");
        assert!(GridTransform::new(Vec2::ZERO, f32::MIN_POSITIVE).is_ok());
        assert!(GridTransform::new(Vec2::NAN, 1.0).is_err());
        assert!(matches!(
            GridTransform::new(Vec2::ZERO, f32::MAX / 2.0),
            Err(NavGridError::TooLarge { .. })
        ));
        assert!(matches!(
            GridTransform::new(Vec2::new(0.0, -f32::MAX), 1e34),
            Err(NavGridError::TooLarge { .. })
        ));
    }

    #[test]
    fn edits_are_logged_and_snapshots_keep_their_grid() {
        let mut nav = NavGrid::new(Grid::new(8, 8).unwrap(), GridTransform::default());
        let snap = nav.snapshot();
        nav.set_cell_free(UVec2::new(1, 1), false).unwrap();
        nav.set_rect_free(URect::new(2, 2, 4, 4), false).unwrap();
        assert!(snap.is_free_xy(1, 1), "the snapshot is untouched");
        assert!(!nav.grid().is_free_xy(1, 1));
        assert_eq!(nav.edits_since(0).unwrap().len(), 2);
        assert_eq!(nav.edits_since(1).unwrap().len(), 1);
        assert_eq!(nav.edits_since(9), None);
        assert!(!nav.set_world_point_free(Vec2::new(-1.0, 0.0), false));
        assert!(
            nav.cells_overlapping(Rect::new(-5.0, -5.0, -1.0, -1.0))
                .is_none()
        );
    }

    #[test]
    fn a_clone_is_a_new_layout() {
        let mut nav = NavGrid::new(Grid::new(4, 4).unwrap(), GridTransform::default());
        let saved = nav.clone();
        assert_ne!(saved.layout_id(), nav.layout_id());
        nav.set_cell_free(UVec2::new(1, 1), false).unwrap();
        let mut restored = saved.clone();
        restored.set_cell_free(UVec2::new(2, 2), false).unwrap();
        // Same version, different cells: only the layout id tells them apart.
        assert_eq!(restored.version(), nav.version());
        assert_ne!(restored.layout_id(), nav.layout_id());
        assert_ne!(restored.layout_id(), saved.layout_id());
        assert_eq!(restored.edits_since(0).map(<[_]>::len), Some(1));
    }

    #[test]
    fn edits_the_plugin_still_needs_stay_in_the_log() {
        let mut nav = NavGrid::new(Grid::new(4, 4).unwrap(), GridTransform::default());
        nav.keep_edits_after(10);
        for i in 0..EDIT_HISTORY + 100 {
            nav.set_cell_free(UVec2::new(0, 0), i % 2 == 1).unwrap();
        }
        // Past the cap, but everything after version 10 is kept.
        assert_eq!(nav.edits_since(10).map(<[_]>::len), Some(EDIT_HISTORY + 90));
        assert_eq!(nav.edits_since(9), None);
        // Once the pin moves on, the older half goes at the next edit.
        nav.keep_edits_after(nav.version());
        nav.set_cell_free(UVec2::new(1, 1), false).unwrap();
        assert!(nav.log.len() <= EDIT_HISTORY / 2 + 1);
        assert_eq!(nav.edits_since(nav.version() - 1).map(<[_]>::len), Some(1));
    }

    #[test]
    fn old_edits_fall_out_of_the_log() {
        let mut nav = NavGrid::new(Grid::new(4, 4).unwrap(), GridTransform::default());
        for i in 0..=EDIT_HISTORY {
            nav.set_cell_free(UVec2::new(0, 0), i % 2 == 1).unwrap();
        }
        assert_eq!(nav.edits_since(0), None);
        assert_eq!(nav.edits_since(nav.version() - 3).unwrap().len(), 3);
    }
}
