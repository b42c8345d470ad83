//! Paged search memory: per-vertex entries in pages allocated on first touch and kept across queries.
//!
//! A search records something (cost, parent, a stamp) for every vertex it
//! touches, and usually touches a small patch of the grid. [`Paged`] stores
//! those records in fixed-size pages behind a small page table: a page is
//! allocated the first time one of its entries is written, then kept, so a
//! planner's memory grows with what its searches touch rather than with the
//! grid, and a query that stays on pages it has touched before allocates
//! nothing. Entries carry their own generation stamps (see the callers), so
//! nothing is cleared between queries. Grids up to about 1000 x 1000 are
//! held in one flat array instead (a few tens of MB at most), where the
//! searches' hottest loops need no page lookup.
//!
//! [`Tiling`] numbers the vertices so that each page is a square tile of
//! [`TILE`] x [`TILE`] vertices: a search exploring a compact area touches
//! few pages, whatever the grid's width (with row-major numbering every row
//! crossed would need a page of its own).

/// log2 of [`TILE`].
const TILE_BITS: u32 = 6;

/// Side of a tile, in vertices.
pub(crate) const TILE: i64 = 1 << TILE_BITS;

/// log2 of the entries per page (one tile).
const PAGE_BITS: u32 = 2 * TILE_BITS;

/// Entries per page.
const PAGE_LEN: usize = 1 << PAGE_BITS;

use core::fmt;

/// Id spaces up to this many entries are held in one flat array instead of
/// pages (see [`Paged`]).
const FLAT_MAX: usize = 1 << 20;

/// One page of entries.
type Page<T> = Box<[T; PAGE_LEN]>;

/// Tile-by-tile numbering of the vertices `(x, y)`, `0 <= x <= width + 1`,
/// `0 <= y <= height`, of a `width` x `height` grid: the id's high bits pick
/// the tile (row of tiles, then tile in the row), its low [`PAGE_BITS`] the
/// vertex in the tile. The column `x = width + 1`, beyond the grid, gives
/// spare ids for nodes that are not vertices ([`Tiling::spare`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tiling {
    /// log2 of the tiles per row of tiles (rounded up to a power of two so
    /// that ids split with shifts only).
    row_bits: u32,
    /// `width + 1`: the column of the spare ids.
    spare_x: i64,
    /// One more than the largest id.
    len: usize,
}

impl Tiling {
    /// The numbering for a `width` x `height` grid.
    pub(crate) fn new(width: u32, height: u32) -> Self {
        let tiles_x = (u64::from(width) + 2).div_ceil(TILE as u64);
        let tiles_y = (u64::from(height) + 1).div_ceil(TILE as u64);
        let row_bits = tiles_x.next_power_of_two().trailing_zeros();
        let len = ((tiles_y - 1) << row_bits | (tiles_x - 1)) + 1;
        Tiling {
            row_bits,
            spare_x: i64::from(width) + 1,
            len: (len as usize) << PAGE_BITS,
        }
    }

    /// The id of vertex `(x, y)`.
    #[inline]
    pub(crate) fn id(self, x: i64, y: i64) -> u32 {
        let (x, y) = (x as u32, y as u32);
        let mask = (1 << TILE_BITS) - 1;
        let tile = (y >> TILE_BITS) << self.row_bits | x >> TILE_BITS;
        tile << PAGE_BITS | (y & mask) << TILE_BITS | (x & mask)
    }

    /// The vertex `[x, y]` of an id.
    #[inline]
    pub(crate) fn xy(self, id: u32) -> [i64; 2] {
        let mask = (1 << TILE_BITS) - 1;
        let tile = id >> PAGE_BITS;
        let x = (tile & ((1 << self.row_bits) - 1)) << TILE_BITS | (id & mask);
        let y = (tile >> self.row_bits) << TILE_BITS | (id >> TILE_BITS & mask);
        [i64::from(x), i64::from(y)]
    }

