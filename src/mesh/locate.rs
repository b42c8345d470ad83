//! Point location in a [`NavMesh`]: the polygons that may hold a point,
//! found through the blocks of cells each chunk lists its polygons by.

use bevy_math::DVec2;

use super::{BLOCK, LOCAL_BITS, NavMesh};

impl NavMesh {
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
