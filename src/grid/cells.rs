//! Cell and point queries on a [`Grid`]: its bounds, which cells are free,
//! their regions, and the raw bit rows the searches scan.

use bevy_math::{DVec2, UVec2};

use super::{BitPlane, Grid, RegionId};

impl Grid {
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

    /// Number of free cells.
    #[must_use]
    pub fn free_count(&self) -> u64 {
        self.rows.count_free()
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
}

/// The cells (one or two) whose closed span on one axis contains `v`:
/// `[floor v]`, or `[v - 1, v]` when `v` is an integer. (Beyond the `i64`
/// range the cell saturates, far outside any grid.)
#[inline]
pub(crate) fn cell_span(v: f64) -> [Option<i64>; 2] {
    let f = v.floor();
    let c = f as i64;
    if f == v {
        [c.checked_sub(1), Some(c)]
    } else {
        [Some(c), None]
    }
}
