//! The plugin driven the way a game drives it: thousands of agents walking
//! at 60 frames a second, obstacles edited every frame, search results held
//! back and arriving late, agents despawned mid-search and new ones spawned,
//! the planner switched mid-run. Invariants are asserted at every frame:
//!
//! - every follower stands in free space, and each step it takes is a
//!   visible segment (or two, around a waypoint), except an agent whose cell
//!   was blocked under it, which must walk out within a bounded number of
//!   frames;
//! - every path the plugin applies is valid on the grid version it names
//!   (each segment visible), and the agent sees the waypoint it heads for;
//! - in crowds, the searches shared in the frame are those the agents sent
//!   in it imply (see `Game::shared_as_implied`): in the first frame, every
//!   agent is answered by a search shared with those heading for its goal.
//!
//! Once edits stop, every agent settles on a valid path (or a fallback
//! consistent with the region labels) within a bounded number of frames,
//! and no search is left in flight.

mod common;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, AnyAngleSystems, GridTransform, LocalAvoidance, MeshBuilding, NavGrid, NavPath,
    NavPosition, PathFollower, PathReady, PathRequest, PathStatus, PathfindingDiagnostics,
    PathfindingSettings, Replanning, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, Update};
use bevy_ecs::entity::{EntityHashMap, EntityHashSet};
use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use common::generate::Rng;
use common::history::{History, note};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const FPS: f32 = 60.0;

/// Paths applied in a frame that broke a rule, with why.
#[derive(Resource, Default)]
struct Violations(Vec<String>);

/// Each agent's last failure, for reports.
#[derive(Resource, Default)]
struct LastFailures(EntityHashMap<String>);

/// Agents that got a new path this frame.
#[derive(Resource, Default)]
struct Applied(Vec<Entity>);

/// Agents walking back to their path's start (`NavPath::next` 0): where
/// they stood when the path was applied (grid). The plugin checked that
/// they see the start from there; they walk that segment.
#[derive(Resource, Default)]
struct WalkBacks(EntityHashMap<DVec2>);

/// After `Apply`: every path applied this frame is valid on the grid
/// version it names, which is the current one, and the agent sees the
/// waypoint it heads for (unless it stands in a wall and walks out to the
/// path's start).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
fn check_applied_paths(
    nav: Res<NavGrid>,
    mut applied: ResMut<Applied>,
    agents: Query<(&NavPath, &NavPosition)>,
    mut violations: ResMut<Violations>,
    mut walk_backs: ResMut<WalkBacks>,
) {
    for e in applied.0.drain(..) {
        let Ok((path, pos)) = agents.get(e) else {
            continue;
        };
        if path.next == 0 {
            walk_backs.0.insert(e, nav.to_grid(pos.0));
        } else {
            walk_backs.0.remove(&e);
        }
        if path.grid_version != nav.version() {
            violations.0.push(format!(
                "{e}: applied a path of version {} on version {}",
                path.grid_version,
                nav.version()
            ));
        }
        for w in path.grid_waypoints.windows(2) {
            if !bevy_anyangle::los::line_of_sight(nav.grid(), w[0], w[1]) {
                violations
                    .0
                    .push(format!("{e}: segment {} - {} is not visible", w[0], w[1]));
            }
        }
        for w in path.grid_waypoints.windows(3) {
            if through_a_pinch(nav.grid(), w[0], w[1], w[2]) {
                violations.0.push(format!(
                    "{e}: the path squeezes through {} between {} and {}",
                    w[1], w[0], w[2]
                ));
            }
        }
        if let Some(next) = path.next_waypoint()
            && nav.is_free_at(pos.0)
            && !nav.line_of_sight(pos.0, next)
        {
            violations.0.push(format!(
                "{e}: at {} it cannot see the waypoint {next} it heads for",
                pos.0
            ));
        }
    }
}

/// Whether `path` is the way out of a wall the plugin gives an agent a wall
/// rose under: the nearest walkable point alone.
fn is_way_out(path: &NavPath) -> bool {
    path.start_moved && path.grid_waypoints.len() == 1
}

/// Whether a path from `a` turning at vertex `v` to `b` passes between the
/// two blocked cells of a double corner at `v` (`SPEC.md`: no squeezing):
/// the two free cells at `v` lie on opposite diagonals, so the path is
/// valid there only if both legs stay by the same free cell.
fn through_a_pinch(grid: &Grid, a: DVec2, v: DVec2, b: DVec2) -> bool {
    if v.fract() != DVec2::ZERO || !grid.is_double_corner(v.x as i64, v.y as i64) {
        return false;
    }
    // The free cell a leg from `v` towards `p` runs into or along.
    let cell_towards = |p: DVec2| {
        let d = p - v;
        let mut cells = Vec::new();
        for cx in [v.x - 1.0, v.x] {
            for cy in [v.y - 1.0, v.y] {
                let centre = DVec2::new(cx + 0.5, cy + 0.5) - v;
                // The leg runs into the cell's quadrant or along its edge.
                let fits = |dc: f64, dd: f64| dd == 0.0 || dd.signum() == dc.signum();
                if fits(centre.x, d.x)
                    && fits(centre.y, d.y)
                    && grid.is_free_xy(cx as i64, cy as i64)
                {
                    cells.push((cx as i64, cy as i64));
                }
            }
        }
        cells
    };
    let (into, out) = (cell_towards(a), cell_towards(b));
    !into.iter().any(|c| out.contains(c))
}

