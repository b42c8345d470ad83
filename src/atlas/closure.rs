//! The graph of link ends for one served radius (each area's ends joined by
//! its table, ends of one link joined by the link where an agent may cross
//! it), Dijkstra's algorithm over it, and its rows: the shortest routes
//! from one area's ends to every end, cached until the atlas changes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, OnceLock};

use super::{Atlas, Side};

/// How the search reached a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Via {
    /// Not reached, or a source.
    None,
    /// From the start, by the start leg to this end.
    Start,
    /// From end `node` of the same area, through the table.
    Table(u32),
    /// From end `node`, across a link.
    Link(u32),
    /// From end `node` (the goal's area), by its goal leg; or from the
    /// start directly (`u32::MAX`).
    Goal(u32),
}

/// Where each area's ends are among the nodes.
#[derive(Clone)]
pub(super) struct Layout {
    /// The first node of each area.
    pub offsets: Vec<usize>,
    /// The area of each node.
    pub area_of: Vec<u32>,
    /// The node of each link's two ends.
    pub node_of: Vec<[u32; 2]>,
    /// How many ends in all.
    pub n: usize,
}

/// What the end graph's search may add besides the tables and links: edges
/// from the goal area's ends to the goal (node `n + 1`).
pub(super) struct GoalEdges<'a> {
    pub area: usize,
    pub legs: &'a [f64],
}

/// The shortest routes from each end of one area to every node, each row
/// searched the first time a query needs it.
pub(super) struct Rows {
    area: usize,
    agent: (f64, u64),
    each: Vec<OnceLock<Row>>,
}

/// The shortest routes from one end to every node (`n + 2` entries).
pub(super) struct Row {
    pub dist: Vec<f64>,
    pub via: Vec<Via>,
}

/// What a row is kept for: the area, the served radius, the agent's radius
/// and profiles (which links it may cross).
pub(super) type RowKey = (usize, usize, u64, u64);

/// An `f64` ordered by `total_cmp`, for the heap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Ordered(pub f64);

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The search's queue: distance, node.
pub(super) type Queue = BinaryHeap<Reverse<(Ordered, u32)>>;

/// Sets `to`'s distance to `d` and its way to `how` if that is shorter.
#[inline]
pub(super) fn relax(
    dist: &mut [f64],
    via: &mut [Via],
    heap: &mut Queue,
    to: usize,
    d: f64,
    how: Via,
) {
    if d < dist[to] {
        dist[to] = d;
        via[to] = how;
        heap.push(Reverse((Ordered(d), to as u32)));
    }
}

impl Atlas {
    /// Where each area's ends are among the nodes, for served radius `k`.
    pub(super) fn layout(&self, k: usize) -> Layout {
        let mut offsets = Vec::with_capacity(self.areas.len());
        let mut n = 0;
        for area in &self.areas {
            offsets.push(n);
            n += area.tables[k].ends.len();
        }
        let mut node_of = vec![[u32::MAX; 2]; self.links.len()];
        let mut area_of = vec![0_u32; n];
        for (a, area) in self.areas.iter().enumerate() {
            for (i, end) in area.tables[k].ends.iter().enumerate() {
                let node = offsets[a] + i;
                node_of[end.link.index()][end.side as usize] = node as u32;
                area_of[node] = a as u32;
            }
        }
        Layout {
            offsets,
            area_of,
            node_of,
            n,
        }
    }

    /// Dijkstra over the ends from what `dist`, `via` and `heap` hold
    /// (`n + 2` nodes: the ends, the start, the goal), across the links an
    /// agent of `radius` and `profiles` may cross, and with `goal` to the
    /// goal; stops once the goal is settled.
    pub(super) fn end_search(
        &self,
        (k, layout): (usize, &Layout),
        (radius, profiles): (f64, u64),
        dist: &mut [f64],
        via: &mut [Via],
        heap: &mut Queue,
        goal: Option<&GoalEdges<'_>>,
    ) {
        let target = layout.n + 1;
        while let Some(Reverse((Ordered(d), node))) = heap.pop() {
            let node = node as usize;
            if d > dist[node] {
                continue;
            }
            if node == target {
                break;
            }
            let a = layout.area_of[node] as usize;
            let table = &self.areas[a].tables[k];
            let i = node - layout.offsets[a];
            for j in 0..table.ends.len() {
                if j != i {
                    let to = layout.offsets[a] + j;
                    let how = Via::Table(node as u32);
                    relax(dist, via, heap, to, d + table.dist(i, j), how);
                }
            }
            let end = &table.ends[i];
            if let Some(link) = self.link(end.link)
                && link.allows(radius, profiles)
                && (end.side == Side::From || link.both_ways)
            {
                let other = layout.node_of[end.link.index()][1 - end.side as usize] as usize;
                let a2 = layout.area_of[other] as usize;
                if self.areas[a2].tables[k].ends[other - layout.offsets[a2]].valid {
                    let how = Via::Link(node as u32);
                    relax(dist, via, heap, other, d + link.cost, how);
                }
            }
            if let Some(goal) = goal
                && a == goal.area
            {
                let how = Via::Goal(node as u32);
                relax(dist, via, heap, target, d + goal.legs[i], how);
            }
        }
    }

    /// The rows of `area`'s ends for served radius `k` and an agent of
    /// `radius` and `profiles`, from the cache (each row searched when
    /// first read, see [`Atlas::row`]).
    pub(super) fn rows(&self, area: usize, k: usize, (radius, profiles): (f64, u64)) -> Arc<Rows> {
        let key: RowKey = (area, k, radius.to_bits(), profiles);
        let mut cache = self
            .rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .entry(key)
            .or_insert_with(|| {
                let ends = self.areas[area].tables[k].ends.len();
                Arc::new(Rows {
                    area,
                    agent: (radius, profiles),
                    each: (0..ends).map(|_| OnceLock::new()).collect(),
                })
            })
            .clone()
    }

    /// Row `r` of `rows` (served radius `k`), searched now if no query
    /// has read it since the last change.
    pub(super) fn row<'r>(
        &self,
        rows: &'r Rows,
        r: usize,
        (k, layout): (usize, &Layout),
    ) -> &'r Row {
        rows.each[r].get_or_init(|| {
            let width = layout.n + 2;
            let mut row = Row {
                dist: vec![f64::INFINITY; width],
                via: vec![Via::None; width],
            };
            let source = layout.offsets[rows.area] + r;
            row.dist[source] = 0.0;
            let mut heap = Queue::new();
            heap.push(Reverse((Ordered(0.0), source as u32)));
            self.end_search(
                (k, layout),
                rows.agent,
                &mut row.dist,
                &mut row.via,
                &mut heap,
                None,
            );
            row
        })
    }
}
