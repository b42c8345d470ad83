//! The walkable world: a bit-packed grid of free and blocked cells.
//!
//! # Coordinates
//!
//! One convention, used by every planner in the crate (it is the one of
//! `SPEC.md` and of Moving AI `.map` files):
//!
//! - A grid has `width x height` square cells. Cell `(x, y)` is the closed
//!   square `[x, x + 1] x [y, y + 1]`; `x` grows to the right, `y` grows
//!   **downwards** (cell `(0, 0)` is the top-left one, as in a `.map` file).
//! - A *point* is any real `(x, y)` in `[0, width] x [0, height]`; the integer
//!   points are the grid's *vertices*.
//! - Everything outside the grid is blocked.
//!
//! Mapping grid coordinates to a game's world (origin, cell size, Bevy's y-up
//! axis) is done by the plugin's `NavGrid`, never here.
//!
//! # Cells and rectangles of cells
//!
//! A cell is a [`UVec2`]; methods that take a cell ([`Grid::is_free`],
//! [`Grid::set_free`]) answer "blocked" or a typed error for cells outside
//! the grid. Geometry code that steps to a neighbour of column 0 gets signed
//! coordinates; it uses the `_xy` forms ([`Grid::is_free_xy`]), which take
//! `i64` and treat everything outside as blocked.
//!
//! A rectangle of cells is a **half-open** [`URect`]: it holds cell `c` when
//! `min.x <= c.x < max.x` and `min.y <= c.y < max.y`, so `rect.size()` is its
//! size in cells and `URect::from_corners(c, c + UVec2::ONE)` is the one cell
//! `c`, as texture-atlas rectangles are in pixels. Mind that Bevy's
//! `URect::contains` also counts the `max` edge; test membership of a cell
//! with [`cell_in_rect`].
//!
//! # Regions
//!
//! Two free cells are connected iff a chain of free cells sharing edges joins
//! them (4-connectivity; diagonal contact never connects because a path may not
//! squeeze through a double corner). The grid keeps a region label per cell,
//! up to date after every edit, so [`Grid::same_region`] is O(1). An edit
//! relabels only around the cells it changed (see the `regions` module).
//!
//! # Snapshots
//!
//! A grid's storage is cut into chunks, each behind its own
//! [`Arc`](std::sync::Arc): the free cells in bands of 64 rows (and of 64
//! columns), the vertex table in bands of 8 vertex rows, region labels in
//! tiles of 64 x 64 cells. Cloning a grid copies chunk pointers only; an edit
//! of a grid that shares chunks with a clone copies just the chunks it writes
//! to. So an `Arc<Grid>` snapshot held by a background search costs the
//! editor little.

mod bits;
mod chunks;
mod movingai;
mod regions;

pub(crate) use bits::{BitPlane, next_bit, prev_bit};

use chunks::Bands;
use regions::Regions;

pub use movingai::{MapParseError, MapParseErrorKind, Scenario, ScenarioEntry};
pub(crate) use movingai::{ascii_rows, check_row, map_rows};

use bevy_math::{DVec2, URect, UVec2};
use thiserror::Error;

/// The largest width or height a [`Grid`] accepts.
///
/// It keeps vertex indices within `u32` and every exact geometric computation
/// on lattice points within `i64`.
pub const MAX_DIMENSION: u32 = 1 << 15;

/// A region label: cells with the same label are 4-connected.
///
/// Labels are only meaningful for one [`Grid::version`]; an edit may renumber
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionId(pub(crate) u32);

/// Why a grid could not be built or edited.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GridError {
    /// The width or height is zero or larger than [`MAX_DIMENSION`].
    #[error("grid size {width} x {height} is out of range (1..={max} each way)", max = MAX_DIMENSION)]
    BadSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The machine cannot hold a grid of this size (checked before anything
    /// is allocated, see [`Grid::bytes_needed`]).
    #[error("a {width} x {height} grid needs about {bytes} bytes, more than can be allocated")]
    OutOfMemory {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// The memory it needs.
        bytes: u64,
    },
    /// A cell or rectangle lies (partly) outside the grid.
    #[error("cell ({x}, {y}) is outside the {width} x {height} grid")]
    OutOfBounds {
        /// Column of the offending cell.
        x: u32,
        /// Row of the offending cell.
        y: u32,
        /// Grid width.
        width: u32,
        /// Grid height.
        height: u32,
    },
}

/// What an edit did to a rectangle of cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EditKind {
    /// Every cell of the rectangle is now blocked (some may have been before).
    Blocked,
    /// Every cell of the rectangle is now free (some may have been before).
    Freed,
    /// Cells of the rectangle were both blocked and freed (several edits merged).
    Mixed,
}

