//! Connected regions of free cells (4-connectivity), kept exact edit by edit
//! at a cost that follows the edit, not the grid.
//!
//! # Layout
//!
//! The grid is cut into tiles of [`TILE`] x [`TILE`] cells. Each tile labels
//! its own free cells: a *local component* is a set of free cells connected
//! inside the tile, numbered `1..=n` (`0` marks a blocked cell), one `u16`
//! per cell. Each tile also maps its local components to global region ids.
//! Local components of neighbouring tiles are *adjacent* when two of their
//! cells share an edge across the tile border; the regions are the connected
//! components of that graph, and every local component of one region carries
//! the region's id. Looking a cell's region up reads the tile, the cell's
//! local id and the tile's id table.
//!
//! A tile's cell labels and its id table are chunks behind their own
//! [`Arc`], and so is each row of tiles: clones of a grid share them, and an
//! update copies only the chunks it writes to (a relabelled region: the id
//! tables of its tiles).
//!
//! # Updates
//!
//! After cells of a set `T` of tiles changed, [`Regions::update`]:
//!
//! 1. labels the tiles of `T` again, locally;
//! 2. gathers the *frontier*: the local components of tiles outside `T` with a
//!    free cell on a border facing `T` (they keep their old ids), and joins
//!    the new components of `T` and the frontier along their adjacencies;
//! 3. outside `T` nothing changed, so parts of the frontier can only be
//!    connected outside `T` if they had the same old id. For each old id
//!    whose frontier fell into several groups, it runs one breadth-first
//!    search per group over the local components outside `T`, interleaved,
//!    joining searches that meet; it stops as soon as one search is left.
//!    A search that runs out has found a whole piece cut off from the rest
//!    (a split): it costs what that piece holds, and never more than the
//!    other pieces have been searched;
//! 4. a group that now holds the frontier of several old ids (a merge) keeps
//!    the id of the largest: interleaved searches find the smaller ones,
//!    which are relabelled;
//! 5. every group takes its surviving old id or a fresh one.
//!
//! So an edit costs the labelling of the tiles it touched plus, for a split
//! or a merge, the smaller sides in local components; the usual case (a wall
//! that leaves everything connected around it) never leaves `T`'s
//! neighbours. The number of regions follows exactly: it changes by the
//! number of groups minus the number of old ids met in steps 1 and 2.
//!
//! Ids are never reused: a fresh id is one more than the last. Once they run
//! out (after some four billion splits) the whole grid is labelled again and
//! ids restart from 1.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use bevy_math::URect;

use super::BitPlane;

/// `log2` of [`TILE`].
const TILE_SHIFT: u32 = 6;

/// Tile side, in cells.
const TILE: usize = 1 << TILE_SHIFT;

/// A local component: tile index in the high bits, local id in the low 16.
type Node = u64;

fn node(tile: u32, local: u16) -> Node {
    u64::from(tile) << 16 | u64::from(local)
}

fn split(n: Node) -> (u32, u16) {
    ((n >> 16) as u32, n as u16)
}

/// The four sides of a tile.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Right,
    Down,
    Left,
    Up,
}

const SIDES: [Side; 4] = [Side::Right, Side::Down, Side::Left, Side::Up];

impl Side {
    /// Cell `k` of the border on this side, as the index of the cell in this
    /// tile and of the cell across the border in the neighbour.
    #[inline]
    fn across(self, k: usize) -> (usize, usize) {
        let last = TILE - 1;
        match self {
            Side::Right => (k * TILE + last, k * TILE),
            Side::Left => (k * TILE, k * TILE + last),
            Side::Down => (last * TILE + k, k),
            Side::Up => (k, last * TILE + k),
        }
    }
}

/// One tile's labels, in two chunks: relabelling a region rewrites only
/// the small id tables of the tiles it crosses.
#[derive(Clone, Debug)]
struct Tile {
    /// Local component per cell (row-major, [`TILE`] x [`TILE`]), `0` when
    /// blocked or outside the grid.
    local: Arc<[u16]>,
    /// Region id of local component `i + 1`.
    global: Arc<[u32]>,
}

