//! Headless `App` tests of the Bevy plugin: real task pools, real background
//! searches, `app.update()` loops with a bounded number of frames.

#![expect(
    clippy::float_cmp,
    reason = "exact coordinates are asserted on purpose"
)]

mod common;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use bevy_anyangle::grid::{Grid, MAX_DIMENSION};
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, MeshBuilding, NavGrid, NavPath, NavPosition, PathFailed,
    PathFailure, PathFollower, PathReady, PathRequest, PathStatus, PathfindingDiagnostics,
    PathfindingSettings, PlanReason, ProfileId, Replanning, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_math::{UVec2, Vec2, Vec3};
use bevy_transform::components::Transform;
use common::generate::walled_pocket;
use common::keeps_radius;

fn map(name: &str) -> String {
    let path = format!("{}/data/maps/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every [`PathReady`] and [`PathFailed`], in order.
#[derive(Resource, Default)]
struct EventLog {
    ready: Vec<PathReady>,
    failed: Vec<PathFailed>,
}

impl EventLog {
    fn ready_reasons(&self) -> HashMap<Entity, PlanReason> {
        self.ready.iter().map(|r| (r.entity, r.reason)).collect()
    }
}

fn app_with(nav: NavGrid) -> App {
    app_with_plugin(nav, AnyAnglePlugin::default())
}

/// An app whose agents of a radius plan on eroded grids
/// (`PathfindingSettings::radius_meshes` off).
fn app_on_eroded_grids(nav: NavGrid) -> App {
    let mut app = app_with(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .radius_meshes = false;
    app
}

fn app_with_plugin(nav: NavGrid, plugin: AnyAnglePlugin) -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), plugin))
        .insert_resource(nav)
        .insert_resource(SteeringClock::fixed(0.0))
        .init_resource::<EventLog>()
        .add_observer(|ready: On<PathReady>, mut log: ResMut<EventLog>| log.ready.push(*ready))
        .add_observer(|failed: On<PathFailed>, mut log: ResMut<EventLog>| {
            log.failed.push(failed.clone());
        });
    app.finish();
    app.cleanup();
    app
}

/// An app with `threads` search threads (`Some(0)`: searches on the main
/// thread) whose settings `set` changes.
fn app_with_threads(
    nav: NavGrid,
    threads: Option<usize>,
    set: impl FnOnce(&mut PathfindingSettings),
) -> App {
    let plugin = AnyAnglePlugin {
        search_threads: threads,
        ..AnyAnglePlugin::default()
    };
    let mut app = app_with_plugin(nav, plugin);
    set(&mut app.world_mut().resource_mut::<PathfindingSettings>());
    app
}

/// Settles `app` and reads every agent's status and path, in order, and the
/// diagnostics.
fn settled_answers(
    app: &mut App,
    agents: &[Entity],
) -> (Vec<(PathStatus, NavPath)>, PathfindingDiagnostics) {
    settle(app);
    let d = *app.world().resource::<PathfindingDiagnostics>();
    let answers = agents
        .iter()
        .map(|&e| (status(app, e), nav_path(app, e)))
        .collect();
    (answers, d)
}

/// An app whose searches on the 512 x 512 maze take tens of milliseconds
/// (Lazy Theta*, corner to corner), long enough for a test to act while one
/// runs. (Anya, the default, answers them several times faster.)
fn maze_app(nav: NavGrid) -> App {
    let mut app = app_with(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .algorithm = Algorithm::LazyTheta;
    app
}

/// Updates until `done` holds (checked after each frame); panics after
/// `max_frames`.
fn run_until(app: &mut App, max_frames: usize, mut done: impl FnMut(&mut World) -> bool) -> usize {
    for frame in 1..=max_frames {
        app.update();
        if done(app.world_mut()) {
            return frame;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("condition not reached in {max_frames} frames");
}

/// Updates until no agent waits for a search and none is running.
fn settle(app: &mut App) -> usize {
    run_until(app, 20_000, |world| {
        let busy = world
            .query::<&PathStatus>()
            .iter(world)
            .any(PathStatus::is_busy);
        let replanning = world
            .query_filtered::<(), With<Replanning>>()
            .iter(world)
            .next()
            .is_some();
        let d = world.resource::<PathfindingDiagnostics>();
        !busy && !replanning && d.in_flight == 0 && d.queued == 0
    })
}

fn status(app: &App, e: Entity) -> PathStatus {
    app.world().get::<PathStatus>(e).unwrap().clone()
}

fn nav_path(app: &App, e: Entity) -> NavPath {
    app.world().get::<NavPath>(e).unwrap().clone()
}

/// Checks `path` against the grid with the rules of `SPEC.md`, after
/// converting its world waypoints back to grid coordinates.
fn assert_valid(nav: &NavGrid, path: &NavPath, start: Vec2, goal: Option<Vec2>) {
    assert_valid_within(nav, path, start, goal, 1e-9);
}

/// [`assert_valid`], the world waypoints mapping back to the grid's within
/// `rounding` (cells): the `f32` rounding of waypoints off the lattice, as
/// the paths of agents of a radius have.
fn assert_valid_within(
    nav: &NavGrid,
    path: &NavPath,
    start: Vec2,
    goal: Option<Vec2>,
    rounding: f64,
) {
    assert!(!path.is_empty(), "no path");
    assert_eq!(path.waypoints.len(), path.grid_waypoints.len());
    let grid_pts: Vec<DVec2> = path.waypoints.iter().map(|&w| nav.to_grid(w)).collect();
    for (p, q) in grid_pts.iter().zip(&path.grid_waypoints) {
        assert!(
            p.distance(*q) < rounding,
            "world waypoint {p} does not map back to {q}"
        );
    }
    assert!(
        path.waypoints[0].distance(start) < 1e-4,
        "path starts at {} not {start}",
        path.waypoints[0]
    );
    if let Some(goal) = goal {
        assert!(
            path.end().unwrap().distance(goal) < 1e-4,
            "path ends at {:?} not {goal}",
            path.end()
        );
    }
    for w in grid_pts.windows(2) {
        assert!(
            line_of_sight(nav.grid(), w[0], w[1]),
            "segment {} - {} is not visible",
            w[0],
            w[1]
        );
    }
    let length: f32 = path.waypoints.windows(2).map(|w| w[0].distance(w[1])).sum();
    assert!(
        (length - path.length).abs() < 1e-3 * (1.0 + length),
        "length {} vs {length}",
        path.length
    );
}

/// A deterministic pseudo-random generator (`SplitMix64`).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

/// `n` (start, goal) cell pairs in the grid's largest region.
fn random_pairs(grid: &Grid, n: usize, seed: u64) -> Vec<(UVec2, UVec2)> {
    let mut counts: HashMap<_, usize> = HashMap::new();
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            if let Some(r) = grid.region(i64::from(x), i64::from(y)) {
                *counts.entry(r).or_default() += 1;
            }
        }
    }
    let big = counts.into_iter().max_by_key(|&(_, c)| c).unwrap().0;
    let mut rng = Rng(seed);
    let mut cell = || loop {
        let c = UVec2::new(rng.below(grid.width()), rng.below(grid.height()));
        if grid.region(i64::from(c.x), i64::from(c.y)) == Some(big) {
            return c;
        }
    };
    (0..n).map(|_| (cell(), cell())).collect()
}

/// The arena map, 2 world units per cell, centred on the origin.
fn arena() -> NavGrid {
    NavGrid::from_movingai(
        &map("arena.map"),
        GridTransform::new(Vec2::new(-49.0, -49.0), 2.0).unwrap(),
    )
    .unwrap()
}

/// Spawns agents at cell centres, standing still.
fn spawn_agents(app: &mut App, pairs: &[(UVec2, UVec2)]) -> Vec<(Entity, Vec2, Vec2)> {
    let nav = app.world().resource::<NavGrid>().clone();
    spawn_on(app.world_mut(), &nav, pairs)
}

/// Spawns agents at the centres of `nav`'s cells, standing still.
fn spawn_on(
    world: &mut World,
    nav: &NavGrid,
    pairs: &[(UVec2, UVec2)],
) -> Vec<(Entity, Vec2, Vec2)> {
    pairs
        .iter()
        .map(|&(s, g)| {
            let (start, goal) = (nav.cell_center(s), nav.cell_center(g));
            let e = world
                .spawn((NavPosition(start), PathRequest::to(goal)))
                .id();
            (e, start, goal)
        })
        .collect()
}

/// Without search threads (as in the browser), searches run on the main
/// thread in slices: every agent gets the path the threads give it, agents
/// with a radius, another planner and unreachable goals included.
#[test]
fn searches_on_the_main_thread_give_the_paths_search_threads_give() {
    let grid = Grid::from_movingai(&map("AR0011SR.map")).unwrap();
    let pairs = random_pairs(&grid, 300, 11);
    let run = |threads: Option<usize>, meshes: bool| {
        let nav = NavGrid::new(grid.clone(), GridTransform::default());
        let mut app = app_with_threads(nav.clone(), threads, |s| s.radius_meshes = meshes);
        let world = app.world_mut();
        let agents: Vec<Entity> = pairs
            .iter()
            .enumerate()
            .map(|(i, &(s, g))| {
                let request = match i % 4 {
                    0 => PathRequest::to(nav.cell_center(g)).with_radius(0.6),
                    1 => PathRequest::to(nav.cell_center(g)).with_algorithm(Algorithm::LazyTheta),
                    // A goal in the wall around the map: a fallback path.
                    2 => PathRequest::to(Vec2::new(-3.5, nav.cell_center(g).y)),
                    _ => PathRequest::to(nav.cell_center(g)),
                };
                world.spawn((NavPosition(nav.cell_center(s)), request)).id()
            })
            .collect();
        settled_answers(&mut app, &agents)
    };
    // Agents of a radius on eroded grids, then on meshes.
    for meshes in [false, true] {
        let (threaded, d) = run(Some(1), meshes);
        assert_eq!(d.search_threads, 1);
        let (main_thread, d) = run(Some(0), meshes);
        assert_eq!(d.search_threads, 0);
        assert_eq!(d.searches_finished, 300, "{d:?}");
        for (i, (a, b)) in threaded.iter().zip(&main_thread).enumerate() {
            assert!(!a.1.is_empty(), "agent {i}: {a:?}");
            assert_eq!(a, b, "agent {i}, meshes {meshes}");
        }
        assert!(threaded.iter().any(|(s, _)| *s == PathStatus::Fallback));
    }
}

/// Meshes built on demand (chunk by chunk as searches reach them) give
/// every agent the answer a mesh built whole gives: the same status and a
/// path as long, on search threads and on the main thread, for Polyanya's
/// point agents and agents of a radius, goals in walls and crowds sharing
/// a search included.
#[test]
fn meshes_built_on_demand_answer_as_meshes_built_whole() {
    let grid = Grid::from_movingai(&map("AR0011SR.map")).unwrap();
    let pairs = random_pairs(&grid, 300, 12);
    let rally = random_pairs(&grid, 1, 13)[0].0;
    let run = |threads: Option<usize>, building: MeshBuilding| {
        let nav = NavGrid::new(grid.clone(), GridTransform::default());
        let mut app = app_with_threads(nav.clone(), threads, |s| s.mesh_building = building);
        let world = app.world_mut();
        let agents: Vec<Entity> = pairs
            .iter()
            .enumerate()
            .map(|(i, &(s, g))| {
                let goal = nav.cell_center(g);
                let in_wall = Vec2::new(-3.5, goal.y);
                let request = match i % 6 {
                    0 => PathRequest::to(goal).with_radius(0.6),
                    1 => PathRequest::to(in_wall).with_radius(0.6),
                    2 => PathRequest::to(goal).with_algorithm(Algorithm::Polyanya),
                    3 => PathRequest::to(in_wall).with_algorithm(Algorithm::Polyanya),
                    // A crowd heading for one point: shared searches.
                    4 => PathRequest::to(nav.cell_center(rally)).with_radius(0.6),
                    _ => {
                        PathRequest::to(nav.cell_center(rally)).with_algorithm(Algorithm::Polyanya)
                    }
                };
                world.spawn((NavPosition(nav.cell_center(s)), request)).id()
            })
            .collect();
        let (answers, _) = settled_answers(&mut app, &agents);
        // (The meshes' bytes are measured every 64 frames.)
        for _ in 0..64 {
            app.update();
        }
        (answers, *app.world().resource::<PathfindingDiagnostics>())
    };
    let (whole, d) = run(Some(1), MeshBuilding::Whole);
    assert!(d.shared_searches > 0, "{d:?}");
    assert!(whole.iter().any(|(s, _)| *s == PathStatus::Fallback));
    for threads in [Some(1), Some(0)] {
        let (lazy, d) = run(threads, MeshBuilding::OnDemand);
        assert!(d.shared_searches > 0, "{d:?}");
        assert!(d.mesh_bytes > 0, "{d:?}");
        for (i, (a, b)) in lazy.iter().zip(&whole).enumerate() {
            assert_eq!(a.0, b.0, "agent {i}, {threads:?}: {a:?} against {b:?}");
            let (x, y) = (grid_length(&a.1), grid_length(&b.1));
            assert!(
                (x - y).abs() <= 1e-9 * y.max(1.0),
                "agent {i}, {threads:?}: {x} against {y}"
            );
        }
    }
}

/// The length of a path's grid waypoints, in cells.
fn grid_length(path: &NavPath) -> f64 {
    path.grid_waypoints
        .windows(2)
        .map(|w| w[0].distance(w[1]))
        .sum()
}

/// Hundreds of agents sent to one goal (and others to a goal in a wall,
/// which falls back), some of radius 0.4, are answered by a few searches
/// shared among them, on search threads and on the main thread, and each
/// gets a path exactly as long as its own search gives (a point agent's:
/// Anya's), with the same status.
#[test]
fn agents_with_one_goal_share_searches_and_get_paths_as_long_as_their_own() {
    let grid = Grid::from_movingai(&map("AR0011SR.map")).unwrap();
    let nav = NavGrid::new(grid.clone(), GridTransform::default());
    let pairs = random_pairs(&grid, 500, 31);
    let goal = nav.cell_center(pairs[0].1);
    // A goal in the wall around the map: fallback paths, shared too.
    let walled = Vec2::new(-3.5, goal.y);
    let mut rng = Rng(5);
    // Agents of radius 0.4 among them, on the mesh for their radius.
    let starts: Vec<(Vec2, Vec2, f32)> = pairs
        .iter()
        .enumerate()
        .map(|(i, &(s, _))| {
            // Cell centres and points off them.
            let off = Vec2::new(rng.below(4) as f32, rng.below(4) as f32) * 0.25 - 0.5;
            let start = nav.cell_center(s) + if i % 3 == 0 { off } else { Vec2::ZERO };
            let radius = if i % 7 == 3 { 0.4 } else { 0.0 };
            (start, if i % 5 == 4 { walled } else { goal }, radius)
        })
        .collect();
    let run = |threads: Option<usize>, shared: bool| {
        let mut app = app_with_threads(nav.clone(), threads, |s| s.shared_searches = shared);
        let agents: Vec<Entity> = starts
            .iter()
            .map(|&(start, goal, radius)| {
                let request = PathRequest::to(goal).with_radius(radius);
                app.world_mut().spawn((NavPosition(start), request)).id()
            })
            .collect();
        settled_answers(&mut app, &agents)
    };
    let (alone, d) = run(None, false);
    assert_eq!(d.shared_searches, 0);
    assert_eq!(d.searches_finished, 500, "{d:?}");
    let mut planner = Planner::new();
    for (i, ((status, path), &(start, goal, radius))) in alone.iter().zip(&starts).enumerate() {
        if radius > 0.0 {
            continue; // (compared with the shared runs below)
        }
        let own = planner
            .plan(
                &grid,
                nav.to_grid(start),
                nav.to_grid(goal),
                &PlanOptions::with_algorithm(Algorithm::Anya),
            )
            .unwrap();
        let expected = if goal == walled {
            PathStatus::Fallback
        } else {
            PathStatus::Ready
        };
        assert_eq!(*status, expected, "agent {i}");
        assert!((grid_length(path) - own.length).abs() <= 1e-9 * own.length.max(1.0));
    }
    for threads in [None, Some(0)] {
        let (shared, d) = run(threads, true);
        assert!(d.shared_searches >= 2, "{threads:?}: {d:?}");
        assert!(
            d.searches_finished <= 50,
            "{threads:?}: {} searches for 500 agents",
            d.searches_finished
        );
        for (i, (a, b)) in alone.iter().zip(&shared).enumerate() {
            assert_eq!(a.0, b.0, "agent {i} ({threads:?})");
            let (la, lb) = (grid_length(&a.1), grid_length(&b.1));
            assert!(
                (la - lb).abs() <= 1e-9 * la.max(1.0),
                "agent {i} ({threads:?}): {la} alone, {lb} shared"
            );
            assert_eq!(b.1.grid_version, nav.version());
            let (start, goal, radius) = starts[i];
            let goal = (b.0 == PathStatus::Ready).then_some(goal);
            if radius == 0.0 {
                assert_valid(&nav, &b.1, start, goal);
                continue;
            }
            // An agent of a radius closer to a wall than that starts where
            // it fits; every point of its path keeps its radius.
            let start = if b.1.start_moved {
                b.1.waypoints[0]
            } else {
                start
            };
            assert_valid_within(&nav, &b.1, start, goal, 1e-4);
            if let Err(e) = keeps_radius(&grid, &b.1.grid_waypoints, f64::from(radius)) {
                panic!("agent {i} ({threads:?}): {e}");
            }
        }
    }
}

#[test]
fn two_hundred_agents_all_get_valid_paths() {
    let mut app = app_with(arena());
    let pairs = random_pairs(app.world().resource::<NavGrid>().grid(), 200, 7);
    let agents = spawn_agents(&mut app, &pairs);
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    for &(e, start, goal) in &agents {
        assert_eq!(status(&app, e), PathStatus::Ready);
        assert_valid(&nav, &nav_path(&app, e), start, Some(goal));
    }
    let log = app.world().resource::<EventLog>();
    assert_eq!(log.ready.len(), 200, "one PathReady per agent");
    assert!(log.failed.is_empty());
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.searches_started, 200);
    assert_eq!(d.results_applied, 200);
}