/// Whether cell `c` is in the half-open rectangle `rect` (see the module
/// docs: unlike `URect::contains`, the `max` edge is outside).
///
/// ```
/// use bevy_anyangle::grid::cell_in_rect;
/// use bevy_anyangle::prelude::{URect, UVec2};
///
/// let rect = URect::new(2, 2, 4, 3); // two cells: (2, 2) and (3, 2)
/// assert!(cell_in_rect(rect, UVec2::new(3, 2)));
/// assert!(!cell_in_rect(rect, UVec2::new(4, 2)));
/// assert!(rect.contains(UVec2::new(4, 2))); // Bevy's test counts the edge
/// ```
#[must_use]
#[inline]
pub fn cell_in_rect(rect: URect, c: UVec2) -> bool {
    c.cmpge(rect.min).all() && c.cmplt(rect.max).all()
}

/// One recorded edit: the rectangle of cells it touched and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridEdit {
    /// The [`Grid::version`] right after this edit.
    pub version: u64,
    /// Touched cells, a half-open rectangle (`max` excluded; see the module
    /// docs).
    pub rect: URect,
    /// What happened to them.
    pub kind: EditKind,
}

/// `log2` of the vertex lines per chunk of the vertex table: 8 lines, 128 KiB
/// on a grid 8192 cells wide.
const VERTEX_BAND_SHIFT: u32 = 3;

/// How many edits the log keeps before it merges them into one.
const EDIT_LOG_CAPACITY: usize = 1 << 16;

/// A bit-packed grid of free and blocked cells, with region labels.
///
/// See the [module docs](self) for the coordinate convention.
///
/// ```
/// use bevy_anyangle::grid::Grid;
///
/// let grid = Grid::from_ascii(
///     "....
///      .##.
///      ....",
/// )
/// .unwrap();
/// assert_eq!((grid.width(), grid.height()), (4, 3));
/// assert!(grid.is_free_xy(0, 0));
/// assert!(!grid.is_free_xy(1, 1));
/// assert!(!grid.is_free_xy(-1, 0), "outside the grid is blocked");
/// ```
#[derive(Clone, Debug)]
pub struct Grid {
    width: u32,
    height: u32,
    /// Free cells, row by row: line `y` is row `y`.
    rows: BitPlane,
    /// The same cells column by column (line `x` is column `x`), for fast
    /// vertical scans.
    cols: BitPlane,
    /// Region labels of the free cells.
    regions: Regions,
    /// Per vertex (line `y` holds vertices `(0..=width, y)`, `height + 1`
    /// lines): bits 0..8 the grid moves of [`VERTEX_MOVES`] that are allowed
    /// and end on a vertex that is not a double corner; bits 8..12 the free
    /// mask of the four cells around it (as [`Grid::vertex_mask`]).
    vertex_info: Bands<u16, VERTEX_BAND_SHIFT>,
    version: u64,
    edits: Vec<GridEdit>,
    /// Tiles of `regions` holding cells changed since regions were brought
    /// up to date (unsorted, maybe repeated).
    dirty_tiles: Vec<u32>,
}

impl PartialEq for Grid {
    /// Two grids are equal when they have the same size and the same free
    /// cells; versions and edit logs are not compared.
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width && self.height == other.height && self.rows == other.rows
    }
}

impl Grid {
    /// A `width x height` grid with every cell free.
    ///
    /// # Errors
    ///
    /// [`GridError::BadSize`] if a side is 0 or above [`MAX_DIMENSION`].
    pub fn new(width: u32, height: u32) -> Result<Self, GridError> {
        Self::filled(width, height, true)
    }

    /// A `width x height` grid with every cell blocked.
    ///
    /// # Errors
    ///
    /// [`GridError::BadSize`] if a side is 0 or above [`MAX_DIMENSION`].
    pub fn new_blocked(width: u32, height: u32) -> Result<Self, GridError> {
        Self::filled(width, height, false)
    }

    fn filled(width: u32, height: u32, free: bool) -> Result<Self, GridError> {
        check_dimensions(width, height)?;
        let mut rows = BitPlane::new(height, width);
        if free {
            for y in 0..height {
                rows.set_range(y, 0, width, true);
            }
        }
        Ok(Grid::from_rows(width, height, rows))
    }

    /// A grid of version 0 whose free cells are `rows` (`height` lines of
    /// `width` cells, a size [`check_dimensions`] accepts); derives everything
    /// else.
    pub(crate) fn from_rows(width: u32, height: u32, rows: BitPlane) -> Self {
        let mut cols = BitPlane::new(width, height);
        cols.fill_transposed(&rows, width, height);
        let regions = Regions::build(&rows, width, height);
        let mut grid = Grid {
            width,
            height,
            rows,
            cols,
            regions,
            vertex_info: Bands::new(height as usize + 1, width as usize + 1),
            version: 0,
            edits: Vec::new(),
            dirty_tiles: Vec::new(),
        };
        grid.refresh_vertices(0, 0, i64::from(width), i64::from(height));
        grid
    }

