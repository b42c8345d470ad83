//! Navigation meshes: the free space of a grid as convex polygons, built in chunks and kept in step with the grid's edits.
//!
//! A [`NavMesh`] covers exactly the points a path may use under `SPEC.md`:
//! every free cell's closed square, where two free cells that touch only at
//! a corner between two blocked cells meet at that point alone (no polygon
//! edge joins them, so no path squeezes through). Its polygons are the
//! grid's free space triangulated (constrained Delaunay) and merged into
//! large convex pieces, chunk by chunk: the grid is cut into chunks of
//! [`CHUNK`] x [`CHUNK`] cells, and an edit rebuilds only the chunks it
//! touches ([`NavMesh::sync`]). Chunk borders cut polygons, and a search
//! crossing them expands more of them (about a sixth more on the bundled
//! game maps), so a mesh for point agents is first meshed in groups of 8 x
//! 8 chunks (512 x 512 cells), each as one piece, and keeps each group's
//! own chunks aside: the first edit that touches a group splits it into
//! them at once, and from then on it is kept chunk by chunk
//! ([`NavMesh::rejoin`] meshes such groups whole again). For agents of a
//! radius, [`NavMesh::with_radius`] meshes the points where their disc fits
//! instead (the obstacles grown by a polygon around the disc). Polyanya
//! ([`Algorithm::Polyanya`](crate::search::Algorithm::Polyanya)) searches
//! it. On a large grid, [`NavMesh::on_demand`] starts with no chunk and
//! builds those the searches reach
//! ([`Planner::plan_on_growing_mesh`](crate::search::Planner::plan_on_growing_mesh)),
//! with the same answers: a first path waits only for the chunks around
//! its way, and memory follows where the searches go.
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

mod blocked;
mod build;
mod chunk;
mod demand;
pub(crate) mod locate;
mod offset;
#[cfg(test)]
mod radius_tests;
#[cfg(test)]
#[expect(
    dead_code,
    reason = "the lattice reference serves `tests/mesh.rs` and `examples/radius.rs`"
)]
mod reference;
mod sync;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use bevy_math::DVec2;

use crate::clearance::{ClearanceError, MAX_RADIUS};
use crate::geom::orient_sign;
use crate::grid::Grid;
use build::ChunkRect;
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

/// Chunks per side of a group of a point mesh: a group is meshed as one
/// chunk (polygons cross the borders of its [`CHUNK`]-cell chunks) until an
/// edit touches it, and from then on chunk by chunk ([`NavMesh::rejoin`]
/// meshes it whole again).
const GROUP: u32 = 8;

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
    /// The chunk slot of its north-west corner: its polygons' ids are
    /// `(base << LOCAL_BITS) | local` ([`UNBUILT`] for no chunk yet).
    pub(crate) base: u32,
    /// Its cells.
    rect: ChunkRect,
}

/// The [`Chunk::base`] of a chunk not built yet.
const UNBUILT: u32 = u32::MAX;