/// A game may spawn agents before it adds the plugin (a level loaded
/// first, say): those agents, and the ones spawned after, are planned.
#[test]
fn agents_spawned_before_the_plugin_is_added_are_planned() {
    let nav = arena();
    let pairs = random_pairs(nav.grid(), 20, 11);
    let mut app = App::new();
    let early = spawn_on(app.world_mut(), &nav, &pairs[..10]);
    app.add_plugins((TaskPoolPlugin::default(), AnyAnglePlugin::default()))
        .insert_resource(nav.clone())
        .insert_resource(SteeringClock::fixed(0.0));
    app.finish();
    app.cleanup();
    let late = spawn_agents(&mut app, &pairs[10..]);
    settle(&mut app);
    for &(e, start, goal) in early.iter().chain(&late) {
        assert_eq!(status(&app, e), PathStatus::Ready, "{e}");
        assert_valid(&nav, &nav_path(&app, e), start, Some(goal));
    }
    // Removing a request still cancels its plan and inserting it again
    // plans afresh.
    let (e, start, goal) = early[0];
    let started = |app: &App| {
        app.world()
            .resource::<PathfindingDiagnostics>()
            .searches_started
    };
    let before = started(&app);
    app.world_mut().entity_mut(e).remove::<PathRequest>();
    app.world_mut().entity_mut(e).insert(PathRequest::to(goal));
    settle(&mut app);
    assert_eq!(started(&app), before + 1, "one new search for the request");
    assert_eq!(status(&app, e), PathStatus::Ready);
    assert_valid(&nav, &nav_path(&app, e), start, Some(goal));
}

/// `NavPath` change ticks, to check that unaffected agents are not touched.
fn path_ticks(
    app: &App,
    agents: &[(Entity, Vec2, Vec2)],
) -> HashMap<Entity, bevy_ecs::change_detection::Tick> {
    agents
        .iter()
        .map(|&(e, ..)| {
            (
                e,
                app.world()
                    .entity(e)
                    .get_ref::<NavPath>()
                    .unwrap()
                    .last_changed(),
            )
        })
        .collect()
}

#[test]
fn blocking_a_cell_replans_exactly_the_agents_whose_paths_cross_it() {
    let mut app = app_with(arena());
    let pairs = random_pairs(app.world().resource::<NavGrid>().grid(), 200, 11);
    let agents = spawn_agents(&mut app, &pairs);
    settle(&mut app);
    let before = path_ticks(&app, &agents);
    let nav = app.world().resource::<NavGrid>().clone();
    let paths: HashMap<Entity, NavPath> = agents
        .iter()
        .map(|&(e, ..)| (e, nav_path(&app, e)))
        .collect();

    // Block the free cell (no agent standing or heading there) that the most
    // paths become invalid for.
    let endpoints: HashSet<UVec2> = pairs.iter().flat_map(|&(s, g)| [s, g]).collect();
    let blocked_by = |cell: UVec2| -> HashSet<Entity> {
        let mut g = nav.grid().clone();
        g.set_free(cell, false).unwrap();
        paths
            .iter()
            .filter(|(_, p)| {
                p.grid_waypoints
                    .windows(2)
                    .any(|w| !line_of_sight(&g, w[0], w[1]))
            })
            .map(|(&e, _)| e)
            .collect()
    };
    let cell = (0..nav.grid().height())
        .flat_map(|y| (0..nav.grid().width()).map(move |x| UVec2::new(x, y)))
        .filter(|&c| nav.grid().is_free(c) && !endpoints.contains(&c))
        .step_by(3)
        .max_by_key(|&c| blocked_by(c).len())
        .unwrap();
    let expected = blocked_by(cell);
    assert!(
        expected.len() >= 3 && expected.len() < agents.len(),
        "{} agents cross {cell}",
        expected.len()
    );

    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(cell, false)
        .unwrap();
    settle(&mut app);

    let replanned = app.world().resource::<EventLog>().ready_reasons();
    assert_eq!(replanned.keys().copied().collect::<HashSet<_>>(), expected);
    assert!(replanned.values().all(|&r| r == PlanReason::PathBlocked));
    let after = path_ticks(&app, &agents);
    let nav = app.world().resource::<NavGrid>().clone();
    for &(e, start, goal) in &agents {
        if expected.contains(&e) {
            assert_valid(&nav, &nav_path(&app, e), start, Some(goal));
        } else {
            assert_eq!(
                before[&e], after[&e],
                "unaffected agent {e}'s NavPath was written"
            );
        }
        assert_eq!(status(&app, e), PathStatus::Ready);
    }
}

#[test]
fn freeing_a_wall_replans_the_agents_it_helps_and_only_them() {
    // A wall down column 20 with a gap in rows 17..20. World y is up: grid
    // row r spans world y in [19 - r, 20 - r].
    let mut picture = String::new();
    for y in 0..20 {
        for x in 0..40 {
            picture.push(if x == 20 && y < 17 { '#' } else { '.' });
        }
        picture.push('\n');
    }
    let nav = NavGrid::from_ascii(&picture, GridTransform::default()).unwrap();
    let world = |x: f32, gy: f32| Vec2::new(x, 20.0 - gy);
    let mut app = app_with(nav);
    let cases = [
        // Cross near the top: today around the wall's foot, a shortcut later.
        ("helped", world(5.5, 1.5), world(35.5, 1.5)),
        ("helped", world(4.5, 3.5), world(34.5, 2.5)),
        ("helped", world(10.5, 0.5), world(30.5, 6.5)),
        // Stay on one side: straight paths.
        ("same side", world(2.5, 5.5), world(15.5, 10.5)),
        ("same side", world(25.5, 3.5), world(38.5, 8.5)),
        // Through the gap already.
        ("gap", world(5.5, 18.5), world(35.5, 18.5)),
        // Cross low: going round the foot stays shorter.
        ("low", world(5.5, 14.5), world(35.5, 14.5)),
    ];
    let agents: Vec<_> = cases
        .iter()
        .map(|&(_, s, g)| {
            app.world_mut()
                .spawn((NavPosition(s), PathRequest::to(g)))
                .id()
        })
        .collect();
    settle(&mut app);
    let old: Vec<NavPath> = agents.iter().map(|&e| nav_path(&app, e)).collect();
    let before = path_ticks(
        &app,
        &agents
            .iter()
            .map(|&e| (e, Vec2::ZERO, Vec2::ZERO))
            .collect::<Vec<_>>(),
    );

    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(20, 1, 21, 4), true)
        .unwrap();
    settle(&mut app);

    let nav = app.world().resource::<NavGrid>().clone();
    let replanned = app.world().resource::<EventLog>().ready_reasons();
    for (i, &(kind, start, goal)) in cases.iter().enumerate() {
        let e = agents[i];
        // Would a fresh plan on the edited grid be shorter?
        let fresh = plan(
            nav.grid(),
            nav.to_grid(start),
            nav.to_grid(goal),
            &PlanOptions::default(),
        )
        .unwrap();
        let helped = (fresh.length as f32) < old[i].length - 1e-3;
        assert_eq!(
            helped,
            kind == "helped",
            "case {i} ({kind}): helped = {helped}"
        );
        assert_eq!(replanned.contains_key(&e), helped, "case {i} ({kind})");
        let now = nav_path(&app, e);
        if helped {
            assert_eq!(replanned[&e], PlanReason::Shortcut);
            assert!(
                now.length < old[i].length - 1.0,
                "case {i}: {} -> {}",
                old[i].length,
                now.length
            );
            assert_valid(&nav, &now, start, Some(goal));
        } else {
            let tick = app
                .world()
                .entity(e)
                .get_ref::<NavPath>()
                .unwrap()
                .last_changed();
            assert_eq!(tick, before[&e], "case {i}: NavPath touched");
        }
    }
}

/// Maze corners far apart, for searches that take a while.
fn maze() -> (NavGrid, Vec2, Vec2, Vec2) {
    let nav = NavGrid::from_movingai(&map("maze512-1-0.map"), GridTransform::default()).unwrap();
    let g = nav.grid();
    let find = |x0: u32, y0: u32| -> UVec2 {
        for d in 0..64 {
            for dy in 0..=d {
                let c = UVec2::new(x0.abs_diff(d - dy), y0.abs_diff(dy));
                if g.same_region(c, UVec2::new(1, 1)) {
                    return c;
                }
            }
        }
        panic!("no free cell near ({x0}, {y0})");
    };
    let (start, a, b) = (UVec2::new(1, 1), find(510, 510), find(510, 1));
    let (s, a, b) = (
        nav.cell_center(start),
        nav.cell_center(a),
        nav.cell_center(b),
    );
    (nav, s, a, b)
}

#[test]
fn a_goal_changed_while_its_search_runs_never_shows_the_stale_path() {
    let (nav, start, goal_a, goal_b) = maze();
    let mut app = maze_app(nav);
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal_a)))
        .id();
    app.update();
    assert_eq!(
        status(&app, agent),
        PathStatus::Computing,
        "the first search should still run"
    );
    app.world_mut().get_mut::<PathRequest>(agent).unwrap().goal =
        bevy_anyangle::plugin::PathGoal::Point(goal_b);
    run_until(&mut app, 20_000, |world| {
        let path = world.get::<NavPath>(agent).unwrap();
        if let Some(end) = path.end() {
            assert_eq!(end, goal_b, "the stale path to {goal_a} was shown");
            assert_eq!(path.goal, goal_b);
        }
        *world.get::<PathStatus>(agent).unwrap() == PathStatus::Ready
    });
    settle(&mut app);
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.searches_started, 2);
    assert_eq!(d.results_applied, 1);
    assert_eq!(d.results_discarded + d.searches_cancelled, 1, "{d:?}");
    let log = app.world().resource::<EventLog>();
    assert_eq!(log.ready.len(), 1);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_valid(&nav, &nav_path(&app, agent), start, Some(goal_b));
}

#[test]
fn a_result_planned_before_an_edit_is_checked_against_it() {
    let (nav, start, goal, _) = maze();
    // The path the search will find, planned here on the same grid.
    let expected = plan(
        nav.grid(),
        nav.to_grid(start),
        nav.to_grid(goal),
        &PlanOptions::with_algorithm(Algorithm::LazyTheta),
    )
    .unwrap();
    // A cell whose interior the path crosses (a segment's midpoint off the
    // grid lines), from a middle segment: blocking it must invalidate the
    // path. (A cell the path only runs along would not.)
    let mid = expected.waypoints.len() / 2;
    let mut order: Vec<usize> = (0..expected.waypoints.len() - 1).collect();
    order.sort_by_key(|i| i.abs_diff(mid));
    let on_path = order
        .iter()
        .map(|&i| expected.waypoints[i].midpoint(expected.waypoints[i + 1]))
        .find(|m| m.x.fract() != 0.0 && m.y.fract() != 0.0)
        .expect("some segment crosses a cell interior");
    let cell = UVec2::new(on_path.x as u32, on_path.y as u32);
    let mut app = maze_app(nav);
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    app.update();
    assert_eq!(status(&app, agent), PathStatus::Computing);
    // Block a cell on the path while the search runs on the old snapshot.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(cell, false)
        .unwrap();
    // The result arrives planned on the old grid: it is applied up to the
    // blocked segment (the agent can start walking) and planned again.
    run_until(&mut app, 20_000, |world| {
        !world.resource::<EventLog>().ready.is_empty()
    });
    let nav = app.world().resource::<NavGrid>().clone();
    let cut = nav_path(&app, agent);
    assert!(cut.cut, "the stale path is cut before the blocked segment");
    assert_eq!(cut.grid_version, nav.version());
    for w in cut.grid_waypoints.windows(2) {
        assert!(line_of_sight(nav.grid(), w[0], w[1]));
    }
    assert!(app.world().get::<Replanning>(agent).is_some());
    settle(&mut app);
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(
        (d.searches_started, d.results_discarded, d.results_applied),
        (2, 0, 2),
        "{d:?}"
    );
    let log = app.world().resource::<EventLog>();
    assert_eq!(log.ready.len(), 2);
    assert_eq!(log.ready[0].reason, PlanReason::NewRequest);
    assert_eq!(log.ready[1].reason, PlanReason::PathBlocked);
    let path = nav_path(&app, agent);
    assert!(!path.cut);
    assert_valid(&nav, &path, start, None);
    assert_eq!(path.grid_version, nav.version());
}