    /// Builds a grid from an ASCII picture, one text line per row (top row
    /// first).
    ///
    /// Leading and trailing white space of every line is ignored, and so are
    /// empty lines, so indented raw strings work. As in a Moving AI map, `.`,
    /// `G` and `S` are free and every other character is blocked (`#` and `@`
    /// read best).
    ///
    /// # Errors
    ///
    /// A [`MapParseError`] naming the line if the picture is empty, its rows
    /// differ in length, or it is larger than [`MAX_DIMENSION`].
    pub fn from_ascii(picture: &str) -> Result<Self, MapParseError> {
        movingai::parse_ascii(picture)
    }

    /// Parses a Moving AI `.map` file (see [`movingai`](self#regions) docs in
    /// `SPEC.md`): header lines `type`, `height`, `width` in any order, then
    /// `map`, then `height` rows of `width` characters; LF or CRLF.
    ///
    /// # Errors
    ///
    /// A [`MapParseError`] naming the offending line.
    pub fn from_movingai(text: &str) -> Result<Self, MapParseError> {
        movingai::parse_map(text)
    }

    /// Width in cells.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in cells.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Size in cells, as a vector.
    #[must_use]
    pub fn size(&self) -> UVec2 {
        UVec2::new(self.width, self.height)
    }

    /// Whether `cell` is a cell of the grid.
    #[must_use]
    #[inline]
    pub fn contains(&self, cell: UVec2) -> bool {
        cell.x < self.width && cell.y < self.height
    }

