//! Interactive playground: hundreds of agents on a bundled map, their paths
//! drawn by the crate's debug gizmos and the agents as discs of their
//! radius; paint walls, set goals, switch planners, watch who replans, and
//! turn the agents into a crowd that steers around itself.
//!
//! ```text
//! cargo run --release --example playground --features visual --ignore-rust-version -- \
//!     [--map NAME|FILE] [--agents N] [--algorithm anya|lazy-theta|astar|astar-ps] [--tile N] [--seed N] [--crowd] [--floors]
//! cargo run --release --example playground --features visual --ignore-rust-version -- \
//!     --script compare|replan|intervals|door|floors --out FILE.png
//! ```
//!
//! (`--ignore-rust-version`: the `bevy` crate asks for a newer Rust than this
//! crate does.)
//!
//! In the browser (WebGL2): `scripts/web.sh build` builds it into
//! `target/web/`, `scripts/web.sh serve` serves that page. There the bundled
//! maps are built into the program, the searches share the page's one
//! thread, and the options come from the page's address, e.g.
//! `index.html?agents=100&map=arena&algorithm=lazy-theta` (`&crowd` for
//! `--crowd`, `&floors` for `--floors`).
//!
//! `--crowd` starts in crowd mode (`V`): every agent has a radius of 0.4
//! cells and [`LocalAvoidance`], so it steers around the others and keeps
//! its radius from the walls.
//!
//! `--floors` starts in floors mode (`F`): three floors of 48 x 32 cells,
//! each a [`NavArea`], side by side and each higher than the one before,
//! joined by [`NavLink`]s: two stairs and a one-way slide (walked), a lift
//! (handed: the playground carries each agent across after
//! [`LIFT_SECONDS`], a violet disc moving along the link meanwhile) and a
//! door (walked) that `O` opens and closes. The agents go to random points on random floors,
//! across the links. (Painting walls, crowd mode and the planners apply
//! to the one map.)
//!
//! | input | what it does |
//! |---|---|
//! | left drag | paint walls (starting on a free cell) or erase them (starting on a wall) |
//! | right click | goal of the selected agent, or of every agent |
//! | `C` | goal of every agent: the point under the cursor |
//! | `V` | crowd mode (on / off): radius 0.4 cells and [`LocalAvoidance`] for every agent |
//! | `S` / middle click | select the agent nearest the cursor: its last search is drawn; `Esc` clears |
//! | `1` `2` `3` `4` | Anya, Lazy Theta*, A*, A* smoothed |
//! | `Space` | 1,000 more agents (250 in the browser) |
//! | `M` / `N` | next / previous bundled map |
//! | `F` | floors mode (on / off): three floors joined by stairs, a slide, a lift and a door |
//! | `O` | in floors mode: open / close the door |
//! | `W` | agents wander to new goals when they arrive (on / off) |
//! | `G` | outline walls with gizmos too |
//! | `P` | pause the search threads |
//! | wheel, arrows, `Home` | zoom, pan, fit the map |
//!
//! `--script` runs a fixed scene without input, saves one screenshot after
//! at least 60 frames and exits (`scripts/screenshots.sh` makes the
//! pictures of the README with it):
//!
//! - `compare`: one query on three copies of a map, planned by Anya, Lazy
//!   Theta* and A*;
//! - `replan`: 400 agents on their way when a wall appears across the
//!   busiest cell, just after the agents it cut off replanned;
//! - `intervals`: the intervals Anya expanded for one search;
//! - `door`: 600 agents of radius 0.4 with [`LocalAvoidance`], half on
//!   each side of a wall with a door 4 cells wide, each side's crowd sent to
//!   one point on the other side, 600 frames on: the two crowds pour
//!   through the door both ways;
//! - `floors`: 240 agents going to random points on random floors (floors
//!   mode), 360 frames on, half a second after the door closed: the agents
//!   that were on their way through it have replanned, by the stairs or
//!   the slide, and riders move along the lift.

#![expect(
    clippy::needless_pass_by_value,
    reason = "Bevy system parameters are taken by value"
)]

use std::collections::HashMap;
use std::fmt::Write as _;
#[cfg(not(target_arch = "wasm32"))]
use std::path::PathBuf;
use std::time::Duration;

use bevy::asset::RenderAssetUsages;
use bevy::camera::visibility::RenderLayers;
use bevy::camera::{CameraUpdateSystems, ClearColorConfig, ScalingMode};
use bevy::ecs::system::SystemParam;
use bevy::image::ImageSampler;
use bevy::input::mouse::MouseWheel;
use bevy::mesh::{Indices, PrimitiveTopology};
// std's `Instant` panics in the browser; this one reads the page's clock there.
use bevy::platform::time::Instant;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
#[cfg(not(target_arch = "wasm32"))]
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::sprite::Anchor;
use bevy::window::{PrimaryWindow, WindowResolution};
use bevy_anyangle::grid::Grid;
use bevy_anyangle::plugin::debug::{
    AnyAngleDebugPlugin, DrawNavGizmos, LastSearch, NavGizmos, NavGizmosSystems, TraceSearch,
};
use bevy_anyangle::plugin::{
    AnyAnglePlugin, AnyAngleSystems, CrossLink, CrossingLink, GoalArea, GridTransform, LinkEnd,
    LocalAvoidance, NavArea, NavGrid, NavLink, NavPath, OnArea, PathFollower, PathGoal,
    PathRequest, PathStatus, PathfindingDiagnostics, PathfindingSettings, SteeringClock,
};
use bevy_anyangle::search::Algorithm;

/// Lists the bundled maps `M` and `N` cycle through once, as [`MAPS`], and
/// for the browser, which has no files, [`MAP_TEXTS`]: their text, built
/// into the program.
macro_rules! bundled_maps {
    ($($name:literal),* $(,)?) => {
        /// The bundled maps `M` and `N` cycle through, small to large.
        const MAPS: &[&str] = &[$($name),*];
        /// The text of each of [`MAPS`].
        #[cfg(target_arch = "wasm32")]
        const MAP_TEXTS: &[&str] = &[$(include_str!(concat!("../data/maps/", $name, ".map"))),*];
    };
}

bundled_maps![
    "arena",
    "lt_backalley_n",
    "lak303d",
    "den520d",
    "Berlin_0_256",
    "brc202d",
    "AR0011SR",
    "BigGameHunters",
    "8room_000",
    "maze512-1-0",
    "random512-10-0",
];

#[cfg(not(target_arch = "wasm32"))]
const MAP_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps");

/// Agents at the start, unless told otherwise, and agents `Space` adds. In
/// the browser the searches share the page's one thread with the drawing.
#[cfg(not(target_arch = "wasm32"))]
const AGENTS: (usize, usize) = (300, 1000);
#[cfg(target_arch = "wasm32")]
const AGENTS: (usize, usize) = (200, 250);

/// Walls and floor of the map picture.
const FLOOR: [u8; 4] = [24, 26, 32, 255];
const WALL: [u8; 4] = [92, 96, 110, 255];

/// Agents' walking speed, cells per second.
const SPEED: f32 = 8.0;

/// Agents' radius in crowd mode, cells.
const CROWD_RADIUS: f32 = 0.4;

/// The discs of point agents: at least this radius, in cells, and this
/// many pixels on the screen.
const POINT_DISC: (f32, f32) = (0.3, 2.5);

/// The discs' colours: every agent, and the second crowd of `door`.
const AGENT_COLORS: [Color; 2] = [Color::srgb(1.0, 0.93, 0.7), Color::srgb(1.0, 0.45, 0.35)];

/// The render layer of the agents' discs, drawn by a camera of its own
/// above the map and the gizmos.
const DISC_LAYER: usize = 1;

/// `door`: the map's size, the door's width (cells), the agents, and the
/// frame of the screenshot (not in the browser).
const DOOR_MAP: UVec2 = UVec2::new(120, 70);
const DOOR_WIDTH: u32 = 4;
const DOOR_AGENTS: usize = 600;
#[cfg(not(target_arch = "wasm32"))]
const DOOR_FRAMES: u32 = 600;

/// Floors mode: how many floors, each's size (cells), the cells between two
/// floors side by side, and how much higher each floor lies than the one
/// before it (the picture reads as a building seen from the side).
const FLOORS: usize = 3;
const FLOOR_SIZE: UVec2 = UVec2::new(48, 32);
const FLOOR_GAP: u32 = 8;
const FLOOR_RISE: u32 = 24;
const FLOOR_NAMES: [&str; FLOORS] = ["ground floor", "first floor", "second floor"];

/// Seconds an agent spends in the lift before the playground carries it
/// across.
const LIFT_SECONDS: f32 = 1.0;

/// The discs of agents in the lift.
const RIDING_COLOR: Color = Color::srgb(0.72, 0.5, 1.0);

/// `floors`: the agents, the frame the door closes and the frame of the
/// screenshot (not in the browser).
const FLOORS_AGENTS: usize = 240;
const FLOORS_DOOR_CLOSES: u32 = 330;
#[cfg(not(target_arch = "wasm32"))]
const FLOORS_FRAMES: u32 = 360;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Script {
    Compare,
    Replan,
    Intervals,
    Door,
    Floors,
}

#[derive(Resource, Clone, Debug)]
struct Args {
    map: String,
    agents: usize,
    algorithm: Algorithm,
    tile: u32,
    seed: u64,
    /// Start in crowd mode.
    crowd: bool,
    /// Start in floors mode.
    floors: bool,
    script: Option<Script>,
    /// Where a script saves its screenshot (not in the browser).
    #[cfg(not(target_arch = "wasm32"))]
    out: PathBuf,
}

const USAGE: &str = "usage: playground [--map NAME|FILE] [--agents N] [--algorithm NAME] [--tile N] \
[--seed N] [--crowd] [--floors] [--script compare|replan|intervals|door|floors --out FILE.png]";

