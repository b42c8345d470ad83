//! Navigation meshes: building a bundled map's whole mesh, and bringing a
//! mesh up to date after a one-cell edit on grids of 512 x 512 and
//! 8192 x 8192 cells (`den520d` repeated), in open space and on a corner
//! where four chunks meet (the most chunks one cell can touch; on 8192 x
//! 8192 also four groups of chunks). The same for meshes for agents of a
//! radius (`radius-*`), with their memory beside the grid's.
//!
//! Only `NavMesh::sync` is timed in the edit benchmarks: the cell is
//! flipped outside the timed part, and flipped back at the next iteration.
//! `open` and `chunk-corner` thus edit a mesh whose groups their first
//! iteration split; `first-*` time that first edit alone, each iteration on
//! a fresh copy of the mesh with every group whole.
//!
//! ```text
//! cargo bench --bench mesh
//! cargo bench --bench mesh -- build/   # whole meshes only
//! cargo bench --bench mesh -- radius   # meshes for agents of a radius only
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_anyangle::mesh::{CHUNK, NavMesh};
use bevy_anyangle::prelude::*;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn load(name: &str) -> Grid {
    let path = format!("{}/data/maps/{name}.map", env!("CARGO_MANIFEST_DIR"));
    Grid::from_movingai(&std::fs::read_to_string(path).expect("bundled map")).expect("valid map")
}

/// `map` repeated into a `side` x `side` grid.
fn tiled(map: &Grid, side: u32) -> Grid {
    let mut grid = Grid::new_blocked(side, side).expect("size");
    let (w, h) = (map.width(), map.height());
    for y in 0..side {
        let mut x = 0;
        while x < side {
            let (mx, my) = (x % w, y % h);
            if map.is_free(UVec2::new(mx, my)) {
                grid.set_free(UVec2::new(x, y), true).expect("inside");
            }
            x += 1;
        }
    }
    grid
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for name in [
        "arena",
        "lt_backalley_n",
        "AR0011SR",
        "Berlin_0_256",
        "BigGameHunters",
        "den520d",
        "lak303d",
        "brc202d",
        "8room_000",
        "maze512-1-0",
        "random512-10-0",
        "random512-20-0",
        "random512-40-0",
    ] {
        let grid = load(name);
        let mesh = NavMesh::build(&grid);
        println!(
            "{name}: {} polygons, {:.2} bytes per free cell",
            mesh.polygon_count(),
            mesh.memory_bytes() as f64 / grid.free_count() as f64
        );
        group.bench_with_input(BenchmarkId::from_parameter(name), &grid, |b, g| {
            b.iter(|| black_box(NavMesh::build(g)));
        });
    }
    group.finish();
}

fn radius_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("radius-build");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for name in ["lt_backalley_n", "den520d", "8room_000", "BigGameHunters"] {
        let grid = load(name);
        let point = NavMesh::build(&grid);
        for r in [0.3, 2.0] {
            let mesh = NavMesh::with_radius(&grid, r).expect("radius");
            println!(
                "{name}, r = {r}: {} polygons ({} for a point agent), {} bytes ({} for a point agent)",
                mesh.polygon_count(),
                point.polygon_count(),
                mesh.memory_bytes(),
                point.memory_bytes(),
            );
            group.bench_with_input(BenchmarkId::new(name, r), &grid, |b, g| {
                b.iter(|| black_box(NavMesh::with_radius(g, r).expect("radius")));
            });
        }
    }
    group.finish();
}

fn edit(c: &mut Criterion) {
    let map = load("den520d");
    let mut group = c.benchmark_group("edit");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for side in [512, 8192] {
        let grid = tiled(&map, side);
        // An open cell of the map's copy nearest the middle, and the cell at
        // a corner where four chunks meet.
        let (w, h) = (map.width(), map.height());
        let (ox, oy) = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .find(|&(x, y)| {
                (x.saturating_sub(2)..=x + 2).all(|cx| {
                    (y.saturating_sub(2)..=y + 2)
                        .all(|cy| map.is_free_xy(i64::from(cx), i64::from(cy)))
                })
            })
            .expect("open space");
        let open = (side / 2 / w * w + ox, side / 2 / h * h + oy);
        let corner = (CHUNK * (side / CHUNK / 2), CHUNK * (side / CHUNK / 2));
        let with_radius = |g: &Grid| {
            let mesh = NavMesh::with_radius(g, 0.5).expect("radius");
            println!(
                "{side} x {side}, r = 0.5: {} polygons, {} MB; the grid {} MB",
                mesh.polygon_count(),
                mesh.memory_bytes() >> 20,
                Grid::bytes_needed(side, side) >> 20,
            );
            mesh
        };
        let radius_mesh = with_radius(&grid);
        let whole = NavMesh::build(&grid);
        for (label, (x, y)) in [("first-open", open), ("first-chunk-corner", corner)] {
            let cell = UVec2::new(x, y);
            let mut edited = grid.clone();
            edited.set_free(cell, !grid.is_free(cell)).expect("inside");
            group.bench_function(BenchmarkId::new(label, side), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let mut mesh = whole.clone();
                        let clock = Instant::now();
                        black_box(mesh.sync(&edited));
                        total += clock.elapsed();
                        drop(black_box(mesh));
                    }
                    total
                });
            });
        }
        for (label, (x, y)) in [
            ("open", open),
            ("chunk-corner", corner),
            ("radius-open", open),
            ("radius-chunk-corner", corner),
        ] {
            let mut grid = grid.clone();
            let mut mesh = if label.starts_with("radius") {
                radius_mesh.clone()
            } else {
                NavMesh::build(&grid)
            };
            let cell = UVec2::new(x, y);
            group.bench_function(BenchmarkId::new(label, side), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let free = grid.is_free(cell);
                        grid.set_free(cell, !free).expect("inside");
                        let clock = Instant::now();
                        black_box(mesh.sync(&grid));
                        total += clock.elapsed();
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, build, radius_build, edit);
criterion_main!(benches);
