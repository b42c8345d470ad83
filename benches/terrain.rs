//! Planning with terrain costs: `den520d` and `lak303d`, whose trees a
//! *forester* profile crosses at three times the cost of ground. On the same
//! scenario queries (every 20th), in one run:
//!
//! - Theta\* with costs (`Algorithm::LazyTheta` under a costed profile) and
//!   A\* with costs, timed side by side; printed before the timings, the
//!   cost of their paths over the cheapest path on a lattice of half cells
//!   with 16 moves per point (an upper bound on the cheapest path, every
//!   `FINE_STRIDE`-th query: it takes a fraction of a second each);
//! - the same queries for a *ranger* (trees as ground, a uniform profile):
//!   Anya on the ranger's grid, the bound costs lead away from.
//!
//! ```text
//! cargo bench --bench terrain
//! ```

#[path = "../tests/common/lattice.rs"]
mod lattice;

use std::hint::black_box;
use std::time::Duration;

use bevy_anyangle::prelude::*;
use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};
use criterion::{Criterion, criterion_group, criterion_main};

/// Every `STRIDE`-th scenario query.
const STRIDE: usize = 20;
/// Of those, every `FINE_STRIDE`-th is compared with the lattice.
const FINE_STRIDE: usize = 4;

fn terrain(c: &mut Criterion) {
    let forester = Profile::default()
        .with(Terrain::TREES, 3.0)
        .expect("a cost >= 1");
    let ranger = Profile::default()
        .with(Terrain::TREES, 1.0)
        .expect("a cost >= 1");
    for name in ["den520d", "lak303d"] {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps");
        let text = std::fs::read_to_string(format!("{dir}/{name}.map")).expect("bundled");
        let scen = std::fs::read_to_string(format!("{dir}/{name}.map.scen")).expect("bundled");
        let map = TerrainMap::from_movingai(&text).expect("a bundled map parses");
        let scenario = Scenario::parse(&scen).expect("a bundled scenario parses");
        let costed = map.grid(&forester);
        let uniform = map.grid(&ranger);
        // Queries between cells both grids have free (scenario cells are
        // free on the default grid, so on these too).
        let queries: Vec<(DVec2, DVec2)> = scenario
            .entries
            .iter()
            .step_by(STRIDE)
            .map(|e| (e.start.as_dvec2(), e.goal.as_dvec2()))
            .collect();
        let mut planner = Planner::new();
        let run = |planner: &mut Planner, algorithm: Algorithm, profile: &Profile, grid: &Grid| {
            let options = PlanOptions::with_algorithm(algorithm);
            queries
                .iter()
                .map(|&(s, t)| {
                    planner
                        .plan_with_costs(grid, &map, profile, s, t, &options)
                        .expect("the queries are reachable")
                        .cost
                })
                .collect::<Vec<f64>>()
        };
        let theta = run(&mut planner, Algorithm::LazyTheta, &forester, &costed);
        let astar = run(&mut planner, Algorithm::AStar, &forester, &costed);
        let moves = lattice::sixteen();
        let (mut vs_theta, mut vs_astar) = (Vec::new(), Vec::new());
        for (i, &(s, t)) in queries.iter().enumerate().step_by(FINE_STRIDE) {
            let fine = lattice::lattice_dijkstra(&costed, &map, &forester, 2, &moves, s, t)
                .expect("the lattice has the grid's paths");
            vs_theta.push(theta[i] / fine);
            vs_astar.push(astar[i] / fine);
        }
        let stats = |r: &[f64]| {
            let mean = r.iter().sum::<f64>() / r.len() as f64;
            let worst = r.iter().copied().fold(f64::MIN, f64::max);
            let best = r.iter().copied().fold(f64::MAX, f64::min);
            format!("mean {mean:.4}, best {best:.4}, worst {worst:.4}")
        };
        eprintln!(
            "{name}, forester (trees x3), cost over the half-cell lattice's ({} queries): \
             Theta* {}; A* {}",
            vs_theta.len(),
            stats(&vs_theta),
            stats(&vs_astar)
        );

        let mut group = c.benchmark_group(format!("terrain/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for (id, algorithm, profile, grid) in [
            ("forester_theta", Algorithm::LazyTheta, &forester, &costed),
            ("forester_astar", Algorithm::AStar, &forester, &costed),
            ("ranger_anya", Algorithm::Anya, &ranger, &uniform),
        ] {
            group.bench_function(id, |b| {
                b.iter(|| black_box(run(&mut planner, algorithm, profile, grid)));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, terrain);
criterion_main!(benches);