/// The regions of a grid, see the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct Regions {
    width: u32,
    height: u32,
    tiles_x: u32,
    tiles_y: u32,
    /// The tiles, one shared chunk per row of tiles: a clone copies a
    /// pointer per row, the first write to a row copies its tiles' pointers.
    tiles: Vec<Arc<[Tile]>>,
    count: u32,
    /// Not used by any region yet.
    next_id: u32,
}

impl Regions {
    /// Labels a `width x height` grid whose free cells are `rows`.
    pub(super) fn build(rows: &BitPlane, width: u32, height: u32) -> Self {
        let (tiles_x, tiles_y) = (width.div_ceil(TILE as u32), height.div_ceil(TILE as u32));
        // (local, global) per tile.
        let mut tiles: Vec<(Vec<u16>, Vec<u32>)> = (0..tiles_x * tiles_y)
            .map(|t| {
                let mut local = vec![0u16; TILE * TILE];
                let n = label_tile(rows, t % tiles_x, t / tiles_x, height, &mut local);
                (local, vec![0; usize::from(n)])
            })
            .collect();
        // Local components are numbered from `first[t]` on, grid-wide.
        let mut first = Vec::with_capacity(tiles.len());
        let mut total = 0u32;
        for tile in &tiles {
            first.push(total);
            total += tile.1.len() as u32;
        }
        let mut parent: Vec<u32> = (0..total).collect();
        let index = |t: u32, local: u16| first[t as usize] + u32::from(local) - 1;
        for t in 0..tiles_x * tiles_y {
            for side in [Side::Right, Side::Down] {
                let Some(n) = neighbour(tiles_x, tiles_y, t, side) else {
                    continue;
                };
                let (me, other) = (&tiles[t as usize].0, &tiles[n as usize].0);
                for k in 0..TILE {
                    let (i, j) = side.across(k);
                    if me[i] != 0 && other[j] != 0 {
                        union(&mut parent, index(t, me[i]), index(n, other[j]));
                    }
                }
            }
        }
        // Ids 1..=count, in order of first local component.
        let mut id_of_root = vec![0u32; total as usize];
        let mut count = 0;
        for (t, tile) in tiles.iter_mut().enumerate() {
            for (c, id) in tile.1.iter_mut().enumerate() {
                let root = find(&mut parent, first[t] + c as u32) as usize;
                if id_of_root[root] == 0 {
                    count += 1;
                    id_of_root[root] = count;
                }
                *id = id_of_root[root];
            }
        }
        Regions {
            width,
            height,
            tiles_x,
            tiles_y,
            tiles: tiles
                .chunks(tiles_x as usize)
                .map(|row| {
                    row.iter()
                        .map(|(local, global)| Tile {
                            local: local.as_slice().into(),
                            global: global.as_slice().into(),
                        })
                        .collect()
                })
                .collect(),
            count,
            next_id: count + 1,
        }
    }

    /// The region id of cell `(x, y)` (inside the grid), `None` if blocked.
    #[inline]
    pub(super) fn get(&self, x: u32, y: u32) -> Option<u32> {
        let tile = &self.tiles[(y >> TILE_SHIFT) as usize][(x >> TILE_SHIFT) as usize];
        let mask = TILE as u32 - 1;
        let local = tile.local[((y & mask) << TILE_SHIFT | x & mask) as usize];
        (local != 0).then(|| tile.global[usize::from(local) - 1])
    }

    /// Number of regions.
    pub(super) fn count(&self) -> u32 {
        self.count
    }

    /// Appends to `out` the tiles that hold cells of `rect` (not empty,
    /// inside the grid).
    pub(super) fn tiles_touching(&self, rect: URect, out: &mut Vec<u32>) {
        let (tx0, tx1) = (rect.min.x >> TILE_SHIFT, (rect.max.x - 1) >> TILE_SHIFT);
        for ty in rect.min.y >> TILE_SHIFT..=(rect.max.y - 1) >> TILE_SHIFT {
            out.extend((tx0..=tx1).map(|tx| ty * self.tiles_x + tx));
        }
    }

