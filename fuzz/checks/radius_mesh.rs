//! `radius_mesh`: a grid of up to 24 x 24 cells, a radius (mostly a whole
//! number of 64ths of a cell up to 2 cells, now and then an odd or an
//! invalid value), then up to four rounds of edits (one round above 4.5
//! cells), each followed by a few queries on the mesh for that radius.
//!
//! An invalid radius (negative, not finite, above
//! [`MAX_RADIUS`](bevy_anyangle::clearance::MAX_RADIUS)) must give the
//! typed error [`NavMesh::with_radius`] documents. For a valid one: after
//! every round of edits, the mesh built once and kept in step with
//! [`NavMesh::sync`] must have the polygons of a mesh built afresh on the
//! edited grid, and its grid. Every path [`Planner::plan_on_mesh`] returns
//! there must keep the radius from every blocked cell and from the grid's
//! outside (exactly, segment by cell, less 1e-9, as the crate's tests
//! measure it: the mesh promises at least the radius, its
//! tolerance only says how much room it may give away), have line of sight
//! along every segment, start where it was asked to unless it reports a
//! moved start, and end at the goal when it is found. One planner serves
//! every query on the synced mesh; a fresh planner on the fresh mesh must
//! give the same answer.

use bevy_anyangle::clearance::{ClearanceError, MAX_RADIUS};
use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;

use super::common::keeps_radius;
use super::input::Input;
use super::picture;

/// Largest side of the grid, in cells.
const SIDE: u32 = 24;

/// Rounds of edits and queries.
const ROUNDS: usize = 4;

/// Radii other than whole 64ths of a cell: odd valid ones, then invalid
/// ones.
const ODD_RADII: [f64; 16] = [
    0.0,
    -0.0,
    1e-9,
    0.005,
    1.0 / 3.0,
    2.5,
    3.27,
    4.5,
    MAX_RADIUS,
    -1.0 / 64.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    256.000_000_000_1,
    1e300,
    -f64::MIN_POSITIVE,
];

/// A radius: 7 times in 8 a whole number of 64ths of a cell, 1/64 to 2.
fn radius(input: &mut Input<'_>) -> f64 {
    if input.below(8) == 0 {
        ODD_RADII[input.below(16) as usize]
    } else {
        f64::from(1 + input.below(128)) / 64.0
    }
}

/// Runs the `radius_mesh` check on one input.
///
/// # Panics
///
/// When a mesh, a path or an error breaks a rule above.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let mut grid = input.grid_within(SIDE);
    let r = radius(&mut input);
    let built = NavMesh::with_radius(&grid, r);
    if !r.is_finite() || r < 0.0 {
        assert!(
            matches!(built, Err(ClearanceError::BadRadius(_))),
            "radius {r}: {built:?}"
        );
        return;
    }
    if r > MAX_RADIUS {
        assert!(
            matches!(built, Err(ClearanceError::TooLarge(_))),
            "radius {r}: {built:?}"
        );
        return;
    }
    let mut mesh = built.unwrap_or_else(|e| panic!("radius {r}: {e:?}"));
    assert_eq!(
        mesh.tolerance(),
        NavMesh::tolerance_for(r),
        "radius {r}: the tolerance"
    );
    // Meshes for radii far beyond the grid's size are empty, and slow to
    // build: one round.
    let rounds = if r > 4.5 { 1 } else { ROUNDS };
    let mut planner = Planner::new();
    for round in 0..rounds {
        if round > 0 {
            if input.is_empty() {
                break;
            }
            edit(&mut input, &mut grid);
            mesh.sync(&grid);
        }
        let fresh = NavMesh::with_radius(&grid, r).expect("a valid radius");
        assert!(
            mesh.grid() == &grid,
            "radius {r}, round {round}: the synced mesh's grid"
        );
        let synced: Vec<Vec<DVec2>> = mesh.polygons().collect();
        let built: Vec<Vec<DVec2>> = fresh.polygons().collect();
        assert!(
            synced == built,
            "radius {r}, round {round}: the synced mesh has {} polygons, a fresh one {}, on\n{}",
            synced.len(),
            built.len(),
            picture(&grid)
        );
        for _ in 0..=input.below(3) {
            let start = input.point(grid.width(), grid.height());
            let goal = input.point(grid.width(), grid.height());
            let options = options(&mut input);
            let answer = planner.plan_on_mesh(&mesh, start, goal, &options);
            let again = Planner::new().plan_on_mesh(&fresh, start, goal, &options);
            let report = || {
                format!(
                    "radius {r}, round {round}, {start} -> {goal}, {options:?}: {answer:?} on\n{}",
                    picture(&grid)
                )
            };
            assert!(
                same(&answer, &again),
                "{}\na fresh planner on a fresh mesh: {again:?}",
                report()
            );
            if let Ok(path) = &answer {
                check_path(&grid, r, path, (start, goal)).unwrap_or_else(|why| {
                    panic!("{why}: {}", report());
                });
            }
        }
    }
}

