//! Search memory: a `Planner` holds memory for what its searches touch, not
//! for the whole grid, and reusing one across grids of different sizes gives
//! the same answers as a fresh one.

mod common;

use bevy_anyangle::prelude::*;

use common::generate::Rng;

/// Side of the large grids.
const LARGE: u32 = 8192;

/// An open `LARGE` x `LARGE` grid with a few walls near its middle, between
/// the endpoints of [`large_query`], so that searches do real work.
fn walled_large_grid() -> Grid {
    let mut grid = Grid::new(LARGE, LARGE).unwrap();
    grid.edit(|e| {
        // A wall across the straight line, with a pocket the searches explore.
        e.set_rect_free(URect::new(4000, 4100, 4120, 4102), false)?;
        e.set_rect_free(URect::new(4000, 4060, 4002, 4100), false)?;
        e.set_rect_free(URect::new(4118, 4060, 4120, 4100), false)?;
        // Scattered blocks on the way.
        for i in 0..12 {
            let x = 3990 + 13 * i;
            e.set_rect_free(
                URect::new(x, 4150 + (i % 3) * 7, x + 3, 4153 + (i % 3) * 7),
                false,
            )?;
        }
        Ok(())
    })
    .unwrap();
    grid
}

/// A query of about 200 cells across the walls of [`walled_large_grid`].
fn large_query() -> (DVec2, DVec2) {
    (DVec2::new(4060.5, 4080.5), DVec2::new(4075.5, 4230.5))
}

#[test]
fn first_query_on_a_large_grid_holds_little_memory() {
    let grid = walled_large_grid();
    let (start, goal) = large_query();
    // Measured: Anya 0.8 MB after 8 300 expansions; Lazy Theta* 1.3 MB
    // after 7 200; A* and A* PS 1.3 MB after 7 000 (of which 0.26 MB is the
    // page table of the 8192 x 8192 grid). Sizing every vertex of the grid
    // instead takes over 1 GB per planner.
    let bound = 4 << 20;
    for algorithm in Algorithm::ALL {
        let mut planner = Planner::new();
        assert_eq!(planner.memory_bytes(), 0, "a new planner holds nothing");
        let path = planner
            .plan(&grid, start, goal, &PlanOptions::with_algorithm(algorithm))
            .unwrap();
        assert!(
            path.waypoints.len() > 2,
            "{algorithm}: the walls are in the way"
        );
        assert!(path.stats.expanded > 0, "{algorithm}");
        let bytes = planner.memory_bytes();
        println!(
            "{algorithm}: {} expanded, {bytes} bytes",
            path.stats.expanded
        );
        assert!(bytes > 0, "{algorithm}: a search holds some memory");
        assert!(bytes < bound, "{algorithm}: {bytes} bytes");
        if algorithm == Algorithm::Polyanya {
            // The mesh is the whole grid's, kept apart from search memory:
            // a few bytes per free cell at most.
            let mesh = planner.mesh().expect("kept").memory_bytes() as f64;
            let per_cell = mesh / grid.free_count() as f64;
            println!("{algorithm}: the mesh holds {mesh} bytes, {per_cell:.3} per free cell");
            assert!(per_cell < 4.0, "{per_cell}");
        }
        // The same query again: the pages it needs exist already.
        let again = planner
            .plan(&grid, start, goal, &PlanOptions::with_algorithm(algorithm))
            .unwrap();
        assert_eq!(again, path, "{algorithm}");
        assert_eq!(planner.memory_bytes(), bytes, "{algorithm}: no new memory");
    }
}

#[test]
fn reserve_allocates_the_whole_grid_once() {
    let grid = Grid::from_ascii(
        "........
         ..##....
         ......#.",
    )
    .unwrap();
    let mut planner = Planner::new();
    planner.reserve(&grid);
    let reserved = planner.memory_bytes();
    assert!(reserved > 0);
    planner.reserve(&grid);
    assert_eq!(
        planner.memory_bytes(),
        reserved,
        "reserving twice adds nothing"
    );
    for algorithm in Algorithm::ALL {
        let path = planner
            .plan(
                &grid,
                DVec2::new(0.5, 0.5),
                DVec2::new(7.5, 2.5),
                &PlanOptions::with_algorithm(algorithm),
            )
            .unwrap();
        assert!(path.waypoints.len() >= 2);
    }
    // Open lists and node buffers may grow; the per-vertex pages do not.
    let after = planner.memory_bytes();
    assert!(
        after >= reserved && after - reserved < 64 << 10,
        "{reserved} -> {after}"
    );
}

/// Random points of `grid` (free or not: the planner moves or falls back).
fn random_points(rng: &mut Rng, grid: &Grid, n: usize) -> Vec<(DVec2, DVec2)> {
    let point = |rng: &mut Rng| {
        let x = rng.unit() * f64::from(grid.width());
        let y = rng.unit() * f64::from(grid.height());
        // Every other point on a vertex, the way scenarios give them.
        if rng.chance(0.5) {
            DVec2::new(x.floor(), y.floor())
        } else {
            DVec2::new(x, y)
        }
    };
    (0..n).map(|_| (point(rng), point(rng))).collect()
}

