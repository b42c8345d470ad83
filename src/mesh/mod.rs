//! Navigation meshes: the free space of a grid as convex polygons, built in chunks and kept in step with the grid's edits.
//!
//! A [`NavMesh`] covers exactly the points a path may use under `SPEC.md`:
//! every free cell's closed square, where two free cells that touch only at
//! a corner between two blocked cells meet at that point alone (no polygon
//! edge joins them, so no path squeezes through). Its polygons are the
//! grid's free space triangulated (constrained Delaunay) and merged into
//! large convex pieces, chunk by chunk: the grid is cut into chunks of
//! [`CHUNK`] x [`CHUNK`] cells, polygons never cross a chunk's border, and an edit
//! rebuilds only the chunks it touches ([`NavMesh::sync`]). For agents of a
//! radius, [`NavMesh::with_radius`] meshes the points where their disc fits
//! instead (the obstacles grown by a polygon around the disc). Polyanya
//! ([`Algorithm::Polyanya`](crate::search::Algorithm::Polyanya)) searches
//! it.
//!
//! ```
//! use bevy_anyangle::mesh::NavMesh;
//! use bevy_anyangle::prelude::*;
//!
//! let mut grid = Grid::from_ascii(
//!     "......
//!      ..##..
//!      ......",
//! )
//! .unwrap();
//! let mut mesh = NavMesh::build(&grid);
//! assert!(mesh.polygon_count() >= 2);
//!
//! // The block goes: the mesh follows, rebuilding the one chunk touched.
//! grid.set_free(UVec2::new(2, 1), true).unwrap();
//! grid.set_free(UVec2::new(3, 1), true).unwrap();
//! assert_eq!(mesh.sync(&grid), 1);
//! let path = Planner::new()
//!     .plan_on_mesh(&mesh, DVec2::new(0.5, 1.5), DVec2::new(5.5, 1.5), &PlanOptions::default())
//!     .unwrap();
//! assert!((path.length - 5.0).abs() < 1e-9);
//! ```

mod build;
mod offset;
#[cfg(test)]
mod radius_tests;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use bevy_math::DVec2;

use crate::clearance::{ClearanceError, MAX_RADIUS};
use crate::geom::orient_sign;
use crate::grid::Grid;
use build::{ChunkRect, Side, build_chunk};
use offset::{Disc, SCALE};

/// Side of a chunk, in cells (of a mesh for point agents; see
/// [`RADIUS_CHUNK`]).
pub const CHUNK: u32 = 1 << CHUNK_BITS;

/// Side of a chunk of a mesh for agents of a radius, in cells, on grids of
/// up to 2^18 such chunks (16,384 x 16,384 cells; larger grids have chunks
/// of [`CHUNK`]). Their chunks take about five times as long to build as a
/// point mesh's: smaller ones keep an edit's rebuild short.
pub const RADIUS_CHUNK: u32 = 32;

/// `log2` of [`CHUNK`].
const CHUNK_BITS: u32 = 6;

/// Bits of a polygon id that number it in its chunk.
const LOCAL_BITS: u32 = 14;

/// No polygon: an obstacle (or the grid's outside) across an edge.
pub(crate) const NONE: u32 = u32::MAX;

/// A border edge of a chunk not yet linked to the next chunk.
pub(crate) const PORTAL: u32 = u32::MAX - 1;

/// Side of a point-location block, in cells.
const BLOCK: i64 = 8;

/// One vertex of a polygon and the edge from it to the next vertex, as the
/// searches read them: 16 bytes, a polygon's slots contiguous.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The vertex.
    pub v: [i32; 2],
    /// What lies across the edge: a polygon id, or [`NONE`].
    pub neigh: u32,
    /// The edge's index in that polygon.
    pub twin: u16,
    /// Whether a path may turn at the vertex.
    pub turn: bool,
    /// Whether the polygon across has no other edge to another polygon (a
    /// dead end: a path that enters it can only leave the way it came).
    pub dead_end: bool,
}

