//! The targets of a one-to-many search, and the shortest way to each found
//! so far.

use bevy_math::DVec2;

/// No root: a target not reached.
pub(super) const NO_ROOT: u32 = u32::MAX;

/// The targets of a one-to-many search and the best way to each found so
/// far.
#[derive(Default)]
pub(super) struct Targets {
    pub(super) points: Vec<DVec2>,
    /// (polygon, target) for each polygon through which a target may be
    /// reached, sorted.
    pub(super) by_poly: Vec<(u32, u32)>,
    /// Per target: the shortest length found and the root it is reached
    /// from straight ([`NO_ROOT`] if none yet).
    pub(super) best: Vec<(f64, u32)>,
    /// How many targets have a way.
    pub(super) found: usize,
    /// The longest of those ways, and its target.
    pub(super) worst: (f64, u32),
    /// Whether the source and every target are multiples of 1/2 (see
    /// [`orient`](super::geometry)), kept for a search resumed.
    pub(super) lattice: bool,
    /// The target a focused search last ran towards (see
    /// [`super::focus`]).
    pub(super) focus: u32,
}

impl Targets {
    pub(super) fn memory_bytes(&self) -> usize {
        self.points.capacity() * 16 + self.by_poly.capacity() * 8 + self.best.capacity() * 16
    }

    /// Whether a target lies in `poly`.
    #[inline]
    pub(super) fn holds(&self, poly: u32) -> bool {
        self.by_poly
            .binary_search_by_key(&poly, |&(p, _)| p)
            .is_ok()
    }

    /// The indices in `by_poly` of the targets in `poly`.
    #[inline]
    pub(super) fn range(&self, poly: u32) -> core::ops::Range<usize> {
        let from = self.by_poly.partition_point(|&(p, _)| p < poly);
        let to = from + self.by_poly[from..].partition_point(|&(p, _)| p == poly);
        from..to
    }

    /// Target `id` is reached with a path of `length`, straight from `root`.
    #[inline]
    pub(super) fn offer(&mut self, id: u32, length: f64, root: u32) {
        let best = &mut self.best[id as usize];
        if best.1 == NO_ROOT {
            self.found += 1;
        } else if length >= best.0 {
            return;
        }
        *best = (length, root);
        if length >= self.worst.0 {
            self.worst = (length, id);
        } else if id == self.worst.1 {
            // (The longest got shorter: rare, as a target's first way is
            // mostly its best.)
            self.worst = (0.0, 0);
            for (k, b) in self.best.iter().enumerate() {
                if b.1 != NO_ROOT && b.0 >= self.worst.0 {
                    self.worst = (b.0, k as u32);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{NO_ROOT, Targets};
    use crate::test_rng::Rng;

    #[test]
    fn targets_keep_their_longest_way_as_ways_shorten() {
        let mut rng = Rng(0x0003_17a2_6e75);
        for _ in 0..200 {
            let n = 1 + rng.below(12) as usize;
            let mut t = Targets {
                best: vec![(f64::INFINITY, NO_ROOT); n],
                ..Targets::default()
            };
            for _ in 0..60 {
                let id = rng.below(n as u32);
                let length = f64::from(rng.below(50));
                let before = t.best[id as usize];
                t.offer(id, length, 7);
                let now = t.best[id as usize];
                if before.1 == NO_ROOT || length < before.0 {
                    assert_eq!(now, (length, 7));
                } else {
                    assert_eq!(now, before);
                }
                let found: Vec<f64> = t
                    .best
                    .iter()
                    .filter(|b| b.1 != NO_ROOT)
                    .map(|b| b.0)
                    .collect();
                assert_eq!(t.found, found.len());
                let worst = found.iter().copied().fold(0.0, f64::max);
                assert_eq!(t.worst.0, worst);
                assert_eq!(t.best[t.worst.1 as usize].0, worst);
            }
        }
    }
}
