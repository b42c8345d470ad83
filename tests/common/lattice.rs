//! The cheapest path over terrain on a lattice of points: the reference
//! costed planners are checked against (tests) and measured beside
//! (benches).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;
use bevy_anyangle::terrain::{Profile, TerrainMap, segment_cost};

#[derive(PartialEq)]
struct Entry(f64, usize);
impl Eq for Entry {}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0)
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The cheapest path cost from `s` to `t` on the lattice of spacing `1 /
/// k`, with moves `moves` (in lattice steps), each allowed when visible on
/// `grid` and passable, costed by `segment_cost`. Lattice points on double
/// corners are left out (except `s` and `t`).
pub fn lattice_dijkstra(
    grid: &Grid,
    terrain: &TerrainMap,
    profile: &Profile,
    k: i64,
    moves: &[(i64, i64)],
    s: DVec2,
    t: DVec2,
) -> Option<f64> {
    let (w, h) = (
        i64::from(grid.width()) * k + 1,
        i64::from(grid.height()) * k + 1,
    );
    let point = |i: usize| {
        DVec2::new(
            (i as i64 % w) as f64 / k as f64,
            (i as i64 / w) as f64 / k as f64,
        )
    };
    let index =
        |p: DVec2| ((p.y * k as f64).round() as i64 * w + (p.x * k as f64).round() as i64) as usize;
    let usable = |p: DVec2| {
        if !grid.is_point_traversable(p) {
            return false;
        }
        let on_vertex = p.x.fract() == 0.0 && p.y.fract() == 0.0;
        !(on_vertex && grid.is_double_corner(p.x as i64, p.y as i64))
    };
    let (si, ti) = (index(s), index(t));
    let mut dist = vec![f64::INFINITY; (w * h) as usize];
    let mut heap = BinaryHeap::new();
    dist[si] = 0.0;
    heap.push(Entry(0.0, si));
    while let Some(Entry(d, i)) = heap.pop() {
        if i == ti {
            return Some(d);
        }
        if d > dist[i] {
            continue;
        }
        let p = point(i);
        let (x, y) = (i as i64 % w, i as i64 / w);
        for &(dx, dy) in moves {
            let (nx, ny) = (x + dx, y + dy);
            if nx < 0 || ny < 0 || nx >= w || ny >= h {
                continue;
            }
            let j = (ny * w + nx) as usize;
            let q = point(j);
            if j != ti && !usable(q) {
                continue;
            }
            if !line_of_sight(grid, p, q) {
                continue;
            }
            let Some(c) = segment_cost(terrain, profile, p, q) else {
                continue;
            };
            if d + c < dist[j] {
                dist[j] = d + c;
                heap.push(Entry(d + c, j));
            }
        }
    }
    None
}

pub const EIGHT: [(i64, i64); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
];

pub fn sixteen() -> Vec<(i64, i64)> {
    let mut m = EIGHT.to_vec();
    for (a, b) in [(1, 2), (2, 1)] {
        for (sx, sy) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
            m.push((a * sx, b * sy));
        }
    }
    m
}