/// A step from `from` to `to` (world) is a visible segment, or it runs
/// along the path (up to f32 rounding) over segments that are visible,
/// checked on the path's exact grid waypoints.
fn step_is_visible(
    nav: &NavGrid,
    from: Vec2,
    to: Vec2,
    path: &NavPath,
    walk_back: Option<DVec2>,
) -> Result<(), String> {
    // Standing still crosses nothing (where it stands is checked apart).
    if from == to || nav.line_of_sight(from, to) {
        return Ok(());
    }
    // The way out of a wall (a path of the nearest walkable point alone)
    // crosses blocked cells by design: it must head straight there.
    if is_way_out(path) {
        let exit = path.grid_waypoints[0];
        let (a, b) = (nav.to_grid(from), nav.to_grid(to));
        if grid_segment_distance(b, a, exit) < 1e-3 && b.distance(exit) <= a.distance(exit) {
            return Ok(());
        }
    }
    // Walking back to the path's start, on the segment it saw when the path
    // was applied (up to rounding); or walking out of a wall to the nearest
    // walkable point (a path of that point alone, `start_moved`), which
    // crosses blocked cells by design.
    let w = &path.grid_waypoints;
    if let (Some(origin), true, Some(&start)) = (walk_back, path.next <= 1, w.first()) {
        let (a, b) = (nav.to_grid(from), nav.to_grid(to));
        let los = |p, q| bevy_anyangle::los::line_of_sight(nav.grid(), p, q);
        let on_origin = |p: DVec2| grid_segment_distance(p, origin, start) < 1e-3;
        // It may reach the start and go on along the first segment.
        let b_ok = on_origin(b)
            || (w.len() > 1 && grid_segment_distance(b, start, w[1]) < 1e-3 && los(start, w[1]));
        if on_origin(a) && b_ok && (los(origin, start) || path.start_moved) {
            return Ok(());
        }
    }
    let (a, b) = (nav.to_grid(from), nav.to_grid(to));
    // The segment a point lies on: those the agent walked last first (a
    // path may run back over itself; a step passes a waypoint at most now
    // and then), then any from the first on.
    let current = path.next.saturating_sub(1);
    let along_from = |p: DVec2, first: &[usize]| {
        first
            .iter()
            .copied()
            .chain(0..w.len().saturating_sub(1))
            .filter(|&i| i + 1 < w.len())
            .find(|&i| grid_segment_distance(p, w[i], w[i + 1]) < 1e-3)
    };
    let first = [current, current.saturating_sub(1)];
    let project = |p: DVec2, i: usize| {
        let d = w[i + 1] - w[i];
        w[i] + d * ((p - w[i]).dot(d) / d.length_squared()).clamp(0.0, 1.0)
    };
    match (along_from(a, &first), along_from(b, &first)) {
        (Some(i), Some(j)) if i <= j => {
            // The part of the path walked: from `a` (on segment i) to `b`
            // (on segment j).
            let mut walked = vec![project(a, i)];
            walked.extend_from_slice(&w[i + 1..=j]);
            walked.push(project(b, j));
            // A piece is visible, or (rounding aside) lies on a part of a
            // segment of the path that is visible between lattice points.
            let los = |a, b| bevy_anyangle::los::line_of_sight(nav.grid(), a, b);
            let exact = |s: &[DVec2], k: usize| {
                let (p, q) = (w[k], w[k + 1]);
                part_visible(nav.grid(), p, q, param(s[0], p, q), param(s[1], p, q))
            };
            match walked
                .windows(2)
                .zip(i..=j)
                .find(|(s, k)| !los(s[0], s[1]) && !los(w[*k], w[*k + 1]) && !exact(s, *k))
                .map(|(s, _)| s)
            {
                None => Ok(()),
                Some(s) => Err(format!(
                    "it walked {} - {}, which is blocked (cells around: {}) (segments {:?} visible: {:?})",
                    s[0],
                    s[1],
                    cells_around(nav.grid(), s[0]),
                    &w[i..=j + 1],
                    w[i..=j + 1]
                        .windows(2)
                        .map(|s| bevy_anyangle::los::line_of_sight(nav.grid(), s[0], s[1]))
                        .collect::<Vec<_>>()
                )),
            }
        }
        (i, j) => Err(format!("it is off its path ({i:?}, {j:?})")),
    }
}

/// Whether the part of segment `a-b` between parameters `t0 <= t1` is
/// visible, checked piece by piece between the lattice points it contains:
/// each piece then ends at, and never runs through, a vertex, so the
/// rounding of the ends cannot move it to the other side of one. Where `a`
/// or `b` is no vertex (an agent's position where a search started), the
/// lattice points are those the segment passes within rounding (`1e-9`).
/// The way through each lattice point is checked on its own, with a short
/// segment of exact ends in the same direction: a double corner there
/// closes it.
fn part_visible(grid: &Grid, a: DVec2, b: DVec2, t0: f64, t1: f64) -> bool {
    let los = |p, q| bevy_anyangle::los::line_of_sight(grid, p, q);
    let d = b - a;
    let mut points = vec![a + d * t0];
    if a.fract() == DVec2::ZERO && b.fract() == DVec2::ZERO {
        let (mut x, mut y) = (d.x.abs() as u64, d.y.abs() as u64);
        while y != 0 {
            (x, y) = (y, x % y);
        }
        let g = x.max(1) as f64;
        let first = (t0 * g).floor() as i64 + 1;
        let last = (t1 * g).ceil() as i64 - 1;
        points.extend((first..=last).map(|k| a + d * (k as f64 / g)));
    } else if d != DVec2::ZERO {
        // Along the longer axis, every whole coordinate strictly between
        // the part's ends where the other coordinate is whole too.
        let (axis, other) = if d.x.abs() >= d.y.abs() {
            (0, 1)
        } else {
            (1, 0)
        };
        let (p, q) = (a + d * t0, a + d * t1);
        let (lo, hi) = (p[axis].min(q[axis]), p[axis].max(q[axis]));
        let mut crossings: Vec<DVec2> = ((lo.floor() as i64 + 1)..(hi.ceil() as i64))
            .filter_map(|k| {
                let k = k as f64;
                let across = a[other] + (k - a[axis]) * d[other] / d[axis];
                let whole = across.round();
                ((across - whole).abs() < 1e-9).then(|| {
                    let mut v = DVec2::ZERO;
                    v[axis] = k;
                    v[other] = whole;
                    v
                })
            })
            .collect();
        if d[axis] < 0.0 {
            crossings.reverse();
        }
        points.extend(crossings);
    }
    let through = d.signum() * DVec2::select(d.cmpeq(DVec2::ZERO), DVec2::ZERO, DVec2::ONE);
    let h = 1.0 / 1024.0;
    let vertices_pass = points[1..]
        .iter()
        .all(|&v| los(v - through * h, v + through * h));
    points.push(a + d * t1);
    vertices_pass && points.windows(2).all(|s| s[0] == s[1] || los(s[0], s[1]))
}

