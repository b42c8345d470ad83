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
/// determinism): one integer compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128, u32);

impl Key {
    #[inline]
    fn of(e: &OpenEntry) -> Self {
        debug_assert!(e.g >= 0.0, "costs are non-negative");
        let hi = u128::from(!f_key(e.f));
        Key(hi << 64 | u128::from(e.g.to_bits()), !e.node)
    }
}

/// A reusable open list.
#[derive(Default, Debug)]
pub(crate) struct OpenList {
    heap: BinaryHeap<Key>,
}

impl OpenList {
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
    }

    /// Bytes held by the entries' buffer.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.heap.capacity() * size_of::<Key>()
    }

    #[inline]
    pub(crate) fn push(&mut self, entry: OpenEntry) {
        self.heap.push(Key::of(&entry));
    }

    /// The node of the best entry, taken off the list.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.heap.pop().map(|Key(_, node)| !node)
    }
}
