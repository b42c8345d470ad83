//! Meshes built on demand: chunks built as the searches reach them, so that build time and memory follow where agents go.
//!
//! A mesh made with [`NavMesh::on_demand`] starts with no chunk. A search
//! on it that needs a chunk not built yet (the one its start or goal lies
//! in, or one a path may cross before it can prove its answer shortest)
//! stops and names it; the caller builds it (`NavMesh::build_chunks`)
//! and the search goes on where it stopped
//! ([`Planner::plan_on_growing_mesh`](crate::search::Planner::plan_on_growing_mesh)
//! does both). Each chunk is built exactly as a mesh built chunk by chunk
//! builds it, and the search crosses into a chunk only through its border
//! edges, so the answers are those of the whole mesh.

use std::sync::Arc;

use super::offset::Disc;
use super::sync::{WORK_PER_CHUNK, WORK_PER_VERTEX};
use super::{Chunk, LOCAL_BITS, NavMesh, PORTAL, UNBUILT};
use crate::clearance::ClearanceError;
use crate::grid::Grid;

impl NavMesh {
    /// A mesh of `grid` for agents of `radius` cells (0: points, as
    /// [`NavMesh::build`]; otherwise as [`NavMesh::with_radius`]) with no
    /// chunk built yet: searches build the chunks they reach (see
    /// [`Planner::plan_on_growing_mesh`](crate::search::Planner::plan_on_growing_mesh)).
    /// Its chunks are never meshed in groups, so a search crossing a large
    /// open area expands somewhat more polygons than on a mesh built whole;
    /// an edit rebuilds only the chunks built so far that it touches.
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    /// use bevy_anyangle::prelude::*;
    ///
    /// let grid = Grid::new(1024, 1024).unwrap();
    /// let mut mesh = NavMesh::on_demand(&grid, 0.0).unwrap();
    /// assert_eq!(mesh.chunk_count(), 0);
    /// let path = Planner::new()
    ///     .plan_on_growing_mesh(&mut mesh, DVec2::new(10.5, 10.5), DVec2::new(100.5, 40.5), &PlanOptions::default())
    ///     .unwrap();
    /// assert_eq!(path.waypoints.len(), 2);
    /// // Only the chunks around the two points were built.
    /// assert!(mesh.chunk_count() <= 4);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`NavMesh::with_radius`].
    pub fn on_demand(grid: &Grid, radius: f64) -> Result<Self, ClearanceError> {
        let mut mesh = NavMesh::unbuilt_for(grid, Disc::checked(radius)?, 1);
        mesh.make_on_demand();
        Ok(mesh)
    }

    /// Makes this mesh, just made with every chunk still to build, one
    /// built on demand: nothing is scheduled.
    pub(super) fn make_on_demand(&mut self) {
        self.on_demand = true;
        self.to_build.clear();
        self.to_join.clear();
        self.to_link.clear();
    }

    /// Whether the mesh builds its chunks as searches reach them (see
    /// [`NavMesh::on_demand`]).
    #[must_use]
    pub fn is_on_demand(&self) -> bool {
        self.on_demand
    }

    /// A number naming the mesh this one is a version of: meshes made
    /// apart have different ones; a clone, or the mesh brought up to date
    /// or grown, keeps it. Of two meshes built on demand of one lineage and
    /// one grid, the polygons of the chunks both have are the same, with
    /// the same ids.
    #[cfg(feature = "plugin")]
    pub(crate) fn lineage(&self) -> u64 {
        self.lineage
    }

    /// How many chunk slots the mesh has (built or not).
    #[must_use]
    pub fn slot_count(&self) -> usize {
        self.chunks.len()
    }

    /// Side of a chunk, in mesh coordinates.
    #[inline]
    pub(crate) fn chunk_side(&self) -> i64 {
        i64::from(self.chunk) * self.scale()
    }

