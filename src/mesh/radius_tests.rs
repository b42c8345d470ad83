//! Meshes for agents of a radius, against brute force: every point of the mesh keeps the radius, every point a tolerance farther is on it, and where a slightly larger disc can go on a fine lattice, the planner reaches the goal with a path that keeps the radius.

use bevy_math::{DVec2, UVec2};

use super::offset::{Disc, SCALE};
use super::reference::{lattice_components, wall_distance_below};
use super::{CHUNK, NONE, NavMesh, PORTAL};
use crate::grid::Grid;
use crate::search::{PlanOptions, Planner};
use crate::test_rng::Rng;

/// Distance from `p` to the nearest blocked cell or the grid's outside, or
/// [`FAR`] if that is farther (every radius tested is below it).
pub(crate) fn wall_distance(grid: &Grid, p: DVec2) -> f64 {
    let blocked = |x, y| !grid.is_free_xy(x, y);
    wall_distance_below((grid.width(), grid.height()), &blocked, p, FAR)
}

/// The distance beyond which [`wall_distance`] does not look.
const FAR: f64 = 8.0;

/// Distance from `p` to the nearest blocked cell or the grid's outside, or
/// `radius` if that is farther: enough to tell whether `p` keeps `radius`.
fn keeps_at(grid: &Grid, p: DVec2, radius: f64) -> f64 {
    let blocked = |x, y| !grid.is_free_xy(x, y);
    wall_distance_below((grid.width(), grid.height()), &blocked, p, radius)
}