#[test]
fn despawning_an_agent_with_a_search_in_flight_is_harmless() {
    let (nav, start, goal, _) = maze();
    let mut app = maze_app(nav);
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    app.update();
    assert_eq!(status(&app, agent), PathStatus::Computing);
    app.world_mut().despawn(agent);
    run_until(&mut app, 20_000, |world| {
        world.resource::<PathfindingDiagnostics>().in_flight == 0
    });
    for _ in 0..10 {
        app.update();
    }
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.results_applied, 0);
    assert_eq!(d.results_discarded + d.searches_cancelled, 1, "{d:?}");
    assert!(app.world().resource::<EventLog>().ready.is_empty());
    // The plugin still works.
    let other = app
        .world_mut()
        .spawn((
            NavPosition(start),
            PathRequest::to(start + Vec2::new(2.0, 0.0)),
        ))
        .id();
    settle(&mut app);
    assert!(status(&app, other).has_path());
}

/// The fallback target of `SPEC.md`, brute force: the closest point to
/// `goal` over the free cells of `region_of`'s region.
fn closest_reachable(grid: &Grid, region_of: UVec2, goal: DVec2) -> f64 {
    let mut best = f64::INFINITY;
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            if grid.same_region(UVec2::new(x, y), region_of) {
                let lo = DVec2::new(f64::from(x), f64::from(y));
                best = best.min(goal.distance(goal.clamp(lo, lo + DVec2::ONE)));
            }
        }
    }
    best
}

#[test]
fn an_unreachable_goal_gets_a_fallback_path_to_the_closest_reachable_point() {
    let nav = NavGrid::from_ascii(
        "................
         .........#####..
         .........#...#..
         .........#...#..
         .........#####..
         ................",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    let (start, goal) = (Vec2::new(0.5, 0.5), Vec2::new(11.5, 3.0)); // goal in the closed box
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Fallback);
    let nav = app.world().resource::<NavGrid>().clone();
    let path = nav_path(&app, agent);
    assert!(path.fallback);
    assert_eq!(path.goal, goal);
    assert_valid(&nav, &path, start, None);
    let want = closest_reachable(nav.grid(), UVec2::new(0, 5), nav.to_grid(goal));
    let got = nav.to_grid(path.end().unwrap()).distance(nav.to_grid(goal));
    assert!(
        (got - want).abs() < 1e-6,
        "fallback point at distance {got}, closest is {want}"
    );
    assert!(app.world().resource::<EventLog>().ready[0].fallback);

    // With the fail policy the goal is reported unreachable.
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .fallback = FallbackPolicy::Fail;
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Unreachable);
    assert!(nav_path(&app, agent).is_empty());
    let failed = app.world().resource::<EventLog>().failed.clone();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].reason, PlanReason::FallbackChanged);

    // Opening a door connects the regions: the agent replans and gets there.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(11, 1), true)
        .unwrap();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_valid(&nav, &nav_path(&app, agent), start, Some(goal));
    assert_eq!(
        app.world()
            .resource::<EventLog>()
            .ready
            .last()
            .unwrap()
            .reason,
        PlanReason::RegionsConnected
    );
}

#[test]
fn a_fallback_path_replans_when_an_edit_connects_the_regions() {
    let nav = NavGrid::from_ascii(
        "..........
         ..........
         ######.###
         ..........",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    // Close the door first: the goal below the wall becomes unreachable.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(6, 2), false)
        .unwrap();
    let (start, goal) = (Vec2::new(0.5, 3.5), Vec2::new(8.5, 0.5));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Fallback);
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(2, 2), true)
        .unwrap();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    assert_eq!(
        app.world()
            .resource::<EventLog>()
            .ready
            .last()
            .unwrap()
            .reason,
        PlanReason::RegionsConnected
    );
    let nav = app.world().resource::<NavGrid>().clone();
    assert_valid(&nav, &nav_path(&app, agent), start, Some(goal));
}

/// An agent at its fallback point on a double corner belongs to the region
/// of the corner's south-east cell. Blocking that cell leaves the corner
/// touching only the goal's region: the agent can now reach the goal, and a
/// blocked cell, not a freed one, is what connected it.
#[test]
fn a_fallback_agent_on_a_double_corner_replans_when_blocking_its_cell_joins_it_to_the_goal() {
    double_corner_joined_by_a_blocked_cell(FallbackPolicy::ClosestReachable);
}

/// The same with no fallback path: the agent whose goal was reported
/// unreachable has no path, and is planned again all the same.
#[test]
fn an_unreachable_agent_on_a_double_corner_replans_when_blocking_its_cell_joins_it_to_the_goal() {
    double_corner_joined_by_a_blocked_cell(FallbackPolicy::Fail);
}

fn double_corner_joined_by_a_blocked_cell(policy: FallbackPolicy) {
    let nav = NavGrid::from_ascii(
        "...###
         ...###
         ...###
         ###...
         ###...
         ###...",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .fallback = policy;
    // World y runs up: the goal is in the grid's top-left cell.
    let (corner, goal) = (Vec2::new(3.0, 3.0), Vec2::new(0.5, 5.5));
    let agent = app
        .world_mut()
        .spawn((NavPosition(corner), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    if policy == FallbackPolicy::Fail {
        assert_eq!(status(&app, agent), PathStatus::Unreachable);
        assert!(nav_path(&app, agent).is_empty());
    } else {
        assert_eq!(status(&app, agent), PathStatus::Fallback);
        let path = nav_path(&app, agent);
        assert_eq!(path.waypoints.last(), Some(&corner), "{path:?}");
    }
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(3, 3), false)
        .unwrap();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    assert_eq!(
        app.world().resource::<EventLog>().ready_reasons()[&agent],
        PlanReason::RegionsConnected
    );
    let nav = app.world().resource::<NavGrid>().clone();
    assert_valid(&nav, &nav_path(&app, agent), corner, Some(goal));
}

#[test]
fn switching_the_algorithm_resource_changes_which_planner_runs() {
    let nav = NavGrid::new(Grid::new(30, 30).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    let (start, goal) = (Vec2::new(0.5, 29.5), Vec2::new(25.5, 22.5));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    let pinned = app
        .world_mut()
        .spawn((
            NavPosition(start),
            PathRequest::to(goal).with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    settle(&mut app);
    let path = nav_path(&app, agent);
    assert_eq!(path.algorithm, Some(Algorithm::Anya));
    assert_eq!(path.waypoints.len(), 2, "any-angle: one straight segment");

    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .algorithm = Algorithm::AStar;
    settle(&mut app);
    let path = nav_path(&app, agent);
    assert_eq!(path.algorithm, Some(Algorithm::AStar));
    for w in path.grid_waypoints.windows(2) {
        let d = (w[1] - w[0]).abs();
        assert!(
            d.x == 0.0 || d.y == 0.0 || (d.x - d.y).abs() < 1e-12,
            "A* moves are grid moves, not {d}"
        );
    }
    assert!(path.waypoints.len() > 2);
    let reasons = app.world().resource::<EventLog>().ready_reasons();
    assert_eq!(reasons.get(&agent), Some(&PlanReason::AlgorithmChanged));
    assert!(
        !reasons.contains_key(&pinned),
        "an agent with its own algorithm keeps it"
    );
    assert_eq!(nav_path(&app, pinned).algorithm, Some(Algorithm::LazyTheta));
}

#[test]
fn bad_goals_and_positions_end_in_failed_or_fallback_with_a_reason() {
    let nav = NavGrid::new(Grid::new(10, 10).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    let here = Vec2::new(1.5, 1.5);
    let gone = app.world_mut().spawn(NavPosition(here)).id();
    app.world_mut().despawn(gone);
    let w = app.world_mut();
    let nan_goal = w
        .spawn((NavPosition(here), PathRequest::to(Vec2::new(f32::NAN, 1.0))))
        .id();
    let inf_goal = w
        .spawn((
            NavPosition(here),
            PathRequest::to(Vec2::new(3.0, f32::INFINITY)),
        ))
        .id();
    let far_goal = w
        .spawn((NavPosition(here), PathRequest::to(Vec2::new(1e7, -1e7))))
        .id();
    let nan_start = w
        .spawn((NavPosition(Vec2::NAN), PathRequest::to(here)))
        .id();
    let nowhere = w.spawn(PathRequest::to(here)).id();
    let lost = w.spawn((NavPosition(here), PathRequest::follow(gone))).id();
    let outside = w
        .spawn((
            NavPosition(Vec2::new(-50.0, 5.0)),
            PathRequest::to(Vec2::new(8.5, 8.5)),
        ))
        .id();
    settle(&mut app);

    assert_eq!(
        status(&app, nan_goal),
        PathStatus::Failed(PathFailure::NonFiniteGoal)
    );
    assert_eq!(
        status(&app, inf_goal),
        PathStatus::Failed(PathFailure::NonFiniteGoal)
    );
    assert_eq!(
        status(&app, nan_start),
        PathStatus::Failed(PathFailure::NonFiniteStart)
    );
    assert_eq!(
        status(&app, nowhere),
        PathStatus::Failed(PathFailure::NoPosition)
    );
    assert_eq!(
        status(&app, lost),
        PathStatus::Failed(PathFailure::TargetLost(gone))
    );
    for e in [nan_goal, inf_goal, nan_start, nowhere, lost] {
        assert!(nav_path(&app, e).is_empty());
    }
    assert_eq!(app.world().resource::<EventLog>().failed.len(), 5);

    let nav = app.world().resource::<NavGrid>().clone();
    assert_eq!(status(&app, far_goal), PathStatus::Fallback);
    let path = nav_path(&app, far_goal);
    assert_valid(&nav, &path, here, None);
    assert!(nav.world_rect().contains(path.end().unwrap()));

    assert_eq!(status(&app, outside), PathStatus::Ready);
    let path = nav_path(&app, outside);
    assert!(path.start_moved && path.next == 0);
    assert!(nav.world_rect().contains(path.waypoints[0]));
    assert_valid(&nav, &path, path.waypoints[0], Some(Vec2::new(8.5, 8.5)));
    let message = PathFailure::TargetLost(gone).to_string();
    assert!(message.contains("gone"), "{message}");
}

#[test]
fn followers_walk_their_paths_and_replan_when_pushed_off() {
    let nav = NavGrid::from_ascii(
        "..........
         ....##....
         ....##....
         ..........",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    app.insert_resource(SteeringClock::fixed(0.05));
    let (start, goal) = (Vec2::new(0.5, 2.0), Vec2::new(9.5, 2.0));
    let agent = app
        .world_mut()
        .spawn((
            Transform::from_xyz(start.x, start.y, 3.0),
            PathRequest::to(goal),
            PathFollower {
                speed: 5.0,
                arrive_radius: 0.01,
            },
        ))
        .id();
    run_until(&mut app, 2_000, |world| {
        world.get::<NavPath>(agent).unwrap().is_finished()
            && !world.get::<NavPath>(agent).unwrap().is_empty()
    });
    let t = app.world().get::<Transform>(agent).unwrap();
    assert!(t.translation.truncate().distance(goal) <= 0.01 + 1e-4);
    assert_eq!(t.translation.z, 3.0, "z is kept");

    // Push it away: it replans from where it is and walks back.
    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .get_mut::<Transform>(agent)
        .unwrap()
        .translation = Vec3::new(2.5, 0.5, 3.0);
    run_until(&mut app, 2_000, |world| {
        let t = world.get::<Transform>(agent).unwrap();
        t.translation.truncate().distance(goal) < 0.02
    });
    assert_eq!(
        app.world().resource::<EventLog>().ready[0].reason,
        PlanReason::OffPath
    );
}

#[test]
fn the_plugin_tracks_progress_for_games_that_steer_themselves() {
    let nav = NavGrid::from_ascii(
        "..........
         ....##....
         ....##....
         ..........",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    let (start, goal) = (Vec2::new(0.5, 2.0), Vec2::new(9.5, 2.0));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    let path = nav_path(&app, agent);
    assert!(path.waypoints.len() >= 4, "{:?}", path.waypoints);
    assert_eq!(path.next, 1);
    let tick = app
        .world()
        .entity(agent)
        .get_ref::<NavPath>()
        .unwrap()
        .last_changed();
    // Walk (as a game would) past the first corner onto the next segment.
    let (w1, w2) = (path.waypoints[1], path.waypoints[2]);
    app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = w1.lerp(w2, 0.5);
    app.update();
    let now = app.world().entity(agent).get_ref::<NavPath>().unwrap();
    assert_eq!(now.next, 2);
    assert_eq!(
        now.last_changed(),
        tick,
        "progress does not count as a change"
    );
    assert_eq!(status(&app, agent), PathStatus::Ready);
    // A game writing nonsense into the path does not crash the plugin.
    app.world_mut().get_mut::<NavPath>(agent).unwrap().next = usize::MAX;
    app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = w2;
    for _ in 0..3 {
        app.update();
    }
}

#[test]
fn an_agent_following_an_entity_replans_when_it_moves_away() {
    let nav = NavGrid::new(Grid::new(20, 20).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    let target = app
        .world_mut()
        .spawn(NavPosition(Vec2::new(15.5, 15.5)))
        .id();
    let chaser = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(1.5, 1.5)),
            PathRequest::follow(target),
        ))
        .id();
    settle(&mut app);
    assert_eq!(nav_path(&app, chaser).end(), Some(Vec2::new(15.5, 15.5)));
    // A small move stays within the replan distance.
    app.world_mut().get_mut::<NavPosition>(target).unwrap().0 = Vec2::new(15.0, 15.5);
    settle(&mut app);
    assert_eq!(app.world().resource::<EventLog>().ready.len(), 1);
    app.world_mut().get_mut::<NavPosition>(target).unwrap().0 = Vec2::new(3.5, 18.5);
    settle(&mut app);
    assert_eq!(nav_path(&app, chaser).end(), Some(Vec2::new(3.5, 18.5)));
    assert_eq!(
        app.world().resource::<EventLog>().ready[1].reason,
        PlanReason::TargetMoved
    );
    app.world_mut().despawn(target);
    settle(&mut app);
    assert_eq!(
        status(&app, chaser),
        PathStatus::Failed(PathFailure::TargetLost(target))
    );
}

#[test]
fn writing_an_equal_request_does_not_replan() {
    let nav = NavGrid::new(Grid::new(10, 10).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(1.5, 1.5)),
            PathRequest::to(Vec2::new(8.5, 8.5)),
        ))
        .id();
    settle(&mut app);
    app.world_mut()
        .get_mut::<PathRequest>(agent)
        .unwrap()
        .set_changed();
    app.world_mut()
        .entity_mut(agent)
        .insert(PathRequest::to(Vec2::new(8.5, 8.5)));
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(
        app.world()
            .resource::<PathfindingDiagnostics>()
            .searches_started,
        1
    );
}

#[test]
fn agents_wait_for_the_grid_and_replan_when_it_is_replaced_or_moved() {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), AnyAnglePlugin::default()))
        .init_resource::<EventLog>()
        .add_observer(|ready: On<PathReady>, mut log: ResMut<EventLog>| log.ready.push(*ready));
    app.finish();
    app.cleanup();
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            PathRequest::to(Vec2::new(5.5, 5.5)),
        ))
        .id();
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(status(&app, agent), PathStatus::Pending, "no NavGrid yet");
    app.insert_resource(NavGrid::new(
        Grid::new(8, 8).unwrap(),
        GridTransform::default(),
    ));
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    assert_eq!(app.world().resource::<EventLog>().ready.len(), 1);

    // Moving the grid in the world invalidates every world-space path.
    let moved = GridTransform::new(Vec2::new(-1.0, -1.0), 1.0).unwrap();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_transform(moved);
    settle(&mut app);
    let log = &app.world().resource::<EventLog>().ready;
    assert_eq!(log.len(), 2);
    assert_eq!(log[1].reason, PlanReason::GridReplaced);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_valid(
        &nav,
        &nav_path(&app, agent),
        Vec2::new(0.5, 0.5),
        Some(Vec2::new(5.5, 5.5)),
    );
}