    /// Whether chunk slot `c` is built.
    #[inline]
    pub(crate) fn is_built(&self, c: u32) -> bool {
        self.chunks[c as usize].base != UNBUILT
    }

    /// The chunk slot of grid cell `(x, y)` (clamped to the grid).
    pub(crate) fn slot_of_cell(&self, x: i64, y: i64) -> u32 {
        let s = i64::from(self.chunk);
        let cx = x.clamp(0, i64::from(self.grid.width()) - 1) / s;
        let cy = y.clamp(0, i64::from(self.grid.height()) - 1) / s;
        (cy as u32) * self.chunks_x + cx as u32
    }

    /// Pushes onto `out` the slots not built yet among those of `cells`
    /// (grid cells).
    pub(crate) fn unbuilt_of_cells(&self, cells: &[[i64; 2]], out: &mut Vec<u32>) {
        for cell in cells {
            let c = self.slot_of_cell(cell[0], cell[1]);
            if !self.is_built(c) && !out.contains(&c) {
                out.push(c);
            }
        }
    }

    /// Pushes onto `out` the slots not built yet that hold a cell within
    /// `r` cells (on either axis) of point `p` (in cells).
    pub(crate) fn unbuilt_near(&self, p: bevy_math::DVec2, r: f64, out: &mut Vec<u32>) {
        let (a, b) = (
            self.slot_of_cell((p.x - r).floor() as i64, (p.y - r).floor() as i64),
            self.slot_of_cell((p.x + r).floor() as i64, (p.y + r).floor() as i64),
        );
        let (x0, y0, x1, y1) = (
            a % self.chunks_x,
            a / self.chunks_x,
            b % self.chunks_x,
            b / self.chunks_x,
        );
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = y * self.chunks_x + x;
                if !self.is_built(c) && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }

    /// Pushes onto `out` the slots not built yet of the cells whose closed
    /// squares hold point `p` (in cells; those a point location reads).
    pub(crate) fn unbuilt_at(&self, p: bevy_math::DVec2, out: &mut Vec<u32>) {
        let xs = [p.x.floor() as i64, p.x.ceil() as i64 - 1];
        let ys = [p.y.floor() as i64, p.y.ceil() as i64 - 1];
        for y in ys {
            for x in xs {
                let c = self.slot_of_cell(x, y);
                if !self.is_built(c) && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }

    /// For a look around point `p` (in cells) that reads the cells within
    /// `r` of it and is settled once it finds an answer within `r`, up to
    /// `within` cells: pushes onto `out` the slots it needs next, ring by
    /// ring (`r` = 2, 4, 8, ..., `within`), and returns `true`; `false`
    /// once the chunks within the `r` at which `found(self, r)` holds (or
    /// within `within`) are built.
    pub(crate) fn want_rings(
        &self,
        p: bevy_math::DVec2,
        within: f64,
        out: &mut Vec<u32>,
        mut found: impl FnMut(&NavMesh, f64) -> bool,
    ) -> bool {
        let mut r = within.min(2.0);
        loop {
            let before = out.len();
            self.unbuilt_near(p, r + 1.0, out);
            if out.len() > before {
                return true;
            }
            if r >= within || found(self, r) {
                return false;
            }
            r = (r * 2.0).min(within);
        }
    }

    /// Pushes onto `out` every slot not built yet.
    pub(crate) fn unbuilt_all(&self, out: &mut Vec<u32>) {
        out.extend((0..self.chunks.len() as u32).filter(|&c| !self.is_built(c)));
    }

    /// The chunk slot beyond edge `m` of polygon `id`, an edge on its
    /// chunk's border whose neighbour is not built ([`PORTAL`]).
    pub(crate) fn slot_across(&self, id: u32, m: usize) -> u32 {
        let (chunk, p) = self.chunk_of(id);
        debug_assert_eq!(chunk.slots[chunk.start[p] as usize + m].neigh, PORTAL);
        let slots = &chunk.slots[chunk.start[p] as usize..chunk.start[p + 1] as usize];
        let (a, b) = (slots[m].v, slots[(m + 1) % slots.len()].v);
        let scale = self.scale();
        let rect = chunk.rect;
        let cx = (id >> LOCAL_BITS) % self.chunks_x;
        let cy = (id >> LOCAL_BITS) / self.chunks_x;
        let on = |v: i32, cells: i64| i64::from(v) == cells * scale;
        let (x, y) = if on(a[1], rect.y0) && on(b[1], rect.y0) {
            (cx, cy.wrapping_sub(1))
        } else if on(a[1], rect.y1) && on(b[1], rect.y1) {
            (cx, cy + 1)
        } else if on(a[0], rect.x0) && on(b[0], rect.x0) {
            (cx.wrapping_sub(1), cy)
        } else {
            (cx + 1, cy)
        };
        debug_assert!(
            x < self.chunks_x && y < self.chunks_y,
            "a portal inside the grid"
        );
        y * self.chunks_x + x
    }

    /// Builds the chunks of a mesh built on demand that hold the cells of
    /// the rectangle from `min` to `max` (inclusive, clamped to the grid)
    /// and are not built yet, ahead of the searches (around a base, at
    /// load time); returns how many it built. On a mesh built whole it
    /// builds nothing.
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    /// use bevy_anyangle::prelude::*;
    ///
    /// let grid = Grid::new(512, 512).unwrap();
    /// let mut mesh = NavMesh::on_demand(&grid, 0.5).unwrap();
    /// // 32 x 32-cell chunks for agents of a radius: 2 x 2 of them.
    /// assert_eq!(mesh.build_area(UVec2::new(0, 0), UVec2::new(63, 40)), 4);
    /// assert_eq!(mesh.chunk_count(), 4);
    /// assert_eq!(mesh.build_area(UVec2::new(10, 10), UVec2::new(20, 20)), 0);
    /// ```
    pub fn build_area(&mut self, min: bevy_math::UVec2, max: bevy_math::UVec2) -> usize {
        if !self.on_demand {
            return 0;
        }
        let (a, b) = (
            self.slot_of_cell(i64::from(min.x), i64::from(min.y)),
            self.slot_of_cell(i64::from(max.x), i64::from(max.y)),
        );
        let mut slots = Vec::new();
        for y in (a / self.chunks_x)..=(b / self.chunks_x) {
            for x in (a % self.chunks_x)..=(b % self.chunks_x) {
                let c = y * self.chunks_x + x;
                if !self.is_built(c) {
                    slots.push(c);
                }
            }
        }
        self.build_chunks(&slots);
        slots.len()
    }

    /// Builds the chunks of `slots` not built yet and links them to the
    /// chunks around them; returns the work it took (in the units of
    /// `NavMesh::sync_within`). Only for a mesh built on demand (or a
    /// complete one, where it does nothing).
    pub(crate) fn build_chunks(&mut self, slots: &[u32]) -> u64 {
        let mut work = 0;
        let mut built: Vec<u32> = Vec::with_capacity(slots.len());
        for &c in slots {
            if (c as usize) >= self.chunks.len() || self.is_built(c) {
                continue;
            }
            let chunk: Chunk = self.make_chunk(self.rect(c), c);
            work += WORK_PER_CHUNK + WORK_PER_VERTEX * chunk.slots.len() as u64;
            self.chunks[c as usize] = Arc::new(chunk);
            built.push(c);
        }
        let w = self.chunks_x;
        for &c in &built {
            let (x, y) = (c % w, c / w);
            self.link(c);
            if x > 0 {
                self.link(c - 1);
            }
            if x + 1 < w {
                self.link(c + 1);
            }
            if y > 0 {
                self.link(c - w);
            }
            if y + 1 < self.chunks_y {
                self.link(c + w);
            }
        }
        work
    }
}
