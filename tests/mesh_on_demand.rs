//! Meshes built on demand answer as meshes built whole: on bundled maps,
//! for point agents and agents of a radius, one query at a time and many
//! to one goal, goals off the mesh and cut off, before and after edits,
//! every answer equals the whole mesh's (the same outcome, the same
//! length, the same fallback distance); and a search builds only the
//! chunks around its way.

mod common;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::search::{Path, PathKind, PlanError, PlanOptions, Planner};
use bevy_math::{DVec2, UVec2};
use common::close;
use common::generate::Rng;

/// A point of `grid`: mostly a free cell's centre, now and then any point
/// (in walls too), a corner, or a point a little off the grid.
fn point(rng: &mut Rng, grid: &Grid) -> DVec2 {
    let (w, h) = (u64::from(grid.width()), u64::from(grid.height()));
    let at = |v: u64| v as f64;
    match rng.below(10) {
        0 => DVec2::new(at(rng.below(w * 4)) / 4.0, at(rng.below(h * 4)) / 4.0),
        1 => DVec2::new(at(rng.below(w + 1)), at(rng.below(h + 1))),
        2 => DVec2::new(-0.5, at(rng.below(h))),
        _ => loop {
            let (x, y) = (rng.below(w), rng.below(h));
            if grid.is_free_xy(x as i64, y as i64) {
                break DVec2::new(at(x) + 0.5, at(y) + 0.5);
            }
        },
    }
}

fn load(name: &str) -> Grid {
    let text = std::fs::read_to_string(format!("data/maps/{name}.map")).unwrap();
    Grid::from_movingai(&text).unwrap()
}

/// Checks that `lazy` answers as `whole` does (`what` names the query).
fn same(lazy: &Result<Path, PlanError>, whole: &Result<Path, PlanError>, what: &str) {
    match (lazy, whole) {
        (Ok(a), Ok(b)) => {
            assert!(
                close(a.length, b.length),
                "{what}: length {} against {}",
                a.length,
                b.length
            );
            assert_eq!(
                a.start_moved_from, b.start_moved_from,
                "{what}: start moved"
            );
            match (a.kind, b.kind) {
                (PathKind::Found, PathKind::Found) => {
                    assert_eq!(a.waypoints.last(), b.waypoints.last(), "{what}: end");
                }
                (
                    PathKind::Fallback { requested_goal: g },
                    PathKind::Fallback { requested_goal: h },
                ) => {
                    assert_eq!(g, h, "{what}: goal");
                    let (p, q) = (a.waypoints.last().unwrap(), b.waypoints.last().unwrap());
                    assert!(
                        close(p.distance(g), q.distance(g)),
                        "{what}: fallback {p} ({}) against {q} ({})",
                        p.distance(g),
                        q.distance(g)
                    );
                }
                (x, y) => panic!("{what}: {x:?} against {y:?}"),
            }
        }
        (Err(a), Err(b)) => assert_eq!(
            core::mem::discriminant(a),
            core::mem::discriminant(b),
            "{what}: {a:?} against {b:?}"
        ),
        (a, b) => panic!("{what}: {a:?} against {b:?}"),
    }
}

/// `n` random queries on `grid` for `radius`, on one mesh built on demand
/// (growing from query to query) and on a fresh one every tenth query,
/// against the mesh built whole.
fn queries(grid: &Grid, radius: f64, n: usize, seed: u64) {
    let whole = if radius > 0.0 {
        NavMesh::with_radius(grid, radius).unwrap()
    } else {
        NavMesh::build(grid)
    };
    let mut lazy = NavMesh::on_demand(grid, radius).unwrap();
    assert!(lazy.is_on_demand());
    assert_eq!(lazy.chunk_count(), 0);
    let options = PlanOptions::default();
    let mut rng = Rng::new(seed);
    let (mut a, mut b) = (Planner::new(), Planner::new());
    for q in 0..n {
        let (s, t) = (point(&mut rng, grid), point(&mut rng, grid));
        let expected = b.plan_on_mesh(&whole, s, t, &options);
        let got = a.plan_on_growing_mesh(&mut lazy, s, t, &options);
        same(
            &got,
            &expected,
            &format!("query {q}: {s} -> {t}, radius {radius}"),
        );
        if q % 10 == 0 {
            let mut fresh = NavMesh::on_demand(grid, radius).unwrap();
            let got = a.plan_on_growing_mesh(&mut fresh, s, t, &options);
            same(
                &got,
                &expected,
                &format!("fresh query {q}: {s} -> {t}, radius {radius}"),
            );
        }
    }
}

#[test]
fn point_queries_answer_as_on_the_whole_mesh() {
    for (name, seed) in [
        ("den520d", 1),
        ("maze512-1-0", 2),
        ("random512-20-0", 3),
        ("8room_000", 4),
        ("AR0011SR", 5),
    ] {
        queries(&load(name), 0.0, 150, seed);
    }
}

#[test]
fn radius_queries_answer_as_on_the_whole_mesh() {
    for (name, radius, seed) in [
        ("den520d", 0.5, 11),
        ("lt_backalley_n", 0.4, 12),
        ("random512-10-0", 0.4, 13),
        ("arena", 1.3, 14),
    ] {
        queries(&load(name), radius, 80, seed);
    }
}

