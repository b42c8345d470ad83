//! The Bevy plugin at game scale, each figure beside the bound the raw
//! planner sets on the same queries in the same run.
//!
//! - **All ready** (`all_ready/{map}/{agents}`): from spawning that many
//!   agents with a `PathRequest` to every agent having a path, with frames
//!   paced as a 60 fps game paces them (each frame starts 1/60 s after the
//!   previous one, or at once if the previous one ran late). Reported as
//!   frames and game time (frames / 60), beside the *raw bound*: the time
//!   one thread's `Planner` takes for the same queries, divided by the
//!   plugin's search threads.
//! - **Main thread** (`main_thread/{map}/{agents}`): the all-ready scenario
//!   without search threads (`search_threads: Some(0)`, as in the browser):
//!   searches run on the main thread within `main_thread_budget` (3 ms) a
//!   frame. Beside it the *main-thread bound*: the raw planner's
//!   single-thread time divided by the budget's share of a frame (3 ms of
//!   16.7); and the plugin's cost per frame (`frame_cost`: its systems, the
//!   searches included) at the median, the 99th percentile and the worst
//!   frame, beside the budget. As the raw planner's, the plugin's planner
//!   memory is warmed up first (20 point agents on other queries plan
//!   before the others spawn; with `RADIUS`, the mesh for the radius is
//!   built inside the measured frames).
//! - **One goal** (`one_goal/{map}/{agents}`): that many agents anywhere
//!   within 256 cells of one goal (on `AR0011SR`, the whole map) ask for a
//!   path to it at once: the all-ready time with shared searches (the
//!   default, `PathfindingSettings::shared_searches`) and with one search
//!   per agent, in one run, with the searches each ran and their time, the
//!   wall time until every agent has a path and the plugin's worst frame
//!   cost (answers applied by the thousand in one frame);
//!   beside them the raw planner's time for one shared search
//!   (`Planner::plan_many_on_mesh`, on a mesh built outside the clock) and
//!   for one search per agent, and the mesh's build time.
//! - **Big world** (`big_world/AR0011SRx16/{agents}`): that many agents on
//!   the 8192 x 8192 map, local moves anywhere and then within its
//!   north-west 1024 x 1024 cells: Anya's point agents (no mesh) beside
//!   Polyanya's point agents and agents of radius 0.5, their meshes built
//!   on demand (`MeshBuilding::Auto`) and whole; frames and game time
//!   until every agent has its answer, beside Anya's, and the bytes the
//!   shared meshes hold then (`PathfindingDiagnostics::mesh_bytes`) beside
//!   a whole mesh's, built outside the clock.
//! - **Door** (`door/{agents}`): a crowd of agents of radius 0.4 with
//!   `LocalAvoidance` (and, beside it, without) crosses a door 4 cells wide
//!   both ways, each side's crowd sent to one point past the wall; frames
//!   paced at 60 fps until every agent has finished its path. Reported:
//!   agent-frames closer to a wall than the radius, the overlap of agents
//!   (mean over every agent-frame, mean over the agents still walking, and
//!   the worst), the farthest an agent ended from its point beside the
//!   radius of a tightly packed crowd of that size, and the avoidance and
//!   plugin cost per frame (mean and worst).
//! - **Lockstep** (`lockstep/{map}/{agents}`): the all-ready scenario with
//!   `PathfindingSettings::lockstep` off and on (`Lockstep::default()`:
//!   answers applied two frames after their search was sent, 512 searches
//!   sent a frame), on the same queries in one run: frames, game time, wall
//!   time and the worst frame (`App::update`) of each, the time the main
//!   thread waited for late answers, and the ratio of the game times,
//!   beside the raw bound.
//! - **Floors** (`floors/{agents}`): four floors of `AR0011SR` side by
//!   side, 64 links (stairs, cost 4) between each two consecutive floors
//!   at random free points of the map's largest region; that many agents,
//!   each from a random cell of that region on a random floor to a random
//!   cell on a random floor, plan routes across them. All-ready frames and
//!   game time as above, beside the raw bound: one thread's
//!   `Atlas::find` on the same queries (its route cache warmed by the
//!   first 200, as the plugin's is by its first searches), divided by the
//!   plugin's search threads. `floors/one_goal/{agents}`: the same agents all
//!   sent to one point of the top floor, with shared searches and without
//!   (the raw bound: one thread's `Atlas::find` for each, no sharing).
//! - **Edit frames** (criterion, `edit_frame/{map}/{agents}/{case}`): the
//!   main-thread time of one frame that makes a one-cell edit (the edit call
//!   plus `App::update`), once every agent holds a path: `nobody`, a cell
//!   inside a wall block (no path can be affected), and `one_percent`, a cell
//!   that about 1 % of the agents' paths cross (blocked in one frame, freed in
//!   the next); `idle`, a frame without an edit, is the baseline to subtract.
//! - **Edit in flight** (criterion, `edit_in_flight/{map}`): one one-cell
//!   edit while searches hold snapshots of the grid.
//!
//! Maps: `AR0011SR` (512 x 512) and the same map tiled 16 x 16 (8192 x 8192).
//! Agents go between random cells of one region 10 to 60 cells apart (local
//! moves, as most game agents make).
//!
//! The planner is Anya, the plugin's default; `ALGORITHM=polyanya` (or any
//! other planner's name) runs the plugin and the raw planner with another.
//! `RADIUS=r` gives every agent a radius of `r` cells: with Anya or
//! Polyanya the plugin plans them on the mesh for that radius
//! (`PathfindingSettings::radius_meshes` on; its search
//! threads build it inside the scenario), and the raw bound is
//! `Planner::plan_on_mesh` on that mesh, built outside the clock. Some
//! starts then do not fit and see no place that does: the scenarios end
//! when every agent has its answer, a path or that failure.
//! Polyanya's raw planner builds its mesh while warming up, outside the
//! clock; the plugin's search threads (or, without them, the main thread)
//! build theirs inside the scenario, as a game's would.
//!
//! ```text
//! cargo bench --bench plugin                 # everything
//! cargo bench --bench plugin -- all_ready    # one part (a substring filter)
//! cargo bench --bench plugin -- one_goal/AR0011SR/
//! cargo bench --bench plugin -- floors/10000
//! cargo bench --bench plugin -- big_world
//! ALGORITHM=polyanya cargo bench --bench plugin -- all_ready/AR0011SR/
//! RADIUS=0.5 cargo bench --bench plugin -- all_ready/AR0011SR/
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPath, NavPosition, PathRequest, PathStatus,
    PathfindingDiagnostics, PathfindingSettings,
};
use bevy_anyangle::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::{Entity, With};
use bevy_math::{IVec2, Vec2};
use criterion::Criterion;

