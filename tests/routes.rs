//! Every route of the one query (grid, eroded grid, point mesh, mesh for a
//! radius, terrain costs, one goal for many starts) gives the same answer
//! whole, in slices and traced, and gives up once its cancel flag is
//! raised; the searches over a mesh's corners honour the cancel flag and
//! the heuristic weight. A `PlanTask` gives the planner's answer step by
//! step, and a traced search returns the same path and records what it
//! expanded. Through the public API only.

use core::sync::atomic::AtomicBool;

use bevy_math::{DVec2, UVec2};

use bevy_anyangle::clearance::{Clearance, erode};
use bevy_anyangle::grid::{Grid, Scenario};
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::search::{
    Algorithm, Path, PathQuery, PlanError, PlanOptions, Planner, SearchSpace, SearchTrace,
};
use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};

fn map(name: &str) -> (String, Scenario) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps");
    let text = std::fs::read_to_string(format!("{dir}/{name}.map")).unwrap();
    let scen = std::fs::read_to_string(format!("{dir}/{name}.map.scen")).unwrap();
    (text, Scenario::parse(&scen).unwrap())
}

fn centre(c: UVec2) -> DVec2 {
    DVec2::new(f64::from(c.x) + 0.5, f64::from(c.y) + 0.5)
}

/// Runs `query` to its end in slices of `slice` expansions on a fresh
/// planner; returns the answer and how many slices it took.
fn sliced(query: &PathQuery<'_>, slice: u64) -> (Result<Path, PlanError>, u64) {
    let mut planner = Planner::new();
    let mut slices = 0;
    loop {
        slices += 1;
        if let Some(answer) = planner.step(query, slices == 1, slice, None) {
            return (answer, slices);
        }
    }
}

/// The spaces of one map: its grid, the grid eroded for a clearance, its
/// point mesh, its mesh for a radius, and the grid under a profile whose
/// costs differ (swamp at 3).
struct Spaces {
    grid: Grid,
    eroded: Grid,
    clearance: Clearance,
    mesh: NavMesh,
    disc: NavMesh,
    terrain: TerrainMap,
    profile: Profile,
    costed: Grid,
}

impl Spaces {
    fn new(text: &str) -> Self {
        let grid = Grid::from_movingai(text).unwrap();
        let clearance = Clearance::from_radius(0.5).unwrap();
        let mut terrain = TerrainMap::from_movingai(text).unwrap();
        // A band of swamp across the map.
        for y in 0..terrain.height() {
            for x in 0..terrain.width() {
                if x % 16 < 5 && terrain.get(i64::from(x), i64::from(y)) == Some(Terrain::GROUND) {
                    terrain.set(UVec2::new(x, y), Terrain::SWAMP).unwrap();
                }
            }
        }
        let profile = Profile::default().with(Terrain::SWAMP, 3.0).unwrap();
        Spaces {
            eroded: erode(&grid, clearance),
            clearance,
            mesh: NavMesh::build(&grid),
            disc: NavMesh::with_radius(&grid, 0.4).unwrap(),
            costed: terrain.grid(&profile),
            terrain,
            profile,
            grid,
        }
    }

    /// Every route's query from `s` to `t` with `algorithm` (those that
    /// take it: costs refuse Anya and Polyanya).
    fn queries(
        &self,
        s: DVec2,
        t: DVec2,
        algorithm: Algorithm,
    ) -> Vec<(&'static str, PathQuery<'_>)> {
        let q = |space| PathQuery::new(space, s, t).with_algorithm(algorithm);
        let mut out = vec![
            ("grid", q(SearchSpace::Grid(&self.grid))),
            (
                "eroded",
                q(SearchSpace::Eroded {
                    base: &self.grid,
                    eroded: &self.eroded,
                    clearance: self.clearance,
                }),
            ),
            ("mesh", q(SearchSpace::Mesh(&self.mesh))),
            ("radius mesh", q(SearchSpace::Mesh(&self.disc))),
        ];
        if !matches!(algorithm, Algorithm::Anya | Algorithm::Polyanya) {
            out.push((
                "costs",
                q(SearchSpace::Grid(&self.costed)).with_costs(&self.terrain, &self.profile),
            ));
        }
        out
    }
}

