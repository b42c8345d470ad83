//! Meshes for agents of a radius through the public API, against brute
//! force: where a slightly larger disc can go on a fine lattice, every
//! planner on the mesh reaches the goal with a path that keeps the radius,
//! paths turn only where they touch the grown walls, and a mesh synced with
//! edits equals a fresh one.

use bevy_anyangle::grid::Grid;
use bevy_anyangle::mesh::{CHUNK, NavMesh};
use bevy_anyangle::search::{PlanOptions, Planner};
use bevy_math::{DVec2, UVec2};

#[path = "../src/mesh/reference.rs"]
mod reference;

use reference::{lattice_components, wall_distance_below};

/// Xorshift64 from a non-zero seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

/// A random grid: blocks of `density` percent, some larger rectangles.
fn random_grid(rng: &mut Rng, w: u32, h: u32, density: u32) -> Grid {
    let mut grid = Grid::new(w, h).unwrap();
    for y in 0..h {
        for x in 0..w {
            if rng.below(100) < density {
                grid.set_free(UVec2::new(x, y), false).unwrap();
            }
        }
    }
    grid
}

/// Distance from `p` to the nearest blocked cell or the grid's outside, or
/// [`FAR`] if that is farther (every radius tested is below it).
fn wall_distance(grid: &Grid, p: DVec2) -> f64 {
    let blocked = |x, y| !grid.is_free_xy(x, y);
    wall_distance_below((grid.width(), grid.height()), &blocked, p, FAR)
}

/// The distance beyond which [`wall_distance`] does not look.
const FAR: f64 = 8.0;

/// A map of rooms joined by corridors one to three cells wide, with doors
/// one cell wide.
fn rooms_and_corridors(rng: &mut Rng, w: u32, h: u32) -> Grid {
    let mut grid = Grid::new(w, h).unwrap();
    for y in 0..h {
        for x in 0..w {
            grid.set_free(UVec2::new(x, y), false).unwrap();
        }
    }
    let carve = |grid: &mut Grid, x0: u32, y0: u32, x1: u32, y1: u32| {
        for y in y0.min(y1)..=y0.max(y1).min(h - 1) {
            for x in x0.min(x1)..=x0.max(x1).min(w - 1) {
                grid.set_free(UVec2::new(x, y), true).unwrap();
            }
        }
    };
    let mut centres = Vec::new();
    for _ in 0..6 {
        let (rw, rh) = (3 + rng.below(8), 3 + rng.below(8));
        let (x, y) = (rng.below(w - rw), rng.below(h - rh));
        carve(&mut grid, x, y, x + rw - 1, y + rh - 1);
        centres.push((x + rw / 2, y + rh / 2));
    }
    for k in 1..centres.len() {
        let ((ax, ay), (bx, by)) = (centres[k - 1], centres[k]);
        let width = rng.below(3);
        carve(&mut grid, ax, ay, bx, ay + width);
        carve(&mut grid, bx, ay, bx + width, by);
    }
    // Walls with one-cell doors across some rooms.
    for _ in 0..4 {
        let y = rng.below(h);
        let door = rng.below(w);
        for x in 0..w {
            if x != door && rng.below(4) != 0 {
                grid.set_free(UVec2::new(x, y), false).unwrap();
            }
        }
    }
    grid
}

/// [`lattice_components`] of a grid.
fn components(grid: &Grid, r: f64, k: u32) -> Vec<u32> {
    let blocked = |x, y| !grid.is_free_xy(x, y);
    lattice_components((grid.width(), grid.height()), &blocked, r, k)
}

/// Whether every point of the path is at least `r` from every wall
/// (sampled every 1/64 cell).
fn keeps(grid: &Grid, waypoints: &[DVec2], r: f64) -> bool {
    waypoints.windows(2).all(|w| {
        let steps = (w[0].distance(w[1]) * 64.0).ceil().max(1.0) as u32;
        (0..=steps).all(|t| {
            wall_distance(grid, w[0].lerp(w[1], f64::from(t) / f64::from(steps))) >= r - 1e-9
        })
    })
}

