//! Headless tests of the debug drawing (feature `debug-gizmos`): the plugin
//! runs with real agents and searches, no renderer, and the lines it drew
//! are read back from Bevy's gizmo buffers.

use std::any::TypeId;
use std::time::Duration;

use bevy_anyangle::plugin::debug::{
    AnyAngleDebugPlugin, DrawClearance, DrawNavGizmos, LastSearch, NavGizmos, TraceSearch,
};
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GoalArea, GridTransform, LinkEnd, NavArea, NavGrid, NavLink, NavPath,
    NavPosition, OnArea, PathReady, PathRequest, PathStatus, PathfindingDiagnostics,
    PathfindingSettings, PlanReason, Replanning, WorldPlane,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::{AssetPlugin, Assets};
use bevy_color::{Alpha, Color, LinearRgba};
use bevy_ecs::prelude::*;
use bevy_gizmos::config::GizmoConfigStore;
use bevy_gizmos::{GizmoAsset, GizmoHandles, GizmoPlugin};
use bevy_math::{Vec2, Vec3};

/// A 10 x 6 grid with a 2 x 2 block in the middle: world x 4..6, y 2..4
/// (cells of size 1, origin at the bottom-left corner).
const PICTURE: &str = "..........
                       ..........
                       ....##....
                       ....##....
                       ..........
                       ..........";

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin::default(),
        GizmoPlugin,
        AnyAnglePlugin::default(),
        AnyAngleDebugPlugin,
    ))
    .insert_resource(NavGrid::from_ascii(PICTURE, GridTransform::default()).unwrap())
    .init_resource::<Replans>()
    .add_observer(|ready: On<PathReady>, mut log: ResMut<Replans>| {
        if ready.reason != PlanReason::NewRequest {
            log.0.push(ready.entity);
        }
    });
    app.finish();
    app.cleanup();
    app
}

/// Agents that got a new plan for another reason than a new request.
#[derive(Resource, Default)]
struct Replans(Vec<Entity>);

fn config(app: &mut App) -> Mut<'_, NavGizmos> {
    let store = app.world_mut().resource_mut::<GizmoConfigStore>();
    Mut::map_unchanged(store, |s| s.config_mut::<NavGizmos>().1)
}