const FRAME: Duration = Duration::from_nanos(16_666_667);

/// The planner the scenarios use: `ALGORITHM` (a planner's name), else
/// Anya.
fn algorithm() -> Algorithm {
    std::env::var("ALGORITHM").map_or(Algorithm::Anya, |name| {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .unwrap_or_else(|| panic!("ALGORITHM={name}: not a planner's name"))
    })
}

/// The agents' radius in cells: `RADIUS`, else 0.
fn radius() -> f32 {
    std::env::var("RADIUS").map_or(0.0, |r| {
        r.parse()
            .unwrap_or_else(|_| panic!("RADIUS={r}: not a number"))
    })
}

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

fn map_text() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/maps/AR0011SR.map"
    ))
    .expect("AR0011SR.map is bundled with the crate")
}

/// `AR0011SR`, or the map tiled `tiles x tiles` times.
fn grid(tiles: u32) -> Grid {
    let base = Grid::from_movingai(&map_text()).expect("a bundled map");
    if tiles == 1 {
        return base;
    }
    let (w, h) = (base.width(), base.height());
    let rows: Vec<String> = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| {
                    if base.is_free_xy(i64::from(x), i64::from(y)) {
                        '.'
                    } else {
                        '@'
                    }
                })
                .collect::<String>()
                .repeat(tiles as usize)
        })
        .collect();
    let mut text = format!(
        "type octile\nheight {}\nwidth {}\nmap\n",
        h * tiles,
        w * tiles
    );
    for _ in 0..tiles {
        for row in &rows {
            text.push_str(row);
            text.push('\n');
        }
    }
    Grid::from_movingai(&text).expect("a tiled map")
}

/// `n` start and goal cells in one region, 10 to 60 cells apart.
fn pairs(grid: &Grid, n: usize, seed: u64) -> Vec<(UVec2, UVec2)> {
    pairs_in(grid, n, grid.size(), seed)
}

/// [`pairs`] within the grid's north-west `size.x` x `size.y` cells.
fn pairs_in(grid: &Grid, n: usize, size: UVec2, seed: u64) -> Vec<(UVec2, UVec2)> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let s = UVec2::new(rng.below(size.x), rng.below(size.y));
        if !grid.is_free(s) {
            continue;
        }
        let d = UVec2::new(rng.below(121), rng.below(121)).as_ivec2() - 60;
        let g = s.as_ivec2() + d;
        let len = d.as_vec2().length();
        if !(10.0..=60.0).contains(&len) || g.min_element() < 0 {
            continue;
        }
        let g = g.as_uvec2();
        if g.x < size.x && g.y < size.y && grid.same_region(s, g) && s != g {
            out.push((s, g));
        }
    }
    out
}

/// The plugin's search threads on this machine.
fn workers() -> usize {
    AnyAnglePlugin::default().threads()
}

/// A headless app with the plugin and `nav`, and one agent per pair
/// requesting a path (not yet updated).
fn app_with_agents(nav: NavGrid, agents: &[(UVec2, UVec2)]) -> App {
    app_with_agents_on(nav, agents, None, radius())
}

/// [`app_with_agents`] with `threads` search threads (`None`: the default).
fn app_with_agents_on(
    nav: NavGrid,
    agents: &[(UVec2, UVec2)],
    threads: Option<usize>,
    agent_radius: f32,
) -> App {
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin {
        steering: false,
        search_threads: threads,
        ..AnyAnglePlugin::default()
    });
    let spawn: Vec<(NavPosition, PathRequest)> = agents
        .iter()
        .map(|&(s, g)| {
            (
                NavPosition(nav.cell_center(s)),
                PathRequest::to(nav.cell_center(g)).with_radius(agent_radius),
            )
        })
        .collect();
    app.insert_resource(nav);
    let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
    settings.algorithm = algorithm();
    settings.radius_meshes = radius() > 0.0;
    app.world_mut().spawn_batch(spawn);
    app.finish();
    app.cleanup();
    app
}

/// Runs frames paced at 60 fps until `done`; returns the number of frames.
fn run_paced(app: &mut App, max_frames: usize, mut done: impl FnMut(&mut App) -> bool) -> usize {
    let mut next = Instant::now();
    for frame in 1..=max_frames {
        app.update();
        if done(app) {
            return frame;
        }
        next += FRAME;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now; // a late frame: the next one starts at once
        }
    }
    panic!("not done after {max_frames} frames");
}

/// Whether every agent has a path (with a radius: its answer, a path or
/// a failure).
fn all_have_paths(app: &mut App) -> bool {
    all_answered(app, radius() > 0.0)
}

/// Whether every agent has a path (`wide`, agents of a radius: its answer,
/// a path or a failure).
fn all_answered(app: &mut App, wide: bool) -> bool {
    let world = app.world_mut();
    world
        .query::<&PathStatus>()
        .iter(world)
        .all(|s| s.has_path() || (wide && !s.is_busy()))
}