fn parse_args(given: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        map: "den520d".into(),
        agents: AGENTS.0,
        algorithm: Algorithm::Anya,
        tile: 1,
        seed: 7,
        crowd: false,
        floors: false,
        script: None,
        #[cfg(not(target_arch = "wasm32"))]
        out: PathBuf::from("playground.png"),
    };
    let mut it = given.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--map" => args.map = value()?,
            "--agents" => args.agents = value()?.parse().map_err(|e| format!("--agents: {e}"))?,
            "--algorithm" => args.algorithm = value()?.parse().map_err(|e| format!("{e}"))?,
            "--tile" => {
                args.tile = value()?.parse().map_err(|e| format!("--tile: {e}"))?;
                if !(1..=16).contains(&args.tile) {
                    return Err("--tile takes 1 to 16".into());
                }
            }
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--crowd" => args.crowd = true,
            "--floors" => args.floors = true,
            "--script" => {
                args.script = Some(match value()?.as_str() {
                    "compare" => Script::Compare,
                    "replan" => Script::Replan,
                    "intervals" => Script::Intervals,
                    "door" => Script::Door,
                    "floors" => Script::Floors,
                    other => return Err(format!("unknown script {other:?}")),
                });
            }
            #[cfg(not(target_arch = "wasm32"))]
            "--out" => args.out = PathBuf::from(value()?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(args)
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    run(args);
}

/// In the browser: the options come from the page's address
/// (`?agents=100&map=arena` is `--agents 100 --map arena`); the defaults
/// if they do not parse or name a map that is not bundled.
#[cfg(target_arch = "wasm32")]
fn main() {
    use web_sys::wasm_bindgen::JsValue;

    let query = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    // `key=value` is `--key value`; a bare `key` (or `key=`) is `--key`.
    let flags = query
        .trim_start_matches('?')
        .split('&')
        .filter(|pair| !pair.is_empty())
        .flat_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            std::iter::once(format!("--{key}")).chain((!value.is_empty()).then(|| value.to_owned()))
        });
    let args = match parse_args(flags) {
        Ok(args) if MAPS.contains(&args.map.as_str()) => args,
        Ok(args) => {
            let message = format!("{}: not a bundled map; one of {MAPS:?}", args.map);
            web_sys::console::warn_1(&JsValue::from_str(&message));
            parse_args([]).expect("the defaults")
        }
        Err(message) => {
            web_sys::console::warn_1(&JsValue::from_str(&message));
            parse_args([]).expect("the defaults")
        }
    };
    run(args);
}

fn run(args: Args) {
    let title = match args.script {
        Some(_) => "bevy_anyangle playground (script)",
        None => "bevy_anyangle playground",
    };
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: title.into(),
            resolution: WindowResolution::new(1280, 800),
            // In the browser: the page's canvas, as large as its parent.
            #[cfg(target_arch = "wasm32")]
            canvas: Some("#bevy".into()),
            #[cfg(target_arch = "wasm32")]
            fit_canvas_to_parent: true,
            ..default()
        }),
        ..default()
    }))
    .add_plugins((AnyAnglePlugin::default(), AnyAngleDebugPlugin))
    .insert_resource(ClearColor(Color::srgb(0.06, 0.06, 0.08)))
    .insert_resource(PathfindingSettings {
        algorithm: args.algorithm,
        ..default()
    })
    .insert_resource(Playground::new(&args))
    .init_resource::<Timing>()
    .add_systems(Startup, setup)
    .add_systems(
        Update,
        (
            plugin_began.before(AnyAngleSystems::Detect),
            plugin_ended.after(AnyAngleSystems::Steer),
            (dress_agents, size_agents)
                .chain()
                .after(AnyAngleSystems::Steer),
            update_map_picture,
            fit_floors,
            // (After the keys that despawn agents and floors.)
            (operate_lift, wander_floors)
                .after(keys)
                .after(floors_keys)
                .before(AnyAngleSystems::Detect),
            overlay,
        ),
    )
    .add_systems(
        PostUpdate,
        (
            gizmos_began.before(NavGizmosSystems),
            gizmos_ended.after(NavGizmosSystems),
            follow_camera.before(CameraUpdateSystems),
        ),
    );
    if args.script.is_some() {
        // The same steps every frame, however slowly frames come.
        app.insert_resource(SteeringClock::fixed(1.0 / 60.0))
            .add_systems(Update, run_script.before(AnyAngleSystems::Detect));
    } else {
        app.add_systems(
            Update,
            (
                keys,
                floors_keys,
                paint,
                set_goals,
                select,
                camera_control,
                wander,
            )
                .before(AnyAngleSystems::Detect),
        );
    }
    app.insert_resource(args).run();
}

/// A tiny deterministic generator (`SplitMix64`).
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
        (self.next() % u64::from(n.max(1))) as u32
    }
}

/// The playground's state.
#[derive(Resource)]
struct Playground {
    map: usize,
    /// A map given by path, not one of [`MAPS`].
    custom_map: Option<String>,
    rng: Rng,
    selected: Option<Entity>,
    /// While the left button is down: whether it paints walls (`true`) or
    /// erases them, and the last cell painted.
    painting: Option<(bool, UVec2)>,
    wander: bool,
    /// Crowd mode: agents of radius [`CROWD_RADIUS`] with [`LocalAvoidance`].
    crowd: bool,
    /// The grid layout and version the map picture shows.
    picture: (u64, u64),
    /// Which cells the map picture shows blocked (row by row).
    shown: Vec<bool>,
    /// Sprites over cells edited since the picture was made.
    patches: HashMap<UVec2, Entity>,
    frame: u32,
    /// Fit the camera to the floors next frame (floors mode).
    refit: bool,
    /// Script: the frame the screenshot was asked for.
    #[cfg(not(target_arch = "wasm32"))]
    shot_at: Option<u32>,
}

impl Playground {
    fn new(args: &Args) -> Self {
        let known = MAPS.iter().position(|m| *m == args.map);
        Playground {
            map: known.unwrap_or(0),
            custom_map: known.is_none().then(|| args.map.clone()),
            rng: Rng(args.seed),
            selected: None,
            painting: None,
            wander: true,
            crowd: args.crowd,
            picture: (0, 0),
            shown: Vec::new(),
            patches: HashMap::new(),
            frame: 0,
            refit: false,
            #[cfg(not(target_arch = "wasm32"))]
            shot_at: None,
        }
    }
}

/// An agent of the playground.
#[derive(Component)]
struct Agent;

/// The colour of an agent's disc, an index into [`AGENT_COLORS`] (0
/// without it).
#[derive(Component, Clone, Copy)]
struct Team(usize);

/// The main camera (the map, the gizmos, the cursor's world point).
#[derive(Component)]
struct MainCamera;

/// The camera of the agents' discs: a child of the main camera, with its
/// projection, drawn after it.
#[derive(Component)]
struct DiscCamera;

/// What agents' discs are made of: one mesh, a disc of radius 1 scaled by
/// each agent's `Transform`, a material per colour, and one for agents in
/// the lift.
#[derive(Resource)]
struct Discs {
    mesh: Handle<Mesh>,
    materials: Vec<Handle<ColorMaterial>>,
    riding: Handle<ColorMaterial>,
}

/// The map picture's sprite.
#[derive(Component)]
struct MapPicture;

/// The text overlay.
#[derive(Component)]
struct Overlay;

/// Frame timings of the plugin's systems and of the debug drawing.
#[derive(Resource, Default)]
struct Timing {
    plugin_start: Option<Instant>,
    gizmos_start: Option<Instant>,
    /// Smoothed milliseconds per frame.
    plugin_ms: f32,
    gizmos_ms: f32,
    frame_ms: f32,
    /// Searches started at the start of the current one-second window.
    window: Option<(Instant, u64)>,
    searches_per_second: f32,
    last_text: Option<Instant>,
}

fn smooth(old: f32, new: f32) -> f32 {
    if old == 0.0 {
        new
    } else {
        old * 0.9 + new * 0.1
    }
}

fn plugin_began(mut timing: ResMut<Timing>) {
    timing.plugin_start = Some(Instant::now());
}

fn plugin_ended(mut timing: ResMut<Timing>) {
    if let Some(t) = timing.plugin_start.take() {
        timing.plugin_ms = smooth(timing.plugin_ms, t.elapsed().as_secs_f32() * 1e3);
    }
}

fn gizmos_began(mut timing: ResMut<Timing>) {
    timing.gizmos_start = Some(Instant::now());
}

fn gizmos_ended(mut timing: ResMut<Timing>) {
    if let Some(t) = timing.gizmos_start.take() {
        timing.gizmos_ms = smooth(timing.gizmos_ms, t.elapsed().as_secs_f32() * 1e3);
    }
}

/// Reads a bundled map by name, or a map file by path, tiled `tile` times
/// each way.
fn load_map(name: &str, tile: u32) -> Result<Grid, String> {
    let (source, text) = map_text(name)?;
    let grid = Grid::from_movingai(&text).map_err(|e| format!("{source}: {e}"))?;
    if tile == 1 {
        return Ok(grid);
    }
    tiled_rect(&grid, tile, tile, 0)
}

/// The text of a bundled map by name, or of a map file by path, and where it
/// came from (for messages).
#[cfg(not(target_arch = "wasm32"))]
fn map_text(name: &str) -> Result<(String, String), String> {
    let path = if name.contains('/') || name.contains('.') {
        PathBuf::from(name)
    } else {
        PathBuf::from(format!("{MAP_DIR}/{name}.map"))
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path.display().to_string(), text))
}

/// The text of a bundled map by name (the browser has no files to read).
#[cfg(target_arch = "wasm32")]
fn map_text(name: &str) -> Result<(String, String), String> {
    let i = MAPS
        .iter()
        .position(|m| *m == name)
        .ok_or_else(|| format!("{name}: not a bundled map"))?;
    Ok((name.to_owned(), MAP_TEXTS[i].to_owned()))
}

