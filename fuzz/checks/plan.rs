//! `plan`: a small grid, a few edits, start and goal points anywhere (inside,
//! on vertices, centres and edges, in obstacles, outside the grid), every
//! [`Algorithm`].
//!
//! Each result must pass the reference validator of the crate's tests (every
//! rule of `SPEC.md`: endpoints, moved starts, fallback targets, visibility,
//! double corners, length, grid moves for A*), Anya and Polyanya (on the
//! mesh the planner keeps in step with the edits) must be exactly as long
//! as the reference optimum, the others never shorter, A* as long as the
//! 8-connected optimum, and `FallbackPolicy::Fail` must agree with the
//! fallback policy. The grid's region labels must match the reference's
//! 4-connected components after every edit.

use std::collections::HashMap;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::prelude::*;

use super::common::Reference;
use super::common::harness::{Optimality, Tally, check_query};
use super::input::Input;

/// What each planner promises about lengths (`SPEC.md`).
fn optimality(algorithm: Algorithm) -> Optimality {
    match algorithm {
        Algorithm::Anya | Algorithm::Polyanya => Optimality::Optimum,
        Algorithm::AStar => Optimality::GridOptimum,
        Algorithm::LazyTheta | Algorithm::AStarSmoothed => Optimality::AtLeastOptimum,
    }
}

/// Runs the `plan` check on one input.
///
/// # Panics
///
/// With a report (grid, query, path) when a result breaks a rule.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let mut grid = input.grid();
    let mut planner = Planner::new();
    for round in 0..3 {
        let reference = Reference::new(&grid);
        check_regions(&grid, &reference);
        let queries = 1 + input.below(3);
        for _ in 0..queries {
            let start = input.point(grid.width(), grid.height());
            let goal = input.point(grid.width(), grid.height());
            for algorithm in Algorithm::ALL {
                check_one(&mut planner, &grid, &reference, algorithm, start, goal);
            }
        }
        if round == 2 || input.is_empty() {
            break;
        }
        edit(&mut input, &mut grid);
    }
}

fn check_one(
    planner: &mut Planner,
    grid: &Grid,
    reference: &Reference,
    algorithm: Algorithm,
    start: DVec2,
    goal: DVec2,
) {
    let options = PlanOptions::with_algorithm(algorithm);
    let result = planner.plan(grid, start, goal, &options);
    if let Err(why) = check_query(
        reference,
        algorithm,
        optimality(algorithm),
        (start, goal),
        &result,
        &mut Tally::default(),
    ) {
        panic!(
            "{}",
            reference.report(&format!("{algorithm}: {why}"), start, goal, &result)
        );
    }
    // The same query refusing fallbacks: the same path if the goal is
    // reachable, else `Unreachable` naming the fallback target.
    let fail = PlanOptions {
        fallback: FallbackPolicy::Fail,
        ..options
    };
    let again = planner.plan(grid, start, goal, &fail);
    let agrees = match (&result, &again) {
        (Ok(p), Err(PlanError::Unreachable { closest })) => p.is_fallback() && *closest == p.end(),
        (Ok(p), Ok(q)) => !p.is_fallback() && p.waypoints == q.waypoints && p.kind == q.kind,
        (Err(a), Err(b)) => a == b,
        (Err(_), Ok(_)) | (Ok(_), Err(_)) => false,
    };
    assert!(
        agrees,
        "{}",
        reference.report(
            &format!("{algorithm} with FallbackPolicy::Fail answers {again:?}"),
            start,
            goal,
            &result
        )
    );
}

/// The grid's region labels partition the free cells exactly as the
/// reference's breadth-first search does.
fn check_regions(grid: &Grid, reference: &Reference) {
    let mut to_grid: HashMap<u32, bevy_anyangle::grid::RegionId> = HashMap::new();
    let mut to_reference = HashMap::new();
    for y in 0..reference.height() {
        for x in 0..reference.width() {
            let mine = grid.region(x, y);
            let theirs = reference.region_of_cell(x, y);
            match (mine, theirs) {
                (None, 0) => {}
                (Some(m), t) if t != 0 => {
                    let m_for_t = *to_grid.entry(t).or_insert(m);
                    let t_for_m = *to_reference.entry(m).or_insert(t);
                    assert!(
                        m_for_t == m && t_for_m == t,
                        "region labels disagree with the reference at cell ({x}, {y}) on\n{}",
                        reference.picture()
                    );
                }
                _ => panic!(
                    "cell ({x}, {y}): region {mine:?} but the reference says {} on\n{}",
                    if theirs == 0 { "blocked" } else { "free" },
                    reference.picture()
                ),
            }
        }
    }
    assert_eq!(
        grid.region_count() as usize,
        to_grid.len(),
        "region_count on\n{}",
        reference.picture()
    );
}

/// A few edits: single cells and rectangles, set free or blocked, some of
/// them (partly) outside the grid, which must be refused without a change.
fn edit(input: &mut Input<'_>, grid: &mut Grid) {
    let (w, h) = (grid.width(), grid.height());
    for _ in 0..=input.below(4) {
        let before = grid.clone();
        let version = grid.version();
        let free = input.bit();
        if input.below(4) == 0 {
            // A batch: regions are relabelled once, at the end.
            let cells: Vec<(UVec2, bool)> = (0..3)
                .map(|_| {
                    (
                        UVec2::new(input.below(w + 1), input.below(h + 1)),
                        input.bit(),
                    )
                })
                .collect();
            let _ = grid.edit(|e| {
                for &(cell, free) in &cells {
                    e.set_free(cell, free)?;
                }
                Ok(())
            });
            continue;
        }
        let result = if input.bit() {
            let cell = UVec2::new(input.below(w + 1), input.below(h + 1));
            grid.set_free(cell, free)
        } else {
            let (x0, y0) = (input.below(w + 1), input.below(h + 1));
            let (x1, y1) = (x0 + input.below(w + 1), y0 + input.below(h + 1));
            grid.set_rect_free(URect::new(x0, y0, x1, y1), free)
        };
        match result {
            Ok(changed) => {
                assert_eq!(changed, *grid != before, "the changed flag of an edit");
                assert_eq!(grid.version(), version + u64::from(changed), "the version");
            }
            Err(_) => {
                assert!(*grid == before, "a refused edit changed the grid");
                assert_eq!(
                    grid.version(),
                    version,
                    "a refused edit changed the version"
                );
            }
        }
    }
}
