//! Planning over terrain with costs, against independent references:
//!
//! - A\* with costs must cost exactly what Dijkstra finds on the same
//!   8-connected vertex graph;
//! - Theta\* with costs (`Algorithm::LazyTheta`) must be a valid path whose
//!   cost is what its segments cost, and at most [`THETA_FACTOR`] times the
//!   cost of the cheapest path on a grid four times finer with 16 moves per
//!   point (an upper bound on the cheapest path).

mod common;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;
use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap, segment_cost};
use common::generate::Rng;
use common::lattice::{EIGHT, lattice_dijkstra, sixteen};

/// How much dearer than the fine-grid reference Theta\* may be.
const THETA_FACTOR: f64 = 1.10;

/// A random terrain map: ground, swamp (cost 2), mud (cost 5, a type of
/// the game's own) and walls.
fn random_map(rng: &mut Rng, w: u32, h: u32) -> TerrainMap {
    let mut map = TerrainMap::new(w, h, Terrain::GROUND).unwrap();
    for y in 0..h {
        for x in 0..w {
            let t = match rng.below(100) {
                0..=44 => Terrain::GROUND,
                45..=69 => Terrain::SWAMP,
                70..=87 => Terrain(9),
                _ => Terrain::OUT_OF_BOUNDS,
            };
            map.set(UVec2::new(x, y), t).unwrap();
        }
    }
    map
}

fn profile() -> Profile {
    Profile::default()
        .with(Terrain::SWAMP, 2.0)
        .unwrap()
        .with(Terrain(9), 5.0)
        .unwrap()
}

fn check_path(
    grid: &Grid,
    terrain: &TerrainMap,
    profile: &Profile,
    path: &Path,
) -> Result<(), String> {
    let mut cost = 0.0;
    for w in path.waypoints.windows(2) {
        if !line_of_sight(grid, w[0], w[1]) {
            return Err(format!("segment {} - {} is not visible", w[0], w[1]));
        }
        cost += segment_cost(terrain, profile, w[0], w[1])
            .ok_or_else(|| format!("segment {} - {} is impassable", w[0], w[1]))?;
    }
    if (cost - path.cost).abs() > 1e-9 * (1.0 + cost) {
        return Err(format!(
            "the path says it costs {}, its segments {cost}",
            path.cost
        ));
    }
    Ok(())
}

#[test]
fn costed_a_star_is_the_cheapest_8_connected_path_and_theta_star_is_near_the_cheapest() {
    let mut rng = Rng::new(0x007e_44a1);
    let profile = profile();
    let mut planner = Planner::new();
    let (mut compared, mut worst) = (0, 1.0f64);
    let mut ratios = Vec::new();
    for case in 0..400 {
        let (w, h) = (4 + rng.below(9) as u32, 4 + rng.below(9) as u32);
        let terrain = random_map(&mut rng, w, h);
        let grid = terrain.grid(&profile);
        // Vertices touching a free cell, not on a double corner.
        let vertex = |rng: &mut Rng| {
            for _ in 0..100 {
                let p = DVec2::new(
                    rng.below(u64::from(w) + 1) as f64,
                    rng.below(u64::from(h) + 1) as f64,
                );
                if grid.is_point_traversable(p) && !grid.is_double_corner(p.x as i64, p.y as i64) {
                    return Some(p);
                }
            }
            None
        };
        let (Some(s), Some(t)) = (vertex(&mut rng), vertex(&mut rng)) else {
            continue;
        };
        let region = |p: DVec2| {
            let (x, y) = (p.x as i64, p.y as i64);
            [(x - 1, y - 1), (x, y - 1), (x - 1, y), (x, y)]
                .into_iter()
                .find_map(|(cx, cy)| grid.region(cx, cy))
        };
        if s == t || region(s) != region(t) {
            continue;
        }
        let options = |a| PlanOptions {
            fallback: FallbackPolicy::Fail,
            ..PlanOptions::with_algorithm(a)
        };
        let context = || format!("case {case}: {s} -> {t} on\n{}", picture(&terrain));
        let reference = lattice_dijkstra(&grid, &terrain, &profile, 1, &EIGHT, s, t);
        let astar =
            planner.plan_with_costs(&grid, &terrain, &profile, s, t, &options(Algorithm::AStar));
        match (&astar, reference) {
            (Ok(path), Some(r)) => {
                check_path(&grid, &terrain, &profile, path)
                    .unwrap_or_else(|e| panic!("A*: {e}; {}", context()));
                assert!(
                    (path.cost - r).abs() <= 1e-9 * (1.0 + r),
                    "A* costs {} but the cheapest 8-connected path {r}; {}",
                    path.cost,
                    context()
                );
            }
            // A start and goal in one region may still have no 8-connected
            // path (a pinch only a diagonal squeeze would pass): both agree.
            (Err(_), None) => continue,
            (a, r) => panic!("A* {a:?}, reference {r:?}; {}", context()),
        }
        let theta = planner
            .plan_with_costs(
                &grid,
                &terrain,
                &profile,
                s,
                t,
                &options(Algorithm::LazyTheta),
            )
            .unwrap_or_else(|e| panic!("Theta*: {e}; {}", context()));
        check_path(&grid, &terrain, &profile, &theta)
            .unwrap_or_else(|e| panic!("Theta*: {e}; {}", context()));
        let fine = lattice_dijkstra(&grid, &terrain, &profile, 4, &sixteen(), s, t)
            .expect("a finer lattice has the coarse path");
        let ratio = theta.cost / fine;
        assert!(
            ratio <= THETA_FACTOR,
            "Theta* costs {} = {ratio} x the fine-grid reference {fine}; {:?}; {}",
            theta.cost,
            theta.waypoints,
            context()
        );
        assert!(
            theta.cost <= astar.unwrap().cost + 1e-9,
            "Theta* dearer than A*; {}",
            context()
        );
        worst = worst.max(ratio);
        ratios.push(ratio);
        compared += 1;
    }
    assert!(compared >= 200, "only {compared} queries compared");
    if std::env::var_os("ANYANGLE_TEST_STATS").is_some() {
        ratios.sort_by(f64::total_cmp);
        println!(
            "Theta* / fine reference over {compared} queries: median {:.4}, worst {worst:.4}",
            ratios[ratios.len() / 2]
        );
    }
}