#[test]
fn removing_the_request_cancels_its_search() {
    let (nav, start, goal, _) = maze();
    let mut app = maze_app(nav);
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    app.update();
    assert_eq!(status(&app, agent), PathStatus::Computing);
    app.world_mut().entity_mut(agent).remove::<PathRequest>();
    settle(&mut app);
    // Not left busy (regression: the status stayed `Computing` forever).
    assert_eq!(
        status(&app, agent),
        PathStatus::Failed(PathFailure::RequestRemoved)
    );
    assert!(nav_path(&app, agent).is_empty());
    assert!(app.world().resource::<EventLog>().failed.is_empty());
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.results_applied, 0);
    // Asking again plans again.
    app.world_mut()
        .entity_mut(agent)
        .insert(PathRequest::to(goal));
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
}

#[test]
fn no_more_searches_run_than_the_limit() {
    let (nav, start, a, b) = maze();
    let mut app = maze_app(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .max_searches_in_flight = Some(2);
    let agents: Vec<Entity> = (0..12)
        .map(|i| {
            let goal = if i % 2 == 0 { a } else { b };
            app.world_mut()
                .spawn((NavPosition(start), PathRequest::to(goal)))
                .id()
        })
        .collect();
    run_until(&mut app, 20_000, |world| {
        let d = *world.resource::<PathfindingDiagnostics>();
        assert!(d.in_flight <= 2, "{d:?}");
        assert!(
            d.searches_started - d.results_applied - d.searches_cancelled <= 2,
            "{d:?}"
        );
        let computing = world
            .query::<&PathStatus>()
            .iter(world)
            .filter(|s| **s == PathStatus::Computing)
            .count();
        assert!(computing <= 2);
        d.results_applied == 12
    });
    for e in agents {
        assert_eq!(status(&app, e), PathStatus::Ready);
    }
}

/// Main-thread cost of the plugin per frame with 10,000 idle agents whose
/// paths are ready. Run with
/// `cargo test --release --test plugin -- --ignored --nocapture frame_cost`.
#[test]
#[ignore = "measurement; run in release with --nocapture"]
fn frame_cost_with_10k_idle_agents() {
    /// Median and minimum of `app.update()` over `frames` frames (the
    /// machine is shared, so the minimum is the least disturbed figure).
    fn measure(app: &mut App, frames: usize) -> (Duration, Duration) {
        for _ in 0..50 {
            app.update();
        }
        let mut times: Vec<Duration> = (0..frames)
            .map(|_| {
                let t = Instant::now();
                app.update();
                t.elapsed()
            })
            .collect();
        times.sort();
        (times[frames / 2], times[0])
    }
    /// Runs every schedule on the main thread, so that the figures are the
    /// systems' own cost, not thread wake-ups on a busy machine.
    fn single_threaded(app: &mut App) {
        use bevy_ecs::schedule::ScheduleLabel;
        for label in [
            bevy_app::Main.intern(),
            bevy_app::First.intern(),
            bevy_app::PreUpdate.intern(),
            bevy_app::Update.intern(),
            bevy_app::PostUpdate.intern(),
            bevy_app::Last.intern(),
        ] {
            app.edit_schedule(label, |s| {
                s.set_executor(bevy_ecs::schedule::SingleThreadedExecutor::new());
            });
        }
    }
    let frames = 2_000;
    let nav = arena();
    let pairs = random_pairs(nav.grid(), 10_000, 3);

    // Baseline: the same app and entities, without the plugin's systems.
    let mut bare = App::new();
    bare.add_plugins(TaskPoolPlugin::default());
    for &(s, _) in &pairs {
        bare.world_mut().spawn((
            Transform::from_translation(nav.cell_center(s).extend(0.0)),
            NavPath::default(),
        ));
    }
    single_threaded(&mut bare);
    bare.finish();
    bare.cleanup();
    let (base, base_min) = measure(&mut bare, frames);

    for (label, follower) in [("no follower", false), ("PathFollower, arrived", true)] {
        let mut app = app_with(nav.clone());
        for &(s, g) in &pairs {
            let mut e = app.world_mut().spawn((
                Transform::from_translation(nav.cell_center(s).extend(0.0)),
                PathRequest::to(nav.cell_center(g)),
            ));
            if follower {
                e.insert(PathFollower {
                    speed: 1e6,
                    arrive_radius: 0.01,
                });
            }
        }
        app.insert_resource(SteeringClock::fixed(1.0));
        settle(&mut app);
        for _ in 0..10 {
            app.update();
        }
        assert!(
            app.world_mut()
                .query::<&NavPath>()
                .iter(app.world())
                .all(|p| !p.is_empty())
        );
        single_threaded(&mut app);
        let (with, with_min) = measure(&mut app, frames);
        println!(
            "10k idle agents ({label}): app.update() median {with:?} (min {with_min:?}); \
             without the plugin median {base:?} (min {base_min:?}); plugin share median {:?} (min {:?})",
            with.saturating_sub(base),
            with_min.saturating_sub(base_min)
        );
        // One frame with a one-cell edit: every agent with a path is checked.
        let free = (0..nav.grid().height())
            .flat_map(|y| (0..nav.grid().width()).map(move |x| UVec2::new(x, y)))
            .find(|c| nav.grid().is_free(*c))
            .unwrap();
        app.world_mut()
            .resource_mut::<NavGrid>()
            .set_cell_free(free, false)
            .unwrap();
        let t = Instant::now();
        app.update();
        println!(
            "  frame with a one-cell edit: app.update() {:?}",
            t.elapsed()
        );
        settle(&mut app);
    }
}

/// An agent standing still in the middle of a one-segment path across an
/// open 40 x 5 grid (world y = 5 - grid y), as a self-steering game leaves it.
fn agent_mid_segment() -> (App, Entity) {
    let nav = NavGrid::new(Grid::new(40, 5).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 2.5)),
            PathRequest::to(Vec2::new(39.5, 2.5)),
        ))
        .id();
    settle(&mut app);
    assert_eq!(nav_path(&app, agent).waypoints.len(), 2);
    app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = Vec2::new(20.5, 2.5);
    app.update();
    assert_eq!(nav_path(&app, agent).next, 1);
    (app, agent)
}

#[test]
fn blocking_a_cell_the_agent_has_already_passed_does_not_replan() {
    let (mut app, agent) = agent_mid_segment();
    let before = path_ticks(&app, &[(agent, Vec2::ZERO, Vec2::ZERO)]);
    // Cell (10, 2) lies on the segment, behind the agent.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(10, 2), false)
        .unwrap();
    settle(&mut app);
    assert!(
        app.world().resource::<EventLog>().ready.len() == 1,
        "replanned for a cell behind the agent"
    );
    assert_eq!(path_ticks(&app, &[(agent, Vec2::ZERO, Vec2::ZERO)]), before);
    // Cell (30, 2) lies ahead: that one matters.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(30, 2), false)
        .unwrap();
    settle(&mut app);
    let log = app.world().resource::<EventLog>();
    assert_eq!(log.ready.len(), 2);
    assert_eq!(log.ready[1].reason, PlanReason::PathBlocked);
}

/// Changes the goal of every agent between [`AnyAngleSystems::Dispatch`] and
/// [`AnyAngleSystems::Apply`], after giving the searches started this frame
/// time to finish.
fn retarget_between_dispatch_and_apply(mut agents: Query<&mut PathRequest>) {
    std::thread::sleep(Duration::from_millis(20));
    for mut request in &mut agents {
        let bevy_anyangle::plugin::PathGoal::Point(p) = request.goal else {
            continue;
        };
        request.goal = bevy_anyangle::plugin::PathGoal::Point(Vec2::new(p.x, 9.5 - p.y));
    }
}

/// Checks, right after [`AnyAngleSystems::Apply`], that no path answers
/// another goal than the one asked for.
fn assert_paths_answer_their_request(agents: Query<(&PathRequest, &NavPath, &PathStatus)>) {
    for (request, path, status) in &agents {
        let bevy_anyangle::plugin::PathGoal::Point(goal) = request.goal else {
            continue;
        };
        if let Some(end) = path.end() {
            assert_eq!(end, goal, "a path to an old goal is shown ({status:?})");
        }
    }
}

#[test]
fn a_goal_changed_between_dispatch_and_apply_never_shows_the_stale_path() {
    use bevy_anyangle::plugin::AnyAngleSystems;
    let nav = NavGrid::new(Grid::new(10, 10).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    app.add_systems(
        bevy_app::Update,
        (
            retarget_between_dispatch_and_apply
                .after(AnyAngleSystems::Dispatch)
                .before(AnyAngleSystems::Apply),
            assert_paths_answer_their_request.after(AnyAngleSystems::Apply),
        ),
    );
    app.world_mut().spawn((
        NavPosition(Vec2::new(0.5, 0.5)),
        PathRequest::to(Vec2::new(8.5, 1.5)),
    ));
    for _ in 0..10 {
        app.update();
    }
}

#[test]
fn an_agent_replanning_every_frame_holds_one_queue_entry() {
    // No NavGrid yet: nothing can be dispatched, so every request waits.
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), AnyAnglePlugin::default()));
    app.finish();
    app.cleanup();
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            PathRequest::to(Vec2::new(5.5, 5.5)),
        ))
        .id();
    for i in 0..200u16 {
        app.world_mut().get_mut::<PathRequest>(agent).unwrap().goal =
            bevy_anyangle::plugin::PathGoal::Point(Vec2::new(5.5, f32::from(i % 7) + 0.5));
        app.update();
    }
    assert_eq!(status(&app, agent), PathStatus::Pending);
    assert_eq!(app.world().resource::<PathfindingDiagnostics>().queued, 1);
    // Removing and re-adding the request while queued still plans once.
    app.world_mut().entity_mut(agent).remove::<PathRequest>();
    app.update();
    app.world_mut()
        .entity_mut(agent)
        .insert(PathRequest::to(Vec2::new(5.5, 5.5)));
    app.update();
    app.insert_resource(NavGrid::new(
        Grid::new(8, 8).unwrap(),
        GridTransform::default(),
    ));
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!((d.searches_started, d.queued), (1, 0), "{d:?}");
}

#[test]
fn a_path_an_edit_blocks_is_not_followed_into_the_wall_while_it_replans() {
    let (nav, start, goal, _) = maze();
    let mut app = maze_app(nav);
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    let path = nav_path(&app, agent);
    assert!(path.waypoints.len() > 6, "a long way through the maze");
    // Block a cell the fourth segment needs; the long replan takes frames.
    let (a, b) = (path.grid_waypoints[3], path.grid_waypoints[4]);
    let mid = a.midpoint(b).floor();
    let cell = [(0.0, 0.0), (-1.0, 0.0), (0.0, -1.0), (-1.0, -1.0)]
        .into_iter()
        .map(|(dx, dy)| UVec2::new((mid.x + dx) as u32, (mid.y + dy) as u32))
        .find(|&c| {
            let mut g = app.world().resource::<NavGrid>().grid().clone();
            g.set_free(c, false).is_ok_and(|changed| changed) && !line_of_sight(&g, a, b)
        })
        .expect("a cell next to the segment's midpoint blocks it");
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(cell, false)
        .unwrap();
    app.update();
    let nav = app.world().resource::<NavGrid>().clone();
    let path = nav_path(&app, agent);
    let here = nav.to_grid(app.world().get::<NavPosition>(agent).unwrap().0);
    let mut a = here;
    for &b in &path.grid_waypoints[path.next..] {
        assert!(
            line_of_sight(nav.grid(), a, b),
            "the path still leads through the new wall ({:?})",
            status(&app, agent)
        );
        a = b;
    }
    assert_eq!(path.waypoints.len(), path.grid_waypoints.len());
    settle(&mut app);
    // A maze is a tree: the wall cuts the goal off, so the new plan falls back.
    assert!(status(&app, agent).has_path());
    assert_valid(&nav, &nav_path(&app, agent), start, None);
}

/// The paths as `Detect` leaves them, before any result of the frame is
/// applied.
#[derive(Resource, Default)]
struct PathsAfterDetect(HashMap<Entity, NavPath>);

fn record_paths_after_detect(
    agents: Query<(Entity, &NavPath)>,
    mut record: ResMut<PathsAfterDetect>,
) {
    record.0 = agents.iter().map(|(e, p)| (e, p.clone())).collect();
}