/// Single-thread time of the raw planner on the queries, planner memory
/// warmed up first.
fn raw_time(grid: &Grid, queries: &[(UVec2, UVec2)]) -> Duration {
    let mut planner = Planner::new();
    let options = PlanOptions::with_algorithm(algorithm());
    let point = |c: UVec2| c.as_dvec2() + DVec2::splat(0.5);
    // With a radius, the plugin's class: the next multiple of 1/64 cell.
    let r = (f64::from(radius()) * 64.0).ceil() / 64.0;
    let on_mesh = r > 0.0;
    assert!(
        !on_mesh || matches!(algorithm(), Algorithm::Anya | Algorithm::Polyanya),
        "RADIUS is for the planners on meshes, Anya and Polyanya"
    );
    let mesh = on_mesh.then(|| bevy_anyangle::mesh::NavMesh::with_radius(grid, r).expect("radius"));
    let mut plan = |s: UVec2, g: UVec2| match &mesh {
        Some(mesh) => planner.plan_on_mesh(mesh, point(s), point(g), &options),
        None => planner.plan(grid, point(s), point(g), &options),
    };
    for &(s, g) in queries.iter().take(200) {
        black_box(plan(s, g).ok());
    }
    let start = Instant::now();
    for &(s, g) in queries {
        let path = plan(s, g);
        assert!(path.is_ok() || on_mesh, "{path:?}");
        black_box(path.ok());
    }
    start.elapsed()
}

/// The all-ready scenario for one map and agent count; prints a table row.
fn all_ready(name: &str, nav: &NavGrid, n: usize) {
    let queries = pairs(nav.grid(), n, 0x5eed_0000 + n as u64);
    let raw = raw_time(nav.grid(), &queries);
    let bound = raw / workers() as u32;
    let mut app = app_with_agents(nav.clone(), &queries);
    let wall = Instant::now();
    let frames = run_paced(&mut app, 100_000, all_have_paths);
    let wall = wall.elapsed();
    let game = FRAME * frames as u32;
    let d = *app.world().resource::<PathfindingDiagnostics>();
    println!(
        "| {name} | {n} | {frames} | {:.3} s | {:.3} s | {:.3} s | {:.3} s | {:.2} | {} |",
        game.as_secs_f64(),
        wall.as_secs_f64(),
        raw.as_secs_f64(),
        bound.as_secs_f64(),
        game.as_secs_f64() / bound.as_secs_f64(),
        d.searches_started,
    );
}