    /// How many chunks of cell labels, and how many of id tables, are not
    /// shared with `other`.
    #[cfg(test)]
    pub(super) fn unshared_with(&self, other: &Self) -> (usize, usize) {
        let pairs = || {
            self.tiles
                .iter()
                .flat_map(|r| r.iter())
                .zip(other.tiles.iter().flat_map(|r| r.iter()))
        };
        (
            pairs()
                .filter(|(a, b)| !Arc::ptr_eq(&a.local, &b.local))
                .count(),
            pairs()
                .filter(|(a, b)| !Arc::ptr_eq(&a.global, &b.global))
                .count(),
        )
    }

    /// Brings the regions up to date after cells of the tiles `dirty`
    /// (sorted, without repeats) changed; `rows` holds the new cells. See
    /// the [module docs](self#updates).
    pub(super) fn update(&mut self, rows: &BitPlane, dirty: &[u32]) {
        let inside = |t: u32| dirty.binary_search(&t).is_ok();
        // Old ids met: those of the dirty tiles, then of the frontier.
        let mut involved: HashSet<u32> = HashSet::new();
        // Step 1. The new local components of tile `dirty[i]` are nodes
        // `first[i]..first[i + 1]` of the union-find.
        let mut first = Vec::with_capacity(dirty.len() + 1);
        let mut nodes: Vec<Node> = Vec::new();
        for &t in dirty {
            let (tx, ty, height) = (t % self.tiles_x, t / self.tiles_x, self.height);
            let tile = self.tile_mut(t);
            involved.extend(tile.global.iter().copied());
            let n = label_tile(rows, tx, ty, height, Arc::make_mut(&mut tile.local));
            tile.global = vec![0; usize::from(n)].into();
            first.push(nodes.len() as u32);
            nodes.extend((1..=n).map(|c| node(t, c)));
        }
        let inner = nodes.len();
        // Step 2. The frontier, and every adjacency of a new component.
        let mut parent: Vec<u32> = (0..inner as u32).collect();
        let mut index: HashMap<Node, u32> = HashMap::new();
        let mut frontier: Vec<(u32, u32)> = Vec::new(); // (old id, node)
        for (i, &t) in dirty.iter().enumerate() {
            for side in SIDES {
                let Some(n) = neighbour(self.tiles_x, self.tiles_y, t, side) else {
                    continue;
                };
                let n_inside = dirty.binary_search(&n);
                if n_inside.is_ok() && matches!(side, Side::Left | Side::Up) {
                    // Seen from the other side.
                    continue;
                }
                let (me, other) = (self.tile(t), self.tile(n));
                let mut last = (0, 0);
                for k in 0..TILE {
                    let (a, b) = side.across(k);
                    let (a, b) = (me.local[a], other.local[b]);
                    if b == 0 || (a, b) == last {
                        continue;
                    }
                    last = (a, b);
                    let bi = match n_inside {
                        Ok(pos) => first[pos] + u32::from(b) - 1,
                        Err(_) => match index.entry(node(n, b)) {
                            Entry::Occupied(e) => *e.get(),
                            Entry::Vacant(e) => {
                                let bi = nodes.len() as u32;
                                e.insert(bi);
                                nodes.push(node(n, b));
                                parent.push(bi);
                                let id = other.global[usize::from(b) - 1];
                                involved.insert(id);
                                frontier.push((id, bi));
                                bi
                            }
                        },
                    };
                    if a != 0 {
                        union(&mut parent, first[i] + u32::from(a) - 1, bi);
                    }
                }
            }
        }
        // Step 3. Pieces of one old id in several groups: connected outside?
        frontier.sort_unstable();
        // (old id, frontier nodes) of the part of an old id that keeps it,
        // and whole pieces to relabel (a node of their group, their nodes).
        let mut kept: Vec<(u32, Vec<Node>)> = Vec::new();
        let mut pieces: Vec<(u32, Vec<Node>)> = Vec::new();
        for same in frontier.chunk_by(|a, b| a.0 == b.0) {
            let id = same[0].0;
            let mut groups: Vec<(u32, Vec<Node>)> = Vec::new();
            for &(_, bi) in same {
                let root = find(&mut parent, bi);
                match groups.iter_mut().find(|g| g.0 == root) {
                    Some(g) => g.1.push(nodes[bi as usize]),
                    None => groups.push((root, vec![nodes[bi as usize]])),
                }
            }
            if groups.len() == 1 {
                kept.push((id, groups.pop().map(|g| g.1).unwrap_or_default()));
                continue;
            }
            let seeds: Vec<Vec<Node>> = groups.iter().map(|g| g.1.clone()).collect();
            for (members, visited) in self.explore(&seeds, inside) {
                let root = groups[members[0]].0;
                for &m in &members[1..] {
                    union(&mut parent, root, groups[m].0);
                }
                match visited {
                    Some(visited) => pieces.push((root, visited)),
                    None => kept.push((
                        id,
                        members
                            .iter()
                            .flat_map(|&m| groups[m].1.iter().copied())
                            .collect(),
                    )),
                }
            }
        }
        // Step 4. Groups holding several kept old ids: the largest wins.
        let mut winner: HashMap<u32, u32> = HashMap::new();
        let mut by_group: HashMap<u32, Vec<usize>> = HashMap::new();
        for (k, (_, seeds)) in kept.iter().enumerate() {
            let bi = index[&seeds[0]];
            by_group.entry(find(&mut parent, bi)).or_default().push(k);
        }
        let mut by_group: Vec<(u32, Vec<usize>)> = by_group.into_iter().collect();
        by_group.sort_unstable();
        for (root, ks) in by_group {
            if let [k] = ks[..] {
                winner.insert(root, kept[k].0);
                continue;
            }
            let seeds: Vec<Vec<Node>> = ks.iter().map(|&k| kept[k].1.clone()).collect();
            for (members, visited) in self.explore(&seeds, inside) {
                match visited {
                    Some(visited) => pieces.push((root, visited)),
                    None => {
                        winner.insert(root, kept[ks[members[0]]].0);
                    }
                }
            }
        }
        // Step 5. Ids.
        if ((u32::MAX - self.next_id) as usize) < nodes.len() {
            *self = Regions::build(rows, self.width, self.height);
            return;
        }
        let mut ids: HashMap<u32, u32> = HashMap::new();
        for bi in 0..nodes.len() as u32 {
            let root = find(&mut parent, bi);
            let id = *ids.entry(root).or_insert_with(|| {
                winner.get(&root).copied().unwrap_or_else(|| {
                    self.next_id += 1;
                    self.next_id - 1
                })
            });
            if (bi as usize) < inner {
                let (t, c) = split(nodes[bi as usize]);
                Arc::make_mut(&mut self.tile_mut(t).global)[usize::from(c) - 1] = id;
            }
        }
        for (root, visited) in pieces {
            let id = ids[&find(&mut parent, root)];
            for n in visited {
                let (t, c) = split(n);
                if self.tile(t).global[usize::from(c) - 1] != id {
                    Arc::make_mut(&mut self.tile_mut(t).global)[usize::from(c) - 1] = id;
                }
            }
        }
        self.count = self.count + ids.len() as u32 - involved.len() as u32;
    }

