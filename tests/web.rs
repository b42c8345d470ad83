//! The plugin in a game built for the web (`wasm32-unknown-unknown`), run
//! headless under Node by `wasm-bindgen-test-runner`:
//!
//! ```text
//! scripts/wasm-tools.sh
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!     cargo test --target wasm32-unknown-unknown --test web
//! ```
//!
//! The app is set up as a game's would be, with the default
//! [`AnyAnglePlugin`] and Bevy's `web` features on. Every wait is bounded by
//! a number of frames, never by the wall clock.

#![cfg(all(target_arch = "wasm32", target_os = "unknown"))]

use std::collections::HashMap;

use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPath, NavPosition, PathReady, PathRequest,
    PathStatus, PathfindingDiagnostics, PathfindingSettings, PlanReason, Replanning,
};
use bevy_anyangle::search::Algorithm;
use bevy_app::{App, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_math::{URect, UVec2, Vec2};
use bevy_time::TimePlugin;
use wasm_bindgen_test::wasm_bindgen_test;

/// How many frames every agent may take to get its path (about ten seconds
/// at 60 frames a second).
const MAX_FRAMES: usize = 600;

/// Every [`PathReady`], in order.
#[derive(Resource, Default)]
struct Ready(Vec<PathReady>);

fn app_with(nav: NavGrid) -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        TimePlugin,
        AnyAnglePlugin::default(),
    ))
    .insert_resource(nav)
    .init_resource::<Ready>()
    .add_observer(|ready: On<PathReady>, mut log: ResMut<Ready>| log.0.push(*ready));
    app.finish();
    app.cleanup();
    app
}

/// Spawns an agent standing at `start` that asks for a path to `goal`.
fn spawn(app: &mut App, start: Vec2, goal: Vec2) -> Entity {
    app.world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id()
}

/// The agents waiting for a first path or a new one, with their status.
fn waiting(world: &mut World) -> Vec<(Entity, PathStatus)> {
    world
        .query::<(Entity, &PathStatus, Has<Replanning>)>()
        .iter(world)
        .filter(|(_, s, replanning)| s.is_busy() || *replanning)
        .map(|(e, s, _)| (e, s.clone()))
        .collect()
}

/// Updates until no agent waits for a path (a first one or a new one);
/// returns the number of frames it took. Panics, naming the agents still
/// waiting, after [`MAX_FRAMES`].
fn settle(app: &mut App) -> usize {
    for frame in 1..=MAX_FRAMES {
        app.update();
        if waiting(app.world_mut()).is_empty() {
            return frame;
        }
    }
    let waiting = waiting(app.world_mut());
    panic!(
        "{} agents still wait for a path after {MAX_FRAMES} frames: {waiting:?}",
        waiting.len()
    );
}

fn nav_path(app: &App, e: Entity) -> NavPath {
    app.world().get::<NavPath>(e).unwrap().clone()
}

/// Checks that `e` has a path from `start` to `goal` whose every segment is
/// walkable on the current grid.
fn assert_walkable(app: &App, e: Entity, start: Vec2, goal: Vec2) {
    let nav = app.world().resource::<NavGrid>();
    let status = app.world().get::<PathStatus>(e).unwrap();
    assert_eq!(*status, PathStatus::Ready, "agent {e}");
    let path = nav_path(app, e);
    assert!(path.waypoints.len() >= 2, "agent {e}: {path:?}");
    assert!(
        path.waypoints[0].distance(start) < 1e-4,
        "agent {e}: path starts at {} not {start}",
        path.waypoints[0]
    );
    let end = path.end().unwrap();
    assert!(
        end.distance(goal) < 1e-4,
        "agent {e}: path ends at {end} not {goal}"
    );
    for w in path.waypoints.windows(2) {
        assert!(
            nav.line_of_sight(w[0], w[1]),
            "agent {e}: segment {} - {} crosses a wall",
            w[0],
            w[1]
        );
    }
    let length: f32 = path.waypoints.windows(2).map(|w| w[0].distance(w[1])).sum();
    assert!(
        (length - path.length).abs() < 1e-3 * (1.0 + length),
        "agent {e}: length {} vs {length}",
        path.length
    );
}

