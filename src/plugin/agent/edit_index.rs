//! Edit index: which agents have boxes of cells near which cells, so that an
//! edit looks only at the agents it can affect.
//!
//! A *loose grid*: level `k` cuts the grid into square buckets of
//! `BUCKET << k` cells. A box goes to the lowest level whose buckets are at
//! least as large as its longer side, into each bucket it overlaps there (at
//! most four), so every entity has a handful of entries whatever the size of
//! its boxes. A query visits, on each level, the buckets the queried
//! rectangle overlaps and reports the entries whose box meets it.
//!
//! Insertion and removal are O(entries of the entity); a query costs the
//! buckets it visits plus the entries in them.

use bevy_ecs::entity::{Entity, EntityHashMap};
use bevy_math::URect;

/// Side, in cells, of the buckets of level 0.
const BUCKET: u32 = 32;

/// One box of an entity, in a bucket.
#[derive(Clone, Copy)]
struct Entry {
    entity: Entity,
    /// The box, in cells: `min` inclusive, `max` exclusive.
    rect: URect,
    /// Index of this entry's [`Place`] in the entity's list.
    slot: u32,
}

/// Where one entry of an entity is stored.
#[derive(Clone, Copy)]
struct Place {
    level: u8,
    bucket: u32,
    /// Index in the bucket.
    index: u32,
}

struct Level {
    /// log2 of the bucket side.
    shift: u32,
    cols: u32,
    buckets: Vec<Vec<Entry>>,
}

/// Boxes of cells per entity, found by the cells they cover (see the
/// [module docs](self)).
pub(crate) struct EditIndex {
    width: u32,
    height: u32,
    levels: Vec<Level>,
    placed: EntityHashMap<Vec<Place>>,
}

impl EditIndex {
    /// An empty index for a `width x height` grid.
    pub(crate) fn new(width: u32, height: u32) -> Self {
        let mut levels = Vec::new();
        let mut shift = BUCKET.trailing_zeros();
        loop {
            let cols = width.div_ceil(1 << shift).max(1);
            let rows = height.div_ceil(1 << shift).max(1);
            levels.push(Level {
                shift,
                cols,
                buckets: std::iter::repeat_with(Vec::new)
                    .take(cols as usize * rows as usize)
                    .collect(),
            });
            if cols == 1 && rows == 1 {
                break;
            }
            shift += 1;
        }
        EditIndex {
            width,
            height,
            levels,
            placed: EntityHashMap::default(),
        }
    }