/// The checker's own test: an agent's search started off the lattice, on a
/// line through vertices; a cell then blocked behind the agent spoils the
/// whole segment, and the part ahead grazes a blocked corner, which the
/// agent's rounded position may clip. The part ahead still counts as
/// visible; a double corner on it does not.
#[test]
fn part_visible_reads_a_segment_from_off_the_lattice_between_its_vertices() {
    let mut grid = Grid::new(140, 60).unwrap();
    let block = |grid: &mut Grid, x, y| grid.set_free(UVec2::new(x, y), false).unwrap();
    // Touched at its corner (124, 50) by the line y - 46 = (x - 116) / 2.
    block(&mut grid, 124, 49);
    // Crossed by the line, behind the agent.
    block(&mut grid, 127, 51);
    let before = DVec2::new(129.493_591_308_593_75, 52.746_795_654_296_875);
    let next = DVec2::new(116.0, 46.0);
    // Where the agent stood, a little below the line (f32 rounding).
    let here = DVec2::new(125.021_247_863_769_53, 50.510_620_117_187_5);
    let los = |a, b| bevy_anyangle::los::line_of_sight(&grid, a, b);
    assert!(!los(before, next));
    assert!(!los(here, next), "the rounded position clips the corner");
    let t = param(here, before, next);
    assert!(part_visible(&grid, before, next, t, 1.0));
    // The part behind the agent is blocked.
    assert!(!part_visible(&grid, before, next, 0.0, t));
    // The same from a vertex.
    let vertex = DVec2::new(130.0, 53.0);
    assert!(part_visible(&grid, vertex, next, 0.3, 1.0));
    // A double corner at (124, 50) closes the way.
    block(&mut grid, 123, 50);
    assert!(!part_visible(&grid, before, next, t, 1.0));
    assert!(!part_visible(&grid, vertex, next, 0.3, 1.0));
}

