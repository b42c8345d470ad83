//! The cost of one cell edit on a big grid: `den520d` (256 x 257) repeated
//! into an 8192 x 8192 grid, edited in a copy near the middle.
//!
//! Three edits: blocking a cell in open space, blocking a cell that cuts a
//! small pocket off, and freeing the door of a wall built across the copy,
//! which merges its two halves. Each is timed on a grid of its own (`alone`) and on
//! an `Arc<Grid>` that a snapshot shares, edited through `Arc::make_mut` as
//! the plugin's `NavGrid` does (`shared`). Only the edit is timed: the grid
//! is put back, and the snapshot dropped, outside the timed part.
//!
//! ```text
//! cargo bench --bench grid_edits
//! ```

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy_anyangle::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

/// The bundled map repeated.
const MAP: &str = "den520d";

/// Side of the big grid, in cells.
const SIDE: i64 = 8192;

/// The 4-neighbours of a cell.
fn neighbours(x: i64, y: i64) -> [(i64, i64); 4] {
    [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
}

/// A free cell whose 5 x 5 surroundings are free.
fn open_cell(map: &Grid) -> (i64, i64) {
    let (w, h) = (i64::from(map.width()), i64::from(map.height()));
    (2..h - 2)
        .flat_map(|y| (2..w - 2).map(move |x| (x, y)))
        .find(|&(x, y)| (-2..=2).all(|dy| (-2..=2).all(|dx| map.is_free_xy(x + dx, y + dy))))
        .expect("the map has open space")
}

/// The free cells 4-connected to `from` on `map`, stopping past `limit`.
fn flood(map: &Grid, from: (i64, i64), limit: usize) -> usize {
    let mut seen = std::collections::HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    while let Some((x, y)) = queue.pop_front() {
        for n in neighbours(x, y) {
            if map.is_free_xy(n.0, n.1) && seen.len() <= limit && seen.insert(n) {
                queue.push_back(n);
            }
        }
    }
    seen.len()
}

/// A free cell between two free cells whose blocking cuts off the largest
/// pocket of at most 64 cells.
fn pocket_cell(map: &Grid) -> (i64, i64) {
    let (w, h) = (i64::from(map.width()), i64::from(map.height()));
    let mut best: Option<(usize, (i64, i64))> = None;
    for y in 0..h {
        for x in 0..w {
            let free: Vec<_> = neighbours(x, y)
                .into_iter()
                .filter(|&(nx, ny)| map.is_free_xy(nx, ny))
                .collect();
            if !map.is_free_xy(x, y) || free.len() != 2 {
                continue;
            }
            let mut cut = map.clone();
            cut.set_free(UVec2::new(x as u32, y as u32), false)
                .expect("inside");
            if cut.region_count() > map.region_count() {
                let pocket = free.iter().map(|&n| flood(&cut, n, 64)).min();
                if let Some(pocket) = pocket.filter(|&p| p <= 64)
                    && best.is_none_or(|b| pocket > b.0)
                {
                    best = Some((pocket, (x, y)));
                }
            }
        }
    }
    let (size, cell) = best.expect("a cell of the map cuts a pocket off");
    eprintln!("pocket of {size} cells cut off at {cell:?}");
    cell
}

/// A door for a wall along row `y` of `map`: a cell of that row free, with
/// free cells above and below.
fn door_cell(map: &Grid, y: i64) -> (i64, i64) {
    (0..i64::from(map.width()))
        .map(|x| (x, y))
        .find(|&(x, y)| (y - 1..=y + 1).all(|y| map.is_free_xy(x, y)))
        .expect("the row has a free column")
}

fn grid_edits(c: &mut Criterion) {
    let path = format!("{}/data/maps/{MAP}.map", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("the map is bundled with the crate");
    let map = Grid::from_movingai(&text).expect("a bundled map parses");
    let (w, h) = (i64::from(map.width()), i64::from(map.height()));
    let picture: String = (0..SIDE)
        .map(|y| {
            let row: String = (0..SIDE)
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
    let mut big = Grid::from_ascii(&picture).expect("the repeated map is a valid picture");
    drop(picture);
    // The copy of the map at (SIDE / w / 2, SIDE / h / 2), in copies.
    let at = |(x, y): (i64, i64)| {
        UVec2::new(
            (x + w * (SIDE / w / 2)) as u32,
            (y + h * (SIDE / h / 2)) as u32,
        )
    };
    // A wall across that copy, with a door that is closed.
    let door = door_cell(&map, h / 2);
    let wall_start = at((0, h / 2));
    big.set_rect_free(
        URect::from_corners(wall_start, wall_start + UVec2::new(w as u32, 1)),
        false,
    )
    .expect("inside");
    let cases = [
        ("block_open", at(open_cell(&map)), false, 0),
        ("block_pocket", at(pocket_cell(&map)), false, 1),
        ("free_door", at(door), true, -1),
    ];

    let mut group = c.benchmark_group(format!("grid_edits/{MAP}_{SIDE}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let mut grid = Arc::new(big);
    for (name, cell, free, regions) in cases {
        let before = grid.region_count();
        {
            let g = Arc::make_mut(&mut grid);
            assert!(g.set_free(cell, free).expect("inside"));
            assert_eq!(
                i64::from(g.region_count()) - i64::from(before),
                regions,
                "{name}: regions made"
            );
            g.set_free(cell, !free).expect("inside");
        }
        for shared in [false, true] {
            let id = format!("{name}/{}", if shared { "shared" } else { "alone" });
            group.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        let snapshot = shared.then(|| Arc::clone(&grid));
                        let start = Instant::now();
                        let changed = Arc::make_mut(&mut grid).set_free(black_box(cell), free);
                        timed += start.elapsed();
                        assert!(changed.expect("inside"));
                        drop(snapshot);
                        Arc::make_mut(&mut grid)
                            .set_free(cell, !free)
                            .expect("inside");
                    }
                    timed
                });
            });
        }
        assert_eq!(grid.region_count(), before);
    }
    group.finish();
}

criterion_group!(benches, grid_edits);
criterion_main!(benches);