    /// The grid size the index was built for.
    pub(crate) fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Entities with boxes.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.placed.len()
    }

    /// Sets the boxes of `entity` (cells, `max` exclusive; clipped to the
    /// grid, empty ones ignored), replacing the ones it had.
    pub(crate) fn set(&mut self, entity: Entity, boxes: impl IntoIterator<Item = URect>) {
        let mut places = self.take(entity);
        places.clear();
        for rect in boxes {
            let rect = URect {
                min: rect.min.min(bevy_math::UVec2::new(self.width, self.height)),
                max: rect.max.min(bevy_math::UVec2::new(self.width, self.height)),
            };
            if rect.is_empty() {
                continue;
            }
            let side = rect.width().max(rect.height());
            let level = self
                .levels
                .iter()
                .position(|l| side <= 1 << l.shift)
                .unwrap_or(self.levels.len() - 1);
            let l = &mut self.levels[level];
            let (bx0, by0) = (rect.min.x >> l.shift, rect.min.y >> l.shift);
            let (bx1, by1) = ((rect.max.x - 1) >> l.shift, (rect.max.y - 1) >> l.shift);
            for by in by0..=by1 {
                for bx in bx0..=bx1 {
                    let bucket = by * l.cols + bx;
                    let list = &mut l.buckets[bucket as usize];
                    places.push(Place {
                        level: level as u8,
                        bucket,
                        index: list.len() as u32,
                    });
                    list.push(Entry {
                        entity,
                        rect,
                        slot: places.len() as u32 - 1,
                    });
                }
            }
        }
        if !places.is_empty() {
            self.placed.insert(entity, places);
        }
    }

    /// Forgets the boxes of `entity`.
    pub(crate) fn remove(&mut self, entity: Entity) {
        self.take(entity);
    }

    /// Removes the entries of `entity`; returns its (emptied) place list
    /// for reuse.
    fn take(&mut self, entity: Entity) -> Vec<Place> {
        let Some(mut places) = self.placed.remove(&entity) else {
            return Vec::new();
        };
        for k in 0..places.len() {
            let place = places[k];
            let list = &mut self.levels[place.level as usize].buckets[place.bucket as usize];
            let i = place.index as usize;
            list.swap_remove(i);
            // The bucket's last entry moved into slot `i`: fix its place.
            if let Some(moved) = list.get(i).copied() {
                if moved.entity == entity {
                    places[moved.slot as usize].index = i as u32;
                } else if let Some(theirs) = self.placed.get_mut(&moved.entity) {
                    theirs[moved.slot as usize].index = i as u32;
                }
            }
        }
        places
    }

    /// Calls `f` for every entity with a box that meets `rect` (cells, `max`
    /// exclusive); an entity may be reported more than once.
    pub(crate) fn query(&self, rect: URect, mut f: impl FnMut(Entity)) {
        let rect = URect {
            min: rect.min.min(bevy_math::UVec2::new(self.width, self.height)),
            max: rect.max.min(bevy_math::UVec2::new(self.width, self.height)),
        };
        if rect.is_empty() {
            return;
        }
        for l in &self.levels {
            // A box lives in every bucket it overlaps, so the buckets the
            // rectangle overlaps hold every box that meets it.
            let (bx0, by0) = (rect.min.x >> l.shift, rect.min.y >> l.shift);
            let (bx1, by1) = ((rect.max.x - 1) >> l.shift, (rect.max.y - 1) >> l.shift);
            for by in by0..=by1 {
                for bx in bx0..=bx1 {
                    for entry in &l.buckets[(by * l.cols + bx) as usize] {
                        let r = entry.rect;
                        if r.min.x < rect.max.x
                            && rect.min.x < r.max.x
                            && r.min.y < rect.max.y
                            && rect.min.y < r.max.y
                        {
                            f(entry.entity);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(n)) as u32
        }
    }

    fn random_rect(rng: &mut Rng, w: u32, h: u32) -> URect {
        let big = rng.below(10) == 0;
        let (sw, sh) = if big {
            (1 + rng.below(w), 1 + rng.below(h))
        } else {
            (1 + rng.below(6), 1 + rng.below(6))
        };
        let (x, y) = (rng.below(w), rng.below(h));
        URect::new(x, y, x + sw, y + sh)
    }

    fn meets(a: URect, b: URect) -> bool {
        a.min.x < b.max.x && b.min.x < a.max.x && a.min.y < b.max.y && b.min.y < a.max.y
    }

    /// Random inserts, replacements and removals against a plain list.
    #[test]
    fn queries_match_a_brute_force_scan() {
        let (w, h) = (300, 170);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut index = EditIndex::new(w, h);
        let mut truth: Vec<Vec<URect>> = vec![Vec::new(); 200];
        for step in 0..4000 {
            let i = rng.below(200);
            let e = Entity::from_raw_u32(i + 1).unwrap();
            if rng.below(5) == 0 {
                index.remove(e);
                truth[i as usize].clear();
            } else {
                let boxes: Vec<URect> = (0..rng.below(5))
                    .map(|_| random_rect(&mut rng, w, h))
                    .collect();
                index.set(e, boxes.iter().copied());
                truth[i as usize] = boxes
                    .iter()
                    .map(|r| URect {
                        min: r.min.min(bevy_math::UVec2::new(w, h)),
                        max: r.max.min(bevy_math::UVec2::new(w, h)),
                    })
                    .filter(|r| !r.is_empty())
                    .collect();
            }
            if step % 10 == 0 {
                let q = random_rect(&mut rng, w, h);
                let mut got = BTreeSet::new();
                index.query(q, |e| {
                    got.insert(e.index_u32() - 1);
                });
                let want: BTreeSet<u32> = truth
                    .iter()
                    .enumerate()
                    .filter(|(_, boxes)| boxes.iter().any(|b| meets(*b, q)))
                    .map(|(i, _)| i as u32)
                    .collect();
                assert_eq!(got, want, "step {step}, query {q:?}");
            }
        }
        let live = truth.iter().filter(|b| !b.is_empty()).count();
        assert_eq!(index.len(), live);
    }
}
