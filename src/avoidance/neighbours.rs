//! A spatial hash of disc centres, rebuilt each step in memory kept from the last.
//!
//! Space is cut into square buckets of side `cell`; each disc goes into the
//! bucket of its centre. Buckets are numbered row by row across the
//! bounding box of the discs (a row as wide as a power of two), and the
//! numbers wrap around the table: a dense grid when the box is small
//! enough, a hash of rows when it is not. The buckets are counted and
//! filled by a counting sort into one array, so a rebuild allocates nothing
//! once the arrays have grown, and a query reads each row of buckets it
//! needs as one run of that array.

use bevy_math::DVec2;

/// One inserted disc: its centre, its bucket and its index.
#[derive(Clone, Copy, Debug)]
struct Entry {
    position: DVec2,
    key: (i64, i64),
    index: u32,
}

/// Discs sorted by the bucket of their centre.
#[derive(Debug, Default)]
pub(crate) struct SpatialHash {
    /// The side of a bucket.
    cell: f64,
    /// One over the side of a bucket.
    per_cell: f64,
    /// The bucket at the low corner of the discs' bounding box.
    origin: (i64, i64),
    /// How many slots a row of buckets spans (a power of two).
    row: u64,
    /// Number of slots minus one (a power of two minus one).
    mask: u64,
    /// Per disc: its bucket's coordinates (meaningful for inserted discs).
    keys: Vec<(i64, i64)>,
    /// Per slot: where its discs start in `order`; one more entry at the end.
    starts: Vec<u32>,
    /// The inserted discs, grouped by slot.
    order: Vec<Entry>,
}

/// `v.floor() as i64` (saturating), without a call to the C library.
#[inline]
fn floor(v: f64) -> i64 {
    let t = v as i64;
    if (t as f64) > v { t - 1 } else { t }
}

/// Slots per disc up to which the table may hold the whole bounding box.
const DENSE_SLOTS_PER_DISC: u64 = 16;

impl SpatialHash {
    /// The bucket of point `p` (saturating for far points).
    #[inline]
    fn key(&self, p: DVec2) -> (i64, i64) {
        (floor(p.x * self.per_cell), floor(p.y * self.per_cell))
    }

    /// The slot of bucket `(x, y)`.
    #[inline]
    fn slot(&self, x: i64, y: i64) -> usize {
        let dx = x.wrapping_sub(self.origin.0) as u64;
        let dy = y.wrapping_sub(self.origin.1) as u64;
        (dy.wrapping_mul(self.row).wrapping_add(dx) & self.mask) as usize
    }

    /// Refills the hash with the discs whose `position` is `Some`, in
    /// buckets of side `cell` (positive and finite).
    pub(crate) fn rebuild(
        &mut self,
        cell: f64,
        positions: impl Iterator<Item = Option<DVec2>> + Clone,
    ) {
        self.cell = cell;
        self.per_cell = 1.0 / cell;
        self.keys.clear();
        let (mut low, mut high) = ((i64::MAX, i64::MAX), (i64::MIN, i64::MIN));
        let mut inserted = 0_u64;
        for p in positions.clone() {
            let key = p.map_or((0, 0), |p| self.key(p));
            self.keys.push(key);
            if p.is_some() {
                inserted += 1;
                low = (low.0.min(key.0), low.1.min(key.1));
                high = (high.0.max(key.0), high.1.max(key.1));
            }
        }
        if inserted == 0 {
            (low, high) = ((0, 0), (0, 0));
        }
        self.origin = low;
        let span = |a: i64, b: i64| (b.abs_diff(a)).saturating_add(1).min(1 << 24);
        let (width, height) = (span(low.0, high.0), span(low.1, high.1));
        self.row = width.next_power_of_two();
        let dense = self.row.saturating_mul(height);
        let budget = (DENSE_SLOTS_PER_DISC * inserted).max(1024);
        let slots = if dense <= budget {
            dense.next_power_of_two()
        } else {
            (2 * inserted).next_power_of_two().max(16)
        };
        self.mask = slots - 1;
        let slots = slots as usize;
        self.starts.clear();
        self.starts.resize(slots + 1, 0);
        for (i, p) in positions.clone().enumerate() {
            if p.is_some() {
                let (x, y) = self.keys[i];
                let s = self.slot(x, y);
                self.starts[s + 1] += 1;
            }
        }
        for i in 0..slots {
            self.starts[i + 1] += self.starts[i];
        }
        self.order.clear();
        self.order.resize(
            self.starts[slots] as usize,
            Entry {
                position: DVec2::ZERO,
                key: (0, 0),
                index: 0,
            },
        );
        // `starts[s]` walks through slot s while filling, then is restored.
        for (i, p) in positions.enumerate() {
            if let Some(position) = p {
                let key = self.keys[i];
                let s = self.slot(key.0, key.1);
                self.order[self.starts[s] as usize] = Entry {
                    position,
                    key,
                    index: i as u32,
                };
                self.starts[s] += 1;
            }
        }
        for s in (1..=slots).rev() {
            self.starts[s] = self.starts[s - 1];
        }
        self.starts[0] = 0;
    }