/// The all-ready scenario with lockstep mode off and on (default
/// `Lockstep`), on the same queries in one run; prints a table row.
fn lockstep(name: &str, nav: &NavGrid, n: usize) {
    use bevy_anyangle::plugin::Lockstep;

    let queries = pairs(nav.grid(), n, 0x5eed_0000 + n as u64);
    let raw = raw_time(nav.grid(), &queries);
    let bound = raw / workers() as u32;
    // Frames, wall time, the worst frame (`App::update`), the time waited
    // for late answers.
    let run = |mode: Option<Lockstep>| {
        let mut app = app_with_agents(nav.clone(), &queries);
        app.world_mut()
            .resource_mut::<PathfindingSettings>()
            .lockstep = mode;
        let wall = Instant::now();
        let mut worst = Duration::ZERO;
        let mut next = Instant::now();
        let mut frames = 0;
        loop {
            frames += 1;
            let t = Instant::now();
            app.update();
            worst = worst.max(t.elapsed());
            if all_have_paths(&mut app) {
                break;
            }
            assert!(frames < 100_000, "not done");
            next += FRAME;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
        let d = *app.world().resource::<PathfindingDiagnostics>();
        (frames, wall.elapsed(), worst, d.lockstep_wait_total)
    };
    let off = run(None);
    let on = run(Some(Lockstep::default()));
    let game = |frames: usize| (FRAME * frames as u32).as_secs_f64();
    println!(
        "| {name} | {n} | {} | {:.3} s | {:.3} s | {:.1} ms | {} | {:.3} s | {:.3} s | {:.1} ms | {:.3} s | {:.2} | {:.3} s | {:.2} |",
        off.0,
        game(off.0),
        off.1.as_secs_f64(),
        off.2.as_secs_f64() * 1e3,
        on.0,
        game(on.0),
        on.1.as_secs_f64(),
        on.2.as_secs_f64() * 1e3,
        on.3.as_secs_f64(),
        game(on.0) / game(off.0),
        bound.as_secs_f64(),
        game(on.0) / bound.as_secs_f64(),
    );
}

/// One big-world run: `queries` as agents planned by `algorithm` with
/// `agent_radius`, meshes built as `building` says; returns the frames
/// until every agent has its answer, the wall time, and the bytes the
/// shared meshes hold then.
fn big_world_run(
    nav: &NavGrid,
    queries: &[(UVec2, UVec2)],
    algorithm: Algorithm,
    agent_radius: f32,
    building: bevy_anyangle::plugin::MeshBuilding,
) -> (usize, Duration, usize) {
    let mut app = app_with_agents_on(nav.clone(), queries, None, agent_radius);
    {
        let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
        settings.algorithm = algorithm;
        settings.radius_meshes = true;
        settings.mesh_building = building;
    }
    let wall = Instant::now();
    let frames = run_paced(&mut app, 100_000, |app| {
        all_answered(app, agent_radius > 0.0)
    });
    let wall = wall.elapsed();
    // The mesh figure is measured every 64 frames: run to the next one.
    for _ in 0..64 {
        app.update();
    }
    let d = *app.world().resource::<PathfindingDiagnostics>();
    (frames, wall, d.mesh_bytes)
}

/// The big-world scenario: `n` agents on `name` (local moves anywhere on
/// the map, then within its north-west 1024 x 1024 cells), point agents
/// by Anya (the bound: no mesh), point agents by Polyanya and agents of
/// radius 0.5 (on its mesh), meshes built on demand and whole; prints a
/// table row per run.
fn big_world(name: &str, nav: &NavGrid, n: usize) {
    use bevy_anyangle::mesh::NavMesh;
    use bevy_anyangle::plugin::MeshBuilding;

    let grid = nav.grid();
    let t = Instant::now();
    let whole_point = NavMesh::build(grid).memory_bytes();
    let point_build = t.elapsed();
    let t = Instant::now();
    let whole_disc = NavMesh::with_radius(grid, 0.5)
        .expect("a radius")
        .memory_bytes();
    let disc_build = t.elapsed();
    let grid_bytes = Grid::bytes_needed(grid.width(), grid.height()) as usize;
    let mb = |b: usize| b as f64 / 1e6;
    println!(
        "whole meshes of {name}: points {:.1} MB (built in {:.2} s), radius 0.5 {:.1} MB ({:.2} s); the grid {:.1} MB\n",
        mb(whole_point),
        point_build.as_secs_f64(),
        mb(whole_disc),
        disc_build.as_secs_f64(),
        mb(grid_bytes),
    );
    println!(
        "| agents go | agents | planner | radius | meshes | frames | game time | wall time | game time / Anya's | mesh bytes | / whole mesh |"
    );
    println!("|---|--:|---|--:|---|--:|--:|--:|--:|--:|--:|");
    for (area, queries) in [
        ("anywhere", pairs(grid, n, 0x05ee_db16 + n as u64)),
        (
            "in 1024 x 1024",
            pairs_in(grid, n, UVec2::splat(1024), 0x05ee_db17 + n as u64),
        ),
    ] {
        let mut anya = 0.0;
        for (algorithm, r, building) in [
            (Algorithm::Anya, 0.0, MeshBuilding::Auto),
            (Algorithm::Polyanya, 0.0, MeshBuilding::Auto),
            (Algorithm::Anya, 0.5, MeshBuilding::Auto),
            (Algorithm::Polyanya, 0.0, MeshBuilding::Whole),
            (Algorithm::Anya, 0.5, MeshBuilding::Whole),
        ] {
            if area != "anywhere" && building == MeshBuilding::Whole {
                continue;
            }
            let (frames, wall, bytes) = big_world_run(nav, &queries, algorithm, r, building);
            let game = (FRAME * frames as u32).as_secs_f64();
            if algorithm == Algorithm::Anya && r == 0.0 {
                anya = game;
            }
            let whole = if r > 0.0 { whole_disc } else { whole_point };
            let meshes = if algorithm == Algorithm::Anya && r == 0.0 {
                "none".to_string()
            } else {
                format!("{building:?}")
            };
            println!(
                "| {area} | {n} | {} | {r} | {meshes} | {frames} | {game:.3} s | {:.3} s | {:.2} | {:.1} MB | {:.3} |",
                algorithm.name(),
                wall.as_secs_f64(),
                game / anya,
                mb(bytes),
                bytes as f64 / whole as f64,
            );
        }
    }
}

/// Floors of the floors scenario, and links between two consecutive ones.
const FLOORS: usize = 4;
const FLOOR_LINKS: usize = 64;

/// The floors scenario for `n` agents (with `one_goal`: all heading for
/// one point of the top floor, with shared searches on or off as
/// `shared` says); prints a table row.
fn floors(n: usize, one_goal: bool, shared: bool) {
    use bevy_anyangle::atlas::{Atlas, Link, Place, RouteQuery};
    use bevy_anyangle::plugin::{GoalArea, LinkEnd, NavArea, NavLink, OnArea};

    let map = grid(1);
    // The largest region's cells.
    let mut sizes = std::collections::HashMap::new();
    for y in 0..map.height() {
        for x in 0..map.width() {
            if let Some(r) = map.region(i64::from(x), i64::from(y)) {
                *sizes.entry(r).or_insert(0_u64) += 1;
            }
        }
    }
    let region = sizes.into_iter().max_by_key(|&(_, k)| k).map(|(r, _)| r);
    let mut rng = Rng(0xf1_0025);
    let mut cell = || loop {
        let c = UVec2::new(rng.below(map.width()), rng.below(map.height()));
        if map.is_free(c) && map.region(i64::from(c.x), i64::from(c.y)) == region {
            return c;
        }
    };
    let links: Vec<(usize, UVec2)> = (0..FLOORS - 1)
        .flat_map(|f| (0..FLOOR_LINKS).map(move |_| f))
        .map(|f| (f, cell()))
        .collect();
    let goal = cell();
    let queries: Vec<(usize, UVec2, usize, UVec2)> = (0..n)
        .map(|i| {
            if one_goal {
                return (i % FLOORS, cell(), FLOORS - 1, goal);
            }
            let (f, g) = (i % FLOORS, (i / FLOORS + i) % FLOORS);
            (f, cell(), g, cell())
        })
        .collect();
    let centre = |c: UVec2| c.as_dvec2() + DVec2::splat(0.5);

    // The raw bound: one thread's atlas on the same queries.
    let mut atlas = Atlas::new();
    let ids: Vec<_> = (0..FLOORS).map(|_| atlas.add_area(map.clone())).collect();
    for &(f, c) in &links {
        let link = Link::new(
            Place::new(ids[f], centre(c)),
            Place::new(ids[f + 1], centre(c)),
        );
        atlas.add_link(link.with_cost(4.0)).expect("a link");
    }
    let mut planner = Planner::new();
    let query = |&(f, s, g, t): &(usize, UVec2, usize, UVec2)| {
        RouteQuery::new(Place::new(ids[f], centre(s)), Place::new(ids[g], centre(t)))
    };
    for q in queries.iter().take(200) {
        black_box(atlas.find(&mut planner, &query(q)).ok());
    }
    let start = Instant::now();
    for q in &queries {
        black_box(atlas.find(&mut planner, &query(q)).expect("a route"));
    }
    let raw = start.elapsed();
    let bound = raw / workers() as u32;

    // The plugin: floors side by side, 600 world units apart.
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin {
        steering: false,
        ..AnyAnglePlugin::default()
    });
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .shared_searches = shared;
    let placement =
        |f: usize| GridTransform::new(Vec2::new(600.0 * f as f32, 0.0), 1.0).expect("placement");
    let areas: Vec<Entity> = (0..FLOORS)
        .map(|f| {
            let nav = NavGrid::new(map.clone(), placement(f));
            app.world_mut().spawn(NavArea::new(nav)).id()
        })
        .collect();
    let nav_of: Vec<NavGrid> = (0..FLOORS)
        .map(|f| NavGrid::new(map.clone(), placement(f)))
        .collect();
    for &(f, c) in &links {
        let (a, b) = (nav_of[f].cell_center(c), nav_of[f + 1].cell_center(c));
        app.world_mut().spawn(
            NavLink::new(LinkEnd::new(areas[f], a), LinkEnd::new(areas[f + 1], b)).with_cost(4.0),
        );
    }
    let agents: Vec<_> = queries
        .iter()
        .map(|&(f, s, g, t)| {
            (
                NavPosition(nav_of[f].cell_center(s)),
                OnArea(areas[f]),
                PathRequest::to(nav_of[g].cell_center(t)),
                GoalArea(areas[g]),
            )
        })
        .collect();
    app.world_mut().spawn_batch(agents);
    app.finish();
    app.cleanup();
    let wall = Instant::now();
    let frames = run_paced(&mut app, 100_000, |app| {
        let world = app.world_mut();
        world
            .query::<&PathStatus>()
            .iter(world)
            .all(PathStatus::has_path)
    });
    let wall = wall.elapsed();
    let game = FRAME * frames as u32;
    let d = *app.world().resource::<PathfindingDiagnostics>();
    let goals = match (one_goal, shared) {
        (false, _) => "random",
        (true, true) => "one, shared",
        (true, false) => "one, each alone",
    };
    println!(
        "| {FLOORS} x AR0011SR, {FLOOR_LINKS} links a pair | {goals} | {n} | {frames} | {:.3} s | {:.3} s | {:.3} s | {:.3} s | {:.2} | {} |",
        game.as_secs_f64(),
        wall.as_secs_f64(),
        raw.as_secs_f64(),
        bound.as_secs_f64(),
        game.as_secs_f64() / bound.as_secs_f64(),
        d.shared_searches,
    );
}

