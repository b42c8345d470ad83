//! The lockstep game, played by `tests/lockstep.rs` natively on every
//! executor and by `tests/web.rs` in `wasm32` under Node: see
//! `tests/lockstep.rs`.

#![allow(
    dead_code,
    reason = "each test crate that plays the game uses its own part of it"
)]

use bevy_anyangle::plugin::{
    AnyAnglePlugin, GoalArea, GridTransform, LinkEnd, LocalAvoidance, Lockstep, NavArea, NavGrid,
    NavLink, NavPath, NavPosition, OnArea, PathFollower, PathGoal, PathRequest, PathStatus,
    PathfindingDiagnostics, PathfindingSettings, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::Vec2;

pub const FRAMES: usize = 1_200;
pub const AGENTS: u32 = 2_000;
/// Agents on the two floors (besides [`AGENTS`]).
pub const AREA_AGENTS: u32 = 300;
/// Links between the floors.
const LINKS: usize = 10;
/// A 130 x 130 map: each of the two floors.
const FLOOR: &str = include_str!("../../data/maps/lt_backalley_n.map");
/// A 256 x 256 city map, bundled (no file is read: the game runs in the
/// browser too).
const MAP: &str = include_str!("../../data/maps/Berlin_0_256.map");

/// The game's own number for an agent (spawn order).
#[derive(Component, Clone, Copy)]
struct Id(u32);

/// splitmix64: the game's inputs, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u32) -> u32 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u32
    }
}

/// FNV-1a over 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn text(&mut self, s: &str) {
        for b in s.bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self.word(s.len() as u64);
    }
}

/// Where the searches run.
#[derive(Clone, Copy, Debug)]
pub enum Executor {
    Threads(usize),
    MainThread,
}

pub struct Game {
    app: App,
    rng: Rng,
    /// The centres of the free cells of the grid's largest region (world).
    free: Vec<Vec2>,
    rally: [Vec2; 3],
    next_id: u32,
    size: UVec2,
    /// The two floors, and the centres of their largest regions' free
    /// cells (world).
    floors: [(Entity, Vec<Vec2>); 2],
    floor_size: UVec2,
    links: Vec<Entity>,
}

/// The centres (world) of the free cells of `nav`'s largest region.
fn largest_region(nav: &NavGrid) -> Vec<Vec2> {
    let grid = nav.grid();
    let cells: Vec<UVec2> = (0..grid.height())
        .flat_map(|y| (0..grid.width()).map(move |x| UVec2::new(x, y)))
        .filter(|&c| grid.is_free(c))
        .collect();
    let region = |c: UVec2| grid.region(i64::from(c.x), i64::from(c.y));
    let mut counts = std::collections::BTreeMap::new();
    for &c in &cells {
        *counts.entry(region(c)).or_insert(0_u32) += 1;
    }
    let largest = counts
        .iter()
        .max_by_key(|&(r, n)| (*n, *r))
        .and_then(|(r, _)| *r);
    cells
        .into_iter()
        .filter(|&c| region(c) == largest)
        .map(|c| nav.cell_center(c))
        .collect()
}

/// One agent of the game: on the grid, or on a floor.
#[derive(Component)]
struct OnFloor;

impl Game {
    pub fn new(executor: Executor) -> Game {
        let nav = NavGrid::from_movingai(MAP, GridTransform::default()).expect("a map");
        let size = UVec2::new(nav.grid().width(), nav.grid().height());
        let free = largest_region(&nav);
        let threads = match executor {
            Executor::Threads(n) => Some(n),
            Executor::MainThread => Some(0),
        };
        let mut app = App::new();
        app.add_plugins(AnyAnglePlugin {
            search_threads: threads,
            ..AnyAnglePlugin::default()
        })
        .insert_resource(nav)
        .insert_resource(SteeringClock::fixed(1.0 / 60.0))
        .insert_resource(PathfindingSettings {
            lockstep: Some(Lockstep {
                delay: 2,
                searches_per_frame: 256,
            }),
            ..PathfindingSettings::default()
        });
        app.finish();
        app.cleanup();
        let mut rng = Rng(0x010c_57e9);
        let rally = [0, 1, 2].map(|_| free[rng.below(free.len() as u32) as usize]);
        // Two floors beside the grid, joined by links (some one way, one
        // narrow, one costly), walked.
        let floors = [300.0, 450.0].map(|x| {
            let placement = GridTransform::new(Vec2::new(x, 0.0), 1.0).expect("a placement");
            let nav = NavGrid::from_movingai(FLOOR, placement).expect("a map");
            let free = largest_region(&nav);
            let area = app.world_mut().spawn(NavArea::new(nav)).id();
            (area, free)
        });
        let floor_size = {
            let area = app.world().get::<NavArea>(floors[0].0).expect("a floor");
            UVec2::new(area.grid.grid().width(), area.grid.grid().height())
        };
        let mut game = Game {
            app,
            rng,
            free,
            rally,
            next_id: 0,
            size,
            floors,
            floor_size,
            links: Vec::new(),
        };
        for k in 0..LINKS {
            let a = game.floor_point(0);
            let b = game.floor_point(1);
            let mut link = NavLink::new(
                LinkEnd::new(game.floors[0].0, a),
                LinkEnd::new(game.floors[1].0, b),
            );
            link = match k {
                0 | 1 => link.one_way(),
                2 => link.with_max_radius(0.2),
                3 => link.with_cost(20.0),
                _ => link,
            };
            let id = game.app.world_mut().spawn(link).id();
            game.links.push(id);
        }
        for _ in 0..AGENTS {
            game.spawn();
        }
        for _ in 0..AREA_AGENTS {
            game.spawn_on_floor();
        }
        game
    }

