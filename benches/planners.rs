//! Query time per planner and per bundled map: each benchmark plans the same
//! fixed sample of a map's scenario queries (spread over its difficulty
//! buckets, scenario cells taken as vertices as GPPC does) with one planner,
//! and asserts inside the timed loop that every query found a path of the
//! expected length. Benchmark ids name the planner and the map
//! (`plan/anya/den520d` beside `plan/astar/den520d`); the `pathfinding` crate's `astar`
//! on the same vertex grid is the baseline.
//!
//! ```text
//! cargo bench --bench planners                 # every map (about 2 minutes)
//! cargo bench --bench planners -- den520d      # one map
//! cargo bench --bench planners -- anya/        # one planner
//! cargo bench --bench planners -- shared_goal/ # many starts, one goal
//! ```
//!
//! `shared_goal/` times many starts sent to one goal: one Polyanya search
//! from the goal for all of them (`Planner::plan_many_on_mesh`) beside one
//! search per start.
//!
//! Fixtures (maps, scenarios, the baseline's graph, the expected lengths) are
//! built before timing; planners are warmed up with `Planner::reserve` and an
//! untimed pass over the sample.

#[path = "../examples/compare/baseline.rs"]
#[allow(
    dead_code,
    reason = "shared with the compare example, which uses more of it"
)]
mod baseline;

use std::hint::black_box;
use std::time::Duration;

use bevy_anyangle::prelude::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use baseline::VertexGraph;

/// Queries per map in each benchmark.
const SAMPLE: usize = 8;

/// Relative tolerance when checking a length inside the loop.
const TOLERANCE: f64 = 1e-9;

/// One map's fixture.
struct Fixture {
    name: String,
    grid: Grid,
    /// `(start, goal)` vertices.
    queries: Vec<(DVec2, DVec2)>,
}

/// Every bundled map with `SAMPLE` of its queries, spread evenly over the
/// scenario (which lists them by difficulty bucket).
fn fixtures() -> Vec<Fixture> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("data/maps is bundled with the crate")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".map").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let read = |ext: &str| {
                std::fs::read_to_string(format!("{dir}/{name}{ext}"))
                    .unwrap_or_else(|e| panic!("{name}{ext}: {e}"))
            };
            let grid = Grid::from_movingai(&read(".map")).expect("bundled maps parse");
            let scenario = Scenario::parse(&read(".map.scen")).expect("bundled scenarios parse");
            let n = scenario.entries.len();
            let queries = (0..SAMPLE.min(n))
                .map(|i| &scenario.entries[(2 * i + 1) * n / (2 * SAMPLE.min(n))])
                .map(|e| (e.start.as_dvec2(), e.goal.as_dvec2()))
                .collect();
            Fixture {
                name,
                grid,
                queries,
            }
        })
        .collect()
}

/// Plans every query of `f` with `planner` and returns the lengths.
fn plan_all(planner: &mut Planner, f: &Fixture, options: &PlanOptions) -> Vec<f64> {
    f.queries
        .iter()
        .map(|&(s, g)| {
            let path = planner
                .plan(&f.grid, s, g, options)
                .unwrap_or_else(|e| panic!("{}: {s} -> {g}: {e}", f.name));
            assert!(
                !path.is_fallback(),
                "{}: {s} -> {g} is reachable in the scenario",
                f.name
            );
            path.length
        })
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOLERANCE * a.max(1.0)
}

fn planners(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    for f in fixtures() {
        group.throughput(Throughput::Elements(f.queries.len() as u64));
        for algorithm in Algorithm::ALL {
            let options = PlanOptions::with_algorithm(algorithm);
            let mut planner = Planner::new();
            planner.reserve(&f.grid);
            // Untimed: warms the planner's memory and gives the lengths to
            // check against.
            let expected = plan_all(&mut planner, &f, &options);
            group.bench_with_input(BenchmarkId::new(algorithm.name(), &f.name), &f, |b, f| {
                b.iter(|| {
                    let lengths = plan_all(&mut planner, black_box(f), &options);
                    assert!(
                        lengths.iter().zip(&expected).all(|(a, b)| same(*a, *b)),
                        "{algorithm} on {}: lengths changed between runs",
                        f.name
                    );
                    lengths
                });
            });
        }
        // The baseline: pathfinding's A* on the same vertex grid; its
        // lengths must match our grid A*'s.
        let graph = VertexGraph::new(&f.grid);
        let astar = plan_all(
            &mut Planner::new(),
            &f,
            &PlanOptions::with_algorithm(Algorithm::AStar),
        );
        let vertex = |p: DVec2| [p.x as i64, p.y as i64];
        group.bench_with_input(BenchmarkId::new("pathfinding", &f.name), &f, |b, f| {
            b.iter(|| {
                for (&(s, g), want) in black_box(f).queries.iter().zip(&astar) {
                    let found = graph.plan(vertex(s), vertex(g));
                    let cost = found.cost.expect("reachable in the scenario");
                    assert!(
                        same(cost.value(), *want),
                        "{}: {s} -> {g}: pathfinding {} against our A* {want}",
                        f.name,
                        cost.value()
                    );
                }
            });
        });
    }
    group.finish();
}

/// Many starts, one goal on `AR0011SR`: `Planner::plan_many_on_mesh` (one
/// Polyanya search from the goal for all of them) beside `plan_on_mesh` for
/// each start, on the same mesh and the same starts (free cells' centres
/// spread over the map at random), 1,000 and 10,000 of them. Before timing,
/// every shared answer is checked against its single search's length.
fn shared_goal(c: &mut Criterion) {
    use bevy_anyangle::mesh::NavMesh;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps/AR0011SR.map");
    let grid = Grid::from_movingai(&std::fs::read_to_string(path).expect("bundled map"))
        .expect("bundled maps parse");
    let mesh = NavMesh::build(&grid);
    let free: Vec<DVec2> = (0..grid.height())
        .flat_map(|y| (0..grid.width()).map(move |x| UVec2::new(x, y)))
        .filter(|&cell| grid.is_free(cell))
        .map(|cell| cell.as_dvec2() + DVec2::splat(0.5))
        .collect();
    let goal = free[free.len() / 2];
    let options = PlanOptions::with_algorithm(Algorithm::Polyanya);
    let mut group = c.benchmark_group("shared_goal");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2));
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    for n in [1_000, 10_000] {
        let starts: Vec<DVec2> = (0..n)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                free[(rng % free.len() as u64) as usize]
            })
            .collect();
        let mut planner = Planner::new();
        let mut answers = Vec::new();
        planner.plan_many_on_mesh(&mesh, &starts, goal, &options, &mut answers);
        for (&start, answer) in starts.iter().zip(&answers) {
            let alone = planner
                .plan_on_mesh(&mesh, start, goal, &options)
                .expect("reachable");
            let shared = answer.as_ref().expect("reachable");
            assert!(
                same(shared.length, alone.length),
                "{start}: {} against {}",
                shared.length,
                alone.length
            );
        }
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("shared", format!("AR0011SR/{n}")), |b| {
            b.iter(|| {
                planner.plan_many_on_mesh(&mesh, black_box(&starts), goal, &options, &mut answers);
                answers.len()
            });
        });
        group.bench_function(
            BenchmarkId::new("one-by-one", format!("AR0011SR/{n}")),
            |b| {
                b.iter(|| {
                    black_box(&starts)
                        .iter()
                        .filter(|&&start| {
                            planner.plan_on_mesh(&mesh, start, goal, &options).is_ok()
                        })
                        .count()
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, planners, shared_goal);
criterion_main!(benches);
