//! Planning over terrain with costs, against independent references:
//!
//! - A\* with costs must cost exactly what Dijkstra finds on the same
//!   8-connected vertex graph;
//! - Theta\* with costs (`Algorithm::LazyTheta`) must be a valid path whose
//!   cost is what its segments cost, and at most [`THETA_FACTOR`] times the
//!   cost of the cheapest path on a grid four times finer with 16 moves per
//!   point (an upper bound on the cheapest path).
//!
//! Segment costs, profiles and terrain maps are checked on hand-made cases
//! and on the bundled maps.

mod common;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;
use bevy_anyangle::terrain::{Profile, ProfileError, Terrain, TerrainMap, segment_cost};
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

#[test]
fn along_an_edge_the_cheaper_cell_counts_and_impassable_cells_stop_a_segment() {
    let map = TerrainMap::from_ascii(
        "SSSS
             ....
             .@@.",
    )
    .unwrap();
    let swampy = Profile::default().with(Terrain::SWAMP, 4.0).unwrap();
    // Along the edge between the swamp row and the ground row: ground.
    let along = segment_cost(&map, &swampy, DVec2::new(0.0, 1.0), DVec2::new(4.0, 1.0));
    assert_eq!(along, Some(4.0));
    // Through the swamp row.
    let through = segment_cost(&map, &swampy, DVec2::new(0.0, 0.5), DVec2::new(4.0, 0.5));
    assert_eq!(through, Some(16.0));
    // Along the top of the walls: the ground above pays.
    let over = segment_cost(&map, &swampy, DVec2::new(1.0, 2.0), DVec2::new(3.0, 2.0));
    assert_eq!(over, Some(2.0));
    // Through a wall; along the map's bottom border below the walls.
    assert_eq!(
        segment_cost(&map, &swampy, DVec2::new(0.5, 2.5), DVec2::new(3.5, 2.5)),
        None
    );
    assert_eq!(
        segment_cost(&map, &swampy, DVec2::new(1.0, 3.0), DVec2::new(3.0, 3.0)),
        None
    );
    // Off the map, and a point.
    assert_eq!(
        segment_cost(&map, &swampy, DVec2::new(-0.5, 1.5), DVec2::new(1.5, 1.5)),
        None
    );
    assert_eq!(
        segment_cost(&map, &swampy, DVec2::new(1.5, 1.5), DVec2::new(1.5, 1.5)),
        Some(0.0)
    );
    // Uniform: the length.
    let plain = Profile::default();
    assert!(plain.is_uniform() && !swampy.is_uniform());
    let c = segment_cost(&map, &plain, DVec2::new(0.0, 0.0), DVec2::new(4.0, 2.0)).unwrap();
    assert!((c - 20f64.sqrt()).abs() < 1e-12);
}

#[test]
fn profiles_refuse_bad_costs() {
    assert_eq!(
        Profile::default().with(Terrain::WATER, 0.5),
        Err(ProfileError::BadCost(0.5))
    );
    assert!(Profile::default().with(Terrain::WATER, f64::NAN).is_err());
    assert!(
        Profile::default()
            .with(Terrain::WATER, f64::INFINITY)
            .is_err()
    );
    let boat = Profile::impassable().with(Terrain::WATER, 1.0).unwrap();
    assert_eq!(boat.cost(Terrain::WATER), Some(1.0));
    assert_eq!(
        boat.clone().without(Terrain::WATER).cost(Terrain::WATER),
        None
    );
    assert_eq!(boat.cost(Terrain::GROUND), None);
}

#[test]
fn the_default_profile_gives_the_grid_of_the_map_parser() {
    for name in [
        "arena",
        "den520d",
        "AR0011SR",
        "lak303d",
        "brc202d",
        "BigGameHunters",
    ] {
        let path = format!("{}/data/maps/{name}.map", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let map = TerrainMap::from_movingai(&text).unwrap();
        assert_eq!(
            map.grid(&Profile::default()),
            Grid::from_movingai(&text).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn maps_parse_every_letter_and_refuse_what_the_grid_parser_refuses() {
    let map = TerrainMap::from_ascii(".GSWT@O#").unwrap();
    let got: Vec<Terrain> = (0..8).map(|x| map.get(x, 0).unwrap()).collect();
    assert_eq!(
        got,
        [
            Terrain::GROUND,
            Terrain::GROUND,
            Terrain::SWAMP,
            Terrain::WATER,
            Terrain::TREES,
            Terrain::OUT_OF_BOUNDS,
            Terrain::OUT_OF_BOUNDS,
            Terrain::OUT_OF_BOUNDS
        ]
    );
    assert_eq!(map.get(8, 0), None);
    assert!(TerrainMap::from_ascii("..\n.").is_err());
    assert!(TerrainMap::from_movingai("type octile\nheight 1\nwidth 3\nmap\n..").is_err());
    assert!(TerrainMap::new(0, 3, Terrain::GROUND).is_err());
    let mut m = TerrainMap::new(3, 3, Terrain::GROUND).unwrap();
    assert_eq!(m.set_rect(URect::new(1, 1, 3, 3), Terrain::WATER), Ok(true));
    assert_eq!(
        m.set_rect(URect::new(1, 1, 3, 3), Terrain::WATER),
        Ok(false)
    );
    assert!(m.set_rect(URect::new(1, 1, 4, 3), Terrain::WATER).is_err());
}