/// One chunk's polygons, linked to the neighbouring chunks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chunk {
    /// Polygon `p` has the slots `start[p]..start[p + 1]`.
    pub(crate) start: Vec<u32>,
    pub(crate) slots: Vec<Slot>,
    /// Border edges with a free cell beyond them, sorted.
    portals: Vec<build::Portal>,
    /// Constraint conflicts the triangulation reported (none when the
    /// outline is right; the tests check).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    pub(crate) conflicts: u32,
    /// Point location: the polygons whose bounding box meets block `b`
    /// ([`BLOCK`] x [`BLOCK`] cells, row by row in the chunk) are
    /// `block_polys[block_start[b]..block_start[b + 1]]`.
    block_start: Vec<u32>,
    block_polys: Vec<u16>,
    /// Per polygon: how many of its edges lead to another polygon.
    open_edges: Vec<u8>,
}

/// A navigation mesh of a grid's free space (see the [module docs](self)).
///
/// Clones are cheap (one pointer per chunk) and share chunks until one of
/// them is synced to a changed grid.
#[derive(Clone, Debug)]
pub struct NavMesh {
    /// The grid as the mesh last saw it.
    grid: Grid,
    /// Side of a chunk, in cells: [`CHUNK`] or [`RADIUS_CHUNK`].
    chunk: u32,
    chunks_x: u32,
    chunks_y: u32,
    chunks: Vec<Arc<Chunk>>,
    /// Chunks still to build from `grid`, the next last (only between
    /// steps of [`NavMesh::sync_within`]).
    to_build: Vec<u32>,
    /// Chunks to relink once every chunk is built, the next last.
    to_link: Vec<u32>,
    /// For agents of a radius: the polygon the obstacles are grown by
    /// (vertices are then in lattice units of `1 / SCALE` cells).
    disc: Option<Arc<Disc>>,
}

/// Work units [`NavMesh::sync_within`] charges for building a chunk, per
/// polygon vertex it made: a vertex costs about as long to make as
/// Polyanya takes for one expansion, five times over.
const WORK_PER_VERTEX: u64 = 5;

/// Work units charged for a chunk besides its vertices (reading its cells).
const WORK_PER_CHUNK: u64 = 64;

impl NavMesh {
    /// The mesh of `grid`'s free space.
    #[must_use]
    pub fn build(grid: &Grid) -> Self {
        let mut mesh = NavMesh::unbuilt(grid);
        mesh.advance(&mut { u64::MAX });
        mesh
    }

    /// A mesh of `grid` with every chunk still to build (see
    /// [`NavMesh::sync_within`]).
    pub(crate) fn unbuilt(grid: &Grid) -> Self {
        NavMesh::unbuilt_for(grid, None)
    }

    /// The [`NavMesh::tolerance`] of the mesh [`NavMesh::with_radius`]
    /// builds for `radius`, without building it (0 for a radius it refuses,
    /// and for 0).
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    ///
    /// assert!(NavMesh::tolerance_for(0.3) < 0.03);
    /// assert!(NavMesh::tolerance_for(3.0) <= 0.09);
    /// assert_eq!(NavMesh::tolerance_for(-1.0), 0.0);
    /// ```
    #[must_use]
    pub fn tolerance_for(radius: f64) -> f64 {
        if radius > 0.0 && radius <= MAX_RADIUS {
            Disc::tolerance_of(radius)
        } else {
            0.0
        }
    }

    /// [`NavMesh::with_radius`]'s mesh with every chunk still to build; the
    /// radius must be valid (finite, 0 to [`MAX_RADIUS`]).
    pub(crate) fn unbuilt_with_radius(grid: &Grid, radius: f64) -> Self {
        let disc = (radius > 0.0).then(|| Arc::new(Disc::new(radius)));
        NavMesh::unbuilt_for(grid, disc)
    }

