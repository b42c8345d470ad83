//! Routes across floors: four floors of `AR0011SR` (512 x 512) stacked,
//! 64 links (stairs) between each two consecutive floors at random free
//! points. Prints, in one run:
//!
//! - the time of a route query from the bottom floor to the top (median,
//!   90th percentile, worst) beside a single-floor Polyanya query on the
//!   same map (median); and the same queries when they are the first after
//!   a change (each route between link ends the query reads is searched
//!   the first time it is read);
//! - the time a one-cell edit (a cell blocked, then freed) takes to bring
//!   a middle floor's mesh and link table up to date, marking the entries
//!   it may change (mean, worst), and beside it the time the next query
//!   (here `Atlas::settle`) takes to search those entries again; with the
//!   searches and entries per edit;
//! - the time to build the atlas (meshes and tables).
//!
//! ```text
//! cargo bench --bench atlas
//! ```

use std::time::{Duration, Instant};

use bevy_anyangle::atlas::{AreaId, Atlas, Link, Place, RouteQuery};
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;

/// Floors stacked.
const FLOORS: usize = 4;
/// Links between each two consecutive floors.
const LINKS: usize = 64;
/// Queries timed.
const QUERIES: usize = 300;
/// One-cell edits timed.
const EDITS: usize = 200;

fn load(name: &str) -> Grid {
    let path = format!("{}/data/maps/{name}.map", env!("CARGO_MANIFEST_DIR"));
    Grid::from_movingai(&std::fs::read_to_string(path).expect("bundled map")).expect("valid map")
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u32) -> u32 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u32
    }
}

/// A random free cell of `grid`'s largest region.
fn free_cell(rng: &mut Rng, grid: &Grid, region: Option<bevy_anyangle::grid::RegionId>) -> UVec2 {
    loop {
        let c = UVec2::new(rng.below(grid.width()), rng.below(grid.height()));
        if grid.is_free(c) && grid.region(i64::from(c.x), i64::from(c.y)) == region {
            return c;
        }
    }
}

/// The region with the most cells.
fn largest_region(grid: &Grid) -> Option<bevy_anyangle::grid::RegionId> {
    let mut sizes = std::collections::HashMap::new();
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            if let Some(r) = grid.region(i64::from(x), i64::from(y)) {
                *sizes.entry(r).or_insert(0_u64) += 1;
            }
        }
    }
    sizes.into_iter().max_by_key(|&(_, n)| n).map(|(r, _)| r)
}

