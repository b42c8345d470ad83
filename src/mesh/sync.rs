//! Keeping a [`NavMesh`] in step with its grid: edits schedule the chunks
//! they touch, which are rebuilt and relinked, in bounded steps if need be;
//! groups of chunks are meshed whole and split again.

use std::sync::Arc;

use super::build::ChunkRect;
use super::{Chunk, NavMesh, UNBUILT};
use crate::grid::Grid;

/// Work units [`NavMesh::sync_within`] charges for building a chunk, per
/// polygon vertex it made: a vertex costs about as long to make as
/// Polyanya takes for one expansion, five times over.
pub(super) const WORK_PER_VERTEX: u64 = 5;

/// Work units charged for a chunk besides its vertices (reading its cells).
pub(super) const WORK_PER_CHUNK: u64 = 64;

impl NavMesh {
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
            let on_demand = self.on_demand;
            *self = NavMesh::unbuilt_for(grid, self.disc.take(), self.group);
            if on_demand {
                self.make_on_demand();
            }
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
        if self.on_demand {
            // Chunks not built yet are built from the grid of their time.
            dirty.retain(|&c| self.is_built(c));
        }
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
    pub(super) fn advance(&mut self, work: &mut u64) -> bool {
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
}
