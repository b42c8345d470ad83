//! Every route of the one query (grid, eroded grid, point mesh, mesh for a
//! radius, terrain costs, one goal for many starts) gives the same answer
//! whole, in slices and traced, and gives up once its cancel flag is
//! raised; the searches over a mesh's corners honour the cancel flag and
//! the heuristic weight. Through the public API only.

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