fn centre(c: UVec2) -> DVec2 {
    c.as_dvec2() + DVec2::splat(0.5)
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

fn quantile(times: &mut [Duration], q: f64) -> Duration {
    times.sort_unstable();
    times[((times.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let map = load("AR0011SR");
    let region = largest_region(&map);
    let mut rng = Rng(0xf1005);

    let began = Instant::now();
    let mut atlas = Atlas::new();
    let floors: Vec<AreaId> = (0..FLOORS).map(|_| atlas.add_area(map.clone())).collect();
    for pair in floors.windows(2) {
        for _ in 0..LINKS {
            let c = centre(free_cell(&mut rng, &map, region));
            atlas
                .add_link(Link::new(Place::new(pair[0], c), Place::new(pair[1], c)).with_cost(4.0))
                .expect("a link");
        }
    }
    let build = began.elapsed();

    // Single-floor Polyanya queries on the same map, the same planner use.
    let mesh = NavMesh::build(&map);
    let options = PlanOptions::with_algorithm(Algorithm::Polyanya);
    let mut planner = Planner::new();
    let pairs: Vec<(DVec2, DVec2)> = (0..QUERIES)
        .map(|_| {
            (
                centre(free_cell(&mut rng, &map, region)),
                centre(free_cell(&mut rng, &map, region)),
            )
        })
        .collect();
    for &(s, g) in pairs.iter().take(20) {
        planner.plan_on_mesh(&mesh, s, g, &options).expect("a path");
    }
    let mut single: Vec<Duration> = pairs
        .iter()
        .map(|&(s, g)| {
            let t = Instant::now();
            planner.plan_on_mesh(&mesh, s, g, &options).expect("a path");
            t.elapsed()
        })
        .collect();

    // Routes from the bottom floor to the top. The first query after a
    // change searches the routes between the link ends of its start's
    // floor (cached until the next change): timed apart.
    let (bottom, top) = (floors[0], floors[FLOORS - 1]);
    let mut legs = 0;
    let mut pass = |legs: &mut usize| -> Vec<Duration> {
        pairs
            .iter()
            .map(|&(s, g)| {
                let q = RouteQuery::new(Place::new(bottom, s), Place::new(top, g));
                let t = Instant::now();
                let route = atlas.find(&mut planner, &q).expect("a route");
                let took = t.elapsed();
                assert!(!route.is_fallback());
                *legs += route.legs.len();
                took
            })
            .collect()
    };
    // The first pass reads each route between link ends for the first
    // time (as the first queries after a change do); the second finds
    // them all searched.
    let mut first = pass(&mut legs);
    let mut routes = pass(&mut legs);
    legs /= 2;

    // One-cell edits on a middle floor: a free cell blocked, then freed.
    let middle = floors[1];
    let mut edits = Vec::new();
    let mut settles = Vec::new();
    let (mut searches, mut entries, mut searched) = (0, 0, 0);
    for _ in 0..EDITS {
        let c = free_cell(&mut rng, &map, region);
        for free in [false, true] {
            let t = Instant::now();
            atlas
                .edit_area(middle, |e| e.set_free(c, free))
                .expect("an edit");
            edits.push(t.elapsed());
            searches += atlas.last_work().searches;
            entries += atlas.last_work().entries;
            // The entries it marked, searched as the next query would.
            let t = Instant::now();
            let settled = atlas.settle(&mut planner);
            settles.push(t.elapsed());
            searches += settled.searches;
            searched += settled.entries;
            if std::env::var("SPLIT").is_ok() {
                eprintln!(
                    "{} {} {} {}",
                    if free { "free" } else { "block" },
                    atlas.last_work().entries,
                    ms(edits[edits.len() - 1]),
                    ms(settles[settles.len() - 1]),
                );
            }
        }
    }
    let edit_mean = edits.iter().sum::<Duration>() / edits.len() as u32;
    let settle_mean = settles.iter().sum::<Duration>() / settles.len() as u32;

    let single_median = quantile(&mut single, 0.5);
    println!(
        "| floors | links per pair | route p50 | p90 | worst | legs (mean) | single-floor Polyanya p50 | route p50 / single p50 | first after a change: p50 | worst | one-cell edit mean | worst | its entries searched, mean | worst | searches per edit | entries marked per edit | searched | atlas build |"
    );
    println!("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    println!(
        "| {FLOORS} | {LINKS} | {:.3} ms | {:.3} ms | {:.3} ms | {:.1} | {:.3} ms | {:.2} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.2} | {:.1} | {:.1} | {:.2} s |",
        ms(quantile(&mut routes, 0.5)),
        ms(quantile(&mut routes, 0.9)),
        ms(quantile(&mut routes, 1.0)),
        legs as f64 / QUERIES as f64,
        ms(single_median),
        quantile(&mut routes, 0.5).as_secs_f64() / single_median.as_secs_f64(),
        ms(quantile(&mut first, 0.5)),
        ms(quantile(&mut first, 1.0)),
        ms(edit_mean),
        ms(quantile(&mut edits, 1.0)),
        ms(settle_mean),
        ms(quantile(&mut settles, 1.0)),
        searches as f64 / edits.len() as f64,
        entries as f64 / edits.len() as f64,
        searched as f64 / edits.len() as f64,
        build.as_secs_f64(),
    );
}
