//! The vertex table of a [`Grid`]: for each vertex, the free cells around
//! it and the grid moves allowed from it, kept up to date edit by edit.

use super::Grid;

impl Grid {
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

    /// Recomputes the vertex table for vertices `(x0..=x1, y0..=y1)`
    /// (clamped to the grid), and the cell masks one vertex further out;
    /// writes (and so copies shared chunks) only where something changed.
    pub(super) fn refresh_vertices(&mut self, x0: i64, y0: i64, x1: i64, y1: i64) {
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