/// A `w` x `h` grid with random blocks.
fn random_grid(rng: &mut Rng, w: u32, h: u32, density: f64) -> Grid {
    let mut grid = Grid::new(w, h).unwrap();
    grid.edit(|e| {
        for y in 0..h {
            for x in 0..w {
                if rng.chance(density) {
                    e.set_free(UVec2::new(x, y), false)?;
                }
            }
        }
        Ok(())
    })
    .unwrap();
    grid
}

#[test]
fn a_planner_reused_across_grid_sizes_answers_like_a_fresh_one() {
    let mut rng = Rng::new(0x05ee_d0f9_a9e5);
    let small = random_grid(&mut rng, 37, 23, 0.25);
    let wide = random_grid(&mut rng, 300, 90, 0.2);
    let large = walled_large_grid();
    let (ls, lg) = large_query();
    let small_queries = random_points(&mut rng, &small, 60);
    let wide_queries = random_points(&mut rng, &wide, 20);
    let large_queries = [(ls, lg), (lg, ls), (DVec2::new(4070.0, 4050.0), lg)];
    // Small, large, wide, small, large, small: each grid's ids and pages are
    // laid out differently, and stale records of one must never leak into
    // another.
    let rounds: [(&Grid, &[(DVec2, DVec2)]); 6] = [
        (&small, &small_queries),
        (&large, &large_queries),
        (&wide, &wide_queries),
        (&small, &small_queries),
        (&large, &large_queries),
        (&small, &small_queries),
    ];
    for algorithm in Algorithm::ALL {
        let options = PlanOptions::with_algorithm(algorithm);
        let mut reused = Planner::new();
        let mut compared = 0;
        for (grid, queries) in rounds {
            for &(s, g) in queries {
                let expected = Planner::new().plan(grid, s, g, &options);
                let got = reused.plan(grid, s, g, &options);
                assert_eq!(
                    got,
                    expected,
                    "{algorithm} on {}x{}: {s} -> {g}",
                    grid.width(),
                    grid.height()
                );
                compared += usize::from(got.is_ok_and(|p| p.waypoints.len() > 2));
            }
        }
        assert!(
            compared > 100,
            "{algorithm}: only {compared} paths that turn"
        );
    }
}

/// Resident memory of this process, in bytes (Linux; 0 elsewhere).
fn resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<usize>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

/// First-query time and memory on `AR0011SR.map` tiled 16 x 16 (8192 x
/// 8192), one fresh planner per algorithm, for a scenario query of length
/// 293.5 in the middle tile. A measurement, not a check:
///
/// ```text
/// cargo test --release --test memory -- --ignored --nocapture first_query_on_a_tiled_game_map
/// ```
#[test]
#[ignore = "a measurement: builds a 64 M cell grid"]
fn first_query_on_a_tiled_game_map() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/maps/AR0011SR.map"
    ))
    .unwrap();
    let rows: Vec<&str> = text.lines().skip(4).collect();
    assert_eq!(rows.len(), 512);
    let mut tiled = String::from("type octile\nheight 8192\nwidth 8192\nmap\n");
    for _ in 0..16 {
        for row in &rows {
            for _ in 0..16 {
                tiled.push_str(row);
            }
            tiled.push('\n');
        }
    }
    let grid = Grid::from_movingai(&tiled).unwrap();
    drop(tiled);
    let offset = DVec2::splat(8.0 * 512.0);
    let (start, goal) = (
        DVec2::new(116.0, 113.0) + offset,
        DVec2::new(370.0, 104.0) + offset,
    );
    for algorithm in [Algorithm::Anya, Algorithm::LazyTheta, Algorithm::AStar] {
        let options = PlanOptions::with_algorithm(algorithm);
        let mut planner = Planner::new();
        let before = resident_bytes();
        let t = std::time::Instant::now();
        let path = planner.plan(&grid, start, goal, &options).unwrap();
        let first = t.elapsed();
        let grown = resident_bytes().saturating_sub(before);
        let t = std::time::Instant::now();
        let again = planner.plan(&grid, start, goal, &options).unwrap();
        let second = t.elapsed();
        assert_eq!(again, path);
        println!(
            "{algorithm}: length {:.2}, {} expanded; first query {:.2} ms, second {:.2} ms; \
             resident memory +{:.1} MB; memory_bytes {:.2} MB",
            path.length,
            path.stats.expanded,
            first.as_secs_f64() * 1e3,
            second.as_secs_f64() * 1e3,
            grown as f64 / f64::from(1 << 20),
            planner.memory_bytes() as f64 / f64::from(1 << 20),
        );
    }
}