/// `across` x `down` copies of `grid`, `gap` walled cells apart.
fn tiled_rect(grid: &Grid, across: u32, down: u32, gap: u32) -> Result<Grid, String> {
    let (w, h) = (grid.width(), grid.height());
    let big_w = across * w + (across - 1) * gap;
    let big_h = down * h + (down - 1) * gap;
    let mut big = Grid::new_blocked(big_w, big_h).map_err(|e| e.to_string())?;
    big.edit(|e| {
        for ty in 0..down {
            for tx in 0..across {
                for y in 0..h {
                    for x in 0..w {
                        let c = UVec2::new(x, y);
                        if grid.is_free(c) {
                            let at = UVec2::new(tx * (w + gap) + x, ty * (h + gap) + y);
                            e.set_free(at, true)?;
                        }
                    }
                }
            }
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(big)
}

/// The grid centred on the world origin, one world unit per cell.
fn placement(grid: &Grid) -> GridTransform {
    let size = grid.size().as_vec2();
    GridTransform::new(-size / 2.0, 1.0).expect("a finite placement")
}

/// A random free cell centre (world), or `None` after many tries.
fn random_free_point(nav: &NavGrid, rng: &mut Rng) -> Option<Vec2> {
    let grid = nav.grid();
    (0..10_000).find_map(|_| {
        let c = UVec2::new(rng.below(grid.width()), rng.below(grid.height()));
        grid.is_free(c).then(|| nav.cell_center(c))
    })
}

/// A random free cell centre reachable from `from` (world), if one is found.
fn random_goal(nav: &NavGrid, rng: &mut Rng, from: Vec2) -> Option<Vec2> {
    let start = nav.cell_at(from)?;
    let grid = nav.grid();
    (0..10_000).find_map(|_| {
        let c = UVec2::new(rng.below(grid.width()), rng.below(grid.height()));
        (grid.is_free(c) && grid.same_region(start, c)).then(|| nav.cell_center(c))
    })
}

/// The free cell nearest `c` (grid), searching outwards in rings.
fn nearest_free(grid: &Grid, c: UVec2) -> Option<UVec2> {
    let (cx, cy) = (i64::from(c.x), i64::from(c.y));
    for r in 0..i64::from(grid.width().max(grid.height())) {
        for dy in -r..=r {
            for dx in -r..=r {
                if dx.abs() != r && dy.abs() != r {
                    continue;
                }
                let (x, y) = (cx + dx, cy + dy);
                if grid.is_free_xy(x, y) {
                    return Some(UVec2::new(x as u32, y as u32));
                }
            }
        }
    }
    None
}

/// `n` agents on random free cells, each sent to a random goal; in crowd
/// mode of radius [`CROWD_RADIUS`], with [`LocalAvoidance`].
fn spawn_agents(commands: &mut Commands, nav: &NavGrid, rng: &mut Rng, n: usize, crowd: bool) {
    for _ in 0..n {
        let Some(at) = random_free_point(nav, rng) else {
            return;
        };
        let goal = random_goal(nav, rng, at).unwrap_or(at);
        spawn_agent(commands, nav, at, goal, crowd);
    }
}

/// An agent at `at` sent to `goal` (world points); in crowd mode of radius
/// [`CROWD_RADIUS`], with [`LocalAvoidance`].
fn spawn_agent(
    commands: &mut Commands,
    nav: &NavGrid,
    at: Vec2,
    goal: Vec2,
    crowd: bool,
) -> Entity {
    let radius = if crowd { crowd_radius(nav) } else { 0.0 };
    let mut agent = commands.spawn((
        Agent,
        Transform::from_translation(at.extend(1.0)),
        PathRequest::to(goal).with_radius(radius),
        PathFollower {
            speed: SPEED,
            arrive_radius: 0.2,
        },
    ));
    if crowd {
        agent.insert(LocalAvoidance);
    }
    agent.id()
}

/// The agents' radius in crowd mode, world units.
fn crowd_radius(nav: &NavGrid) -> f32 {
    CROWD_RADIUS * nav.transform().cell_size()
}

fn setup(
    mut commands: Commands,
    args: Res<Args>,
    mut playground: ResMut<Playground>,
    mut gizmo_store: ResMut<GizmoConfigStore>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
    mut images: ResMut<Assets<Image>>,
) {
    // Gizmos are drawn after everything else a camera draws: the discs,
    // above them, have a camera of their own, drawn next (the text overlay
    // goes to it too, as the last camera).
    commands.spawn((Camera2d, MainCamera)).with_child((
        Camera2d,
        Camera {
            order: 1,
            clear_color: ClearColorConfig::None,
            ..default()
        },
        RenderLayers::layer(DISC_LAYER),
        DiscCamera,
    ));
    commands.insert_resource(Discs {
        mesh: meshes.add(disc_mesh()),
        materials: AGENT_COLORS
            .iter()
            .map(|&color| materials.add(color))
            .collect(),
        riding: materials.add(RIDING_COLOR),
    });
    commands.spawn((
        Overlay,
        Text::new(""),
        TextFont::from_font_size(15.0),
        TextColor(Color::srgb(0.92, 0.92, 0.95)),
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.65)),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(8.0),
            left: Val::Px(8.0),
            padding: UiRect::all(Val::Px(8.0)),
            ..default()
        },
    ));
    let (line, nav_gizmos) = gizmo_store.config_mut::<NavGizmos>();
    line.line.width = 2.0;
    // The map picture shows the walls; `G` adds their outlines.
    nav_gizmos.blocked = None;
    let playground = &mut *playground;
    match args.script {
        None if args.floors => {
            let floors = spawn_floors(&mut commands, &mut images, &mut playground.rng, args.agents);
            commands.insert_resource(floors);
        }
        None => {
            let name = playground
                .custom_map
                .clone()
                .unwrap_or_else(|| MAPS[playground.map].to_owned());
            let grid = load_map(&name, args.tile).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1);
            });
            let nav = NavGrid::new(grid.clone(), placement(&grid));
            let crowd = playground.crowd;
            spawn_agents(&mut commands, &nav, &mut playground.rng, args.agents, crowd);
            commands.insert_resource(nav);
        }
        Some(script) => setup_script(&mut commands, script, playground, nav_gizmos, &mut images),
    }
}

/// A disc of radius 1 around the origin, in the colour of its material
/// with a dark rim, so that discs side by side stay apart.
fn disc_mesh() -> Mesh {
    const SIDES: u32 = 24;
    // Where the rim begins, as a fraction of the radius, and its shade.
    const RIM: f32 = 0.75;
    const FILL: [f32; 4] = [1.0, 1.0, 1.0, 1.0];
    const SHADE: [f32; 4] = [0.12, 0.12, 0.12, 1.0];
    let ring = |r: f32| {
        (0..SIDES).map(move |i| {
            let (sin, cos) = (i as f32 / SIDES as f32 * std::f32::consts::TAU).sin_cos();
            [r * cos, r * sin, 0.0]
        })
    };
    // The centre, the fill's edge, then the rim's inner and outer edges.
    let positions: Vec<[f32; 3]> = std::iter::once([0.0; 3])
        .chain(ring(RIM))
        .chain(ring(RIM))
        .chain(ring(1.0))
        .collect();
    let colors: Vec<[f32; 4]> = (0..positions.len())
        .map(|i| if i <= SIDES as usize { FILL } else { SHADE })
        .collect();
    let uvs: Vec<[f32; 2]> = positions
        .iter()
        .map(|p| [0.5 + p[0] / 2.0, 0.5 - p[1] / 2.0])
        .collect();
    let normals = vec![[0.0, 0.0, 1.0]; positions.len()];
    let mut indices = Vec::new();
    for i in 0..SIDES {
        let j = (i + 1) % SIDES;
        indices.extend([0, 1 + i, 1 + j]);
        let (inner, outer) = (1 + SIDES, 1 + 2 * SIDES);
        indices.extend([inner + i, outer + i, outer + j]);
        indices.extend([inner + i, outer + j, inner + j]);
    }
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::RENDER_WORLD,
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
    .with_inserted_attribute(Mesh::ATTRIBUTE_UV_0, uvs)
    .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, colors)
    .with_inserted_indices(Indices::U32(indices))
}

/// New agents get their disc: the shared mesh, their team's material, the
/// discs' render layer.
fn dress_agents(
    mut commands: Commands,
    discs: Res<Discs>,
    agents: Query<(Entity, Option<&Team>), Added<Agent>>,
) {
    for (entity, team) in &agents {
        let i = team.map_or(0, |t| t.0).min(discs.materials.len() - 1);
        commands.entity(entity).insert((
            Mesh2d(discs.mesh.clone()),
            MeshMaterial2d(discs.materials[i].clone()),
            RenderLayers::layer(DISC_LAYER),
        ));
    }
}

/// Scales every agent's disc to its radius, or for a point agent to
/// [`POINT_DISC`] (so many cells, and so many pixels at the current zoom).
/// Only agents whose disc changes are touched.
fn size_agents(
    nav: Option<Res<NavGrid>>,
    camera: Single<&Projection, With<MainCamera>>,
    mut agents: Query<(&PathRequest, &mut Transform), With<Agent>>,
) {
    // (The floors' cells are of size 1.)
    let cell = nav.map_or(1.0, |nav| nav.transform().cell_size());
    let pixel = match *camera {
        Projection::Orthographic(o) => o.scale,
        _ => 0.0,
    };
    let point = (POINT_DISC.0 * cell).max(POINT_DISC.1 * pixel);
    for (request, mut transform) in &mut agents {
        let r = if request.radius > 0.0 {
            request.radius
        } else {
            point
        };
        let scale = Vec3::new(r, r, 1.0);
        if transform.scale != scale {
            transform.scale = scale;
        }
    }
}

