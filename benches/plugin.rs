//! The Bevy plugin under load, on a 512 x 512 game map (`AR0011SR`), with
//! the default settings (Anya, 32 searches in flight):
//!
//! - `plugin/paths_ready/{1000,10000}`: from spawning that many agents with a
//!   `PathRequest` to every `PathStatus` being `Ready`, updating the app
//!   every millisecond (searches run on the async compute pool);
//! - `plugin/idle_frame/10000`: one `App::update` with 10,000 agents whose
//!   paths are all ready: the main-thread cost of the plugin when nothing
//!   happens;
//! - `plugin/edit/{frame,replans}` with 1,000 agents: blocking one cell that
//!   paths cross — the frame that applies the edit (main thread: region
//!   relabelling and picking the agents to replan), then until every replan
//!   has been applied.
//!
//! Agents go between random cells of one region, 10 to 60 cells apart (local
//! moves, as most game agents make). Apps and agents are built outside the
//! timed part; each timed part asserts that every agent ended with a path.
//!
//! ```text
//! cargo bench --bench plugin
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPath, NavPosition, PathRequest, PathStatus,
    PathfindingDiagnostics,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, TaskPoolPlugin};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }
}

fn nav_grid() -> NavGrid {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/maps/AR0011SR.map"
    ))
    .expect("AR0011SR.map is bundled with the crate");
    let nav = NavGrid::from_movingai(&text, GridTransform::default()).expect("a bundled map");
    assert_eq!(nav.grid().size(), UVec2::new(512, 512));
    nav
}

/// `n` start and goal cells in one region, 10 to 60 cells apart.
fn pairs(grid: &Grid, n: usize, seed: u64) -> Vec<(UVec2, UVec2)> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let s = UVec2::new(rng.below(grid.width()), rng.below(grid.height()));
        if !grid.is_free(i64::from(s.x), i64::from(s.y)) {
            continue;
        }
        let d = UVec2::new(rng.below(121), rng.below(121)).as_ivec2() - 60;
        let g = s.as_ivec2() + d;
        let len = d.as_vec2().length();
        if !(10.0..=60.0).contains(&len) || g.min_element() < 0 {
            continue;
        }
        let g = g.as_uvec2();
        if grid.contains(i64::from(g.x), i64::from(g.y)) && grid.same_region(s, g) && s != g {
            out.push((s, g));
        }
    }
    out
}

/// A headless app with the plugin and the map, and `n` agents requesting
/// paths (not yet updated).
fn app_with_agents(n: usize) -> App {
    let nav = nav_grid();
    let agents = pairs(nav.grid(), n, 0x5eed_0000 + n as u64);
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AnyAnglePlugin {
            steering: false,
            ..AnyAnglePlugin::default()
        },
    ));
    let spawn: Vec<(NavPosition, PathRequest)> = agents
        .iter()
        .map(|&(s, g)| {
            (
                NavPosition(nav.cell_center(s)),
                PathRequest::to(nav.cell_center(g)),
            )
        })
        .collect();
    app.insert_resource(nav);
    app.world_mut().spawn_batch(spawn);
    app.finish();
    app.cleanup();
    app
}

/// Whether no agent waits for a search and none is running.
fn settled(app: &mut App) -> bool {
    let world = app.world_mut();
    world.resource::<PathfindingDiagnostics>().in_flight == 0
        && !world
            .query::<&PathStatus>()
            .iter(world)
            .any(PathStatus::is_busy)
}

/// The pause between two frames while waiting for searches. A game never
/// runs updates back to back; doing so here would make the main thread and
/// the ECS executor compete with the search threads for the two cores of a
/// small machine (it more than doubles `paths_ready` here) and measure that
/// contention instead.
const FRAME_GAP: Duration = Duration::from_millis(1);

/// Updates until settled, pausing [`FRAME_GAP`] between frames; returns the
/// number of frames.
fn settle(app: &mut App) -> usize {
    let deadline = Instant::now() + Duration::from_mins(10);
    let mut frames = 0;
    loop {
        app.update();
        frames += 1;
        std::thread::sleep(FRAME_GAP);
        if settled(app) {
            return frames;
        }
        assert!(Instant::now() < deadline, "the plugin did not settle");
    }
}

