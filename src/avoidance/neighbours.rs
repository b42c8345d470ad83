//! A spatial hash of disc centres, rebuilt each step in memory kept from the last.
//!
//! Space is cut into square buckets of side `cell`; each disc goes into the
//! bucket of its centre. The buckets are counted and filled by a counting
//! sort into one array, so a rebuild allocates nothing once the arrays have
//! grown, and a query visits the buckets that come within its range of its
//! point.

use bevy_math::DVec2;

/// One inserted disc: its centre, its bucket and its index.
#[derive(Clone, Copy, Debug)]
struct Entry {
    position: DVec2,
    key: (i64, i64),
    index: u32,
}

/// Discs sorted by the hashed bucket of their centre.
#[derive(Debug, Default)]
pub(crate) struct SpatialHash {
    /// The side of a bucket.
    cell: f64,
    /// Number of hash slots minus one (a power of two minus one).
    mask: usize,
    /// Per disc: its bucket's coordinates (meaningful for inserted discs).
    keys: Vec<(i64, i64)>,
    /// Per slot: where its discs start in `order`; one more entry at the end.
    starts: Vec<u32>,
    /// The inserted discs, grouped by slot (so that a query reads them in
    /// runs).
    order: Vec<Entry>,
}

/// The hash slot of a bucket.
#[inline]
fn slot(key: (i64, i64), mask: usize) -> usize {
    let h = (key.0 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (key.1 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (h ^ (h >> 29)) as usize & mask
}

impl SpatialHash {
    /// The bucket of point `p` (saturating for far points).
    #[inline]
    fn key(&self, p: DVec2) -> (i64, i64) {
        (
            (p.x / self.cell).floor() as i64,
            (p.y / self.cell).floor() as i64,
        )
    }

    /// Refills the hash with the discs whose `position` is `Some`, in
    /// buckets of side `cell` (positive and finite).
    pub(crate) fn rebuild(
        &mut self,
        cell: f64,
        positions: impl Iterator<Item = Option<DVec2>> + Clone,
    ) {
        self.cell = cell;
        let count = positions.clone().count();
        let slots = (2 * count).next_power_of_two().max(16);
        self.mask = slots - 1;
        self.keys.clear();
        self.starts.clear();
        self.starts.resize(slots + 1, 0);
        for p in positions.clone() {
            let key = p.map_or((0, 0), |p| self.key(p));
            self.keys.push(key);
            if p.is_some() {
                self.starts[slot(key, self.mask) + 1] += 1;
            }
        }
        for i in 0..slots {
            self.starts[i + 1] += self.starts[i];
        }
        let inserted = self.starts[slots] as usize;
        self.order.clear();
        self.order.resize(
            inserted,
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
                let s = slot(key, self.mask);
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
        let (x0, y0) = self.key(p - reach);
        let (x1, y1) = self.key(p + reach);
        let reach_squared = reach * reach;
        for ky in y0..=y1 {
            for kx in x0..=x1 {
                let low = DVec2::new(kx as f64, ky as f64) * self.cell;
                let nearest = p.clamp(low, low + self.cell);
                if p.distance_squared(nearest) > reach_squared {
                    continue;
                }
                let key = (kx, ky);
                let s = slot(key, self.mask);
                let (begin, end) = (self.starts[s] as usize, self.starts[s + 1] as usize);
                for entry in &self.order[begin..end] {
                    if entry.key == key {
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