    /// Tile `t`.
    #[inline]
    fn tile(&self, t: u32) -> &Tile {
        &self.tiles[(t / self.tiles_x) as usize][(t % self.tiles_x) as usize]
    }

    /// Tile `t`, writable; copies its row's chunk first if a clone shares
    /// it (the tile's own chunks are copied by whoever writes to them).
    fn tile_mut(&mut self, t: u32) -> &mut Tile {
        let row = &mut self.tiles[(t / self.tiles_x) as usize];
        &mut Arc::make_mut(row)[(t % self.tiles_x) as usize]
    }

    /// Calls `f` with the local components adjacent to `n` (some perhaps
    /// more than once).
    fn neighbours(&self, n: Node, mut f: impl FnMut(Node)) {
        let (t, c) = split(n);
        let me = &self.tile(t).local;
        for side in SIDES {
            let Some(o) = neighbour(self.tiles_x, self.tiles_y, t, side) else {
                continue;
            };
            let other = &self.tile(o).local;
            let mut last = 0;
            for k in 0..TILE {
                let (i, j) = side.across(k);
                if me[i] == c && other[j] != 0 && other[j] != last {
                    last = other[j];
                    f(node(o, last));
                }
            }
        }
    }

    /// Interleaved breadth-first searches over the local components of the
    /// tiles not `inside`, one from each class of `seeds` (`seeds.len() >=
    /// 2`, disjoint); searches that meet merge. Stops once at most one
    /// search still runs.
    ///
    /// Returns the merged searches: the indices of their classes and, if the
    /// search ran out, every node it visited (a whole piece); `None` for the
    /// one still running.
    fn explore(
        &self,
        seeds: &[Vec<Node>],
        inside: impl Fn(u32) -> bool,
    ) -> Vec<(Vec<usize>, Option<Vec<Node>>)> {
        let k = seeds.len();
        let mut owner: HashMap<Node, usize> = HashMap::new();
        let mut queue: Vec<VecDeque<Node>> = Vec::with_capacity(k);
        let mut seen: Vec<Vec<Node>> = Vec::with_capacity(k);
        for (i, class) in seeds.iter().enumerate() {
            for &s in class {
                owner.insert(s, i);
            }
            queue.push(class.iter().copied().collect());
            seen.push(class.clone());
        }
        let mut parent: Vec<u32> = (0..k as u32).collect();
        let mut done = vec![false; k];
        let mut running = k;
        let mut met = Vec::new();
        'rounds: while running > 1 {
            for i in 0..k {
                if parent[i] != i as u32 || done[i] {
                    continue;
                }
                let Some(n) = queue[i].pop_front() else {
                    done[i] = true;
                    running -= 1;
                    if running <= 1 {
                        break 'rounds;
                    }
                    continue;
                };
                self.neighbours(n, |m| {
                    if inside(split(m).0) {
                        return;
                    }
                    match owner.entry(m) {
                        Entry::Vacant(e) => {
                            e.insert(i);
                            queue[i].push_back(m);
                            seen[i].push(m);
                        }
                        Entry::Occupied(e) => met.push(*e.get()),
                    }
                });
                for j in met.drain(..) {
                    let j = find(&mut parent, j as u32) as usize;
                    if j == i {
                        continue;
                    }
                    parent[j] = i as u32;
                    let (q, s) = (std::mem::take(&mut queue[j]), std::mem::take(&mut seen[j]));
                    queue[i].extend(q);
                    seen[i].extend(s);
                    if !done[j] {
                        running -= 1;
                    }
                }
                if running <= 1 {
                    break 'rounds;
                }
            }
        }
        let mut out: Vec<(Vec<usize>, Option<Vec<Node>>)> = Vec::new();
        let mut slot = vec![usize::MAX; k];
        for i in 0..k {
            let root = find(&mut parent, i as u32) as usize;
            if slot[root] == usize::MAX {
                slot[root] = out.len();
                let visited = done[root].then(|| std::mem::take(&mut seen[root]));
                out.push((Vec::new(), visited));
            }
            out[slot[root]].0.push(i);
        }
        out
    }
}