/// The discs' camera sees what the main camera sees.
fn follow_camera(
    main: Query<&Projection, (With<MainCamera>, Changed<Projection>)>,
    mut discs: Query<&mut Projection, (With<DiscCamera>, Without<MainCamera>)>,
) {
    if let (Ok(main), Ok(mut discs)) = (main.single(), discs.single_mut()) {
        *discs = main.clone();
    }
}

/// The fixed scene of a script.
fn setup_script(
    commands: &mut Commands,
    script: Script,
    playground: &mut Playground,
    gizmos: &mut NavGizmos,
    images: &mut Assets<Image>,
) {
    match script {
        Script::Compare => {
            // One query on three copies of a map, one planner each.
            let one = load_map("lt_backalley_n", 1).expect("a bundled map");
            let grid = tiled_rect(&one, 3, 1, 2).expect("a valid tiling");
            let nav = NavGrid::new(grid.clone(), placement(&grid));
            let start = nearest_free(&one, UVec2::new(24, 6)).expect("a free cell");
            let goal = nearest_free(&one, UVec2::new(4, 112)).expect("a free cell");
            let algorithms = [Algorithm::Anya, Algorithm::LazyTheta, Algorithm::AStar];
            for (i, algorithm) in algorithms.into_iter().enumerate() {
                let dx = i as u32 * (one.width() + 2);
                let s = nav.cell_center(start + UVec2::new(dx, 0));
                let g = nav.cell_center(goal + UVec2::new(dx, 0));
                commands.spawn((
                    Agent,
                    Transform::from_translation(s.extend(1.0)),
                    PathRequest::to(g).with_algorithm(algorithm),
                    CompareLabel(algorithm),
                ));
            }
            commands.insert_resource(nav);
        }
        Script::Replan => {
            // Paths that did not change fade back, so that the replanned
            // ones stand out; agents are drawn as rings of a cell.
            gizmos.recent = 30.0;
            gizmos.anya = gizmos.anya.with_alpha(0.45);
            gizmos.marker_radius = 0.8;
            let grid = load_map("den520d", 1).expect("a bundled map");
            let nav = NavGrid::new(grid.clone(), placement(&grid));
            spawn_agents(commands, &nav, &mut playground.rng, 300, false);
            playground.custom_map = Some("den520d".into());
            commands.insert_resource(nav);
        }
        Script::Intervals => {
            let grid = load_map("lt_backalley_n", 1).expect("a bundled map");
            let nav = NavGrid::new(grid.clone(), placement(&grid));
            let start = nearest_free(&grid, UVec2::new(24, 6)).expect("a free cell");
            let goal = nearest_free(&grid, UVec2::new(120, 60)).expect("a free cell");
            let agent = commands
                .spawn((
                    Agent,
                    Transform::from_translation(nav.cell_center(start).extend(1.0)),
                    PathRequest::to(nav.cell_center(goal)).with_algorithm(Algorithm::Anya),
                    TraceSearch,
                    DrawNavGizmos,
                ))
                .id();
            playground.selected = Some(agent);
            playground.custom_map = Some("lt_backalley_n".into());
            commands.insert_resource(nav);
        }
        Script::Door => {
            // The discs alone: 600 paths would hide them.
            gizmos.all_agents = false;
            let grid = door_map();
            let nav = NavGrid::new(grid.clone(), placement(&grid));
            // Half the agents on each side of the wall (world x = 0), apart
            // from each other and the walls; each side's crowd is sent to
            // one point halfway to the far wall on the other side, level
            // with the door's middle (world y = 0).
            let min = 1.0 + CROWD_RADIUS;
            let max = DOOR_MAP.as_vec2() / 2.0 - Vec2::splat(min);
            let mut placed: Vec<Vec2> = Vec::new();
            let unit = |rng: &mut Rng| rng.below(1 << 20) as f32 / (1 << 20) as f32;
            for _ in 0..DOOR_AGENTS * 100 {
                if placed.len() == DOOR_AGENTS {
                    break;
                }
                let side = if placed.len().is_multiple_of(2) {
                    -1.0
                } else {
                    1.0
                };
                let x = side * (min + unit(&mut playground.rng) * (max.x - min));
                let y = (2.0 * unit(&mut playground.rng) - 1.0) * max.y;
                let at = Vec2::new(x, y);
                if placed.iter().any(|p| p.distance(at) < 3.0 * CROWD_RADIUS) {
                    continue;
                }
                placed.push(at);
                let goal = Vec2::new(-side * DOOR_MAP.x as f32 / 4.0, 0.0);
                let agent = spawn_agent(commands, &nav, at, goal, true);
                commands.entity(agent).insert(Team(usize::from(x > 0.0)));
            }
            playground.custom_map = Some("a wall with a door".into());
            playground.crowd = true;
            commands.insert_resource(nav);
        }
        Script::Floors => {
            // Replans stay highlighted to the end of the scene; paths fade
            // back, so that the links and the replanned paths stand out.
            gizmos.recent = 60.0;
            gizmos.polyanya = gizmos.polyanya.with_alpha(0.45);
            let floors = spawn_floors(commands, images, &mut playground.rng, FLOORS_AGENTS);
            commands.insert_resource(floors);
        }
    }
}

/// `door`'s map: [`DOOR_MAP`] cells, a wall two cells thick down the
/// middle, and in it a door [`DOOR_WIDTH`] cells wide.
fn door_map() -> Grid {
    let (w, h) = (DOOR_MAP.x, DOOR_MAP.y);
    let mut grid = Grid::new(w, h).expect("a valid size");
    let wall = |y0, y1| URect::new(w / 2 - 1, y0, w / 2 + 1, y1);
    let door = (h - DOOR_WIDTH) / 2;
    for rect in [wall(0, door), wall(door + DOOR_WIDTH, h)] {
        grid.set_rect_free(rect, false).expect("inside the grid");
    }
    grid
}

/// Floors mode: the floors' areas, the ground floor first, and the door's
/// link.
#[derive(Resource)]
struct Floors {
    areas: [Entity; FLOORS],
    door: Entity,
}

/// What floors mode spawns besides its agents (areas, links, pictures and
/// labels), despawned when it ends.
#[derive(Component)]
struct FloorsPart;

/// On an agent in the lift: since when (see [`seconds`]), the link's ends
/// it travels between (world), and the disc that shows it travelling (the
/// agent itself waits at the near end until it is carried across).
#[derive(Component)]
struct Riding {
    since: f32,
    from: Vec2,
    to: Vec2,
    cabin: Entity,
}

/// The disc of an agent in the lift.
#[derive(Component)]
struct Cabin;

/// The walls of each floor, as rectangles of cells `[x0, y0, x1, y1]`
/// (half-open, row 0 at the top): rooms with doorways, every free cell of
/// a floor reachable from every other.
const FLOOR_WALLS: [&[[u32; 4]]; FLOORS] = [
    // The ground floor: a hall with pillars on the left, rooms on the
    // right.
    &[
        [15, 0, 16, 5],
        [15, 8, 16, 20],
        [15, 24, 16, 32],
        [16, 16, 22, 17],
        [26, 16, 36, 17],
        [40, 16, 44, 17],
        [31, 17, 32, 24],
        [31, 27, 32, 32],
        [4, 6, 6, 8],
        [9, 6, 11, 8],
        [4, 24, 6, 26],
        [9, 24, 11, 26],
    ],
    // The first floor: offices on either side of a corridor.
    &[
        [0, 10, 5, 11],
        [8, 10, 17, 11],
        [20, 10, 29, 11],
        [32, 10, 41, 11],
        [44, 10, 48, 11],
        [12, 0, 13, 10],
        [24, 0, 25, 10],
        [36, 0, 37, 10],
        [0, 21, 9, 22],
        [12, 21, 26, 22],
        [29, 21, 40, 22],
        [43, 21, 48, 22],
        [18, 22, 19, 32],
        [34, 22, 35, 32],
    ],
    // The second floor: a hall around a block, and a few walls.
    &[
        [18, 11, 30, 21],
        [6, 6, 14, 7],
        [6, 7, 7, 14],
        [34, 25, 42, 26],
        [41, 18, 42, 25],
        [38, 5, 40, 7],
        [8, 24, 10, 26],
    ],
];

/// Floor `i`'s grid: [`FLOOR_SIZE`] cells and [`FLOOR_WALLS`].
fn floor_grid(i: usize) -> Grid {
    let mut grid = Grid::new(FLOOR_SIZE.x, FLOOR_SIZE.y).expect("a valid size");
    for &[x0, y0, x1, y1] in FLOOR_WALLS[i] {
        grid.set_rect_free(URect::new(x0, y0, x1, y1), false)
            .expect("inside the floor");
    }
    grid
}

/// The world rectangle the floors cover, centred on the world origin.
fn floors_rect() -> Rect {
    let step = UVec2::new(FLOOR_SIZE.x + FLOOR_GAP, FLOOR_RISE);
    let size = FLOOR_SIZE + step * (FLOORS as u32 - 1);
    Rect::from_center_size(Vec2::ZERO, size.as_vec2())
}

/// Floor `i`'s bottom-left corner (world): the floors stand side by side,
/// [`FLOOR_GAP`] cells apart, each [`FLOOR_RISE`] cells higher than the
/// one before.
fn floor_origin(i: usize) -> Vec2 {
    let step = UVec2::new(FLOOR_SIZE.x + FLOOR_GAP, FLOOR_RISE).as_vec2();
    floors_rect().min + step * i as f32
}