    fn random_free(&mut self) -> Vec2 {
        self.free[self.rng.below(self.free.len() as u32) as usize]
    }

    /// A free point (world) of floor `k`.
    fn floor_point(&mut self, k: usize) -> Vec2 {
        let free = &self.floors[k].1;
        free[self.rng.below(free.len() as u32) as usize]
    }

    /// A goal on a random floor: the point and its floor.
    fn floor_goal(&mut self) -> (Vec2, Entity) {
        let k = self.rng.below(2) as usize;
        (self.floor_point(k), self.floors[k].0)
    }

    fn spawn_on_floor(&mut self) {
        let id = self.next_id;
        self.next_id += 1;
        let k = self.rng.below(2) as usize;
        let at = self.floor_point(k);
        let (goal, goal_area) = self.floor_goal();
        let mut request = PathRequest::to(goal);
        if self.rng.below(8) == 0 {
            request.radius = 0.4;
        }
        let follower = PathFollower {
            speed: 3.0,
            ..PathFollower::default()
        };
        let area = self.floors[k].0;
        self.app.world_mut().spawn((
            Id(id),
            OnFloor,
            NavPosition(at),
            OnArea(area),
            request,
            GoalArea(goal_area),
            follower,
        ));
    }

    /// A free cell's centre at most 40 cells from `p` (or anywhere, if
    /// none turns up).
    fn near_free(&mut self, p: Vec2) -> Vec2 {
        for _ in 0..64 {
            let q = self.random_free();
            if q.distance(p) <= 40.0 {
                return q;
            }
        }
        self.random_free()
    }

    fn goal(&mut self, from: Vec2) -> PathGoal {
        match self.rng.below(20) {
            0..2 => PathGoal::Point(self.rally[self.rng.below(3) as usize]),
            2 => {
                // Another agent, if one is there.
                let ids: Vec<Entity> = self
                    .app
                    .world_mut()
                    .query_filtered::<Entity, (With<Id>, Without<OnFloor>)>()
                    .iter(self.app.world())
                    .collect();
                match ids.len() {
                    0 => PathGoal::Point(self.near_free(from)),
                    n => {
                        let mut sorted = ids;
                        sorted.sort_unstable_by_key(|e| e.to_bits());
                        PathGoal::Entity(sorted[self.rng.below(n as u32) as usize])
                    }
                }
            }
            _ => PathGoal::Point(self.near_free(from)),
        }
    }

    fn spawn(&mut self) {
        let id = self.next_id;
        self.next_id += 1;
        let at = self.random_free();
        let goal = self.goal(at);
        // (Lazy Theta* searches cost most: a tenth of the agents.)
        let algorithm = match self.rng.below(10) {
            0 => Algorithm::LazyTheta,
            1..5 => Algorithm::Anya,
            _ => Algorithm::Polyanya,
        };
        let disc = self.rng.below(8) == 0;
        let mut request = PathRequest {
            goal,
            algorithm: Some(algorithm),
            ..PathRequest::to(Vec2::ZERO)
        };
        let follower = PathFollower {
            speed: 3.0,
            ..PathFollower::default()
        };
        let world = self.app.world_mut();
        if disc {
            request.radius = 0.4;
            world.spawn((Id(id), NavPosition(at), request, follower, LocalAvoidance));
        } else {
            world.spawn((Id(id), NavPosition(at), request, follower));
        }
    }

    /// The agents on the floors (or on the grid), by their numbers.
    fn agents(&mut self, on_floors: bool) -> Vec<(u32, Entity)> {
        let mut agents: Vec<(u32, Entity)> = self
            .app
            .world_mut()
            .query::<(Entity, &Id, Has<OnFloor>)>()
            .iter(self.app.world())
            .filter(|&(_, _, floor)| floor == on_floors)
            .map(|(e, id, _)| (id.0, e))
            .collect();
        agents.sort_unstable();
        agents
    }

