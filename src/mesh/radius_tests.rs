//! Meshes for agents of a radius, against brute force: the grown polygon holds the disc within its tolerance, every point of the mesh keeps the radius and every point a tolerance farther is on it, on random grids, bundled maps and after edits.

use bevy_math::{DVec2, UVec2};

use super::offset::{Disc, SCALE};
use super::reference::wall_distance_below;
use super::{CHUNK, NONE, NavMesh, PORTAL};
use crate::grid::Grid;
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