#[test]
fn every_route_answers_the_same_whole_in_slices_and_traced() {
    let mut paused = 0;
    for name in ["arena", "AR0011SR", "den520d"] {
        let (text, scen) = map(name);
        let spaces = Spaces::new(&text);
        let step = (scen.entries.len() / 6).max(1);
        for entry in scen.entries.iter().step_by(step).take(6) {
            let (s, t) = (centre(entry.start), centre(entry.goal));
            for algorithm in [
                Algorithm::Anya,
                Algorithm::Polyanya,
                Algorithm::LazyTheta,
                Algorithm::AStar,
                Algorithm::AStarSmoothed,
            ] {
                for (route, query) in spaces.queries(s, t, algorithm) {
                    let whole = Planner::new().find(&query);
                    let what = format!("{name} {s} -> {t}, {algorithm}, {route}");
                    assert!(
                        !matches!(whole, Err(PlanError::SearchFailed { .. })),
                        "{what}: {whole:?}"
                    );
                    for slice in [1, 37, 1_000] {
                        let (answer, slices) = sliced(&query, slice);
                        assert_eq!(answer, whole, "{what}, slices of {slice}");
                        paused += u64::from(slices > 1);
                    }
                    let mut trace = SearchTrace::default();
                    let traced = Planner::new().find_traced(&query, &mut trace);
                    assert_eq!(traced, whole, "{what}, traced");
                }
            }
        }
    }
    assert!(paused > 200, "only {paused} sliced runs paused");
}

#[test]
fn every_route_gives_up_once_cancelled() {
    let (text, scen) = map("den520d");
    let spaces = Spaces::new(&text);
    let cancel = AtomicBool::new(true);
    // The scenario's last (longest) queries: none is a straight line.
    let mut cancelled = 0;
    for entry in scen.entries.iter().rev().take(3) {
        let (s, t) = (centre(entry.start), centre(entry.goal));
        for algorithm in [Algorithm::Anya, Algorithm::LazyTheta, Algorithm::AStar] {
            for (route, query) in spaces.queries(s, t, algorithm) {
                let answer = Planner::new().find(&query.with_cancel(&cancel));
                assert_eq!(
                    answer,
                    Err(PlanError::Cancelled),
                    "{s} -> {t}, {algorithm}, {route}"
                );
                cancelled += 1;
            }
        }
    }
    assert_eq!(cancelled, 3 * (4 + 5 + 5));
}

#[test]
fn searches_over_a_mesh_s_corners_honour_the_heuristic_weight() {
    let (text, scen) = map("den520d");
    let spaces = Spaces::new(&text);
    let mut fewer = 0;
    for entry in scen.entries.iter().rev().take(5) {
        let (s, t) = (centre(entry.start), centre(entry.goal));
        for algorithm in [Algorithm::LazyTheta, Algorithm::AStar] {
            let query = PathQuery::new(&spaces.disc, s, t).with_algorithm(algorithm);
            let mut heavy = query;
            heavy.options.heuristic_weight = 3.0;
            let plain = Planner::new().find(&query).unwrap();
            let weighted = Planner::new().find(&heavy).unwrap();
            // Weighted: never shorter, and found with fewer expansions.
            assert!(
                weighted.length >= plain.length - 1e-9,
                "{s} -> {t}, {algorithm}"
            );
            assert!(
                weighted.stats.expanded <= plain.stats.expanded,
                "{s} -> {t}, {algorithm}: {} > {}",
                weighted.stats.expanded,
                plain.stats.expanded
            );
            fewer += usize::from(weighted.stats.expanded < plain.stats.expanded);
        }
    }
    assert!(
        fewer >= 8,
        "the weight cut the expansions of only {fewer} of 10 searches"
    );
}

