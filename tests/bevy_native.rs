//! The plugin inside Bevy: reflection, `Time` and its schedules, the XZ
//! ground plane of 3D games, child agents, results as messages, and what an
//! algorithm change does to paths.

use std::any::TypeId;
use std::time::Duration;

use bevy_anyangle::plugin::{
    AnyAnglePlugin, AnyAngleSystems, GridTransform, NavGrid, NavPath, NavPosition, PathFailed,
    PathFailure, PathFollower, PathReady, PathRequest, PathStatus, PathfindingDiagnostics,
    PathfindingSettings, PlanReason, Replanning, SteeringClock, WorldPlane,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, FixedUpdate, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_ecs::reflect::{AppTypeRegistry, ReflectComponent, ReflectResource};
use bevy_math::{Quat, Vec2, Vec3};
use bevy_reflect::serde::{TypedReflectDeserializer, TypedReflectSerializer};
use bevy_reflect::{FromReflect, PartialReflect};
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy, Virtual};
use bevy_transform::TransformPlugin;
use bevy_transform::components::{GlobalTransform, Transform};
use serde::de::DeserializeSeed;

/// A 30 x 30 room with a wall across the middle, open at its right end.
fn room(placement: GridTransform) -> NavGrid {
    let mut rows = vec![".".repeat(30); 30];
    rows[15] = format!("{}{}", "@".repeat(26), "....");
    NavGrid::from_ascii(&rows.join("\n"), placement).unwrap()
}

/// An app with the plugin and `nav`; `time` adds Bevy's clocks, advancing
/// 20 ms a frame.
fn app(nav: NavGrid, plugin: AnyAnglePlugin, time: bool) -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), plugin))
        .insert_resource(nav);
    if time {
        app.add_plugins(TimePlugin)
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
                20,
            )));
    }
    app.finish();
    app.cleanup();
    app
}

/// Updates until `done` holds; panics after `frames`.
fn run_until(app: &mut App, frames: usize, mut done: impl FnMut(&mut World) -> bool) {
    for _ in 0..frames {
        app.update();
        if done(app.world_mut()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("not reached in {frames} frames");
}

/// Updates until no agent waits for a search and none is running.
fn settle(app: &mut App) {
    run_until(app, 20_000, |world| {
        let busy = world
            .query::<&PathStatus>()
            .iter(world)
            .any(PathStatus::is_busy);
        let replanning = world
            .query_filtered::<(), With<Replanning>>()
            .iter(world)
            .next()
            .is_some();
        let d = world.resource::<PathfindingDiagnostics>();
        !busy && !replanning && d.in_flight == 0 && d.queued == 0
    });
}

fn status(app: &App, e: Entity) -> PathStatus {
    app.world().get::<PathStatus>(e).unwrap().clone()
}

fn nav_path(app: &App, e: Entity) -> NavPath {
    app.world().get::<NavPath>(e).unwrap().clone()
}

/// Whether `p` is in free space, up to the rounding of `f32` positions (a
/// follower walking along a wall's edge, or through a parent's transform,
/// may be stored a few ulps inside it).
fn near_free(nav: &NavGrid, p: Vec2) -> bool {
    const TOLERANCE: f32 = 1e-3;
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

/// Every segment of `path` is walkable on `nav`.
fn assert_walkable(nav: &NavGrid, path: &NavPath) {
    assert!(!path.is_empty());
    for w in path.waypoints.windows(2) {
        assert!(
            nav.line_of_sight(w[0], w[1]),
            "{} -> {} crosses a wall",
            w[0],
            w[1]
        );
    }
}

#[test]
fn a_reflected_path_request_round_trips_through_the_type_registry() {
    let mut app = app(
        room(GridTransform::default()),
        AnyAnglePlugin::default(),
        false,
    );
    app.insert_resource(SteeringClock::fixed(0.0));
    let registry = app.world().resource::<AppTypeRegistry>().clone();
    let registry = registry.read();

    let request = PathRequest::to(Vec2::new(2.5, 2.5)).with_algorithm(Algorithm::LazyTheta);
    let text = ron::to_string(&TypedReflectSerializer::new(&request, &registry)).unwrap();
    assert!(text.contains("LazyTheta"), "{text}");
    let registration = registry.get(TypeId::of::<PathRequest>()).unwrap();
    let mut de = ron::Deserializer::from_str(&text).unwrap();
    let value: Box<dyn PartialReflect> = TypedReflectDeserializer::new(registration, &registry)
        .deserialize(&mut de)
        .unwrap();
    assert_eq!(PathRequest::from_reflect(&*value), Some(request));

    // Inserted through the registry, as a scene would: the agent is planned.
    let agent = app
        .world_mut()
        .spawn(NavPosition(Vec2::new(2.5, 27.5)))
        .id();
    let component = registration.data::<ReflectComponent>().unwrap();
    component.insert(&mut app.world_mut().entity_mut(agent), &*value, &registry);
    drop(registry);
    settle(&mut app);
    assert_eq!(status(&app, agent), PathStatus::Ready);
    let path = nav_path(&app, agent);
    assert_eq!(path.algorithm, Some(Algorithm::LazyTheta));
    assert_eq!(path.end(), Some(Vec2::new(2.5, 2.5)));

    // Every registered type the plugin adds is reachable by name, and the
    // settings resource can be read through reflection.
    let registry = app.world().resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    for name in [
        "PathRequest",
        "NavPath",
        "PathStatus",
        "PathFollower",
        "PathfindingSettings",
        "NavGrid",
        "WorldPlane",
        "PathReady",
    ] {
        assert!(
            registry.get_with_short_type_path(name).is_some(),
            "{name} is not registered"
        );
    }
    let settings = registry.get(TypeId::of::<PathfindingSettings>()).unwrap();
    assert!(settings.data::<ReflectResource>().is_some());
    let current = *app.world().resource::<PathfindingSettings>();
    let text = ron::to_string(&TypedReflectSerializer::new(&current, &registry)).unwrap();
    let mut de = ron::Deserializer::from_str(&text).unwrap();
    let value = TypedReflectDeserializer::new(settings, &registry)
        .deserialize(&mut de)
        .unwrap();
    assert_eq!(PathfindingSettings::from_reflect(&*value), Some(current));
}

/// Distance the agent moved over `frames` frames.
fn moved_over(app: &mut App, agent: Entity, frames: usize) -> f32 {
    let before = app.world().get::<Transform>(agent).unwrap().translation;
    for _ in 0..frames {
        app.update();
    }
    let after = app.world().get::<Transform>(agent).unwrap().translation;
    before.distance(after)
}

/// A follower on a long straight path, with its path already planned.
fn walking_agent(app: &mut App, speed: f32) -> Entity {
    let agent = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.5, 29.5, 3.0),
            PathRequest::to(Vec2::new(29.5, 29.5)),
            PathFollower {
                speed,
                arrive_radius: 0.0,
            },
        ))
        .id();
    run_until(app, 5_000, |w| {
        *w.get::<PathStatus>(agent).unwrap() == PathStatus::Ready
    });
    agent
}

