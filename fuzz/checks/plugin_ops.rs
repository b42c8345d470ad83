//! `plugin_ops`: a headless `App` with the plugin (one search thread), driven
//! by a sequence of operations decoded from the bytes: agents spawned with a
//! position and a goal, despawned, given new goals or entities to follow,
//! moved, switched to another planner; cells and rectangles edited; the grid
//! replaced or moved in the world; the global planner, fallback policy,
//! node budget, cap on searches in flight and replan distance changed;
//! planning paused and resumed; frames run.
//!
//! After every frame, every agent that has a path (status `Ready` or
//! `Fallback`) whose [`NavPath::grid_version`] is the grid's current version
//! must see along the rest of it: each segment of `grid_waypoints` from
//! `next - 1` on has line of sight on the current grid. At the end, planning
//! resumed and steering stopped, the plugin must settle within a bounded
//! number of frames: no search in flight or queued, and no agent with a
//! request still waiting for its first path.
//!
//! Bytes left after the first [`MAX_OPS`] operations (which inputs of fewer
//! operations never have) run a second game once the first has settled: a
//! flag byte picks the executor (one search thread or the main thread,
//! `search_threads: Some(0)`) and the avoidance settings, then a grid,
//! placement and steering step as above, and up to [`MAX_OPS`] operations:
//! the same ones, plus agents with a radius (most of them followers with
//! [`LocalAvoidance`]), groups of agents sent to one goal (one shared
//! search), agents despawned while their search runs, radii changed, and
//! avoidance settings changed.
//!
//! In both games, after every frame, also: every agent with a radius whose
//! path has the grid's current version keeps its radius from every blocked
//! cell and from the grid's edge all along that path (sampled every 1/64
//! cell, less [`ROUNDING`]: positions are `f32` world coordinates), and a
//! follower that stood in free space before the frame stands in free space
//! after it (within [`ROUNDING`] of a free cell), also when the grid was
//! replaced or moved just before.

use std::collections::HashMap;
use std::time::Duration;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, AvoidanceSettings, GridTransform, LocalAvoidance, NavGrid, NavPath,
    NavPosition, PathFollower, PathGoal, PathRequest, PathStatus, PathfindingDiagnostics,
    PathfindingSettings, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::{Rect, Vec2};

use super::common::{cell_distance, keeps_radius};
use super::input::Input;

/// Operations per input, at most.
const MAX_OPS: usize = 48;
/// Frames allowed for the plugin to settle at the end.
const SETTLE_FRAMES: usize = 4000;
/// How far (in cells) the rounding of `f32` world positions may take an
/// agent or a path point past where it belongs.
const ROUNDING: f64 = 1e-4;
/// Radii of the second game's agents, in cells (scaled by the cell size):
/// valid ones, then a negative, a non-finite and a too large one.
const RADII: [f32; 12] = [
    0.25,
    0.4,
    0.5,
    0.3,
    0.45,
    1.0,
    0.7,
    17.0 / 64.0,
    0.01,
    -1.0,
    f32::NAN,
    300.0,
];

/// The placements the grid may have in the world.
fn placement(choice: u32) -> GridTransform {
    match choice {
        0 => GridTransform::default(),
        1 => GridTransform::new(Vec2::new(-8.0, -8.0), 0.5).expect("a valid placement"),
        _ => GridTransform::new(Vec2::new(100.0, -50.0), 16.0).expect("a valid placement"),
    }
}

struct Driver {
    app: App,
    agents: Vec<Entity>,
    /// Paths agents had when the grid was last replaced or moved (see
    /// [`Driver::mark_stale`]), and whether it was replaced: such paths are
    /// not checked against the new grid (a moved grid's paths still are for
    /// line of sight, which a move does not change).
    stale: HashMap<Entity, (Vec<DVec2>, bool)>,
    frames: usize,
}

impl Driver {
    fn world(&mut self) -> &mut World {
        self.app.world_mut()
    }