/// Updates until no agent waits for a search.
fn settle(app: &mut App) {
    for _ in 0..10_000 {
        app.update();
        let world = app.world_mut();
        let busy = world
            .query::<&PathStatus>()
            .iter(world)
            .any(PathStatus::is_busy)
            || world.query::<&Replanning>().iter(world).next().is_some();
        let d = world.resource::<PathfindingDiagnostics>();
        if !busy && d.in_flight == 0 && d.queued == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the agents did not settle");
}

/// The line segments drawn in the last frame, with their colours (from both
/// line lists and line strips).
fn drawn(app: &App) -> Vec<(Vec3, Vec3, LinearRgba)> {
    let world = app.world();
    let Some(Some(handle)) = world
        .resource::<GizmoHandles>()
        .handles()
        .get(&TypeId::of::<NavGizmos>())
    else {
        return Vec::new();
    };
    let buffer = world
        .resource::<Assets<GizmoAsset>>()
        .get(handle)
        .expect("the gizmo asset exists")
        .buffer();
    let mut out: Vec<_> = buffer
        .list_positions
        .chunks_exact(2)
        .zip(buffer.list_colors.chunks_exact(2))
        .map(|(p, c)| (p[0], p[1], c[0]))
        .collect();
    let strip = &buffer.strip_positions;
    for i in 1..strip.len() {
        if strip[i - 1].is_finite() && strip[i].is_finite() {
            out.push((strip[i - 1], strip[i], buffer.strip_colors[i]));
        }
    }
    out
}

fn count(lines: &[(Vec3, Vec3, LinearRgba)], color: Color) -> usize {
    let c = LinearRgba::from(color);
    lines.iter().filter(|l| l.2 == c).count()
}

/// Like [`count`], whatever the alpha (edits fade out).
fn count_faded(lines: &[(Vec3, Vec3, LinearRgba)], color: Color) -> usize {
    let c = LinearRgba::from(color).with_alpha(0.0);
    lines.iter().filter(|l| l.2.with_alpha(0.0) == c).count()
}

fn has_segment(lines: &[(Vec3, Vec3, LinearRgba)], a: Vec2, b: Vec2, color: Color) -> bool {
    let c = LinearRgba::from(color);
    let (a, b) = (a.extend(0.0), b.extend(0.0));
    lines
        .iter()
        .any(|l| l.2 == c && ((l.0 == a && l.1 == b) || (l.0 == b && l.1 == a)))
}

struct Agents {
    anya: Entity,
    lazy: Entity,
    fallback: Entity,
    plain: Entity,
}

fn spawn_agents(app: &mut App) -> Agents {
    let world = app.world_mut();
    let anya = world
        .spawn((
            NavPosition(Vec2::new(0.5, 3.0)),
            PathRequest::to(Vec2::new(9.5, 3.0)),
            TraceSearch,
        ))
        .id();
    let lazy = world
        .spawn((
            NavPosition(Vec2::new(0.5, 2.5)),
            PathRequest::to(Vec2::new(9.5, 3.5)).with_algorithm(Algorithm::LazyTheta),
            TraceSearch,
        ))
        .id();
    // The goal is the middle of the block: the path ends beside it.
    let fallback = world
        .spawn((
            NavPosition(Vec2::new(1.5, 0.5)),
            PathRequest::to(Vec2::new(5.0, 3.0)),
        ))
        .id();
    let plain = world
        .spawn((
            NavPosition(Vec2::new(9.5, 0.5)),
            PathRequest::to(Vec2::new(2.5, 5.5)),
        ))
        .id();
    Agents {
        anya,
        lazy,
        fallback,
        plain,
    }
}

#[test]
fn walls_paths_goals_and_traces_are_drawn() {
    let mut app = app();
    let agents = spawn_agents(&mut app);
    settle(&mut app);
    app.update();
    let cfg = config(&mut app).clone();
    let lines = drawn(&app);

    // The block's outline (four edges) and the grid's border (four more).
    let blocked = cfg.blocked.unwrap();
    assert_eq!(count(&lines, blocked), 8);
    for (a, b) in [
        ((4.0, 4.0), (6.0, 4.0)),
        ((4.0, 2.0), (6.0, 2.0)),
        ((4.0, 2.0), (4.0, 4.0)),
        ((6.0, 2.0), (6.0, 4.0)),
        ((0.0, 6.0), (10.0, 6.0)),
        ((0.0, 0.0), (0.0, 6.0)),
    ] {
        assert!(
            has_segment(&lines, Vec2::from(a), Vec2::from(b), blocked),
            "{a:?} - {b:?}"
        );
    }

    // Every remaining segment of each path, in its planner's colour.
    let world = app.world();
    for (agent, color) in [
        (agents.anya, cfg.anya),
        (agents.lazy, cfg.lazy_theta),
        (agents.plain, cfg.anya),
    ] {
        let path = world.get::<NavPath>(agent).unwrap();
        assert!(!path.is_empty());
        for w in path.remaining().windows(2) {
            assert!(has_segment(&lines, w[0], w[1], color), "{agent}: {w:?}");
        }
        let here = world.get::<NavPosition>(agent).unwrap().0;
        let next = path.next_waypoint().unwrap();
        assert!(
            has_segment(&lines, here, next, color),
            "{agent}: to the next waypoint"
        );
    }
    assert!(
        world.get::<NavPath>(agents.anya).unwrap().waypoints.len() >= 3,
        "around the block"
    );

    // The fallback: its path, a cross at the unreachable goal, a square at
    // the path's end, and dashes between them.
    assert_eq!(
        *world.get::<PathStatus>(agents.fallback).unwrap(),
        PathStatus::Fallback
    );
    let r = cfg.marker_radius;
    let goal = Vec2::new(5.0, 3.0);
    assert!(has_segment(
        &lines,
        goal - Vec2::splat(r),
        goal + Vec2::splat(r),
        cfg.fallback
    ));
    assert!(
        count(&lines, cfg.fallback) > 2 + 4,
        "cross, square and dashes"
    );

    // Traces: only for marked agents, drawn in full.
    assert!(world.get::<LastSearch>(agents.plain).is_none());
    assert!(world.get::<LastSearch>(agents.fallback).is_none());
    let anya = &world.get::<LastSearch>(agents.anya).unwrap().trace;
    let lazy = &world.get::<LastSearch>(agents.lazy).unwrap().trace;
    assert_eq!(anya.algorithm, Some(Algorithm::Anya));
    assert!(!anya.intervals.is_empty() && anya.points.is_empty());
    assert_eq!(lazy.algorithm, Some(Algorithm::LazyTheta));
    assert!(!lazy.points.is_empty() && lazy.intervals.is_empty());
    // An interval is one line; a point is a small cross of two.
    assert_eq!(
        count(&lines, cfg.trace),
        anya.intervals.len() + 2 * lazy.points.len()
    );
    // An interval has two links to its root; a point one to its parent.
    assert_eq!(
        count(&lines, cfg.trace_links),
        2 * anya.intervals.len() + lazy.points.len()
    );
    assert_eq!(count(&lines, cfg.replanned), 0, "nobody replanned");
}

#[test]
fn edits_and_the_agents_they_replan_are_highlighted_then_fade() {
    let mut app = app();
    let agents = spawn_agents(&mut app);
    settle(&mut app);
    // Block the cell in the middle of the Anya agent's first segment.
    let (cell, before) = {
        let world = app.world();
        let nav = world.resource::<NavGrid>();
        let path = world.get::<NavPath>(agents.anya).unwrap();
        let mid = (path.waypoints[0] + path.waypoints[1]) / 2.0;
        (nav.cell_at(mid).unwrap(), path.waypoints.clone())
    };
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(cell, false)
        .unwrap();
    app.update();
    let cfg = config(&mut app).clone();
    let lines = drawn(&app);
    // The edited cell's outline (four sides), in the colour of blocked edits.
    assert_eq!(count_faded(&lines, cfg.edit_blocked), 4);
    let corner = app.world().resource::<NavGrid>().to_world(cell.as_dvec2());
    let (a, b) = (
        corner.extend(0.0),
        (corner + Vec2::new(1.0, 0.0)).extend(0.0),
    );
    assert!(
        lines
            .iter()
            .any(|l| (l.0, l.1) == (a, b) || (l.0, l.1) == (b, a))
    );

    // The agent replans; its path shows in the replanned colour.
    settle(&mut app);
    app.update();
    assert!(app.world().resource::<Replans>().0.contains(&agents.anya));
    let after = app
        .world()
        .get::<NavPath>(agents.anya)
        .unwrap()
        .waypoints
        .clone();
    assert_ne!(before, after);
    let lines = drawn(&app);
    assert!(count(&lines, cfg.replanned) >= after.len() - 1);
    for w in after.windows(2) {
        assert!(has_segment(&lines, w[0], w[1], cfg.replanned), "{w:?}");
    }

    // Both fade out once `recent` has passed.
    config(&mut app).recent = 0.05;
    std::thread::sleep(Duration::from_millis(200));
    app.update();
    let lines = drawn(&app);
    assert_eq!(count_faded(&lines, cfg.edit_blocked), 0);
    assert_eq!(count(&lines, cfg.replanned), 0);
    for w in after.windows(2) {
        assert!(has_segment(&lines, w[0], w[1], cfg.anya), "{w:?}");
    }
    // The new wall is outlined with the others.
    assert!(count(&lines, cfg.blocked.unwrap()) > 8);
}

#[test]
fn only_marked_agents_are_drawn_when_asked_and_nothing_when_disabled() {
    let mut app = app();
    let agents = spawn_agents(&mut app);
    settle(&mut app);
    config(&mut app).all_agents = false;
    app.update();
    let cfg = config(&mut app).clone();
    let lines = drawn(&app);
    for color in [cfg.anya, cfg.lazy_theta, cfg.fallback] {
        assert_eq!(count(&lines, color), 0);
    }
    assert_eq!(
        count(&lines, cfg.blocked.unwrap()),
        8,
        "walls are still drawn"
    );

    app.world_mut()
        .entity_mut(agents.lazy)
        .insert(DrawNavGizmos);
    app.update();
    let lines = drawn(&app);
    assert!(count(&lines, cfg.lazy_theta) > 0);
    assert_eq!(count(&lines, cfg.anya), 0);

    // No walls without a colour for them.
    config(&mut app).blocked = None;
    app.update();
    assert_eq!(count(&drawn(&app), cfg.blocked.unwrap()), 0);

    app.world_mut()
        .resource_mut::<GizmoConfigStore>()
        .config_mut::<NavGizmos>()
        .0
        .enabled = false;
    app.update();
    assert!(drawn(&app).is_empty());
}

#[test]
fn the_cells_an_agents_radius_keeps_it_off_its_eroded_grid_are_outlined() {
    let mut app = app();
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .radius_meshes = false;
    let wide = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(2.5, 3.0)),
            PathRequest::to(Vec2::new(7.5, 3.0))
                .with_radius(0.5)
                .with_algorithm(Algorithm::LazyTheta),
        ))
        .id();
    settle(&mut app);
    app.update();
    let color = config(&mut app).clearance;
    assert_eq!(count(&drawn(&app), color), 0, "no agent is marked");
    app.world_mut().entity_mut(wide).insert(DrawClearance);
    app.update();
    let lines = drawn(&app);
    // Radius 0.5 keeps the agent off the border cells and the cells around
    // the block: row 0 whole (world y 5..6), and in row 1 (world y 4..5)
    // cells 0, 3..7 and 9.
    assert!(has_segment(
        &lines,
        Vec2::new(0.0, 6.0),
        Vec2::new(10.0, 6.0),
        color
    ));
    assert!(has_segment(
        &lines,
        Vec2::new(3.0, 5.0),
        Vec2::new(7.0, 5.0),
        color
    ));
    assert!(has_segment(
        &lines,
        Vec2::new(3.0, 4.0),
        Vec2::new(7.0, 4.0),
        color
    ));
    assert!(!has_segment(
        &lines,
        Vec2::new(1.0, 5.0),
        Vec2::new(3.0, 5.0),
        color
    ));
    // Those cells cut the grid in two for this agent: its goal beyond the
    // block is out of reach, and its fallback path stops where its side
    // ends, at x = 3.
    let path = app.world().get::<NavPath>(wide).unwrap();
    assert!(path.fallback, "{path:?}");
    assert_eq!(path.end(), Some(Vec2::new(3.0, 3.0)), "{path:?}");
}