/// Floors mode: the floors (areas, pictures, labels), the links between
/// them, and `agents` agents; returns the [`Floors`] to insert.
fn spawn_floors(
    commands: &mut Commands,
    images: &mut Assets<Image>,
    rng: &mut Rng,
    agents: usize,
) -> Floors {
    let mut navs = Vec::with_capacity(FLOORS);
    let mut areas = [Entity::PLACEHOLDER; FLOORS];
    for (i, area) in areas.iter_mut().enumerate() {
        let grid = floor_grid(i);
        let at = GridTransform::new(floor_origin(i), 1.0).expect("a finite placement");
        let nav = NavGrid::new(grid.clone(), at);
        let rect = nav.world_rect();
        commands.spawn((
            FloorsPart,
            Sprite {
                image: images.add(grid_image(&grid)),
                custom_size: Some(rect.size()),
                ..default()
            },
            Transform::from_translation(rect.center().extend(0.0)),
        ));
        let label = Vec2::new(rect.min.x, rect.max.y + 0.6);
        commands.spawn((
            FloorsPart,
            Text2d::new(FLOOR_NAMES[i]),
            TextFont::from_font_size(22.0),
            TextColor(Color::srgb(0.75, 0.77, 0.85)),
            Anchor::BOTTOM_LEFT,
            Transform::from_translation(label.extend(5.0)).with_scale(Vec3::splat(0.1)),
        ));
        // (Heights are not read on the XY plane; in 3D they would be.)
        let floor = NavArea::new(nav.clone()).with_height(4.0 * i as f32);
        *area = commands.spawn((FloorsPart, floor)).id();
        navs.push(nav);
    }
    // Link ends at cell centres near the floors' facing edges.
    let end = |floor: usize, x: u32, y: u32| {
        LinkEnd::new(areas[floor], navs[floor].cell_center(UVec2::new(x, y)))
    };
    let stairs = |from, to| NavLink::new(from, to).with_cost(8.0);
    let door = commands
        .spawn((FloorsPart, stairs(end(0, 47, 20), end(1, 0, 31))))
        .id();
    for link in [
        stairs(end(0, 47, 5), end(1, 0, 28)),
        stairs(end(1, 47, 1), end(2, 0, 21)),
        // A slide from the first floor's corridor down to the ground floor.
        NavLink::new(end(1, 0, 12), end(0, 47, 0))
            .with_cost(2.0)
            .one_way(),
        // The lift: the playground carries agents across (`operate_lift`).
        NavLink::new(end(1, 47, 22), end(2, 0, 30))
            .with_cost(6.0)
            .handed(),
    ] {
        commands.spawn((FloorsPart, link));
    }
    let grids: Vec<(Entity, &NavGrid)> = areas.iter().copied().zip(&navs).collect();
    for _ in 0..agents {
        spawn_floor_agent(commands, &grids, rng);
    }
    Floors { areas, door }
}

/// The floors' areas and grids, the ground floor first.
fn floor_grids<'a>(floors: &Floors, areas: &'a Query<&NavArea>) -> Vec<(Entity, &'a NavGrid)> {
    floors
        .areas
        .iter()
        .filter_map(|&e| areas.get(e).ok().map(|a| (e, &a.grid)))
        .collect()
}

/// A random free cell centre (world) of a random floor, and the floor.
fn random_floor_point(floors: &[(Entity, &NavGrid)], rng: &mut Rng) -> Option<(Entity, Vec2)> {
    let &(area, nav) = floors.get(rng.below(floors.len() as u32) as usize)?;
    Some((area, random_free_point(nav, rng)?))
}

/// An agent on a random free cell of a random floor, sent to a random free
/// cell of a random floor.
fn spawn_floor_agent(commands: &mut Commands, floors: &[(Entity, &NavGrid)], rng: &mut Rng) {
    let (Some((on, at)), Some((goal_area, goal))) = (
        random_floor_point(floors, rng),
        random_floor_point(floors, rng),
    ) else {
        return;
    };
    commands.spawn((
        Agent,
        Transform::from_translation(at.extend(1.0)),
        OnArea(on),
        PathRequest::to(goal),
        GoalArea(goal_area),
        PathFollower {
            speed: SPEED,
            arrive_radius: 0.2,
        },
    ));
}

/// Seconds since the start: in a script, frames at 60 a second (the same
/// on every run, however slowly frames come); otherwise the app's time.
fn seconds(args: &Args, playground: &Playground, time: &Time) -> f32 {
    if args.script.is_some() {
        playground.frame as f32 / 60.0
    } else {
        time.elapsed_secs()
    }
}

/// The lift: an agent waiting at a handed link ([`CrossingLink`]) rides
/// for [`LIFT_SECONDS`], a violet disc moving along the link in its place,
/// and is then carried across ([`CrossLink`]).
#[expect(clippy::too_many_arguments, reason = "system parameters")]
fn operate_lift(
    mut commands: Commands,
    args: Res<Args>,
    playground: Res<Playground>,
    time: Res<Time>,
    discs: Res<Discs>,
    waiting: Query<(Entity, &CrossingLink, &NavPath, &Transform, Option<&Riding>)>,
    replanned: Query<(Entity, &Riding), Without<CrossingLink>>,
    mut cabins: Query<&mut Transform, (With<Cabin>, Without<CrossingLink>)>,
) {
    let now = seconds(&args, &playground, &time);
    // Planned another way while waiting: off the lift.
    for (e, riding) in &replanned {
        commands.entity(riding.cabin).try_despawn();
        commands
            .entity(e)
            .remove::<Riding>()
            .insert(Visibility::Inherited);
    }
    for (e, crossing, path, transform, riding) in &waiting {
        let Some(riding) = riding else {
            let from = transform.translation.truncate();
            let to = path
                .waypoints
                .get(crossing.0.at + 1)
                .copied()
                .unwrap_or(from);
            let cabin = commands
                .spawn((
                    Cabin,
                    FloorsPart,
                    Mesh2d(discs.mesh.clone()),
                    MeshMaterial2d(discs.riding.clone()),
                    RenderLayers::layer(DISC_LAYER),
                    Transform::from_translation(from.extend(1.5)).with_scale(transform.scale),
                ))
                .id();
            let riding = Riding {
                since: now,
                from,
                to,
                cabin,
            };
            commands.entity(e).insert((riding, Visibility::Hidden));
            continue;
        };
        let t = ((now - riding.since) / LIFT_SECONDS).clamp(0.0, 1.0);
        if let Ok(mut cabin) = cabins.get_mut(riding.cabin) {
            // Smoothly off and smoothly in.
            let eased = t * t * (3.0 - 2.0 * t);
            let at = riding.from.lerp(riding.to, eased);
            cabin.translation = at.extend(cabin.translation.z);
        }
        if t >= 1.0 {
            commands.trigger(CrossLink { entity: e });
            commands.entity(riding.cabin).try_despawn();
            commands
                .entity(e)
                .remove::<Riding>()
                .insert(Visibility::Inherited);
        }
    }
}

/// Floors mode: agents that arrived (or cannot go on) get a new random goal
/// on a random floor.
fn wander_floors(
    floors: Option<Res<Floors>>,
    areas: Query<&NavArea>,
    mut playground: ResMut<Playground>,
    mut agents: Query<(&NavPath, &PathStatus, &mut PathRequest, &mut GoalArea), With<Agent>>,
) {
    let Some(floors) = floors else { return };
    if !playground.wander {
        return;
    }
    let grids = floor_grids(&floors, &areas);
    for (path, status, mut request, mut goal_area) in &mut agents {
        let stuck = matches!(status, PathStatus::Unreachable | PathStatus::Failed(_));
        let arrived = status.has_path() && path.is_finished() && !path.cut;
        if (stuck || arrived)
            && let Some((area, goal)) = random_floor_point(&grids, &mut playground.rng)
        {
            request.goal = PathGoal::Point(goal);
            goal_area.set_if_neq(GoalArea(area));
        }
    }
}

/// Floors mode: fits the camera to the floors when they appear, and on
/// `Home`.
fn fit_floors(
    floors: Option<Res<Floors>>,
    mut playground: ResMut<Playground>,
    camera: Single<(&mut Projection, &mut Transform), With<MainCamera>>,
    window: Single<&Window, With<PrimaryWindow>>,
) {
    let Some(floors) = floors else { return };
    if !(floors.is_added() || playground.refit) {
        return;
    }
    playground.refit = false;
    // The floors and their labels, below the overlay.
    let mut bounds = floors_rect();
    bounds.max.y += 3.0;
    let (top, view) = (130.0, window.size());
    let scale = (bounds.width() / (view.x - 40.0)).max(bounds.height() / (view.y - top - 30.0));
    let centre = bounds.center() + Vec2::new(0.0, (top - 10.0) / 2.0 * scale);
    let (mut projection, mut transform) = camera.into_inner();
    transform.translation = centre.extend(transform.translation.z);
    *projection = Projection::Orthographic(OrthographicProjection {
        scaling_mode: ScalingMode::WindowSize,
        scale,
        ..OrthographicProjection::default_2d()
    });
}

/// Query filter: what floors mode spawns, or the one map's picture.
type PartOrPicture = Or<(With<FloorsPart>, With<MapPicture>)>;

/// `F`: floors mode on or off (the agents start afresh, as many as there
/// were); in floors mode `O` opens or closes the door, `Space` adds agents,
/// and `M` / `N` leave it for the next map (loaded by [`keys`]).
#[expect(clippy::too_many_arguments, reason = "system parameters")]
fn floors_keys(
    mut commands: Commands,
    input: Res<ButtonInput<KeyCode>>,
    args: Res<Args>,
    mut playground: ResMut<Playground>,
    mut images: ResMut<Assets<Image>>,
    floors: Option<Res<Floors>>,
    areas: Query<&NavArea>,
    mut links: Query<&mut NavLink>,
    agents: Query<Entity, With<Agent>>,
    parts: Query<Entity, PartOrPicture>,
) {
    let playground = &mut *playground;
    if let Some(floors) = floors.as_deref() {
        if input.just_pressed(KeyCode::KeyO)
            && let Ok(mut door) = links.get_mut(floors.door)
        {
            door.enabled = !door.enabled;
        }
        if input.just_pressed(KeyCode::Space) {
            let grids = floor_grids(floors, &areas);
            for _ in 0..AGENTS.1 {
                spawn_floor_agent(&mut commands, &grids, &mut playground.rng);
            }
        }
        if input.any_just_pressed([KeyCode::KeyM, KeyCode::KeyN]) {
            for e in &parts {
                commands.entity(e).despawn();
            }
            commands.remove_resource::<Floors>();
            return;
        }
    }
    if !input.just_pressed(KeyCode::KeyF) {
        return;
    }
    let count = agents.iter().count().max(args.agents);
    for e in agents.iter().chain(&parts) {
        commands.entity(e).despawn();
    }
    playground.selected = None;
    playground.patches.clear();
    playground.picture = (0, 0);
    if floors.is_some() {
        commands.remove_resource::<Floors>();
        let name = playground
            .custom_map
            .clone()
            .unwrap_or_else(|| MAPS[playground.map].to_owned());
        match load_map(&name, args.tile) {
            Ok(grid) => {
                let nav = NavGrid::new(grid.clone(), placement(&grid));
                let crowd = playground.crowd;
                spawn_agents(&mut commands, &nav, &mut playground.rng, count, crowd);
                commands.insert_resource(nav);
            }
            Err(e) => eprintln!("{e}"),
        }
    } else {
        commands.remove_resource::<NavGrid>();
        let floors = spawn_floors(&mut commands, &mut images, &mut playground.rng, count);
        commands.insert_resource(floors);
    }
}