    /// Calls `visit` with the index and centre of every inserted disc
    /// whose bucket comes within `reach` of `p` (so every disc within
    /// `reach` of `p`, and some further). `reach` should not exceed a few
    /// buckets.
    #[inline]
    pub(crate) fn around(&self, p: DVec2, reach: f64, mut visit: impl FnMut(usize, DVec2)) {
        let (_, y0) = self.key(p - reach);
        let (_, y1) = self.key(p + reach);
        for y in y0..=y1 {
            // The part of the row within `reach` of `p`.
            let (top, bottom) = (y as f64 * self.cell, (y + 1) as f64 * self.cell);
            let dy = (top - p.y).max(p.y - bottom).max(0.0);
            let half = (reach * reach - dy * dy).max(0.0).sqrt();
            let (x0, _) = self.key(DVec2::new(p.x - half, p.y));
            let (x1, _) = self.key(DVec2::new(p.x + half, p.y));
            let (s0, s1) = (self.slot(x0, y), self.slot(x1, y));
            let runs = if s1 >= s0 && (s1 - s0) as u64 == x1.abs_diff(x0) {
                [(s0, s1), (1, 0)]
            } else {
                // The row wraps round the table: its two ends.
                [(s0, self.mask as usize), (0, s1)]
            };
            for (first, last) in runs {
                if first > last {
                    continue;
                }
                let (begin, end) = (self.starts[first] as usize, self.starts[last + 1] as usize);
                for entry in &self.order[begin..end] {
                    if entry.key.1 == y && (x0..=x1).contains(&entry.key.0) {
                        visit(entry.index as usize, entry.position);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    #[test]
    fn finds_exactly_the_discs_in_range() {
        let mut rng = Rng(0x5EED);
        let points: Vec<Option<DVec2>> = (0..500)
            .map(|i| {
                (i % 7 != 0).then(|| {
                    DVec2::new(f64::from(rng.below(4000)), f64::from(rng.below(4000))) / 100.0 - 5.0
                })
            })
            .collect();
        let mut hash = SpatialHash::default();
        for (cell, reach) in [(1.0, 1.0), (2.5, 2.5), (0.5, 1.0), (1.5, 2.9)] {
            hash.rebuild(cell, points.iter().copied());
            for (i, p) in points.iter().enumerate() {
                let Some(p) = *p else { continue };
                let mut found = Vec::new();
                hash.around(p, reach, |j, q| {
                    assert_eq!(points[j], Some(q));
                    if q.distance(p) <= reach {
                        found.push(j);
                    }
                });
                found.sort_unstable();
                let expected: Vec<usize> = (0..points.len())
                    .filter(|&j| points[j].is_some_and(|q| q.distance(p) <= reach))
                    .collect();
                assert_eq!(found, expected, "around disc {i}");
            }
        }
    }
}