    /// Whether `(x, y)` is a cell of the grid. Takes signed coordinates, so
    /// points left of or below the grid answer `false` instead of needing a
    /// cast first.
    #[must_use]
    #[inline]
    pub fn contains_xy(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height)
    }

    /// Whether `cell` is free. Cells outside the grid are blocked.
    ///
    /// ```
    /// use bevy_anyangle::grid::Grid;
    /// use bevy_anyangle::prelude::UVec2;
    ///
    /// let grid = Grid::from_ascii("..\n.@").unwrap();
    /// assert!(grid.is_free(UVec2::new(1, 0)));
    /// assert!(!grid.is_free(UVec2::new(1, 1)));
    /// assert!(!grid.is_free(UVec2::new(2, 0))); // outside
    /// ```
    #[must_use]
    #[inline]
    pub fn is_free(&self, cell: UVec2) -> bool {
        self.is_free_xy(i64::from(cell.x), i64::from(cell.y))
    }

    /// Whether `cell` is blocked (the negation of [`Grid::is_free`]).
    #[must_use]
    #[inline]
    pub fn is_blocked(&self, cell: UVec2) -> bool {
        !self.is_free(cell)
    }

    /// [`Grid::is_free`] for signed coordinates, as geometry code produces
    /// them (a neighbour of column 0 is column -1). Cells outside the grid
    /// are blocked.
    #[must_use]
    #[inline]
    pub fn is_free_xy(&self, x: i64, y: i64) -> bool {
        if x < -1 || y < -1 || x > i64::from(self.width) || y > i64::from(self.height) {
            return false;
        }
        // Padding bits and rows are 0, so -1 and width/height read as blocked.
        self.rows.get(y, x)
    }

    /// [`Grid::is_blocked`] for signed coordinates (the negation of
    /// [`Grid::is_free_xy`]).
    #[must_use]
    #[inline]
    pub fn is_blocked_xy(&self, x: i64, y: i64) -> bool {
        !self.is_free_xy(x, y)
    }

    /// The free flags of the four cells around vertex `(x, y)`, as a 4-bit
    /// mask: bit 0 = cell `(x-1, y-1)`, bit 1 = `(x, y-1)`, bit 2 = `(x-1, y)`,
    /// bit 3 = `(x, y)`.
    #[must_use]
    #[inline]
    pub(crate) fn vertex_mask(&self, x: i64, y: i64) -> u8 {
        u8::from(self.is_free_xy(x - 1, y - 1))
            | u8::from(self.is_free_xy(x, y - 1)) << 1
            | u8::from(self.is_free_xy(x - 1, y)) << 2
            | u8::from(self.is_free_xy(x, y)) << 3
    }

    /// Whether vertex `(x, y)` is traversable: at least one of its four cells
    /// is free.
    #[must_use]
    #[inline]
    pub fn is_vertex_traversable(&self, x: i64, y: i64) -> bool {
        self.vertex_mask(x, y) != 0
    }

    /// Whether vertex `(x, y)` is a *double corner*: two blocked cells touching
    /// diagonally and two free cells touching diagonally. No path may squeeze
    /// through one.
    #[must_use]
    #[inline]
    pub fn is_double_corner(&self, x: i64, y: i64) -> bool {
        let mask = if (0..=i64::from(self.width)).contains(&x)
            && (0..=i64::from(self.height)).contains(&y)
        {
            (self.vertex_info(x, y) >> 8) as u8
        } else {
            self.vertex_mask(x, y)
        };
        matches!(mask, 0b1001 | 0b0110)
    }

    /// Whether the real point `p` is traversable: it lies in the closed square
    /// of at least one free cell. Non-finite points are not.
    #[must_use]
    pub fn is_point_traversable(&self, p: DVec2) -> bool {
        if !p.is_finite() {
            return false;
        }
        let (xs, ys) = (cell_span(p.x), cell_span(p.y));
        xs.into_iter()
            .flatten()
            .any(|x| ys.into_iter().flatten().any(|y| self.is_free_xy(x, y)))
    }

    /// Whether `p` lies in `[0, width] x [0, height]` (and is finite).
    #[must_use]
    pub fn contains_point(&self, p: DVec2) -> bool {
        p.is_finite()
            && p.x >= 0.0
            && p.y >= 0.0
            && p.x <= f64::from(self.width)
            && p.y <= f64::from(self.height)
    }

    /// A clone without the edit log: the same cells, regions and version,
    /// for a copy that only reads (the log can hold thousands of edits).
    pub(crate) fn clone_without_log(&self) -> Grid {
        Grid {
            width: self.width,
            height: self.height,
            rows: self.rows.clone(),
            cols: self.cols.clone(),
            regions: self.regions.clone(),
            vertex_info: self.vertex_info.clone(),
            version: self.version,
            edits: Vec::new(),
            dirty_tiles: self.dirty_tiles.clone(),
        }
    }

    /// How many bands of rows this grid still shares with `other` (a clone
    /// of it, or of a grid it was cloned from, not written to since): a
    /// measure of kinship, read without looking at a cell.
    pub(crate) fn shared_row_bands(&self, other: &Grid) -> usize {
        if self.size() == other.size() {
            self.rows.shared_bands(&other.rows)
        } else {
            0
        }
    }

    /// Calls `f(x, y)` for every cell whose state differs between this grid
    /// and `other` (same size), reading only the rows that are not shared
    /// by the two (clones share all rows until one is written to); returns
    /// how many bands of rows were not shared.
    pub(crate) fn for_each_difference(&self, other: &Grid, f: impl FnMut(i64, i64)) -> usize {
        debug_assert_eq!(self.size(), other.size());
        let mut f = f;
        self.rows.for_each_difference(&other.rows, |y, x| f(x, y))
    }

    /// Number of free cells.
    #[must_use]
    pub fn free_count(&self) -> u64 {
        self.rows.count_free()
    }

    /// The grid's version: 0 when built, plus one per edit that changed a cell.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Sets one cell free or blocked.
    ///
    /// Bumps the version and logs the edit if the cell changed; region labels
    /// are brought up to date before it returns. That costs the relabelling
    /// of the cell's 64 x 64 tile, plus the smaller side in tiles when the
    /// edit splits or merges regions; batch many changes with
    /// [`Grid::edit`] to relabel once.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the cell is not in the grid.
    pub fn set_free(&mut self, cell: UVec2, free: bool) -> Result<bool, GridError> {
        let rect = self.cell_rect(cell)?;
        self.set_rect_free(rect, free)
    }

    /// The one-cell rectangle of `cell`, or why there is none.
    fn cell_rect(&self, cell: UVec2) -> Result<URect, GridError> {
        if self.contains(cell) {
            Ok(URect::from_corners(cell, cell + UVec2::ONE))
        } else {
            Err(GridError::OutOfBounds {
                x: cell.x,
                y: cell.y,
                width: self.width,
                height: self.height,
            })
        }
    }

    /// About how many bytes a `width x height` grid holds (cells twice, by
    /// rows and by columns; region labels; the vertex table). Building a
    /// grid first checks that this much can be allocated and answers
    /// [`GridError::OutOfMemory`] if not, so that a huge grid on a small
    /// machine is an error rather than an abort.
    #[must_use]
    pub fn bytes_needed(width: u32, height: u32) -> u64 {
        let (w, h) = (u64::from(width), u64::from(height));
        let bits = |lines: u64, cells: u64| lines * cells.div_ceil(64) * 8;
        bits(h, w) + bits(w, h) + 2 * w * h + 2 * (w + 1) * (h + 1)
    }

    /// Sets every cell of `rect` (half-open: `max` excluded, see the module
    /// docs) free or blocked. Returns whether any cell changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the rectangle leaves the grid.
    pub fn set_rect_free(&mut self, rect: URect, free: bool) -> Result<bool, GridError> {
        let changed = self.apply_rect(rect, free)?;
        if changed {
            self.update_regions();
        }
        Ok(changed)
    }

    /// Applies several edits at once and relabels regions once at the end.
    ///
    /// Returns whether any cell changed.
    ///
    /// # Errors
    ///
    /// The first [`GridError`] an edit returns; edits before it stay applied.
    ///
    /// ```
    /// use bevy_anyangle::grid::Grid;
    /// use bevy_anyangle::prelude::{URect, UVec2};
    ///
    /// let mut grid = Grid::new(8, 8).unwrap();
    /// grid.edit(|e| {
    ///     e.set_free(UVec2::new(1, 1), false)?;
    ///     e.set_rect_free(URect::new(3, 0, 4, 8), false)
    /// })
    /// .unwrap();
    /// assert!(!grid.same_region(UVec2::new(0, 0), UVec2::new(7, 7)));
    /// ```
    pub fn edit<R>(
        &mut self,
        f: impl FnOnce(&mut GridEditor<'_>) -> Result<R, GridError>,
    ) -> Result<R, GridError> {
        let before = self.version;
        let result = f(&mut GridEditor { grid: self });
        if self.version != before {
            self.update_regions();
        }
        result
    }

    /// Applies an edit to the cells and the vertex table, without
    /// relabelling regions; bumps version and logs if changed.
    fn apply_rect(&mut self, rect: URect, free: bool) -> Result<bool, GridError> {
        if rect.max.x > self.width || rect.max.y > self.height {
            return Err(GridError::OutOfBounds {
                x: rect.max.x.saturating_sub(1).max(rect.min.x),
                y: rect.max.y.saturating_sub(1).max(rect.min.y),
                width: self.width,
                height: self.height,
            });
        }
        if rect.is_empty() {
            return Ok(false);
        }
        let mut changed = false;
        for y in rect.min.y..rect.max.y {
            changed |= self.rows.set_range(y, rect.min.x, rect.max.x, free);
        }
        if changed {
            for x in rect.min.x..rect.max.x {
                self.cols.set_range(x, rect.min.y, rect.max.y, free);
            }
            // A cell change alters the masks of its corners and the moves of
            // vertices up to one step further.
            self.refresh_vertices(
                i64::from(rect.min.x) - 1,
                i64::from(rect.min.y) - 1,
                i64::from(rect.max.x) + 1,
                i64::from(rect.max.y) + 1,
            );
            self.regions.tiles_touching(rect, &mut self.dirty_tiles);
            self.version += 1;
            self.log_edit(GridEdit {
                version: self.version,
                rect,
                kind: if free {
                    EditKind::Freed
                } else {
                    EditKind::Blocked
                },
            });
        }
        Ok(changed)
    }

    /// Counts an edit of `rect` that changed none of this grid's cells (a
    /// terrain change another profile's grid sees): bumps the version and
    /// logs the rectangle as [`EditKind::Mixed`].
    #[cfg(feature = "plugin")]
    pub(crate) fn touch(&mut self, rect: URect) {
        self.version += 1;
        self.log_edit(GridEdit {
            version: self.version,
            rect,
            kind: EditKind::Mixed,
        });
    }

    fn log_edit(&mut self, edit: GridEdit) {
        if self.edits.len() >= EDIT_LOG_CAPACITY {
            let merged = self.edits.drain(..).fold(edit, |acc, e| GridEdit {
                version: acc.version.max(e.version),
                rect: acc.rect.union(e.rect),
                kind: if acc.kind == e.kind {
                    acc.kind
                } else {
                    EditKind::Mixed
                },
            });
            self.edits.push(merged);
        } else {
            self.edits.push(edit);
        }
    }

    /// The edits logged since version `since` (exclusive), oldest first.
    ///
    /// The log keeps the last edits only; when it is full, old edits merge
    /// into one bounding rectangle of kind [`EditKind::Mixed`] (conservative:
    /// it covers every change).
    pub fn edits_since(&self, since: u64) -> impl Iterator<Item = &GridEdit> {
        self.edits.iter().filter(move |e| e.version > since)
    }

    /// Forgets logged edits up to and including `version`.
    pub fn clear_edits_through(&mut self, version: u64) {
        self.edits.retain(|e| e.version > version);
    }

    /// The region of cell `(x, y)`, or `None` if it is blocked or outside.
    #[must_use]
    #[inline]
    pub fn region(&self, x: i64, y: i64) -> Option<RegionId> {
        if !self.contains_xy(x, y) {
            return None;
        }
        self.regions.get(x as u32, y as u32).map(RegionId)
    }

    /// Whether two cells are free and 4-connected. O(1).
    #[must_use]
    pub fn same_region(&self, a: UVec2, b: UVec2) -> bool {
        match (
            self.region(i64::from(a.x), i64::from(a.y)),
            self.region(i64::from(b.x), i64::from(b.y)),
        ) {
            (Some(ra), Some(rb)) => ra == rb,
            _ => false,
        }
    }

    /// Number of connected regions of free cells.
    #[must_use]
    pub fn region_count(&self) -> u32 {
        self.regions.count()
    }

    /// The free cells row by row.
    #[inline]
    pub(crate) fn rows(&self) -> &BitPlane {
        &self.rows
    }

    /// The free cells column by column.
    #[inline]
    pub(crate) fn cols(&self) -> &BitPlane {
        &self.cols
    }

    /// Words of stored row `y` (`-1..=height`): bit `x + 1` is cell `x`, set
    /// when free; padding is 0.
    #[inline]
    pub(crate) fn row_words(&self, y: i64) -> &[u64] {
        self.rows.line(y)
    }

    /// Brings the region labels up to date after edits.
    fn update_regions(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty_tiles);
        dirty.sort_unstable();
        dirty.dedup();
        if !dirty.is_empty() {
            self.regions.update(&self.rows, &dirty);
        }
        dirty.clear();
        self.dirty_tiles = dirty;
    }

    /// Recomputes the vertex table for vertices `(x0..=x1, y0..=y1)`
    /// (clamped to the grid), and the cell masks one vertex further out;
    /// writes (and so copies shared chunks) only where something changed.
    fn refresh_vertices(&mut self, x0: i64, y0: i64, x1: i64, y1: i64) {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x0, y0, x1, y1) = (x0.max(0), y0.max(0), x1.min(w), y1.min(h));
        let mut new: Vec<u16> = Vec::new();
        // Pass 1: the cell masks, one vertex further out (pass 2 reads them).
        let (mx0, mx1) = ((x0 - 1).max(0) as usize, (x1 + 1).min(w) as usize);
        for y in (y0 - 1).max(0)..=(y1 + 1).min(h) {
            // Stored bit x is cell x - 1, bit x + 1 is cell x.
            let (up, down) = (self.rows.line(y - 1), self.rows.line(y));
            let bit = |words: &[u64], b: usize| (words[b / 64] >> (b % 64) & 1) as u16;
            let old = &self.vertex_info.line(y as usize)[mx0..=mx1];
            new.clear();
            new.extend(old.iter().enumerate().map(|(i, info)| {
                let b = mx0 + i;
                let mask =
                    bit(up, b) | bit(up, b + 1) << 1 | bit(down, b) << 2 | bit(down, b + 1) << 3;
                // Keep the moves: the ring around the refreshed area is not
                // recomputed in pass 2 (and its masks did not change).
                *info & 0xff | mask << 8
            }));
            if old != new.as_slice() {
                self.vertex_info.line_mut(y as usize)[mx0..=mx1].copy_from_slice(&new);
            }
        }
        // Pass 2: the moves. A move needs a free cell beside it, which a
        // move off the grid never has, so neighbours are inside.
        let (x0, x1) = (x0 as usize, x1 as usize);
        for y in y0..=y1 {
            let info = &self.vertex_info;
            let line = |dy: i64| {
                let l = y + dy;
                if (0..=h).contains(&l) {
                    info.line(l as usize)
                } else {
                    &[]
                }
            };
            let lines = [line(-1), line(0), line(1)];
            let old = &lines[1][x0..=x1];
            new.clear();
            new.extend(old.iter().enumerate().map(|(i, &here)| {
                let x = x0 + i;
                let m = (here >> 8) as u8;
                let mut moves = 0u16;
                for (k, &(dx, dy, need)) in VERTEX_MOVES.iter().enumerate() {
                    if m & need != 0
                        && !matches!(
                            lines[(dy + 1) as usize][(x as i64 + dx) as usize] >> 8,
                            0b1001 | 0b0110
                        )
                    {
                        moves |= 1 << k;
                    }
                }
                here & 0xff00 | moves
            }));
            if old != new.as_slice() {
                self.vertex_info.line_mut(y as usize)[x0..=x1].copy_from_slice(&new);
            }
        }
    }

    /// The precomputed info of vertex `(x, y)` (see the field docs); the
    /// vertex must lie in `[0, width] x [0, height]`.
    #[inline]
    pub(crate) fn vertex_info(&self, x: i64, y: i64) -> u16 {
        self.vertex_info.get(y as usize, x as usize)
    }

    /// How many chunks of storage this grid does not share with `other` (a
    /// clone of it, or a grid it was cloned from): bulky ones (bands of
    /// cells and of the vertex table, tiles of cell labels), and region id
    /// tables (a few ids per tile).
    #[cfg(test)]
    pub(crate) fn unshared_chunks(&self, other: &Grid) -> (usize, usize) {
        let (labels, ids) = self.regions.unshared_with(&other.regions);
        (
            self.rows.unshared_with(&other.rows)
                + self.cols.unshared_with(&other.cols)
                + self.vertex_info.unshared_with(&other.vertex_info)
                + labels,
            ids,
        )
    }
}