    /// The mesh of the points where a disc of radius `radius` (in cells)
    /// fits: at least `radius` from every blocked cell and from the grid's
    /// outside. It holds every point at least `radius +`
    /// [`NavMesh::tolerance`] from them (the obstacles are grown by a
    /// polygon around the disc: see `SPEC.md`); a radius of 0 gives
    /// [`NavMesh::build`]'s mesh, and radii between 0 and 1/64 cell are
    /// meshed as 1/64 (conservatively). Search it with
    /// [`Planner::plan_on_mesh`](crate::search::Planner::plan_on_mesh).
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    /// use bevy_anyangle::prelude::*;
    ///
    /// // A door one cell wide.
    /// let grid = Grid::from_ascii(
    ///     ".....
    ///      .....
    ///      @@.@@
    ///      .....
    ///      .....",
    /// )
    /// .unwrap();
    /// let (a, b) = (DVec2::new(0.5, 0.5), DVec2::new(4.5, 4.5));
    /// let options = PlanOptions::default();
    /// let mut planner = Planner::new();
    ///
    /// // An agent 0.8 cells wide goes through, 0.4 from the door's sides.
    /// let mesh = NavMesh::with_radius(&grid, 0.4).unwrap();
    /// let path = planner.plan_on_mesh(&mesh, a, b, &options).unwrap();
    /// assert!(!path.is_fallback());
    /// assert!(path.waypoints.iter().all(|p| p.y > 3.0 || p.y < 2.0));
    ///
    /// // One 1.2 cells wide does not: it gets as close as it can.
    /// let wide = NavMesh::with_radius(&grid, 0.6).unwrap();
    /// let path = planner.plan_on_mesh(&wide, a, b, &options).unwrap();
    /// assert!(path.is_fallback());
    /// assert!(path.waypoints.last().unwrap().y < 2.0);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ClearanceError::BadRadius`] for a negative or non-finite radius,
    /// [`ClearanceError::TooLarge`] above [`MAX_RADIUS`].
    pub fn with_radius(grid: &Grid, radius: f64) -> Result<Self, ClearanceError> {
        if !radius.is_finite() || radius < 0.0 {
            return Err(ClearanceError::BadRadius(radius));
        }
        if radius > MAX_RADIUS {
            return Err(ClearanceError::TooLarge(radius));
        }
        let disc = (radius > 0.0).then(|| Arc::new(Disc::new(radius)));
        let mut mesh = NavMesh::unbuilt_for(grid, disc);
        mesh.advance(&mut { u64::MAX });
        Ok(mesh)
    }

    /// The radius the mesh is for (0 for point agents).
    #[must_use]
    pub fn radius(&self) -> f64 {
        self.disc.as_ref().map_or(0.0, |d| d.radius())
    }

    /// How much farther than [`NavMesh::radius`] from the obstacles a point
    /// may have to be to lie on the mesh, in cells: 0 for point agents; for
    /// others at most 0.09 up to a radius of 3.27 cells, about
    /// `0.0275 * radius` beyond (1/8 cell at 4.5).
    #[must_use]
    pub fn tolerance(&self) -> f64 {
        self.disc.as_ref().map_or(0.0, |d| d.tolerance())
    }

    /// Mesh coordinates per cell: 1 for point agents, whose vertices are
    /// grid points; a fine lattice for agents of a radius.
    #[inline]
    pub(crate) fn scale(&self) -> i64 {
        if self.disc.is_some() { SCALE } else { 1 }
    }

    /// How many cells beyond an edited cell the mesh may change.
    fn reach(&self) -> i64 {
        self.disc.as_ref().map_or(1, |d| d.reach() + 2)
    }

    /// A mesh of `grid` for `disc` with every chunk still to build.
    fn unbuilt_for(grid: &Grid, disc: Option<Arc<Disc>>) -> Self {
        let small = |side: u32| grid.width().div_ceil(side) * grid.height().div_ceil(side);
        let chunk = match disc {
            Some(_) if small(RADIUS_CHUNK) <= 1 << (32 - LOCAL_BITS) => RADIUS_CHUNK,
            _ => CHUNK,
        };
        let chunks_x = grid.width().div_ceil(chunk);
        let chunks_y = grid.height().div_ceil(chunk);
        let count = chunks_x * chunks_y;
        NavMesh {
            grid: grid.clone_without_log(),
            chunk,
            chunks_x,
            chunks_y,
            // (One empty chunk stands for every unbuilt one.)
            chunks: core::iter::repeat_n(Arc::new(Chunk::default()), count as usize).collect(),
            to_build: (0..count).rev().collect(),
            to_link: (0..count).rev().collect(),
            disc,
        }
    }

    /// Brings the mesh up to date with `grid`, rebuilding only the chunks
    /// whose cells (or cells next to their border) changed since the grid
    /// the mesh last saw; returns how many chunks it rebuilt. A grid of
    /// another size is meshed from scratch (every chunk counts).
    ///
    /// The grids are compared row band by row band: bands that `grid` still
    /// shares with the mesh's copy (grids share storage with their clones
    /// until written to) are skipped unread, so syncing after an edit costs
    /// the rows the edit wrote, plus rebuilding the chunks it touched.
    pub fn sync(&mut self, grid: &Grid) -> usize {
        let before = self.to_build.len();
        self.schedule(grid);
        let rebuilt = self.to_build.len().saturating_sub(before);
        self.advance(&mut { u64::MAX });
        rebuilt
    }