    fn nav(&self) -> &NavGrid {
        self.app.world().resource::<NavGrid>()
    }

    /// A world point from a decoded grid point (so on the grid's lattice).
    fn world_point(&self, input: &mut Input<'_>) -> Vec2 {
        let nav = self.nav();
        let p = input.point(nav.grid().width(), nav.grid().height());
        nav.to_world(p)
    }

    fn pick(&self, input: &mut Input<'_>) -> Option<Entity> {
        let n = u32::try_from(self.agents.len()).ok().filter(|&n| n > 0)?;
        Some(self.agents[(input.below(256) % n) as usize])
    }

    fn settings(&mut self) -> Mut<'_, PathfindingSettings> {
        self.world().resource_mut::<PathfindingSettings>()
    }

    fn frame(&mut self) {
        let free = self.followers_in_free_space();
        self.app.update();
        self.frames += 1;
        self.check_paths();
        self.check_followers(&free);
    }

    /// The followers that stand in free space (those holding a path
    /// planned before the grid was replaced or moved included: the plugin
    /// stops them where they stand until their new path comes).
    fn followers_in_free_space(&mut self) -> Vec<Entity> {
        let world = self.app.world_mut();
        let mut followers = world.query_filtered::<(Entity, &NavPosition), With<PathFollower>>();
        let nav = world.resource::<NavGrid>();
        followers
            .iter(world)
            .filter(|(_, p)| in_free_space(nav.grid(), nav.to_grid(p.0)))
            .map(|(e, _)| e)
            .collect()
    }

    /// The followers of `free` (in free space before the frame) that are
    /// still there are in free space.
    fn check_followers(&mut self, free: &[Entity]) {
        let frame = self.frames;
        let world = self.app.world();
        let nav = world.resource::<NavGrid>();
        for &e in free {
            let Some(p) = world.get::<NavPosition>(e) else {
                continue;
            };
            let at = nav.to_grid(p.0);
            assert!(
                in_free_space(nav.grid(), at),
                "frame {frame}: follower {e} stepped from free space to {at} ({:?}, {:?}) on \
                 version {} of\n{}",
                world.get::<PathStatus>(e),
                world.get::<NavPath>(e),
                nav.version(),
                picture(nav)
            );
        }
    }

    /// The per-frame rule: a current path is visible from `next - 1` on.
    fn check_paths(&mut self) {
        let frame = self.frames;
        let world = self.app.world_mut();
        let mut agents = world.query::<(Entity, &PathStatus, &NavPath)>();
        let nav = world.resource::<NavGrid>();
        for (e, status, path) in agents.iter(world) {
            if !status.has_path() {
                continue;
            }
            assert!(
                !path.waypoints.is_empty() && path.waypoints.len() == path.grid_waypoints.len(),
                "frame {frame}: {e} is {status:?} with a malformed path {path:?}"
            );
            let stale = match self.stale.get(&e) {
                Some((w, replaced)) if *w == path.grid_waypoints => Some(*replaced),
                _ => None,
            };
            if path.grid_version != nav.version() || stale == Some(true) {
                continue;
            }
            let w = &path.grid_waypoints;
            for i in path.next.saturating_sub(1)..w.len().saturating_sub(1) {
                assert!(
                    line_of_sight(nav.grid(), w[i], w[i + 1]),
                    "frame {frame}: {e} ({status:?}, next {}) has segment {i} {} - {} without \
                     line of sight on version {} of\n{}",
                    path.next,
                    w[i],
                    w[i + 1],
                    nav.version(),
                    picture(nav)
                );
            }
            let radius = radius_of(world.get::<PathRequest>(e), nav);
            if radius > 0.0 && w.len() >= 2 && stale.is_none() {
                let kept = keeps_radius(nav.grid(), w, radius - ROUNDING);
                assert!(
                    kept.is_ok(),
                    "frame {frame}: {e} ({status:?}, radius {radius} cells, at {:?}): {} \
                     along {path:?} on version {} of\n{}",
                    world.get::<NavPosition>(e).map(|p| nav.to_grid(p.0)),
                    kept.unwrap_err(),
                    nav.version(),
                    picture(nav)
                );
            }
        }
    }

    fn spawn(&mut self, input: &mut Input<'_>) {
        let at = self.world_point(input);
        let goal = if input.below(16) == 0 {
            Vec2::new(f32::NAN, 0.0)
        } else {
            self.world_point(input)
        };
        let mut request = PathRequest::to(goal);
        request.algorithm = algorithm(input);
        let follower = input.bit().then(|| PathFollower {
            speed: [0.5, 4.0, 40.0, 0.0][input.below(4) as usize],
            arrive_radius: [0.05, 0.0, 1.0][input.below(3) as usize],
        });
        let mut agent = self.world().spawn((NavPosition(at), request));
        if let Some(f) = follower {
            agent.insert(f);
        }
        let id = agent.id();
        self.agents.push(id);
    }

    fn edit(&mut self, input: &mut Input<'_>) {
        let (w, h) = {
            let g = self.nav().grid();
            (g.width(), g.height())
        };
        let free = input.bit();
        match input.below(4) {
            0 => {
                let cell = UVec2::new(input.below(w + 1), input.below(h + 1));
                let _ = self
                    .world()
                    .resource_mut::<NavGrid>()
                    .set_cell_free(cell, free);
            }
            1 => {
                let (x0, y0) = (input.below(w + 1), input.below(h + 1));
                let (x1, y1) = (x0 + input.below(4), y0 + input.below(4));
                let _ = self
                    .world()
                    .resource_mut::<NavGrid>()
                    .set_rect_free(URect::new(x0, y0, x1, y1), free);
            }
            2 => {
                let (a, b) = (self.world_point(input), self.world_point(input));
                let _ = self
                    .world()
                    .resource_mut::<NavGrid>()
                    .set_world_rect_free(Rect::from_corners(a, b), free);
            }
            _ => {
                let cells: Vec<(UVec2, bool)> = (0..=input.below(4))
                    .map(|_| (UVec2::new(input.below(w), input.below(h)), input.bit()))
                    .collect();
                let _ = self.world().resource_mut::<NavGrid>().edit(|e| {
                    for &(cell, free) in &cells {
                        e.set_free(cell, free)?;
                    }
                    Ok(())
                });
            }
        }
    }

    fn settings_op(&mut self, input: &mut Input<'_>) {
        let choice = input.below(5);
        let value = input.below(8);
        let mut s = self.settings();
        match choice {
            0 => s.algorithm = Algorithm::ALL[(value % 4) as usize],
            1 => {
                s.fallback = if value.is_multiple_of(2) {
                    FallbackPolicy::ClosestReachable
                } else {
                    FallbackPolicy::Fail
                };
            }
            2 => s.node_budget = [None, Some(0), Some(3), Some(40)][(value % 4) as usize],
            3 => s.max_searches_in_flight = [None, Some(0), Some(1), Some(3)][(value % 4) as usize],
            _ => {
                s.replan_distance =
                    [2.0, 0.0, f32::INFINITY, f32::NAN, -1.0, 0.5, 8.0, 1e-6][value as usize];
            }
        }
    }

    fn agent_op(&mut self, input: &mut Input<'_>, op: u32) {
        let Some(e) = self.pick(input) else { return };
        match op {
            // Despawn.
            0 => {
                if let Ok(agent) = self.world().get_entity_mut(e) {
                    agent.despawn();
                }
            }
            // Remove the request.
            1 => {
                if let Ok(mut agent) = self.world().get_entity_mut(e) {
                    agent.remove::<PathRequest>();
                }
            }
            // A new goal point (a new request if it had none).
            2 => {
                let goal = self.world_point(input);
                if let Ok(mut agent) = self.world().get_entity_mut(e) {
                    if let Some(mut r) = agent.get_mut::<PathRequest>() {
                        r.goal = PathGoal::Point(goal);
                    } else {
                        agent.insert(PathRequest::to(goal));
                    }
                }
            }
            // Follow another agent (maybe itself, maybe a despawned one).
            3 => {
                let target = self.pick(input).unwrap_or(e);
                if let Ok(mut agent) = self.world().get_entity_mut(e)
                    && let Some(mut r) = agent.get_mut::<PathRequest>()
                {
                    r.goal = PathGoal::Entity(target);
                }
            }
            // Its own planner, or back to the global one.
            4 => {
                let a = algorithm(input);
                if let Ok(mut agent) = self.world().get_entity_mut(e)
                    && let Some(mut r) = agent.get_mut::<PathRequest>()
                {
                    r.algorithm = a;
                }
            }
            // Teleport.
            _ => {
                let to = self.world_point(input);
                if let Ok(mut agent) = self.world().get_entity_mut(e)
                    && let Some(mut p) = agent.get_mut::<NavPosition>()
                {
                    p.0 = to;
                }
            }
        }
    }

    /// A new grid (maybe of another size), or the same one moved.
    fn replace_grid(&mut self, input: &mut Input<'_>) {
        if input.bit() {
            let t = placement(input.below(3));
            self.mark_stale(false);
            self.world().resource_mut::<NavGrid>().set_transform(t);
            return;
        }
        let grid = input.grid();
        let t = placement(input.below(3));
        self.mark_stale(true);
        self.world().insert_resource(NavGrid::new(grid, t));
    }

    /// Marks the paths agents have now as planned for another grid or
    /// placement: their versions count in another layout, and a move to
    /// another cell size gives their radii another size in cells. Such
    /// agents are planned again (`PlanReason::GridReplaced`) and follow
    /// their old paths meanwhile.
    fn mark_stale(&mut self, replaced: bool) {
        let world = self.app.world_mut();
        let mut paths = world.query::<(Entity, &NavPath)>();
        let before = std::mem::take(&mut self.stale);
        self.stale = paths
            .iter(world)
            .map(|(e, path)| {
                let w = path.grid_waypoints.clone();
                // A path of a grid replaced before stays one.
                let replaced = replaced || before.get(&e) == Some(&(w.clone(), true));
                (e, (w, replaced))
            })
            .collect();
    }

    /// Runs frames until nothing is queued, in flight or waiting for a first
    /// path; panics if that takes more than [`SETTLE_FRAMES`]. Steering is
    /// stopped first: a slow follower may walk for longer than any bound,
    /// and agents following it are planned again as it goes (on every move,
    /// with a replan distance of 0).
    fn settle(&mut self) {
        self.settings().paused = false;
        self.world().insert_resource(SteeringClock::fixed(0.0));
        for _ in 0..SETTLE_FRAMES {
            self.frame();
            let world = self.app.world_mut();
            let d = world.resource::<PathfindingDiagnostics>();
            let idle = d.in_flight == 0 && d.queued == 0;
            let mut busy = world.query_filtered::<&PathStatus, With<PathRequest>>();
            if idle && !busy.iter(world).any(PathStatus::is_busy) {
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let world = self.app.world_mut();
        let d = *world.resource::<PathfindingDiagnostics>();
        let mut agents = world.query::<(Entity, &PathStatus, Option<&PathRequest>)>();
        let states: Vec<String> = agents
            .iter(world)
            .map(|(e, s, r)| format!("{e}: {s:?} {r:?}"))
            .collect();
        panic!(
            "the plugin did not settle in {SETTLE_FRAMES} frames: {d:?}\n{}",
            states.join("\n")
        );
    }
}

fn algorithm(input: &mut Input<'_>) -> Option<Algorithm> {
    Algorithm::ALL.get(input.below(5) as usize).copied()
}

fn picture(nav: &NavGrid) -> String {
    let g = nav.grid();
    let mut s = String::new();
    for y in 0..i64::from(g.height()) {
        for x in 0..i64::from(g.width()) {
            s.push(if g.is_free_xy(x, y) { '.' } else { '#' });
        }
        s.push('\n');
    }
    s
}

/// An agent's radius in cells (0 without a request or for an invalid
/// radius, which fails the request).
fn radius_of(request: Option<&PathRequest>, nav: &NavGrid) -> f64 {
    let Some(request) = request else { return 0.0 };
    let r = f64::from(request.radius) / f64::from(nav.transform().cell_size());
    if r.is_finite() && r > 0.0 { r } else { 0.0 }
}

/// Whether grid point `p` lies within [`ROUNDING`] of a free cell.
fn in_free_space(grid: &Grid, p: DVec2) -> bool {
    let (low, high) = ((p - ROUNDING).floor(), (p + ROUNDING).floor());
    if !(low.is_finite() && high.is_finite()) {
        return false;
    }
    (low.y as i64..=high.y as i64).any(|y| {
        (low.x as i64..=high.x as i64)
            .any(|x| grid.is_free_xy(x, y) && cell_distance(p, x, y) <= ROUNDING)
    })
}

/// A headless app with the plugin on `grid`.
fn app(grid: Grid, t: GridTransform, step: f32, search_threads: usize) -> App {
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin {
        search_threads: Some(search_threads),
        ..AnyAnglePlugin::default()
    })
    .insert_resource(NavGrid::new(grid, t))
    .insert_resource(SteeringClock::fixed(step));
    app.finish();
    app.cleanup();
    app
}