/// Checks a grid size: both sides in `1..=MAX_DIMENSION`.
fn check_dimensions(width: u32, height: u32) -> Result<(), GridError> {
    if width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION {
        return Err(GridError::BadSize { width, height });
    }
    // Ask for the whole amount once (untouched, so nearly free) and give it
    // back: if it cannot be had, the grid's own allocations would abort.
    let bytes = Grid::bytes_needed(width, height);
    let mut probe: Vec<u8> = Vec::new();
    if usize::try_from(bytes)
        .ok()
        .and_then(|n| probe.try_reserve_exact(n).ok())
        .is_none()
    {
        return Err(GridError::OutOfMemory {
            width,
            height,
            bytes,
        });
    }
    Ok(())
}

/// The eight grid moves from a vertex: offset, and the cells around the
/// vertex (bits of [`Grid::vertex_mask`]) of which at least one must be free.
/// A diagonal move crosses one cell; a straight move runs along an edge.
pub(crate) const VERTEX_MOVES: [(i64, i64, u8); 8] = [
    (1, 0, 0b1010),
    (-1, 0, 0b0101),
    (0, 1, 0b1100),
    (0, -1, 0b0011),
    (1, 1, 0b1000),
    (-1, -1, 0b0001),
    (1, -1, 0b0010),
    (-1, 1, 0b0100),
];