    /// Spare id `k` (`k <= 1`): an id that is no vertex of the grid.
    #[inline]
    pub(crate) fn spare(self, k: i64) -> u32 {
        debug_assert!((0..=1).contains(&k), "two spare ids");
        self.id(self.spare_x, k)
    }

    /// Whether coordinate `v` is neither the first nor the last of its tile,
    /// so that the vertices one step away along it are in the same tile.
    #[inline]
    pub(crate) fn is_inner(v: i64) -> bool {
        (v + 1) & (TILE - 1) >= 2
    }

    /// One more than the largest id: the length a [`Paged`] must cover.
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// One id in each tile that holds vertices or spare ids (ids past the
    /// last tile of a row of tiles, which rounding to a power of two leaves
    /// unused, are never among them).
    pub(crate) fn tiles(self) -> impl Iterator<Item = u32> {
        let last = self.xy(self.len as u32 - 1);
        let (tiles_x, tiles_y) = (self.spare_x / TILE + 1, last[1] / TILE + 1);
        (0..tiles_y).flat_map(move |ty| (0..tiles_x).map(move |tx| self.id(tx * TILE, ty * TILE)))
    }
}

/// Entries of type `T` indexed by `u32`, in pages allocated on first write.
///
/// Small id spaces (at most [`FLAT_MAX`] entries: grids up to about
/// 1000 x 1000) are held in one flat array, allocated at the first query and
/// reached without a page lookup: there the whole grid costs a few tens of MB
/// at most, and the searches' hottest loops stay as fast as without paging.
/// Indices below the flat array's length live in it, others in pages.
///
/// One page at a time can be *in focus* ([`Paged::focus`]): it is then held
/// outside the table, and entries in it are reached without the table
/// lookup. Searches focus the page of the node they expand, which holds most
/// of its neighbours.
pub(crate) struct Paged<T> {
    /// Page `i` holds entries `i << PAGE_BITS ..`; `None` until written, and
    /// while it is in focus.
    pages: Vec<Option<Page<T>>>,
    /// The page in focus, if any.
    near: Option<Page<T>>,
    /// Its index in `pages` (`usize::MAX` when there is none).
    near_index: usize,
    /// Entries `0..flat.len()`.
    flat: Vec<T>,
    /// What a new page is filled with.
    blank: T,
}

impl<T> fmt::Debug for Paged<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Paged")
            .field("table_len", &self.pages.len())
            .field("near_index", &self.near_index)
            .finish_non_exhaustive()
    }
}

impl<T: Copy> Paged<T> {
    /// Empty storage whose pages start filled with `blank`.
    pub(crate) const fn new(blank: T) -> Self {
        Paged {
            pages: Vec::new(),
            near: None,
            near_index: usize::MAX,
            flat: Vec::new(),
            blank,
        }
    }

    /// Puts the page of index `i` in focus (allocating it if needed).
    #[inline]
    pub(crate) fn focus(&mut self, i: u32) {
        let p = i as usize >> PAGE_BITS;
        if p != self.near_index && i as usize >= self.flat.len() {
            self.refocus(p);
        }
    }

    fn refocus(&mut self, p: usize) {
        if let Some(page) = self.near.take() {
            self.pages[self.near_index] = Some(page);
        }
        let page = self.pages[p].take();
        self.near = Some(page.unwrap_or_else(|| new_page(self.blank)));
        self.near_index = p;
    }

    /// Makes the storage cover indices below `len`: the flat array if `len`
    /// is small enough, else the page table (neither ever shrinks; no page
    /// is allocated).
    pub(crate) fn cover(&mut self, len: usize) {
        if len <= FLAT_MAX && self.flat.len() < len {
            self.flat.resize(len, self.blank);
        }
        let pages = len.div_ceil(PAGE_LEN);
        if self.pages.len() < pages {
            self.pages.resize_with(pages, || None);
        }
    }