/// Which planner a `compare` agent shows.
#[derive(Component)]
struct CompareLabel(Algorithm);

fn algorithm_name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Anya => "Anya",
        Algorithm::LazyTheta => "Lazy Theta*",
        Algorithm::AStar => "A*",
        Algorithm::AStarSmoothed => "A* smoothed",
        Algorithm::Polyanya => "Polyanya",
    }
}

/// Keeps the map picture in step with the grid: redrawn when the grid is
/// replaced; edited cells get a small sprite of their own on top of it (new
/// sprites show at once, where a changed image can show late). Fits the
/// camera to a new map.
fn update_map_picture(
    mut commands: Commands,
    nav: Option<Res<NavGrid>>,
    mut playground: ResMut<Playground>,
    mut images: ResMut<Assets<Image>>,
    pictures: Query<Entity, With<MapPicture>>,
    camera: Single<(&mut Projection, &mut Transform), With<MainCamera>>,
    window: Single<&Window, With<PrimaryWindow>>,
) {
    let Some(nav) = nav else { return };
    let now = (nav.layout_id(), nav.version());
    if playground.picture == now {
        return;
    }
    let grid = nav.grid();
    let edited = if playground.picture.0 == now.0 {
        nav.edits_since(playground.picture.1)
    } else {
        None
    };
    playground.picture = now;
    let playground = &mut *playground;
    if let Some(edits) = edited {
        for e in edits {
            let rect = URect::from_corners(e.rect.min, e.rect.max.min(grid.size()));
            for y in rect.min.y..rect.max.y {
                for x in rect.min.x..rect.max.x {
                    let c = UVec2::new(x, y);
                    let wall = grid.is_blocked(c);
                    let shown = playground.shown[(y * grid.width() + x) as usize];
                    match (wall != shown, playground.patches.get(&c)) {
                        (true, None) => {
                            let [r, g, b, a] = if wall { WALL } else { FLOOR };
                            let patch = commands
                                .spawn((
                                    MapPicture,
                                    Sprite::from_color(
                                        Color::srgba_u8(r, g, b, a),
                                        Vec2::splat(nav.transform().cell_size()),
                                    ),
                                    Transform::from_translation(nav.cell_center(c).extend(0.5)),
                                ))
                                .id();
                            playground.patches.insert(c, patch);
                        }
                        (false, Some(&patch)) => {
                            commands.entity(patch).despawn();
                            playground.patches.remove(&c);
                        }
                        _ => {}
                    }
                }
            }
        }
        return;
    }
    for e in &pictures {
        commands.entity(e).despawn();
    }
    playground.patches.clear();
    let (w, h) = (grid.width(), grid.height());
    playground.shown = (0..h)
        .flat_map(|y| (0..w).map(move |x| UVec2::new(x, y)))
        .map(|c| grid.is_blocked(c))
        .collect();
    let size = nav.world_rect().size();
    commands.spawn((
        MapPicture,
        Sprite {
            image: images.add(grid_image(grid)),
            custom_size: Some(size),
            ..default()
        },
        Transform::from_translation(nav.world_rect().center().extend(0.0)),
    ));
    // Fit the map to the window.
    let (mut projection, mut transform) = camera.into_inner();
    transform.translation = nav.world_rect().center().extend(transform.translation.z);
    let view = window.size();
    let scale = (size.x / (view.x - 20.0)).max(size.y / (view.y - 20.0));
    *projection = Projection::Orthographic(OrthographicProjection {
        scaling_mode: ScalingMode::WindowSize,
        scale,
        ..OrthographicProjection::default_2d()
    });
}

/// A picture of `grid`, a pixel per cell: walls and floor.
fn grid_image(grid: &Grid) -> Image {
    let (w, h) = (grid.width(), grid.height());
    let mut image = Image::new_fill(
        Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        &FLOOR,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD,
    );
    image.sampler = ImageSampler::nearest();
    if let Some(data) = image.data.as_mut() {
        let cells = (0..h).flat_map(|y| (0..w).map(move |x| UVec2::new(x, y)));
        for (pixel, c) in data.chunks_exact_mut(4).zip(cells) {
            if grid.is_blocked(c) {
                pixel.copy_from_slice(&WALL);
            }
        }
    }
    image
}

/// The world point under the cursor.
fn cursor_world(window: &Window, camera: (&Camera, &GlobalTransform)) -> Option<Vec2> {
    let cursor = window.cursor_position()?;
    camera.0.viewport_to_world_2d(camera.1, cursor).ok()
}