#[test]
fn the_walls_grown_by_the_radius_of_an_agent_on_a_mesh_are_outlined() {
    let mut app = app();
    let wide = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(2.5, 3.0)),
            PathRequest::to(Vec2::new(7.5, 3.0)).with_radius(0.5),
            DrawClearance,
        ))
        .id();
    settle(&mut app);
    app.update();
    // On the mesh for its radius it fits past the block (2 rows free on
    // either side): no fallback.
    let path = app.world().get::<NavPath>(wide).unwrap();
    assert!(!path.fallback, "{path:?}");
    let color = config(&mut app).clearance;
    let lines = drawn(&app);
    let outline: Vec<_> = lines
        .iter()
        .filter(|l| l.2 == LinearRgba::from(color))
        .collect();
    // The border and the block, grown by half a cell (an octagon around
    // the disc: corners at most 0.042 farther).
    let grid = app.world().resource::<NavGrid>().grid().clone();
    let wall_distance = |p: Vec3| {
        let q = DVec2::new(f64::from(p.x), 6.0 - f64::from(p.y));
        let mut d = q.x.min(10.0 - q.x).min(q.y).min(6.0 - q.y);
        for y in 0..6 {
            for x in 0..10 {
                if !grid.is_free_xy(x, y) {
                    let dx = (x as f64 - q.x).max(q.x - (x + 1) as f64).max(0.0);
                    let dy = (y as f64 - q.y).max(q.y - (y + 1) as f64).max(0.0);
                    d = d.min(dx.hypot(dy));
                }
            }
        }
        d
    };
    let length: f32 = outline.iter().map(|l| l.0.distance(l.1)).sum();
    // The border's outline alone is 2 x (9 + 5) long.
    assert!(length > 28.0 - 0.1, "{length}");
    for l in &outline {
        for p in [l.0, l.1] {
            let d = wall_distance(p);
            assert!(
                (0.5 - 1e-4..=0.5 + 0.05).contains(&d),
                "{p} is {d} from a wall"
            );
        }
    }
}