#[test]
fn followers_go_by_virtual_time_pause_and_speed_included() {
    let mut app = app(
        room(GridTransform::default()),
        AnyAnglePlugin::default(),
        true,
    );
    let agent = walking_agent(&mut app, 1.0);

    let d = moved_over(&mut app, agent, 10);
    assert!(
        (d - 0.2).abs() < 1e-4,
        "10 frames of 20 ms at 1 unit/s: {d}"
    );

    app.world_mut().resource_mut::<Time<Virtual>>().pause();
    assert_eq!(
        moved_over(&mut app, agent, 10),
        0.0,
        "paused time stops followers"
    );

    let mut virt = app.world_mut().resource_mut::<Time<Virtual>>();
    virt.unpause();
    virt.set_relative_speed(2.0);
    app.update(); // the first frame after unpausing
    let d = moved_over(&mut app, agent, 10);
    assert!((d - 0.4).abs() < 1e-4, "twice the speed: {d}");
    let z = app.world().get::<Transform>(agent).unwrap().translation.z;
    assert_eq!(z, 3.0, "steering keeps translation.z");
}

#[test]
fn in_fixed_update_followers_go_by_fixed_time() {
    let plugin = AnyAnglePlugin::default().in_schedule(FixedUpdate);
    let mut app = app(room(GridTransform::default()), plugin, true);
    let agent = walking_agent(&mut app, 1.0);
    let start = app.world().resource::<Time<Fixed>>().elapsed_secs_f64();
    let d = moved_over(&mut app, agent, 20);
    let fixed = app.world().resource::<Time<Fixed>>().elapsed_secs_f64() - start;
    assert!(fixed > 0.2, "fixed steps ran ({fixed} s)");
    assert!(
        (f64::from(d) - fixed).abs() < 1e-4,
        "moved {d} in {fixed} s of fixed time"
    );
}

