//! Lockstep: the same game played with `PathfindingSettings::lockstep`
//! on gives the same agents, positions, statuses and paths, to the bit, in
//! every frame, whatever runs the searches: one, two or four search
//! threads, the main thread in slices, or one thread beside two busy ones
//! that make its answers late.
//!
//! The game: 2,000 agents on a 256 x 256 city map, planned by Anya,
//! Polyanya and Lazy Theta\*; an eighth of them discs of radius 0.4 that
//! avoid each other; a tenth sent to one of three rally points (shared
//! searches), a twentieth following another agent (goals that move), the
//! others to points up to 40 cells away; a cell blocked or freed every
//! frame; agents despawned (some mid-search) and spawned every fifth
//! frame; new goals every third. Beside the grid, two floors (130 x 130
//! each) joined by ten walked links (two one way, one narrow, one costly),
//! with 300 agents routed across them (an eighth of radius 0.4): a cell of
//! a floor edited every frame, a link closed or opened every second, agents
//! despawned and spawned every tenth frame, a new goal every third. Each frame, every agent's position,
//! status and path go into a hash (in the order of the agents' own
//! numbers); every run must give the hash recorded for every platform, and
//! two runs the same hashes frame by frame.

#[path = "common/hog.rs"]
mod hog;
mod lockstep_game;

use bevy_anyangle::plugin::PathfindingDiagnostics;
use hog::Hog;
use lockstep_game::{AGENTS, Executor, GOLDEN, Game, fold};

fn same(name: &str, a: &[u64], b: &[u64]) {
    if let Some(frame) = a.iter().zip(b).position(|(x, y)| x != y) {
        panic!("{name}: the game differs from frame {frame} on");
    }
    assert_eq!(a.len(), b.len());
}

/// Plays the game on `executor` and checks it against the hash recorded
/// for every platform (`tests/web.rs` plays it in `wasm32`); returns the
/// frames' hashes and the diagnostics.
fn plays_as_recorded(executor: Executor, name: &str) -> (Vec<u64>, PathfindingDiagnostics) {
    let (hashes, diagnostics) = Game::new(executor).play();
    assert_eq!(
        fold(&hashes),
        GOLDEN,
        "{name}: the game's hash is {:#018x}",
        fold(&hashes)
    );
    (hashes, diagnostics)
}

// (Each executor in a test of its own: the test harness plays them side
// by side.)

#[test]
fn two_runs_on_one_search_thread_give_the_same_frames() {
    let (a, diagnostics) = plays_as_recorded(Executor::Threads(1), "one thread");
    assert!(
        diagnostics.searches_started > u64::from(AGENTS) && diagnostics.shared_searches > 0,
        "{diagnostics:?}"
    );
    let (b, _) = Game::new(Executor::Threads(1)).play();
    same("a second run", &a, &b);
}

#[test]
fn two_search_threads_give_the_same_game() {
    plays_as_recorded(Executor::Threads(2), "two threads");
}

#[test]
fn four_search_threads_give_the_same_game() {
    plays_as_recorded(Executor::Threads(4), "four threads");
}

#[test]
fn the_main_thread_gives_the_same_game() {
    plays_as_recorded(Executor::MainThread, "the main thread");
}

#[test]
fn a_search_thread_beside_a_cpu_hog_gives_the_same_game() {
    let hog = Hog::new();
    let (_, late) = plays_as_recorded(Executor::Threads(1), "beside a CPU hog");
    drop(hog);
    eprintln!(
        "lockstep: waited {:?} in all for late answers beside the hog",
        late.lockstep_wait_total
    );
}

/// A small app with `threads` search threads and lockstep `delay`, and
/// three agents asking for paths in its first frame.
fn small(threads: usize, delay: u32) -> (bevy_app::App, Vec<bevy_ecs::entity::Entity>) {
    use bevy_anyangle::plugin::{
        AnyAnglePlugin, GridTransform, Lockstep, NavGrid, NavPosition, PathRequest,
        PathfindingSettings,
    };
    use bevy_math::Vec2;

    let nav = NavGrid::from_ascii(
        "........
         ..####..
         ........",
        GridTransform::default(),
    )
    .expect("a grid");
    let mut app = bevy_app::App::new();
    app.add_plugins(AnyAnglePlugin {
        search_threads: Some(threads),
        ..AnyAnglePlugin::default()
    })
    .insert_resource(nav)
    .insert_resource(PathfindingSettings {
        lockstep: Some(Lockstep {
            delay,
            searches_per_frame: 64,
        }),
        ..PathfindingSettings::default()
    });
    app.finish();
    app.cleanup();
    let agents = (0..3)
        .map(|i| {
            let y = 0.5 + i as f32;
            app.world_mut()
                .spawn((
                    NavPosition(Vec2::new(0.5, y)),
                    PathRequest::to(Vec2::new(7.5, 2.5 - i as f32)),
                ))
                .id()
        })
        .collect();
    (app, agents)
}

#[test]
fn answers_are_applied_exactly_the_delay_after_their_search_was_sent() {
    use bevy_anyangle::plugin::PathStatus;

    for threads in [0, 1, 2] {
        for delay in [0, 1, 3] {
            let (mut app, agents) = small(threads, delay);
            let status = |app: &bevy_app::App, e| app.world().get::<PathStatus>(e).cloned();
            for frame in 0..=delay {
                app.update();
                // (Time for the threads to answer early: the answers wait.)
                std::thread::sleep(std::time::Duration::from_millis(10));
                for &e in &agents {
                    let s = status(&app, e);
                    if frame < delay {
                        assert_eq!(
                            s,
                            Some(PathStatus::Computing),
                            "{threads} threads, delay {delay}, frame {frame}"
                        );
                    } else {
                        assert_eq!(
                            s,
                            Some(PathStatus::Ready),
                            "{threads} threads, delay {delay}, frame {frame}"
                        );
                    }
                }
            }
        }
    }
}