/// A handle for batched edits, see [`Grid::edit`].
pub struct GridEditor<'a> {
    grid: &'a mut Grid,
}

impl GridEditor<'_> {
    /// Sets one cell free or blocked; returns whether it changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the cell is not in the grid.
    pub fn set_free(&mut self, cell: UVec2, free: bool) -> Result<bool, GridError> {
        let rect = self.grid.cell_rect(cell)?;
        self.grid.apply_rect(rect, free)
    }

    /// Sets every cell of `rect` (half-open: `max` excluded, see
    /// [`cell_in_rect`]) free or blocked; returns
    /// whether any changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the rectangle leaves the grid.
    pub fn set_rect_free(&mut self, rect: URect, free: bool) -> Result<bool, GridError> {
        self.grid.apply_rect(rect, free)
    }

    /// Read access to the grid being edited (regions are stale until the
    /// edit ends).
    #[must_use]
    pub fn grid(&self) -> &Grid {
        self.grid
    }
}

/// The cells (one or two) whose closed span on one axis contains `v`:
/// `[floor v]`, or `[v - 1, v]` when `v` is an integer.
#[inline]
pub(crate) fn cell_span(v: f64) -> [Option<i64>; 2] {
    let f = v.floor();
    let c = f as i64;
    if f == v {
        [Some(c - 1), Some(c)]
    } else {
        [Some(c), None]
    }
}

