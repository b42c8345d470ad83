//! `many`: one goal for many starts. A grid of up to 16 x 16 cells, a mesh
//! for point agents or for a radius (a whole number of 64ths of a cell up
//! to 1), then up to three rounds, each a goal, up to 12 starts anywhere
//! (in walls, outside the grid, on the goal, repeated) and options (any
//! planner, either fallback policy, node budgets from 0 to the default,
//! heuristic weights).
//!
//! Every answer of [`Planner::plan_many_on_mesh`] must be the one
//! [`Planner::plan_on_mesh`] gives for its start alone: a path as long
//! (within 1e-9, relative), of the same kind, from the same moved start, or
//! the same error. A node budget bounds each search, and a shared search
//! is not the single one: a shared search that runs out of its budget
//! leaves its starts to be planned alone (so an exhausted budget is the
//! single search's answer too), while one that finishes within it answers
//! its starts even where the single search would have run out; such an
//! answer must then be the single search's answer without a budget. Paths
//! must see along every segment and keep the mesh's radius (sampled every
//! 1/64 cell). [`Planner::step_many`], in slices of random sizes, must
//! give `plan_many_on_mesh`'s answers. One planner serves every round.

use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;

use super::common::{close, keeps_radius};
use super::input::Input;
use super::picture;

/// Starts per round, at most.
const MAX_STARTS: u32 = 12;

/// Node budgets a round may have.
const BUDGETS: [Option<u64>; 8] = [
    None,
    Some(0),
    Some(1),
    Some(4),
    Some(16),
    Some(64),
    Some(512),
    Some(1_000_000),
];

/// Slice sizes for [`Planner::step_many`].
const SLICES: [u64; 4] = [1, 3, 40, u64::MAX];

/// Runs the `many` check on one input.
///
/// # Panics
///
/// When an answer differs from the single search's, or a path is not
/// valid.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let grid = input.grid();
    let (w, h) = (grid.width(), grid.height());
    let mesh = if input.bit() {
        NavMesh::build(&grid)
    } else {
        let r = f64::from(1 + input.below(64)) / 64.0;
        NavMesh::with_radius(&grid, r).expect("a valid radius")
    };
    let mut planner = Planner::new();
    let mut single = Planner::new();
    let mut answers = Vec::new();
    let mut sliced = Vec::new();
    for round in 0..3 {
        if round > 0 && input.is_empty() {
            break;
        }
        let goal = input.point(w, h);
        let mut starts = Vec::new();
        for _ in 0..=input.below(MAX_STARTS) {
            let start = match input.below(8) {
                0 if !starts.is_empty() => starts[starts.len() - 1],
                1 => goal,
                _ => input.point(w, h),
            };
            starts.push(start);
        }
        let options = PlanOptions {
            algorithm: input.algorithm(),
            fallback: input.fallback(),
            node_budget: BUDGETS[input.below(8) as usize],
            heuristic_weight: [1.0, 1.5, f64::NAN, 0.5][input.below(4) as usize],
        };
        let report = |what: String| {
            format!(
                "round {round}, radius {}, goal {goal}, starts {starts:?}, {options:?}: {what} on\n{}",
                mesh.radius(),
                picture(&grid)
            )
        };
        planner.plan_many_on_mesh(&mesh, &starts, goal, &options, &mut answers);
        assert_eq!(
            answers.len(),
            starts.len(),
            "{}",
            report("one answer per start".into())
        );
        for (&start, answer) in starts.iter().zip(&answers) {
            let alone = single.plan_on_mesh(&mesh, start, goal, &options);
            let agrees = match (answer, &alone) {
                (Ok(_), Err(PlanError::BudgetExhausted { .. })) => {
                    let free = PlanOptions {
                        node_budget: None,
                        ..options
                    };
                    same(answer, &single.plan_on_mesh(&mesh, start, goal, &free))
                }
                _ => same(answer, &alone),
            };
            assert!(
                agrees,
                "{}",
                report(format!("from {start}: shared {answer:?}, alone {alone:?}"))
            );
            if let Ok(path) = answer
                && let Err(why) = valid(&grid, &mesh, path)
            {
                panic!("{}", report(format!("from {start}: {why}: {path:?}")));
            }
        }
        // The same answers, a slice at a time.
        let slice = SLICES[input.below(4) as usize];
        let mut first = true;
        let mut slices = 0;
        while !planner.step_many(&mesh, (&starts, goal), &options, first, slice, &mut sliced) {
            first = false;
            slices += 1;
            assert!(
                slices < 1 << 20,
                "{}",
                report("step_many never ends".into())
            );
        }
        assert_eq!(sliced.len(), answers.len());
        for (k, (a, b)) in sliced.iter().zip(&answers).enumerate() {
            assert!(
                same(a, b),
                "{}",
                report(format!(
                    "start {k} in slices of {slice}: {a:?}, whole: {b:?}"
                ))
            );
        }
    }
}

/// Whether two answers are the same: paths as long (within 1e-9, relative),
/// of the same kind, from the same moved start; or the same error (a budget
/// error with any counts).
fn same(a: &Result<Path, PlanError>, b: &Result<Path, PlanError>) -> bool {
    match (a, b) {
        (Ok(p), Ok(q)) => {
            close(p.length, q.length)
                && p.kind == q.kind
                && p.start_moved_from == q.start_moved_from
        }
        (Err(PlanError::BudgetExhausted { .. }), Err(PlanError::BudgetExhausted { .. })) => true,
        (Err(e), Err(f)) => e == f,
        _ => false,
    }
}

/// A path sees along every segment and keeps the mesh's radius.
fn valid(grid: &Grid, mesh: &NavMesh, path: &Path) -> Result<(), String> {
    if path.waypoints.is_empty() {
        return Err("an empty path".into());
    }
    for pair in path.waypoints.windows(2) {
        if !line_of_sight(grid, pair[0], pair[1]) {
            return Err(format!("no line of sight along {} - {}", pair[0], pair[1]));
        }
    }
    keeps_radius(grid, &path.waypoints, mesh.radius())
}