/// Agents that plan before the main-thread scenario starts.
const WARM_UP: usize = 20;

/// The all-ready scenario with searches on the main thread; prints a table
/// row.
fn main_thread(name: &str, nav: &NavGrid, n: usize) {
    let queries = pairs(nav.grid(), n, 0x5eed_0000 + n as u64);
    let raw = raw_time(nav.grid(), &queries);
    let budget = PathfindingSettings::default().main_thread_budget;
    let bound = raw.mul_f64(FRAME.as_secs_f64() / budget.as_secs_f64());
    // Like the raw planner's, the plugin's planner memory is warmed up
    // first: a few point agents plan (other queries) before the others
    // spawn. Points, so that the mesh for a radius is built inside the
    // measured frames, as a game pays for it.
    let warm_up = pairs(nav.grid(), WARM_UP, 0x0a11_0000 + n as u64);
    let mut app = app_with_agents_on(nav.clone(), &warm_up, Some(0), 0.0);
    run_paced(&mut app, 1_000, all_have_paths);
    let world = app.world_mut();
    let warm: Vec<Entity> = world
        .query_filtered::<Entity, With<PathRequest>>()
        .iter(world)
        .collect();
    for e in warm {
        world.despawn(e);
    }
    let spawn: Vec<(NavPosition, PathRequest)> = queries
        .iter()
        .map(|&(s, g)| {
            (
                NavPosition(nav.cell_center(s)),
                PathRequest::to(nav.cell_center(g)).with_radius(radius()),
            )
        })
        .collect();
    world.spawn_batch(spawn);
    let mut costs = Vec::new();
    let frames = run_paced(&mut app, 100_000, |app| {
        costs.push(app.world().resource::<PathfindingDiagnostics>().frame_cost);
        all_have_paths(app)
    });
    let game = FRAME * frames as u32;
    let d = *app.world().resource::<PathfindingDiagnostics>();
    assert_eq!(d.search_threads, 0);
    assert_eq!(d.searches_finished, (n + WARM_UP) as u64);
    costs.sort_unstable();
    let at = |q: f64| costs[((costs.len() - 1) as f64 * q).round() as usize];
    let ms = |t: Duration| t.as_secs_f64() * 1e3;
    println!(
        "| {name} | {n} | {frames} | {:.3} s | {:.3} s | {:.3} s | {:.2} | {:.2} ms | {:.2} ms | {:.2} ms | {:.1} ms |",
        game.as_secs_f64(),
        raw.as_secs_f64(),
        bound.as_secs_f64(),
        game.as_secs_f64() / bound.as_secs_f64(),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(costs[costs.len() - 1]),
        ms(budget),
    );
}

/// A free cell near the middle of `grid`, in its largest region.
fn central_cell(grid: &Grid) -> UVec2 {
    let mut sizes = std::collections::HashMap::new();
    for y in 0..grid.height() {
        for x in 0..grid.width() {
            if let Some(r) = grid.region(i64::from(x), i64::from(y)) {
                *sizes.entry(r).or_insert(0_u64) += 1;
            }
        }
    }
    let largest = sizes.into_iter().max_by_key(|&(_, n)| n).map(|(r, _)| r);
    let mid = grid.size().as_ivec2() / 2;
    let side = grid.width().max(grid.height()) as i32;
    (0..side)
        .flat_map(|d| (-d..=d).flat_map(move |dy| (-d..=d).map(move |dx| mid + IVec2::new(dx, dy))))
        .filter(|c| c.min_element() >= 0)
        .map(IVec2::as_uvec2)
        .find(|&c| grid.region(i64::from(c.x), i64::from(c.y)) == largest)
        .expect("a free cell")
}

/// `n` free cells of `goal`'s region, no more than `reach` cells from it
/// along each axis.
fn crowd(grid: &Grid, goal: UVec2, n: usize, reach: u32, seed: u64) -> Vec<UVec2> {
    let mut rng = Rng(seed);
    let lo = goal.saturating_sub(UVec2::splat(reach));
    let hi = (goal + UVec2::splat(reach + 1)).min(grid.size());
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let c = lo + UVec2::new(rng.below(hi.x - lo.x), rng.below(hi.y - lo.y));
        if c != goal && grid.same_region(c, goal) {
            out.push(c);
        }
    }
    out
}