#[test]
fn an_old_path_kept_during_a_replan_is_cut_when_an_edit_blocks_it() {
    use bevy_anyangle::plugin::AnyAngleSystems;
    let (nav, start, goal, _) = maze();
    let mut app = maze_app(nav);
    app.init_resource::<PathsAfterDetect>().add_systems(
        bevy_app::Update,
        record_paths_after_detect
            .after(AnyAngleSystems::Detect)
            .before(AnyAngleSystems::Dispatch),
    );
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    let path = nav_path(&app, agent);
    // In one frame: a settings change asks for a replan (the old path stays
    // meanwhile, the agent is busy) and an edit blocks the old path.
    let (a, b) = (path.grid_waypoints[3], path.grid_waypoints[4]);
    let mid = a.midpoint(b).floor();
    let cell = [(0.0, 0.0), (-1.0, 0.0), (0.0, -1.0), (-1.0, -1.0)]
        .into_iter()
        .map(|(dx, dy)| UVec2::new((mid.x + dx) as u32, (mid.y + dy) as u32))
        .find(|&c| {
            let mut g = app.world().resource::<NavGrid>().grid().clone();
            g.set_free(c, false).is_ok_and(|changed| changed) && !line_of_sight(&g, a, b)
        })
        .expect("a cell next to the segment's midpoint blocks it");
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .algorithm = Algorithm::AStar;
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(cell, false)
        .unwrap();
    app.update();
    let kept = &app.world().resource::<PathsAfterDetect>().0[&agent];
    assert_eq!(kept.waypoints.len(), 4, "cut before the blocked segment");
    assert_eq!(kept.grid_waypoints[..], path.grid_waypoints[..4]);
    assert_eq!(kept.waypoints[..], path.waypoints[..4]);
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    assert!(status(&app, agent).has_path());
    assert_valid(&nav, &nav_path(&app, agent), start, None);
    assert_eq!(nav_path(&app, agent).algorithm, Some(Algorithm::AStar));
}

/// Frees cell (2, 2) once, in the second frame, before the plugin's systems.
fn free_a_cell_in_frame_two(mut frame: Local<u32>, mut nav: ResMut<NavGrid>) {
    *frame += 1;
    if *frame == 2 {
        nav.set_cell_free(UVec2::new(2, 2), true).unwrap();
    }
}

#[test]
fn a_no_free_cell_result_is_replanned_when_cells_were_freed_during_its_search() {
    use bevy_anyangle::plugin::AnyAngleSystems;
    let nav = NavGrid::new(Grid::new_blocked(6, 6).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    app.add_systems(
        bevy_app::Update,
        free_a_cell_in_frame_two.before(AnyAngleSystems::Detect),
    );
    // Hold the search threads, so that the first (instant) search cannot
    // finish within the first frame: its result arrives after the edit of
    // the second frame.
    app.world_mut().resource_mut::<PathfindingSettings>().paused = true;
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            PathRequest::to(Vec2::new(5.5, 5.5)),
        ))
        .id();
    app.update();
    assert_eq!(status(&app, agent), PathStatus::Computing);
    app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Fallback);
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!((d.searches_started, d.results_discarded), (2, 1), "{d:?}");
}

/// Where to put agents between [`AnyAngleSystems::Dispatch`] and
/// [`AnyAngleSystems::Apply`] of the next frame, as if they had walked there
/// while their search ran.
#[derive(Resource, Default)]
struct MoveDuringSearch(Vec<(Entity, Vec2)>);

fn move_during_search(mut moves: ResMut<MoveDuringSearch>, mut agents: Query<&mut NavPosition>) {
    for (entity, to) in std::mem::take(&mut moves.0) {
        agents.get_mut(entity).unwrap().0 = to;
    }
}

/// A 10 x 5 grid with a wall (world y = 5 - grid y): an agent at grid
/// (1.5, 1.5) going to (8.5, 1.5) turns at the wall's top corners (5, 1)
/// and (6, 1). The agent is moved to `moved_to` (world) right after its
/// search starts, so its result always arrives after the move.
fn agent_moved_during_its_search(moved_to: Vec2) -> (App, Entity, Vec2, Vec2) {
    agent_moved_during_its_search_on(
        "..........
         .....#....
         .....#....
         .....#....
         ..........",
        moved_to,
    )
}

fn agent_moved_during_its_search_on(picture: &str, moved_to: Vec2) -> (App, Entity, Vec2, Vec2) {
    use bevy_anyangle::plugin::AnyAngleSystems;
    let nav = NavGrid::from_ascii(picture, GridTransform::default()).unwrap();
    let mut app = app_with(nav);
    app.init_resource::<MoveDuringSearch>().add_systems(
        bevy_app::Update,
        move_during_search
            .after(AnyAngleSystems::Dispatch)
            .before(AnyAngleSystems::Apply),
    );
    let (start, goal) = (Vec2::new(1.5, 3.5), Vec2::new(8.5, 3.5));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    app.world_mut()
        .resource_mut::<MoveDuringSearch>()
        .0
        .push((agent, moved_to));
    app.update();
    settle(&mut app);
    for _ in 0..3 {
        app.update();
    }
    (app, agent, start, goal)
}

#[test]
fn a_path_found_while_the_agent_moved_starts_where_the_agent_now_is() {
    // From here the agent sees the first corner (5, 1).
    let here = Vec2::new(3.0, 3.5);
    let (app, agent, _, goal) = agent_moved_during_its_search(here);
    let path = nav_path(&app, agent);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_eq!(path.grid_waypoints[1], DVec2::new(5.0, 1.0));
    assert_eq!(
        path.waypoints[0], here,
        "the path starts where the agent is"
    );
    assert_eq!(path.next, 1);
    assert!(!path.start_moved);
    assert_valid(&nav, &path, here, Some(goal));
    let log = app.world().resource::<EventLog>();
    assert_eq!(log.ready.len(), 1, "no off-path replan");
    assert_eq!(log.ready[0].length, path.length);
}

#[test]
fn an_agent_that_moved_out_of_sight_of_its_new_path_is_planned_again_from_where_it_is() {
    // In a pocket under a roof, the agent sees no waypoint of the path
    // planned from where it was, nor that point: walking to any of them would
    // cross a wall.
    let here = Vec2::new(1.0, 0.5);
    let (app, agent, _, goal) = agent_moved_during_its_search_on(
        "..........
         .....#....
         .....#....
         .##..#....
         ..#.......",
        here,
    );
    let path = nav_path(&app, agent);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_eq!(path.waypoints[0], here, "planned again from where it is");
    assert_eq!(path.next, 1);
    assert_valid(&nav, &path, here, Some(goal));
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(
        (d.searches_started, d.results_discarded, d.results_applied),
        (2, 1, 1),
        "{d:?}"
    );
    assert_eq!(app.world().resource::<EventLog>().ready.len(), 1);
}

#[test]
fn an_agent_that_walked_past_the_first_waypoints_joins_the_path_at_the_last_one_in_sight() {
    // Beyond the wall: the corners are behind it, the goal is in sight.
    let here = Vec2::new(6.5, 1.5);
    let (app, agent, _, goal) = agent_moved_during_its_search(here);
    let path = nav_path(&app, agent);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_eq!(path.waypoints, vec![here, goal]);
    assert_eq!(path.next, 1);
    assert_valid(&nav, &path, here, Some(goal));
    assert_eq!(app.world().resource::<EventLog>().ready.len(), 1);
}

#[test]
fn an_agent_that_sees_only_its_search_start_walks_back_to_it() {
    // A roofed pocket open to the west: only the search's start, straight
    // back, is in sight.
    let here = Vec2::new(2.5, 0.5);
    let (app, agent, start, goal) = agent_moved_during_its_search_on(
        "..........
         .....#....
         .....#....
         ...###....
         ..........",
        here,
    );
    let path = nav_path(&app, agent);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_eq!(path.grid_waypoints[1], DVec2::new(5.0, 1.0));
    assert_valid(&nav, &path, start, Some(goal));
    assert_eq!(path.next, 0, "the agent heads back to the path's start");
    assert!(nav.line_of_sight(here, path.waypoints[0]));
    assert_eq!(
        app.world().resource::<EventLog>().ready.len(),
        1,
        "walking back to the start is not an off-path replan"
    );
}

#[test]
fn an_unreachable_agent_in_a_wall_or_off_the_grid_replans_when_an_edit_connects_it() {
    let nav = NavGrid::from_ascii(
        ".....#....
         .##..#....
         .##..#....
         .....#....",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .fallback = FallbackPolicy::Fail;
    let goal = Vec2::new(8.5, 2.5);
    // Grid (1.5, 1.5), inside the block; and left of the grid.
    let starts = [Vec2::new(1.5, 2.5), Vec2::new(-3.0, 2.5)];
    let agents: Vec<Entity> = starts
        .iter()
        .map(|&s| {
            app.world_mut()
                .spawn((NavPosition(s), PathRequest::to(goal)))
                .id()
        })
        .collect();
    settle(&mut app);
    for &agent in &agents {
        assert_eq!(status(&app, agent), PathStatus::Unreachable);
    }
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(5, 0), true)
        .unwrap();
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    let reasons = app.world().resource::<EventLog>().ready_reasons();
    for &agent in &agents {
        assert_eq!(status(&app, agent), PathStatus::Ready);
        assert_eq!(reasons[&agent], PlanReason::RegionsConnected);
        let path = nav_path(&app, agent);
        assert!(path.start_moved);
        assert_eq!(path.end(), Some(goal));
        assert_eq!(path.next, 0, "walks out of the wall first");
        assert!(nav.is_free_at(path.waypoints[0]));
    }
}

#[test]
fn restoring_a_saved_grid_and_editing_it_in_one_frame_replans() {
    let nav = NavGrid::new(Grid::new(10, 3).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    let (start, goal) = (Vec2::new(0.5, 1.5), Vec2::new(9.5, 1.5));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    let saved = app.world().resource::<NavGrid>().clone();
    // An edit far from the path: one version on, nobody replans.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(0, 0), false)
        .unwrap();
    settle(&mut app);
    assert_eq!(app.world().resource::<EventLog>().ready.len(), 1);
    // Restore the copy and block the path on it: the version is the same
    // number again, the cells are not.
    let mut restored = saved.clone();
    restored.set_cell_free(UVec2::new(5, 1), false).unwrap();
    assert_eq!(
        restored.version(),
        app.world().resource::<NavGrid>().version()
    );
    app.insert_resource(restored);
    settle(&mut app);
    let log = app.world().resource::<EventLog>();
    assert_eq!(log.ready.len(), 2, "the restored grid was not noticed");
    assert_eq!(log.ready[1].reason, PlanReason::GridReplaced);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_valid(&nav, &nav_path(&app, agent), start, Some(goal));
}

#[test]
fn removing_the_settings_resource_falls_back_to_the_default_settings() {
    let nav = NavGrid::new(Grid::new(12, 12).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .algorithm = Algorithm::AStar;
    let (start, goal) = (Vec2::new(0.5, 0.5), Vec2::new(11.5, 4.5));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    assert_eq!(nav_path(&app, agent).algorithm, Some(Algorithm::AStar));
    app.world_mut().remove_resource::<PathfindingSettings>();
    let late = app
        .world_mut()
        .spawn((NavPosition(goal), PathRequest::follow(agent)))
        .id();
    settle(&mut app);
    let default = PathfindingSettings::default().algorithm;
    for e in [agent, late] {
        assert_eq!(status(&app, e), PathStatus::Ready);
        assert_eq!(nav_path(&app, e).algorithm, Some(default));
    }
    assert_eq!(
        app.world().resource::<EventLog>().ready_reasons()[&agent],
        PlanReason::AlgorithmChanged
    );
    // Moving the agent past the default replan distance replans it.
    app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = Vec2::new(6.0, 11.5);
    settle(&mut app);
    assert_eq!(
        app.world().resource::<EventLog>().ready_reasons()[&agent],
        PlanReason::OffPath
    );
}

#[test]
fn a_cell_size_whose_grid_leaves_f32_world_coordinates_is_rejected() {
    assert!(GridTransform::new(Vec2::ZERO, 1e35).is_err());
    assert!(GridTransform::new(Vec2::new(-3e38, 0.0), 1e34).is_err());
    let largest = GridTransform::new(Vec2::ZERO, 1e30).unwrap();
    let nav = NavGrid::new(Grid::new(MAX_DIMENSION, 1).unwrap(), largest);
    let rect = nav.world_rect();
    assert!(rect.min.is_finite() && rect.max.is_finite());
}

#[test]
fn steering_never_writes_a_non_finite_position() {
    let nav = NavGrid::new(Grid::new(4, 4).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    app.insert_resource(SteeringClock::fixed(1.0));
    // A path a game wrote itself, spanning most of the f32 range: the
    // step towards the far waypoint overflows in f32.
    let (from, to) = (Vec2::new(-3e38, 0.0), Vec2::new(3e38, 0.0));
    let walker = app
        .world_mut()
        .spawn((
            NavPosition(from),
            PathFollower {
                speed: 1e37,
                arrive_radius: 0.05,
            },
            NavPath {
                waypoints: vec![from, to],
                next: 1,
                ..NavPath::default()
            },
        ))
        .id();
    // And one heading for a waypoint that is not a point at all.
    let lost = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::ZERO),
            PathFollower::default(),
            NavPath {
                waypoints: vec![Vec2::ZERO, Vec2::new(f32::NAN, 1.0)],
                next: 1,
                ..NavPath::default()
            },
        ))
        .id();
    for _ in 0..3 {
        app.update();
    }
    let p = app.world().get::<NavPosition>(walker).unwrap().0;
    assert!(p.is_finite(), "{p}");
    assert!(p.x > from.x, "the walker moved");
    assert_eq!(app.world().get::<NavPosition>(lost).unwrap().0, Vec2::ZERO);
}

/// The agent's world position.
fn world_position(app: &App, e: Entity) -> Vec2 {
    app.world().get::<NavPosition>(e).unwrap().0
}

/// A follower walks round a wall's end while its replan (after an algorithm
/// switch) waits behind held search threads; the result, planned from where
/// it was above the wall, arrives when it is below. It must never walk back
/// through the wall, at any frame.
#[test]
fn a_late_replan_never_walks_a_follower_through_a_wall() {
    let nav = NavGrid::from_ascii(
        ".........
         #######..
         .........",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    app.insert_resource(SteeringClock::fixed(0.05));
    let goal = Vec2::new(0.5, 0.5);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 2.5)),
            PathRequest::to(goal),
            PathFollower {
                speed: 8.0,
                ..PathFollower::default()
            },
        ))
        .id();
    let mut prev = world_position(&app, agent);
    let mut switched = None;
    for frame in 0..400 {
        app.update();
        let nav = app.world().resource::<NavGrid>().clone();
        let p = world_position(&app, agent);
        assert!(
            nav.is_free_at(p),
            "frame {frame}: the agent stands in a wall at {p}"
        );
        assert!(
            nav.line_of_sight(prev, p) || nav_path(&app, agent).waypoints.len() > 1,
            "frame {frame}: the agent stepped through a wall from {prev} to {p}"
        );
        prev = p;
        // Once it walks towards the wall's end, hold the threads and switch.
        if switched.is_none() && status(&app, agent) == PathStatus::Ready && p.x > 3.0 {
            let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
            settings.paused = true;
            settings.algorithm = Algorithm::LazyTheta;
            switched = Some(frame);
        }
        // Release them once it has gone round the end and walks back below.
        if let Some(at) = switched
            && frame == at + 40
        {
            assert!(p.y < 1.0, "the agent is below the wall: {p}");
            app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
        }
        if p.distance(goal) < 0.06 && nav_path(&app, agent).algorithm == Some(Algorithm::LazyTheta)
        {
            break;
        }
    }
    assert!(switched.is_some());
    assert!(
        world_position(&app, agent).distance(goal) < 0.06,
        "it arrived"
    );
    assert_eq!(nav_path(&app, agent).algorithm, Some(Algorithm::LazyTheta));
}