/// Two 8 x 3 areas side by side (world x 0..8 and 20..28), each with a wall
/// across its middle row but for a gap at each end, on `plane`, the second
/// 3 units above the first; no `NavGrid` resource.
fn floors_app(plane: WorldPlane) -> (App, Entity, Entity) {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin::default(),
        GizmoPlugin,
        AnyAnglePlugin::default(),
        AnyAngleDebugPlugin,
    ));
    app.finish();
    app.cleanup();
    let area = |x: f32| {
        let at = GridTransform::new(Vec2::new(x, 0.0), 1.0)
            .unwrap()
            .with_plane(plane);
        NavArea::new(NavGrid::from_ascii("........\n.######.\n........", at).unwrap())
    };
    let ground = app.world_mut().spawn(area(0.0)).id();
    let upper = app.world_mut().spawn(area(20.0).with_height(3.0)).id();
    (app, ground, upper)
}

/// Whether `lines` hold a segment between `a` and `b` (either way) in
/// `color`.
fn has_segment_3d(lines: &[(Vec3, Vec3, LinearRgba)], a: Vec3, b: Vec3, color: Color) -> bool {
    let c = LinearRgba::from(color);
    lines
        .iter()
        .any(|l| l.2 == c && ((l.0 == a && l.1 == b) || (l.0 == b && l.1 == a)))
}

