//! Searches run in slices give the answers of searches run whole.

use core::sync::atomic::{AtomicBool, Ordering};

use bevy_math::{DVec2, URect, UVec2};

use super::{Algorithm, PlanError, PlanOptions, Planner, Query, Step, costed};
use crate::grid::{Grid, Scenario};
use crate::terrain::{Profile, Terrain, TerrainMap};

fn map(name: &str) -> (String, Scenario) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps");
    let text = std::fs::read_to_string(format!("{dir}/{name}.map")).unwrap();
    let scen = std::fs::read_to_string(format!("{dir}/{name}.map.scen")).unwrap();
    (text, Scenario::parse(&scen).unwrap())
}

fn centre(c: UVec2) -> DVec2 {
    DVec2::new(f64::from(c.x) + 0.5, f64::from(c.y) + 0.5)
}

/// Runs `query` to its end in slices of `slice` expansions. Returns the
/// answer and the number of slices.
fn sliced(
    planner: &mut Planner,
    query: &Query<'_>,
    slice: u64,
) -> (Result<super::Path, PlanError>, u64) {
    let mut slices = 0;
    let mut resume = false;
    loop {
        slices += 1;
        match planner.plan_slice(query, None, resume, Some(slice)) {
            Step::Done(answer) => return (answer, slices),
            Step::Paused => resume = true,
        }
    }
}

fn whole(query: &Query<'_>) -> Result<super::Path, PlanError> {
    Planner::new().plan_core(
        query.grid,
        query.start,
        query.goal,
        query.options,
        query.cancel,
        None,
        query.costs,
    )
}

#[test]
fn every_planner_gives_the_same_answer_in_slices_as_whole() {
    let mut paused_once = 0;
    for name in [
        "arena",
        "AR0011SR",
        "den520d",
        "maze512-1-0",
        "random512-20-0",
    ] {
        let (text, scen) = map(name);
        let grid = Grid::from_movingai(&text).unwrap();
        let step = (scen.entries.len() / 12).max(1);
        let queries: Vec<_> = scen.entries.iter().step_by(step).collect();
        for algorithm in Algorithm::ALL {
            let options = PlanOptions::with_algorithm(algorithm);
            let mut planner = Planner::new();
            for (i, e) in queries.iter().enumerate() {
                let query = Query {
                    grid: &grid,
                    start: centre(e.start),
                    goal: centre(e.goal),
                    options: &options,
                    cancel: None,
                    costs: None,
                    mesh: None,
                };
                let expected = whole(&query);
                for slice in [1, 37, 1000] {
                    let (got, slices) = sliced(&mut planner, &query, slice);
                    assert_eq!(
                        got, expected,
                        "{name} {algorithm} query {i}, slices of {slice}"
                    );
                    if slices > 1 {
                        paused_once += 1;
                    }
                }
            }
        }
    }
    assert!(paused_once > 100, "the searches did pause ({paused_once})");
}

#[test]
fn searches_with_terrain_costs_and_budgets_slice_too() {
    // A swamp band with a dry gap, and a wall with a door.
    let mut terrain = TerrainMap::new(120, 80, Terrain::GROUND).unwrap();
    terrain
        .set_rect(URect::new(30, 0, 60, 70), Terrain::SWAMP)
        .unwrap();
    terrain
        .set_rect(URect::new(80, 5, 82, 80), Terrain::OUT_OF_BOUNDS)
        .unwrap();
    let profile = Profile::default().with(Terrain::SWAMP, 4.0).unwrap();
    let grid = terrain.grid(&profile);
    let costs = costed::Costs {
        terrain: &terrain,
        profile: &profile,
    };
    for algorithm in [Algorithm::LazyTheta, Algorithm::AStar] {
        let options = PlanOptions::with_algorithm(algorithm);
        let query = Query {
            grid: &grid,
            start: DVec2::new(2.5, 40.5),
            goal: DVec2::new(118.5, 60.5),
            options: &options,
            cancel: None,
            costs: Some(costs),
            mesh: None,
        };
        let expected = whole(&query);
        assert!(expected.is_ok(), "{algorithm}: {expected:?}");
        let (got, slices) = sliced(&mut Planner::new(), &query, 50);
        assert!(slices > 10, "{algorithm}: {slices} slices");
        assert_eq!(got, expected, "{algorithm}");
    }
    // A node budget is counted over all slices: on the maze, every planner
    // runs out of it after several slices, as it does run whole.
    let (text, _) = map("maze512-1-0");
    let maze = Grid::from_movingai(&text).unwrap();
    let budget = 500;
    for algorithm in Algorithm::ALL {
        let options = PlanOptions {
            node_budget: Some(budget),
            ..PlanOptions::with_algorithm(algorithm)
        };
        let query = Query {
            grid: &maze,
            start: DVec2::new(1.5, 1.5),
            goal: DVec2::new(510.5, 510.5),
            options: &options,
            cancel: None,
            costs: None,
            mesh: None,
        };
        let expected = whole(&query);
        assert!(
            matches!(expected, Err(PlanError::BudgetExhausted { stats }) if stats.expanded >= budget),
            "{algorithm}: {expected:?}"
        );
        let slice = 64;
        let (got, slices) = sliced(&mut Planner::new(), &query, slice);
        assert!(slices > budget / slice, "{algorithm}: {slices} slices");
        assert_eq!(got, expected, "{algorithm}");
    }
}

