//! The exact planners' promise (`SPEC.md`): Anya and Polyanya give a
//! shortest valid path, to 1e-9 relative, for any start and goal. Every path is checked by the validator of
//! `tests/common` and its length compared with the reference optimum
//! (Dijkstra on the corner visibility graph). A node budget stops Anya's
//! search.

mod common;

use std::f64::consts::SQRT_2;

use bevy_anyangle::prelude::*;
use common::generate::{Family, QueryMix};
use common::harness::{Optimality, Run, Tally, run};
use common::{Expect, Reference, close};

fn v(x: f64, y: f64) -> DVec2 {
    DVec2::new(x, y)
}

/// A run of the harness with `algorithm` (the exact planners differ only
/// in it) on random grids of up to 16 x 16 cells, 8 queries each.
fn exact_run(
    algorithm: Algorithm,
    optimality: Optimality,
    seed: u64,
    grids: usize,
    family: Option<Family>,
    mix: QueryMix,
) -> Tally {
    run(Run {
        algorithm,
        optimality,
        seed,
        grids,
        queries_per_grid: 8,
        max_side: 16,
        family,
        mix,
        heuristic_weight: 1.0,
    })
}

/// The exact planners, and the seed each one's runs start from.
const EXACT: [(Algorithm, u64); 2] = [
    (Algorithm::Anya, 0xa5a_0000),
    (Algorithm::Polyanya, 0xa5a_1000),
];

#[test]
fn exact_planners_give_valid_paths() {
    for (algorithm, seed) in EXACT {
        let t = exact_run(
            algorithm,
            Optimality::Valid,
            seed + 1,
            400,
            None,
            QueryMix::ANY,
        );
        assert!(
            t.queries >= 3_000 && t.fallback > 0 && t.moved > 0,
            "{algorithm}: {t:?}"
        );
    }
}

/// For each exact planner (Polyanya on the grids' navigation meshes),
/// 20,800 queries: 400 grids x 8 queries for each family with vertex and
/// cell-centre endpoints, plus 600 x 8 of any family with any endpoints
/// (float points, points outside, invalid starts).
#[test]
fn exact_planners_are_optimal_on_random_small_grids() {
    for (algorithm, seed) in EXACT {
        let mut total = 0;
        for (i, family) in Family::ALL.into_iter().enumerate() {
            let t = exact_run(
                algorithm,
                Optimality::Optimum,
                seed + 0x100 + i as u64,
                400,
                Some(family),
                QueryMix::LATTICE,
            );
            assert_eq!(
                t.compared, t.queries,
                "{algorithm} {family:?}: every query compared"
            );
            total += t.queries;
        }
        let t = exact_run(
            algorithm,
            Optimality::Optimum,
            seed + 0x200,
            600,
            None,
            QueryMix::ANY,
        );
        assert!(
            t.fallback > 0 && t.moved > 0 && t.double_corner_ends > 0,
            "{algorithm}: {t:?}"
        );
        total += t.queries;
        assert!(total >= 20_000, "{algorithm}: {total}");
    }
}

// ----- named boundary cases ------------------------------------------------

/// One hand-made query with its hand-computed shortest length.
struct Case {
    name: &'static str,
    picture: &'static str,
    start: DVec2,
    goal: DVec2,
    length: f64,
}

fn cases() -> Vec<Case> {
    let sqrt5 = 5f64.sqrt();
    vec![
        Case {
            // The goal (2, 1) is the top-right corner of the block: the end
            // of the interval along the block's top edge.
            name: "goal_on_an_interval_endpoint",
            picture: "...
                      .#.
                      ...",
            start: v(0.0, 2.0),
            goal: v(2.0, 1.0),
            length: SQRT_2 + 1.0,
        },
        Case {
            // Hidden behind the block; the last leg runs up its right edge
            // and ends at its corner (2, 1).
            name: "goal_on_an_interval_endpoint_reached_along_an_edge",
            picture: "....
                      ##..
                      ....",
            start: v(0.5, 2.5),
            goal: v(2.0, 1.0),
            length: 2.5f64.sqrt() + 1.0,
        },
        Case {
            // s = (0, 0), the corners (2, 1) and (4, 2) are collinear: the
            // only ray from s past both blocks is y = x / 2 (zero-width
            // interval between them); the path turns at (4, 2).
            name: "collinear_roots_through_a_zero_width_gap",
            picture: "..#....
                      .......
                      ...#...
                      .......
                      .......",
            start: v(0.0, 0.0),
            goal: v(6.5, 4.0),
            length: 20f64.sqrt() + 10.25f64.sqrt(),
        },
        Case {
            // Both ends on the top border; the border above the block may
            // not be used (it is shared by the block and the outside).
            name: "roots_on_the_map_border",
            picture: "..#..
                      .....",
            start: v(0.0, 0.0),
            goal: v(5.0, 0.0),
            length: 1.0 + 2.0 * sqrt5,
        },
        Case {
            // The goal is the map's corner (3, 2), a vertex with one free
            // cell; the bottom border under the block is not walkable.
            name: "goal_at_the_map_corner_tip_of_a_free_cell",
            picture: "...
                      .#.",
            start: v(0.0, 0.0),
            goal: v(3.0, 2.0),
            length: sqrt5 + SQRT_2,
        },
        Case {
            // Start and goal mid-edge on the left and right borders, level
            // with the middle of the block: around its top corners.
            name: "flat_intervals_along_a_block_edge",
            picture: ".....
                      .###.
                      .....",
            start: v(0.0, 1.5),
            goal: v(5.0, 1.5),
            length: 3.0 + sqrt5,
        },
        Case {
            // (2, 2) is a double corner (free (1, 1) and (2, 2)); a start
            // there leaves through cell (2, 2) only, then goes round.
            name: "start_on_a_double_corner",
            picture: "....
                      ..#.
                      .#..
                      ....",
            start: v(2.0, 2.0),
            goal: v(0.0, 0.0),
            length: 2.0 + 10f64.sqrt(),
        },
        Case {
            name: "goal_on_a_double_corner",
            picture: "....
                      ..#.
                      .#..
                      ....",
            start: v(0.0, 0.0),
            goal: v(2.0, 2.0),
            length: 2.0 + 10f64.sqrt(),
        },
        Case {
            // From the double corner straight into its south-east cell.
            name: "double_corner_start_sees_the_goal_south_east",
            picture: "....
                      ..#.
                      .#..
                      ....",
            start: v(2.0, 2.0),
            goal: v(4.0, 3.0),
            length: sqrt5,
        },
        Case {
            // Cell centres in a 1-wide corridor that turns twice.
            name: "centres_in_a_winding_corridor",
            picture: "...##
                      ##.##
                      ##...",
            start: v(0.5, 0.5),
            goal: v(4.5, 2.5),
            // (0.5, 0.5) -> (2, 1) -> (3, 2) -> (4.5, 2.5)
            length: 2.5f64.sqrt() + SQRT_2 + 2.5f64.sqrt(),
        },
        Case {
            // A start at the tip of its only free cell (the others around
            // (1, 1) are blocked): it can only leave south-east.
            name: "start_at_the_tip_of_a_free_cell",
            picture: "##..
                      #...
                      ..#.
                      ....",
            start: v(1.0, 1.0),
            goal: v(3.0, 4.0),
            // (1, 1) -> (2, 3), the block's bottom-left corner -> (3, 4).
            length: 5f64.sqrt() + 2f64.sqrt(),
        },
    ]
}

