//! Terrain and movement profiles with the real plugin, headless: a soldier,
//! a boat (water and swamp only), a wader (water at three times the cost of
//! ground) and a wide cart (radius 1.5 cells) cross the same small map, each
//! on its own profile's grid. Early on a wide bridge is built across the
//! river: land for the soldier and the cart (which could not cross before),
//! a dam for the boat, which stops short of it. Prints what each did and the
//! map with each agent's trail.
//!
//! ```text
//! cargo run --release --example terrain
//! ```

use std::collections::BTreeMap;

use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPath, PathFollower, PathRequest, PathStatus,
    SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};
use bevy_app::{App, TaskPoolPlugin};
use bevy_math::Vec2;
use bevy_transform::components::Transform;

/// A river between two banks, a ford of swamp, trees on the east bank.
const MAP: &str = "
    ........................................
    ........................................
    ....................WWWW........TTT.....
    ...................WWWWWW.......TTT.....
    ..................WWWWWWW...............
    .................WWWWWWW................
    .................WWWWWW.................
    ................SSSSSS..................
    ................WWWWWW..................
    ...............WWWWWWW..................
    ..............WWWWWWWW..................
    ..............WWWWWWW...................
    .............WWWWWWW....................
    .............WWWWWW.....................";

const FRAMES: u32 = 2000;
/// When the bridge (rows 8 to 11, over the river) is built.
const BRIDGE_FRAME: u32 = 3;

fn main() -> std::process::ExitCode {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!(
            "A soldier, a boat, a wader and a wide cart cross one map, each by its own \
             movement profile; a bridge is built early on.\n\nUsage:\n  cargo run --release \
             --example terrain"
        );
        return std::process::ExitCode::SUCCESS;
    }
    let terrain = TerrainMap::from_ascii(MAP).expect("the map is a valid picture");
    let (w, h) = (terrain.width(), terrain.height());
    let mut nav = NavGrid::from_terrain(terrain, GridTransform::default());
    let boat = nav
        .add_profile(
            Profile::impassable()
                .with(Terrain::WATER, 1.0)
                .and_then(|p| p.with(Terrain::SWAMP, 1.0))
                .expect("cost 1"),
        )
        .expect("the grid has terrain");
    let wader = nav
        .add_profile(
            Profile::default()
                .with(Terrain::WATER, 3.0)
                .expect("cost 3"),
        )
        .expect("the grid has terrain");
    // Grid (x, y) with y down -> world (x, h - y) with y up.
    let at = |x: f32, y: f32| Vec2::new(x, h as f32 - y);

    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), AnyAnglePlugin::default()))
        .insert_resource(nav)
        .insert_resource(SteeringClock::fixed(1.0 / 30.0));
    let trips = [
        (
            'S',
            "soldier",
            at(2.5, 12.5),
            at(37.5, 1.5),
            PathRequest::to(at(37.5, 1.5)),
        ),
        (
            'B',
            "boat",
            at(14.5, 13.5),
            at(21.5, 2.5),
            PathRequest::to(at(21.5, 2.5)).with_profile(boat),
        ),
        (
            'W',
            "wader (water x3)",
            at(2.5, 10.5),
            at(37.5, 8.5),
            PathRequest::to(at(37.5, 8.5)).with_profile(wader),
        ),
        (
            'C',
            "cart (radius 1.5)",
            at(3.5, 3.5),
            at(36.5, 11.5),
            PathRequest::to(at(36.5, 11.5)).with_radius(1.5),
        ),
    ];
    let mut agents = Vec::new();
    for (letter, name, start, goal, request) in trips {
        let id = app
            .world_mut()
            .spawn((
                Transform::from_translation(start.extend(0.0)),
                request,
                PathFollower {
                    speed: 10.0,
                    arrive_radius: 0.05,
                },
            ))
            .id();
        agents.push((letter, name, id, goal));
    }
    app.finish();
    app.cleanup();

    let mut trails: BTreeMap<char, Vec<Vec2>> = BTreeMap::new();
    for frame in 0..FRAMES {
        if frame == BRIDGE_FRAME {
            // A bridge across the river, rows 8 to 11: with the ford above
            // it, land wide enough for the cart; a dam for the boat.
            app.world_mut()
                .resource_mut::<NavGrid>()
                .set_terrain(URect::new(12, 8, 24, 12), Terrain::GROUND)
                .expect("inside the grid");
            println!("frame {frame}: a bridge is built across the river, rows 8 to 11");
        }
        app.update();
        let world = app.world();
        let mut done = frame > BRIDGE_FRAME;
        for &(letter, _, id, _) in &agents {
            let p = world
                .get::<Transform>(id)
                .expect("agent")
                .translation
                .truncate();
            let trail = trails.entry(letter).or_default();
            if trail.last() != Some(&p) {
                trail.push(p);
            }
            let path = world.get::<NavPath>(id).expect("agent");
            let status = world.get::<PathStatus>(id).expect("agent");
            done &= !status.is_busy() && (path.is_finished() || path.is_empty());
        }
        if done {
            println!("frame {frame}: every agent has stopped");
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(300));
    }

    let world = app.world();
    let nav = world.resource::<NavGrid>();
    for &(letter, name, id, goal) in &agents {
        let status = world.get::<PathStatus>(id).expect("agent");
        let p = world
            .get::<Transform>(id)
            .expect("agent")
            .translation
            .truncate();
        let walked: f32 = trails[&letter]
            .windows(2)
            .map(|s| s[0].distance(s[1]))
            .sum();
        println!(
            "{letter} {name:18} {status:?}, {:.2} from its goal, walked {walked:.1}",
            p.distance(goal)
        );
    }
    let terrain = nav.terrain().expect("built from terrain");
    let mut rows: Vec<Vec<char>> = (0..i64::from(h))
        .map(|y| {
            (0..i64::from(w))
                .map(|x| match terrain.get(x, y) {
                    Some(Terrain::WATER) => '~',
                    Some(Terrain::SWAMP) => ',',
                    Some(Terrain::TREES) => 'T',
                    Some(Terrain::GROUND) => ' ',
                    _ => '#',
                })
                .collect()
        })
        .collect();
    for (&letter, trail) in &trails {
        for s in trail.windows(2) {
            let steps = (s[0].distance(s[1]) * 4.0).ceil().max(1.0) as usize;
            for i in 0..=steps {
                let q = nav.to_grid(s[0].lerp(s[1], i as f32 / steps as f32));
                let (x, y) = (q.x.floor() as usize, q.y.floor() as usize);
                if x < w as usize && y < h as usize {
                    rows[y][x] = letter.to_ascii_lowercase();
                }
            }
        }
    }
    println!("\n~ water  , swamp  T trees; s soldier, b boat, w wader, c cart:");
    println!("+{}+", "-".repeat(w as usize));
    for row in rows {
        println!("|{}|", row.into_iter().collect::<String>());
    }
    println!("+{}+", "-".repeat(w as usize));
    std::process::ExitCode::SUCCESS
}