/// `n` start and goal points in the largest region of `nav`'s grid, spread
/// over the map.
fn spread_pairs(nav: &NavGrid, n: usize) -> Vec<(Vec2, Vec2)> {
    let grid = nav.grid();
    let mut sizes = HashMap::new();
    let mut free = Vec::new();
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            if let Some(r) = grid.region(i64::from(x), i64::from(y)) {
                *sizes.entry(r).or_insert(0_usize) += 1;
                free.push((r, UVec2::new(x, y)));
            }
        }
    }
    let big = sizes.into_iter().max_by_key(|&(_, n)| n).unwrap().0;
    let cells: Vec<Vec2> = free
        .into_iter()
        .filter(|&(r, _)| r == big)
        .map(|(_, c)| nav.cell_center(c))
        .collect();
    (0..n)
        .map(|i| {
            let a = cells[i * 7919 % cells.len()];
            let b = cells[(i * 104_729 + cells.len() / 2) % cells.len()];
            (a, b)
        })
        .collect()
}

#[wasm_bindgen_test]
fn agents_on_a_bundled_map_get_walkable_paths() {
    let nav = NavGrid::from_movingai(
        include_str!("../data/maps/arena.map"),
        GridTransform::default(),
    )
    .unwrap();
    let n = 24;
    let pairs = spread_pairs(&nav, n);
    let mut app = app_with(nav);
    let agents: Vec<(Entity, Vec2, Vec2)> = pairs
        .iter()
        .map(|&(s, g)| (spawn(&mut app, s, g), s, g))
        .collect();
    let frames = settle(&mut app);
    for &(e, s, g) in &agents {
        assert_walkable(&app, e, s, g);
    }
    assert_eq!(app.world().resource::<Ready>().0.len(), n);
    // No thread starts in the browser: the searches ran on the main thread.
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.search_threads, 0, "{d:?}");
    assert_eq!(d.searches_finished, n as u64, "{d:?}");
    wasm_bindgen_test::console_log!("{n} agents planned in {frames} frames");
}

#[wasm_bindgen_test]
fn a_wall_across_one_path_replans_that_agent_alone() {
    // Two halves split by a wall along row 8. World y is up: grid row r
    // spans world y in [15 - r, 16 - r].
    let mut picture = String::new();
    for y in 0..16 {
        for _ in 0..32 {
            picture.push(if y == 8 { '#' } else { '.' });
        }
        picture.push('\n');
    }
    let nav = NavGrid::from_ascii(&picture, GridTransform::default()).unwrap();
    let world = |x: f32, row: f32| Vec2::new(x, 16.0 - row);
    let mut app = app_with(nav);
    // Straight across the top half, and across the bottom half.
    let (top_start, top_goal) = (world(2.5, 4.5), world(29.5, 4.5));
    let (low_start, low_goal) = (world(2.5, 12.5), world(29.5, 12.5));
    let top = spawn(&mut app, top_start, top_goal);
    let low = spawn(&mut app, low_start, low_goal);
    settle(&mut app);
    assert_walkable(&app, top, top_start, top_goal);
    assert_walkable(&app, low, low_start, low_goal);
    assert_eq!(nav_path(&app, top).waypoints.len(), 2, "a straight line");
    let low_before = nav_path(&app, low);

    // A wall down column 16 of the top half, open at row 0 only.
    app.world_mut().resource_mut::<Ready>().0.clear();
    let changed = app
        .world_mut()
        .resource_mut::<NavGrid>()
        .set_rect_free(URect::new(16, 1, 17, 8), false)
        .unwrap();
    assert!(changed);
    settle(&mut app);

    assert_walkable(&app, top, top_start, top_goal);
    let around = nav_path(&app, top);
    assert!(
        around.waypoints.len() >= 3,
        "the new path goes round the wall: {around:?}"
    );
    let ready = &app.world().resource::<Ready>().0;
    assert_eq!(ready.len(), 1, "one replan: {ready:?}");
    assert_eq!(ready[0].entity, top);
    assert_eq!(ready[0].reason, PlanReason::PathBlocked);
    assert_eq!(
        nav_path(&app, low),
        low_before,
        "the agent in the other half keeps its path"
    );
}