/// Whether point `p` lies on the segment from `a` to `b` (to rounding).
fn on_segment(p: Vec3, a: Vec3, b: Vec3) -> bool {
    let t = ((p - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
    p.distance(a.lerp(b, t)) < 1e-4
}

#[test]
fn areas_links_and_paths_across_them_are_drawn() {
    let (mut app, ground, upper) = floors_app(WorldPlane::Xy);
    let (a, b) = (Vec2::new(7.5, 2.5), Vec2::new(20.5, 2.5));
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, a),
        LinkEnd::new(upper, b),
    ));
    // A lift one way, closed.
    let (c, d) = (Vec2::new(0.5, 0.5), Vec2::new(27.5, 0.5));
    let lift = app
        .world_mut()
        .spawn(
            NavLink::new(LinkEnd::new(ground, c), LinkEnd::new(upper, d))
                .handed()
                .one_way()
                .with_enabled(false),
        )
        .id();
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(3.5, 0.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(27.5, 2.5)),
            GoalArea(upper),
        ))
        .id();
    settle(&mut app);
    app.update();
    let cfg = config(&mut app).clone();
    let lines = drawn(&app);

    // Both areas' outlines.
    let outline = cfg.area_outline.unwrap();
    assert_eq!(count(&lines, outline), 8);
    for (p, q) in [
        ((0.0, 0.0), (8.0, 0.0)),
        ((8.0, 0.0), (8.0, 3.0)),
        ((20.0, 3.0), (28.0, 3.0)),
        ((20.0, 0.0), (20.0, 3.0)),
    ] {
        assert!(
            has_segment(&lines, Vec2::from(p), Vec2::from(q), outline),
            "{p:?} - {q:?}"
        );
    }

    // The stairs: one line between their ends and a diamond (four sides)
    // at each end.
    assert!(has_segment(&lines, a, b, cfg.link_walked));
    assert_eq!(count(&lines, cfg.link_walked), 1 + 2 * 4);
    let s = 1.5 * cfg.marker_radius;
    assert!(has_segment(
        &lines,
        a + Vec2::new(s, 0.0),
        a + Vec2::new(0.0, s),
        cfg.link_walked
    ));
    // The closed lift: dashes (never one line), a diamond at each end, a
    // cross at the middle, and an arrow head pointing to its far end.
    assert!(!has_segment(&lines, c, d, cfg.link_disabled));
    let closed: Vec<_> = lines
        .iter()
        .filter(|l| l.2 == LinearRgba::from(cfg.link_disabled))
        .collect();
    let (c3, d3) = (c.extend(0.0), d.extend(0.0));
    let dashes = closed
        .iter()
        .filter(|l| on_segment(l.0, c3, d3) && on_segment(l.1, c3, d3))
        .count();
    assert!(dashes > 5, "{dashes} dashes");
    assert_eq!(closed.len(), dashes + 2 * 4 + 2 + 2);
    let tip = closed
        .iter()
        .filter(|l| !on_segment(l.0, c3, d3) && on_segment(l.1, c3, d3))
        .filter(|l| l.0.x < l.1.x)
        .count();
    assert!(
        tip >= 2,
        "the arrow's wings lead to its tip, towards x = 27.5"
    );
    assert_eq!(count(&lines, cfg.link_handed), 0, "the lift is closed");

    // The agent's path: its legs on each area solid, the stairs dashed.
    let path = app.world().get::<NavPath>(agent).unwrap().clone();
    assert_eq!(path.crossings.len(), 1, "{path:?}");
    let at = path.crossings[0].at;
    assert_eq!((path.waypoints[at], path.waypoints[at + 1]), (a, b));
    let color = cfg.polyanya;
    for (k, w) in path.waypoints.windows(2).enumerate().skip(path.next) {
        assert_eq!(
            has_segment(&lines, w[0], w[1], color),
            k != at,
            "{k}: {w:?}"
        );
    }
    let here = app.world().get::<NavPosition>(agent).unwrap().0;
    assert!(has_segment(&lines, here, path.waypoints[path.next], color));
    let (a3, b3) = (a.extend(0.0), b.extend(0.0));
    let on_stairs = lines
        .iter()
        .filter(|l| l.2 == LinearRgba::from(color) && on_segment(l.0, a3, b3))
        .filter(|l| on_segment(l.1, a3, b3) && l.0 != l.1)
        .count();
    assert!(on_stairs > 5, "{on_stairs} dashes along the stairs");

    // Opened, the lift is drawn in the colour of handed links; without
    // links, only the areas are drawn.
    app.world_mut().get_mut::<NavLink>(lift).unwrap().enabled = true;
    app.update();
    let lines = drawn(&app);
    assert_eq!(count(&lines, cfg.link_disabled), 0);
    assert_eq!(count(&lines, cfg.link_handed), dashes + 2 * 4 + 2);
    config(&mut app).links = false;
    app.update();
    let lines = drawn(&app);
    for color in [cfg.link_walked, cfg.link_handed, cfg.link_disabled] {
        assert_eq!(count(&lines, color), 0);
    }
    assert_eq!(count(&lines, outline), 8);
}