/// Runs the `plugin_ops` check on one input.
///
/// # Panics
///
/// When a call panics, a current path has a segment without line of sight
/// or (for an agent with a radius) comes closer to a wall than its radius,
/// a follower steps out of free space, or the plugin does not settle.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let grid = input.grid();
    let t = placement(input.below(3));
    let step = [1.0 / 60.0, 0.25, 0.0][input.below(3) as usize];
    let mut driver = Driver {
        app: app(grid, t, step, 1),
        agents: Vec::new(),
        stale: HashMap::new(),
        frames: 0,
    };
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        let code = input.below(16);
        driver.op(&mut input, code);
    }
    driver.settle();
    if !input.is_empty() {
        second_game(&mut input);
    }
}

/// The second game (see the [module docs](self)).
fn second_game(input: &mut Input<'_>) {
    let flags = input.byte();
    let threads = usize::from(flags & 1 == 0);
    let grid = input.grid();
    let t = placement(input.below(3));
    let step = [1.0 / 60.0, 0.25, 0.0, 0.05][input.below(4) as usize];
    let mut driver = Driver {
        app: app(grid, t, step, threads),
        agents: Vec::new(),
        stale: HashMap::new(),
        frames: 0,
    };
    driver.avoidance_settings(flags >> 1);
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        match input.below(24) {
            code @ 0..=15 => driver.op(input, code),
            16..=18 => driver.spawn_wide(input),
            19 | 20 => driver.group(input),
            21 => driver.despawn_searching(input),
            22 => driver.new_radius(input),
            _ => driver.avoidance_settings(input.byte()),
        }
    }
    driver.settle();
}

