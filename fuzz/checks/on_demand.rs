//! `on_demand`: meshes built on demand against meshes built whole. A grid
//! of up to 16 x 16 cells is placed across a corner where four chunks meet
//! (the rest of a 96 x 96 grid blocked, or free), a mesh for point agents
//! or for a radius (a whole number of 64ths of a cell up to 1) is made
//! both ways, then up to three rounds, each a few edits (both meshes
//! synced), a goal and up to 8 starts anywhere (in walls, outside the
//! grid, on the goal) and options (any planner, either fallback policy,
//! no node budget: the two meshes' searches expand different polygons).
//!
//! [`Planner::plan_on_growing_mesh`] must give every start the answer
//! [`Planner::plan_on_mesh`] gives on the whole mesh: a path as long
//! (within 1e-9, relative), of the same kind, from the same moved start,
//! ending as far from a goal it falls back from; or the same error. So
//! must [`Planner::plan_many_on_growing_mesh`], on a mesh of its own.
//! Paths must see along every segment and keep the mesh's radius.

use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;

use super::common::{close, keeps_radius};
use super::input::Input;
use super::picture;

/// Side of the whole grid, in cells: past the first chunk border of both
/// kinds of mesh (64 cells for point agents, 32 for a radius).
const SIDE: u32 = 96;

/// Starts per round, at most.
const MAX_STARTS: u32 = 8;

/// Runs the `on_demand` check on one input.
///
/// # Panics
///
/// When an answer on the mesh built on demand differs from the whole
/// mesh's, or a path is not valid.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let pattern = input.grid();
    let radius = if input.bit() {
        0.0
    } else {
        f64::from(1 + input.below(64)) / 64.0
    };
    // The pattern across the corner of four chunks.
    let chunk = if radius > 0.0 { 32 } else { 64 };
    let at = chunk - 1 - input.below(pattern.width().min(pattern.height()));
    let outside_free = input.bit();
    let mut ascii = String::with_capacity(((SIDE + 1) * SIDE) as usize);
    for y in 0..SIDE {
        for x in 0..SIDE {
            let (px, py) = (i64::from(x) - i64::from(at), i64::from(y) - i64::from(at));
            let inside = px >= 0
                && py >= 0
                && px < i64::from(pattern.width())
                && py < i64::from(pattern.height());
            let free = if inside {
                pattern.is_free_xy(px, py)
            } else {
                outside_free
            };
            ascii.push(if free { '.' } else { '#' });
        }
        ascii.push('\n');
    }
    let mut grid = Grid::from_ascii(&ascii).expect("a well-formed picture");
    let whole_of = |grid: &Grid| {
        if radius > 0.0 {
            NavMesh::with_radius(grid, radius).expect("a valid radius")
        } else {
            NavMesh::build(grid)
        }
    };
    let mut whole = whole_of(&grid);
    let mut lazy = NavMesh::on_demand(&grid, radius).expect("a valid radius");
    let mut many_lazy = NavMesh::on_demand(&grid, radius).expect("a valid radius");
    let (mut planner, mut reference) = (Planner::new(), Planner::new());
    let (mut answers, mut expected) = (Vec::new(), Vec::new());
    let near = |input: &mut Input| {
        let p = input.point(pattern.width(), pattern.height());
        p + DVec2::splat(f64::from(at))
    };
    for round in 0..3 {
        if round > 0 && input.is_empty() {
            break;
        }
        for _ in 0..input.below(4) {
            let p = near(&mut input).floor();
            if p.x >= 0.0 && p.y >= 0.0 && p.x < f64::from(SIDE) && p.y < f64::from(SIDE) {
                let cell = UVec2::new(p.x as u32, p.y as u32);
                let free = grid.is_free(cell);
                grid.set_free(cell, !free).expect("in the grid");
            }
        }
        whole.sync(&grid);
        lazy.sync(&grid);
        many_lazy.sync(&grid);
        let goal = near(&mut input);
        let starts: Vec<DVec2> = (0..=input.below(MAX_STARTS))
            .map(|_| {
                if input.below(8) == 0 {
                    goal
                } else {
                    near(&mut input)
                }
            })
            .collect();
        let options = PlanOptions {
            algorithm: input.algorithm(),
            fallback: input.fallback(),
            node_budget: None,
            heuristic_weight: 1.0,
        };
        let report = |what: String| {
            format!(
                "round {round}, radius {radius}, goal {goal}, starts {starts:?}, {options:?}: {what} on\n{}",
                picture(&grid)
            )
        };
        for &start in &starts {
            let want = reference.plan_on_mesh(&whole, start, goal, &options);
            let got = planner.plan_on_growing_mesh(&mut lazy, start, goal, &options);
            assert!(
                same(&got, &want, goal),
                "{}",
                report(format!("from {start}: on demand {got:?}, whole {want:?}"))
            );
            if let Ok(path) = &got
                && let Err(why) = valid(&grid, radius, path)
            {
                panic!("{}", report(format!("from {start}: {why}: {path:?}")));
            }
        }
        reference.plan_many_on_mesh(&whole, &starts, goal, &options, &mut expected);
        planner.plan_many_on_growing_mesh(&mut many_lazy, &starts, goal, &options, &mut answers);
        assert_eq!(
            answers.len(),
            starts.len(),
            "{}",
            report("one answer per start".into())
        );
        for (k, (a, b)) in answers.iter().zip(&expected).enumerate() {
            assert!(
                same(a, b, goal),
                "{}",
                report(format!("many, start {k}: on demand {a:?}, whole {b:?}"))
            );
        }
    }
}

/// Whether two answers are the same: paths as long (within 1e-9,
/// relative), of the same kind, from the same moved start, ending as far
/// from `goal`; or the same error (a search failure with any counts, the
/// closest point as far from `goal`).
fn same(a: &Result<Path, PlanError>, b: &Result<Path, PlanError>, goal: DVec2) -> bool {
    match (a, b) {
        (Ok(p), Ok(q)) => {
            let end = |p: &Path| p.waypoints.last().map_or(f64::NAN, |e| e.distance(goal));
            close(p.length, q.length)
                && p.kind == q.kind
                && p.start_moved_from == q.start_moved_from
                && close(end(p), end(q))
        }
        (Err(PlanError::SearchFailed { .. }), Err(PlanError::SearchFailed { .. })) => true,
        (
            Err(PlanError::Unreachable { closest: c }),
            Err(PlanError::Unreachable { closest: d }),
        ) => close(c.distance(goal), d.distance(goal)),
        (Err(e), Err(f)) => e == f,
        _ => false,
    }
}

/// A path sees along every segment and keeps the radius.
fn valid(grid: &Grid, radius: f64, path: &Path) -> Result<(), String> {
    if path.waypoints.is_empty() {
        return Err("an empty path".into());
    }
    for pair in path.waypoints.windows(2) {
        if !line_of_sight(grid, pair[0], pair[1]) {
            return Err(format!("no line of sight along {} - {}", pair[0], pair[1]));
        }
    }
    keeps_radius(grid, &path.waypoints, radius)
}