#[test]
fn where_a_disc_an_eighth_of_a_cell_larger_can_go_the_planner_reaches_the_goal() {
    let mut rng = Rng(0x7ad_1002);
    let mut planner = Planner::new();
    let (mut reachable, mut queries) = (0, 0);
    for round in 0..6 {
        let (w, h) = (24 + rng.below(24), 24 + rng.below(24));
        let grid = if round % 2 == 0 {
            rooms_and_corridors(&mut rng, w, h)
        } else {
            random_grid(&mut rng, w, h, 15)
        };
        for radius in [0.25, 0.3, 0.45, 0.7, 1.2, 2.0] {
            let mesh = NavMesh::with_radius(&grid, radius).unwrap();
            // The lattice (spacing 1/16) reaches only where a disc of
            // radius r + 1/8 goes, so a continuous path keeps
            // r + 1/8 - 1/32, more than the mesh's tolerance.
            assert!(mesh.tolerance() <= 1.0 / 8.0 - 1.0 / 32.0);
            let k = 16;
            let components = components(&grid, radius + 0.125, k);
            let reaches = |a: [u32; 2], b: [u32; 2]| {
                let at = |p: [u32; 2]| components[(p[1] * (w * k + 1) + p[0]) as usize];
                at(a) != 0 && at(a) == at(b)
            };
            let to = |p: [u32; 2]| DVec2::new(f64::from(p[0]), f64::from(p[1])) / f64::from(k);
            // Mostly points where the larger disc fits, some anywhere.
            let point = |rng: &mut Rng, fits: bool| {
                let mut p = [rng.below(w * k), rng.below(h * k)];
                for _ in 0..200 {
                    if !fits || wall_distance(&grid, to(p)) >= radius + 0.125 {
                        break;
                    }
                    p = [rng.below(w * k), rng.below(h * k)];
                }
                p
            };
            for q in 0..12 {
                let a = point(&mut rng, q % 4 != 0);
                let b = point(&mut rng, q % 4 != 1);
                let (s, t) = (to(a), to(b));
                let Ok(path) = planner.plan_on_mesh(&mesh, s, t, &PlanOptions::default()) else {
                    // No room where the agent stands: the lattice agrees.
                    assert!(!reaches(a, b));
                    continue;
                };
                queries += 1;
                assert!(
                    keeps(&grid, &path.waypoints, radius),
                    "r = {radius}: {s} -> {t}: {:?} comes closer",
                    path.waypoints
                );
                if reaches(a, b) {
                    reachable += 1;
                    assert!(
                        !path.is_fallback() && path.start_moved_from.is_none(),
                        "r = {radius}: {s} -> {t} is reachable, got {path:?}"
                    );
                    assert_eq!(path.waypoints.last(), Some(&t));
                }
            }
        }
    }
    assert!(
        reachable > queries / 4,
        "{reachable} of {queries} reachable"
    );
}

#[test]
fn radius_meshes_follow_edits_like_fresh_ones() {
    let mut rng = Rng(0x7ad_1003);
    for _ in 0..4 {
        let (w, h) = (CHUNK + 20 + rng.below(40), CHUNK + rng.below(30));
        let mut grid = rooms_and_corridors(&mut rng, w, h);
        let radius = [0.3, 0.8, 2.5][rng.below(3) as usize];
        let mut mesh = NavMesh::with_radius(&grid, radius).unwrap();
        for _ in 0..6 {
            for _ in 0..=rng.below(3) {
                let cell = UVec2::new(rng.below(w), rng.below(h));
                grid.set_free(cell, rng.below(2) == 0).unwrap();
            }
            mesh.sync(&grid);
            let a: Vec<Vec<DVec2>> = mesh.polygons().collect();
            let fresh = NavMesh::with_radius(&grid, radius).unwrap();
            let b: Vec<Vec<DVec2>> = fresh.polygons().collect();
            assert_eq!(a, b);
        }
    }
}

#[test]
fn paths_turn_only_where_they_touch_the_grown_walls() {
    // A shortest path turns only at corners of the grown obstacles, which
    // are between r and r + tolerance from a wall: paths hug corners as
    // tightly as the approximation allows.
    let mut rng = Rng(0x7ad_1004);
    let mut planner = Planner::new();
    let mut turns = 0;
    for round in 0..6 {
        let (w, h) = (24 + rng.below(40), 24 + rng.below(40));
        let grid = if round % 2 == 0 {
            rooms_and_corridors(&mut rng, w, h)
        } else {
            random_grid(&mut rng, w, h, 8)
        };
        for radius in [0.25, 0.6, 1.5, 3.0] {
            let mesh = NavMesh::with_radius(&grid, radius).unwrap();
            let tol = mesh.tolerance();
            for _ in 0..20 {
                let p = |rng: &mut Rng| {
                    DVec2::new(
                        f64::from(rng.below(w * 8)) / 8.0,
                        f64::from(rng.below(h * 8)) / 8.0,
                    )
                };
                let (s, t) = (p(&mut rng), p(&mut rng));
                let Ok(path) = planner.plan_on_mesh(&mesh, s, t, &PlanOptions::default()) else {
                    continue;
                };
                let n = path.waypoints.len();
                for &q in path.waypoints.iter().skip(1).take(n.saturating_sub(2)) {
                    let d = wall_distance(&grid, q);
                    assert!(
                        d >= radius - 1e-9 && d <= radius + tol + 1e-6,
                        "r = {radius}: a turn at {q} is {d} from a wall"
                    );
                    turns += 1;
                }
            }
        }
    }
    assert!(turns > 100, "{turns} turns checked");
}