/// A map of rooms joined by corridors one to three cells wide, with doors
/// one cell wide.
pub(crate) fn rooms_and_corridors(rng: &mut Rng, w: u32, h: u32) -> Grid {
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

#[test]
fn the_grown_polygon_holds_the_disc_and_stays_within_its_tolerance() {
    let mut r = super::offset::MIN_RADIUS;
    while r < 300.0 {
        let disc = Disc::new(r);
        let tol = disc.tolerance();
        assert!(tol >= 0.0, "r = {r}: the corners lie outside the disc");
        assert!(
            tol <= (0.0275 * r).max(0.09) + 1.0 / 512.0,
            "r = {r}: tolerance {tol}"
        );
        if r <= 4.5 {
            assert!(tol <= 0.125, "r = {r}: tolerance {tol}");
        }
        r *= 1.07;
    }
}

/// Checks the mesh for `radius` on `grid`; returns its tolerance.
fn check(grid: &Grid, radius: f64, rng: &mut Rng) -> f64 {
    let mesh = NavMesh::with_radius(grid, radius).unwrap();
    let tol = mesh.tolerance();
    let s = SCALE as f64;
    for chunk in mesh.served() {
        assert_eq!(chunk.conflicts, 0, "the boundary pieces never cross");
    }
    for chunk in mesh.served() {
        for p in 0..chunk.start.len() - 1 {
            let id = (chunk.base << super::LOCAL_BITS) | p as u32;
            let poly = mesh.polygon(id);
            let n = poly.len();
            let pts: Vec<DVec2> = (0..n).map(|k| poly.at(k)).collect();
            for k in 0..n {
                let turn = crate::geom::orient_sign(pts[k], pts[(k + 1) % n], pts[(k + 2) % n]);
                assert!(turn.is_gt() || turn.is_eq(), "polygon {id} is not convex");
                let across = poly.slots[k].neigh;
                assert_ne!(across, PORTAL, "every portal is linked or closed");
                if across != NONE {
                    let other = mesh.polygon(across);
                    let m = other.len();
                    let j = usize::from(poly.slots[k].twin);
                    let back = j < m
                        && other.slots[j].v == poly.slots[(k + 1) % n].v
                        && other.slots[(j + 1) % m].v == poly.slots[k].v
                        && other.slots[j].neigh == id;
                    assert!(back, "polygon {id}'s edge {k} is not met by {across}");
                }
            }
            // Every point of the polygon keeps the radius: its edges,
            // sampled every 1/64 cell, and points inside: the points of the
            // lattice of spacing 1/4 cell inside it, and the centroid of its
            // vertices. (With its edges clear, a wall closer to a point
            // inside would lie inside the polygon, a whole blocked cell
            // holding some of those lattice points.)
            let holds = |q: DVec2| {
                let d = keeps_at(grid, q, radius);
                assert!(
                    d >= radius - 1e-9,
                    "r = {radius}: {q} of polygon {id} is {d} from a wall"
                );
            };
            for k in 0..n {
                let (a, b) = (pts[k] / s, pts[(k + 1) % n] / s);
                let steps = (a.distance(b) * 64.0).ceil().max(1.0);
                for t in 0..=steps as u32 {
                    holds(a.lerp(b, f64::from(t) / steps));
                }
            }
            let (lo, hi) = pts
                .iter()
                .fold((pts[0], pts[0]), |(lo, hi), &p| (lo.min(p), hi.max(p)));
            let (lo, hi) = ((lo / s * 4.0).ceil(), (hi / s * 4.0).floor());
            for y in lo.y as i64..=hi.y as i64 {
                for x in lo.x as i64..=hi.x as i64 {
                    let q = DVec2::new(x as f64, y as f64) / 4.0;
                    if poly.contains(q * s) {
                        holds(q);
                    }
                }
            }
            holds(pts.iter().sum::<DVec2>() / n as f64 / s);
        }
    }
    // Every point a tolerance farther than the radius is on the mesh.
    let (w, h) = (f64::from(grid.width()), f64::from(grid.height()));
    for _ in 0..4000 {
        let p = DVec2::new(
            f64::from(rng.below(1 << 20)) / f64::from(1 << 20) * w,
            f64::from(rng.below(1 << 20)) / f64::from(1 << 20) * h,
        );
        if wall_distance(grid, p) >= radius + tol + 1e-9 {
            let mut found = Vec::new();
            let cell = [p.x.floor() as i64, p.y.floor() as i64];
            mesh.polygons_at(p * s, &[cell], &mut found);
            assert!(!found.is_empty(), "r = {radius}: {p} is off the mesh");
        }
    }
    tol
}

#[test]
fn radius_meshes_keep_the_radius_and_hold_every_point_a_tolerance_farther() {
    let mut rng = Rng(0x7ad_1001);
    for round in 0..12 {
        let (w, h) = (20 + rng.below(60), 20 + rng.below(60));
        let grid = if round % 2 == 0 {
            rooms_and_corridors(&mut rng, w, h)
        } else {
            super::tests::random_grid(&mut rng, w, h, [5, 15, 30][round % 3])
        };
        for radius in [0.25, 0.3, 0.5, 0.75, 1.0, 1.4, 2.0, 3.0] {
            check(&grid, radius, &mut rng);
        }
    }
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
            super::tests::random_grid(&mut rng, w, h, 15)
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
            super::tests::random_grid(&mut rng, w, h, 8)
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
    let grid = Grid::from_movingai(include_str!("../../data/maps/lt_backalley_n.map")).unwrap();
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
fn radius_meshes_of_bundled_maps_keep_the_radius_across_chunk_borders() {
    let mut rng = Rng(0x7ad_1006);
    for name in ["den520d", "BigGameHunters"] {
        let path = format!("{}/data/maps/{name}.map", env!("CARGO_MANIFEST_DIR"));
        let grid = Grid::from_movingai(&std::fs::read_to_string(path).unwrap()).unwrap();
        for radius in [0.3, 1.7] {
            check(&grid, radius, &mut rng);
        }
    }
}

#[test]
fn radius_meshes_of_any_radius_on_maps_of_several_chunks_are_sound() {
    let mut rng = Rng(0x7ad_1007);
    for round in 0..6u32 {
        let (w, h) = (1 + rng.below(150), 1 + rng.below(150));
        let mut grid = if round % 2 == 0 && w > 12 && h > 12 {
            rooms_and_corridors(&mut rng, w, h)
        } else {
            super::tests::random_grid(&mut rng, w, h, [3, 10, 25][round as usize % 3])
        };
        let radius = f64::from(1 + rng.below(4000)) / 1000.0;
        check(&grid, radius, &mut rng);
        // Edits at chunk borders and corners too.
        let mut mesh = NavMesh::with_radius(&grid, radius).unwrap();
        for _ in 0..3 {
            let x = if rng.below(2) == 0 {
                CHUNK.min(w - 1)
            } else {
                rng.below(w)
            };
            let y = if rng.below(2) == 0 {
                CHUNK.min(h - 1)
            } else {
                rng.below(h)
            };
            grid.set_free(UVec2::new(x, y), rng.below(2) == 0).unwrap();
            mesh.sync(&grid);
        }
        let a: Vec<Vec<DVec2>> = mesh.polygons().collect();
        let b: Vec<Vec<DVec2>> = NavMesh::with_radius(&grid, radius)
            .unwrap()
            .polygons()
            .collect();
        assert_eq!(a, b, "r = {radius}");
    }
}

#[test]
fn lazy_theta_and_a_star_on_radius_meshes_reach_what_polyanya_reaches_and_keep_the_radius() {
    use crate::search::{Algorithm, FallbackPolicy, PlanError};
    let mut rng = Rng(0x7ad_1007);
    let mut planner = Planner::new();
    let (mut found, mut longer) = (0, 0);
    for round in 0..6 {
        let (w, h) = (24 + rng.below(50), 24 + rng.below(40));
        let grid = if round % 2 == 0 {
            rooms_and_corridors(&mut rng, w, h)
        } else {
            super::tests::random_grid(&mut rng, w, h, 8)
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
