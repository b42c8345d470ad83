//! The root history: the cheapest cost each corner was turned at so far,
//! so that a root reached more cheaply before is not turned at again.

use bevy_math::DVec2;

/// The cheapest cost each corner was turned at so far, by vertex: open
/// addressing with generation stamps, so nothing is cleared per query.
#[derive(Default)]
pub(super) struct RootHistory {
    /// One probe reads one record.
    slots: Vec<HistorySlot>,
    stamp: u32,
    len: usize,
}

/// A [`RootHistory`] record: live when its stamp is the history's.
#[derive(Clone, Copy, Default)]
struct HistorySlot {
    key: u64,
    g: f64,
    stamp: u32,
}

impl RootHistory {
    pub(super) fn memory_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<HistorySlot>()
    }

    pub(super) fn clear(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.fill(HistorySlot::default());
            self.stamp = 1;
        }
        self.len = 0;
        if self.slots.is_empty() {
            self.grow(1024);
        }
    }

    fn grow(&mut self, cap: usize) {
        let old = core::mem::replace(&mut self.slots, vec![HistorySlot::default(); cap]);
        if self.stamp == 0 {
            self.stamp = 1;
        }
        self.len = 0;
        let stamp = self.stamp;
        for slot in old.into_iter().filter(|s| s.stamp == stamp) {
            self.improve(slot.key, slot.g);
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = ((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize) & mask;
        loop {
            let s = &self.slots[i];
            if s.stamp != self.stamp || s.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The best cost known for `key`.
    #[inline]
    pub(super) fn get(&self, key: u64) -> f64 {
        let s = &self.slots[self.slot(key)];
        if s.stamp == self.stamp {
            s.g
        } else {
            f64::INFINITY
        }
    }

    /// Records `g` for `key` unless a lower cost is known; returns whether
    /// `g` is (about) as good as the best known.
    pub(super) fn improve(&mut self, key: u64, g: f64) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(self.slots.len() * 2);
        }
        let i = self.slot(key);
        let stamp = self.stamp;
        let s = &mut self.slots[i];
        if s.stamp == stamp {
            if s.g < g - tolerance(g) {
                return false;
            }
            if g < s.g {
                s.g = g;
            }
            return true;
        }
        *s = HistorySlot { key, g, stamp };
        self.len += 1;
        true
    }
}

/// How much cheaper another way to a root must be to prune this one:
/// floating-point sums of the same path's segments differ in the last
/// places.
#[inline]
pub(super) fn tolerance(g: f64) -> f64 {
    1e-10 * g.max(1.0)
}

/// The root history's key of a mesh vertex (non-negative integers below
/// 2^31).
#[inline]
pub(super) fn vertex_key(p: DVec2) -> u64 {
    // (Through i32: one conversion instruction, where f64 to u64 takes
    // several.)
    (u64::from(p.y as i32 as u32) << 32) | u64::from(p.x as i32 as u32)
}