    /// Allocates the page of index `i` (covered) if it is not yet.
    pub(crate) fn allocate(&mut self, i: u32) {
        let p = i as usize >> PAGE_BITS;
        let slot = &mut self.pages[p];
        if slot.is_none() && p != self.near_index && i as usize >= self.flat.len() {
            *slot = Some(new_page(self.blank));
        }
    }

    /// The entry at `i`, or `None` if its page was never written.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> Option<&T> {
        let i = i as usize;
        if let Some(entry) = self.flat.get(i) {
            return Some(entry);
        }
        let page = if i >> PAGE_BITS == self.near_index {
            &self.near
        } else {
            &self.pages[i >> PAGE_BITS]
        };
        page.as_ref().map(|page| &page[i & (PAGE_LEN - 1)])
    }

    /// The entry at `i`, allocating its page (filled with the blank value)
    /// on first touch.
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut T {
        let i = i as usize;
        if let Some(entry) = self.flat.get_mut(i) {
            return entry;
        }
        let slot = if i >> PAGE_BITS == self.near_index {
            &mut self.near
        } else {
            &mut self.pages[i >> PAGE_BITS]
        };
        let page = match slot {
            Some(page) => page,
            None => fill(slot, self.blank),
        };
        &mut page[i & (PAGE_LEN - 1)]
    }

    /// Sets every entry of every allocated page back to the blank value.
    pub(crate) fn reset(&mut self) {
        for page in self.pages.iter_mut().chain([&mut self.near]).flatten() {
            page.fill(self.blank);
        }
        self.flat.fill(self.blank);
    }

    /// Bytes held: the page table and the allocated pages.
    pub(crate) fn memory_bytes(&self) -> usize {
        let pages = self.pages.iter().chain([&self.near]).flatten().count();
        self.pages.capacity() * size_of::<Option<Page<T>>>()
            + (pages * PAGE_LEN + self.flat.capacity()) * size_of::<T>()
    }
}

/// Puts a new page in an empty slot of the page table (out of line: the
/// accessors that call it are on the searches' hottest paths).
#[cold]
#[inline(never)]
fn fill<T: Copy>(slot: &mut Option<Page<T>>, blank: T) -> &mut Page<T> {
    slot.insert(new_page(blank))
}