fn picture(map: &TerrainMap) -> String {
    (0..i64::from(map.height()))
        .map(|y| {
            (0..i64::from(map.width()))
                .map(|x| match map.get(x, y).unwrap() {
                    Terrain::GROUND => '.',
                    Terrain::SWAMP => 'S',
                    Terrain::OUT_OF_BOUNDS => '@',
                    _ => 'm',
                })
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn uniform_profiles_plan_as_usual_and_anya_refuses_costs() {
    let terrain = TerrainMap::from_ascii(
        "....WW....
         ....WW....
         ..........",
    )
    .unwrap();
    let plain = Profile::default();
    let grid = terrain.grid(&plain);
    let (s, t) = (DVec2::new(0.5, 0.5), DVec2::new(9.5, 0.5));
    let mut planner = Planner::new();
    for algorithm in Algorithm::ALL {
        let options = PlanOptions::with_algorithm(algorithm);
        let a = planner
            .plan_with_costs(&grid, &terrain, &plain, s, t, &options)
            .unwrap();
        let b = planner.plan(&grid, s, t, &options).unwrap();
        assert_eq!(a.waypoints, b.waypoints, "{algorithm}");
        assert_eq!(a.cost, a.length);
    }
    // A boat: water only.
    let boat = Profile::impassable().with(Terrain::WATER, 1.0).unwrap();
    let boat_grid = terrain.grid(&boat);
    let path = planner
        .plan_with_costs(
            &boat_grid,
            &terrain,
            &boat,
            DVec2::new(4.5, 0.5),
            DVec2::new(5.5, 1.5),
            &PlanOptions::default(),
        )
        .unwrap();
    assert_eq!(
        path.waypoints,
        vec![DVec2::new(4.5, 0.5), DVec2::new(5.5, 1.5)]
    );
    // Costs that differ: Anya says so, the others plan.
    let slow = Profile::default().with(Terrain::SWAMP, 3.0).unwrap();
    assert_eq!(
        planner.plan_with_costs(
            &grid,
            &terrain,
            &slow,
            s,
            t,
            &PlanOptions::with_algorithm(Algorithm::Anya)
        ),
        Err(PlanError::CostsNotSupported(Algorithm::Anya))
    );
    let small = Grid::new(3, 3).unwrap();
    assert!(matches!(
        planner.plan_with_costs(&small, &terrain, &slow, s, t, &PlanOptions::default()),
        Err(PlanError::TerrainSize { .. })
    ));
}