#[expect(clippy::too_many_arguments, reason = "system parameters")]
fn keys(
    mut commands: Commands,
    input: Res<ButtonInput<KeyCode>>,
    args: Res<Args>,
    mut playground: ResMut<Playground>,
    mut settings: ResMut<PathfindingSettings>,
    mut gizmo_store: ResMut<GizmoConfigStore>,
    nav: Option<Res<NavGrid>>,
    mut agents: Query<(Entity, &mut PathRequest), With<Agent>>,
) {
    for (key, algorithm) in [
        (KeyCode::Digit1, Algorithm::Anya),
        (KeyCode::Digit2, Algorithm::LazyTheta),
        (KeyCode::Digit3, Algorithm::AStar),
        (KeyCode::Digit4, Algorithm::AStarSmoothed),
        (KeyCode::Digit5, Algorithm::Polyanya),
    ] {
        if input.just_pressed(key) {
            settings.algorithm = algorithm;
        }
    }
    if input.just_pressed(KeyCode::KeyP) {
        settings.paused = !settings.paused;
    }
    if input.just_pressed(KeyCode::KeyW) {
        playground.wander = !playground.wander;
    }
    if input.just_pressed(KeyCode::KeyV)
        && let Some(nav) = nav.as_deref()
    {
        playground.crowd = !playground.crowd;
        let radius = if playground.crowd {
            crowd_radius(nav)
        } else {
            0.0
        };
        for (e, mut request) in &mut agents {
            request.radius = radius;
            if playground.crowd {
                commands.entity(e).insert(LocalAvoidance);
            } else {
                commands.entity(e).remove::<LocalAvoidance>();
            }
        }
    }
    if input.just_pressed(KeyCode::KeyG) {
        let cfg = gizmo_store.config_mut::<NavGizmos>().1;
        cfg.blocked = match cfg.blocked {
            Some(_) => None,
            None => NavGizmos::default().blocked,
        };
    }
    if input.just_pressed(KeyCode::Space)
        && let Some(nav) = nav.as_deref()
    {
        let crowd = playground.crowd;
        spawn_agents(&mut commands, nav, &mut playground.rng, AGENTS.1, crowd);
    }
    let step = if input.just_pressed(KeyCode::KeyM) {
        1
    } else if input.just_pressed(KeyCode::KeyN) {
        MAPS.len() - 1
    } else {
        0
    };
    if step != 0 {
        playground.map = (playground.map + step) % MAPS.len();
        playground.custom_map = None;
        match load_map(MAPS[playground.map], args.tile) {
            Ok(grid) => {
                let count = agents.iter().count().max(args.agents);
                for (e, _) in &agents {
                    commands.entity(e).despawn();
                }
                playground.selected = None;
                let nav = NavGrid::new(grid.clone(), placement(&grid));
                let crowd = playground.crowd;
                spawn_agents(&mut commands, &nav, &mut playground.rng, count, crowd);
                commands.insert_resource(nav);
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}

/// Left drag: paint walls, or erase them when the drag starts on a wall.
fn paint(
    buttons: Res<ButtonInput<MouseButton>>,
    window: Single<&Window, With<PrimaryWindow>>,
    camera: Single<(&Camera, &GlobalTransform), With<MainCamera>>,
    nav: Option<ResMut<NavGrid>>,
    mut playground: ResMut<Playground>,
) {
    let Some(mut nav) = nav else { return };
    if !buttons.pressed(MouseButton::Left) {
        playground.painting = None;
        return;
    }
    let Some(cell) = cursor_world(&window, *camera).and_then(|p| nav.cell_at(p)) else {
        return;
    };
    let (wall, from) = match playground.painting {
        Some(p) => p,
        None => (nav.grid().is_free(cell), cell),
    };
    if playground.painting.is_some_and(|p| p.1 == cell) {
        return;
    }
    // Every cell on the line from the last painted cell, in one edit.
    let (a, b) = (from.as_vec2(), cell.as_vec2());
    let steps = (b - a).abs().max_element().ceil() as u32;
    let _ = nav.edit(|e| {
        for i in 0..=steps {
            let t = if steps == 0 {
                0.0
            } else {
                i as f32 / steps as f32
            };
            let c = a.lerp(b, t).round().as_uvec2();
            e.set_free(c, !wall)?;
        }
        Ok(())
    });
    playground.painting = Some((wall, cell));
}

/// Right click: a new goal for the selected agent, or for every agent;
/// `C`: for every agent. Each keeps its radius. In floors mode the goal is
/// on the floor under the cursor (nothing happens off the floors).
fn set_goals(
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    window: Single<&Window, With<PrimaryWindow>>,
    camera: Single<(&Camera, &GlobalTransform), With<MainCamera>>,
    playground: Res<Playground>,
    areas: Query<(Entity, &NavArea)>,
    mut agents: Query<(Entity, &mut PathRequest, Option<&mut GoalArea>), With<Agent>>,
) {
    let everyone = keys.just_pressed(KeyCode::KeyC);
    if !(everyone || buttons.just_pressed(MouseButton::Right)) {
        return;
    }
    let Some(goal) = cursor_world(&window, *camera) else {
        return;
    };
    let area = areas
        .iter()
        .find(|(_, a)| a.grid.world_rect().contains(goal))
        .map(|(e, _)| e);
    for (e, mut request, goal_area) in &mut agents {
        if !(everyone || playground.selected.is_none_or(|s| s == e)) {
            continue;
        }
        match (goal_area, area) {
            (Some(mut goal_area), Some(area)) => {
                request.goal = PathGoal::Point(goal);
                goal_area.set_if_neq(GoalArea(area));
            }
            (Some(_), None) => {}
            (None, _) => request.goal = PathGoal::Point(goal),
        }
    }
}

/// `S` or middle click: select the agent nearest the cursor (its searches
/// are traced and drawn); `Esc`: none.
fn select(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    buttons: Res<ButtonInput<MouseButton>>,
    window: Single<&Window, With<PrimaryWindow>>,
    camera: Single<(&Camera, &GlobalTransform), With<MainCamera>>,
    mut playground: ResMut<Playground>,
    agents: Query<(Entity, &Transform), With<Agent>>,
) {
    let clear = keys.just_pressed(KeyCode::Escape);
    let pick = keys.just_pressed(KeyCode::KeyS) || buttons.just_pressed(MouseButton::Middle);
    if !(clear || pick) {
        return;
    }
    if let Some(old) = playground.selected.take()
        && let Ok(mut e) = commands.get_entity(old)
    {
        e.remove::<(TraceSearch, DrawNavGizmos, LastSearch)>();
    }
    if clear {
        return;
    }
    let Some(at) = cursor_world(&window, *camera) else {
        return;
    };
    let nearest = agents
        .iter()
        .min_by(|a, b| {
            let da = a.1.translation.truncate().distance_squared(at);
            let db = b.1.translation.truncate().distance_squared(at);
            da.total_cmp(&db)
        })
        .map(|(e, _)| e);
    if let Some(e) = nearest {
        // Its next search is traced and drawn.
        commands.entity(e).insert((TraceSearch, DrawNavGizmos));
        playground.selected = Some(e);
    }
}

/// Wheel: zoom around the cursor; arrows: pan; `Home`: fit the map.
fn camera_control(
    mut wheel: MessageReader<MouseWheel>,
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    window: Single<&Window, With<PrimaryWindow>>,
    camera: Single<(&Camera, &GlobalTransform, &mut Projection, &mut Transform), With<MainCamera>>,
    mut playground: ResMut<Playground>,
) {
    let (cam, global, mut projection, mut transform) = camera.into_inner();
    let Projection::Orthographic(ortho) = &mut *projection else {
        return;
    };
    let mut zoom = 1.0;
    for w in wheel.read() {
        zoom *= 0.9f32.powf(w.y.signum());
    }
    if zoom != 1.0 {
        let before = window
            .cursor_position()
            .and_then(|c| cam.viewport_to_world_2d(global, c).ok());
        ortho.scale *= zoom;
        if let Some(p) = before {
            // Keep the point under the cursor in place.
            let centre = transform.translation.truncate();
            let moved = p + (centre - p) * zoom;
            transform.translation = moved.extend(transform.translation.z);
        }
    }
    let mut pan = Vec2::ZERO;
    for (key, dir) in [
        (KeyCode::ArrowLeft, Vec2::NEG_X),
        (KeyCode::ArrowRight, Vec2::X),
        (KeyCode::ArrowUp, Vec2::Y),
        (KeyCode::ArrowDown, Vec2::NEG_Y),
    ] {
        if keys.pressed(key) {
            pan += dir;
        }
    }
    transform.translation += (pan * 600.0 * ortho.scale * time.delta_secs()).extend(0.0);
    if keys.just_pressed(KeyCode::Home) {
        playground.picture = (0, 0); // refit with the picture
        playground.refit = true; // or to the floors
    }
}

/// Agents that arrived (or cannot go on) get a new random goal.
fn wander(
    nav: Option<Res<NavGrid>>,
    mut playground: ResMut<Playground>,
    mut agents: Query<(&Transform, &NavPath, &PathStatus, &mut PathRequest), With<Agent>>,
) {
    let Some(nav) = nav else { return };
    if !playground.wander {
        return;
    }
    for (transform, path, status, mut request) in &mut agents {
        let stuck = matches!(status, PathStatus::Unreachable | PathStatus::Failed(_));
        let arrived = status.has_path() && path.is_finished() && !path.cut;
        if (stuck || arrived)
            && let Some(goal) =
                random_goal(&nav, &mut playground.rng, transform.translation.truncate())
        {
            request.goal = PathGoal::Point(goal);
        }
    }
}

/// Drives a script: the edit, the screenshot, the exit.
#[expect(clippy::too_many_arguments, reason = "system parameters")]
#[cfg_attr(
    target_arch = "wasm32",
    expect(
        clippy::needless_return,
        reason = "what the return skips (the screenshot) is native only"
    )
)]
fn run_script(
    mut commands: Commands,
    args: Res<Args>,
    mut playground: ResMut<Playground>,
    nav: Option<ResMut<NavGrid>>,
    agents: Query<(&NavPath, &PathStatus), With<Agent>>,
    labels: Query<(&NavPath, &CompareLabel)>,
    traced: Query<(&NavPath, &LastSearch)>,
    mut camera: Single<(&mut Projection, &mut Transform), With<MainCamera>>,
    #[cfg(not(target_arch = "wasm32"))] mut exit: MessageWriter<AppExit>,
    mut labelled: Local<bool>,
    (floors, mut links): (Option<Res<Floors>>, Query<&mut NavLink>),
) {
    let Some(script) = args.script else { return };
    if script == Script::Floors {
        let Some(floors) = floors else { return };
        playground.frame += 1;
        let frame = playground.frame;
        // The door closes; the agents on their way through it replan.
        if frame == FLOORS_DOOR_CLOSES
            && let Ok(mut door) = links.get_mut(floors.door)
        {
            door.enabled = false;
        }
        #[cfg(not(target_arch = "wasm32"))]
        shoot_and_exit(
            &mut commands,
            &args,
            &mut playground,
            frame == FLOORS_FRAMES,
            &mut exit,
        );
        return;
    }
    let Some(mut nav) = nav else { return };
    playground.frame += 1;
    let frame = playground.frame;
    let ready = agents.iter().all(|(_, s)| s.has_path());
    // Labels above the three copies of the map, once their paths are known.
    if script == Script::Compare && ready && !*labelled && labels.iter().count() == 3 {
        *labelled = true;
        let rect = nav.world_rect();
        let third = rect.width() / 3.0;
        for (path, label) in &labels {
            let i = match label.0 {
                Algorithm::Anya => 0.0,
                Algorithm::LazyTheta => 1.0,
                _ => 2.0,
            };
            let cfg = NavGizmos::default();
            let x = rect.min.x + third * (i + 0.5);
            commands.spawn((
                Text2d::new(format!(
                    "{}: length {:.1}",
                    algorithm_name(label.0),
                    path.length
                )),
                TextFont::from_font_size(22.0),
                TextColor(cfg.algorithm_color(label.0)),
                Transform::from_xyz(x, rect.max.y + 8.0, 5.0).with_scale(Vec3::splat(0.25)),
            ));
        }
    }
    // The edit of `replan`: a wall across the cell most paths cross.
    if script == Script::Replan
        && frame == 90
        && let Some(cell) = busiest_cell(&nav, agents.iter().map(|(p, _)| p))
    {
        {
            let rect = URect::new(
                cell.x.saturating_sub(1),
                cell.y.saturating_sub(10),
                cell.x + 2,
                cell.y + 10,
            );
            let rect = URect::from_corners(rect.min, rect.max.min(nav.grid().size()));
            let _ = nav.set_rect_free(rect, false);
            // A closer look at the wall and the detours around it.
            let (projection, transform) = &mut *camera;
            transform.translation = nav.cell_center(cell).extend(transform.translation.z);
            if let Projection::Orthographic(o) = &mut **projection {
                o.scale = 0.13;
            }
        }
    }
    // `intervals`: the search fills the picture, below the overlay.
    if script == Script::Intervals
        && !*labelled
        && let Some(bounds) = traced
            .iter()
            .next()
            .map(|(path, last)| search_bounds(&nav, path, last))
    {
        *labelled = true;
        let (mut projection, mut transform) = camera.into_inner();
        let (top, view) = (190.0, Vec2::new(1280.0, 800.0));
        let scale = (bounds.width() / (view.x - 40.0)).max(bounds.height() / (view.y - top - 30.0));
        let centre = bounds.center() + Vec2::new(0.0, (top - 10.0) / 2.0 * scale);
        transform.translation = centre.extend(transform.translation.z);
        if let Projection::Orthographic(o) = &mut *projection {
            o.scale = scale;
        }
        return;
    }
    // In the browser the scene stays on the page: no screenshot, no exit.
    #[cfg(not(target_arch = "wasm32"))]
    {
        let shoot = match script {
            Script::Compare | Script::Intervals => frame >= 60 && ready && *labelled,
            Script::Replan => frame == 96,
            Script::Door => frame == DOOR_FRAMES,
            Script::Floors => false, // (above)
        };
        shoot_and_exit(&mut commands, &args, &mut playground, shoot, &mut exit);
    }
}

/// A script's end: the screenshot once `shoot`, the exit once it is saved.
#[cfg(not(target_arch = "wasm32"))]
fn shoot_and_exit(
    commands: &mut Commands,
    args: &Args,
    playground: &mut Playground,
    shoot: bool,
    exit: &mut MessageWriter<AppExit>,
) {
    let frame = playground.frame;
    if shoot && playground.shot_at.is_none() {
        playground.shot_at = Some(frame);
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(args.out.clone()));
    }
    if let Some(at) = playground.shot_at
        && frame > at + 10
        && std::fs::metadata(&args.out).is_ok_and(|m| m.len() > 0)
    {
        exit.write(AppExit::Success);
    }
    if frame > 3000 {
        eprintln!("the script did not finish in 3000 frames");
        exit.write(AppExit::error());
    }
}