/// The tile beside tile `t` on `side`, if any.
#[inline]
fn neighbour(tiles_x: u32, tiles_y: u32, t: u32, side: Side) -> Option<u32> {
    let (tx, ty) = (t % tiles_x, t / tiles_x);
    match side {
        Side::Right => (tx + 1 < tiles_x).then(|| t + 1),
        Side::Left => (tx > 0).then(|| t - 1),
        Side::Down => (ty + 1 < tiles_y).then(|| t + tiles_x),
        Side::Up => (ty > 0).then(|| t - tiles_x),
    }
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[parent[i as usize] as usize];
        parent[i as usize] = p;
        i = p;
    }
    i
}

/// Joins the sets of `a` and `b`; the smaller root stays the root.
fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb) as usize] = ra.min(rb);
    }
}

/// Labels the free cells of tile `(tx, ty)` into local components numbered
/// `1..=n` in order of their first cell (row-major), writing every cell of
/// `local`; returns `n`.
///
/// Each row of the tile is one word of `rows`; its runs of free cells get
/// provisional ids, joined with the runs of the row above that they touch.
fn label_tile(rows: &BitPlane, tx: u32, ty: u32, height: u32, local: &mut [u16]) -> u16 {
    // At most 32 runs per row of 64 cells.
    let mut parent = [0u16; TILE * TILE / 2 + 1];
    let mut runs = 0u16;
    let x0 = (tx as usize) << TILE_SHIFT;
    local.fill(0);
    for r in 0..TILE {
        let y = ((ty as usize) << TILE_SHIFT) + r;
        if y >= height as usize {
            break;
        }
        // Bits 0..64: cells x0..x0 + 64 (padding past the grid reads 0).
        let mut bits = rows.bits_at(y as i64, x0 + 1);
        while bits != 0 {
            let start = bits.trailing_zeros() as usize;
            let end = start + (!(bits >> start)).trailing_zeros() as usize;
            runs += 1;
            parent[usize::from(runs)] = runs;
            let mut above = 0;
            for x in start..end {
                local[r * TILE + x] = runs;
                if r > 0 {
                    let up = local[(r - 1) * TILE + x];
                    if up != 0 && up != above {
                        above = up;
                        union16(&mut parent, up, runs);
                    }
                }
            }
            bits = if end == 64 { 0 } else { bits & u64::MAX << end };
        }
    }
    // Roots are the smallest ids of their sets, so a run's root comes first.
    let mut final_id = [0u16; TILE * TILE / 2 + 1];
    let mut n = 0;
    for run in 1..=runs {
        let root = find16(&mut parent, run);
        final_id[usize::from(run)] = if root == run {
            n += 1;
            n
        } else {
            final_id[usize::from(root)]
        };
    }
    for l in local.iter_mut() {
        *l = final_id[usize::from(*l)];
    }
    n
}