#[test]
fn one_goal_for_many_starts_answers_the_same_whole_and_in_slices() {
    let mut paused = 0;
    for name in ["arena", "den520d"] {
        let (text, scen) = map(name);
        let spaces = Spaces::new(&text);
        let goal = centre(scen.entries[scen.entries.len() / 2].goal);
        // Starts of the scenario, one inside a wall, one off the grid, one at
        // the goal.
        let mut starts: Vec<DVec2> = scen
            .entries
            .iter()
            .step_by(7)
            .take(40)
            .map(|e| centre(e.start))
            .collect();
        let wall = (0..spaces.grid.height())
            .flat_map(|y| (0..spaces.grid.width()).map(move |x| UVec2::new(x, y)))
            .find(|&c| !spaces.grid.is_free(c))
            .expect("a wall");
        starts.extend([centre(wall), DVec2::new(-3.0, 2.0), goal]);
        for mesh in [&spaces.mesh, &spaces.disc] {
            for algorithm in [Algorithm::Polyanya, Algorithm::LazyTheta] {
                let options = PlanOptions::with_algorithm(algorithm);
                let mut whole = Vec::new();
                Planner::new().plan_many_on_mesh(mesh, &starts, goal, &options, &mut whole);
                assert_eq!(whole.len(), starts.len());
                for slice in [1, 50, 10_000] {
                    let mut planner = Planner::new();
                    let mut out = Vec::new();
                    let mut slices = 0;
                    while !planner.step_many(
                        mesh,
                        (&starts, goal),
                        &options,
                        slices == 0,
                        slice,
                        &mut out,
                    ) {
                        slices += 1;
                    }
                    assert_eq!(
                        out,
                        whole,
                        "{name}, radius {}, {algorithm}, slices of {slice}",
                        mesh.radius()
                    );
                    paused += usize::from(slices > 0);
                }
            }
        }
    }
    assert!(paused >= 16, "only {paused} sliced runs paused");
}

#[test]
fn a_plan_task_gives_the_planners_answer_and_hands_its_memory_on() {
    use std::sync::Arc;

    use bevy_anyangle::search::PlanTask;

    let (text, scen) = map("den520d");
    let grid = Arc::new(Grid::from_movingai(&text).unwrap());
    let mut planner = Some(Planner::new());
    let mut steps = 0;
    for e in scen.entries.iter().step_by(97) {
        for algorithm in Algorithm::ALL {
            let options = PlanOptions::with_algorithm(algorithm);
            let (start, goal) = (centre(e.start), centre(e.goal));
            let expected = bevy_anyangle::search::plan(&grid, start, goal, &options);
            let mut task = PlanTask::with_planner(
                planner.take().unwrap(),
                Arc::clone(&grid),
                start,
                goal,
                options,
            );
            let answer = loop {
                steps += 1;
                // (A step of 0 expansions runs one.)
                let slice = if steps % 3 == 0 { 0 } else { 25 };
                if let Some(answer) = task.step(slice) {
                    break answer;
                }
                assert!(!task.is_done());
            };
            assert_eq!(answer, expected, "{algorithm} {e:?}");
            assert!(task.is_done());
            assert_eq!(task.step(25), None, "nothing runs after the answer");
            planner = Some(task.into_planner());
        }
    }
    assert!(steps > 1000, "{steps} steps");
}

/// Search traces: what a traced search expanded, and the path it returns.
mod traces {
    use bevy_math::DVec2;

    use bevy_anyangle::grid::Grid;
    use bevy_anyangle::los::line_of_sight;
    use bevy_anyangle::search::{Algorithm, PlanOptions, Planner, SearchTrace};