#[test]
fn many_to_one_answer_as_on_the_whole_mesh() {
    let mut rng = Rng::new(21);
    for (name, radius) in [("den520d", 0.0), ("AR0011SR", 0.5), ("maze512-1-0", 0.0)] {
        let grid = load(name);
        let whole = if radius > 0.0 {
            NavMesh::with_radius(&grid, radius).unwrap()
        } else {
            NavMesh::build(&grid)
        };
        let options = PlanOptions::default();
        for round in 0..4 {
            let goal = point(&mut rng, &grid);
            let starts: Vec<DVec2> = (0..60).map(|_| point(&mut rng, &grid)).collect();
            let (mut expected, mut got) = (Vec::new(), Vec::new());
            Planner::new().plan_many_on_mesh(&whole, &starts, goal, &options, &mut expected);
            let mut lazy = NavMesh::on_demand(&grid, radius).unwrap();
            Planner::new().plan_many_on_growing_mesh(&mut lazy, &starts, goal, &options, &mut got);
            assert_eq!(got.len(), starts.len());
            for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
                same(
                    g,
                    e,
                    &format!("{name} round {round}, start {k}: {} -> {goal}", starts[k]),
                );
            }
            // A mesh that cannot grow says so.
            let mut refused = Vec::new();
            let empty = NavMesh::on_demand(&grid, radius).unwrap();
            Planner::new().plan_many_on_mesh(&empty, &starts, goal, &options, &mut refused);
            assert_eq!(refused.len(), starts.len());
        }
    }
}

#[test]
fn a_mesh_that_cannot_grow_refuses_with_an_error() {
    let grid = load("den520d");
    let mesh = NavMesh::on_demand(&grid, 0.0).unwrap();
    let got = Planner::new().plan_on_mesh(
        &mesh,
        DVec2::new(10.5, 10.5),
        DVec2::new(200.5, 200.5),
        &PlanOptions::default(),
    );
    assert_eq!(got, Err(PlanError::MeshNotBuilt));
}

#[test]
fn edits_keep_the_built_chunks_in_step() {
    let mut rng = Rng::new(31);
    for radius in [0.0, 0.5] {
        let mut grid = load("den520d");
        let mut lazy = NavMesh::on_demand(&grid, radius).unwrap();
        let mut planner = Planner::new();
        let options = PlanOptions::default();
        for round in 0..30 {
            for _ in 0..40 {
                let (x, y) = (
                    rng.below(u64::from(grid.width())) as u32,
                    rng.below(u64::from(grid.height())) as u32,
                );
                let free = rng.below(3) == 0;
                grid.set_free(UVec2::new(x, y), free).unwrap();
            }
            lazy.sync(&grid);
            let whole = if radius > 0.0 {
                NavMesh::with_radius(&grid, radius).unwrap()
            } else {
                NavMesh::build(&grid)
            };
            for q in 0..10 {
                let (s, t) = (point(&mut rng, &grid), point(&mut rng, &grid));
                let expected = Planner::new().plan_on_mesh(&whole, s, t, &options);
                let got = planner.plan_on_growing_mesh(&mut lazy, s, t, &options);
                same(
                    &got,
                    &expected,
                    &format!("round {round} query {q}, radius {radius}"),
                );
            }
        }
    }
}

#[test]
fn local_searches_build_only_the_chunks_around_them() {
    // AR0011SR tiled 4 x 4 (2048 x 2048 cells): queries 10 to 60 cells
    // long within one 512 x 512 corner.
    let tile = load("AR0011SR");
    let (w, h) = (tile.width(), tile.height());
    let mut grid = Grid::new(w * 4, h * 4).unwrap();
    for y in 0..h * 4 {
        for x in 0..w * 4 {
            let free = tile.is_free_xy(i64::from(x % w), i64::from(y % h));
            grid.set_free(UVec2::new(x, y), free).unwrap();
        }
    }
    for radius in [0.0, 0.5] {
        let whole = if radius > 0.0 {
            NavMesh::with_radius(&grid, radius).unwrap()
        } else {
            NavMesh::build(&grid)
        };
        let mut lazy = NavMesh::on_demand(&grid, radius).unwrap();
        let mut rng = Rng::new(41);
        let mut planner = Planner::new();
        let options = PlanOptions::default();
        let mut done = 0;
        while done < 200 {
            let s = point(&mut rng, &tile);
            let t = s + DVec2::new(rng.below(100) as f64 - 50.0, rng.below(100) as f64 - 50.0);
            if !grid.is_point_traversable(t) || t.x >= f64::from(w) || t.y >= f64::from(h) {
                continue;
            }
            done += 1;
            let expected = Planner::new().plan_on_mesh(&whole, s, t, &options);
            let got = planner.plan_on_growing_mesh(&mut lazy, s, t, &options);
            same(&got, &expected, &format!("{s} -> {t}, radius {radius}"));
        }
        // Only chunks of the corner (and its rim) are built; they take a
        // small share of the whole mesh's memory.
        let share = lazy.memory_bytes() as f64 / whole.memory_bytes() as f64;
        assert!(share < 0.15, "radius {radius}: {share}");
        assert!(
            lazy.chunk_count() < lazy.slot_count() / 8,
            "radius {radius}"
        );
    }
}