#[test]
fn on_a_bundled_map_agents_reach_every_goal_a_slightly_larger_disc_reaches() {
    let grid = Grid::from_movingai(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/maps/lt_backalley_n.map"
    )))
    .unwrap();
    let mut planner = Planner::new();
    let mut rng = Rng(0x7ad_1005);
    let mut reachable = 0;
    for radius in [0.3, 1.0, 2.5] {
        let mesh = NavMesh::with_radius(&grid, radius).unwrap();
        // Lattice points 1/8 apart, four neighbours each, where a disc of
        // r + 3/16 fits: a disc of r + 1/8 follows, more than the
        // tolerance.
        let k = 8;
        let components = components(&grid, radius + 0.1875, k);
        let w = grid.width() * k + 1;
        let fitting: Vec<u32> = (0..components.len() as u32)
            .filter(|&i| components[i as usize] != 0)
            .collect();
        let at = |i: u32| DVec2::new(f64::from(i % w), f64::from(i / w)) / f64::from(k);
        for _ in 0..60 {
            let a = fitting[rng.below(fitting.len() as u32) as usize];
            let b = fitting[rng.below(fitting.len() as u32) as usize];
            if components[a as usize] != components[b as usize] {
                continue;
            }
            reachable += 1;
            let (s, t) = (at(a), at(b));
            let path = planner
                .plan_on_mesh(&mesh, s, t, &PlanOptions::default())
                .unwrap();
            assert!(!path.is_fallback(), "r = {radius}: {s} -> {t}");
            assert_eq!(path.waypoints.last(), Some(&t));
            assert!(
                keeps(&grid, &path.waypoints, radius),
                "r = {radius}: {s} -> {t}"
            );
        }
    }
    assert!(reachable > 60, "{reachable} queries");
}

#[test]
fn lazy_theta_and_a_star_on_radius_meshes_reach_what_polyanya_reaches_and_keep_the_radius() {
    use bevy_anyangle::search::{Algorithm, FallbackPolicy, PlanError};
    let mut rng = Rng(0x7ad_1007);
    let mut planner = Planner::new();
    let (mut found, mut longer) = (0, 0);
    for round in 0..6 {
        let (w, h) = (24 + rng.below(50), 24 + rng.below(40));
        let grid = if round % 2 == 0 {
            rooms_and_corridors(&mut rng, w, h)
        } else {
            random_grid(&mut rng, w, h, 8)
        };
        for radius in [0.25, 0.6, 1.5] {
            let mesh = NavMesh::with_radius(&grid, radius).unwrap();
            for _ in 0..25 {
                let p = |rng: &mut Rng| {
                    DVec2::new(
                        f64::from(rng.below(w * 8)) / 8.0,
                        f64::from(rng.below(h * 8)) / 8.0,
                    )
                };
                let (s, t) = (p(&mut rng), p(&mut rng));
                let fail = |algorithm| PlanOptions {
                    fallback: FallbackPolicy::Fail,
                    ..PlanOptions::with_algorithm(algorithm)
                };
                let exact = planner.plan_on_mesh(&mesh, s, t, &fail(Algorithm::Polyanya));
                for algorithm in [
                    Algorithm::LazyTheta,
                    Algorithm::AStar,
                    Algorithm::AStarSmoothed,
                ] {
                    let path = planner.plan_on_mesh(&mesh, s, t, &fail(algorithm));
                    match (&exact, &path) {
                        (Ok(e), Ok(p)) => {
                            assert_eq!(p.waypoints.first(), e.waypoints.first());
                            assert_eq!(p.waypoints.last(), e.waypoints.last());
                            assert!(
                                p.length >= e.length * (1.0 - 1e-9),
                                "{algorithm:?} shorter than the shortest: {} < {}",
                                p.length,
                                e.length
                            );
                            // The way from a start moved onto the mesh is
                            // the same straight walk for every planner.
                            let from = usize::from(p.start_moved_from.is_some());
                            assert!(
                                keeps(&grid, &p.waypoints[from..], radius),
                                "{algorithm:?}, r = {radius}: {:?}",
                                p.waypoints
                            );
                            found += 1;
                            if algorithm == Algorithm::AStar && p.length > e.length * (1.0 + 1e-6) {
                                // (A* over corners turns at corners only.)
                                longer += 1;
                            }
                        }
                        (
                            Err(PlanError::Unreachable { .. }),
                            Err(PlanError::Unreachable { .. }),
                        )
                        | (Err(PlanError::NoRoom), Err(PlanError::NoRoom)) => {}
                        other => panic!("{algorithm:?}, r = {radius}, {s} to {t}: {other:?}"),
                    }
                }
            }
        }
    }
    assert!(found > 300, "only {found} paths compared");
    assert!(
        longer > 10,
        "A* was as short as Polyanya but {longer} times"
    );
}
