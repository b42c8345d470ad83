//! The open lists: binary min-heaps on `f` with one tie rule, rounding
//! noise in `f` ignored and larger `g` first ([`pops_before`]).
//!
//! - [`IndexedHeap`], the vertex searches' open list (A\*, Lazy Theta\* and
//!   the terrain-cost searches on a grid's vertices, A\* and Lazy Theta\*
//!   over a mesh's corners): each node is queued at most once, and a node
//!   improved while queued moves up in place.
//! - [`OpenList`], Anya's and Polyanya's: entries are never decreased in
//!   place; a node improved after it was pushed is pushed again and the
//!   stale entry is skipped when popped (the caller compares the entry's `g`
//!   with the node's current one).

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

/// The open lists' tie rule: whether an entry of key `f` (an [`f_key`])
/// and cost `g` pops before one of key `other_f` and cost `other_g`. The
/// smaller key first, then the larger `g` (the deeper node: of two equally
/// good routes, the one nearer the goal).
#[inline]
pub(crate) fn pops_before(f: u64, g: f64, other_f: u64, other_g: f64) -> bool {
    f < other_f || (f == other_f && g > other_g)
}

/// `handle` of a node never queued in the current query (see
/// [`IndexedHeap::queue`]).
pub(crate) const NO_HANDLE: u32 = u32::MAX;

/// Heap position of a node that is not on the heap.
const NOT_OPEN: u32 = u32::MAX;

/// An [`IndexedHeap`] entry: the node and the key it is ordered by.
#[derive(Clone, Copy, Debug)]
struct HeapItem {
    /// [`f_key`] of `g + w h`.
    f: u64,
    g: f64,
    node: u32,
    /// The node's handle.
    handle: u32,
}

impl HeapItem {
    /// Pops first, by [`pops_before`].
    #[inline]
    fn before(&self, other: &HeapItem) -> bool {
        pops_before(self.f, self.g, other.f, other.g)
    }
}

/// The vertex searches' open list: an indexed binary heap (a node improved
/// while queued moves up in place: no duplicate entries), ordered by
/// [`pops_before`]; entries that tie on both pop in heap order.
///
/// Each node queued in a query gets a handle, a slot of a dense table of
/// heap positions; the caller keeps it with the node's other records and
/// hands it back with every [`IndexedHeap::queue`]. Sifting moves many
/// entries, and the dense table spares each move a lookup of the node's
/// records.
#[derive(Default, Debug)]
pub(crate) struct IndexedHeap {
    items: Vec<HeapItem>,
    /// Heap position (or [`NOT_OPEN`]) of each node queued in this query,
    /// by handle.
    pos: Vec<u32>,
}

impl IndexedHeap {
    /// Empties the heap and forgets every handle (a new query).
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.pos.clear();
    }

    /// Bytes held by the entries and the handle table.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.items.capacity() * size_of::<HeapItem>() + self.pos.capacity() * size_of::<u32>()
    }

    /// Queues `node` with key `f` (an [`f_key`]) and cost `g`, or moves it
    /// up if it is queued already. `handle` is the node's, [`NO_HANDLE`]
    /// until it is first queued in this query, when one is assigned.
    #[inline]
    pub(crate) fn queue(&mut self, handle: &mut u32, f: u64, g: f64, node: u32) {
        if *handle == NO_HANDLE {
            *handle = self.pos.len() as u32;
            self.pos.push(NOT_OPEN);
        }
        let item = HeapItem {
            f,
            g,
            node,
            handle: *handle,
        };
        let pos = match self.pos[item.handle as usize] {
            NOT_OPEN => {
                self.items.push(item);
                self.items.len() - 1
            }
            pos => {
                self.items[pos as usize] = item;
                pos as usize
            }
        };
        self.sift_up(pos);
    }

    /// Takes the best node off the heap.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        let top = *self.items.first()?;
        let last = self.items.pop().expect("the heap is not empty");
        if !self.items.is_empty() {
            self.items[0] = last;
            self.sift_down(0);
        }
        self.pos[top.handle as usize] = NOT_OPEN;
        Some(top.node)
    }

    fn sift_up(&mut self, mut pos: usize) {
        let item = self.items[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.items[parent];
            if !item.before(&p) {
                break;
            }
            self.items[pos] = p;
            self.pos[p.handle as usize] = pos as u32;
            pos = parent;
        }
        self.items[pos] = item;
        self.pos[item.handle as usize] = pos as u32;
    }

    fn sift_down(&mut self, mut pos: usize) {
        let item = self.items[pos];
        let len = self.items.len();
        loop {
            let left = 2 * pos + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.items[right].before(&self.items[left]) {
                right
            } else {
                left
            };
            let c = self.items[child];
            if !c.before(&item) {
                break;
            }
            self.items[pos] = c;
            self.pos[c.handle as usize] = pos as u32;
            pos = child;
        }
        self.items[pos] = item;
        self.pos[item.handle as usize] = pos as u32;
    }
}