/// Agents whose path an edit blocked are served before those asking for a
/// first path, but for the first paths' fair turns: a thread begins at most
/// one first path in every eight searches while blocked ones wait.
#[test]
fn blocked_paths_are_served_before_first_paths_but_for_their_fair_turns() {
    let grid = Grid::from_movingai(&map("den520d.map")).unwrap();
    let pairs = random_pairs(&grid, 300, 7);
    let mut app = app_with(NavGrid::new(grid, GridTransform::default()));
    // Give 20 agents a path across an open stretch first.
    let early = spawn_agents(&mut app, &pairs[..20]);
    settle(&mut app);
    // Now hold the threads, ask 280 first paths, and block every early
    // agent's path.
    app.world_mut().resource_mut::<PathfindingSettings>().paused = true;
    spawn_agents(&mut app, &pairs[20..]);
    app.update();
    let mut blocked = Vec::new();
    for &(e, _, _) in &early {
        let path = nav_path(&app, e);
        let nav = app.world().resource::<NavGrid>();
        // A free cell whose interior the first segment crosses.
        let (a, b) = (path.grid_waypoints[0], path.grid_waypoints[1]);
        let cell = (1..20)
            .map(|i| a.lerp(b, f64::from(i) / 20.0))
            .map(|p| UVec2::new(p.x as u32, p.y as u32))
            .find(|c| nav.grid().is_free(*c) && a.distance(c.as_dvec2() + 0.5) > 1.5);
        if let Some(cell) = cell {
            blocked.push(e);
            app.world_mut()
                .resource_mut::<NavGrid>()
                .set_cell_free(cell, false)
                .unwrap();
        }
    }
    assert!(blocked.len() >= 10);
    app.update();
    // Still following (cut) paths, marked as replanning, status unchanged.
    for &e in &blocked {
        assert_eq!(status(&app, e), PathStatus::Ready);
        assert!(app.world().get::<Replanning>(e).is_some());
    }
    app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
    let ready_before = app.world().resource::<EventLog>().ready.len();
    settle(&mut app);
    let log = app.world().resource::<EventLog>();
    let events = &log.ready[ready_before..];
    let last_blocked = events
        .iter()
        .rposition(|r| blocked.contains(&r.entity))
        .unwrap();
    let first_new = events
        .iter()
        .position(|r| !early.iter().any(|&(e, _, _)| e == r.entity))
        .unwrap();
    // The search a thread was running as it paused, and the one it took
    // next and held, may finish first.
    let threads = app
        .world()
        .resource::<PathfindingDiagnostics>()
        .search_threads;
    let first_paths_before = events[..=last_blocked]
        .iter()
        .filter(|r| r.reason == PlanReason::NewRequest)
        .count();
    // (Per thread: at most one fair turn in the first three searches, then
    // one in every eight; the fair turns of refinements find none waiting.)
    let fair_turns = threads * (1 + blocked.len().div_ceil(7));
    assert!(
        first_paths_before <= 2 * threads + fair_turns,
        "blocked paths waited behind {first_paths_before} first paths (first new at {first_new}, last blocked at {last_blocked})"
    );
    assert!(
        events[..=last_blocked]
            .iter()
            .all(|r| r.reason == PlanReason::PathBlocked || !blocked.contains(&r.entity))
    );
    for &e in &blocked {
        assert!(app.world().get::<Replanning>(e).is_none());
        assert_eq!(status(&app, e), PathStatus::Ready);
    }
}

/// Eight agents with paths on den520d, and `n` free cells more than 48 cells
/// from every path.
fn agents_and_far_cells(n: usize) -> (App, Vec<(Entity, Vec2, Vec2)>, Vec<UVec2>) {
    let grid = Grid::from_movingai(&map("den520d.map")).unwrap();
    let pairs = random_pairs(&grid, 8, 11);
    let mut app = app_with(NavGrid::new(grid, GridTransform::default()));
    let agents = spawn_agents(&mut app, &pairs);
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    let paths: Vec<NavPath> = agents.iter().map(|&(e, _, _)| nav_path(&app, e)).collect();
    let far: Vec<UVec2> = (0..nav.grid().height())
        .flat_map(|y| (0..nav.grid().width()).map(move |x| UVec2::new(x, y)))
        .filter(|c| {
            let centre = c.as_dvec2() + 0.5;
            nav.grid().is_free(*c)
                && paths.iter().all(|p| {
                    p.grid_waypoints
                        .windows(2)
                        .all(|w| segment_point_distance(w[0], w[1], centre) > 48.0)
                })
        })
        .take(n)
        .collect();
    assert_eq!(far.len(), n, "cells far from every path");
    (app, agents, far)
}

#[test]
fn an_edit_looks_only_at_agents_near_it() {
    let (mut app, _, far) = agents_and_far_cells(1);
    let far = far[0];
    let before = app.world().resource::<PathfindingDiagnostics>().edit_checks;
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(far, false)
        .unwrap();
    app.update();
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.edit_checks, before, "no agent is near the edit");
    assert_eq!(d.queued + d.in_flight, 0);
}

fn segment_point_distance(a: DVec2, b: DVec2, p: DVec2) -> f64 {
    let d = b - a;
    let t = ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0);
    p.distance(a + d * t)
}

#[test]
fn thousands_of_edits_between_two_frames_replan_only_the_agents_they_affect() {
    // Cells far from every path, toggled 3,000 times one by one, then 400
    // more times in one batch.
    let (mut app, agents, far) = agents_and_far_cells(50);
    let before = *app.world().resource::<PathfindingDiagnostics>();
    {
        let mut nav = app.world_mut().resource_mut::<NavGrid>();
        for i in 0..3000 {
            nav.set_cell_free(far[i % far.len()], i % 2 == 1).unwrap();
        }
        nav.edit(|e| {
            for i in 0..400 {
                e.set_free(far[i % far.len()], i % 2 == 1)?;
            }
            Ok(())
        })
        .unwrap();
    }
    app.update();
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(
        d.edit_checks, before.edit_checks,
        "no agent is near the edits"
    );
    assert_eq!(
        d.searches_started, before.searches_started,
        "nobody replans"
    );
    // One more edit, across a path, replans that agent only.
    let (e, _, _) = agents[0];
    let path = nav_path(&app, e);
    let (a, b) = (path.grid_waypoints[0], path.grid_waypoints[1]);
    let on = (1..20)
        .map(|i| a.lerp(b, f64::from(i) / 20.0))
        .map(|p| UVec2::new(p.x as u32, p.y as u32))
        .find(|c| app.world().resource::<NavGrid>().grid().is_free(*c))
        .unwrap();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(on, false)
        .unwrap();
    settle(&mut app);
    let log = app.world().resource::<EventLog>();
    let replanned: HashSet<Entity> = log
        .ready
        .iter()
        .filter(|r| r.reason != PlanReason::NewRequest)
        .map(|r| r.entity)
        .collect();
    assert!(replanned.contains(&e));
    assert!(replanned.len() <= 2, "{replanned:?}");
}

/// An agent whose search ran out of the node budget fails with that reason;
/// raising the budget replans it (a lower one, or another setting, does
/// not).
#[test]
fn a_raised_node_budget_replans_the_agents_that_ran_out_of_it() {
    let mut app = app_with(arena());
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .node_budget = Some(3);
    let nav = app.world().resource::<NavGrid>().clone();
    let (a, b) = random_pairs(nav.grid(), 20, 0xB0D6)
        .into_iter()
        .max_by(|p, q| {
            p.0.as_vec2()
                .distance(p.1.as_vec2())
                .total_cmp(&q.0.as_vec2().distance(q.1.as_vec2()))
        })
        .unwrap();
    let (start, goal) = (nav.cell_center(a), nav.cell_center(b));
    let agent = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    settle(&mut app);
    assert!(
        matches!(
            status(&app, agent),
            PathStatus::Failed(PathFailure::BudgetExhausted { .. })
        ),
        "{:?}",
        status(&app, agent)
    );
    // A lower budget and another setting leave it alone.
    {
        let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
        settings.node_budget = Some(2);
        settings.replan_distance = 3.0;
    }
    for _ in 0..20 {
        app.update();
    }
    assert!(app.world().resource::<EventLog>().ready.is_empty());
    assert_eq!(app.world().resource::<EventLog>().failed.len(), 1);
    // No budget: it replans and gets its path.
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .node_budget = None;
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let ready = &app.world().resource::<EventLog>().ready;
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0].reason, PlanReason::BudgetChanged);
}

/// With the default settings a search that would flood a huge grid stops at
/// the default node budget: the agent stands with an empty path and a
/// `PathFailed` event; a new grid replans it.
#[test]
fn the_default_node_budget_fails_a_runaway_search_and_a_new_grid_replans_it() {
    let (grid, start, goal) = walled_pocket(2400);
    let size = grid.width();
    let nav = NavGrid::new(grid, GridTransform::default());
    let (start, goal) = (nav.to_world(start), nav.to_world(goal));
    let mut app = app_with(nav);
    assert_eq!(
        app.world().resource::<PathfindingSettings>().node_budget,
        Some(DEFAULT_NODE_BUDGET)
    );
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(start),
            PathRequest::to(goal).with_algorithm(Algorithm::AStar),
        ))
        .id();
    settle(&mut app);
    assert_eq!(
        status(&app, agent),
        PathStatus::Failed(PathFailure::BudgetExhausted {
            expanded: DEFAULT_NODE_BUDGET
        })
    );
    assert!(nav_path(&app, agent).is_empty());
    let failed = &app.world().resource::<EventLog>().failed;
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].entity, agent);
    // The box is gone in the new grid: the search fits in the budget.
    app.insert_resource(NavGrid::new(
        Grid::new(size, size).unwrap(),
        GridTransform::default(),
    ));
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let ready = &app.world().resource::<EventLog>().ready;
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0].reason, PlanReason::GridReplaced);
}

/// An agent whose cell is blocked under it walks out even when its search
/// fails (here: its goal is unreachable and the policy is to fail).
#[test]
fn an_agent_in_a_wall_walks_out_even_without_a_path() {
    let nav = NavGrid::from_ascii(
        "..........
         .....#####
         .....#...#
         .....#####",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    app.insert_resource(SteeringClock::fixed(0.05));
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .fallback = FallbackPolicy::Fail;
    // World y is up: grid row 2 spans y in [1, 2].
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(2.5, 1.5)),
            PathRequest::to(Vec2::new(7.5, 1.5)), // inside the closed box
            PathFollower::default(),
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Unreachable);
    // A wall appears under the agent.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(1, 1, 4, 3), false)
        .unwrap();
    settle(&mut app);
    for _ in 0..200 {
        app.update();
    }
    assert_eq!(status(&app, agent), PathStatus::Unreachable);
    // Out at the nearest walkable point: straight down to the wall's edge
    // (grid row 3 starts at world y 1).
    let nav = app.world().resource::<NavGrid>().clone();
    let here = app.world().get::<NavPosition>(agent).unwrap().0;
    assert!(nav.grid().is_point_traversable(nav.to_grid(here)), "{here}");
    assert_eq!(
        here,
        Vec2::new(2.5, 1.0),
        "walked to the nearest walkable point"
    );
}

/// The planner and the fallback policy changed in the same frame: an agent
/// the new planner leaves alone (it has no path to follow) still replans
/// for the new policy.
#[test]
fn a_fallback_change_with_an_algorithm_change_still_replans_unreachable_agents() {
    let nav = NavGrid::from_ascii(
        "................
         .........#####..
         .........#...#..
         .........#####..",
        GridTransform::default(),
    )
    .unwrap();
    let mut app = app_with(nav);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .fallback = FallbackPolicy::Fail;
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            PathRequest::to(Vec2::new(11.5, 1.5)), // inside the closed box
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Unreachable);
    {
        let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
        settings.fallback = FallbackPolicy::ClosestReachable;
        settings.algorithm = Algorithm::LazyTheta;
    }
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Fallback);
}

/// A room 12 x 8 with a pillar, and a 2-cell-wide corridor out to a second
/// room on the right: too narrow for any agent wider than a point.
const ROOMS: &str = "@@@@@@@@@@@@@@@@@@@@@@
                     @..........@@@@@.....@
                     @..........@@@@@.....@
                     @...@@.....@@@@@.....@
                     @...@@...............@
                     @....................@
                     @..........@@@@@.....@
                     @..........@@@@@.....@
                     @@@@@@@@@@@@@@@@@@@@@@";