impl Driver {
    /// One operation of the first game's table (`code` in `0..16`).
    fn op(&mut self, input: &mut Input<'_>, code: u32) {
        match code {
            0..=2 => self.spawn(input),
            3 => self.agent_op(input, 0),
            4 => self.agent_op(input, 1),
            5 => self.agent_op(input, 2),
            6 => self.agent_op(input, 3),
            7 => self.agent_op(input, 4),
            8 => self.agent_op(input, 5),
            9 | 10 => self.edit(input),
            11 => self.settings_op(input),
            12 => {
                let mut s = self.settings();
                s.paused = !s.paused;
            }
            13 => self.replace_grid(input),
            _ => {
                let (n, pause) = (1 + input.below(8), input.below(3));
                for _ in 0..n {
                    self.frame();
                    match pause {
                        0 => {}
                        1 => std::thread::yield_now(),
                        _ => std::thread::sleep(Duration::from_micros(300)),
                    }
                }
            }
        }
    }

    /// A radius in world units (see [`RADII`]).
    fn radius(&self, input: &mut Input<'_>) -> f32 {
        let cells = if input.below(4) == 0 {
            (1 + input.below(96)) as f32 / 64.0
        } else {
            RADII[input.below(RADII.len() as u32) as usize]
        };
        cells * self.nav().transform().cell_size()
    }

