//! The open list: a binary min-heap on `f`, ties broken towards larger `g`.
//!
//! Entries are never decreased in place; a node improved after it was pushed
//! is pushed again and the stale entry is skipped when popped (the caller
//! compares the entry's `g` with the node's current one).

use std::collections::BinaryHeap;

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

/// The heap's ordering key: "greater" pops first. Smaller `f` first, then
/// larger `g`, then smaller node id (for determinism). Non-negative finite
/// floats order like their bit patterns, so the key is one integer compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128, u32);

impl Key {
    #[inline]
    fn of(e: &OpenEntry) -> Self {
        debug_assert!(e.f >= 0.0 && e.g >= 0.0, "costs are non-negative");
        let hi = u128::from(!e.f.to_bits());
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

    #[inline]
    pub(crate) fn push(&mut self, entry: OpenEntry) {
        self.heap.push(Key::of(&entry));
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<OpenEntry> {
        self.heap.pop().map(|Key(k, node)| OpenEntry {
            f: f64::from_bits(!((k >> 64) as u64)),
            g: f64::from_bits(k as u64),
            node: !node,
        })
    }
}
