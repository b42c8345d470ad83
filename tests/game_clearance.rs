//! Agents of several sizes and movement profiles driven the way a game
//! drives them: hundreds of agents with radii from 0 to 2.4 cells, some
//! crossing trees as ground (rangers) or at three times the cost
//! (foresters, Theta\* with costs), walking at 60 frames a second,
//! obstacles and trees edited every frame near them, results held back,
//! agents despawned mid-search and new ones spawned. Played twice: with
//! meshes for the radii ([`PathfindingSettings::radius_meshes`], the
//! default), where agents with a radius plan on the mesh for their radius
//! (by Anya or Polyanya, the game switches between them, and a share by
//! Lazy Theta\*) and foresters, whose costs differ, on eroded grids; then
//! with eroded grids for every radius. Each agent is checked on its own
//! profile's grid. Invariants at every frame:
//!
//! - every path the plugin applies names the current grid version, every
//!   segment is visible on the profile's grid, an eroded grid it was
//!   planned on equals a fresh erosion of the current grid, and every point
//!   of it keeps the agent's radius from every
//!   blocked cell and from the grid's edge;
//! - every point agent stands on a traversable point of its profile's grid,
//!   and every disc keeps its radius from every wall of it, except an agent
//!   that spawned where it does not fit, or that an edit closed in on: it
//!   must fit again within a bounded number of frames (or have been told
//!   [`PathFailure::NoRoom`], standing where no place that fits it is in
//!   sight);
//! - the grid keeps an eroded grid for exactly the (profile, clearance)
//!   pairs in use;
//! - the searches shared in the frame are those the agents sent in it
//!   imply (see `Game::shared_as_implied`): in the first frame, every
//!   agent that may share a search is answered by a shared one.
//!
//! Once edits stop, every agent settles: at its goal, on a fallback path to
//! a goal its mesh (or eroded grid) cannot reach, or `NoRoom`.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use bevy_anyangle::clearance::{Clearance, erode, start_point};
use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, AnyAngleSystems, GridTransform, LocalAvoidance, MeshBuilding, NavGrid, NavPath,
    NavPosition, PathFailed, PathFailure, PathFollower, PathGoal, PathReady, PathRequest,
    PathStatus, PathfindingDiagnostics, PathfindingSettings, ProfileId, Replanning, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_anyangle::terrain::{Profile, Terrain};
use bevy_app::{App, Update};
use bevy_ecs::entity::{EntityHashMap, EntityHashSet};
use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use common::generate::Rng;
use common::history::{History, note};
use common::hog::Hog;
use common::{cell_distance, keeps_radius, wall_distance};

const FPS: f32 = 60.0;
/// Agent radii, in world units (one cell is one unit).
const RADII: [f32; 5] = [0.0, 0.45, 1.0, 1.6, 2.4];
/// Slack for `f32` world positions of discs, in cells.
const TOLERANCE: f64 = 1e-3;
/// Slack for `f32` world positions of point agents, in cells: a follower
/// walking exactly along a wall's edge may be stored a few ulps inside it
/// (1/4096 is four ulps at 512). It stays below the 1/1024 by which a
/// fallback point on a double corner is moved into its cell, so that an
/// agent standing there when that cell is blocked counts as in the wall.
const POINT_TOLERANCE: f64 = 1.0 / 4096.0;
/// Frames an agent may take to fit again after spawning where it does not
/// or an edit closed in on it.
const RECOVERY_FRAMES: usize = 400;

/// How far (cells) to look around a point for walls closer than `radius`.
fn within(radius: f32) -> i64 {
    radius.ceil() as i64 + 2
}

/// Paths applied in a frame that broke a rule, with why.
#[derive(Resource, Default)]
struct Violations(Vec<String>);

/// Agents that got a new path this frame.
#[derive(Resource, Default)]
struct Applied(Vec<Entity>);

/// Per profile, how many applied paths crossed trees (as the terrain was
/// when they were applied).
#[derive(Resource, Default)]
struct Woods(HashMap<ProfileId, usize>);

/// Who plans on meshes: whether the game turned them on
/// ([`PathfindingSettings::radius_meshes`]), and the foresters' profile
/// (whose costs differ: never on a mesh).
#[derive(Resource, Clone, Copy)]
struct MeshRule {
    meshes: bool,
    foresters: ProfileId,
}

/// Whether an agent plans on the mesh for its radius: with meshes on, one
/// with a radius, without costs.
fn on_mesh(request: &PathRequest, rule: MeshRule) -> bool {
    rule.meshes && request.radius > 0.0 && request.profile != rule.foresters
}