    /// An agent with a radius: a follower with local avoidance (most of
    /// them), a plain follower, or one that does not move.
    fn spawn_wide(&mut self, input: &mut Input<'_>) {
        let at = self.world_point(input);
        let goal = self.world_point(input);
        let radius = self.radius(input);
        let mut request = PathRequest::to(goal).with_radius(radius);
        request.algorithm = algorithm(input);
        let kind = input.below(4);
        let speed =
            [4.0, 1.0, 40.0, 0.5][input.below(4) as usize] * self.nav().transform().cell_size();
        let mut agent = self.world().spawn((NavPosition(at), request));
        if kind != 3 {
            agent.insert(PathFollower {
                speed,
                arrive_radius: 0.05,
            });
        }
        if kind < 2 {
            agent.insert(LocalAvoidance);
        }
        let id = agent.id();
        self.agents.push(id);
    }

    /// Two to nine agents sent to one goal, spawned in one frame (one
    /// search for them all), with one radius, most of them followers with
    /// local avoidance.
    fn group(&mut self, input: &mut Input<'_>) {
        let goal = self.world_point(input);
        let radius = if input.bit() { 0.0 } else { self.radius(input) };
        let avoid = input.bit();
        let around = self.world_point(input);
        let spread = self.nav().transform().cell_size() * 0.6;
        for k in 0..2 + input.below(8) {
            let at = if input.bit() {
                self.world_point(input)
            } else {
                around + Vec2::new((k % 3) as f32, (k / 3) as f32) * spread
            };
            let mut agent = self
                .world()
                .spawn((NavPosition(at), PathRequest::to(goal).with_radius(radius)));
            if avoid || k % 2 == 0 {
                agent.insert(PathFollower::default());
            }
            if avoid {
                agent.insert(LocalAvoidance);
            }
            let id = agent.id();
            self.agents.push(id);
        }
    }