#[test]
fn a_wide_agent_keeps_its_radius_and_gets_fallback_where_it_does_not_fit() {
    let nav = NavGrid::from_ascii(ROOMS, GridTransform::default()).unwrap();
    let mut app = app_on_eroded_grids(nav);
    // World y is up: grid row y spans world [8 - y, 9 - y].
    let world = |x: f32, y: f32| Vec2::new(x, 9.0 - y);
    let wide = app
        .world_mut()
        .spawn((
            NavPosition(world(2.5, 6.5)),
            PathRequest::to(world(1.5, 4.5))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    let through = app
        .world_mut()
        .spawn((
            NavPosition(world(2.5, 6.5)),
            PathRequest::to(world(18.5, 5.0))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    let point = app
        .world_mut()
        .spawn((
            NavPosition(world(2.5, 6.5)),
            PathRequest::to(world(18.5, 5.0)),
        ))
        .id();
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    let clearance = nav.clearance_of(0.5).unwrap();
    assert_eq!(
        nav.clearances().collect::<Vec<_>>(),
        vec![(ProfileId::DEFAULT, clearance)]
    );
    let grid = nav.grid();
    for (e, radius) in [(wide, 0.5), (through, 0.5), (point, 0.0)] {
        let path = nav_path(&app, e);
        for w in path.grid_waypoints.windows(2) {
            for i in 0..=64 {
                let p = w[0].lerp(w[1], f64::from(i) / 64.0);
                let near = (-2..=2)
                    .flat_map(|dy| (-2..=2).map(move |dx| (dx, dy)))
                    .map(|(dx, dy)| (p.x.floor() as i64 + dx, p.y.floor() as i64 + dy))
                    .filter(|&(x, y)| !grid.is_free_xy(x, y))
                    .map(|(x, y)| {
                        let dx = (x as f64 - p.x).max(p.x - (x + 1) as f64).max(0.0);
                        let dy = (y as f64 - p.y).max(p.y - (y + 1) as f64).max(0.0);
                        dx.hypot(dy)
                    })
                    .fold(f64::INFINITY, f64::min);
                assert!(near >= radius - 1e-9, "{e}: {p} is {near} from a wall");
            }
        }
    }
    // A goal half a cell from the wall is too close: the path ends at the
    // closest point where the agent fits, half a cell further.
    assert_eq!(status(&app, wide), PathStatus::Fallback);
    assert_eq!(
        nav_path(&app, wide).grid_waypoints.last(),
        Some(&DVec2::new(2.0, 4.5))
    );
    // The corridor is 2 cells wide: the point agent goes through, the wide
    // one stops short of it.
    assert_eq!(status(&app, point), PathStatus::Ready);
    assert_eq!(status(&app, through), PathStatus::Fallback);
    assert!(nav_path(&app, through).grid_waypoints.last().unwrap().x <= 11.0);

    // Closing the corridor changes nothing the wide agents see (their
    // eroded grid is blocked there already): only the point agent replans.
    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(12, 4, 15, 6), false)
        .unwrap();
    settle(&mut app);
    let replanned: Vec<Entity> = app
        .world()
        .resource::<EventLog>()
        .ready
        .iter()
        .map(|r| r.entity)
        .collect();
    assert_eq!(replanned, vec![point]);
    assert_eq!(status(&app, point), PathStatus::Fallback);

    // Widening the corridor to 3 cells opens it for the wide agent: it
    // replans.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(11, 3, 16, 6), true)
        .unwrap();
    settle(&mut app);
    assert_eq!(status(&app, through), PathStatus::Ready);
    assert_eq!(status(&app, wide), PathStatus::Fallback, "still too close");
}

#[test]
fn radius_changes_bad_radii_and_the_last_wide_agent_leaving() {
    let nav = NavGrid::new(Grid::new(24, 16).unwrap(), GridTransform::default());
    let mut app = app_on_eroded_grids(nav);
    let world = |x: f32, y: f32| Vec2::new(x, 16.0 - y);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(world(6.5, 6.5)),
            PathRequest::to(world(17.5, 8.5))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    let bad = app
        .world_mut()
        .spawn((
            NavPosition(world(6.5, 6.5)),
            PathRequest::to(world(17.5, 8.5)).with_radius(f32::NAN),
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    assert_eq!(
        status(&app, bad),
        PathStatus::Failed(PathFailure::BadRadius)
    );
    let small = app.world().resource::<NavGrid>().clearance_of(0.5).unwrap();
    let big = app.world().resource::<NavGrid>().clearance_of(1.5).unwrap();
    assert_eq!(
        app.world()
            .resource::<NavGrid>()
            .clearances()
            .collect::<Vec<_>>(),
        vec![(ProfileId::DEFAULT, small)]
    );

    // A new radius plans again, on the grid of its class; the old one goes.
    app.world_mut()
        .get_mut::<PathRequest>(agent)
        .unwrap()
        .radius = 1.5;
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let kept: Vec<_> = app.world().resource::<NavGrid>().clearances().collect();
    assert_eq!(kept, vec![(ProfileId::DEFAULT, big)]);
    let path = nav_path(&app, agent);
    let eroded = app
        .world()
        .resource::<NavGrid>()
        .grid_for(ProfileId::DEFAULT, big)
        .unwrap()
        .clone();
    for w in path.grid_waypoints.windows(2) {
        assert!(line_of_sight(&eroded, w[0], w[1]), "{path:?}");
    }

    // Once the last wide agent is gone, its grid goes at the next search;
    // one kept for good stays.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .keep_clearance(ProfileId::DEFAULT, small);
    app.world_mut().despawn(agent);
    let other = app
        .world_mut()
        .spawn((
            NavPosition(world(6.5, 6.5)),
            PathRequest::to(world(17.5, 8.5)),
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, other), PathStatus::Ready);
    let kept: Vec<_> = app.world().resource::<NavGrid>().clearances().collect();
    assert_eq!(kept, vec![(ProfileId::DEFAULT, small)]);
}

#[test]
fn a_wide_agent_walled_in_by_an_edit_walks_to_the_nearest_place_it_fits_in_sight() {
    let nav = NavGrid::from_ascii(ROOMS, GridTransform::default()).unwrap();
    let mut app = app_on_eroded_grids(nav);
    let world = |x: f32, y: f32| Vec2::new(x, 9.0 - y);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(world(7.5, 5.5)),
            PathRequest::to(world(7.5, 5.5))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    // A wall raised next to it: it no longer fits where it stands, and is
    // given the way out at once (the nearest place it fits, in sight).
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(8, 5), false)
        .unwrap();
    app.update();
    let path = nav_path(&app, agent);
    assert!(path.start_moved, "{path:?}");
    let exit = path.grid_waypoints[0];
    let nav = app.world().resource::<NavGrid>();
    let eroded = nav
        .grid_for(ProfileId::DEFAULT, nav.clearance_of(0.5).unwrap())
        .unwrap();
    assert!(eroded.is_point_traversable(exit), "{exit}");
    assert!(line_of_sight(nav.grid(), DVec2::new(7.5, 5.5), exit));
    assert!(DVec2::new(7.5, 5.5).distance(exit) <= 1.0 + 1e-9, "{exit}");
    settle(&mut app);
}

#[test]
fn a_disc_goes_through_a_corridor_it_fits_and_replans_when_edits_close_or_open_it() {
    // Agents of a radius plan on the mesh for their radius, by Anya and by
    // Lazy Theta* alike: a disc 1 cell wide fits through the corridor 2
    // cells wide (an eroded grid closes it), keeping its radius from the
    // walls.
    let nav = NavGrid::from_ascii(ROOMS, GridTransform::default()).unwrap();
    let mut app = app_with(nav);
    let world = |x: f32, y: f32| Vec2::new(x, 9.0 - y);
    let through = app
        .world_mut()
        .spawn((
            NavPosition(world(2.5, 6.5)),
            PathRequest::to(world(18.5, 5.0)).with_radius(0.5),
        ))
        .id();
    let small = app
        .world_mut()
        .spawn((
            NavPosition(world(2.5, 6.5)),
            PathRequest::to(world(18.5, 5.0)).with_radius(0.3),
        ))
        .id();
    let lazy = app
        .world_mut()
        .spawn((
            NavPosition(world(2.5, 6.5)),
            PathRequest::to(world(18.5, 5.0))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    assert_eq!(nav.clearances().count(), 0, "no eroded grid for meshes");
    assert_eq!(nav_path(&app, lazy).algorithm, Some(Algorithm::LazyTheta));
    for (e, r) in [(through, 0.5), (small, 0.3), (lazy, 0.5)] {
        assert_eq!(status(&app, e), PathStatus::Ready);
        let path = nav_path(&app, e);
        assert_eq!(path.end(), Some(world(18.5, 5.0)));
        if let Err(e2) = keeps_radius(nav.grid(), &path.grid_waypoints, r) {
            panic!("{e}: {e2}; {path:?}");
        }
    }

    // Closing the corridor blocks both paths: they replan, as close as
    // they can get.
    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(12, 4, 15, 6), false)
        .unwrap();
    settle(&mut app);
    for e in [through, small, lazy] {
        assert_eq!(status(&app, e), PathStatus::Fallback);
        let end = *nav_path(&app, e).grid_waypoints.last().unwrap();
        assert!(end.x <= 12.0, "{e} ends at {end}");
    }

    // Opening it again opens it for both.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(12, 4, 15, 6), true)
        .unwrap();
    settle(&mut app);
    let nav = app.world().resource::<NavGrid>().clone();
    for (e, r) in [(through, 0.5), (small, 0.3), (lazy, 0.5)] {
        assert_eq!(status(&app, e), PathStatus::Ready, "{e}");
        if let Err(e2) = keeps_radius(nav.grid(), &nav_path(&app, e).grid_waypoints, r) {
            panic!("{e}: {e2}");
        }
    }
}

#[test]
fn a_disc_an_edit_closes_in_on_stops_and_walks_back_onto_its_mesh() {
    let nav = NavGrid::new(Grid::new(12, 12).unwrap(), GridTransform::default());
    let mut app = app_with(nav);
    // World y is up: grid row y spans world [11 - y, 12 - y].
    let world = |x: f32, y: f32| Vec2::new(x, 12.0 - y);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(world(5.75, 5.5)),
            PathRequest::to(world(5.75, 9.5)).with_radius(0.5),
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    // A wall raised a quarter of a cell from it: it no longer fits where it
    // stands; its new path starts where it fits, close by.
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(UVec2::new(6, 5), false)
        .unwrap();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let path = nav_path(&app, agent);
    assert!(path.start_moved, "{path:?}");
    assert_eq!(path.next, 0, "it walks to the start first");
    let nav = app.world().resource::<NavGrid>().clone();
    if let Err(e) = keeps_radius(nav.grid(), &path.grid_waypoints, 0.5) {
        panic!("{e}: {path:?}");
    }
    let exit = path.grid_waypoints[0];
    assert!(DVec2::new(5.75, 5.5).distance(exit) <= 0.25 + 0.1, "{exit}");
}

/// A room, and a corridor one cell wide that turns away from it: nowhere in
/// the corridor does a wide agent fit, and no place where it does is in
/// sight.
const ROOM_AND_BENT_CORRIDOR: &str = "@@@@@@@@@@@@@@@
                                      @......@@@@@@@@
                                      @......@@@@@@@@
                                      @......@@@@@@@@
                                      @.............@
                                      @......@@@@@@.@
                                      @......@@@@@@.@
                                      @@@@@@@@@@@@@.@
                                      @@@@@@@@@@@@@.@
                                      @@@@@@@@@@@@@.@
                                      @@@@@@@@@@@@@@@";

/// A wide agent at the end of a corridor, where it does not fit and no
/// place that fits it is in sight, is moved into the room (by the game, or
/// walking out of a place an edit closed in on) while its search waits: the
/// answer "no room", true where the search started, is not where the agent
/// stands now. It is planned again from there.
#[test]
fn a_no_room_answer_for_where_an_agent_stood_is_not_applied_where_it_fits() {
    let nav = NavGrid::from_ascii(ROOM_AND_BENT_CORRIDOR, GridTransform::default()).unwrap();
    let mut app = app_on_eroded_grids(nav);
    // World y is up: grid row y spans world [10 - y, 11 - y].
    let world = |x: f32, y: f32| Vec2::new(x, 11.0 - y);
    let (stuck, room, goal) = (world(13.5, 9.5), world(3.5, 3.5), world(4.0, 2.5));
    // The search is sent, and waits on the held search threads.
    app.world_mut().resource_mut::<PathfindingSettings>().paused = true;
    let wide = app
        .world_mut()
        .spawn((NavPosition(stuck), PathRequest::to(goal).with_radius(0.5)))
        .id();
    app.update();
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.in_flight, 1, "the search should be sent: {d:?}");
    assert_eq!(status(&app, wide), PathStatus::Computing);
    app.world_mut().get_mut::<NavPosition>(wide).unwrap().0 = room;
    app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
    settle(&mut app);
    let log = app.world().resource::<EventLog>();
    assert!(log.failed.is_empty(), "{:?}", log.failed);
    assert_eq!(status(&app, wide), PathStatus::Ready);
    let path = nav_path(&app, wide);
    assert_eq!(path.end(), Some(goal));
    let nav = app.world().resource::<NavGrid>();
    assert_eq!(path.grid_waypoints[0], nav.to_grid(room), "{path:?}");
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(
        (d.searches_started, d.results_discarded, d.results_applied),
        (2, 1, 1),
        "{d:?}"
    );
}

/// A point of [`ROOM_AND_BENT_CORRIDOR`] in the world (y is up: grid row
/// `y` spans world `[10 - y, 11 - y]`).
fn corridor_world(x: f32, y: f32) -> Vec2 {
    Vec2::new(x, 11.0 - y)
}

/// A point in [`ROOM_AND_BENT_CORRIDOR`]'s room.
const CORRIDOR_GOAL: Vec2 = Vec2::new(4.0, 8.5);

/// Searches started so far.
fn searches_started(app: &App) -> u64 {
    app.world()
        .resource::<PathfindingDiagnostics>()
        .searches_started
}

/// An agent of radius 0.5 at the far end of [`ROOM_AND_BENT_CORRIDOR`]'s
/// corridor, where it fits nowhere in sight, heading for the room: after
/// one search, it has no room.
fn wide_agent_with_no_room(app: &mut App) -> Entity {
    let wide = app
        .world_mut()
        .spawn((
            NavPosition(corridor_world(13.5, 9.5)),
            PathRequest::to(CORRIDOR_GOAL).with_radius(0.5),
        ))
        .id();
    settle(app);
    assert_eq!(status(app, wide), PathStatus::Failed(PathFailure::NoRoom));
    assert_eq!(searches_started(app), 1);
    wide
}

/// The game moves `agent` to `to` (world), then the app settles.
fn move_and_settle(app: &mut App, agent: Entity, to: Vec2) {
    app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = to;
    settle(app);
}

/// A wide agent that got "no room" at the end of a corridor is moved by the
/// game: along the corridor, where it still fits nowhere in sight, nothing
/// is searched; into the room, it is planned from there.
#[test]
fn a_wide_agent_with_no_room_moved_to_where_it_fits_is_planned_again() {
    let nav = NavGrid::from_ascii(ROOM_AND_BENT_CORRIDOR, GridTransform::default()).unwrap();
    let mut app = app_on_eroded_grids(nav);
    let room = corridor_world(3.5, 3.5);
    let wide = wide_agent_with_no_room(&mut app);
    move_and_settle(&mut app, wide, corridor_world(13.5, 8.5));
    assert_eq!(status(&app, wide), PathStatus::Failed(PathFailure::NoRoom));
    assert_eq!(
        searches_started(&app),
        1,
        "nothing fits in sight: no search"
    );
    move_and_settle(&mut app, wide, room);
    assert_eq!(status(&app, wide), PathStatus::Ready);
    assert_eq!(searches_started(&app), 2);
    let path = nav_path(&app, wide);
    assert_eq!(path.end(), Some(CORRIDOR_GOAL));
    let nav = app.world().resource::<NavGrid>();
    assert_eq!(path.grid_waypoints[0], nav.to_grid(room), "{path:?}");
    let log = app.world().resource::<EventLog>();
    assert_eq!(
        log.ready.last().map(|r| r.reason),
        Some(PlanReason::Moved),
        "{:?}",
        log.ready
    );
}

/// The same on the mesh for the agent's radius, which only the searches
/// hold: a wide agent with no room moved anywhere is searched for again;
/// moved along the corridor out of sight of any place that fits it, it
/// still has no room (one search, no more); moved into the corridor's arm
/// that sees the room, where it does not fit either, it walks into the
/// room.
#[test]
fn a_wide_agent_with_no_room_on_its_mesh_moved_to_where_it_sees_room_is_planned_again() {
    let nav = NavGrid::from_ascii(ROOM_AND_BENT_CORRIDOR, GridTransform::default()).unwrap();
    let mut app = app_with(nav);
    let wide = wide_agent_with_no_room(&mut app);
    move_and_settle(&mut app, wide, corridor_world(13.5, 8.5));
    assert_eq!(status(&app, wide), PathStatus::Failed(PathFailure::NoRoom));
    assert_eq!(
        searches_started(&app),
        2,
        "one search from where it was moved"
    );
    // It does not fit there either (walls half a cell above and below):
    // only its search sees the room.
    let grid = app.world().resource::<NavGrid>().grid().clone();
    assert!(!grid.is_free(UVec2::new(10, 3)) && !grid.is_free(UVec2::new(10, 5)));
    move_and_settle(&mut app, wide, corridor_world(10.5, 4.5));
    assert_eq!(status(&app, wide), PathStatus::Ready);
    assert_eq!(searches_started(&app), 3);
    let path = nav_path(&app, wide);
    assert_eq!(path.end(), Some(CORRIDOR_GOAL));
    let log = app.world().resource::<EventLog>();
    assert_eq!(
        log.ready.last().map(|r| r.reason),
        Some(PlanReason::Moved),
        "{:?}",
        log.ready
    );
}

/// A corridor three cells wide: only its middle row is wide enough for an
/// agent of radius 0.5.
const WIDE_CORRIDOR: &str = "@@@@@@@@@@@@@@@@@@@@@@
                             @....................@
                             @....................@
                             @....................@
                             @@@@@@@@@@@@@@@@@@@@@@";

/// Walls raised around a wide agent walking down a corridor, closing it in
/// where no place that fits it is in sight (no way out): it stops where it
/// stands instead of walking on along its old path into the new wall while
/// its new search runs.
#[test]
fn a_wide_agent_walled_in_with_no_way_out_stops_where_it_stands() {
    let nav = NavGrid::from_ascii(WIDE_CORRIDOR, GridTransform::default()).unwrap();
    let mut app = app_on_eroded_grids(nav);
    // World y is up: grid row y spans world [4 - y, 5 - y].
    let world = |x: f32, y: f32| Vec2::new(x, 5.0 - y);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(world(3.5, 2.5)),
            PathRequest::to(world(18.5, 2.5))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
            PathFollower {
                speed: 12.0,
                arrive_radius: 0.01,
            },
        ))
        .id();
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    // On its path, mid-corridor; searches held from now on, so that the
    // new one does not end the walk early.
    app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = world(9.5, 2.5);
    app.world_mut().resource_mut::<PathfindingSettings>().paused = true;
    app.update();
    // Above it (so it no longer fits the eroded grid there, though it keeps
    // its radius), and across the corridor two cells behind and ahead.
    {
        let mut nav = app.world_mut().resource_mut::<NavGrid>();
        for cell in [UVec2::new(9, 1), UVec2::new(7, 2), UVec2::new(11, 2)] {
            nav.set_cell_free(cell, false).unwrap();
        }
    }
    let nav = app.world().resource::<NavGrid>().clone();
    let eroded = nav
        .grid_for(ProfileId::DEFAULT, nav.clearance_of(0.5).unwrap())
        .unwrap()
        .clone();
    let at = nav.to_grid(world(9.5, 2.5));
    assert!(!eroded.is_point_traversable(at));
    assert_eq!(
        bevy_anyangle::clearance::start_point(
            nav.grid(),
            &eroded,
            nav.clearance_of(0.5).unwrap(),
            at
        ),
        None,
        "no way out in sight"
    );
    app.insert_resource(SteeringClock::fixed(1.0 / 60.0));
    for frame in 0..30 {
        app.update();
        let p = app.world().get::<NavPosition>(agent).unwrap().0;
        assert!(
            p.distance(world(9.5, 2.5)) < 1e-4,
            "frame {frame}: it walked on to {p}: {:?} {:?}",
            status(&app, agent),
            nav_path(&app, agent)
        );
    }
    app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Failed(PathFailure::NoRoom));
}

/// A lake in a field: row 0 and row 4 are dry, rows 1-3 water between
/// columns 1 and 8.
const LAKE: &str = "..........
                    .WWWWWWWW.
                    .WWWWWWWW.
                    .WWWWWWWW.
                    ..........";

#[test]
fn a_boat_and_a_soldier_take_different_routes_and_terrain_edits_replan_them() {
    use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};
    let mut nav = NavGrid::from_terrain(
        TerrainMap::from_ascii(LAKE).unwrap(),
        GridTransform::default(),
    );
    let boat = nav
        .add_profile(Profile::impassable().with(Terrain::WATER, 1.0).unwrap())
        .unwrap();
    let wader = nav
        .add_profile(Profile::default().with(Terrain::WATER, 3.0).unwrap())
        .unwrap();
    let other = NavGrid::from_ascii(LAKE, GridTransform::default()).unwrap();
    assert!(matches!(
        other.clone().add_profile(Profile::default()),
        Err(bevy_anyangle::plugin::NavGridError::NoTerrain)
    ));
    let mut app = app_with(nav);
    // World y is up: grid row y spans world [4 - y, 5 - y].
    let world = |x: f32, y: f32| Vec2::new(x, 5.0 - y);
    let mut spawn =
        |request: PathRequest, at: Vec2| app.world_mut().spawn((NavPosition(at), request)).id();
    let soldier = spawn(PathRequest::to(world(9.5, 2.5)), world(0.5, 2.5));
    let sailor = spawn(
        PathRequest::to(world(8.5, 2.5)).with_profile(boat),
        world(1.5, 2.5),
    );
    let wading = spawn(
        PathRequest::to(world(9.5, 2.5)).with_profile(wader),
        world(0.5, 2.5),
    );
    let stubborn = spawn(
        PathRequest::to(world(9.5, 2.5))
            .with_profile(wader)
            .with_algorithm(Algorithm::Anya),
        world(0.5, 2.5),
    );
    settle(&mut app);
    // No part of the path inside a water cell (rows 1-3, columns 1-8).
    let dry = |p: &NavPath| {
        p.grid_waypoints.windows(2).all(|w| {
            (0..256).all(|i| {
                let q = w[0].lerp(w[1], (f64::from(i) + 0.5) / 256.0);
                !((1.0..9.0).contains(&q.x) && (1.0..4.0).contains(&q.y))
                    || q.x.fract() == 0.0
                    || q.y.fract() == 0.0
            })
        })
    };
    // The soldier walks round the lake, the boat sails straight across.
    assert_eq!(status(&app, soldier), PathStatus::Ready);
    assert!(
        dry(&nav_path(&app, soldier)),
        "{:?}",
        nav_path(&app, soldier)
    );
    assert_eq!(status(&app, sailor), PathStatus::Ready);
    assert_eq!(nav_path(&app, sailor).grid_waypoints.len(), 2);
    // Water costs the wader 3 a cell: round is cheaper than through.
    assert_eq!(status(&app, wading), PathStatus::Ready);
    assert!(dry(&nav_path(&app, wading)), "{:?}", nav_path(&app, wading));
    // (No planner named: Theta* with costs, not Anya.)
    assert_eq!(nav_path(&app, wading).algorithm, Some(Algorithm::LazyTheta));
    assert_eq!(
        status(&app, stubborn),
        PathStatus::Failed(PathFailure::CostsNotSupported)
    );

    // A dam across the lake: land for the soldier, a wall for the boat,
    // which replans and stops at the dam.
    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_terrain(URect::new(5, 1, 6, 4), Terrain::GROUND)
        .unwrap();
    settle(&mut app);
    assert_eq!(status(&app, sailor), PathStatus::Fallback);
    assert!(nav_path(&app, sailor).grid_waypoints.last().unwrap().x <= 5.0);
    let reasons = app.world().resource::<EventLog>().ready_reasons();
    assert_eq!(reasons.get(&sailor), Some(&PlanReason::PathBlocked));

    // A new profile is a new request: planned again.
    app.world_mut().resource_mut::<EventLog>().ready.clear();
    app.world_mut()
        .get_mut::<PathRequest>(soldier)
        .unwrap()
        .profile = wader;
    settle(&mut app);
    let reasons = app.world().resource::<EventLog>().ready_reasons();
    assert_eq!(reasons.get(&soldier), Some(&PlanReason::NewRequest));

    // A profile another grid registered is unknown here.
    let mut app = app_with(other);
    let lost = app
        .world_mut()
        .spawn((
            NavPosition(world(0.5, 0.5)),
            PathRequest::to(world(9.5, 0.5)).with_profile(boat),
        ))
        .id();
    settle(&mut app);
    assert_eq!(
        status(&app, lost),
        PathStatus::Failed(PathFailure::UnknownProfile)
    );
}

