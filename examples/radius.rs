//! Agents of a radius on bundled maps: the eroded grid (whole cells) beside
//! the mesh of where the disc fits ([`NavMesh::with_radius`]), on the same
//! queries.
//!
//! For each map and radius `r`, a reference finds where a disc of radius
//! `r + 1/8` can go: lattice points 1/16 cell apart at least that far from
//! every wall, joined to their four neighbours. Queries join two random
//! points of one reference component, so a disc slightly larger than the
//! agent can go from start to goal. For each planner it prints how often the
//! path reaches the goal, the smallest distance from a path point to a wall
//! (sampled every 1/32 cell), the mean planning time beside Polyanya's for a
//! point agent on the same queries, and memory. A second table does the
//! same for Lazy Theta\* and A\* on the mesh (over its polygons' corners),
//! with their mean path length beside Polyanya's on the mesh.
//!
//! ```text
//! cargo run --release --example radius -- [MAP ...] [--queries N]
//! ```

use std::time::Instant;

use bevy_anyangle::clearance::{Clearance, erode};
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;

#[path = "../src/mesh/reference.rs"]
mod reference;

/// Distance from `p` to the nearest wall of `grid`, or `cap` if farther.
fn wall_distance(grid: &Grid, p: DVec2, cap: f64) -> f64 {
    let blocked = |x, y| !grid.is_free_xy(x, y);
    reference::wall_distance_below((grid.width(), grid.height()), &blocked, p, cap)
}

/// Component labels of the lattice points (spacing `1 / k`) where a disc of
/// radius `r` fits (see `reference::lattice_components`).
fn components(grid: &Grid, r: f64, k: u32) -> Vec<u32> {
    let blocked = |x, y| !grid.is_free_xy(x, y);
    reference::lattice_components((grid.width(), grid.height()), &blocked, r, k)
}

/// The smallest wall distance along a path, sampled every 1/32 cell.
fn clearance_of(grid: &Grid, waypoints: &[DVec2], cap: f64) -> f64 {
    let mut least = cap;
    for w in waypoints.windows(2) {
        let steps = (w[0].distance(w[1]) * 32.0).ceil().max(1.0) as u32;
        for t in 0..=steps {
            let p = w[0].lerp(w[1], f64::from(t) / f64::from(steps));
            least = least.min(wall_distance(grid, p, cap));
        }
    }
    least
}

/// What one planner did on a map's queries.
#[derive(Default)]
struct Tally {
    reached: u32,
    least: f64,
    seconds: f64,
    expanded: u64,
}

impl Tally {
    fn add(&mut self, grid: &Grid, goal: DVec2, path: Option<&Path>, seconds: f64, cap: f64) {
        self.seconds += seconds;
        if let Some(path) = path {
            if !path.is_fallback() && path.waypoints.last() == Some(&goal) {
                self.reached += 1;
            }
            self.least = self.least.min(clearance_of(grid, &path.waypoints, cap));
            self.expanded += path.stats.expanded;
        }
    }
}