/// A page filled with `blank` (built on the heap: a page is too large for
/// the stack of some threads).
#[expect(
    clippy::unnecessary_box_returns,
    reason = "the page is built on the heap, never on the stack"
)]
fn new_page<T: Copy>(blank: T) -> Page<T> {
    vec![blank; PAGE_LEN]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has PAGE_LEN entries"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiling_round_trips_and_is_injective() {
        for (w, h) in [(1, 1), (10, 3), (62, 63), (63, 64), (200, 70), (8192, 5)] {
            let t = Tiling::new(w, h);
            let mut seen = std::collections::HashSet::new();
            for y in 0..=i64::from(h) {
                for x in 0..=i64::from(w) + 1 {
                    let id = t.id(x, y);
                    assert!((id as usize) < t.len(), "{w}x{h}: ({x}, {y})");
                    assert_eq!(t.xy(id), [x, y]);
                    assert!(seen.insert(id), "{w}x{h}: ({x}, {y}) collides");
                }
            }
            for y in 0..=i64::from(h) {
                for x in 0..=i64::from(w) {
                    if Tiling::is_inner(x) && Tiling::is_inner(y) {
                        for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1)] {
                            let step = i64::from(t.id(x, y)) + dy * TILE + dx;
                            assert_eq!(step, i64::from(t.id(x + dx, y + dy)));
                        }
                    }
                }
            }
            assert_eq!(t.spare(0), t.id(i64::from(w) + 1, 0));
            assert_eq!(t.spare(1), t.id(i64::from(w) + 1, 1));
            // `tiles` names each page holding an id exactly once.
            let pages: std::collections::BTreeSet<u32> =
                seen.iter().map(|id| id >> PAGE_BITS).collect();
            let tiles: Vec<u32> = t.tiles().map(|id| id >> PAGE_BITS).collect();
            assert_eq!(tiles.len(), pages.len(), "{w}x{h}");
            assert_eq!(
                tiles.into_iter().collect::<std::collections::BTreeSet<_>>(),
                pages
            );
        }
    }

    #[test]
    fn the_largest_grid_fits_in_u32_ids() {
        let side = crate::grid::MAX_DIMENSION;
        let t = Tiling::new(side, side);
        assert!(u32::try_from(t.len()).is_ok());
        let corner = t.id(i64::from(side) + 1, i64::from(side));
        assert_eq!(t.xy(corner), [i64::from(side) + 1, i64::from(side)]);
    }

    #[test]
    fn small_grids_fit_in_one_page() {
        assert_eq!(Tiling::new(62, 63).len(), PAGE_LEN);
    }

    #[test]
    fn pages_are_allocated_on_first_write_and_kept() {
        let mut p = Paged::new(7u32);
        // Too large to be flat.
        let len = FLAT_MAX + 10 * PAGE_LEN;
        p.cover(len);
        assert_eq!(p.get(5), None);
        assert_eq!(
            p.memory_bytes(),
            len / PAGE_LEN * size_of::<Option<Page<u32>>>()
        );
        *p.get_mut(3 * PAGE_LEN as u32 + 1) = 9;
        assert_eq!(p.get(3 * PAGE_LEN as u32 + 1), Some(&9));
        assert_eq!(p.get(3 * PAGE_LEN as u32), Some(&7));
        assert_eq!(p.get(5), None);
        let one_page = p.memory_bytes();
        *p.get_mut(3 * PAGE_LEN as u32 + 2) = 1;
        assert_eq!(p.memory_bytes(), one_page, "same page");
        p.reset();
        assert_eq!(p.get(3 * PAGE_LEN as u32 + 1), Some(&7));
        p.allocate(4 * PAGE_LEN as u32 + 5);
        assert_eq!(p.get(4 * PAGE_LEN as u32), Some(&7));
        assert_eq!(p.get(5 * PAGE_LEN as u32), None);
        assert_eq!(p.memory_bytes(), one_page + PAGE_LEN * size_of::<u32>());
        p.cover(PAGE_LEN / 2);
        assert_eq!(p.get(9 * PAGE_LEN as u32), None, "the table never shrinks");
        // A small cover makes a flat array, which takes over its indices.
        assert_eq!(p.get(5), Some(&7));
        *p.get_mut(5) = 3;
        assert_eq!(p.get(5), Some(&3));
        assert_eq!(p.get(PAGE_LEN as u32 / 2), None);
        p.focus(5);
        assert_eq!(p.get(5), Some(&3));
        // Focus moves a page out of the table and back, allocating it if
        // needed; entries read and write the same either way.
        let bytes = p.memory_bytes();
        p.focus(4 * PAGE_LEN as u32);
        assert_eq!(p.memory_bytes(), bytes);
        *p.get_mut(4 * PAGE_LEN as u32 + 3) = 11;
        p.allocate(4 * PAGE_LEN as u32);
        assert_eq!(p.memory_bytes(), bytes, "the page in focus exists");
        p.focus(7 * PAGE_LEN as u32);
        assert_eq!(p.memory_bytes(), bytes + PAGE_LEN * size_of::<u32>());
        assert_eq!(p.get(4 * PAGE_LEN as u32 + 3), Some(&11));
        *p.get_mut(7 * PAGE_LEN as u32 + 1) = 12;
        p.reset();
        assert_eq!(p.get(7 * PAGE_LEN as u32 + 1), Some(&7));
        assert_eq!(p.get(4 * PAGE_LEN as u32 + 3), Some(&7));
        assert_eq!(p.get(5), Some(&7));
        p.focus(4 * PAGE_LEN as u32 + 9);
        assert_eq!(p.get(7 * PAGE_LEN as u32 + 1), Some(&7));
    }
}