/// The one-goal scenario: `n` agents anywhere within 256 cells of one
/// goal (on `AR0011SR`, the whole map) ask for a path to it at once; the
/// time until all have a path with shared searches and with one search per
/// agent, in one run, beside the raw planner's time for both; prints a
/// table row.
fn one_goal(name: &str, nav: &NavGrid, n: usize) {
    let grid = nav.grid();
    let goal = central_cell(grid);
    let starts = crowd(grid, goal, n, 256, 0x00c0_0000 + n as u64);
    let queries: Vec<(UVec2, UVec2)> = starts.iter().map(|&s| (s, goal)).collect();
    let raw_each = raw_time(grid, &queries);
    // One shared search, on the mesh built outside the clock (the plugin
    // builds it inside), planner memory warmed up first.
    let built = Instant::now();
    let mesh = bevy_anyangle::mesh::NavMesh::build(grid);
    let build = built.elapsed();
    let points: Vec<DVec2> = starts
        .iter()
        .map(|c| c.as_dvec2() + DVec2::splat(0.5))
        .collect();
    let to = goal.as_dvec2() + DVec2::splat(0.5);
    let options = PlanOptions::with_algorithm(Algorithm::Polyanya);
    let mut planner = Planner::new();
    let mut answers = Vec::new();
    planner.plan_many_on_mesh(
        &mesh,
        &points[..points.len().min(200)],
        to,
        &options,
        &mut answers,
    );
    let began = Instant::now();
    planner.plan_many_on_mesh(&mesh, &points, to, &options, &mut answers);
    let raw_shared = began.elapsed();
    assert!(answers.iter().all(Result::is_ok));
    let plugin = |shared: bool| {
        let mut app = app_with_agents(nav.clone(), &queries);
        app.world_mut()
            .resource_mut::<PathfindingSettings>()
            .shared_searches = shared;
        // Besides the frames: the wall time until all have a path, and the
        // plugin's worst frame (applying thousands of answers at once).
        let began = Instant::now();
        let mut worst = Duration::ZERO;
        let frames = run_paced(&mut app, 100_000, |app| {
            let cost = app.world().resource::<PathfindingDiagnostics>().frame_cost;
            worst = worst.max(cost);
            all_have_paths(app)
        });
        let wall = began.elapsed();
        let d = *app.world().resource::<PathfindingDiagnostics>();
        (FRAME * frames as u32, frames, d, (wall, worst))
    };
    let (shared_time, shared_frames, shared, shared_wall) = plugin(true);
    let (each_time, each_frames, each, each_wall) = plugin(false);
    let ms = |t: Duration| t.as_secs_f64() * 1e3;
    println!(
        "| {name} | {n} | {shared_frames} | {:.0} ms | {:.0} ms | {:.1} ms | {} | {:.1} ms | {each_frames} | {:.0} ms | {:.0} ms | {:.1} ms | {} | {:.1} ms | {:.1} | {:.2} ms | {:.1} ms | {:.1} ms |",
        ms(shared_time),
        ms(shared_wall.0),
        ms(shared_wall.1),
        shared.searches_finished,
        ms(shared.search_time),
        ms(each_time),
        ms(each_wall.0),
        ms(each_wall.1),
        each.searches_finished,
        ms(each.search_time),
        each_time.as_secs_f64() / shared_time.as_secs_f64(),
        ms(raw_shared),
        ms(raw_each),
        ms(build),
    );
}

/// Agents of the door scenario: radius (cells) and speed (cells a second).
const DOOR_RADIUS: f32 = 0.4;
const DOOR_SPEED: f32 = 4.0;

/// A 136 x 72 room split by a wall at x = 68 with a door 4 cells wide.
fn door_grid() -> Grid {
    let mut grid = Grid::new(136, 72).expect("a room");
    grid.set_rect_free(bevy_math::URect::new(68, 0, 69, 34), false)
        .expect("the wall above the door");
    grid.set_rect_free(bevy_math::URect::new(68, 38, 69, 72), false)
        .expect("the wall below the door");
    grid
}

/// `n` agents, half on each side of the door's wall, in rows 1.6 cells
/// apart; each side's crowd is sent to one point 34 cells past the wall,
/// level with the door (where it ends in a blob around the point).
fn door_crowd(n: usize) -> Vec<(Vec2, Vec2)> {
    let mut out = Vec::with_capacity(n);
    let (east, west) = (Vec2::new(102.0, 36.0), Vec2::new(34.0, 36.0));
    for i in 0..n / 2 {
        let (col, row) = ((i % 40) as f32, (i / 40) as f32);
        let start = Vec2::new(2.5 + col * 1.6, 71.0 - (4.5 + row * 1.6));
        out.push((start, east));
        out.push((Vec2::new(136.0 - start.x, start.y), west));
    }
    out
}

/// Per agent, the largest overlap with another agent (cells): buckets of
/// one cell, neighbours in the 3 x 3 around.
fn overlaps(at: &[DVec2], r: f64, out: &mut Vec<f64>) {
    let mut buckets: std::collections::HashMap<(i64, i64), Vec<usize>> =
        std::collections::HashMap::new();
    for (i, p) in at.iter().enumerate() {
        buckets
            .entry((p.x.floor() as i64, p.y.floor() as i64))
            .or_default()
            .push(i);
    }
    out.clear();
    for (i, p) in at.iter().enumerate() {
        let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
        let mut worst = 0.0_f64;
        for y in cy - 1..=cy + 1 {
            for x in cx - 1..=cx + 1 {
                for &j in buckets.get(&(x, y)).map_or(&[][..], Vec::as_slice) {
                    if j != i {
                        worst = worst.max(2.0 * r - p.distance(at[j]));
                    }
                }
            }
        }
        out.push(worst);
    }
}

