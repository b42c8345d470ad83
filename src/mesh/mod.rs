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
        if !radius.is_finite() || radius < 0.0 {
            return Err(ClearanceError::BadRadius(radius));
        }
        if radius > MAX_RADIUS {
            return Err(ClearanceError::TooLarge(radius));
        }
        let disc = (radius > 0.0).then(|| Arc::new(Disc::new(radius)));
        let mut mesh = NavMesh::unbuilt_for(grid, disc, GROUP);
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
        self.to_build.is_empty() && self.to_join.is_empty() && self.to_link.is_empty()
    }

    /// Meshes whole again every group that edits split into chunks (see
    /// [`NavMesh::sync`]); returns how many it joined. Searches that cross
    /// a group meshed whole expand fewer polygons (no chunk borders cut
    /// them), but an edit in it costs more: the next edit there splits it
    /// again at once (its chunks are kept). Costs about as long as building
    /// those groups' share of the grid afresh; the mesh is then exactly
    /// [`NavMesh::build`]'s of its grid.
    ///
    /// ```
    /// use bevy_anyangle::mesh::NavMesh;
    /// use bevy_anyangle::prelude::*;
    ///
    /// let mut grid = Grid::new(200, 200).unwrap();
    /// let mut mesh = NavMesh::build(&grid);
    /// grid.set_free(UVec2::new(70, 70), false).unwrap();
    /// mesh.sync(&grid);
    /// assert_eq!(mesh.rejoin(), 1);
    /// assert_eq!(mesh.rejoin(), 0);
    /// let fresh = NavMesh::build(&grid);
    /// assert!(mesh.polygons().eq(fresh.polygons()));
    /// ```
    pub fn rejoin(&mut self) -> usize {
        self.advance(&mut { u64::MAX });
        if self.group == 1 {
            return 0;
        }
        let groups = self.hidden.len() as u32;
        let split: Vec<u32> = (0..groups)
            .filter(|&g| self.hidden[g as usize].is_empty() && self.group_slots(g).nth(1).is_some())
            .collect();
        self.to_join.extend(split.iter().rev());
        self.advance(&mut { u64::MAX });
        split
            .iter()
            .filter(|&&g| !self.hidden[g as usize].is_empty())
            .count()
    }

    /// The group of slot `c`.
    fn group_of(&self, c: u32) -> u32 {
        let (cx, cy) = (c % self.chunks_x, c / self.chunks_x);
        (cy / self.group) * self.groups_x + cx / self.group
    }

    /// The slot columns `x0..x1` and rows `y0..y1` of group `g`, as
    /// `[x0, y0, x1, y1]`.
    fn group_bounds(&self, g: u32) -> [u32; 4] {
        let (x0, y0) = (
            (g % self.groups_x) * self.group,
            (g / self.groups_x) * self.group,
        );
        [
            x0,
            y0,
            (x0 + self.group).min(self.chunks_x),
            (y0 + self.group).min(self.chunks_y),
        ]
    }

    /// The slots of group `g`, row by row.
    fn group_slots(&self, g: u32) -> impl Iterator<Item = u32> + use<> {
        let [x0, y0, x1, y1] = self.group_bounds(g);
        let w = self.chunks_x;
        (y0..y1).flat_map(move |y| (x0..x1).map(move |x| y * w + x))
    }

    /// Schedules the slots next to group `g`, outside it, to be relinked:
    /// its polygons changed.
    fn relink_around(&mut self, g: u32) {
        let [x0, y0, x1, y1] = self.group_bounds(g).map(i64::from);
        let (w, h) = (i64::from(self.chunks_x), i64::from(self.chunks_y));
        let mut push = |x: i64, y: i64| {
            if x >= 0 && y >= 0 && x < w && y < h {
                self.to_link.push((y * w + x) as u32);
            }
        };
        for x in x0..x1 {
            push(x, y0 - 1);
            push(x, y1);
        }
        for y in y0..y1 {
            push(x0 - 1, y);
            push(x1, y);
        }
    }

    /// Serves group `g`'s own chunks again instead of its whole mesh: those
    /// on its rim are to be relinked with the chunks around it (the others
    /// were linked among themselves when it was joined).
    fn split(&mut self, g: u32) {
        let fine = core::mem::take(&mut self.hidden[g as usize]);
        let [x0, y0, x1, y1] = self.group_bounds(g);
        for (c, chunk) in self.group_slots(g).zip(fine) {
            self.chunks[c as usize] = chunk;
            let (x, y) = (c % self.chunks_x, c / self.chunks_x);
            if x == x0 || x + 1 == x1 || y == y0 || y + 1 == y1 {
                self.to_link.push(c);
            }
        }
        self.relink_around(g);
    }

    /// About the work [`NavMesh::join`] takes for group `g`: its chunks'.
    fn join_estimate(&self, g: u32) -> u64 {
        self.group_slots(g)
            .map(|c| WORK_PER_CHUNK + WORK_PER_VERTEX * self.chunks[c as usize].slots.len() as u64)
            .sum()
    }

    /// Meshes group `g` as one chunk, if it has several slots and its
    /// polygons fit one chunk's ids; returns the work it took.
    fn join(&mut self, g: u32) -> u64 {
        let mut slots = self.group_slots(g);
        let Some(base) = slots.next() else {
            return 0;
        };
        let Some(last) = slots.last() else {
            return 0;
        };
        let (a, b) = (self.rect(base), self.rect(last));
        let rect = ChunkRect {
            x0: a.x0,
            y0: a.y0,
            x1: b.x1,
            y1: b.y1,
        };
        let chunk = self.make_chunk(rect, base);
        let cost = WORK_PER_CHUNK + WORK_PER_VERTEX * chunk.slots.len() as u64;
        if chunk.base == UNBUILT {
            return cost;
        }
        // The group's chunks are linked among themselves now, for when an
        // edit splits the group again.
        for c in self.group_slots(g) {
            self.link(c);
        }
        let whole = Arc::new(chunk);
        let fine: Vec<Arc<Chunk>> = self
            .group_slots(g)
            .map(|c| core::mem::replace(&mut self.chunks[c as usize], Arc::clone(&whole)))
            .collect();
        self.hidden[g as usize] = fine;
        self.to_link.push(base);
        self.relink_around(g);
        cost
    }

    /// Takes in `grid`: the chunks its differences from the mesh's grid
    /// touch are scheduled to be rebuilt, and they and their neighbours to
    /// be relinked.
    fn schedule(&mut self, grid: &Grid) {
        if grid.size() != self.grid.size() {
            *self = NavMesh::unbuilt_for(grid, self.disc.take(), self.group);
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
        // A group meshed whole that an edit touches is split into its
        // chunks (kept up to date while it was whole).
        if self.group > 1 {
            for &c in &dirty {
                let g = self.group_of(c);
                if !self.hidden[g as usize].is_empty() {
                    self.split(g);
                }
            }
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

    /// Builds the scheduled chunks, then meshes the scheduled groups whole,
    /// then links, until `work` runs out (after at least one step) or none
    /// is left; returns whether none is left.
    fn advance(&mut self, work: &mut u64) -> bool {
        let given = *work;
        while let Some(&c) = self.to_build.last() {
            let chunk = self.make_chunk(self.rect(c), c);
            let cost = WORK_PER_CHUNK + WORK_PER_VERTEX * chunk.slots.len() as u64;
            self.chunks[c as usize] = Arc::new(chunk);
            self.to_build.pop();
            *work = work.saturating_sub(cost);
            if *work == 0 {
                return self.is_complete();
            }
        }
        while let Some(&g) = self.to_join.last() {
            // A group is meshed whole in one step: in steps of a bounded
            // work (a frame's budget), one that would overrun what is left
            // of a step that did other work waits for the next step. (Unless
            // edits come between steps, the mesh never depends on the steps
            // it was built in, so that sliced searches answer as whole ones
            // do.)
            if *work < given && self.join_estimate(g) > *work {
                *work = 0;
                return false;
            }
            let cost = self.join(g);
            self.to_join.pop();
            *work = work.saturating_sub(cost);
            if *work == 0 {
                return self.is_complete();
            }
        }
        if self.group > 1 {
            // A slot stands for its chunk: link each chunk once.
            for c in &mut self.to_link {
                let base = self.chunks[*c as usize].base;
                if base != UNBUILT {
                    *c = base;
                }
            }
            self.to_link.sort_unstable_by(|a, b| b.cmp(a));
            self.to_link.dedup();
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

    /// Builds the chunk of the cells `rect`, whose north-west slot is `c`,
    /// from the mesh's grid (not yet linked). A chunk of one slot always
    /// has fewer than `1 << LOCAL_BITS` polygons; one of a whole group may
    /// not, and is then left unfinished (its polygons count it).
    fn make_chunk(&self, rect: ChunkRect, c: u32) -> Chunk {
        let built = match &self.disc {
            Some(disc) => offset::build_chunk(&self.grid, rect, disc),
            None => build_chunk(&self.grid, rect, i64::from(self.chunk)),
        };
        let scale = self.scale();
        let polys = built.start.len() - 1;
        if polys >= (1 << LOCAL_BITS) - 1 {
            assert!(
                rect.x1 - rect.x0 > i64::from(self.chunk)
                    || rect.y1 - rect.y0 > i64::from(self.chunk),
                "a chunk of {0} x {0} cells has fewer polygons",
                self.chunk
            );
            return Chunk {
                base: UNBUILT,
                ..Chunk::default()
            };
        }
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
        // Each polygon's blocks (those its bounding box meets), counted,
        // then listed block by block.
        let blocks_of = |p: usize| {
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
            (
                block(lo[0], rect.x0, bw)..=block(hi[0], rect.x0, bw),
                block(lo[1], rect.y0, bh)..=block(hi[1], rect.y0, bh),
            )
        };
        let mut block_start = vec![0u32; (bw * bh) as usize + 1];
        for p in 0..polys {
            let (xs, ys) = blocks_of(p);
            for by in ys {
                for bx in xs.clone() {
                    block_start[(by * bw + bx) as usize + 1] += 1;
                }
            }
        }
        for b in 1..block_start.len() {
            block_start[b] += block_start[b - 1];
        }
        let mut block_polys = vec![0u16; *block_start.last().expect("a start") as usize];
        let mut fill = block_start.clone();
        for p in 0..polys {
            let (xs, ys) = blocks_of(p);
            for by in ys {
                for bx in xs.clone() {
                    let at = &mut fill[(by * bw + bx) as usize];
                    block_polys[*at as usize] = p as u16;
                    *at += 1;
                }
            }
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
            base: c,
            rect,
        }
    }

    /// Links the border edges of slot `c`'s chunk to the polygons of the
    /// chunks beyond.
    fn link(&mut self, c: u32) {
        let c = match self.chunks[c as usize].base {
            UNBUILT => return,
            base => base,
        };
        let rect = self.chunks[c as usize].rect;
        let s = i64::from(self.chunk);
        let (w, h) = (i64::from(self.chunks_x), i64::from(self.chunks_y));
        let scale = self.scale();
        // The slot of the cell beyond the border at `lo` along it (in mesh
        // coordinates).
        let neighbour = |side: Side, lo: i64| -> Option<u32> {
            let lo = lo.div_euclid(scale);
            let (x, y) = match side {
                Side::North => (lo, rect.y0 - 1),
                Side::South => (lo, rect.y1),
                Side::West => (rect.x0 - 1, lo),
                Side::East => (rect.x1, lo),
            };
            let (sx, sy) = (x.div_euclid(s), y.div_euclid(s));
            (sx >= 0 && sy >= 0 && sx < w && sy < h).then(|| (sy * w + sx) as u32)
        };
        let mut updates: Vec<(u32, u32, u16, bool)> = Vec::new();
        {
            let chunk = &self.chunks[c as usize];
            for portal in &chunk.portals {
                let target = neighbour(portal.side, i64::from(portal.lo)).and_then(|n| {
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
                                (there.base << LOCAL_BITS) | q.poly,
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
        let rect = self.chunks[c as usize].rect;
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
        let base = chunk.base;
        chunk.block_polys[range]
            .iter()
            .map(move |&local| (base << LOCAL_BITS) | u32::from(local))
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