/// Asserts that every agent has a path to its goal.
fn assert_all_ready(app: &mut App, n: usize) {
    let world = app.world_mut();
    let mut ready = 0;
    for (status, path) in world.query::<(&PathStatus, &NavPath)>().iter(world) {
        assert_eq!(*status, PathStatus::Ready);
        assert!(!path.is_empty());
        ready += 1;
    }
    assert_eq!(ready, n);
}

fn paths_ready(c: &mut Criterion) {
    let mut group = c.benchmark_group("plugin");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5));
    for n in [1000, 10_000] {
        group.bench_function(BenchmarkId::new("paths_ready", n), |b| {
            b.iter_batched(
                || app_with_agents(n),
                |mut app| {
                    settle(&mut app);
                    assert_all_ready(&mut app, n);
                    app
                },
                BatchSize::PerIteration,
            );
        });
    }

    let mut app = app_with_agents(10_000);
    settle(&mut app);
    assert_all_ready(&mut app, 10_000);
    group.bench_function(BenchmarkId::new("idle_frame", 10_000), |b| {
        b.iter(|| {
            app.update();
            assert_eq!(
                black_box(app.world().resource::<PathfindingDiagnostics>()).in_flight,
                0,
                "an idle frame starts no search"
            );
        });
    });
    drop(app);

    // Edits: block a cell that the most paths cross, time, free it again
    // (untimed), and so on.
    let n = 1000;
    let mut app = app_with_agents(n);
    settle(&mut app);
    let cell = busiest_cell(&mut app);
    let replans = |app: &App| {
        app.world()
            .resource::<PathfindingDiagnostics>()
            .searches_started
    };
    let set = |app: &mut App, free: bool| {
        app.world_mut()
            .resource_mut::<NavGrid>()
            .set_cell_free(cell, free)
            .expect("the cell is on the grid");
    };
    // One untimed round, to say how many agents the edit replans.
    let before = replans(&app);
    set(&mut app, false);
    settle(&mut app);
    eprintln!(
        "edit bench: blocking cell {cell} replans {} of {n} agents",
        replans(&app) - before
    );
    set(&mut app, true);
    settle(&mut app);
    for (name, whole) in [("frame", false), ("replans", true)] {
        group.bench_function(BenchmarkId::new("edit", name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let before = replans(&app);
                    let clock = Instant::now();
                    set(&mut app, false);
                    if whole {
                        settle(&mut app);
                    } else {
                        app.update();
                    }
                    total += clock.elapsed();
                    if whole {
                        assert!(replans(&app) > before, "the edit replans some agents");
                        assert_all_ready(&mut app, n);
                    }
                    set(&mut app, true);
                    settle(&mut app);
                }
                total
            });
        });
    }
    group.finish();
}

/// The free cell that the most paths cross (sampled at their segments'
/// points every half cell), not an agent's start or goal cell.
fn busiest_cell(app: &mut App) -> UVec2 {
    let world = app.world_mut();
    let nav = world.resource::<NavGrid>().clone();
    let mut count = std::collections::HashMap::<UVec2, usize>::new();
    let mut ends = std::collections::HashSet::new();
    for path in world.query::<&NavPath>().iter(world) {
        let w = &path.grid_waypoints;
        for end in [w[0], w[w.len() - 1]] {
            ends.insert(end.floor().as_uvec2());
        }
        let mut cells = std::collections::HashSet::new();
        for seg in w.windows(2) {
            let steps = (seg[0].distance(seg[1]) * 2.0).ceil().max(1.0) as u32;
            for k in 0..=steps {
                let p = seg[0].lerp(seg[1], f64::from(k) / f64::from(steps));
                cells.insert(p.floor().as_uvec2());
            }
        }
        for c in cells {
            *count.entry(c).or_default() += 1;
        }
    }
    let grid = nav.grid();
    let (cell, crossing) = count
        .into_iter()
        .filter(|(c, _)| {
            !ends.contains(c)
                && c.x < grid.width()
                && c.y < grid.height()
                && grid.is_free(i64::from(c.x), i64::from(c.y))
        })
        .max_by_key(|&(c, k)| (k, std::cmp::Reverse((c.x, c.y))))
        .expect("some path crosses a free cell");
    eprintln!("edit bench: blocking cell {cell}, crossed by about {crossing} of the paths");
    cell
}

criterion_group!(benches, paths_ready);
criterion_main!(benches);