/// The door scenario: `n` agents of radius 0.4 cross a door 4 cells wide
/// both ways (each side's crowd to one point past the wall), with
/// `LocalAvoidance` or without, frames paced at 60 fps; returns a table
/// row's figures.
fn door_run(n: usize, avoid: bool) -> String {
    use bevy_anyangle::plugin::{LocalAvoidance, NavPath, PathFollower};
    let grid = door_grid();
    let nav = NavGrid::new(grid.clone(), GridTransform::default());
    let crowd = door_crowd(n);
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin::default())
        .insert_resource(nav.clone())
        .insert_resource(bevy_anyangle::plugin::SteeringClock::fixed(1.0 / 60.0));
    app.finish();
    app.cleanup();
    let agents: Vec<Entity> = crowd
        .iter()
        .map(|&(start, goal)| {
            let mut e = app.world_mut().spawn((
                NavPosition(start),
                PathRequest::to(goal).with_radius(DOOR_RADIUS),
                PathFollower {
                    speed: DOOR_SPEED,
                    arrive_radius: 0.05,
                },
            ));
            if avoid {
                e.insert(LocalAvoidance);
            }
            e.id()
        })
        .collect();
    let r = f64::from(DOOR_RADIUS);
    let (mut walled, mut sum, mut worst, mut samples) = (0_u64, 0.0, 0.0_f64, 0_u64);
    // The overlap of the agents still walking (not yet finished), not
    // diluted by the crowds standing at their goals.
    let (mut walking_sum, mut walking_samples) = (0.0, 0_u64);
    let mut at = Vec::with_capacity(n);
    let mut overlap = Vec::with_capacity(n);
    let mut costs = Vec::new();
    let mut frame_costs = Vec::new();
    let limit = 60 * 600;
    let frames = run_paced(&mut app, limit, |app| {
        let world = app.world();
        at.clear();
        at.extend(
            agents
                .iter()
                .map(|&e| nav.to_grid(world.get::<NavPosition>(e).expect("a position").0)),
        );
        walled += at
            .iter()
            .filter(|&&p| common::wall_distance(&grid, p, 2) < r - 1e-9)
            .count() as u64;
        overlaps(&at, r, &mut overlap);
        sum += overlap.iter().map(|o| o.max(0.0)).sum::<f64>();
        for (&e, o) in agents.iter().zip(&overlap) {
            if !world.get::<NavPath>(e).is_some_and(NavPath::is_finished) {
                walking_sum += o.max(0.0);
                walking_samples += 1;
            }
        }
        worst = overlap.iter().fold(worst, |w, &o| w.max(o));
        samples += n as u64;
        let d = world.resource::<PathfindingDiagnostics>();
        costs.push(d.avoidance_cost);
        frame_costs.push(d.frame_cost);
        agents.iter().all(|&e| {
            world.get::<PathStatus>(e) == Some(&PathStatus::Ready)
                && world.get::<NavPath>(e).is_some_and(NavPath::is_finished)
        })
    });
    // Where the agents ended: an agent counts as arrived beside the others
    // sent to its point (or held up by them), so the farthest one from its
    // point shows how far from it arrival let an agent stop; beside it, the
    // radius of one side's crowd packed as tightly as discs pack.
    let world = app.world();
    let farthest = agents
        .iter()
        .zip(&crowd)
        .map(|(&e, &(_, goal))| {
            let p = world.get::<NavPosition>(e).expect("a position").0;
            f64::from(p.distance(goal)) / f64::from(nav.transform().cell_size())
        })
        .fold(0.0, f64::max);
    let packed = r * ((n / 2) as f64 / (std::f64::consts::PI / 12.0_f64.sqrt())).sqrt();
    let ms = |t: Duration| t.as_secs_f64() * 1e3;
    let mean = |v: &[Duration]| v.iter().sum::<Duration>() / v.len().max(1) as u32;
    let max = |v: &[Duration]| v.iter().copied().max().unwrap_or_default();
    format!(
        "{} | {frames} | {:.1} s | {walled} | {:.2} % | {:.2} % | {:.1} % | {farthest:.1} ({packed:.1}) | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms",
        if avoid { "LocalAvoidance" } else { "none" },
        frames as f64 / 60.0,
        sum / samples as f64 / r * 100.0,
        walking_sum / walking_samples.max(1) as f64 / r * 100.0,
        worst / r * 100.0,
        ms(mean(&costs)),
        ms(max(&costs)),
        ms(mean(&frame_costs)),
        ms(max(&frame_costs)),
    )
}

/// The door scenario with and without avoidance; prints table rows.
fn door(n: usize) {
    for avoid in [true, false] {
        println!("| {n} | {} |", door_run(n, avoid));
    }
}

/// A free cell that about `share` of the paths cross (grid coordinates of
/// the paths' waypoints), or a cell inside a wall block when `share` is 0.
fn cell_crossed_by(grid: &Grid, paths: &[Vec<DVec2>], share: f64) -> UVec2 {
    if share == 0.0 {
        for y in 2..i64::from(grid.height()) - 2 {
            for x in 2..i64::from(grid.width()) - 2 {
                if (-2..=2).all(|dy| (-2..=2).all(|dx| !grid.is_free_xy(x + dx, y + dy))) {
                    return UVec2::new(x as u32, y as u32);
                }
            }
        }
        panic!("no wall block on the map");
    }
    let w = grid.width() as usize;
    let mut counts = vec![0u32; w * grid.height() as usize];
    for path in paths {
        let mut seen = std::collections::HashSet::new();
        for s in path.windows(2) {
            let steps = (s[1] - s[0]).length().ceil().max(1.0) as usize * 4;
            for i in 0..=steps {
                let p = s[0].lerp(s[1], i as f64 / steps as f64);
                let c = (p.y.floor() as usize).min(grid.height() as usize - 1) * w
                    + (p.x.floor() as usize).min(w - 1);
                if seen.insert(c) {
                    counts[c] += 1;
                }
            }
        }
    }
    let want = (paths.len() as f64 * share).max(1.0) as u32;
    let best = (0..counts.len())
        .filter(|&c| grid.is_free_xy((c % w) as i64, (c / w) as i64))
        .min_by_key(|&c| counts[c].abs_diff(want))
        .unwrap();
    UVec2::new((best % w) as u32, (best / w) as u32)
}

