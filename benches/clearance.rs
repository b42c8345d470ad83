//! What agents with a radius cost the grid: eroding a whole map, and keeping
//! an eroded grid up to date after a one-cell edit, beside the edit of the
//! base grid itself, for radii from half a cell to 8 cells.
//!
//! Maps: `den520d` (256 x 257) and the same map repeated into a 2048 x 2048
//! grid. The one-cell edit blocks (then frees) a cell in open space near the
//! middle; only the timed step is measured, the grids are put back outside
//! it.
//!
//! ```text
//! cargo bench --bench clearance
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_anyangle::clearance::{Clearance, ErodedGrid, erode};
use bevy_anyangle::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

/// Radii, in cells.
const RADII: [f64; 4] = [0.5, 1.5, 3.0, 8.0];

/// `map` repeated into a `side x side` grid.
fn repeated(map: &Grid, side: i64) -> Grid {
    let (w, h) = (i64::from(map.width()), i64::from(map.height()));
    let picture: String = (0..side)
        .map(|y| {
            let row: String = (0..side)
                .map(|x| {
                    if map.is_free_xy(x % w, y % h) {
                        '.'
                    } else {
                        '#'
                    }
                })
                .collect();
            row + "\n"
        })
        .collect();
    Grid::from_ascii(&picture).expect("a valid picture")
}

/// The free cell closest to the middle whose 17 x 17 surroundings are free.
fn open_cell(grid: &Grid) -> UVec2 {
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    let mut cells: Vec<(i64, i64)> = (8..h - 8)
        .flat_map(|y| (8..w - 8).map(move |x| (x, y)))
        .collect();
    cells.sort_by_key(|&(x, y)| (x - w / 2).abs() + (y - h / 2).abs());
    let (x, y) = cells
        .into_iter()
        .find(|&(x, y)| (-8..=8).all(|dy| (-8..=8).all(|dx| grid.is_free_xy(x + dx, y + dy))))
        .expect("the map has open space");
    UVec2::new(x as u32, y as u32)
}

fn clearance(c: &mut Criterion) {
    let path = format!("{}/data/maps/den520d.map", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("the map is bundled with the crate");
    let den = Grid::from_movingai(&text).expect("a bundled map parses");
    let big = repeated(&den, 2048);
    for (name, base) in [("den520d", den), ("den520d_2048", big)] {
        let mut group = c.benchmark_group(format!("clearance/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        let cell = open_cell(&base);
        let rect = URect::from_corners(cell, cell + UVec2::ONE);
        let mut grid = base.clone();
        group.bench_function("edit_base_grid", |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    grid.set_free(black_box(cell), false).expect("inside");
                    timed += start.elapsed();
                    grid.set_free(cell, true).expect("inside");
                }
                timed
            });
        });
        for radius in RADII {
            let class = Clearance::from_radius(radius).expect("a valid radius");
            group.bench_function(format!("erode/r{radius}"), |b| {
                b.iter(|| erode(black_box(&base), class));
            });
            let mut eroded = ErodedGrid::new(&base, class);
            group.bench_function(format!("update_after_edit/r{radius}"), |b| {
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        grid.set_free(cell, false).expect("inside");
                        let start = Instant::now();
                        assert!(eroded.update(&grid, [black_box(rect)]));
                        timed += start.elapsed();
                        grid.set_free(cell, true).expect("inside");
                        eroded.update(&grid, [rect]);
                    }
                    timed
                });
            });
        }
        group.finish();
    }
}

criterion_group!(benches, clearance);
criterion_main!(benches);
