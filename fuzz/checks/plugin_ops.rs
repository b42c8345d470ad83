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

use std::collections::HashMap;
use std::time::Duration;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPath, NavPosition, PathFollower, PathGoal,
    PathRequest, PathStatus, PathfindingDiagnostics, PathfindingSettings, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::{Rect, Vec2};

use super::input::Input;

/// Operations per input, at most.
const MAX_OPS: usize = 48;
/// Frames allowed for the plugin to settle at the end.
const SETTLE_FRAMES: usize = 4000;

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
    /// Paths agents had when the grid was replaced: their versions count in
    /// another layout, so they are not checked against the new grid.
    stale: HashMap<Entity, Vec<DVec2>>,
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
        self.app.update();
        self.frames += 1;
        self.check_paths();
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
            if path.grid_version != nav.version()
                || self.stale.get(&e) == Some(&path.grid_waypoints)
            {
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
            self.world().resource_mut::<NavGrid>().set_transform(t);
            return;
        }
        let grid = input.grid();
        let t = placement(input.below(3));
        let mut stale = HashMap::new();
        let world = self.app.world_mut();
        let mut paths = world.query::<(Entity, &NavPath)>();
        for (e, path) in paths.iter(world) {
            stale.insert(e, path.grid_waypoints.clone());
        }
        self.stale = stale;
        world.insert_resource(NavGrid::new(grid, t));
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

/// Runs the `plugin_ops` check on one input.
///
/// # Panics
///
/// When a call panics, a current path has a segment without line of sight,
/// or the plugin does not settle.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let grid = input.grid();
    let t = placement(input.below(3));
    let step = [1.0 / 60.0, 0.25, 0.0][input.below(3) as usize];
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin {
        search_threads: Some(1),
        ..AnyAnglePlugin::default()
    })
    .insert_resource(NavGrid::new(grid, t))
    .insert_resource(SteeringClock::fixed(step));
    app.finish();
    app.cleanup();
    let mut driver = Driver {
        app,
        agents: Vec::new(),
        stale: HashMap::new(),
        frames: 0,
    };
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        match input.below(16) {
            0..=2 => driver.spawn(&mut input),
            3 => driver.agent_op(&mut input, 0),
            4 => driver.agent_op(&mut input, 1),
            5 => driver.agent_op(&mut input, 2),
            6 => driver.agent_op(&mut input, 3),
            7 => driver.agent_op(&mut input, 4),
            8 => driver.agent_op(&mut input, 5),
            9 | 10 => driver.edit(&mut input),
            11 => driver.settings_op(&mut input),
            12 => {
                let mut s = driver.settings();
                s.paused = !s.paused;
            }
            13 => driver.replace_grid(&mut input),
            _ => {
                let (n, pause) = (1 + input.below(8), input.below(3));
                for _ in 0..n {
                    driver.frame();
                    match pause {
                        0 => {}
                        1 => std::thread::yield_now(),
                        _ => std::thread::sleep(Duration::from_micros(300)),
                    }
                }
            }
        }
    }
    driver.settle();
}
