//! Maps as Bevy assets: a bundled `.map` loaded through the `AssetServer`
//! becomes the `NavGrid`, and a changed asset updates it as edits (only the
//! agents it blocks replan) or, at another size, replaces it.

use std::time::Duration;

use bevy_anyangle::plugin::asset::{MovingAiMap, MovingAiMapPlugin, NavGridAsset};
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPosition, PathReady, PathRequest, PathStatus,
    PlanReason,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::{AssetPlugin, AssetServer, Assets, Handle};
use bevy_ecs::prelude::*;
use bevy_math::Vec2;

/// An app with the asset server reading files under `root` (relative to the
/// crate, or absolute) and the plugins.
fn app(root: &str) -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin {
            file_path: root.to_owned(),
            ..AssetPlugin::default()
        },
        AnyAnglePlugin::default(),
        MovingAiMapPlugin,
    ));
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

/// Collects every `PathReady` message into `Ready`.
#[derive(Resource, Default)]
struct Ready(Vec<PathReady>);

fn collect(mut ready: MessageReader<PathReady>, mut all: ResMut<Ready>) {
    all.0.extend(ready.read().copied());
}

#[test]
fn a_bundled_map_loads_into_the_nav_grid() {
    let mut app = app("data/maps");
    let map: Handle<MovingAiMap> = app.world().resource::<AssetServer>().load("arena.map");
    let transform = GridTransform::new(Vec2::new(-10.0, 5.0), 2.0).unwrap();
    app.insert_resource(NavGridAsset { map, transform });
    run_until(&mut app, 2000, |w| w.contains_resource::<NavGrid>());
    let text = std::fs::read_to_string("data/maps/arena.map").unwrap();
    let expected = Grid::from_movingai(&text).unwrap();
    let nav = app.world().resource::<NavGrid>();
    assert_eq!(nav.transform(), transform);
    assert_eq!(nav.grid().size(), expected.size());
    for y in 0..expected.height() {
        for x in 0..expected.width() {
            let c = UVec2::new(x, y);
            assert_eq!(nav.grid().is_free(c), expected.is_free(c), "cell {c}");
        }
    }
}

/// An open 20 x 10 map with agents crossing it on rows 2 and 7 (grid rows;
/// world y is up, so world y 7.5 and 2.5).
fn two_lanes(app: &mut App) -> (Handle<MovingAiMap>, Entity, Entity) {
    let grid = Grid::new(20, 10).unwrap();
    let map = app
        .world_mut()
        .resource_mut::<Assets<MovingAiMap>>()
        .add(MovingAiMap { grid });
    app.insert_resource(NavGridAsset {
        map: map.clone(),
        transform: GridTransform::default(),
    });
    app.init_resource::<Ready>().add_systems(
        bevy_app::Update,
        collect.after(bevy_anyangle::plugin::AnyAngleSystems::Apply),
    );
    let lane = |y: f32| {
        (
            NavPosition(Vec2::new(0.5, y)),
            PathRequest::to(Vec2::new(19.5, y)),
        )
    };
    let top = app.world_mut().spawn(lane(7.5)).id();
    let bottom = app.world_mut().spawn(lane(2.5)).id();
    run_until(app, 2000, |w| {
        [top, bottom]
            .iter()
            .all(|&e| *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready)
    });
    app.world_mut().resource_mut::<Ready>().0.clear();
    (map, top, bottom)
}

#[test]
fn a_changed_map_replans_only_the_agents_it_blocks() {
    let mut app = app("data/maps");
    let (map, top, bottom) = two_lanes(&mut app);
    let layout = app.world().resource::<NavGrid>().layout_id();
    // A wall across grid row 2 (world y 7.5), the top agent's lane.
    {
        let mut maps = app.world_mut().resource_mut::<Assets<MovingAiMap>>();
        let grid = &mut maps.get_mut(&map).unwrap().grid;
        grid.set_rect_free(URect::new(10, 1, 11, 4), false).unwrap();
    }
    run_until(&mut app, 2000, |w| {
        w.resource::<Ready>().0.iter().any(|r| r.entity == top)
    });
    for _ in 0..20 {
        app.update();
    }
    let nav = app.world().resource::<NavGrid>();
    assert_eq!(nav.layout_id(), layout, "applied as edits, not a new grid");
    assert!(nav.grid().is_blocked(UVec2::new(10, 2)));
    let ready = &app.world().resource::<Ready>().0;
    assert!(
        ready
            .iter()
            .any(|r| r.entity == top && r.reason == PlanReason::PathBlocked),
        "{ready:?}"
    );
    assert!(ready.iter().all(|r| r.entity != bottom), "{ready:?}");
}

#[test]
fn a_map_of_another_size_replaces_the_grid() {
    let mut app = app("data/maps");
    let (map, top, bottom) = two_lanes(&mut app);
    let layout = app.world().resource::<NavGrid>().layout_id();
    app.world_mut()
        .resource_mut::<Assets<MovingAiMap>>()
        .get_mut(&map)
        .unwrap()
        .grid = Grid::new(30, 12).unwrap();
    run_until(&mut app, 2000, |w| {
        let ready = &w.resource::<Ready>().0;
        [top, bottom].iter().all(|&e| {
            ready
                .iter()
                .any(|r| r.entity == e && r.reason == PlanReason::GridReplaced)
        })
    });
    let nav = app.world().resource::<NavGrid>();
    assert_ne!(nav.layout_id(), layout);
    assert_eq!(nav.grid().size(), UVec2::new(30, 12));
}

#[test]
fn a_map_that_fails_to_load_leaves_no_grid() {
    let dir = std::env::temp_dir().join(format!("anyangle-asset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("broken.map"),
        "type octile\nheight 2\nwidth 2\nmap\n..\n",
    )
    .unwrap();
    let mut app = app(dir.to_str().unwrap());
    let map: Handle<MovingAiMap> = app.world().resource::<AssetServer>().load("broken.map");
    app.insert_resource(NavGridAsset {
        map: map.clone(),
        transform: GridTransform::default(),
    });
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            PathRequest::to(Vec2::new(1.5, 0.5)),
        ))
        .id();
    run_until(&mut app, 2000, |w| {
        w.resource::<AssetServer>().load_state(&map).is_failed()
    });
    for _ in 0..10 {
        app.update();
    }
    assert!(!app.world().contains_resource::<NavGrid>());
    assert_eq!(
        *app.world().get::<PathStatus>(agent).unwrap(),
        PathStatus::Pending
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