/// The 5 x 5 cells around the one holding `p` (grid), row by row (`#`
/// blocked), for failure reports.
fn cells_around(grid: &Grid, p: DVec2) -> String {
    let c = p.floor();
    (-2..=2)
        .map(|dy| {
            (-2..=2)
                .map(|dx| {
                    if grid.is_free_xy(c.x as i64 + dx, c.y as i64 + dy) {
                        '.'
                    } else {
                        '#'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Where segment `a-b` first leaves free space (sampled finely), with the
/// cells around that point, and whether the whole segment from `before`
/// is visible: what a failure report needs.
fn blocked_at(grid: &Grid, a: DVec2, b: DVec2, before: Option<DVec2>) -> String {
    let los = |p, q| bevy_anyangle::los::line_of_sight(grid, p, q);
    let steps = (a.distance(b) * 4096.0).ceil().max(1.0) as usize;
    let first = (0..=steps)
        .map(|k| a.lerp(b, k as f64 / steps as f64))
        .find(|&p| !grid.is_point_traversable(p));
    format!(
        "first blocked point {first:?} (cells around it, or around {a} if none: {}); whole segment from {before:?} visible: {:?}",
        cells_around(grid, first.unwrap_or(a)),
        before.map(|w| los(w, b))
    )
}

/// Parameter of the point of segment `a-b` closest to `p`.
fn param(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let d = b - a;
    ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0)
}

fn grid_segment_distance(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    p.distance(a.lerp(b, param(p, a, b)))
}

/// Whether `p` is in free space, up to the rounding of `f32` world
/// positions (a follower walking exactly along a wall's edge may be stored a
/// few ulps inside it: 1/4096 is four ulps at 512). It must stay below the
/// 1/1024 by which a fallback point on a double corner is moved into its
/// cell, or an agent standing there when that cell is blocked would count as
/// out of the wall.
fn near_free(nav: &NavGrid, p: Vec2) -> bool {
    const TOLERANCE: f32 = 1.0 / 4096.0;
    [
        (0.0, 0.0),
        (1.0, 1.0),
        (1.0, -1.0),
        (-1.0, 1.0),
        (-1.0, -1.0),
    ]
    .iter()
    .any(|&(dx, dy)| nav.is_free_at(p + Vec2::new(dx, dy) * TOLERANCE))
}

fn random_free_point(rng: &mut Rng, grid: &Grid) -> Vec2 {
    loop {
        let (x, y) = (
            rng.below(u64::from(grid.width())) as i64,
            rng.below(u64::from(grid.height())) as i64,
        );
        if grid.is_free_xy(x, y) {
            // World y is up: grid row y spans world [h - y - 1, h - y].
            let h = f64::from(grid.height());
            return Vec2::new(
                (x as f64 + rng.unit()) as f32,
                (h - y as f64 - rng.unit()) as f32,
            );
        }
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
    /// Agents whose cell was blocked under them: since which frame.
    walled: EntityHashMap<usize>,
    previous: EntityHashMap<Vec2>,
    /// Each agent's path and grid version at the end of the previous frame,
    /// for failure reports.
    last_paths: EntityHashMap<(NavPath, u64)>,
    /// Each agent's last few path and status changes, for failure reports.
    history: History,
    /// Every cell edit: frame, grid version after it, cell, freed.
    edits: Vec<(usize, u64, UVec2, bool)>,
    /// Whether `history` and `edits` are kept. The soak keeps neither: they
    /// grow with the run, and its memory check is about the plugin's.
    reports: bool,
    /// When the current frame started.
    clock: Instant,
    /// The goals new agents head for (a crowd's few), or none: a goal
    /// each.
    goals: Vec<Vec2>,
}

impl Game {
    fn new(map: &str, agents: usize, seed: u64, threads: Option<usize>) -> Game {
        let path = format!("{}/data/maps/{map}", env!("CARGO_MANIFEST_DIR"));
        let grid = Grid::from_movingai(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut app = App::new();
        app.add_plugins(AnyAnglePlugin {
            search_threads: threads,
            ..AnyAnglePlugin::default()
        })
        .insert_resource(NavGrid::new(grid, GridTransform::default()))
        .insert_resource(SteeringClock::fixed(1.0 / FPS))
        .init_resource::<Violations>()
        .init_resource::<Applied>()
        .init_resource::<WalkBacks>()
        .add_observer(|ready: On<PathReady>, mut applied: ResMut<Applied>| {
            applied.0.push(ready.entity);
        })
        .init_resource::<LastFailures>()
        .add_observer(
            |failed: On<bevy_anyangle::plugin::PathFailed>,
             settings: Res<PathfindingSettings>,
             mut log: ResMut<LastFailures>| {
                log.0.insert(
                    failed.entity,
                    format!(
                        "{:?} ({:?}) with {:?}",
                        failed.status, failed.reason, settings.fallback
                    ),
                );
            },
        )
        .add_systems(
            Update,
            check_applied_paths
                .after(AnyAngleSystems::Apply)
                .before(AnyAngleSystems::Steer),
        );
        app.finish();
        app.cleanup();
        let mut game = Game {
            app,
            rng: Rng::new(seed),
            agents: Vec::new(),
            walled: EntityHashMap::default(),
            previous: EntityHashMap::default(),
            last_paths: EntityHashMap::default(),
            history: EntityHashMap::default(),
            edits: Vec::new(),
            reports: true,
            clock: Instant::now(),
            goals: Vec::new(),
        };
        for _ in 0..agents {
            game.spawn();
        }
        game
    }

    fn nav(&self) -> &NavGrid {
        self.app.world().resource::<NavGrid>()
    }

    fn spawn(&mut self) {
        let grid = self.nav().grid().clone();
        let start = random_free_point(&mut self.rng, &grid);
        let goal = if self.goals.is_empty() {
            random_free_point(&mut self.rng, &grid)
        } else {
            *self.rng.pick(&self.goals)
        };
        let avoid = !self.goals.is_empty() && self.rng.chance(0.5);
        let mut agent = self.app.world_mut().spawn((
            NavPosition(start),
            PathRequest::to(goal),
            PathFollower {
                speed: 6.0,
                ..PathFollower::default()
            },
        ));
        // In crowds, half the agents steer with local avoidance.
        if avoid {
            agent.insert(LocalAvoidance);
        }
        let e = agent.id();
        self.agents.push(e);
    }

    fn position(&self, e: Entity) -> Vec2 {
        self.app.world().get::<NavPosition>(e).unwrap().0
    }

    /// Blocks or frees a cell near where some agent is heading; agents whose
    /// cell is blocked under them are noted.
    fn edit_near_an_agent(&mut self, frame: usize) {
        let e = *self.rng.pick(&self.agents);
        let path = self.app.world().get::<NavPath>(e).unwrap().clone();
        let around = path.next_waypoint().unwrap_or_else(|| self.position(e));
        let offset = Vec2::new(self.rng.range(-3, 3) as f32, self.rng.range(-3, 3) as f32);
        let Some(cell) = self.nav().cell_at(around + offset) else {
            return;
        };
        let free = self.rng.chance(0.35);
        self.app
            .world_mut()
            .resource_mut::<NavGrid>()
            .set_cell_free(cell, free)
            .unwrap();
        let version = self.nav().version();
        if self.reports {
            self.edits.push((frame, version, cell, free));
        }
        if !free {
            let nav = self.nav();
            let caught: Vec<Entity> = self
                .agents
                .iter()
                .copied()
                .filter(|&a| !nav.is_free_at(self.position(a)))
                .collect();
            for a in caught {
                self.walled.entry(a).or_insert(frame);
            }
        }
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

    /// After a frame: the searches dispatch shared in it are those the
    /// agents it sent imply. Agents share a search when at least 8 of them
    /// are sent in one frame towards one goal, planned by Anya or Polyanya
    /// (a shared search per 4,096 of them on search threads, per 512 on
    /// the main thread). So the agents sent this frame (that waited before
    /// it and no longer do) imply at least one for each goal 8 of them head
    /// for, and at most one for each goal 8 head for counting every agent
    /// that did not wait before the frame too (any of them may have been
    /// sent again). In the first frame, when no agent had been sent before,
    /// both counts are the same: every agent sent that may share a search
    /// was answered by a shared one. Returns the least count.
    fn shared_as_implied(&self, before: &Waiting, frame: usize, threads: Option<usize>) -> usize {
        let world = self.app.world();
        let max = if threads == Some(0) { 512 } else { 4096 };
        let exact = matches!(
            world.resource::<PathfindingSettings>().algorithm,
            Algorithm::Anya | Algorithm::Polyanya
        );
        let goal_of = |e: Entity| match world.get::<PathRequest>(e).unwrap().goal {
            bevy_anyangle::plugin::PathGoal::Point(p) => [p.x.to_bits(), p.y.to_bits()],
            bevy_anyangle::plugin::PathGoal::Entity(_) => unreachable!(),
        };
        // Per goal: agents sent this frame, and others that may have been.
        let mut goals: HashMap<[u32; 2], (usize, usize)> = HashMap::new();
        let mut sent = 0;
        for &e in &self.agents {
            let waited = before.agents.contains(&e);
            let waits = *world.get::<PathStatus>(e).unwrap() == PathStatus::Pending;
            let counts = goals.entry(goal_of(e)).or_default();
            if waited && !waits {
                counts.0 += 1;
                sent += 1;
            } else if !waited {
                counts.1 += 1;
            }
        }
        let groups = |n: usize| if n >= 8 { n.div_ceil(max) } else { 0 };
        let (least, most) = if exact {
            goals
                .values()
                .map(|&(n, others)| (groups(n), groups(n + others)))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        } else {
            (0, 0)
        };
        let d = world.resource::<PathfindingDiagnostics>();
        let shared = (d.shared_searches - before.diagnostics.shared_searches) as usize;
        assert!(
            (least..=most).contains(&shared),
            "frame {frame}: {shared} shared searches, where the {sent} agents sent imply {least} to {most}; {d:?}"
        );
        least
    }

    /// One frame: the game's own changes, then the app's update, then the
    /// per-frame invariants.
    fn frame(&mut self, frame: usize, edits: usize) {
        for _ in 0..edits {
            self.edit_near_an_agent(frame);
        }
        // Frames paced as a 60 fps game paces them.
        let deadline = self.clock + Duration::from_secs_f32(1.0 / FPS);
        self.app.update();
        let violations = std::mem::take(&mut self.app.world_mut().resource_mut::<Violations>().0);
        if let Some(wait) = deadline.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        // A frame that ran late starts the next one now.
        self.clock = deadline.max(Instant::now());
        assert!(violations.is_empty(), "frame {frame}: {violations:#?}");
        let nav = self.nav().clone();
        for &e in &self.agents {
            let p = self.position(e);
            let from = self.previous.insert(e, p).unwrap_or(p);
            if let Some(&since) = self.walled.get(&e) {
                if near_free(&nav, p) {
                    self.walled.remove(&e);
                } else {
                    let w = self.app.world();
                    assert!(
                        frame - since <= 120,
                        "frame {frame}: {e} is still in a wall at {p}, blocked under it at frame {since}: {:?} {:?} {:?} replanning {}",
                        w.resource::<PathfindingDiagnostics>(),
                        w.get::<PathStatus>(e),
                        w.get::<NavPath>(e),
                        w.get::<Replanning>(e).is_some()
                    );
                }
                continue;
            }
            assert!(
                near_free(&nav, p),
                "frame {frame}: {e} stands in a blocked cell at {p}"
            );
            let path = self.app.world().get::<NavPath>(e).unwrap();
            let walk_back = self.app.world().resource::<WalkBacks>().0.get(&e).copied();
            if let Err(why) = step_is_visible(&nav, from, p, path, walk_back) {
                let w = self.app.world();
                panic!(
                    "frame {frame}: {e} stepped through a wall from {from} to {p}: {why}; {:?}, replanning {}, next {} of {:?} version {} (grid {}); a frame before: {:?}",
                    w.get::<PathStatus>(e),
                    w.get::<Replanning>(e).is_some(),
                    path.next,
                    path.grid_waypoints,
                    path.grid_version,
                    nav.version(),
                    self.last_paths.get(&e).map(|(p, v)| (
                        p.next,
                        &p.grid_waypoints,
                        p.grid_version,
                        v
                    ))
                );
            }
            if self.reports {
                note(
                    &mut self.history,
                    self.app.world(),
                    frame,
                    e,
                    p.as_dvec2(),
                    16,
                );
            }
            self.last_paths.insert(e, (path.clone(), nav.version()));
            if let Some(next) = path.grid_waypoints.get(path.next)
                && !is_way_out(path)
            {
                // On its path (up to f32 rounding), the segment it walks
                // is what counts.
                let here = nav.to_grid(p);
                // Walking back to the path's start: on the segment from where
                // the path was applied.
                let origin = self.app.world().resource::<WalkBacks>().0.get(&e).copied();
                let on_segment = (path.next > 0 || origin.is_some()) && {
                    let before = if path.next > 0 {
                        path.grid_waypoints[path.next - 1]
                    } else {
                        origin.unwrap_or(*next)
                    };
                    let los = |a, b| bevy_anyangle::los::line_of_sight(nav.grid(), a, b);
                    // The part ahead, between lattice points.
                    let t = param(here, before, *next);
                    grid_segment_distance(here, before, *next) < 1e-3
                        && (los(before, *next)
                            || los(before.lerp(*next, t), *next)
                            || part_visible(nav.grid(), before, *next, t, 1.0))
                };
                assert!(
                    on_segment || bevy_anyangle::los::line_of_sight(nav.grid(), here, *next),
                    "frame {frame}: {e} at {p} (grid {here}) heads for {next}, behind a wall; {:?} replanning {} next {} of {:?}, version {} of {}; {}{}",
                    self.app.world().get::<PathStatus>(e),
                    self.app.world().get::<Replanning>(e).is_some(),
                    path.next,
                    path.grid_waypoints,
                    path.grid_version,
                    nav.version(),
                    blocked_at(
                        nav.grid(),
                        here,
                        *next,
                        path.grid_waypoints.get(path.next.wrapping_sub(1)).copied()
                    ),
                    story(&self.history, &self.edits, e, path),
                );
            }
        }
    }
}

/// An agent's recent history and the edits near the segment it heads for
/// since its path was applied, for failure reports.
fn story(
    history: &History,
    edits: &[(usize, u64, UVec2, bool)],
    e: Entity,
    path: &NavPath,
) -> String {
    use std::fmt::Write;
    let mut out = String::from("\nhistory:\n");
    for (frame, p, s) in history.get(&e).into_iter().flatten() {
        let _ = writeln!(out, "  frame {frame} at {p}: {s}");
    }
    let next = path.next.min(path.grid_waypoints.len().saturating_sub(1));
    let a = path.grid_waypoints[next.saturating_sub(1)];
    let b = path.grid_waypoints[next];
    let (lo, hi) = (a.min(b) - 2.0, a.max(b) + 2.0);
    out += "edits near the segment ahead (from 40 versions before its version):\n";
    for &(frame, version, cell, free) in edits {
        let c = cell.as_dvec2();
        if version + 40 > path.grid_version && c.cmpge(lo).all() && c.cmple(hi).all() {
            let _ = writeln!(
                out,
                "  frame {frame} version {version} cell {cell} free {free}"
            );
        }
    }
    out
}

/// Why a fallback path's end and its goal are in one region on the final
/// grid: the cells and regions at both, the path between them, and the
/// edits near that path since the fallback path's version.
fn connection_report(
    grid: &Grid,
    edits: &[(usize, u64, UVec2, bool)],
    path: &NavPath,
    inside: DVec2,
    goal: DVec2,
    truth: Option<bevy_anyangle::search::Path>,
) -> String {
    use std::fmt::Write;
    let region = |p: DVec2| grid.region(p.x.floor() as i64, p.y.floor() as i64);
    let mut out = format!(
        "\nfinal grid: cells around {inside} {} region {:?}; around the goal {goal} {} region {:?}\n",
        cells_around(grid, inside),
        region(inside),
        cells_around(grid, goal),
        region(goal),
    );
    let Some(truth) = truth else {
        return out;
    };
    let _ = writeln!(out, "a path on the final grid: {:?}", truth.waypoints);
    out += "edits within two cells of it since 40 versions before the fallback path's:\n";
    for &(frame, version, cell, free) in edits {
        let c = cell.as_dvec2() + 0.5;
        let near = truth.waypoints.windows(2).any(|w| {
            let (lo, hi) = (w[0].min(w[1]) - 2.0, w[0].max(w[1]) + 2.0);
            c.cmpge(lo).all() && c.cmple(hi).all()
        });
        if near && version + 40 > path.grid_version {
            let _ = writeln!(
                out,
                "  frame {frame} version {version} cell {cell} free {free}"
            );
        }
    }
    out
}

/// What a game run saw, for the soak's report.
#[derive(Debug)]
struct Figures {
    /// Frames run with edits, then until every agent settled.
    frames: usize,
    settled_after: usize,
    diagnostics: PathfindingDiagnostics,
    /// Resident memory after warm-up and at the end, in bytes (Linux only).
    memory: Option<(u64, u64)>,
    wall: Duration,
    /// In crowds, the shared searches that the agents dispatch sent in the
    /// frames with edits imply (see [`Game::shared_as_implied`]), in all.
    implied_shared: usize,
}

/// The resident memory of this process in bytes, where the system says.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Runtime settings switched during a run, in turn (`settings` cycles
/// through them every 500 frames; the first is the default).
fn settings_variant(k: usize) -> PathfindingSettings {
    let base = PathfindingSettings::default();
    match k % 4 {
        0 => base,
        // A budget above what den520d's and lak303d's queries need (an
        // agent whose way out of a wall runs out of budget stays there).
        1 => PathfindingSettings {
            node_budget: Some(200_000),
            heuristic_weight: 1.2,
            ..base
        },
        2 => PathfindingSettings {
            replan_distance: 4.0,
            max_searches_in_flight: Some(4),
            mesh_building: MeshBuilding::OnDemand,
            ..base
        },
        _ => PathfindingSettings {
            fallback: FallbackPolicy::Fail,
            replan_distance: 1.0,
            ..base
        },
    }
}

fn run_game(map: &str, agents: usize, frames: usize, edits: usize, seed: u64) -> Figures {
    run_game_with(map, agents, frames, edits, seed, Run::default())
}

/// How a game runs besides its map, size and seed.
#[derive(Clone, Copy)]
struct Run {
    /// Also cycle through [`settings_variant`]s.
    switch_settings: bool,
    /// Keep what failure reports show (see [`Game::reports`]).
    reports: bool,
    /// The plugin's search threads (`Some(0)`: searches on the main
    /// thread).
    threads: Option<usize>,
    /// Agents head for one of three goals, which move now and then (each
    /// time, half the agents are sent to the new ones): crowds that share
    /// searches; half of them carry `LocalAvoidance` (as points, they walk
    /// as plain followers: the invariants hold for them too).
    crowd: bool,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            switch_settings: false,
            reports: true,
            threads: None,
            crowd: false,
        }
    }
}

fn run_game_with(
    map: &str,
    agents: usize,
    frames: usize,
    edits: usize,
    seed: u64,
    run: Run,
) -> Figures {
    let Run {
        switch_settings,
        reports,
        threads,
        crowd,
    } = run;
    let began = Instant::now();
    let mut game = Game::new(map, if crowd { 0 } else { agents }, seed, threads);
    game.reports = reports;
    if crowd {
        game.goals = crowd_goals(&mut game);
        for _ in 0..agents {
            game.spawn();
        }
    }
    let warm_up = frames / 5;
    let mut memory_after_warm_up = None;
    // Shared searches the agents sent implied, in all.
    let mut implied_shared = 0;
    for frame in 0..frames {
        if frame == warm_up {
            memory_after_warm_up = resident_bytes();
        }
        if switch_settings && frame % 500 == 250 {
            let algorithm = game.app.world().resource::<PathfindingSettings>().algorithm;
            *game.app.world_mut().resource_mut::<PathfindingSettings>() = PathfindingSettings {
                algorithm,
                ..settings_variant(frame / 500 + 1)
            };
        }
        // Results held back now and then: they arrive late, after agents
        // moved on.
        let hold = frame % 90 >= 70;
        game.app
            .world_mut()
            .resource_mut::<PathfindingSettings>()
            .paused = hold;
        if frame % 200 == 100 {
            // Anya, Lazy Theta*, Polyanya (on meshes the search threads keep
            // in step with the edits), in turn.
            let mut settings = game.app.world_mut().resource_mut::<PathfindingSettings>();
            settings.algorithm = match settings.algorithm {
                Algorithm::Anya => Algorithm::LazyTheta,
                Algorithm::LazyTheta => Algorithm::Polyanya,
                _ => Algorithm::Anya,
            };
        }
        // The crowd's goals move; half the agents follow them at once.
        if crowd && frame % 120 == 60 {
            game.goals = crowd_goals(&mut game);
            for i in 0..game.agents.len() {
                if game.rng.chance(0.5) {
                    let goal = *game.rng.pick(&game.goals);
                    let e = game.agents[i];
                    game.app.world_mut().get_mut::<PathRequest>(e).unwrap().goal =
                        bevy_anyangle::plugin::PathGoal::Point(goal);
                }
            }
        }
        // Despawn a few agents, preferring ones mid-search, and spawn others.
        if frame % 10 == 5 {
            for _ in 0..5 {
                let busy: Vec<usize> = (0..game.agents.len())
                    .filter(|&i| {
                        let e = game.agents[i];
                        let w = game.app.world();
                        w.get::<PathStatus>(e).unwrap().is_busy()
                            || w.get::<Replanning>(e).is_some()
                    })
                    .collect();
                let i = if busy.is_empty() {
                    game.rng.below(game.agents.len() as u64) as usize
                } else {
                    *game.rng.pick(&busy)
                };
                let e = game.agents.swap_remove(i);
                game.walled.remove(&e);
                game.previous.remove(&e);
                game.last_paths.remove(&e);
                game.history.remove(&e);
                let world = game.app.world_mut();
                world.resource_mut::<WalkBacks>().0.remove(&e);
                world.resource_mut::<LastFailures>().0.remove(&e);
                game.app.world_mut().despawn(e);
                game.spawn();
            }
        }
        let waiting = game.waiting();
        game.frame(frame, edits);
        if crowd {
            implied_shared += game.shared_as_implied(&waiting, frame, threads);
        }
    }
    // Edits stop, results flow: everyone settles within a bounded time.
    if switch_settings {
        let algorithm = game.app.world().resource::<PathfindingSettings>().algorithm;
        *game.app.world_mut().resource_mut::<PathfindingSettings>() = PathfindingSettings {
            algorithm,
            ..PathfindingSettings::default()
        };
    }
    game.app
        .world_mut()
        .resource_mut::<PathfindingSettings>()
        .paused = false;
    let mut settled = None;
    for frame in frames..frames + 1200 {
        game.frame(frame, 0);
        let d = *game.app.world().resource::<PathfindingDiagnostics>();
        let world = game.app.world();
        let quiet = d.in_flight == 0
            && d.queued == 0
            && game.agents.iter().all(|&e| {
                !world.get::<PathStatus>(e).unwrap().is_busy()
                    && world.get::<Replanning>(e).is_none()
            });
        if quiet {
            settled = Some(frame);
            break;
        }
    }
    let Some(settled) = settled else {
        panic!("agents did not settle after edits stopped");
    };
    let nav = game.nav().clone();
    let grid = nav.grid();
    for &e in &game.agents {
        let world = game.app.world();
        let status = world.get::<PathStatus>(e).unwrap().clone();
        let path = world.get::<NavPath>(e).unwrap();
        let goal = match world.get::<PathRequest>(e).unwrap().goal {
            bevy_anyangle::plugin::PathGoal::Point(p) => p,
            bevy_anyangle::plugin::PathGoal::Entity(_) => unreachable!(),
        };
        let here = nav.to_grid(game.position(e));
        let goal_grid = nav.to_grid(goal);
        match status {
            // (Each frame checked the path as it was walked.)
            PathStatus::Ready => assert_eq!(path.end(), Some(goal), "{e}: {path:?}"),
            // The goal must be out of reach from the region the path ends
            // in, as the planner sees it on the final grid. That region is
            // read on the last segment just before its end, in the cell the
            // path reaches its end through: the end itself (and an agent
            // that arrived within its arrive radius) may sit on a vertex
            // touching the goal's region diagonally, a double corner that
            // belongs to its south-east cell. Cells the path crossed before
            // may have been blocked since (the agent has passed them, so no
            // replan is due), so the read stays next to the end; only if
            // that cell was blocked too is the end itself read.
            PathStatus::Fallback => {
                let w = &path.grid_waypoints;
                let inside = match w.len() {
                    0 => here,
                    1 => w[0],
                    n => {
                        let (a, b) = (w[n - 2], w[n - 1]);
                        let before = b + (a - b).normalize_or_zero() * 1e-3;
                        if grid.is_point_traversable(before) {
                            before
                        } else {
                            b
                        }
                    }
                };
                let truth = plan(
                    grid,
                    inside,
                    goal_grid,
                    &PlanOptions {
                        fallback: FallbackPolicy::Fail,
                        ..PlanOptions::with_algorithm(Algorithm::Anya)
                    },
                );
                if !matches!(truth, Err(PlanError::Unreachable { .. })) {
                    let said = format!("{:?}", truth.as_ref().map(|p| (p.kind, p.length)));
                    panic!(
                        "{e}: a fallback path to a reachable goal {goal_grid}: from {inside} the planner says {said}{}{}",
                        story(&game.history, &[], e, path),
                        connection_report(grid, &game.edits, path, inside, goal_grid, truth.ok()),
                    );
                }
            }
            other => panic!(
                "{e} ({here}): {other:?} after the game settled; last failure {:?}",
                world.resource::<LastFailures>().0.get(&e)
            ),
        }
    }
    Figures {
        frames,
        settled_after: settled - frames,
        diagnostics: *game.app.world().resource::<PathfindingDiagnostics>(),
        memory: memory_after_warm_up.zip(resident_bytes()),
        wall: began.elapsed(),
        implied_shared,
    }
}

#[test]
fn two_thousand_agents_with_edits_every_frame_late_results_and_despawns_stay_in_free_space() {
    run_game("den520d.map", 2000, 600, 1, 0x5EED_0001);
}

#[test]
fn agents_on_a_maze_with_edits_every_frame_stay_in_free_space() {
    run_game("maze512-1-0.map", 300, 400, 3, 0x5EED_0002);
}

/// The soak's short version: settings switched mid-run as well.
#[test]
fn settings_switched_mid_run_keep_every_agent_in_free_space() {
    let run = Run {
        switch_settings: true,
        ..Run::default()
    };
    run_game_with("lak303d.map", 1000, 1100, 2, 0x5EED_0003, run);
}

/// Three goals for a crowd.
fn crowd_goals(game: &mut Game) -> Vec<Vec2> {
    let grid = game.nav().grid().clone();
    (0..3)
        .map(|_| random_free_point(&mut game.rng, &grid))
        .collect()
}

/// A crowd's game (see [`Run::crowd`]) with `threads`: the same invariants
/// hold, and every frame's shared searches are those the agents it sent
/// imply. The agents head for three goals from the start: the agents that
/// head for each goal first are sent together (dispatch takes those
/// further down the line that head for a goal it sends), so their first
/// searches alone imply at least one shared search per goal.
fn crowd_game(threads: Option<usize>, agents: usize, frames: usize, seed: u64) {
    let run = Run {
        crowd: true,
        threads,
        ..Run::default()
    };
    let figures = run_game_with("den520d.map", agents, frames, 1, seed, run);
    assert!(
        figures.implied_shared >= 3,
        "{} shared searches implied; {:?}",
        figures.implied_shared,
        figures.diagnostics
    );
}

/// Crowds: agents head for a few goals (which move), so that dispatch sends
/// many of them at once towards one point, and shared searches answer them.
#[test]
fn crowds_that_share_searches_under_edits_and_despawns_stay_in_free_space() {
    crowd_game(None, 1500, 600, 0x5EED_0006);
}

/// Crowds with searches on the main thread: group searches run whole in a
/// slice, their mesh built in slices first.
#[test]
fn crowds_that_share_searches_on_the_main_thread_stay_in_free_space() {
    crowd_game(Some(0), 800, 500, 0x5EED_0007);
}

/// The game of the first test with searches on the main thread, in slices
/// within the frame budget (as in the browser): the same invariants hold.
#[test]
fn agents_with_searches_on_the_main_thread_and_edits_every_frame_stay_in_free_space() {
    let run = Run {
        threads: Some(0),
        ..Run::default()
    };
    let figures = run_game_with("den520d.map", 1000, 600, 1, 0x5EED_0004, run);
    assert_eq!(figures.diagnostics.search_threads, 0);
}

/// The maze, whose searches are long, on the main thread: searches paused
/// at the end of a frame go on in the next, are cancelled while paused, and
/// the invariants hold.
#[test]
fn agents_on_a_maze_with_searches_on_the_main_thread_stay_in_free_space() {
    let run = Run {
        threads: Some(0),
        ..Run::default()
    };
    run_game_with("maze512-1-0.map", 300, 400, 3, 0x5EED_0005, run);
}

/// The long soak: 5,000 agents, edits every frame for 10,000 frames (close
/// to three minutes at 60 fps), agents despawned and spawned, algorithm and
/// settings switched, results held back. Memory must stay flat after
/// warm-up. Run it with `cargo test --test game -- --ignored soak
/// --nocapture` (the test profile is optimised; `--release` works too);
/// `docs/robustness.md` has its figures.
#[test]
#[ignore = "minutes long: cargo test --test game -- --ignored soak"]
fn soak() {
    let run = Run {
        switch_settings: true,
        reports: false,
        threads: None,
        crowd: false,
    };
    let figures = run_game_with("den520d.map", 5000, 10_000, 2, 0x5EED_50AC, run);
    let d = figures.diagnostics;
    println!(
        "soak: {} frames with edits, settled {} frames later, {:.0} s; memory after warm-up and at the end: {:?} MiB; {d:?}",
        figures.frames,
        figures.settled_after,
        figures.wall.as_secs_f64(),
        figures.memory.map(|(a, b)| (a >> 20, b >> 20)),
    );
    assert_eq!(d.in_flight, 0, "{d:?}");
    if let Some((warm, end)) = figures.memory {
        // Flat: no more than a tenth (plus allocator slack) above the
        // level reached after warm-up.
        assert!(
            end <= warm + warm / 10 + (8 << 20),
            "memory grew from {} MiB after warm-up to {} MiB",
            warm >> 20,
            end >> 20
        );
    }
}