#[test]
fn a_paused_search_is_cancelled_and_a_new_query_drops_it() {
    let (text, _) = map("maze512-1-0");
    let grid = Grid::from_movingai(&text).unwrap();
    let (start, goal) = (DVec2::new(1.5, 1.5), DVec2::new(510.5, 510.5));
    let cancel = AtomicBool::new(false);
    let options = PlanOptions::default();
    let query = Query {
        grid: &grid,
        start,
        goal,
        options: &options,
        cancel: Some(&cancel),
        costs: None,
        mesh: None,
    };
    let mut planner = Planner::new();
    assert!(matches!(
        planner.plan_slice(&query, None, false, Some(10)),
        Step::Paused
    ));
    cancel.store(true, Ordering::Relaxed);
    // The flag is read every 1024 expansions.
    assert!(matches!(
        planner.plan_slice(&query, None, true, Some(2048)),
        Step::Done(Err(PlanError::Cancelled))
    ));
    // Nothing is paused any more: `resume` starts afresh.
    cancel.store(false, Ordering::Relaxed);
    let fresh = whole(&query);
    let (got, _) = sliced(&mut planner, &query, 100_000);
    assert_eq!(got, fresh);
    // A query that does not resume replaces the paused one.
    assert!(matches!(
        planner.plan_slice(&query, None, false, Some(10)),
        Step::Paused
    ));
    let other = Query {
        goal: DVec2::new(3.5, 1.5),
        ..query
    };
    let Step::Done(near) = planner.plan_slice(&other, None, false, None) else {
        panic!("no slice limit");
    };
    assert_eq!(near, whole(&other));
    let Step::Done(again) = planner.plan_slice(&query, None, true, None) else {
        panic!("no slice limit");
    };
    assert_eq!(again, fresh);
}

#[test]
fn polyanya_builds_its_mesh_in_slices_too() {
    let (text, _) = map("maze512-1-0");
    let grid = Grid::from_movingai(&text).unwrap();
    let options = PlanOptions::with_algorithm(Algorithm::Polyanya);
    let cancel = AtomicBool::new(false);
    let query = Query {
        grid: &grid,
        start: DVec2::new(1.5, 1.5),
        goal: DVec2::new(510.5, 510.5),
        options: &options,
        cancel: Some(&cancel),
        costs: None,
        mesh: None,
    };
    let expected = whole(&query);
    assert!(expected.is_ok());
    // A fresh planner builds the mesh of the maze's 64 chunks a chunk or
    // so a slice: nothing of it in one go.
    let mut planner = Planner::new();
    assert!(matches!(
        planner.plan_slice(&query, None, false, Some(200)),
        Step::Paused
    ));
    assert!(planner.mesh().is_none(), "the mesh is not built yet");
    let mut slices = 1;
    let mut got = None;
    while got.is_none() {
        slices += 1;
        if let Step::Done(answer) = planner.plan_slice(&query, None, true, Some(200)) {
            got = Some(answer);
        }
    }
    assert_eq!(got.unwrap(), expected);
    let mesh = planner.mesh().expect("built");
    assert!(slices > mesh.chunk_count(), "{slices} slices");
    // The next query on the grid finds the mesh built.
    let near = Query {
        goal: DVec2::new(5.5, 1.5),
        ..query
    };
    let (answer, slices) = sliced(&mut planner, &near, 100_000);
    assert_eq!(slices, 1);
    assert_eq!(answer, whole(&near));
    // A cancelled search stops while building a mesh too; the mesh goes on
    // with the next query.
    let mut planner = Planner::new();
    assert!(matches!(
        planner.plan_slice(&query, None, false, Some(200)),
        Step::Paused
    ));
    cancel.store(true, Ordering::Relaxed);
    assert!(matches!(
        planner.plan_slice(&query, None, true, Some(200)),
        Step::Done(Err(PlanError::Cancelled))
    ));
    cancel.store(false, Ordering::Relaxed);
    let (answer, _) = sliced(&mut planner, &query, 200);
    assert_eq!(answer, expected);
}