    /// [`NavMesh::sync`], a mesh built from scratch in steps: on a built
    /// mesh, brings it up to date with `grid` at once (rebuilding the chunks
    /// the edits since touched) and returns `true`. On a mesh still to build
    /// (see [`NavMesh::unbuilt`]), or whose grid changes size, builds at
    /// most about `work` units of it (Polyanya expansions' worth of time,
    /// see [`WORK_PER_VERTEX`]; at least one chunk), takes them off `work`,
    /// and returns whether it is done. Until it is, the mesh must not be
    /// searched; the next call goes on where this one stopped (with the same
    /// grid or a later edit of it).
    ///
    /// (Updates are not spread over steps: under edits every frame, a
    /// search that waits for its mesh over several frames is answered on a
    /// grid edited since, and its agent plans again, on yet another
    /// version: measured on the maze with the searches on the main thread,
    /// the agents then took ten times as many frames to settle.)
    pub(crate) fn sync_within(&mut self, grid: &Grid, work: &mut u64) -> bool {
        let update = self.is_complete() && grid.size() == self.grid.size();
        self.schedule(grid);
        if update {
            return self.advance(&mut { u64::MAX });
        }
        self.advance(work)
    }

    /// Whether every chunk is built and linked (the mesh may be searched).
    pub(crate) fn is_complete(&self) -> bool {
        self.to_build.is_empty() && self.to_link.is_empty()
    }

    /// Takes in `grid`: the chunks its differences from the mesh's grid
    /// touch are scheduled to be rebuilt, and they and their neighbours to
    /// be relinked.
    fn schedule(&mut self, grid: &Grid) {
        if grid.size() != self.grid.size() {
            *self = NavMesh::unbuilt_for(grid, self.disc.take());
            return;
        }
        let reach = self.reach();
        let mut dirty: Vec<u32> = Vec::new();
        let (cx_max, cy_max) = (i64::from(self.chunks_x) - 1, i64::from(self.chunks_y) - 1);
        let compared = grid.for_each_difference(&self.grid, |x, y| {
            // A cell decides its own chunk and, next to a border, the cuts
            // and corners of the chunks beyond it (for agents of a radius,
            // the chunks its grown polygon reaches).
            let c = i64::from(self.chunk);
            let (lx, hx) = (
                (x - reach).div_euclid(c).max(0),
                (x + reach).div_euclid(c).min(cx_max),
            );
            let (ly, hy) = (
                (y - reach).div_euclid(c).max(0),
                (y + reach).div_euclid(c).min(cy_max),
            );
            for cy in ly..=hy {
                for cx in lx..=hx {
                    dirty.push((cy as u32) * self.chunks_x + cx as u32);
                }
            }
        });
        if compared == 0 {
            // The very rows the mesh was built from: nothing to do, nothing
            // to copy (the usual case, a query on an unedited grid).
            return;
        }
        self.grid = grid.clone_without_log();
        if dirty.is_empty() {
            return;
        }
        // The rebuilt chunks and the chunks next to them are relinked.
        let mut relink: Vec<u32> = Vec::with_capacity(dirty.len() * 5);
        for &c in &dirty {
            relink.push(c);
            let (cx, cy) = (c % self.chunks_x, c / self.chunks_x);
            if cx > 0 {
                relink.push(c - 1);
            }
            if cx + 1 < self.chunks_x {
                relink.push(c + 1);
            }
            if cy > 0 {
                relink.push(c - self.chunks_x);
            }
            if cy + 1 < self.chunks_y {
                relink.push(c + self.chunks_x);
            }
        }
        // (Chunks are taken from the back: keep each list's order, the
        // lowest chunk next.)
        for (list, new) in [(&mut self.to_build, dirty), (&mut self.to_link, relink)] {
            list.extend(new);
            list.sort_unstable_by(|a, b| b.cmp(a));
            list.dedup();
        }
    }