/// A tiny xorshift generator, for repeatable queries.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn main() {
    let mut maps: Vec<String> = Vec::new();
    let mut queries = 300;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--queries" {
            queries = args.next().and_then(|n| n.parse().ok()).unwrap_or(queries);
        } else {
            maps.push(a);
        }
    }
    if maps.is_empty() {
        maps = ["8room_000", "den520d", "lt_backalley_n", "arena"]
            .map(|m| format!("data/maps/{m}.map"))
            .to_vec();
    }
    let options = PlanOptions::default();
    let mut planner = Planner::new();
    // The second table's rows.
    let mut others = Vec::new();
    println!(
        "| map | r | tolerance | reached: eroded grid | reached: mesh | least clearance: eroded / mesh | time per query: point / eroded / mesh (ratio) | expansions: point / mesh | mesh bytes: point / radius |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for map in &maps {
        let Ok(text) = std::fs::read_to_string(map) else {
            eprintln!("cannot read {map}");
            continue;
        };
        let grid = Grid::from_movingai(&text).expect("a Moving AI map");
        let name = std::path::Path::new(map)
            .file_stem()
            .map_or(map.clone(), |s| s.to_string_lossy().into_owned());
        let point = NavMesh::build(&grid);
        for r in [0.25, 0.3, 0.5, 1.0, 2.0, 3.0] {
            let k = 16;
            let labels = components(&grid, r + 0.125, k);
            let w = (grid.width() * k + 1) as usize;
            let fitting: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] != 0).collect();
            if fitting.is_empty() {
                continue;
            }
            let at = |i: usize| DVec2::new((i % w) as f64, (i / w) as f64) / f64::from(k);
            let mut rng = Rng(0x5eed_0000 + (r * 100.0) as u64);
            let mut pairs = Vec::new();
            while pairs.len() < queries {
                let a = fitting[rng.below(fitting.len())];
                let b = (0..1000)
                    .map(|_| fitting[rng.below(fitting.len())])
                    .find(|&b| labels[b] == labels[a] && b != a);
                if let Some(b) = b {
                    pairs.push((at(a), at(b)));
                }
            }
            let clearance = Clearance::from_radius(r).expect("a valid radius");
            let eroded = erode(&grid, clearance);
            let mesh = NavMesh::with_radius(&grid, r).expect("a valid radius");
            let cap = r + 2.0;
            let (mut by_grid, mut by_mesh) = (
                Tally {
                    least: cap,
                    ..Tally::default()
                },
                Tally {
                    least: cap,
                    ..Tally::default()
                },
            );
            let (mut point_seconds, mut point_expanded) = (0.0, 0);
            let corners = [Algorithm::LazyTheta, Algorithm::AStar];
            let mut by_corners = corners.map(|_| {
                (
                    Tally {
                        least: cap,
                        ..Tally::default()
                    },
                    0.0,
                )
            });
            for &(s, t) in &pairs {
                let clock = Instant::now();
                let path = planner.plan_on_mesh(&point, s, t, &options);
                point_seconds += clock.elapsed().as_secs_f64();
                point_expanded += path.map_or(0, |p| p.stats.expanded);
                let clock = Instant::now();
                let path = planner.plan_with_clearance(&grid, &eroded, clearance, s, t, &options);
                by_grid.add(
                    &grid,
                    t,
                    path.as_ref().ok(),
                    clock.elapsed().as_secs_f64(),
                    cap,
                );
                let clock = Instant::now();
                let path = planner.plan_on_mesh(&mesh, s, t, &options);
                by_mesh.add(
                    &grid,
                    t,
                    path.as_ref().ok(),
                    clock.elapsed().as_secs_f64(),
                    cap,
                );
                let shortest = path.map_or(f64::NAN, |p| p.length);
                for (algorithm, (tally, ratio)) in corners.iter().zip(&mut by_corners) {
                    let with = PlanOptions::with_algorithm(*algorithm);
                    let clock = Instant::now();
                    let path = planner.plan_on_mesh(&mesh, s, t, &with);
                    tally.add(
                        &grid,
                        t,
                        path.as_ref().ok(),
                        clock.elapsed().as_secs_f64(),
                        cap,
                    );
                    if let Ok(path) = &path
                        && shortest > 0.0
                    {
                        *ratio += path.length / shortest;
                    }
                }
            }
            let n = pairs.len() as f64;
            let us = |s: f64| s / n * 1e6;
            println!(
                "| {name} | {r} | {:.3} | {:.1} % | {:.1} % | {:.3} / {:.3} | {:.1} / {:.1} / {:.1} µs ({:.2}x) | {:.0} / {:.0} | {} / {} |",
                mesh.tolerance(),
                100.0 * f64::from(by_grid.reached) / n,
                100.0 * f64::from(by_mesh.reached) / n,
                by_grid.least,
                by_mesh.least,
                us(point_seconds),
                us(by_grid.seconds),
                us(by_mesh.seconds),
                by_mesh.seconds / point_seconds,
                point_expanded as f64 / n,
                by_mesh.expanded as f64 / n,
                point.memory_bytes(),
                mesh.memory_bytes(),
            );
            let [(lazy, lazy_ratio), (astar, astar_ratio)] = &by_corners;
            others.push(format!(
                "| {name} | {r} | {:.1} % / {:.1} % | {:.3} / {:.3} | {:.4} / {:.4} | {:.1} / {:.1} / {:.1} µs |",
                100.0 * f64::from(lazy.reached) / n,
                100.0 * f64::from(astar.reached) / n,
                lazy.least,
                astar.least,
                lazy_ratio / n,
                astar_ratio / n,
                us(by_mesh.seconds),
                us(lazy.seconds),
                us(astar.seconds),
            ));
        }
    }
    println!();
    println!(
        "| map | r | reached: Lazy Theta* / A* | least clearance: Lazy Theta* / A* | length / Polyanya's: Lazy Theta* / A* | time per query: Polyanya / Lazy Theta* / A* |"
    );
    println!("|---|---|---|---|---|---|");
    for row in others {
        println!("{row}");
    }
}