/// Polyanya in the plugin: agents get Anya's path lengths, agents with a
/// radius (planned on the meshes of their eroded grids) included, and again
/// after an edit, on meshes the search threads bring up to date with it.
#[test]
fn polyanya_agents_get_anyas_lengths_before_and_after_edits() {
    let grid = Grid::from_movingai(&map("AR0011SR.map")).unwrap();
    let pairs = random_pairs(&grid, 200, 23);
    let run = |algorithm: Algorithm| {
        let nav = NavGrid::new(grid.clone(), GridTransform::default());
        let mut app = app_with_plugin(nav.clone(), AnyAnglePlugin::default());
        let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
        settings.algorithm = algorithm;
        // (Agents of a radius on eroded grids, where Anya and Polyanya
        // plan as they do for points.)
        settings.radius_meshes = false;
        let world = app.world_mut();
        let agents: Vec<Entity> = pairs
            .iter()
            .enumerate()
            .map(|(i, &(s, g))| {
                let request = match i % 3 {
                    0 => PathRequest::to(nav.cell_center(g)).with_radius(0.6),
                    1 => PathRequest::to(nav.cell_center(g)).with_radius(1.2),
                    _ => PathRequest::to(nav.cell_center(g)),
                };
                world.spawn((NavPosition(nav.cell_center(s)), request)).id()
            })
            .collect();
        settle(&mut app);
        let before: Vec<(PathStatus, NavPath)> = agents
            .iter()
            .map(|&e| (status(&app, e), nav_path(&app, e)))
            .collect();
        // A wall across the middle of the map.
        let (w, h) = (grid.width(), grid.height());
        app.world_mut()
            .resource_mut::<NavGrid>()
            .set_rect_free(URect::new(w / 4, h / 2, 3 * w / 4, h / 2 + 2), false)
            .unwrap();
        settle(&mut app);
        let after: Vec<(PathStatus, NavPath)> = agents
            .iter()
            .map(|&e| (status(&app, e), nav_path(&app, e)))
            .collect();
        (before, after)
    };
    let (anya_before, anya_after) = run(Algorithm::Anya);
    let (poly_before, poly_after) = run(Algorithm::Polyanya);
    let mut replanned = 0;
    for (anya, poly) in [(&anya_before, &poly_before), (&anya_after, &poly_after)] {
        for (i, (a, p)) in anya.iter().zip(poly).enumerate() {
            assert_eq!(a.0, p.0, "agent {i}");
            assert_eq!(p.1.algorithm, Some(Algorithm::Polyanya), "agent {i}");
            assert_eq!(a.1.grid_version, p.1.grid_version, "agent {i}");
            let (la, lp) = (f64::from(a.1.length), f64::from(p.1.length));
            assert!(
                (la - lp).abs() <= 1e-4 * la.max(1.0),
                "agent {i}: Anya {la}, Polyanya {lp}"
            );
        }
    }
    for (b, a) in poly_before.iter().zip(&poly_after) {
        replanned += usize::from(b.1.grid_version != a.1.grid_version);
    }
    assert!(replanned > 10, "the wall replans agents: {replanned}");
}

/// Agents asking for a first path are served while edits keep more urgent
/// searches coming faster than the searches can answer: an agent that has
/// waited half a second goes ahead of them.
#[test]
fn a_first_path_is_not_starved_by_a_stream_of_urgent_replans() {
    // A wall across the middle with a four-cell gap that every path uses.
    let (w, h) = (48_u32, 40_u32);
    let picture: String = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| {
                    if x == 24 && !(18..22).contains(&y) {
                        '#'
                    } else {
                        '.'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let nav = NavGrid::from_ascii(&picture, GridTransform::default()).unwrap();
    // On the main thread, a small budget a frame: a few searches a frame.
    let mut app = app_with_threads(nav, Some(0), |s| {
        s.main_thread_budget = Duration::from_micros(300);
        s.shared_searches = false;
    });
    let mut crowd = Vec::new();
    for k in 0..300_u32 {
        let from = Vec2::new(2.5 + (k % 20) as f32, 1.5 + (k / 20) as f32 * 2.5);
        let to = Vec2::new(45.5 - (k % 20) as f32 * 0.5, 38.5 - (k / 20) as f32 * 2.5);
        crowd.push(
            app.world_mut()
                .spawn((NavPosition(from), PathRequest::to(to)))
                .id(),
        );
    }
    let mut newcomer = None;
    let mut answered_after = None;
    let mut longest = 0;
    for frame in 0..400_u32 {
        // Two gap cells blocked and freed in turn: every path through the
        // gap comes near one, and is blocked every other frame.
        let cell = UVec2::new(24, 19 + frame % 2);
        {
            let mut nav = app.world_mut().resource_mut::<NavGrid>();
            nav.set_cell_free(cell, false).unwrap();
            nav.set_cell_free(UVec2::new(24, 20 - frame % 2), true)
                .unwrap();
        }
        if frame == 100 {
            newcomer = Some(
                app.world_mut()
                    .spawn((
                        NavPosition(Vec2::new(20.5, 30.5)),
                        PathRequest::to(Vec2::new(30.5, 30.5)),
                    ))
                    .id(),
            );
        }
        app.update();
        longest = longest.max(
            app.world()
                .resource::<PathfindingDiagnostics>()
                .longest_wait,
        );
        if let Some(e) = newcomer
            && answered_after.is_none()
            && status(&app, e) != PathStatus::Pending
            && status(&app, e) != PathStatus::Computing
        {
            answered_after = Some(frame - 100);
        }
    }
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert!(
        d.in_flight >= 100,
        "the urgent searches came faster than answered: {d:?}"
    );
    let answered = answered_after.expect("the newcomer was answered");
    assert!(answered <= 60, "answered after {answered} frames");
    assert!(longest <= 60, "an agent waited {longest} frames to be sent");
}