#[cfg(test)]
mod edit_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_far_outside_are_errors_not_overflows() {
        let mut g = Grid::new(4, 4).unwrap();
        let far = UVec2::new(u32::MAX, 0);
        let outside = GridError::OutOfBounds {
            x: u32::MAX,
            y: 0,
            width: 4,
            height: 4,
        };
        assert_eq!(g.set_free(far, false), Err(outside.clone()));
        assert_eq!(g.edit(|e| e.set_free(far, false)), Err(outside));
        assert!(matches!(
            g.set_free(UVec2::new(3, u32::MAX), false),
            Err(GridError::OutOfBounds { y: u32::MAX, .. })
        ));
        assert!(
            g.set_rect_free(URect::new(0, 0, u32::MAX, 1), false)
                .is_err()
        );
        // An inverted rectangle holds no cell: nothing changes.
        let inverted = URect {
            min: UVec2::new(3, 3),
            max: UVec2::new(1, 1),
        };
        assert_eq!(g.set_rect_free(inverted, false), Ok(false));
        assert_eq!((g.free_count(), g.version()), (16, 0));
    }

    #[test]
    fn the_largest_grid_needs_gigabytes() {
        let most = Grid::bytes_needed(MAX_DIMENSION, MAX_DIMENSION);
        assert!(most > 4 << 30, "{most}");
        assert!(Grid::bytes_needed(1, 1) < 64);
    }

    /// Under a 4 GiB address-space limit the largest grid is a typed error,
    /// not an abort. The test runs itself again under `ulimit -v`.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_grid_beyond_the_memory_limit_is_an_error() {
        const LIMITED: &str = "ANYANGLE_TEST_MEMORY_LIMITED";
        if std::env::var_os(LIMITED).is_some() {
            let e = Grid::new(MAX_DIMENSION, MAX_DIMENSION).unwrap_err();
            assert!(matches!(e, GridError::OutOfMemory { .. }), "{e:?}");
            // A grid that fits still builds.
            assert!(Grid::new(4096, 4096).is_ok());
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 4194304 && exec \"$0\" --exact grid::tests::a_grid_beyond_the_memory_limit_is_an_error --test-threads 1")
            .arg(exe)
            .env(LIMITED, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 passed"), "{text}");
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(matches!(Grid::new(0, 3), Err(GridError::BadSize { .. })));
        assert!(matches!(
            Grid::new(3, MAX_DIMENSION + 1),
            Err(GridError::BadSize { .. })
        ));
    }

    #[test]
    fn wide_rows_span_words() {
        let mut g = Grid::new(130, 3).unwrap();
        assert_eq!(g.free_count(), 390);
        assert!(g.is_free_xy(129, 2) && !g.is_free_xy(130, 2) && !g.is_free_xy(-1, 0));
        g.set_rect_free(URect::new(60, 1, 70, 2), false).unwrap();
        for x in 0..130 {
            assert_eq!(g.is_free_xy(x, 1), !(60..70).contains(&x), "x = {x}");
        }
        assert_eq!(g.version(), 1);
        assert!(!g.set_rect_free(URect::new(60, 1, 70, 2), false).unwrap());
        assert_eq!(g.version(), 1, "no-op edits do not bump the version");
    }

    #[test]
    fn edits_keep_regions_current() {
        let mut g = Grid::new(5, 5).unwrap();
        assert_eq!(g.region_count(), 1);
        g.set_rect_free(URect::new(2, 0, 3, 5), false).unwrap();
        assert_eq!(g.region_count(), 2);
        assert!(!g.same_region(UVec2::new(0, 0), UVec2::new(4, 4)));
        g.set_free(UVec2::new(2, 4), true).unwrap();
        assert_eq!(g.region_count(), 1);
        assert!(g.same_region(UVec2::new(0, 0), UVec2::new(4, 4)));
        let edits: Vec<_> = g.edits_since(0).copied().collect();
        assert_eq!(edits.len(), 2);
        assert_eq!(edits[1].kind, EditKind::Freed);
        assert_eq!(edits[1].rect, URect::new(2, 4, 3, 5));
    }

    /// Regression: refreshing the move table after an edit cleared the
    /// moves of the vertices just outside the refreshed area, so searches
    /// near an edit found no path.
    #[test]
    fn edits_leave_the_same_move_table_as_a_fresh_build() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as u32
        };
        let mut g = Grid::new(40, 30).unwrap();
        for _ in 0..200 {
            let (x, y) = (next(40), next(30));
            let (w, h) = (1 + next(4).min(39 - x), 1 + next(4).min(29 - y));
            g.set_rect_free(URect::new(x, y, x + w, y + h), next(3) == 0)
                .unwrap();
            // Built in one go from a picture: no incremental refresh.
            let picture: String = (0..30)
                .map(|cy| {
                    let row: String = (0..40)
                        .map(|cx| if g.is_free_xy(cx, cy) { '.' } else { '#' })
                        .collect();
                    row + "\n"
                })
                .collect();
            let fresh = Grid::from_ascii(&picture).unwrap();
            assert_eq!(g.vertex_info, fresh.vertex_info);
            assert_eq!(g.cols, fresh.cols);
            assert_eq!(g.region_count(), fresh.region_count());
        }
    }

    #[test]
    fn a_batch_of_many_small_edits_is_logged_edit_by_edit() {
        let mut g = Grid::new(300, 300).unwrap();
        g.edit(|e| {
            for i in 0..2000 {
                e.set_free(UVec2::new(i % 300, i / 300 * 7), false)?;
            }
            Ok(())
        })
        .unwrap();
        let edits: Vec<_> = g.edits_since(0).copied().collect();
        assert_eq!(edits.len(), 2000);
        assert!(
            edits
                .iter()
                .all(|e| e.kind == EditKind::Blocked && e.rect.size() == UVec2::ONE)
        );
        assert_eq!(edits[1999].version, 2000);
    }

    #[test]
    fn a_full_edit_log_merges_into_one_covering_edit() {
        let mut g = Grid::new(256, 257).unwrap();
        let n = EDIT_LOG_CAPACITY as u32;
        g.edit(|e| {
            for i in 0..n {
                e.set_free(UVec2::new(i % 256, i / 256), false)?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(g.edits_since(0).count(), EDIT_LOG_CAPACITY);
        g.set_free(UVec2::new(3, 0), true).unwrap();
        let edits: Vec<_> = g.edits_since(0).copied().collect();
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].rect, URect::new(0, 0, 256, 256));
        assert_eq!(edits[0].kind, EditKind::Mixed);
        assert_eq!(edits[0].version, g.version());
    }

    #[test]
    fn out_of_bounds_edit_is_an_error() {
        let mut g = Grid::new(4, 4).unwrap();
        assert!(matches!(
            g.set_free(UVec2::new(4, 0), false),
            Err(GridError::OutOfBounds { .. })
        ));
    }

    #[test]
    fn diagonal_contact_does_not_connect() {
        let g = Grid::from_ascii(".#\n#.").unwrap();
        assert_eq!(g.region_count(), 2);
        assert!(g.is_double_corner(1, 1));
        assert!(!g.is_double_corner(0, 0));
    }

    #[test]
    fn points_on_lines_use_either_cell() {
        let g = Grid::from_ascii(".#\n##").unwrap();
        assert!(g.is_point_traversable(DVec2::new(1.0, 0.5)));
        assert!(g.is_point_traversable(DVec2::new(1.0, 1.0)));
        assert!(!g.is_point_traversable(DVec2::new(1.5, 0.5)));
        assert!(!g.is_point_traversable(DVec2::new(f64::NAN, 0.5)));
    }
}