fn find16(parent: &mut [u16], mut i: u16) -> u16 {
    while parent[usize::from(i)] != i {
        let p = parent[usize::from(parent[usize::from(i)])];
        parent[usize::from(i)] = p;
        i = p;
    }
    i
}

fn union16(parent: &mut [u16], a: u16, b: u16) {
    let (ra, rb) = (find16(parent, a), find16(parent, b));
    if ra != rb {
        parent[usize::from(ra.max(rb))] = ra.min(rb);
    }
}

#[cfg(test)]
mod tests {
    use bevy_math::{URect, UVec2};

    use super::super::Grid;

    #[test]
    fn running_out_of_ids_labels_the_grid_again() {
        let mut g = Grid::new(100, 10).unwrap();
        g.regions.next_id = u32::MAX - 1;
        // A split needs a fresh id.
        g.set_rect_free(URect::new(50, 0, 51, 10), false).unwrap();
        assert_eq!(g.region_count(), 2);
        assert_eq!(g.regions.next_id, 3, "ids restart");
        assert!(!g.same_region(UVec2::new(0, 0), UVec2::new(99, 9)));
        assert!(g.same_region(UVec2::new(0, 0), UVec2::new(49, 9)));
        assert!(g.same_region(UVec2::new(51, 0), UVec2::new(99, 9)));
    }
}