    /// Builds, then links, the scheduled chunks until `work` runs out (after
    /// at least one) or none is left; returns whether none is left.
    fn advance(&mut self, work: &mut u64) -> bool {
        while let Some(&c) = self.to_build.last() {
            let chunk = self.make_chunk(c);
            let cost = WORK_PER_CHUNK + WORK_PER_VERTEX * chunk.slots.len() as u64;
            self.chunks[c as usize] = Arc::new(chunk);
            self.to_build.pop();
            *work = work.saturating_sub(cost);
            if *work == 0 {
                return self.is_complete();
            }
        }
        while let Some(&c) = self.to_link.last() {
            let cost = 1 + self.chunks[c as usize].portals.len() as u64;
            self.link(c);
            self.to_link.pop();
            *work = work.saturating_sub(cost);
            if *work == 0 {
                return self.is_complete();
            }
        }
        true
    }

    /// The grid the mesh was built from (or last synced to).
    #[must_use]
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// How many polygons the mesh has.
    #[must_use]
    pub fn polygon_count(&self) -> usize {
        self.chunks.iter().map(|c| c.start.len() - 1).sum()
    }

    /// How many chunks the mesh has.
    #[must_use]
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Bytes the mesh's polygons and point-location tables hold (not the
    /// grid it keeps, which shares its storage with the grid it was built
    /// from).
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| {
                size_of::<Chunk>()
                    + c.start.capacity() * 4
                    + c.slots.capacity() * size_of::<Slot>()
                    + c.portals.capacity() * size_of::<build::Portal>()
                    + c.block_start.capacity() * 4
                    + c.block_polys.capacity() * 2
                    + c.open_edges.capacity()
            })
            .sum::<usize>()
            + self.chunks.capacity() * size_of::<Arc<Chunk>>()
    }

    /// Every polygon's vertices (in cells), in the order that keeps its
    /// inside on the right of each edge as drawn on screen (y down): for
    /// drawing and checking the mesh.
    pub fn polygons(&self) -> impl Iterator<Item = Vec<DVec2>> + '_ {
        let scale = self.scale() as f64;
        self.chunks.iter().flat_map(move |c| {
            (0..c.start.len() - 1).map(move |p| {
                c.slots[c.start[p] as usize..c.start[p + 1] as usize]
                    .iter()
                    .map(|s| DVec2::new(f64::from(s.v[0]), f64::from(s.v[1])) / scale)
                    .collect()
            })
        })
    }

    /// The edges of its polygons that border an obstacle or the grid's
    /// outside, in cells: the outline of where its agents may go (for a
    /// mesh for a radius, the obstacles grown by about that radius).
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    /// use bevy_anyangle::prelude::*;
    ///
    /// let grid = Grid::new(4, 3).unwrap();
    /// let mesh = NavMesh::with_radius(&grid, 0.5).unwrap();
    /// // The grid's border grown by half a cell (and at most 1/1024 more):
    /// // a rectangle of 3 x 2 cells.
    /// let length: f64 = mesh.wall_edges().map(|[a, b]| a.distance(b)).sum();
    /// assert!(length <= 10.0 && length > 10.0 - 8.0 / 1024.0 - 1e-9, "{length}");
    /// ```
    pub fn wall_edges(&self) -> impl Iterator<Item = [DVec2; 2]> + '_ {
        let scale = self.scale() as f64;
        let point = move |s: &Slot| DVec2::new(f64::from(s.v[0]), f64::from(s.v[1])) / scale;
        self.chunks.iter().flat_map(move |c| {
            (0..c.start.len() - 1).flat_map(move |p| {
                let slots = &c.slots[c.start[p] as usize..c.start[p + 1] as usize];
                (0..slots.len())
                    .filter(|&k| slots[k].neigh == NONE)
                    .map(move |k| [point(&slots[k]), point(&slots[(k + 1) % slots.len()])])
            })
        })
    }

    /// The cells of chunk `c`.
    fn rect(&self, c: u32) -> ChunkRect {
        let (cx, cy) = (i64::from(c % self.chunks_x), i64::from(c / self.chunks_x));
        let s = i64::from(self.chunk);
        ChunkRect {
            x0: cx * s,
            y0: cy * s,
            x1: ((cx + 1) * s).min(i64::from(self.grid.width())),
            y1: ((cy + 1) * s).min(i64::from(self.grid.height())),
        }
    }

    /// Builds chunk `c` from the mesh's grid (not yet linked).
    fn make_chunk(&self, c: u32) -> Chunk {
        let rect = self.rect(c);
        let built = match &self.disc {
            Some(disc) => offset::build_chunk(&self.grid, rect, disc),
            None => build_chunk(&self.grid, rect),
        };
        let scale = self.scale();
        let polys = built.start.len() - 1;
        assert!(
            polys < (1 << LOCAL_BITS) - 1,
            "a chunk of {0} x {0} cells has fewer polygons",
            self.chunk
        );
        let id = |p: u32| (c << LOCAL_BITS) | p;
        let mut built = built;
        for n in &mut built.neigh {
            if *n != NONE && *n != PORTAL {
                *n = id(*n);
            }
        }
        let open_edges: Vec<u8> = (0..polys)
            .map(|p| {
                let slots = built.start[p] as usize..built.start[p + 1] as usize;
                built.neigh[slots]
                    .iter()
                    .filter(|n| **n != NONE)
                    .count()
                    .min(255) as u8
            })
            .collect();
        // Point location blocks.
        let bw = (rect.x1 - rect.x0 + BLOCK - 1) / BLOCK;
        let bh = (rect.y1 - rect.y0 + BLOCK - 1) / BLOCK;
        let mut lists: Vec<Vec<u16>> = vec![Vec::new(); (bw * bh) as usize];
        for p in 0..polys {
            let vs = &built.verts[built.start[p] as usize..built.start[p + 1] as usize];
            let (mut lo, mut hi) = ([i64::MAX; 2], [i64::MIN; 2]);
            for v in vs {
                for k in 0..2 {
                    lo[k] = lo[k].min(i64::from(v[k]));
                    hi[k] = hi[k].max(i64::from(v[k]));
                }
            }
            let block = |v: i64, origin: i64, count: i64| {
                (v - origin * scale)
                    .div_euclid(BLOCK * scale)
                    .clamp(0, count - 1)
            };
            let bx0 = block(lo[0], rect.x0, bw);
            let bx1 = block(hi[0], rect.x0, bw);
            let by0 = block(lo[1], rect.y0, bh);
            let by1 = block(hi[1], rect.y0, bh);
            for by in by0..=by1 {
                for bx in bx0..=bx1 {
                    lists[(by * bw + bx) as usize].push(p as u16);
                }
            }
        }
        let mut block_start = Vec::with_capacity(lists.len() + 1);
        let mut block_polys = Vec::new();
        block_start.push(0);
        for l in lists {
            block_polys.extend(l);
            block_start.push(block_polys.len() as u32);
        }
        let slots = (0..built.verts.len())
            .map(|k| {
                let n = built.neigh[k];
                Slot {
                    v: built.verts[k],
                    neigh: n,
                    twin: built.twin[k],
                    turn: built.turn[k],
                    // (Portals are settled when chunks are linked.)
                    dead_end: n != NONE
                        && n != PORTAL
                        && open_edges[(n & ((1 << LOCAL_BITS) - 1)) as usize] <= 1,
                }
            })
            .collect();
        Chunk {
            start: built.start,
            slots,
            portals: built.portals,
            conflicts: built.conflicts,
            block_start,
            block_polys,
            open_edges,
        }
    }

    /// Links chunk `c`'s border edges to the polygons of the chunks beyond.
    fn link(&mut self, c: u32) {
        let (cx, cy) = (c % self.chunks_x, c / self.chunks_x);
        let neighbour = |side: Side| -> Option<u32> {
            match side {
                Side::North => (cy > 0).then(|| c - self.chunks_x),
                Side::South => (cy + 1 < self.chunks_y).then(|| c + self.chunks_x),
                Side::West => (cx > 0).then(|| c - 1),
                Side::East => (cx + 1 < self.chunks_x).then(|| c + 1),
            }
        };
        let mut updates: Vec<(u32, u32, u16, bool)> = Vec::new();
        {
            let chunk = &self.chunks[c as usize];
            for portal in &chunk.portals {
                let target = neighbour(portal.side).and_then(|n| {
                    let other = &self.chunks[n as usize].portals;
                    let want = portal.side.opposite();
                    other
                        .binary_search_by(|q| (q.side, q.lo).cmp(&(want, portal.lo)))
                        .ok()
                        .map(|i| {
                            let q = other[i];
                            let there = &self.chunks[n as usize];
                            let first = there.start[q.poly as usize];
                            let dead_end = there.open_edges[q.poly as usize] <= 1;
                            (
                                (n << LOCAL_BITS) | q.poly,
                                (q.slot - first) as u16,
                                dead_end,
                            )
                        })
                });
                let (value, twin, dead_end) = target.unwrap_or((NONE, 0, false));
                let s = chunk.slots[portal.slot as usize];
                if s.neigh != value || s.twin != twin || s.dead_end != dead_end {
                    updates.push((portal.slot, value, twin, dead_end));
                }
            }
        }
        if !updates.is_empty() {
            let chunk = Arc::make_mut(&mut self.chunks[c as usize]);
            for (slot, value, twin, dead_end) in updates {
                let s = &mut chunk.slots[slot as usize];
                (s.neigh, s.twin, s.dead_end) = (value, twin, dead_end);
            }
        }
    }

    /// The chunk and local index of polygon `id`.
    #[inline]
    pub(crate) fn chunk_of(&self, id: u32) -> (&Chunk, usize) {
        (
            &self.chunks[(id >> LOCAL_BITS) as usize],
            (id & ((1 << LOCAL_BITS) - 1)) as usize,
        )
    }

    /// Polygon `id`: its vertices, neighbours and turn flags (slots of one
    /// chunk).
    #[inline]
    pub(crate) fn polygon(&self, id: u32) -> Polygon<'_> {
        let (chunk, p) = self.chunk_of(id);
        Polygon {
            slots: &chunk.slots[chunk.start[p] as usize..chunk.start[p + 1] as usize],
        }
    }

    /// The chunk of cell `(x, y)` (a cell of the grid) and its point
    /// location block in that chunk.
    fn block_of(&self, x: i64, y: i64) -> (u32, usize) {
        let s = i64::from(self.chunk);
        let c = ((y / s) as u32) * self.chunks_x + (x / s) as u32;
        let rect = self.rect(c);
        let bw = (rect.x1 - rect.x0 + BLOCK - 1) / BLOCK;
        (
            c,
            ((y - rect.y0) / BLOCK * bw + (x - rect.x0) / BLOCK) as usize,
        )
    }

    /// The polygons whose bounding box meets block `b` of chunk `c`.
    fn block_polygons(&self, c: u32, b: usize) -> impl Iterator<Item = u32> + '_ {
        let chunk = &self.chunks[c as usize];
        let range = chunk.block_start[b] as usize..chunk.block_start[b + 1] as usize;
        chunk.block_polys[range]
            .iter()
            .map(move |&local| (c << LOCAL_BITS) | u32::from(local))
    }

    /// Pushes onto `out` the polygons whose bounding box meets the point
    /// location block of cell `(x, y)` (a cell of the grid).
    pub(crate) fn polygons_meeting_cell(&self, x: i64, y: i64, out: &mut Vec<u32>) {
        let (c, b) = self.block_of(x, y);
        out.extend(self.block_polygons(c, b));
    }

    /// Pushes onto `out` every polygon whose closed area contains `p`,
    /// looking at the polygons of `cells`' chunks that may meet them (grid
    /// cells whose closed squares hold `p`).
    pub(crate) fn polygons_at(&self, p: DVec2, cells: &[[i64; 2]], out: &mut Vec<u32>) {
        let mut seen: [(u32, usize); 4] = [(u32::MAX, 0); 4];
        for (k, cell) in cells.iter().enumerate() {
            let (c, b) = self.block_of(cell[0], cell[1]);
            // Cells around a point often share a block: scan each once.
            if seen.contains(&(c, b)) {
                continue;
            }
            if let Some(slot) = seen.get_mut(k) {
                *slot = (c, b);
            }
            for id in self.block_polygons(c, b) {
                if !out.contains(&id) && self.polygon(id).contains(p) {
                    out.push(id);
                }
            }
        }
    }
}

/// One polygon of a mesh, borrowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Polygon<'a> {
    pub slots: &'a [Slot],
}

impl Polygon<'_> {
    /// How many vertices (and edges) it has.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Vertex `k` as a point.
    #[inline]
    pub(crate) fn at(&self, k: usize) -> DVec2 {
        let v = self.slots[k].v;
        DVec2::new(f64::from(v[0]), f64::from(v[1]))
    }

    /// Whether the closed polygon contains `p`.
    pub(crate) fn contains(&self, p: DVec2) -> bool {
        let n = self.len();
        (0..n).all(|k| {
            let next = if k + 1 == n { 0 } else { k + 1 };
            orient_sign(self.at(k), self.at(next), p).is_ge()
        })
    }
}