#[wasm_bindgen_test]
fn polyanya_agents_get_anyas_statuses_and_lengths_in_the_browser() {
    let nav = NavGrid::from_movingai(
        include_str!("../data/maps/den520d.map"),
        GridTransform::default(),
    )
    .unwrap();
    let n = 16;
    let pairs = spread_pairs(&nav, n);
    // The same agents with Anya, then with Polyanya (whose first search
    // builds the map's mesh on the main thread, a chunk or so a slice),
    // before and after a wall goes up.
    let run = |algorithm: Algorithm| {
        let mut app = app_with(nav.clone());
        app.world_mut()
            .resource_mut::<PathfindingSettings>()
            .algorithm = algorithm;
        let agents: Vec<(Entity, Vec2, Vec2)> = pairs
            .iter()
            .map(|&(s, g)| (spawn(&mut app, s, g), s, g))
            .collect();
        let frames = settle(&mut app);
        let (mut lengths, mut statuses) = (Vec::new(), Vec::new());
        for &(e, s, g) in &agents {
            assert_walkable(&app, e, s, g);
            lengths.push(nav_path(&app, e).length);
        }
        let (w, h) = (nav.grid().width(), nav.grid().height());
        app.world_mut()
            .resource_mut::<NavGrid>()
            .set_rect_free(URect::new(w / 4, h / 2, 3 * w / 4, h / 2 + 2), false)
            .unwrap();
        settle(&mut app);
        // (A start or goal under the wall moves out of it: check the
        // segments, and compare statuses and lengths.)
        let nav = app.world().resource::<NavGrid>();
        for &(e, _, _) in &agents {
            let path = nav_path(&app, e);
            assert_eq!(path.algorithm, Some(algorithm), "agent {e}");
            for w in path.waypoints.windows(2) {
                assert!(nav.line_of_sight(w[0], w[1]), "agent {e}: {path:?}");
            }
            statuses.push(app.world().get::<PathStatus>(e).unwrap().clone());
            lengths.push(path.length);
        }
        (lengths, statuses, frames)
    };
    let (anya, anya_statuses, _) = run(Algorithm::Anya);
    let (polyanya, polyanya_statuses, frames) = run(Algorithm::Polyanya);
    assert_eq!(anya_statuses, polyanya_statuses);
    for (i, (a, p)) in anya.iter().zip(&polyanya).enumerate() {
        assert!(
            (a - p).abs() <= 1e-4 * a.max(1.0),
            "agent {i}: Anya {a}, Polyanya {p}"
        );
    }
    wasm_bindgen_test::console_log!("{n} Polyanya agents planned in {frames} frames");
}

mod lockstep_game;

/// The lockstep game of `tests/lockstep.rs`, played here in `wasm32` on
/// the main thread: frame by frame the same as on x86-64 with any number of
/// search threads (the hash of its frames is the one recorded there).
#[wasm_bindgen_test]
fn the_lockstep_game_plays_out_as_on_every_platform() {
    use lockstep_game::{Executor, GOLDEN, Game, fold};

    let (hashes, diagnostics) = Game::new(Executor::MainThread).play();
    wasm_bindgen_test::console_log!(
        "lockstep game: {} searches, {} shared",
        diagnostics.searches_started,
        diagnostics.shared_searches
    );
    assert_eq!(
        fold(&hashes),
        GOLDEN,
        "the game's hash in wasm32: {:#018x}",
        fold(&hashes)
    );
}
