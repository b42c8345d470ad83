//! Edits of a [`Grid`]: cells set free or blocked, one by one or in
//! batches, logged by version, with region labels brought up to date.

use bevy_math::{URect, UVec2};

use super::{EDIT_LOG_CAPACITY, EditKind, Grid, GridEdit, GridError};

impl Grid {
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
}

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
    /// [`cell_in_rect`](super::cell_in_rect)) free or blocked; returns
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