    /// Despawns an agent whose search is queued or running, if any.
    fn despawn_searching(&mut self, input: &mut Input<'_>) {
        let choice = input.below(256) as usize;
        let world = self.app.world_mut();
        let mut agents = world.query::<(Entity, &PathStatus)>();
        let busy: Vec<Entity> = agents
            .iter(world)
            .filter(|(_, s)| s.is_busy())
            .map(|(e, _)| e)
            .collect();
        if busy.is_empty() {
            return;
        }
        let e = busy[choice % busy.len()];
        world.despawn(e);
    }

    /// A new radius for an agent's request (it plans again).
    fn new_radius(&mut self, input: &mut Input<'_>) {
        let Some(e) = self.pick(input) else { return };
        let radius = self.radius(input);
        if let Ok(mut agent) = self.world().get_entity_mut(e)
            && let Some(mut r) = agent.get_mut::<PathRequest>()
        {
            r.radius = radius;
        }
    }

    /// Avoidance settings from the bits of `code`.
    fn avoidance_settings(&mut self, code: u8) {
        let code = usize::from(code);
        let settings = AvoidanceSettings {
            time_horizon: [1.0, 0.25, 0.0, 4.0][code & 3],
            wall_horizon: [0.25, 0.0, 1.0, 0.05][(code >> 2) & 3],
            neighbour_distance: [2.0, 0.5, 8.0, f32::NAN][(code >> 4) & 3],
            max_neighbours: [10, 0, 1, 50][(code >> 6) & 3],
        };
        self.world().insert_resource(settings);
    }
}