/// A navigation mesh of a grid's free space (see the [module docs](self)).
///
/// Clones are cheap (one pointer per chunk) and share chunks until one of
/// them is synced to a changed grid.
#[derive(Clone, Debug)]
pub struct NavMesh {
    /// The grid as the mesh last saw it.
    grid: Grid,
    /// Side of a chunk slot, in cells: [`CHUNK`] or [`RADIUS_CHUNK`].
    chunk: u32,
    chunks_x: u32,
    chunks_y: u32,
    /// The chunk that meshes each slot: its own, or its group's when the
    /// group is meshed whole (one `Arc` in every slot of the group).
    chunks: Vec<Arc<Chunk>>,
    /// Slots per side of a group: [`GROUP`], or 1 (no groups) for agents
    /// of a radius.
    group: u32,
    groups_x: u32,
    /// Per group meshed whole: the chunks of its slots, kept so that an
    /// edit splits it at once (empty for the other groups).
    hidden: Vec<Vec<Arc<Chunk>>>,
    /// Slots whose chunk is still to build from `grid`, the next last (only
    /// between steps of [`NavMesh::sync_within`]).
    to_build: Vec<u32>,
    /// Groups to mesh whole once their chunks are built, the next last.
    to_join: Vec<u32>,
    /// Slots whose chunk is to relink once every chunk is built, the next
    /// last.
    to_link: Vec<u32>,
    /// For agents of a radius: the polygon the obstacles are grown by
    /// (vertices are then in lattice units of `1 / SCALE` cells).
    disc: Option<Arc<Disc>>,
    /// Whether chunks are built as searches reach them (see
    /// [`NavMesh::on_demand`]) rather than all of them.
    on_demand: bool,
    /// Which mesh this is a version of: a number of its own when made,
    /// kept by its clones and syncs (see `NavMesh::lineage`).
    #[cfg_attr(
        not(feature = "plugin"),
        expect(dead_code, reason = "read by the plugin's mesh store")
    )]
    lineage: u64,
}

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
        NavMesh::unbuilt_for(grid, None, GROUP)
    }

    /// [`NavMesh::build`] with groups of `group` x `group` chunks (1: none).
    #[cfg(test)]
    pub(crate) fn build_grouped(grid: &Grid, group: u32) -> Self {
        let mut mesh = NavMesh::unbuilt_for(grid, None, group);
        mesh.advance(&mut { u64::MAX });
        mesh
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

    /// [`NavMesh::unbuilt_with_radius`] without groups (a point mesh too is
    /// kept chunk by chunk): its polygons are then those of a fresh mesh of
    /// its grid, whatever grids it was brought up to date through.
    #[cfg(feature = "plugin")]
    pub(crate) fn unbuilt_chunked(grid: &Grid, radius: f64) -> Self {
        let disc = (radius > 0.0).then(|| Arc::new(Disc::new(radius)));
        NavMesh::unbuilt_for(grid, disc, 1)
    }

    /// [`NavMesh::with_radius`]'s mesh with every chunk still to build; the
    /// radius must be valid (finite, 0 to [`MAX_RADIUS`]).
    pub(crate) fn unbuilt_with_radius(grid: &Grid, radius: f64) -> Self {
        let disc = (radius > 0.0).then(|| Arc::new(Disc::new(radius)));
        NavMesh::unbuilt_for(grid, disc, GROUP)
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
        let mut mesh = NavMesh::unbuilt_for(grid, Disc::checked(radius)?, GROUP);
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

    /// A mesh of `grid` for `disc` with every chunk still to build, in
    /// groups of `group` x `group` chunks for point agents (none for a
    /// disc).
    fn unbuilt_for(grid: &Grid, disc: Option<Arc<Disc>>, group: u32) -> Self {
        let small = |side: u32| grid.width().div_ceil(side) * grid.height().div_ceil(side);
        let chunk = match disc {
            Some(_) if small(RADIUS_CHUNK) <= 1 << (32 - LOCAL_BITS) => RADIUS_CHUNK,
            _ => CHUNK,
        };
        let chunks_x = grid.width().div_ceil(chunk);
        let chunks_y = grid.height().div_ceil(chunk);
        let count = chunks_x * chunks_y;
        let group = if disc.is_some() { 1 } else { group.max(1) };
        let groups_x = chunks_x.div_ceil(group);
        let groups = groups_x * chunks_y.div_ceil(group);
        let unbuilt = Chunk {
            base: UNBUILT,
            ..Chunk::default()
        };
        NavMesh {
            grid: grid.clone_without_log(),
            chunk,
            chunks_x,
            chunks_y,
            // (One empty chunk stands for every unbuilt one.)
            chunks: core::iter::repeat_n(Arc::new(unbuilt), count as usize).collect(),
            group,
            groups_x,
            hidden: vec![Vec::new(); groups as usize],
            to_build: (0..count).rev().collect(),
            to_join: if group > 1 {
                (0..groups).rev().collect()
            } else {
                Vec::new()
            },
            to_link: (0..count).rev().collect(),
            disc,
            on_demand: false,
            lineage: {
                static NEXT: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
                NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed)
            },
        }
    }

    /// The grid the mesh was built from (or last synced to).
    #[must_use]
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// How many polygons the mesh has.
    #[must_use]
    pub fn polygon_count(&self) -> usize {
        self.served().map(|c| c.start.len() - 1).sum()
    }

    /// How many chunks the mesh has (a group meshed whole counts once).
    #[must_use]
    pub fn chunk_count(&self) -> usize {
        self.served().count()
    }

    /// Each chunk that meshes some slot, once, in the order of their
    /// north-west slots.
    pub(crate) fn served(&self) -> impl Iterator<Item = &Chunk> + '_ {
        self.chunks
            .iter()
            .enumerate()
            .filter(|(c, chunk)| chunk.base == *c as u32)
            .map(|(_, chunk)| &**chunk)
    }

    /// Bytes the mesh's polygons and point-location tables hold, the
    /// chunks kept aside for the groups meshed whole included (not the
    /// grid it keeps, which shares its storage with the grid it was built
    /// from).
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.served()
            .chain(self.hidden.iter().flatten().map(|c| &**c))
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
            + self.hidden.capacity() * size_of::<Vec<Arc<Chunk>>>()
            + self
                .hidden
                .iter()
                .map(|h| h.capacity() * size_of::<Arc<Chunk>>())
                .sum::<usize>()
    }

    /// Every polygon's vertices (in cells), in the order that keeps its
    /// inside on the right of each edge as drawn on screen (y down): for
    /// drawing and checking the mesh.
    pub fn polygons(&self) -> impl Iterator<Item = Vec<DVec2>> + '_ {
        let scale = self.scale() as f64;
        self.served().flat_map(move |c| {
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
        self.served().flat_map(move |c| {
            (0..c.start.len() - 1).flat_map(move |p| {
                let slots = &c.slots[c.start[p] as usize..c.start[p + 1] as usize];
                (0..slots.len())
                    .filter(|&k| slots[k].neigh == NONE)
                    .map(move |k| [point(&slots[k]), point(&slots[(k + 1) % slots.len()])])
            })
        })
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