fn check_case(c: &Case, require_optimal: bool) -> Result<(), String> {
    let grid = Grid::from_ascii(c.picture).map_err(|e| e.to_string())?;
    let r = Reference::new(&grid);
    for algorithm in [Algorithm::Anya, Algorithm::Polyanya] {
        let result = Planner::new().plan(
            &grid,
            c.start,
            c.goal,
            &PlanOptions::with_algorithm(algorithm),
        );
        let report = |e: String| {
            r.report(
                &format!("{} ({algorithm}): {e}", c.name),
                c.start,
                c.goal,
                &result,
            )
        };
        let path = result.as_ref().map_err(|e| report(format!("{e:?}")))?;
        r.validate(c.start, c.goal, path, Expect::ANY_ANGLE)
            .map_err(report)?;
        if require_optimal && !close(path.length, c.length) {
            return Err(report(format!(
                "length {} but the shortest is {}",
                path.length, c.length
            )));
        }
    }
    Ok(())
}

/// The hand-computed lengths agree with the reference optimum (so the named
/// cases check what they claim), and the goal is not in direct sight (so
/// they exercise the search, not the straight-line shortcut).
#[test]
fn named_cases_match_the_reference() {
    for c in cases() {
        let grid = Grid::from_ascii(c.picture).unwrap();
        let r = Reference::new(&grid);
        let opt = r
            .optimum(c.start, c.goal)
            .unwrap_or_else(|| panic!("{}: no reference path", c.name));
        assert!(
            close(opt, c.length),
            "{}: reference {opt}, hand {}",
            c.name,
            c.length
        );
        if c.name != "double_corner_start_sees_the_goal_south_east" {
            assert!(
                !r.sees(c.start, c.goal)
                    || r.on_double_corner(c.start)
                    || r.on_double_corner(c.goal),
                "{}",
                c.name
            );
        }
    }
}

#[test]
fn named_cases_are_valid() {
    let failures: Vec<String> = cases()
        .iter()
        .filter_map(|c| check_case(c, false).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The node budget stops the search.
#[test]
fn node_budget_stops_the_search() {
    let grid = Grid::from_ascii(
        "........
         .######.
         ........",
    )
    .expect("valid");
    let opts = PlanOptions {
        algorithm: Algorithm::Anya,
        node_budget: Some(1),
        ..PlanOptions::default()
    };
    let r = Planner::new().plan(&grid, DVec2::new(0.5, 1.5), DVec2::new(7.5, 1.5), &opts);
    assert!(
        matches!(
            r,
            Err(bevy_anyangle::search::PlanError::BudgetExhausted { .. })
        ),
        "{r:?}"
    );
}

macro_rules! optimal_case {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let all = cases();
            let c = all.iter().find(|c| c.name == stringify!($name)).expect("a case of that name");
            check_case(c, true).unwrap_or_else(|e| panic!("{e}"));
        }
    )*};
}

optimal_case!(
    goal_on_an_interval_endpoint,
    goal_on_an_interval_endpoint_reached_along_an_edge,
    collinear_roots_through_a_zero_width_gap,
    roots_on_the_map_border,
    goal_at_the_map_corner_tip_of_a_free_cell,
    flat_intervals_along_a_block_edge,
    start_on_a_double_corner,
    goal_on_a_double_corner,
    double_corner_start_sees_the_goal_south_east,
    centres_in_a_winding_corridor,
    start_at_the_tip_of_a_free_cell,
);

/// Every named case has its optimality test above.
#[test]
fn every_named_case_has_an_optimality_test() {
    let names: Vec<&str> = cases().iter().map(|c| c.name).collect();
    let tested = include_str!("anya.rs");
    let block = tested
        .split("optimal_case!(\n")
        .nth(1)
        .and_then(|s| s.split(");").next())
        .unwrap_or_default();
    for n in names {
        assert!(
            block.contains(&format!("    {n},")),
            "{n} has no optimal_case! entry"
        );
    }
}
