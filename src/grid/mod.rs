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
mod cells;
mod chunks;
mod edit;
mod movingai;
mod regions;
mod vertices;

pub(crate) use bits::{BitPlane, next_bit, prev_bit};
pub(crate) use cells::cell_span;
pub use edit::GridEditor;
pub(crate) use vertices::VERTEX_MOVES;

use chunks::Bands;
use regions::Regions;

pub use movingai::{MapParseError, MapParseErrorKind, Scenario, ScenarioEntry};
pub(crate) use movingai::{ascii_rows, check_row, map_rows};

use bevy_math::{URect, UVec2};
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

#[cfg(test)]
mod edit_tests;

#[cfg(test)]
mod tests;