#[test]
fn links_and_paths_on_the_ground_plane_stand_at_their_areas_heights() {
    let (mut app, ground, upper) = floors_app(WorldPlane::Xz);
    let (a, b) = (Vec2::new(7.5, 2.5), Vec2::new(20.5, 2.5));
    app.world_mut()
        .spawn(NavLink::new(LinkEnd::new(ground, a), LinkEnd::new(upper, b)).one_way());
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(3.5, 0.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(27.5, 2.5)),
            GoalArea(upper),
        ))
        .id();
    settle(&mut app);
    config(&mut app).height = 0.25;
    app.update();
    let cfg = config(&mut app).clone();
    let lines = drawn(&app);
    let lift = |p: Vec2, h: f32| Vec3::new(p.x, h, p.y);

    // The link from the ground (0.25 up) to the upper area (3 + 0.25 up).
    let (a3, b3) = (lift(a, 0.25), lift(b, 3.25));
    assert!(has_segment_3d(&lines, a3, b3, cfg.link_walked));
    // Its arrow head: two wings to a tip on the line.
    let wings = lines
        .iter()
        .filter(|l| l.2 == LinearRgba::from(cfg.link_walked))
        .filter(|l| !on_segment(l.0, a3, b3) && on_segment(l.1, a3, b3))
        .count();
    assert_eq!(wings, 2);
    // The areas' outlines at their heights.
    let outline = cfg.area_outline.unwrap();
    let h = |x: f32, z: f32, y: f32| Vec3::new(x, y, z);
    assert!(has_segment_3d(
        &lines,
        h(0.0, 0.0, 0.25),
        h(8.0, 0.0, 0.25),
        outline
    ));
    assert!(has_segment_3d(
        &lines,
        h(20.0, 0.0, 3.25),
        h(28.0, 0.0, 3.25),
        outline
    ));

    // The path's waypoints at the height of the area each lies on.
    let path = app.world().get::<NavPath>(agent).unwrap().clone();
    let at = path.crossings[0].at;
    for (k, w) in path.waypoints.windows(2).enumerate().skip(path.next) {
        if k == at {
            continue;
        }
        let y = if k < at { 0.25 } else { 3.25 };
        assert!(
            has_segment_3d(&lines, lift(w[0], y), lift(w[1], y), cfg.polyanya),
            "{k}: {w:?}"
        );
    }
}