/// A query's options: any planner, either fallback policy, and now and
/// then a small node budget.
fn options(input: &mut Input<'_>) -> PlanOptions {
    let algorithm = Algorithm::ALL[input.below(Algorithm::ALL.len() as u32) as usize];
    let code = input.byte();
    PlanOptions {
        fallback: if code & 1 == 0 {
            FallbackPolicy::ClosestReachable
        } else {
            FallbackPolicy::Fail
        },
        node_budget: match (code >> 1) % 8 {
            0 => Some(1 + u64::from(code >> 4)),
            1 => None,
            _ => PlanOptions::default().node_budget,
        },
        ..PlanOptions::with_algorithm(algorithm)
    }
}

/// Whether two answers are the same: the same waypoints, kind and moved
/// start, or the same error (a budget error with any counts).
fn same(a: &Result<Path, PlanError>, b: &Result<Path, PlanError>) -> bool {
    match (a, b) {
        (Ok(p), Ok(q)) => {
            p.waypoints == q.waypoints
                && p.kind == q.kind
                && p.start_moved_from == q.start_moved_from
                && p.length == q.length
        }
        (Err(PlanError::BudgetExhausted { .. }), Err(PlanError::BudgetExhausted { .. })) => true,
        (Err(e), Err(f)) => e == f,
        _ => false,
    }
}

/// A path on the mesh for radius `r`: it keeps the radius, sees along
/// every segment, and starts and ends where it says.
fn check_path(
    grid: &Grid,
    r: f64,
    path: &Path,
    (start, goal): (DVec2, DVec2),
) -> Result<(), String> {
    let w = &path.waypoints;
    if w.is_empty() {
        return Err("an empty path".into());
    }
    keeps_radius(grid, w, r)?;
    for pair in w.windows(2) {
        if !line_of_sight(grid, pair[0], pair[1]) {
            return Err(format!("no line of sight along {} - {}", pair[0], pair[1]));
        }
    }
    match path.start_moved_from {
        None if w[0] != start => return Err(format!("the path starts at {}", w[0])),
        Some(from) if from != start => return Err(format!("a start moved from {from}")),
        _ => {}
    }
    if !path.is_fallback() && path.end() != goal {
        return Err(format!("a found path ends at {}", path.end()));
    }
    Ok(())
}

/// A few edits: single cells, rectangles (some partly outside the grid,
/// which are refused) and batches, set free or blocked.
fn edit(input: &mut Input<'_>, grid: &mut Grid) {
    let (w, h) = (grid.width(), grid.height());
    for _ in 0..=input.below(4) {
        let free = input.bit();
        match input.below(4) {
            0 => {
                let cells: Vec<(UVec2, bool)> = (0..3)
                    .map(|_| (UVec2::new(input.below(w), input.below(h)), input.bit()))
                    .collect();
                let _ = grid.edit(|e| {
                    for &(cell, free) in &cells {
                        e.set_free(cell, free)?;
                    }
                    Ok(())
                });
            }
            1 => {
                let (x0, y0) = (input.below(w + 1), input.below(h + 1));
                let (x1, y1) = (x0 + input.below(6), y0 + input.below(6));
                let _ = grid.set_rect_free(URect::new(x0, y0, x1, y1), free);
            }
            _ => {
                let _ = grid.set_free(UVec2::new(input.below(w), input.below(h)), free);
            }
        }
    }
}