#[test]
fn an_agent_on_the_xz_plane_reaches_its_goal_around_the_wall() {
    let placement = GridTransform::new(Vec2::new(-15.0, -15.0), 1.0)
        .unwrap()
        .with_plane(WorldPlane::Xz);
    let mut app = app(room(placement), AnyAnglePlugin::default(), false);
    app.insert_resource(SteeringClock::fixed(0.05));
    // Row 0 of the picture is the far side, z = -15: start there, end
    // beyond the wall (row 15 is at z in [0, 1]).
    let (start, goal) = (Vec3::new(-14.5, 2.0, -14.5), Vec2::new(-14.5, 14.5));
    let agent = app
        .world_mut()
        .spawn((
            Transform::from_translation(start),
            PathRequest::to(goal),
            PathFollower {
                speed: 8.0,
                arrive_radius: 0.0,
            },
        ))
        .id();
    let nav = app.world().resource::<NavGrid>().clone();
    assert!(
        !nav.is_free_at(Vec2::new(0.0, 0.5)),
        "the wall lies along x at z = 0.5"
    );
    let mut checked = false;
    run_until(&mut app, 5_000, |w| {
        let t = w.get::<Transform>(agent).unwrap().translation;
        assert_eq!(t.y, 2.0, "steering keeps the height");
        assert!(near_free(&nav, Vec2::new(t.x, t.z)), "in a wall at {t}");
        let path = w.get::<NavPath>(agent).unwrap();
        if !checked && !path.is_empty() {
            assert_eq!(path.waypoints[0], Vec2::new(start.x, start.z));
            assert!(path.waypoints.len() >= 3, "around the wall's end");
            assert_walkable(&nav, path);
            checked = true;
        }
        path.is_finished() && checked
    });
    let t = app.world().get::<Transform>(agent).unwrap().translation;
    assert!(Vec2::new(t.x, t.z).distance(goal) < 1e-4, "ends at {t}");
}

#[test]
fn a_child_agent_plans_and_walks_in_world_space() {
    let placement = GridTransform::new(Vec2::new(100.0, 50.0), 1.0).unwrap();
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        TransformPlugin,
        AnyAnglePlugin::default(),
    ))
    .insert_resource(room(placement))
    .insert_resource(SteeringClock::fixed(0.05));
    app.finish();
    app.cleanup();
    // A turned and scaled parent: the child's local (-2.25, 2.25) is world
    // (105, 55) + R90 * 2 * (-2.25, 2.25) = (100.5, 50.5).
    let parent = app
        .world_mut()
        .spawn(Transform {
            translation: Vec3::new(105.0, 55.0, 0.0),
            rotation: Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            scale: Vec3::splat(2.0),
        })
        .id();
    let goal = Vec2::new(100.5, 79.5);
    let agent = app
        .world_mut()
        .spawn((
            Transform::from_xyz(-2.25, 2.25, 0.0),
            PathRequest::to(goal),
            PathFollower {
                speed: 6.0,
                arrive_radius: 0.0,
            },
            ChildOf(parent),
        ))
        .id();
    let nav = app.world().resource::<NavGrid>().clone();
    let mut first: Option<NavPath> = None;
    run_until(&mut app, 5_000, |w| {
        let g = w.get::<GlobalTransform>(agent).unwrap().translation();
        assert!(near_free(&nav, g.truncate()), "in a wall at {g}");
        let path = w.get::<NavPath>(agent).unwrap();
        if first.is_none() && !path.is_empty() {
            first = Some(path.clone());
        }
        !path.is_empty() && path.is_finished()
    });
    let first = first.unwrap();
    assert!(
        first.waypoints[0].distance(Vec2::new(100.5, 50.5)) < 1e-4,
        "planned from the global position, not {}",
        first.waypoints[0]
    );
    assert_walkable(&nav, &first);
    app.update(); // propagate the last step
    let g = app
        .world()
        .get::<GlobalTransform>(agent)
        .unwrap()
        .translation();
    assert!(g.truncate().distance(goal) < 1e-3, "ends at {g}");
}

/// Messages read by a system, beside the observed events.
#[derive(Resource, Default)]
struct Seen {
    ready_messages: Vec<PathReady>,
    failed_messages: Vec<PathFailed>,
    ready_events: Vec<PathReady>,
    failed_events: Vec<PathFailed>,
}