/// Criterion groups for the frames with one edit.
fn edit_frames(c: &mut Criterion, name: &str, nav: &NavGrid, n: usize) {
    let queries = pairs(nav.grid(), n, 0x5eed_1000 + n as u64);
    let mut app = app_with_agents(nav.clone(), &queries);
    run_paced(&mut app, 100_000, all_have_paths);
    let world = app.world_mut();
    let paths: Vec<Vec<DVec2>> = world
        .query::<&NavPath>()
        .iter(world)
        .map(|p| p.grid_waypoints.clone())
        .collect();
    let mut group = c.benchmark_group(format!("edit_frame/{name}/{n}"));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("idle", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                app.update();
            }
            start.elapsed()
        });
    });
    for (case, share) in [("nobody", 0.0), ("one_percent", 0.01)] {
        let cell = cell_crossed_by(nav.grid(), &paths, share);
        let mut free = share == 0.0;
        group.bench_function(case, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    app.world_mut()
                        .resource_mut::<NavGrid>()
                        .set_cell_free(cell, free)
                        .unwrap();
                    app.update();
                    total += start.elapsed();
                    free = !free;
                }
                total
            });
        });
    }
    group.finish();
    let d = *app.world().resource::<PathfindingDiagnostics>();
    println!(
        "edit_frame/{name}/{n}: {} agents checked by edits in all, {} searches started",
        d.edit_checks, d.searches_started
    );
}

/// One one-cell edit while searches hold snapshots of the grid.
fn edit_in_flight(c: &mut Criterion, name: &str, nav: &NavGrid) {
    let mut nav = nav.clone();
    let cell = cell_crossed_by(nav.grid(), &[], 0.0);
    let mut free = true;
    c.bench_function(&format!("edit_in_flight/{name}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // What searches in flight hold.
                let snapshot: Arc<Grid> = nav.snapshot();
                let start = Instant::now();
                nav.set_cell_free(cell, free).unwrap();
                total += start.elapsed();
                free = !free;
                drop(black_box(snapshot));
            }
            total
        });
    });
}

fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    let wanted = |name: &str| name.contains(&filter);
    let small = NavGrid::new(grid(1), GridTransform::default());
    // Built only when some part needs it.
    let parts = [
        "all_ready",
        "big_world",
        "one_goal",
        "lockstep",
        "edit_frame",
        "edit_in_flight",
    ];
    let large = if filter.contains("x16")
        || (!filter.contains("AR0011SR")
            && parts
                .iter()
                .any(|part| part.contains(&filter) || filter.starts_with(part)))
    {
        NavGrid::new(grid(16), GridTransform::default())
    } else {
        small.clone()
    };
    let maps = [("AR0011SR", &small), ("AR0011SRx16", &large)];
    println!(
        "planner: {}; search threads: {}; frames paced at 60 fps\n",
        algorithm().name(),
        workers()
    );
    if wanted("all_ready") || filter.starts_with("all_ready") {
        println!(
            "| map | agents | frames | game time | wall time | raw planner, 1 thread | raw bound | game time / bound | searches |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (name, nav) in maps {
            for n in [1_000, 10_000, 50_000] {
                if wanted(&format!("all_ready/{name}/{n}")) {
                    all_ready(name, nav, n);
                }
            }
        }
        println!();
    }
    if wanted("one_goal") || filter.starts_with("one_goal") {
        println!(
            "| map | agents | shared: frames | game time | wall time | worst frame | searches | search time | one each: frames | game time | wall time | worst frame | searches | search time | speed-up | raw shared search | raw, one each | mesh build |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (name, nav) in maps {
            for n in [1_000, 10_000] {
                if wanted(&format!("one_goal/{name}/{n}")) {
                    one_goal(name, nav, n);
                }
            }
        }
        println!();
    }
    if filter.starts_with("big_world") || filter.is_empty() {
        for n in [1_000] {
            if wanted(&format!("big_world/AR0011SRx16/{n}")) {
                big_world("AR0011SRx16", &large, n);
            }
        }
        println!();
    }
    if wanted("door") || filter.starts_with("door") {
        println!(
            "| agents | steering | frames until all arrive | game time | agent-frames in a wall | overlap, mean | mean while walking | worst | farthest end from its point (packed crowd's radius), cells | avoidance per frame, mean | max | plugin per frame, mean | max |"
        );
        println!("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for n in [2_000] {
            if wanted(&format!("door/{n}")) {
                door(n);
            }
        }
        println!();
    }
    if wanted("lockstep") || filter.starts_with("lockstep") {
        println!(
            "| map | agents | off: frames | game time | wall time | worst frame | lockstep: frames | game time | wall time | worst frame | waited for answers | lockstep / off (game time) | raw bound | lockstep / bound |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (name, nav) in maps {
            for n in [1_000, 10_000] {
                if wanted(&format!("lockstep/{name}/{n}")) {
                    lockstep(name, nav, n);
                }
            }
        }
        println!();
    }
    if wanted("floors") || filter.starts_with("floors") {
        println!(
            "| world | goals | agents | frames | game time | wall time | raw atlas, 1 thread | raw bound | game time / bound | shared searches |"
        );
        println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        let n = 10_000;
        if wanted(&format!("floors/{n}")) {
            floors(n, false, true);
        }
        if wanted(&format!("floors/one_goal/{n}")) {
            floors(n, true, true);
            floors(n, true, false);
        }
        println!();
    }
    if filter.starts_with("main_thread") || filter.is_empty() {
        println!(
            "| map | agents | frames | game time | raw planner, 1 thread | main-thread bound | game time / bound | frame cost p50 | p99 | worst | budget |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (name, nav) in maps {
            for n in [1_000, 10_000] {
                if wanted(&format!("main_thread/{name}/{n}")) {
                    main_thread(name, nav, n);
                }
            }
        }
        println!();
    }
    let mut criterion = Criterion::default().configure_from_args();
    for (name, nav) in maps {
        for n in [10_000, 50_000] {
            if wanted(&format!("edit_frame/{name}/{n}")) {
                edit_frames(&mut criterion, name, nav, n);
            }
        }
    }
    if wanted("edit_in_flight") {
        for (name, nav) in maps {
            edit_in_flight(&mut criterion, name, nav);
        }
    }
    criterion.final_summary();
}