/// One [`OpenList`] entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenEntry {
    /// `g + w h`.
    pub f: f64,
    /// Cost from the start when pushed.
    pub g: f64,
    /// The node.
    pub node: u32,
}

/// [`OpenList`]'s ordering key: "greater" pops first. [`pops_before`]
/// (smaller [`f_key`] first, then larger `g`), then smaller node id (for
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

/// Anya's and Polyanya's open list, reused from one query to the next.
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

    /// The node of the best entry, left on the list.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u32> {
        self.best
            .or_else(|| self.heap.peek().copied())
            .map(Key::node)
    }

    /// Orders every entry afresh by `entry(node)`, its new `f` and `g`.
    pub(crate) fn rekey(&mut self, mut entry: impl FnMut(u32) -> (f64, f64)) {
        let mut keys = core::mem::take(&mut self.heap).into_vec();
        keys.extend(self.best.take());
        for key in &mut keys {
            let node = key.node();
            let (f, g) = entry(node);
            *key = Key::of(&OpenEntry { f, g, node });
        }
        self.heap = BinaryHeap::from(keys);
    }
}

#[cfg(test)]
mod tests {
    use super::{IndexedHeap, NO_HANDLE, OpenEntry, OpenList};
    use crate::test_rng::Rng;

    /// Nodes pop in the order of `(f, larger g)` however queueing, moving
    /// up and popping interleave; each queued node is on the heap once.
    #[test]
    fn indexed_pops_follow_the_tie_rule() {
        let mut rng = Rng(0x1d3_e4ed);
        for _ in 0..200 {
            let mut heap = IndexedHeap::default();
            // Per node: its handle and, while queued, its (f, g).
            let mut handles = [NO_HANDLE; 24];
            let mut queued: [Option<(u64, u64)>; 24] = [None; 24];
            for _ in 0..200 {
                if rng.below(3) == 0 {
                    let best = queued
                        .iter()
                        .flatten()
                        .copied()
                        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
                    let popped = heap.pop();
                    assert_eq!(popped.is_some(), best.is_some());
                    if let Some(n) = popped {
                        assert_eq!(queued[n as usize], best, "the best pops");
                        queued[n as usize] = None;
                    }
                } else {
                    let n = rng.below(24) as usize;
                    let (f, g) = (u64::from(rng.below(20)), u64::from(rng.below(20)));
                    // A queued node only moves up (its key never grows).
                    let (f, g) = match queued[n] {
                        Some((f0, g0)) if f > f0 || (f == f0 && g < g0) => (f0, g0),
                        _ => (f, g),
                    };
                    heap.queue(&mut handles[n], f, g as f64, n as u32);
                    queued[n] = Some((f, g));
                }
            }
            while let Some(n) = heap.pop() {
                assert!(queued[n as usize].take().is_some(), "popped once");
            }
            assert!(queued.iter().all(Option::is_none));
        }
    }

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