/// The radius the mesh of an agent of `radius` cells is built for: the
/// next multiple of 1/64 cell.
fn mesh_radius(radius: f32) -> f64 {
    (f64::from(radius) * 64.0).ceil() / 64.0
}

/// Agents whose last search ended in [`PathFailure::NoRoom`].
#[derive(Resource, Default)]
struct NoRoom(EntityHashSet);

/// After `Apply`: every path applied this frame is valid for its agent's
/// size on the current grid.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
fn check_applied_paths(
    nav: Res<NavGrid>,
    mut applied: ResMut<Applied>,
    agents: Query<(&NavPath, &PathRequest)>,
    mut violations: ResMut<Violations>,
    mut fresh: Local<HashMap<(u64, ProfileId, Clearance), Grid>>,
    mut woods: ResMut<Woods>,
    rule: Res<MeshRule>,
) {
    for e in applied.0.drain(..) {
        let Ok((path, request)) = agents.get(e) else {
            continue;
        };
        let clearance = nav.clearance_of(request.radius).unwrap();
        let profile = request.profile;
        let own = nav.grid_for(profile, Clearance::NONE).unwrap();
        if path.grid_version != nav.version() {
            violations.0.push(format!(
                "{e}: applied a path of version {} on version {}",
                path.grid_version,
                nav.version()
            ));
        }
        let terrain = nav.terrain().unwrap();
        let through_trees = path.grid_waypoints.windows(2).any(|w| {
            (0..64).any(|i| {
                let q = w[0].lerp(w[1], (f64::from(i) + 0.5) / 64.0);
                terrain.get(q.x.floor() as i64, q.y.floor() as i64) == Some(Terrain::TREES)
                    && q.fract().min_element() > 0.0
            })
        });
        if through_trees {
            *woods.0.entry(profile).or_default() += 1;
        }
        for w in path.grid_waypoints.windows(2) {
            if !line_of_sight(own, w[0], w[1]) {
                violations.0.push(format!(
                    "{e}: segment {} - {} is not visible on its profile's grid",
                    w[0], w[1]
                ));
            }
        }
        let mesh = on_mesh(request, *rule);
        let Some(kept) = nav.grid_for(profile, clearance).filter(|_| !mesh) else {
            if !mesh {
                violations
                    .0
                    .push(format!("{e}: no eroded grid kept for {clearance:?}"));
            }
            keeps(e, path, own, request.radius, &mut violations);
            continue;
        };
        let fresh = fresh
            .entry((nav.version(), profile, clearance))
            .or_insert_with(|| erode(own, clearance));
        if kept != &*fresh {
            violations.0.push(format!(
                "{e}: the eroded grid for {clearance:?} differs from a fresh erosion at version {}",
                nav.version()
            ));
        }
        for w in path.grid_waypoints.windows(2) {
            if !line_of_sight(fresh, w[0], w[1]) {
                violations.0.push(format!(
                    "{e}: segment {} - {} is not visible on its eroded grid",
                    w[0], w[1]
                ));
            }
        }
        keeps(e, path, own, request.radius, &mut violations);
    }
    fresh.retain(|&(v, _, _), _| v == nav.version());
}

/// Every point of `path` keeps `radius` from
/// every blocked cell of `own` and from its edge. A path of one waypoint
/// walks nowhere: it is where the agent stands (a path cut short before a
/// segment an edit blocked), which the check of where agents stand covers.
fn keeps(e: Entity, path: &NavPath, own: &Grid, radius: f32, violations: &mut Violations) {
    if path.grid_waypoints.len() < 2 {
        return;
    }
    if let Err(why) = keeps_radius(own, &path.grid_waypoints, f64::from(radius)) {
        violations.0.push(format!("{e} (radius {radius}): {why}"));
    }
}

/// The agents waiting for a search before a frame, and the counters then
/// (see [`Game::shared_as_implied`]).
struct Waiting {
    agents: EntityHashSet,
    diagnostics: PathfindingDiagnostics,
}

