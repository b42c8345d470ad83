//! The random-query loop the property tests share: generate grids and
//! queries, plan, validate every path, compare lengths with the reference.

use bevy_anyangle::prelude::*;

use super::generate::{Family, Query, QueryMix, Rng, grid_of, random_grid};
use super::{Expect, Reference, close};

/// What to require of path lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optimality {
    /// Only validity.
    Valid,
    /// Never shorter than the any-angle optimum (any valid path is).
    AtLeastOptimum,
    /// Equal to the any-angle optimum (Anya).
    Optimum,
    /// Equal to the 8-connected optimum (A*), and never shorter than the
    /// any-angle optimum.
    GridOptimum,
}

/// One random run.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// The planner.
    pub algorithm: Algorithm,
    /// What to require of lengths.
    pub optimality: Optimality,
    /// Seed of the whole run.
    pub seed: u64,
    /// How many grids.
    pub grids: usize,
    /// Queries per grid.
    pub queries_per_grid: usize,
    /// Largest side of a grid.
    pub max_side: i64,
    /// Only grids of this family (`None`: every family).
    pub family: Option<Family>,
    /// How endpoints are drawn.
    pub mix: QueryMix,
    /// `PlanOptions::heuristic_weight` (1 keeps A* optimal).
    pub heuristic_weight: f64,
}

/// What a run saw (for coverage assertions).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Queries planned and checked.
    pub queries: usize,
    /// Paths that reached the goal.
    pub found: usize,
    /// Fallback paths.
    pub fallback: usize,
    /// Paths whose start was moved.
    pub moved: usize,
    /// Queries with an endpoint on a double corner.
    pub double_corner_ends: usize,
    /// Lengths compared with an optimum.
    pub compared: usize,
    /// Paths exactly as long as the any-angle optimum.
    pub optimal: usize,
    /// Sum of relative excess over the any-angle optimum.
    pub excess: f64,
    /// Queries also planned with `FallbackPolicy::Fail`.
    pub fail_policy_checked: usize,
    /// A* lengths compared with the 8-connected optimum.
    pub grid_compared: usize,
    /// Queries planned again with a fresh `Planner`.
    pub fresh_planner_checked: usize,
}

