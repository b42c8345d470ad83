//! The mesh covers the free space exactly, its polygons are convex and meet edge to edge, and syncing gives the mesh a fresh build gives.

use bevy_math::{DVec2, UVec2};

use super::{CHUNK, Chunk, NONE, NavMesh, PORTAL};
use crate::grid::Grid;
use crate::test_rng::Rng;

/// A random grid: blocks of `density` percent, some larger rectangles.
pub(crate) fn random_grid(rng: &mut Rng, w: u32, h: u32, density: u32) -> Grid {
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

/// Twice the signed area of a polygon (positive for the mesh's order).
fn area2(p: &[DVec2]) -> f64 {
    let n = p.len();
    (0..n)
        .map(|k| {
            let (a, b) = (p[k], p[(k + 1) % n]);
            a.x * b.y - a.y * b.x
        })
        .sum()
}

/// Checks everything a mesh of `grid` promises; panics with what is wrong.
pub(crate) fn check_mesh(mesh: &NavMesh, grid: &Grid) {
    let mut total = 0.0;
    for chunk in mesh.served() {
        assert_eq!(chunk.conflicts, 0, "the outline's runs never cross");
    }
    for chunk in mesh.served() {
        for p in 0..chunk.start.len() - 1 {
            let id = (chunk.base << super::LOCAL_BITS) | p as u32;
            let poly = mesh.polygon(id);
            let n = poly.len();
            let pts: Vec<DVec2> = (0..n).map(|k| poly.at(k)).collect();
            let a = area2(&pts);
            assert!(a > 0.0, "polygon {id} has area {a}: {pts:?}");
            total += a / 2.0;
            for k in 0..n {
                let turn = crate::geom::orient_sign(pts[k], pts[(k + 1) % n], pts[(k + 2) % n]);
                assert!(turn.is_ge(), "polygon {id} is not convex: {pts:?}");
                let across = poly.slots[k].neigh;
                assert_ne!(across, PORTAL, "every portal is linked");
                if across == NONE {
                    // An obstacle edge has a blocked cell (or the outside)
                    // beyond its middle.
                    let (u, v) = (pts[k], pts[(k + 1) % n]);
                    let mid = (u + v) / 2.0;
                    let out = DVec2::new(v.y - u.y, u.x - v.x).normalize() * 0.25 + mid;
                    assert!(
                        !grid.is_free_xy(out.x.floor() as i64, out.y.floor() as i64),
                        "polygon {id}'s edge {k} ({u} -> {v}) has a free cell beyond it"
                    );
                } else {
                    let other = mesh.polygon(across);
                    let m = other.len();
                    let j = usize::from(poly.slots[k].twin);
                    let back = j < m
                        && other.slots[j].v == poly.slots[(k + 1) % n].v
                        && other.slots[(j + 1) % m].v == poly.slots[k].v
                        && other.slots[j].neigh == id;
                    assert!(back, "polygon {id}'s edge {k} is not met by {across}");
                    let open = (0..m).filter(|&j| other.slots[j].neigh != NONE).count();
                    assert_eq!(poly.slots[k].dead_end, open <= 1, "polygon {id}'s edge {k}");
                }
            }
        }
    }
    assert_eq!(
        total,
        grid.free_count() as f64,
        "the polygons cover the free cells"
    );
}

#[test]
fn meshes_cover_the_free_cells_with_convex_polygons_that_meet() {
    let mut rng = Rng(0x6e5_4001);
    for round in 0..60 {
        let (w, h) = (1 + rng.below(150), 1 + rng.below(150));
        let density = [0, 5, 20, 40, 60][round % 5];
        let grid = random_grid(&mut rng, w, h, density);
        let mesh = NavMesh::build(&grid);
        check_mesh(&mesh, &grid);
    }
}

/// Checks that each chunk of `mesh` (in groups of `group` chunks) has the
/// polygons a fresh mesh of `grid` has there: a group meshed whole those of
/// the group meshed whole, the others those of their own chunks. Returns
/// how many groups are meshed whole.
fn assert_same_as_fresh(mesh: &NavMesh, grid: &Grid, group: u32) -> usize {
    let fine = NavMesh::build_grouped(grid, 1);
    let whole = NavMesh::build_grouped(grid, group);
    let polygons = |c: &Chunk| -> Vec<Vec<[i32; 2]>> {
        (0..c.start.len() - 1)
            .map(|p| {
                c.slots[c.start[p] as usize..c.start[p + 1] as usize]
                    .iter()
                    .map(|s| s.v)
                    .collect()
            })
            .collect()
    };
    let mut wholes = 0;
    for chunk in mesh.served() {
        let own = &fine.chunks[chunk.base as usize];
        let reference = if chunk.rect == own.rect {
            own
        } else {
            wholes += 1;
            &whole.chunks[chunk.base as usize]
        };
        assert_eq!(chunk.rect, reference.rect);
        assert_eq!(polygons(chunk), polygons(reference), "chunk {}", chunk.base);
    }
    wholes
}

#[test]
fn synced_meshes_equal_fresh_ones() {
    let mut rng = Rng(0x6e5_4002);
    let mut mixed = 0;
    for round in 0..12 {
        let (w, h) = (CHUNK * 2 + rng.below(70), CHUNK + rng.below(90));
        let mut grid = random_grid(&mut rng, w, h, 25);
        // Groups of the default size (the whole grid is one), and of 2 x 2
        // chunks (split and linked next to groups still whole).
        let group = [super::GROUP, 2][round % 2];
        let mut mesh = NavMesh::build_grouped(&grid, group);
        for _ in 0..20 {
            let n = 1 + rng.below(4);
            for _ in 0..n {
                let cell = UVec2::new(rng.below(w), rng.below(h));
                let free = rng.below(2) == 0;
                grid.set_free(cell, free).unwrap();
            }
            let rebuilt = mesh.sync(&grid);
            assert!(rebuilt <= 4 * n as usize, "{rebuilt} chunks for {n} cells");
            check_mesh(&mesh, &grid);
            let wholes = assert_same_as_fresh(&mesh, &grid, group);
            if wholes > 0 && wholes < mesh.chunk_count() {
                mixed += 1;
            }
        }
        // Joined again, the mesh is a fresh one.
        assert!(mesh.rejoin() > 0);
        check_mesh(&mesh, &grid);
        let fresh = NavMesh::build_grouped(&grid, group);
        let a: Vec<Vec<DVec2>> = mesh.polygons().collect();
        let b: Vec<Vec<DVec2>> = fresh.polygons().collect();
        assert_eq!(a, b);
    }
    assert!(mixed > 10, "{mixed} meshes with groups whole and split");
}

#[test]
fn meshes_synced_in_steps_equal_fresh_ones_even_when_edited_between_steps() {
    let mut rng = Rng(0x6e5_4003);
    for round in 0..8 {
        let (w, h) = (CHUNK * 2 + rng.below(70), CHUNK * 2 + rng.below(40));
        let mut grid = random_grid(&mut rng, w, h, [10, 30][round % 2]);
        let mut mesh = NavMesh::unbuilt(&grid);
        assert!(!mesh.is_complete());
        let mut steps = 0;
        for _ in 0..6 {
            // A few steps of small work (one chunk or a few links each),
            // then an edit that may touch built and unbuilt chunks alike.
            for _ in 0..=rng.below(4) {
                let mut work = 1 + u64::from(rng.below(400));
                let before = work;
                let done = mesh.sync_within(&grid, &mut work);
                steps += 1;
                assert!(
                    done || work == 0,
                    "a step stops only when its work is spent"
                );
                assert!(work < before || done, "every step does work");
                if done {
                    check_mesh(&mesh, &grid);
                }
            }
            for _ in 0..=rng.below(3) {
                let cell = UVec2::new(rng.below(w), rng.below(h));
                grid.set_free(cell, rng.below(2) == 0).unwrap();
            }
        }
        let mut work = 1;
        while !mesh.sync_within(&grid, &mut work) {
            work = 1;
            steps += 1;
        }
        assert!(steps > mesh.chunk_count(), "the work was spread over steps");
        check_mesh(&mesh, &grid);
        assert_same_as_fresh(&mesh, &grid, super::GROUP);
        mesh.rejoin();
        let fresh = NavMesh::build(&grid);
        let a: Vec<Vec<DVec2>> = mesh.polygons().collect();
        let b: Vec<Vec<DVec2>> = fresh.polygons().collect();
        assert_eq!(a, b);
        // A built mesh is brought up to date with edits at once, whatever
        // the work given.
        for _ in 0..3 {
            let cell = UVec2::new(rng.below(w), rng.below(h));
            grid.set_free(cell, rng.below(2) == 0).unwrap();
        }
        assert!(mesh.sync_within(&grid, &mut 1));
        check_mesh(&mesh, &grid);
        assert_same_as_fresh(&mesh, &grid, super::GROUP);
        mesh.rejoin();
        let a: Vec<Vec<DVec2>> = mesh.polygons().collect();
        let b: Vec<Vec<DVec2>> = NavMesh::build(&grid).polygons().collect();
        assert_eq!(a, b);
    }
}
