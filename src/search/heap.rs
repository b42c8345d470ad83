//! The open list: a binary min-heap on `f`, ties broken towards larger `g`.
//!
//! Entries are never decreased in place; a node improved after it was pushed
//! is pushed again and the stale entry is skipped when popped (the caller
//! compares the entry's `g` with the node's current one).

use std::collections::BinaryHeap;

/// How many low bits of `f` the open lists ignore.
///
/// Costs are sums of floating-point terms, so two routes of the same exact
/// length reach a node with `f` values a few units in the last place apart.
/// Ordering by the raw bits would then pick between them by rounding noise,
/// and the "deeper node first" tie-break would never apply: on an open grid
/// A* expanded thousands of equally good nodes instead of walking straight
/// to the goal. Dropping 20 of the 52 mantissa bits makes `f` values within
/// about 1e-10 (relative) tie; a search can then return a path longer than
/// the optimum by at most that much.
const F_NOISE_BITS: u32 = 20;

/// The open lists' ordering key of a non-negative `f`: monotone in `f`, with
/// rounding noise removed (see [`F_NOISE_BITS`]).
#[inline]
pub(crate) fn f_key(f: f64) -> u64 {
    debug_assert!(f >= 0.0, "costs are non-negative");
    f.to_bits() >> F_NOISE_BITS
}

/// One open-list entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenEntry {
    /// `g + w h`.
    pub f: f64,
    /// Cost from the start when pushed.
    pub g: f64,
    /// The node.
    pub node: u32,
}

/// The heap's ordering key: "greater" pops first. Smaller `f` (see
/// [`f_key`]) first, then larger `g`, then smaller node id (for
/// determinism): one 128-bit compare, 16 bytes an entry.
///
/// Bits 84..128 hold the complement of `f_key` (44 bits: `f` is
/// non-negative, so its top bit is 0), bits 32..84 the top 52 bits of `g`'s
/// 63 (`g`s within about 2^-41 of each other, relative, tie and fall back
/// to the node), bits 0..32 the node's complement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

/// Bits of `f_key` kept in a [`Key`].
const F_BITS: u32 = 64 - F_NOISE_BITS;

impl Key {
    #[inline]
    fn of(e: &OpenEntry) -> Self {
        debug_assert!(e.g >= 0.0, "costs are non-negative");
        let f = !f_key(e.f) & ((1 << F_BITS) - 1);
        let g = e.g.to_bits() >> (63 - 52);
        Key(u128::from(f) << 84 | u128::from(g) << 32 | u128::from(!e.node))
    }

    /// The entry's node.
    #[inline]
    fn node(self) -> u32 {
        !(self.0 as u32)
    }
}

/// A reusable open list.
///
/// The best entry is kept apart from the heap while it is the best: a
/// search that pushes a node's successors and pops the best of them next
/// (the usual case) then moves it without sifting it into the heap and back
/// out. The order of pops is exactly that of a plain heap.
#[derive(Default, Debug)]
pub(crate) struct OpenList {
    heap: BinaryHeap<Key>,
    /// An entry no worse than any in `heap`.
    best: Option<Key>,
}

impl OpenList {
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
        self.best = None;
    }

    /// Bytes held by the entries' buffer.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.heap.capacity() * size_of::<Key>()
    }

    #[inline]
    pub(crate) fn push(&mut self, entry: OpenEntry) {
        let key = Key::of(&entry);
        let held = match self.best {
            Some(best) => key > best,
            None => self.heap.peek().is_none_or(|top| key > *top),
        };
        if held {
            if let Some(best) = self.best.replace(key) {
                self.heap.push(best);
            }
        } else {
            self.heap.push(key);
        }
    }

    /// The node of the best entry, taken off the list.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.best.take().or_else(|| self.heap.pop()).map(Key::node)
    }
}

#[cfg(test)]
mod tests {
    use super::{OpenEntry, OpenList};
    use crate::test_rng::Rng;

    /// Pops come in the order of `(f, larger g, smaller node)`, however
    /// pushes and pops interleave.
    #[test]
    fn pops_follow_the_plain_heap_order() {
        let mut rng = Rng(0x0be4_11e5);
        for _ in 0..200 {
            let mut open = OpenList::default();
            let mut model: Vec<(u64, u64, u32)> = Vec::new();
            let mut next = 0u32;
            for _ in 0..200 {
                if rng.below(3) == 0 {
                    // The model's best: smallest f, then largest g, then
                    // smallest node.
                    let want = model
                        .iter()
                        .copied()
                        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
                    if let Some(w) = want {
                        model.retain(|e| *e != w);
                    }
                    assert_eq!(open.pop(), want.map(|w| w.2));
                } else {
                    let (f, g) = (u64::from(rng.below(20)), u64::from(rng.below(20)));
                    let g = g.min(f);
                    open.push(OpenEntry {
                        f: f as f64,
                        g: g as f64,
                        node: next,
                    });
                    model.push((f, g, next));
                    next += 1;
                }
            }
        }
    }
}