    fn den520d() -> Grid {
        Grid::from_movingai(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/maps/den520d.map"
        )))
        .unwrap()
    }

    /// Queries across den520d that need a search (start and goal do not see
    /// each other).
    /// (Scenario queries of the map's benchmark; the first two at cell
    /// centres, the third at vertices.)
    const QUERIES: [((f64, f64), (f64, f64)); 3] = [
        ((244.5, 2.5), (18.5, 204.5)),
        ((101.5, 147.5), (162.5, 23.5)),
        ((100.0, 215.0), (71.0, 81.0)),
    ];

    #[test]
    fn a_traced_search_returns_the_same_path_and_records_every_expansion() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        for algorithm in Algorithm::ALL {
            let options = PlanOptions::with_algorithm(algorithm);
            for ((sx, sy), (gx, gy)) in QUERIES {
                let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
                assert!(!line_of_sight(&grid, s, g), "{s} -> {g} needs a search");
                let plain = planner.plan(&grid, s, g, &options).unwrap();
                let traced = planner
                    .plan_traced(&grid, s, g, &options, &mut trace)
                    .unwrap();
                assert_eq!(plain, traced, "{algorithm}: {s} -> {g}");
                assert_eq!(trace.algorithm, Some(algorithm));
                assert!(!trace.truncated);
                let expanded = traced.stats.expanded as usize;
                assert!(expanded > 0);
                if algorithm == Algorithm::Anya {
                    assert_eq!(trace.intervals.len(), expanded, "{s} -> {g}");
                    assert!(trace.points.is_empty());
                } else {
                    assert_eq!(trace.points.len(), expanded, "{algorithm}: {s} -> {g}");
                    assert!(trace.intervals.is_empty());
                    // The search starts by expanding the start.
                    assert_eq!(trace.points[0].point, s);
                    assert_eq!(trace.points[0].parent, s);
                }
            }
        }
    }

    #[test]
    fn expanded_points_are_reached_from_their_parents() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        let ((sx, sy), (gx, gy)) = QUERIES[0];
        let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
        for algorithm in [Algorithm::AStar, Algorithm::LazyTheta] {
            let options = PlanOptions::with_algorithm(algorithm);
            planner
                .plan_traced(&grid, s, g, &options, &mut trace)
                .unwrap();
            for e in &trace.points {
                assert!(grid.contains_point(e.point), "{e:?}");
                // A* moves one vertex at a time; Lazy Theta* expands a node
                // only with a parent that sees it.
                if algorithm == Algorithm::AStar && e.point != s {
                    let step = (e.point - e.parent).abs();
                    assert!(step.max_element() <= 1.0, "{algorithm}: {e:?}");
                }
                assert!(
                    line_of_sight(&grid, e.parent, e.point),
                    "{algorithm}: {e:?}"
                );
            }
        }
    }

    #[test]
    fn anya_intervals_lie_on_grid_lines_and_are_seen_from_their_roots() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        let options = PlanOptions::with_algorithm(Algorithm::Anya);
        let mut flat = 0;
        for ((sx, sy), (gx, gy)) in QUERIES {
            let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
            planner
                .plan_traced(&grid, s, g, &options, &mut trace)
                .unwrap();
            for i in &trace.intervals {
                assert!(i.row <= grid.height(), "{i:?}");
                assert!(
                    0.0 <= i.left && i.left <= i.right && i.right <= f64::from(grid.width()),
                    "{i:?}"
                );
                let y = f64::from(i.row);
                flat += usize::from(i.root.y == y);
                // Every point of the interval is visible from the root (with
                // a margin for the rounded ends of irrational endpoints).
                let eps = 1e-9;
                for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
                    let x = (i.left + eps) + (i.right - i.left - 2.0 * eps).max(0.0) * t;
                    let x = x.clamp(i.left, i.right);
                    assert!(
                        line_of_sight(&grid, i.root, DVec2::new(x, y)),
                        "{i:?} at x = {x}"
                    );
                }
            }
        }
        assert!(
            flat > 0,
            "flat intervals (along the root's row) are recorded too"
        );
    }

    #[test]
    fn a_full_trace_stops_recording_but_not_searching() {
        let grid = den520d();
        let mut planner = Planner::new();
        let ((sx, sy), (gx, gy)) = QUERIES[1];
        let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
        for algorithm in [Algorithm::Anya, Algorithm::LazyTheta] {
            let options = PlanOptions::with_algorithm(algorithm);
            let plain = planner.plan(&grid, s, g, &options).unwrap();
            let mut trace = SearchTrace::with_limit(10);
            let traced = planner
                .plan_traced(&grid, s, g, &options, &mut trace)
                .unwrap();
            assert_eq!(plain, traced);
            assert_eq!(trace.len(), 10);
            assert_eq!(trace.limit(), 10);
            assert!(trace.truncated);
        }
    }

    #[test]
    fn a_trace_holds_only_the_last_search() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        let ((sx, sy), (gx, gy)) = QUERIES[0];
        let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
        planner
            .plan_traced(
                &grid,
                s,
                g,
                &PlanOptions::with_algorithm(Algorithm::AStar),
                &mut trace,
            )
            .unwrap();
        assert!(!trace.points.is_empty());
        // Start and goal see each other: no search, an empty trace.
        let path = planner
            .plan_traced(
                &grid,
                s,
                s + DVec2::new(1.0, 0.0),
                &PlanOptions::with_algorithm(Algorithm::Anya),
                &mut trace,
            )
            .unwrap();
        assert_eq!(path.waypoints.len(), 2);
        assert_eq!(trace.algorithm, Some(Algorithm::Anya));
        assert!(trace.is_empty());
        assert!(!trace.truncated);
    }
}
