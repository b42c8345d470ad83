//! One chunk of a [`NavMesh`] made ready for the searches: its polygons
//! numbered, dead ends marked, point-location blocks listed, and its border
//! edges linked to the chunks beyond.

use std::sync::Arc;

use super::build::{ChunkRect, Side, build_chunk};
use super::offset;
use super::{BLOCK, Chunk, LOCAL_BITS, NONE, NavMesh, PORTAL, Slot, UNBUILT};

impl NavMesh {
    /// The cells of chunk `c`.
    pub(super) fn rect(&self, c: u32) -> ChunkRect {
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
    pub(super) fn make_chunk(&self, rect: ChunkRect, c: u32) -> Chunk {
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
    pub(super) fn link(&mut self, c: u32) {
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
                    if self.chunks[n as usize].base == UNBUILT {
                        // (A mesh built on demand: linked once it is built.)
                        return Some((PORTAL, 0, false));
                    }
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
}