    /// The game's inputs of frame `frame`.
    fn inputs(&mut self, frame: usize) {
        // A cell blocked or freed every frame.
        let cell = UVec2::new(self.rng.below(self.size.x), self.rng.below(self.size.y));
        let free = self.rng.below(2) == 0;
        let _ = self
            .app
            .world_mut()
            .resource_mut::<NavGrid>()
            .set_cell_free(cell, free);
        let mut agents = self.agents(false);
        self.floor_inputs(frame);
        // Despawns and spawns every fifth frame (some mid-search).
        if frame.is_multiple_of(5) {
            for _ in 0..4 {
                let (_, e) = agents.swap_remove(self.rng.below(agents.len() as u32) as usize);
                self.app.world_mut().despawn(e);
            }
            agents.sort_unstable();
            for _ in 0..4 {
                self.spawn();
            }
        }
        // New goals for a few.
        if frame.is_multiple_of(3) {
            for _ in 0..6 {
                let (_, e) = agents[self.rng.below(agents.len() as u32) as usize];
                let from = self
                    .app
                    .world()
                    .get::<NavPosition>(e)
                    .map_or(Vec2::ZERO, |p| p.0);
                let goal = self.goal(from);
                if let Some(mut request) = self.app.world_mut().get_mut::<PathRequest>(e) {
                    request.goal = goal;
                }
            }
        }
    }

    /// The inputs of frame `frame` on the floors: a cell of one blocked or
    /// freed every frame, a link closed or opened every second, agents
    /// despawned and spawned every tenth frame, a new goal every third.
    fn floor_inputs(&mut self, frame: usize) {
        let (w, h) = (self.floor_size.x, self.floor_size.y);
        let cell = UVec2::new(self.rng.below(w), self.rng.below(h));
        let free = self.rng.below(2) == 0;
        let area = self.floors[frame % 2].0;
        if let Some(mut area) = self.app.world_mut().get_mut::<NavArea>(area) {
            let _ = area.grid.set_cell_free(cell, free);
        }
        if frame.is_multiple_of(60) {
            let link = self.links[(frame / 60) % self.links.len()];
            if let Some(mut link) = self.app.world_mut().get_mut::<NavLink>(link) {
                link.enabled = !link.enabled;
            }
        }
        let mut agents = self.agents(true);
        if frame.is_multiple_of(10) {
            let (_, e) = agents.swap_remove(self.rng.below(agents.len() as u32) as usize);
            self.app.world_mut().despawn(e);
            agents.sort_unstable();
            self.spawn_on_floor();
        }
        if frame.is_multiple_of(3) {
            let (_, e) = agents[self.rng.below(agents.len() as u32) as usize];
            let (goal, area) = self.floor_goal();
            let world = self.app.world_mut();
            if let Some(mut request) = world.get_mut::<PathRequest>(e) {
                request.goal = PathGoal::Point(goal);
            }
            world.entity_mut(e).insert(GoalArea(area));
        }
    }

    /// The hash of every agent's number, position, status and path.
    fn hash(&mut self) -> u64 {
        let mut rows: Vec<(u32, Vec2, String, Vec<Vec2>, usize)> = self
            .app
            .world_mut()
            .query::<(&Id, &NavPosition, &PathStatus, &NavPath)>()
            .iter(self.app.world())
            .map(|(id, at, status, path)| {
                (
                    id.0,
                    at.0,
                    format!("{status:?}"),
                    path.waypoints.clone(),
                    path.next,
                )
            })
            .collect();
        rows.sort_unstable_by_key(|r| r.0);
        let mut h = Fnv::new();
        for (id, at, status, waypoints, next) in rows {
            h.word(u64::from(id));
            h.word(u64::from(at.x.to_bits()));
            h.word(u64::from(at.y.to_bits()));
            h.text(&status);
            h.word(next as u64);
            for p in waypoints {
                h.word(u64::from(p.x.to_bits()) << 32 | u64::from(p.y.to_bits()));
            }
        }
        h.0
    }

    /// Plays the game; returns each frame's hash and the diagnostics.
    pub fn play(mut self) -> (Vec<u64>, PathfindingDiagnostics) {
        let mut hashes = Vec::with_capacity(FRAMES);
        for frame in 0..FRAMES {
            self.inputs(frame);
            self.app.update();
            hashes.push(self.hash());
        }
        let diagnostics = *self.app.world().resource::<PathfindingDiagnostics>();
        (hashes, diagnostics)
    }
}

/// The hash of a whole game: of its frames' hashes.
pub fn fold(hashes: &[u64]) -> u64 {
    let mut h = Fnv::new();
    for &w in hashes {
        h.word(w);
    }
    h.0
}

/// [`fold`] of the game's frames, as this version of the crate plays it on
/// every platform (x86-64 and `wasm32` alike). A change to the crate that
/// changes how agents plan or move changes it: the tests then print the new
/// value.
pub const GOLDEN: u64 = 0xda75_8628_63ec_6cea;