#[test]
fn results_arrive_as_messages_too() {
    let mut app = app(
        room(GridTransform::default()),
        AnyAnglePlugin::default(),
        false,
    );
    app.insert_resource(SteeringClock::fixed(0.0))
        .init_resource::<Seen>()
        .add_systems(
            Update,
            (|mut ready: MessageReader<PathReady>,
              mut failed: MessageReader<PathFailed>,
              mut seen: ResMut<Seen>| {
                seen.ready_messages.extend(ready.read().copied());
                seen.failed_messages.extend(failed.read().cloned());
            })
            .after(AnyAngleSystems::Apply),
        )
        .add_observer(|e: On<PathReady>, mut seen: ResMut<Seen>| seen.ready_events.push(*e))
        .add_observer(|e: On<PathFailed>, mut seen: ResMut<Seen>| {
            seen.failed_events.push(e.clone());
        });
    let reached = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            PathRequest::to(Vec2::new(0.5, 29.5)),
        ))
        .id();
    let nowhere = app
        .world_mut()
        .spawn(PathRequest::to(Vec2::new(1.0, 1.0)))
        .id();
    settle(&mut app);
    app.update();
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.ready_messages, seen.ready_events);
    assert_eq!(seen.failed_messages, seen.failed_events);
    assert_eq!(seen.ready_messages.len(), 1);
    assert_eq!(seen.ready_messages[0].entity, reached);
    assert_eq!(seen.failed_messages.len(), 1);
    assert_eq!(seen.failed_messages[0].entity, nowhere);
    assert_eq!(
        seen.failed_messages[0].status,
        PathStatus::Failed(PathFailure::NoPosition)
    );
}

#[test]
fn an_algorithm_change_keeps_paths_and_leaves_arrived_agents_alone() {
    let mut app = app(
        room(GridTransform::default()),
        AnyAnglePlugin::default(),
        false,
    );
    app.insert_resource(SteeringClock::fixed(1.0))
        .init_resource::<Seen>()
        .add_observer(|e: On<PathReady>, mut seen: ResMut<Seen>| seen.ready_events.push(*e));
    let (start, goal) = (Vec2::new(0.5, 0.5), Vec2::new(0.5, 29.5));
    // Standing still (no follower): the path stays ahead of them.
    let own = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    let shared = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal)))
        .id();
    // Walking fast: they arrive.
    let follower = PathFollower {
        speed: 100.0,
        arrive_radius: 0.0,
    };
    let arrived_own = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal), follower))
        .id();
    let arrived_shared = app
        .world_mut()
        .spawn((NavPosition(start), PathRequest::to(goal), follower))
        .id();
    settle(&mut app);
    for _ in 0..5 {
        app.update();
    }
    for e in [arrived_own, arrived_shared] {
        assert!(nav_path(&app, e).is_finished(), "{e} has arrived");
    }
    for e in [own, shared] {
        assert!(!nav_path(&app, e).is_finished());
    }
    app.world_mut().resource_mut::<Seen>().ready_events.clear();

    // Per request: keep the path, replan in the background (searches held
    // back so that the frames in between can be looked at).
    app.world_mut().resource_mut::<PathfindingSettings>().paused = true;
    for e in [own, arrived_own] {
        app.world_mut().get_mut::<PathRequest>(e).unwrap().algorithm = Some(Algorithm::AStar);
    }
    for _ in 0..3 {
        app.update();
        assert!(!nav_path(&app, own).is_empty(), "the old path is kept");
        assert_eq!(status(&app, own), PathStatus::Ready);
        assert!(app.world().get::<Replanning>(own).is_some());
        assert!(app.world().get::<Replanning>(arrived_own).is_none());
    }
    app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
    settle(&mut app);
    assert_eq!(nav_path(&app, own).algorithm, Some(Algorithm::AStar));

    // Globally: the same.
    let mut settings = app.world_mut().resource_mut::<PathfindingSettings>();
    settings.paused = true;
    settings.algorithm = Algorithm::LazyTheta;
    for _ in 0..3 {
        app.update();
        assert!(!nav_path(&app, shared).is_empty(), "the old path is kept");
        assert!(app.world().get::<Replanning>(shared).is_some());
        assert!(app.world().get::<Replanning>(arrived_shared).is_none());
    }
    app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
    settle(&mut app);
    assert_eq!(nav_path(&app, shared).algorithm, Some(Algorithm::LazyTheta));

    let replanned: Vec<(Entity, PlanReason)> = app
        .world()
        .resource::<Seen>()
        .ready_events
        .iter()
        .map(|r| (r.entity, r.reason))
        .collect();
    assert_eq!(
        replanned,
        vec![
            (own, PlanReason::AlgorithmChanged),
            (shared, PlanReason::AlgorithmChanged)
        ],
        "arrived agents are not replanned"
    );
    for e in [arrived_own, arrived_shared] {
        assert_eq!(nav_path(&app, e).algorithm, Some(Algorithm::Anya));
        assert!(nav_path(&app, e).is_finished());
    }
}