/// The world rectangle around a path and the search that found it.
fn search_bounds(nav: &NavGrid, path: &NavPath, last: &LastSearch) -> Rect {
    let trace = &last.trace;
    let points = path
        .waypoints
        .iter()
        .copied()
        .chain(trace.intervals.iter().flat_map(|i| {
            let y = f64::from(i.row);
            [
                nav.to_world(bevy::math::DVec2::new(i.left, y)),
                nav.to_world(bevy::math::DVec2::new(i.right, y)),
                nav.to_world(i.root),
            ]
        }))
        .chain(trace.points.iter().map(|p| nav.to_world(p.point)));
    let mut rect = Rect::from_center_size(nav.to_world(last.start), Vec2::ZERO);
    for p in points {
        rect = rect.union_point(p);
    }
    rect.inflate(2.0)
}

/// The free cell the most remaining paths cross (sampled every half cell).
fn busiest_cell<'a>(nav: &NavGrid, paths: impl Iterator<Item = &'a NavPath>) -> Option<UVec2> {
    let grid = nav.grid();
    let w = grid.width() as usize;
    let mut counts = vec![0u32; w * grid.height() as usize];
    for path in paths {
        let mut last = None;
        for seg in path.grid_waypoints.windows(2) {
            let n = (seg[0].distance(seg[1]) * 2.0).ceil().max(1.0) as usize;
            for i in 0..=n {
                let p = seg[0].lerp(seg[1], i as f64 / n as f64).floor();
                let c = (p.x as usize, p.y as usize);
                if last != Some(c) && c.0 < w && c.1 < grid.height() as usize {
                    counts[c.1 * w + c.0] += 1;
                    last = Some(c);
                }
            }
        }
    }
    let (i, &n) = counts.iter().enumerate().max_by_key(|(_, n)| **n)?;
    (n > 0).then(|| UVec2::new((i % w) as u32, (i / w) as u32))
}

/// What the overlay shows of floors mode.
#[derive(SystemParam)]
struct FloorsView<'w, 's> {
    floors: Option<Res<'w, Floors>>,
    links: Query<'w, 's, &'static NavLink>,
    riders: Query<'w, 's, (), With<Riding>>,
}

/// The overlay: what runs, how fast, and the legend.
#[expect(clippy::too_many_arguments, reason = "system parameters")]
fn overlay(
    mut timing: ResMut<Timing>,
    time: Res<Time>,
    args: Res<Args>,
    playground: Res<Playground>,
    settings: Res<PathfindingSettings>,
    diagnostics: Res<PathfindingDiagnostics>,
    nav: Option<Res<NavGrid>>,
    agents: Query<(), With<Agent>>,
    traced: Query<&LastSearch>,
    text: Single<Entity, With<Overlay>>,
    mut writer: TextUiWriter,
    mut commands: Commands,
    mut built: Local<Option<bool>>,
    floors_view: FloorsView,
) {
    let now = Instant::now();
    timing.frame_ms = smooth(timing.frame_ms, time.delta_secs() * 1e3);
    match timing.window {
        Some((began, started)) if now.duration_since(began) >= Duration::from_secs(1) => {
            let secs = now.duration_since(began).as_secs_f32();
            timing.searches_per_second = (diagnostics.searches_started - started) as f32 / secs;
            timing.window = Some((now, diagnostics.searches_started));
        }
        None => timing.window = Some((now, diagnostics.searches_started)),
        _ => {}
    }
    if timing
        .last_text
        .is_some_and(|t| now.duration_since(t) < Duration::from_millis(250))
    {
        return;
    }
    timing.last_text = Some(now);
    let cfg = NavGizmos::default();
    let floors = floors_view.floors.as_deref();
    if *built != Some(floors.is_some()) {
        // The spans, in order: status text, then the legend's entries (for
        // the one map or for the floors).
        if built.is_some() {
            commands.entity(*text).despawn_related::<Children>();
        }
        *built = Some(floors.is_some());
        let legend: &[(&str, Color)] = match args.script {
            Some(Script::Floors) | None if floors.is_some() => &[
                ("\npath", cfg.polyanya),
                ("  replanned", cfg.replanned),
                ("  stairs, slide, door", cfg.link_walked),
                ("  lift", cfg.link_handed),
                ("  in the lift", RIDING_COLOR),
                ("  closed", cfg.link_disabled),
            ],
            Some(Script::Compare | Script::Floors) => &[],
            Some(Script::Intervals) => &[
                ("\npath (Anya)", cfg.anya),
                ("  intervals expanded", cfg.trace),
            ],
            Some(Script::Replan) => &[
                ("\npath (Anya)", cfg.anya),
                ("  replanned after the edit", cfg.replanned),
                ("  new wall", cfg.edit_blocked),
                ("  fallback goal", cfg.fallback),
            ],
            Some(Script::Door) => &[
                ("\nfrom the left", AGENT_COLORS[0]),
                ("  from the right", AGENT_COLORS[1]),
            ],
            None => &[
                ("\nAnya", cfg.anya),
                ("  Lazy Theta*", cfg.lazy_theta),
                ("  A*", cfg.astar),
                ("  A* smoothed", cfg.astar_smoothed),
                ("\nreplanned", cfg.replanned),
                ("  waiting", cfg.waiting),
                ("  fallback goal", cfg.fallback),
                ("  no path", cfg.failed),
                ("\nedit: blocked", cfg.edit_blocked),
                ("  freed", cfg.edit_freed),
                ("  search trace", cfg.trace),
            ],
        };
        commands.entity(*text).with_children(|parent| {
            for &(label, color) in legend {
                parent.spawn((
                    TextSpan::new(label),
                    TextFont::from_font_size(15.0),
                    TextColor(color),
                ));
            }
        });
        return;
    }
    let map = playground
        .custom_map
        .clone()
        .unwrap_or_else(|| MAPS[playground.map].to_owned());
    let size = nav.as_deref().map_or(UVec2::ZERO, |n| n.grid().size());
    let mut s = match args.script {
        Some(Script::Compare) => "The same query, three planners\n".to_owned(),
        Some(Script::Replan) => "A wall appears: agents whose paths it cut replan\n".to_owned(),
        Some(Script::Intervals) => "Anya's intervals for one search\n".to_owned(),
        Some(Script::Door) => format!(
            "A crowd crosses a door {DOOR_WIDTH} cells wide both ways (radius {CROWD_RADIUS}, LocalAvoidance)\n"
        ),
        Some(Script::Floors) => {
            "Floors and links: stairs, a slide, a lift, a door. The door just closed: agents headed through it replanned\n"
                .to_owned()
        }
        None => String::new(),
    };
    if let Some(floors) = floors {
        let n = agents.iter().count();
        let door = match floors_view.links.get(floors.door) {
            Ok(link) if link.enabled => "open",
            _ => "closed",
        };
        let _ = writeln!(
            s,
            "Polyanya routes | {n} agent{} | {FLOORS} floors of {} x {} | door {door} | {} in the lift",
            if n == 1 { "" } else { "s" },
            FLOOR_SIZE.x,
            FLOOR_SIZE.y,
            floors_view.riders.iter().count()
        );
    } else if args.script != Some(Script::Compare) {
        let n = agents.iter().count();
        let _ = writeln!(
            s,
            "{} | {n} agent{}{} | {map} ({} x {})",
            algorithm_name(settings.algorithm),
            if n == 1 { "" } else { "s" },
            if playground.crowd { " (crowd)" } else { "" },
            size.x,
            size.y
        );
    }
    if args.script.is_none() {
        // (Scripts run unoptimised under a software renderer: their
        // timings would say nothing.)
        let _ = write!(
            s,
            "{:.0} searches/s | plugin {:.2} ms/frame | gizmos {:.2} ms/frame | frame {:.1} ms",
            timing.searches_per_second, timing.plugin_ms, timing.gizmos_ms, timing.frame_ms
        );
    }
    if let Some(last) = playground.selected.and_then(|e| traced.get(e).ok()) {
        let trace = &last.trace;
        let (n, what) = if trace.intervals.is_empty() {
            (trace.points.len(), "nodes")
        } else {
            (trace.intervals.len(), "intervals")
        };
        let algorithm = trace.algorithm.map_or("-", algorithm_name);
        if args.script.is_none() {
            let _ = write!(
                s,
                "\nlast search ({algorithm}): {:.2} ms, {n} {what} expanded",
                last.time.as_secs_f64() * 1e3
            );
        } else {
            let _ = write!(s, "last search ({algorithm}): {n} {what} expanded");
        }
    }
    if args.script.is_none() {
        let _ = write!(
            s,
            "\nleft drag: walls | right click: goal | C: all to the cursor | V: crowd | S: select \
             | 1-5: planner | space: +{} | M/N: map\nF: floors | O: door (floors) | W: wander \
             | G: wall outlines | P: pause | wheel, arrows, Home: view",
            AGENTS.1
        );
    }
    s.trim_end().clone_into(&mut *writer.text(*text, 0));
}