/// Runs the queries; panics with a reproducible report (grid, query, path)
/// if any check fails.
pub fn run(r: Run) -> Tally {
    let mut rng = Rng::new(r.seed);
    let mut planner = Planner::new();
    let spec = Spec::new(r.algorithm, r.optimality, r.heuristic_weight);
    let mut tally = Tally::default();
    let mut failures: Vec<String> = Vec::new();
    let mut failure_count = 0;
    for grid_index in 0..r.grids {
        let tg = match r.family {
            None => random_grid(&mut rng, r.max_side),
            Some(family) => {
                let (w, h) = (rng.range(3, r.max_side), rng.range(3, r.max_side));
                grid_of(&mut rng, family, w, h)
            }
        };
        let reference = Reference::new(&tg.grid);
        for query_index in 0..r.queries_per_grid {
            let q = super::generate::query(&mut rng, &reference, r.mix);
            let (result, checked) = plan_and_check(
                &mut planner,
                &tg.grid,
                &reference,
                &spec,
                (query_index, q),
                &mut tally,
            );
            if let Err(e) = checked {
                failure_count += 1;
                if failures.len() < 3 {
                    failures.push(reference.report(
                        &format!(
                            "{} (seed {}, grid {grid_index} of family {:?}, query {query_index}): {e}",
                            r.algorithm, r.seed, tg.family
                        ),
                        q.start,
                        q.goal,
                        &result,
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{failure_count} of {} queries failed; the first ones:\n\n{}",
        tally.queries,
        failures.join("\n")
    );
    if std::env::var_os("ANYANGLE_TEST_STATS").is_some() {
        eprintln!("{}: {tally:?}", r.algorithm);
    }
    tally
}

/// A planner and what to require of its paths.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The planner.
    pub algorithm: Algorithm,
    /// What to require of lengths.
    pub optimality: Optimality,
    /// The options every query is planned with.
    pub options: PlanOptions,
}

impl Spec {
    /// `algorithm` with the default options but `heuristic_weight`.
    #[must_use]
    pub fn new(algorithm: Algorithm, optimality: Optimality, heuristic_weight: f64) -> Self {
        Spec {
            algorithm,
            optimality,
            options: PlanOptions {
                heuristic_weight,
                ..PlanOptions::with_algorithm(algorithm)
            },
        }
    }
}

/// Plans `queries` on `grid` with `planner` (reused search memory, as in a
/// game) and checks each answer as [`run`] does. The first failure comes
/// back as a report that reproduces it.
///
/// # Errors
///
/// The report of the first query that fails a check.
pub fn check_queries(
    planner: &mut Planner,
    grid: &Grid,
    reference: &Reference,
    spec: &Spec,
    queries: &[Query],
    tally: &mut Tally,
) -> Result<(), String> {
    for (query_index, &q) in queries.iter().enumerate() {
        let (result, checked) =
            plan_and_check(planner, grid, reference, spec, (query_index, q), tally);
        if let Err(e) = checked {
            return Err(reference.report(
                &format!("{} (query {query_index}): {e}", spec.algorithm),
                q.start,
                q.goal,
                &result,
            ));
        }
    }
    Ok(())
}

/// Plans one query and checks the answer: [`check_query`], then for some
/// queries (every fallback, every eighth) the same query with
/// `FallbackPolicy::Fail`, and for every fourth a fresh planner's answer.
/// Returns the planner's answer and the verdict.
pub fn plan_and_check(
    planner: &mut Planner,
    grid: &Grid,
    reference: &Reference,
    spec: &Spec,
    (query_index, q): (usize, Query),
    tally: &mut Tally,
) -> (Result<Path, PlanError>, Result<(), String>) {
    let result = planner.plan(grid, q.start, q.goal, &spec.options);
    tally.queries += 1;
    let checked = check_query(
        reference,
        spec.algorithm,
        spec.optimality,
        (q.start, q.goal),
        &result,
        tally,
    )
    .and_then(|()| {
        let Ok(path) = &result else { return Ok(()) };
        if path.is_fallback() || query_index % 8 == 0 {
            tally.fail_policy_checked += 1;
            let fail_options = PlanOptions {
                fallback: FallbackPolicy::Fail,
                ..spec.options
            };
            check_fail_policy(planner, grid, q.start, q.goal, path, &fail_options)
        } else {
            Ok(())
        }
    })
    .and_then(|()| {
        // Reused search memory must not leak into a query: a fresh
        // planner gives the same answer.
        if query_index % 4 != 1 {
            return Ok(());
        }
        tally.fresh_planner_checked += 1;
        let fresh = Planner::new().plan(grid, q.start, q.goal, &spec.options);
        if same_answer(&fresh, &result) {
            Ok(())
        } else {
            Err(format!("a fresh planner answers differently: {fresh:?}"))
        }
    });
    (result, checked)
}

/// Whether two answers agree: the same waypoints and kind, or the same error.
#[must_use]
pub fn same_answer(a: &Result<Path, PlanError>, b: &Result<Path, PlanError>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => a.waypoints == b.waypoints && a.kind == b.kind,
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

/// Checks one planner result for the query `(start, goal)`: the error if
/// the grid has no free cell, else a valid path (per [`Reference::validate`])
/// whose length meets `optimality`. Counts what it saw in `tally`.
///
/// # Errors
///
/// What is wrong, in words.
pub fn check_query(
    reference: &Reference,
    algorithm: Algorithm,
    optimality: Optimality,
    (start, goal): (DVec2, DVec2),
    result: &Result<Path, PlanError>,
    tally: &mut Tally,
) -> Result<(), String> {
    let expect = Expect::for_algorithm(algorithm);
    let any_free =
        (0..reference.height()).any(|y| (0..reference.width()).any(|x| reference.free(x, y)));
    if !any_free {
        return match result {
            Err(PlanError::NoFreeCell) => Ok(()),
            other => Err(format!(
                "the grid has no free cell: expected Err(NoFreeCell), got {other:?}"
            )),
        };
    }
    let path = match result {
        Ok(p) => p,
        Err(e) => return Err(format!("planning failed: {e:?}")),
    };
    reference.validate(start, goal, path, expect)?;
    if path.is_fallback() {
        tally.fallback += 1;
    } else {
        tally.found += 1;
    }
    if path.start_moved_from.is_some() {
        tally.moved += 1;
    }
    if reference.on_double_corner(path.start()) || reference.on_double_corner(path.end()) {
        tally.double_corner_ends += 1;
    }
    if optimality == Optimality::Valid {
        return Ok(());
    }
    let optimum = reference
        .optimum(path.start(), path.end())
        .ok_or("the reference finds no path between the path's own ends")?;
    tally.compared += 1;
    if close(path.length, optimum) {
        tally.optimal += 1;
    }
    tally.excess += (path.length - optimum) / optimum.max(1e-300);
    match optimality {
        Optimality::Valid => {}
        Optimality::AtLeastOptimum => {
            if path.length < optimum && !close(path.length, optimum) {
                return Err(format!(
                    "the path ({}) is shorter than the optimum ({optimum})",
                    path.length
                ));
            }
        }
        Optimality::Optimum => {
            if !close(path.length, optimum) {
                return Err(format!(
                    "the path is {} long but the optimum is {optimum}",
                    path.length
                ));
            }
        }
        Optimality::GridOptimum => {
            if path.length < optimum && !close(path.length, optimum) {
                return Err(format!(
                    "the path ({}) is shorter than the any-angle optimum ({optimum})",
                    path.length
                ));
            }
            let grid = reference
                .grid_optimum(path.start(), path.end())
                .ok_or("the reference finds no 8-connected path between the path's own ends")?;
            tally.grid_compared += 1;
            if !close(path.length, grid) {
                return Err(format!(
                    "the A* path is {} long but the 8-connected optimum is {grid}",
                    path.length
                ));
            }
            if grid < optimum && !close(grid, optimum) {
                return Err(format!(
                    "reference: 8-connected optimum {grid} below any-angle optimum {optimum}"
                ));
            }
        }
    }
    Ok(())
}

/// With `FallbackPolicy::Fail`: the same path when the goal is reachable,
/// `Unreachable` naming the fallback target otherwise.
fn check_fail_policy(
    planner: &mut Planner,
    grid: &Grid,
    start: DVec2,
    goal: DVec2,
    path: &Path,
    options: &PlanOptions,
) -> Result<(), String> {
    let again = planner.plan(grid, start, goal, options);
    match (path.is_fallback(), again) {
        (true, Err(PlanError::Unreachable { closest })) if closest == path.end() => Ok(()),
        (false, Ok(p)) if p.waypoints == path.waypoints && p.kind == path.kind => Ok(()),
        (fallback, other) => Err(format!(
            "with FallbackPolicy::Fail (the default policy gave a {} path ending at {:?}) the planner returned {other:?}",
            if fallback { "fallback" } else { "found" },
            path.end()
        )),
    }
}
