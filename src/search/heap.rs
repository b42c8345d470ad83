//! The open list: a binary min-heap on `f`, ties broken towards larger `g`.
//!
//! Entries are never decreased in place; a node improved after it was pushed
//! is pushed again and the stale entry is skipped when popped (the caller
//! compares the entry's `g` with the node's current one).

use core::cmp::Ordering;
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

impl PartialEq for OpenEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for OpenEntry {}

impl PartialOrd for OpenEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OpenEntry {
    /// "Greater" means "pops first": smaller `f`, then larger `g`, then
    /// smaller node id (for determinism).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .f
            .total_cmp(&self.f)
            .then_with(|| self.g.total_cmp(&other.g))
            .then_with(|| other.node.cmp(&self.node))
    }
}

/// A reusable open list.
#[derive(Default, Debug)]
pub(crate) struct OpenList {
    heap: BinaryHeap<OpenEntry>,
}

impl OpenList {
    pub(crate) fn clear(&mut self) {
        self.heap.clear();
    }

    #[inline]
    pub(crate) fn push(&mut self, entry: OpenEntry) {
        self.heap.push(entry);
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<OpenEntry> {
        self.heap.pop()
    }
}