struct Game {
    app: App,
    rng: Rng,
    agents: Vec<Entity>,
    /// Agents that do not fit where they stand, legitimately: since which
    /// frame.
    recovering: EntityHashMap<usize>,
    /// Every edit: frame, grid version after it, cells, and what became of
    /// them (for failure reports).
    edits: Vec<(usize, u64, URect, &'static str)>,
    /// Each agent's last few path and status changes, for failure reports.
    history: History,
    clock: Instant,
    /// The profiles agents draw from.
    profiles: [ProfileId; 3],
    /// Two rally points half the agents head for (crowds: their searches
    /// are shared).
    rally: Vec<Vec2>,
    /// Agents waiting for their first answer, with the frame they spawned
    /// in.
    unanswered: EntityHashMap<usize>,
    /// Per frame so far, how many frames before it the game held the
    /// searches ([`PathfindingSettings::paused`]).
    held: Vec<usize>,
    /// Per agent answered: the frames from its spawn to its first answer
    /// (a path or a failure), those the game held the searches in left
    /// out; those held frames; and whether it spawned in the first frame.
    first_waits: Vec<(usize, usize, bool)>,
}

impl Game {
    fn new(map: &str, agents: usize, seed: u64, meshes: bool) -> Game {
        let path = format!("{}/data/maps/{map}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let mut nav = NavGrid::from_movingai(&text, GridTransform::default()).unwrap();
        // Rangers cross the trees as ground; foresters at three times the
        // cost (Theta* with costs).
        let ranger = nav
            .add_profile(Profile::default().with(Terrain::TREES, 1.0).unwrap())
            .unwrap();
        let forester = nav
            .add_profile(Profile::default().with(Terrain::TREES, 3.0).unwrap())
            .unwrap();
        let mut app = App::new();
        app.add_plugins(AnyAnglePlugin::default())
            .insert_resource(nav)
            .insert_resource(SteeringClock::fixed(1.0 / FPS))
            .init_resource::<Violations>()
            .init_resource::<Applied>()
            .init_resource::<NoRoom>()
            .init_resource::<Woods>()
            .insert_resource(MeshRule {
                meshes,
                foresters: forester,
            })
            .add_observer(
                |ready: On<PathReady>,
                 mut applied: ResMut<Applied>,
                 mut cramped: ResMut<NoRoom>| {
                    applied.0.push(ready.entity);
                    cramped.0.remove(&ready.entity);
                },
            )
            .add_observer(|failed: On<PathFailed>, mut cramped: ResMut<NoRoom>| {
                if failed.status == PathStatus::Failed(PathFailure::NoRoom) {
                    cramped.0.insert(failed.entity);
                } else {
                    cramped.0.remove(&failed.entity);
                }
            })
            .add_systems(
                Update,
                check_applied_paths
                    .after(AnyAngleSystems::Apply)
                    .before(AnyAngleSystems::Steer),
            );
        app.world_mut()
            .resource_mut::<PathfindingSettings>()
            .radius_meshes = meshes;
        app.finish();
        app.cleanup();
        let mut game = Game {
            app,
            rng: Rng::new(seed),
            agents: Vec::new(),
            recovering: EntityHashMap::default(),
            edits: Vec::new(),
            history: EntityHashMap::default(),
            clock: Instant::now(),
            profiles: [ProfileId::DEFAULT, ranger, forester],
            rally: Vec::new(),
            unanswered: EntityHashMap::default(),
            held: vec![0],
            first_waits: Vec::new(),
        };
        game.rally = vec![game.free_point(), game.free_point()];
        for _ in 0..agents {
            game.spawn(0);
        }
        game
    }

    fn nav(&self) -> &NavGrid {
        self.app.world().resource::<NavGrid>()
    }

    /// A random point of a free cell (world coordinates).
    fn free_point(&mut self) -> Vec2 {
        let grid = self.nav().grid().clone();
        loop {
            let x = self.rng.below(u64::from(grid.width())) as i64;
            let y = self.rng.below(u64::from(grid.height())) as i64;
            if grid.is_free_xy(x, y) {
                let h = f64::from(grid.height());
                return Vec2::new(
                    (x as f64 + self.rng.unit()) as f32,
                    (h - y as f64 - self.rng.unit()) as f32,
                );
            }
        }
    }

    fn spawn(&mut self, frame: usize) {
        let start = self.free_point();
        let goal = if self.rng.chance(0.5) {
            *self.rng.pick(&self.rally)
        } else {
            self.free_point()
        };
        let radius = *self.rng.pick(&RADII);
        let profile = *self.rng.pick(&self.profiles);
        let mut request = PathRequest::to(goal)
            .with_radius(radius)
            .with_profile(profile);
        // Foresters and a share of the others: Lazy Theta*, eroded grids.
        if profile == self.profiles[2] || self.rng.chance(0.3) {
            request = request.with_algorithm(Algorithm::LazyTheta);
        }
        // A third steer with local avoidance, around each other.
        let avoid = self.rng.chance(0.33);
        let mut agent = self.app.world_mut().spawn((
            NavPosition(start),
            request,
            PathFollower {
                speed: 6.0,
                ..PathFollower::default()
            },
        ));
        if avoid {
            agent.insert(LocalAvoidance);
        }
        let e = agent.id();
        self.unanswered.insert(e, frame);
        self.agents.push(e);
        if !self.fits(e) {
            self.recovering.insert(e, frame);
        }
    }

    fn radius(&self, e: Entity) -> f32 {
        self.app.world().get::<PathRequest>(e).unwrap().radius
    }

    fn position(&self, e: Entity) -> DVec2 {
        self.nav()
            .to_grid(self.app.world().get::<NavPosition>(e).unwrap().0)
    }

    /// The grid of agent `e`'s profile.
    fn own_grid(&self, e: Entity) -> &Grid {
        let profile = self.app.world().get::<PathRequest>(e).unwrap().profile;
        self.nav().grid_for(profile, Clearance::NONE).unwrap()
    }

    /// Whether agent `e` fits where it stands on its profile's grid, up to
    /// the rounding of `f32` world positions: a point agent on a
    /// traversable point, a disc at least its radius from every blocked
    /// cell and from the grid's edge.
    fn fits(&self, e: Entity) -> bool {
        let (r, p, own) = (self.radius(e), self.position(e), self.own_grid(e));
        if r == 0.0 {
            [
                (0.0, 0.0),
                (1.0, 1.0),
                (1.0, -1.0),
                (-1.0, 1.0),
                (-1.0, -1.0),
            ]
            .iter()
            .any(|&(dx, dy)| own.is_point_traversable(p + DVec2::new(dx, dy) * POINT_TOLERANCE))
        } else {
            wall_distance(own, p, within(r)) >= f64::from(r) - TOLERANCE
        }
    }

    /// Where agent `e` stands, for failure reports: in a blocked cell, or
    /// how far from a wall.
    fn standing(&self, e: Entity) -> String {
        let (r, p, own) = (self.radius(e), self.position(e), self.own_grid(e));
        if r == 0.0 {
            format!("{p}, in a blocked cell of its profile's grid")
        } else {
            format!("{p}, {} from a wall", wall_distance(own, p, within(r)))
        }
    }

    /// Blocks or frees a few cells near where some agent is heading.
    fn edit_near_an_agent(&mut self, frame: usize) {
        let e = *self.rng.pick(&self.agents);
        let path = self.app.world().get::<NavPath>(e).unwrap().clone();
        let around = path
            .next_waypoint()
            .unwrap_or_else(|| self.app.world().get::<NavPosition>(e).unwrap().0);
        let offset = Vec2::new(self.rng.range(-4, 4) as f32, self.rng.range(-4, 4) as f32);
        let Some(cell) = self.nav().cell_at(around + offset) else {
            return;
        };
        let free = self.rng.chance(0.4);
        let trees = !free && self.rng.chance(0.5);
        let size = UVec2::new(1 + self.rng.below(2) as u32, 1 + self.rng.below(2) as u32);
        let grid_size = self.nav().grid().size();
        let rect = URect::from_corners(cell, (cell + size).min(grid_size));
        let mut nav = self.app.world_mut().resource_mut::<NavGrid>();
        let what = if trees {
            // Blocked for soldiers, free for rangers and foresters.
            nav.set_terrain(rect, Terrain::TREES).unwrap();
            "trees"
        } else {
            nav.set_rect_free(rect, free).unwrap();
            if free { "freed" } else { "blocked" }
        };
        let version = nav.version();
        self.edits.push((frame, version, rect, what));
        if !free {
            let closed: Vec<Entity> = self
                .agents
                .iter()
                .copied()
                .filter(|&a| !self.fits(a))
                .collect();
            for a in closed {
                self.recovering.entry(a).or_insert(frame);
            }
        }
    }

    fn frame(&mut self, frame: usize, edits: usize) {
        for _ in 0..edits {
            self.edit_near_an_agent(frame);
        }
        let held = self.app.world().resource::<PathfindingSettings>().paused;
        self.held.push(self.held[frame] + usize::from(held));
        let deadline = self.clock + Duration::from_secs_f32(1.0 / FPS);
        self.app.update();
        let violations = std::mem::take(&mut self.app.world_mut().resource_mut::<Violations>().0);
        if let Some(wait) = deadline.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        self.clock = deadline.max(Instant::now());
        assert!(violations.is_empty(), "frame {frame}: {violations:#?}");
        self.note_first_answers(frame);
        for i in 0..self.agents.len() {
            let e = self.agents[i];
            let p = self.position(e);
            note(&mut self.history, self.app.world(), frame, e, p, 12);
            if self.fits(e) {
                // Recovered once it has reached its path proper: on the way
                // to the start it was moved to, it only promises to come no
                // closer to a wall than where it set out.
                let path = self.app.world().get::<NavPath>(e).unwrap();
                if !(path.start_moved && path.next == 0) {
                    self.recovering.remove(&e);
                }
                continue;
            }
            let world = self.app.world();
            let status = world.get::<PathStatus>(e).unwrap();
            let Some(&since) = self.recovering.get(&e) else {
                panic!(
                    "frame {frame}: {e} (radius {}) at {}; {status:?} {:?}{}",
                    self.radius(e),
                    self.standing(e),
                    world.get::<NavPath>(e).unwrap(),
                    self.report(e),
                );
            };
            if world.resource::<NoRoom>().0.contains(&e) {
                // Checked when the game settles; its time to get out starts
                // when it is given a way.
                self.recovering.insert(e, frame);
                continue;
            }
            assert!(
                frame - since <= RECOVERY_FRAMES,
                "frame {frame}: {e} (radius {}) still does not fit at {}, since frame {since}: {status:?} {:?}{}",
                self.radius(e),
                self.position(e),
                world.get::<NavPath>(e).unwrap(),
                self.report(e),
            );
        }
    }

    /// Records the first answers that came in frame `frame` (see
    /// [`Game::first_waits`]).
    fn note_first_answers(&mut self, frame: usize) {
        let world = self.app.world();
        let answered: Vec<(Entity, usize)> = self
            .unanswered
            .iter()
            .filter(|&(&e, _)| !world.get::<PathStatus>(e).unwrap().is_busy())
            .map(|(&e, &since)| (e, since))
            .collect();
        for (e, since) in answered {
            self.unanswered.remove(&e);
            let held = self.held[frame + 1] - self.held[since];
            self.first_waits
                .push((frame + 1 - since - held, held, since == 0));
        }
    }

    /// What a failure report needs about agent `e`: the grid version, the
    /// nearest blocked cell and the edits around it, the agent's history.
    fn report(&self, e: Entity) -> String {
        use std::fmt::Write;
        let world = self.app.world();
        let request = world.get::<PathRequest>(e).unwrap();
        let nav = self.nav();
        let own = nav.grid_for(request.profile, Clearance::NONE).unwrap();
        let p = self.position(e);
        let reach = within(request.radius);
        let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
        let nearest = (cy - reach..=cy + reach)
            .flat_map(|y| (cx - reach..=cx + reach).map(move |x| (x, y)))
            .filter(|&(x, y)| own.contains_xy(x, y) && !own.is_free_xy(x, y))
            .map(|(x, y)| (cell_distance(p, x, y), x, y))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let mut out = format!(
            "\ngrid version {}, replanning {}; nearest blocked cell (distance, x, y) {nearest:?}\n{:?}",
            nav.version(),
            world.get::<Replanning>(e).is_some(),
            world.resource::<PathfindingDiagnostics>(),
        );
        if let Ok(clearance) = nav.clearance_of(request.radius)
            && let Some(eroded) = nav.grid_for(request.profile, clearance)
        {
            let path = world.get::<NavPath>(e).unwrap();
            let ahead = &path.grid_waypoints[path.next.min(path.grid_waypoints.len())..];
            let mut from = p;
            let visible: Vec<bool> = ahead
                .iter()
                .map(|&w| {
                    let v = line_of_sight(eroded, from, w);
                    from = w;
                    v
                })
                .collect();
            let _ = write!(
                out,
                "; on its eroded grid, the agent's cell free {}, segments ahead visible {visible:?}",
                eroded.is_point_traversable(p)
            );
        }
        out += "\nedits within 6 cells:\n";
        for (frame, version, rect, what) in &self.edits {
            let near = i64::from(rect.min.x) <= cx + 6
                && i64::from(rect.max.x) >= cx - 6
                && i64::from(rect.min.y) <= cy + 6
                && i64::from(rect.max.y) >= cy - 6;
            if near {
                let _ = writeln!(out, "  frame {frame} version {version} {rect:?} {what}");
            }
        }
        out += "history:\n";
        for (frame, p, s) in self.history.get(&e).into_iter().flatten() {
            let _ = writeln!(out, "  frame {frame} at {p}: {s}");
        }
        out
    }

    /// Who waits for a search before a frame, with the counters then.
    fn waiting(&self) -> Waiting {
        let world = self.app.world();
        Waiting {
            agents: self
                .agents
                .iter()
                .copied()
                .filter(|&e| *world.get::<PathStatus>(e).unwrap() == PathStatus::Pending)
                .collect(),
            diagnostics: *world.resource::<PathfindingDiagnostics>(),
        }
    }

    /// What agent `e` must agree on with others to share a search with
    /// them: its profile, its radius, its planner and its goal; `None` if
    /// it plans alone (by Lazy Theta\*, with costs, or on an eroded grid).
    fn sharing_key(&self, e: Entity) -> Option<(ProfileId, u64, Algorithm, [u32; 2])> {
        let world = self.app.world();
        let rule = *world.resource::<MeshRule>();
        let request = world.get::<PathRequest>(e).unwrap();
        let algorithm = request
            .algorithm
            .unwrap_or(world.resource::<PathfindingSettings>().algorithm);
        let exact = matches!(algorithm, Algorithm::Anya | Algorithm::Polyanya);
        let fits = request.radius == 0.0 || on_mesh(request, rule);
        let PathGoal::Point(goal) = request.goal else {
            unreachable!()
        };
        (exact && fits && request.profile != rule.foresters).then(|| {
            (
                request.profile,
                mesh_radius(request.radius).to_bits(),
                algorithm,
                [goal.x.to_bits(), goal.y.to_bits()],
            )
        })
    }

    /// After a frame: the searches dispatch shared in it are those the
    /// agents it sent imply. Agents share a search when at least 8 of them
    /// with one [`Game::sharing_key`] are sent in one frame (a shared
    /// search per 4,096 of them). So the agents sent this frame (that
    /// waited before it and no longer do) imply at least one for each key
    /// 8 of them have, and at most one for each key 8 have counting every
    /// agent that did not wait before the frame too (any of them may have
    /// been sent again). In the first frame, when no agent had been sent
    /// before, both counts are the same: every agent sent that may share a
    /// search was answered by a shared one. Returns the least count.
    fn shared_as_implied(&self, before: &Waiting, frame: usize) -> usize {
        let world = self.app.world();
        // Per key: agents sent this frame, and others that may have been.
        let mut keys: HashMap<_, (usize, usize)> = HashMap::new();
        let mut sent = 0;
        for &e in &self.agents {
            let waited = before.agents.contains(&e);
            let waits = *world.get::<PathStatus>(e).unwrap() == PathStatus::Pending;
            sent += usize::from(waited && !waits);
            let Some(key) = self.sharing_key(e) else {
                continue;
            };
            let counts = keys.entry(key).or_default();
            if waited && !waits {
                counts.0 += 1;
            } else if !waited {
                counts.1 += 1;
            }
        }
        let groups = |n: usize| if n >= 8 { n.div_ceil(4096) } else { 0 };
        let (least, most) = keys
            .values()
            .map(|&(n, others)| (groups(n), groups(n + others)))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let d = world.resource::<PathfindingDiagnostics>();
        let shared = (d.shared_searches - before.diagnostics.shared_searches) as usize;
        assert!(
            (least..=most).contains(&shared),
            "frame {frame}: {shared} shared searches, where the {sent} agents sent imply {least} to {most}; {d:?}"
        );
        least
    }

    /// Despawns a few agents, preferring ones mid-search, and spawns others.
    fn churn(&mut self, frame: usize) {
        for _ in 0..5 {
            let busy: Vec<usize> = (0..self.agents.len())
                .filter(|&i| {
                    let w = self.app.world();
                    let e = self.agents[i];
                    w.get::<PathStatus>(e).unwrap().is_busy() || w.get::<Replanning>(e).is_some()
                })
                .collect();
            let i = if busy.is_empty() {
                self.rng.below(self.agents.len() as u64) as usize
            } else {
                *self.rng.pick(&busy)
            };
            let e = self.agents.swap_remove(i);
            self.unanswered.remove(&e);
            self.recovering.remove(&e);
            self.history.remove(&e);
            self.app.world_mut().despawn(e);
            self.spawn(frame);
        }
    }
}

#[test]
fn agents_of_several_sizes_and_profiles_keep_their_distance_from_walls_under_edits() {
    // Agents of a radius on the meshes for their radii (the default), then
    // on eroded grids. (One game after the other: run side by side they
    // would share the cores.)
    play(600, 0xC1EA_0001, true, MeshBuilding::Whole);
    play(600, 0xC1EA_0002, false, MeshBuilding::Whole);
    // The meshes built chunk by chunk as the searches reach them.
    play(600, 0xC1EA_0003, true, MeshBuilding::OnDemand);
}

/// The games with meshes (whole, then built on demand) beside two busy
/// threads that take the machine's cores from the search thread: the same
/// checks hold, and the frames each agent waited for its first answer are
/// printed. Run it with `cargo test --release --test game_clearance --
/// --ignored hog --nocapture`; `docs/robustness.md` has its figures.
#[test]
#[ignore = "a measurement: cargo test --release --test game_clearance -- --ignored hog"]
fn first_answers_beside_a_cpu_hog() {
    for (seed, building) in [
        (0xC1EA_0001, MeshBuilding::Whole),
        (0xC1EA_0003, MeshBuilding::OnDemand),
    ] {
        let hog = Hog::new();
        let waits = play(600, seed, true, building);
        drop(hog);
        let mut all: Vec<usize> = waits.iter().map(|w| w.0).collect();
        all.sort_unstable();
        let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
        let worst = |first: bool| waits.iter().filter(|w| w.2 == first).map(|w| w.0).max();
        let held_too = waits.iter().map(|w| w.0 + w.1).max();
        println!(
            "{building:?} meshes, beside a CPU hog: {} agents, frames to the first answer (held frames left out): median {}, 90th percentile {}, 99th {}, worst {} (of the {} spawned in the first frame: {:?}; of those spawned later: {:?}); worst counting held frames: {:?}",
            all.len(),
            at(0.5),
            at(0.9),
            at(0.99),
            all[all.len() - 1],
            waits.iter().filter(|w| w.2).count(),
            worst(true),
            worst(false),
            held_too,
        );
    }
}

/// The game on `den520d` with `agents` agents, meshes for the radii on or
/// off (built as `building` says), and its checks. Returns, for every agent
/// spawned while edits went on, the frames it waited for its first answer
/// (see [`Game::first_waits`]; one still waiting when edits stopped counts
/// the frames it had waited), the frames the game held the searches in
/// meanwhile, and whether it spawned in the first frame.
fn play(
    agents: usize,
    seed: u64,
    meshes: bool,
    building: MeshBuilding,
) -> Vec<(usize, usize, bool)> {
    let mut game = Game::new("den520d.map", agents, seed, meshes);
    game.app
        .world_mut()
        .resource_mut::<PathfindingSettings>()
        .mesh_building = building;
    let frames = 480;
    // Shared searches the agents sent implied, in all.
    let mut implied = 0;
    for frame in 0..frames {
        game.app
            .world_mut()
            .resource_mut::<PathfindingSettings>()
            .paused = frame % 90 >= 70;
        if frame % 10 == 5 {
            game.churn(frame);
        }
        // The rally points move; a third of the agents head for them.
        if frame % 150 == 75 {
            game.rally = vec![game.free_point(), game.free_point()];
            for i in 0..game.agents.len() {
                if game.rng.chance(0.33) {
                    let goal = *game.rng.pick(&game.rally);
                    let e = game.agents[i];
                    game.app.world_mut().get_mut::<PathRequest>(e).unwrap().goal =
                        PathGoal::Point(goal);
                }
            }
        }
        if frame % 200 == 100 {
            let mut settings = game.app.world_mut().resource_mut::<PathfindingSettings>();
            settings.algorithm = if settings.algorithm == Algorithm::Anya {
                Algorithm::Polyanya
            } else {
                Algorithm::Anya
            };
        }
        let waiting = game.waiting();
        game.frame(frame, 2);
        implied += game.shared_as_implied(&waiting, frame);
    }
    let mut first_waits = game.first_waits.clone();
    first_waits.extend(game.unanswered.values().map(|&since| {
        let held = game.held[frames] - game.held[since];
        (frames - since - held, held, since == 0)
    }));
    game.app
        .world_mut()
        .resource_mut::<PathfindingSettings>()
        .paused = false;
    let mut settled = false;
    for frame in frames..frames + 1200 {
        let before: Vec<DVec2> = game.agents.iter().map(|&e| game.position(e)).collect();
        game.frame(frame, 0);
        let d = *game.app.world().resource::<PathfindingDiagnostics>();
        let world = game.app.world();
        // Settled: nothing planned or waiting, and no agent told there is
        // no room for it moved this frame (a crowd may push one, which then
        // plans again from where it was pushed, in the next frame).
        let still = game.agents.iter().zip(&before).all(|(&e, &p)| {
            game.position(e) == p
                || *world.get::<PathStatus>(e).unwrap() != PathStatus::Failed(PathFailure::NoRoom)
        });
        if d.in_flight == 0
            && d.queued == 0
            && still
            && game.agents.iter().all(|&e| {
                !world.get::<PathStatus>(e).unwrap().is_busy()
                    && world.get::<Replanning>(e).is_none()
            })
        {
            settled = true;
            break;
        }
    }
    assert!(settled, "agents did not settle after edits stopped");

    let nav = game.nav().clone();
    let rule = *game.app.world().resource::<MeshRule>();
    let mut in_use = BTreeSet::new();
    let mut tally: HashMap<String, usize> = HashMap::new();
    let mut fresh_meshes: HashMap<(ProfileId, u64), NavMesh> = HashMap::new();
    let mut planner = Planner::new();
    let mut on_meshes = 0;
    for &e in &game.agents {
        let world = game.app.world();
        let request = *world.get::<PathRequest>(e).unwrap();
        let clearance = nav.clearance_of(request.radius).unwrap();
        let own = nav.grid_for(request.profile, Clearance::NONE).unwrap();
        // The mesh for its radius, or its eroded grid.
        let mesh = on_mesh(&request, rule).then(|| {
            let r = mesh_radius(request.radius);
            &*fresh_meshes
                .entry((request.profile, r.to_bits()))
                .or_insert_with(|| NavMesh::with_radius(own, r).unwrap())
        });
        on_meshes += usize::from(mesh.is_some());
        if !clearance.is_none() && mesh.is_none() {
            in_use.insert((request.profile, clearance));
        }
        let eroded = nav
            .grid_for(request.profile, clearance)
            .filter(|_| mesh.is_none())
            .unwrap_or(own);
        let fail = PlanOptions {
            fallback: FallbackPolicy::Fail,
            ..PlanOptions::with_algorithm(Algorithm::Anya)
        };
        let status = world.get::<PathStatus>(e).unwrap().clone();
        let path = world.get::<NavPath>(e).unwrap();
        let PathGoal::Point(goal) = request.goal else {
            unreachable!()
        };
        match &status {
            PathStatus::Ready => {
                assert_eq!(path.end(), Some(goal), "{e}: {path:?}{}", game.report(e));
            }
            PathStatus::Fallback => {
                let w = &path.grid_waypoints;
                let inside = match w.len() {
                    0 => game.position(e),
                    1 => w[0],
                    n => w[n - 2].lerp(w[n - 1], 0.5),
                };
                let truth = match mesh {
                    Some(mesh) => planner.plan_on_mesh(mesh, inside, nav.to_grid(goal), &fail),
                    None => plan(eroded, inside, nav.to_grid(goal), &fail),
                };
                assert!(
                    matches!(truth, Err(PlanError::Unreachable { .. })),
                    "{e}: a fallback path to a goal its mesh or eroded grid reaches: {:?}{}",
                    truth.map(|p| p.length),
                    game.report(e)
                );
            }
            PathStatus::Failed(PathFailure::NoRoom) => {
                let start = match mesh {
                    Some(mesh) => {
                        match planner.plan_on_mesh(mesh, game.position(e), nav.to_grid(goal), &fail)
                        {
                            Err(PlanError::NoRoom) => None,
                            _ => Some(game.position(e)),
                        }
                    }
                    None => start_point(own, eroded, clearance, game.position(e)),
                };
                assert_eq!(
                    start,
                    None,
                    "{e}: NoRoom at {}, yet a place that fits it is in sight; {path:?}{}",
                    game.position(e),
                    game.report(e)
                );
            }
            other => panic!(
                "{e} (radius {}): {other:?} after the game settled{}",
                request.radius,
                game.report(e)
            ),
        }
        *tally
            .entry(format!(
                "{:?} r{}",
                std::mem::discriminant(&status),
                request.radius
            ))
            .or_default() += 1;
    }
    // Rangers and foresters did walk through the woods; soldiers never.
    let woods = &game.app.world().resource::<Woods>().0;
    assert_eq!(woods.get(&ProfileId::DEFAULT), None, "{woods:?}");
    for profile in &game.profiles[1..] {
        assert!(woods.get(profile).is_some_and(|&n| n > 10), "{woods:?}");
    }
    let kept: BTreeSet<(ProfileId, Clearance)> = nav.clearances().collect();
    assert_eq!(
        kept, in_use,
        "eroded grids kept for exactly the clearances in use"
    );
    let fallbacks = game
        .agents
        .iter()
        .filter(|&&e| *game.app.world().get::<PathStatus>(e).unwrap() == PathStatus::Fallback)
        .count();
    assert!(fallbacks > 10, "only {fallbacks} fallbacks: {tally:?}");
    let n = game.agents.len();
    // Half the agents head for two rally points from the start: those of
    // one profile and radius that head for one, if at least 8, are sent
    // together (dispatch takes those further down the line that head for
    // a goal it sends), and share a search.
    assert!(implied > 0, "no shared search implied");
    if meshes {
        assert!(
            on_meshes > n / 4 && on_meshes + n / 4 < n,
            "{on_meshes} of {n} agents on meshes"
        );
    } else {
        assert_eq!(on_meshes, 0);
    }
    first_waits
}
