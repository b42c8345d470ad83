//! Crowds through the plugin: agents with `LocalAvoidance` crossing a door
//! both ways, and a crowd sent to one point. Every frame, every agent keeps
//! its radius from every wall; over the run, agents overlap little; at the
//! end, everyone has arrived, and a crowd sent to one point stands spread
//! around it.

mod common;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, LocalAvoidance, NavGrid, NavPath, NavPosition, PathFollower,
    PathRequest, PathStatus, PathfindingDiagnostics, SteeringClock,
};
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use common::wall_distance;

const RADIUS: f32 = 0.4;

/// A 48 x 32 room split by a wall at x = 24 with a door 4 cells wide.
fn door_grid() -> Grid {
    let rows: Vec<String> = (0..32)
        .map(|y| {
            (0..48)
                .map(|x| {
                    if x == 24 && !(14..18).contains(&y) {
                        '#'
                    } else {
                        '.'
                    }
                })
                .collect()
        })
        .collect();
    Grid::from_ascii(&rows.join("\n")).unwrap()
}

/// An app with `grid` and one agent per (start, goal), radius [`RADIUS`].
fn crowd_app(grid: Grid, agents: &[(Vec2, Vec2)], avoid: bool) -> (App, Vec<Entity>) {
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin::default())
        .insert_resource(NavGrid::new(grid, GridTransform::default()))
        .insert_resource(SteeringClock::fixed(1.0 / 60.0));
    app.finish();
    app.cleanup();
    let entities = agents
        .iter()
        .map(|&(start, goal)| {
            let mut agent = app.world_mut().spawn((
                NavPosition(start),
                PathRequest::to(goal).with_radius(RADIUS),
                PathFollower {
                    speed: 4.0,
                    arrive_radius: 0.05,
                },
            ));
            if avoid {
                agent.insert(LocalAvoidance);
            }
            agent.id()
        })
        .collect();
    (app, entities)
}

/// Agents in rows on both sides of the door; each side's crowd is sent to
/// one point 12 cells past the wall, level with the door.
fn door_crowd(per_side: usize) -> Vec<(Vec2, Vec2)> {
    let mut out = Vec::new();
    let (east, west) = (Vec2::new(36.0, 16.0), Vec2::new(12.0, 16.0));
    for i in 0..per_side {
        let (col, row) = ((i % 10) as f32, (i / 10) as f32);
        let start = Vec2::new(3.5 + col * 1.8, 4.5 + row * 1.8);
        out.push((start, east));
        out.push((Vec2::new(48.0 - start.x, start.y), west));
    }
    out
}

/// Runs frames until every agent has finished its path or `max_frames`;
/// checks every frame that every agent keeps its radius from the walls;
/// returns the frames run and the mean and worst overlap of an agent with
/// its nearest neighbour per agent-frame (cells).
fn run(app: &mut App, agents: &[Entity], max_frames: usize) -> (usize, f64, f64) {
    let grid = app.world().resource::<NavGrid>().grid().clone();
    let (mut sum, mut worst, mut samples) = (0.0, 0.0_f64, 0_usize);
    for frame in 1..=max_frames {
        app.update();
        let nav = app.world().resource::<NavGrid>();
        let at: Vec<_> = agents
            .iter()
            .map(|&e| nav.to_grid(app.world().get::<NavPosition>(e).unwrap().0))
            .collect();
        for (i, &p) in at.iter().enumerate() {
            let gap = wall_distance(&grid, p, 3);
            assert!(
                gap >= f64::from(RADIUS) - 1e-6,
                "frame {frame}: agent {i} at {p} is {gap} from a wall"
            );
            let overlap = at
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &q)| (2.0 * f64::from(RADIUS) - p.distance(q)).max(0.0))
                .fold(0.0, f64::max);
            sum += overlap;
            worst = worst.max(overlap);
            samples += 1;
        }
        let done = agents.iter().all(|&e| {
            let w = app.world();
            *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready
                && w.get::<NavPath>(e).unwrap().is_finished()
        });
        if done {
            return (frame, sum / samples as f64, worst);
        }
    }
    let w = app.world();
    let stuck: Vec<String> = agents
        .iter()
        .filter(|&&e| !w.get::<NavPath>(e).unwrap().is_finished())
        .map(|&e| {
            let path = w.get::<NavPath>(e).unwrap();
            format!(
                "at {} heading for waypoint {} of {:?} ({:?})",
                w.get::<NavPosition>(e).unwrap().0,
                path.next,
                path.waypoints,
                w.get::<PathStatus>(e).unwrap()
            )
        })
        .collect();
    panic!(
        "{} of {} agents have not arrived after {max_frames} frames:\n{}",
        stuck.len(),
        agents.len(),
        stuck.join("\n")
    );
}

#[test]
fn a_crowd_crosses_a_door_both_ways_without_walls_and_with_little_overlap() {
    let crowd = door_crowd(60);
    let (mut app, agents) = crowd_app(door_grid(), &crowd, true);
    let (frames, mean, worst) = run(&mut app, &agents, 60 * 120);
    let r = f64::from(RADIUS);
    // Measured: a mean overlap of 0.15 to 0.5 % of the radius, and at
    // worst, for a frame, two agents 20 to 47 % of it into each other.
    assert!(
        mean < 0.01 * r && worst < 0.6 * r,
        "overlap mean {mean}, worst {worst} cells ({frames} frames)"
    );
    // Everyone ended on the side it was sent to.
    for (&e, &(start, goal)) in agents.iter().zip(&crowd) {
        let p = app.world().get::<NavPosition>(e).unwrap().0;
        assert_eq!(
            p.x > 24.0,
            goal.x > 24.0,
            "{e}: from {start} to {goal}, at {p}: {:?} {:?}",
            app.world().get::<NavPath>(e),
            app.world().get::<PathStatus>(e)
        );
    }
    let d = *app.world().resource::<PathfindingDiagnostics>();
    eprintln!(
        "door, {} agents: {frames} frames, overlap mean {:.2} % worst {:.1} % of the radius; last avoidance {:?}",
        agents.len(),
        mean / r * 100.0,
        worst / r * 100.0,
        d.avoidance_cost
    );
}

/// Without `LocalAvoidance` the same crowd walks through itself: the
/// overlap the avoidance removes is real.
#[test]
fn without_avoidance_the_crowd_overlaps() {
    let crowd = door_crowd(60);
    let (mut app, agents) = crowd_app(door_grid(), &crowd, false);
    let (_, mean, _) = run(&mut app, &agents, 60 * 120);
    assert!(mean > 0.2 * f64::from(RADIUS), "mean overlap {mean}");
}

#[test]
fn a_crowd_sent_to_one_point_spreads_around_it() {
    let grid = Grid::from_ascii(&vec![".".repeat(40); 40].join("\n")).unwrap();
    let goal = Vec2::new(20.0, 20.0);
    let crowd: Vec<(Vec2, Vec2)> = (0..80)
        .map(|i| {
            let a = i as f32 / 80.0 * std::f32::consts::TAU;
            (goal + Vec2::new(a.cos(), a.sin()) * 15.0, goal)
        })
        .collect();
    let (mut app, agents) = crowd_app(grid, &crowd, true);
    let (frames, mean, worst) = run(&mut app, &agents, 60 * 60);
    let r = RADIUS;
    // Measured on the way: a mean overlap of 0.45 to 0.6 % of the radius,
    // at worst 30 % of it.
    assert!(
        mean < 0.01 * f64::from(r) && worst < 0.4 * f64::from(r),
        "overlap mean {mean}, worst {worst} cells ({frames} frames)"
    );
    let at: Vec<Vec2> = agents
        .iter()
        .map(|&e| app.world().get::<NavPosition>(e).unwrap().0)
        .collect();
    let mut closest = f32::INFINITY;
    for (i, p) in at.iter().enumerate() {
        for q in &at[i + 1..] {
            closest = closest.min(p.distance(*q));
        }
    }
    let spread = at.iter().map(|p| p.distance(goal)).fold(0.0, f32::max);
    eprintln!(
        "one point, {} agents: {frames} frames, overlap mean {:.2} % worst {:.1} % of the radius; at the end, closest pair {closest}, farthest from the goal {spread}",
        agents.len(),
        mean / f64::from(r) * 100.0,
        worst / f64::from(r) * 100.0,
    );
    // Measured at the end: no two agents overlap, or by up to 2.6 % of the
    // radius.
    let overlap = 2.0 * r - closest;
    assert!(overlap < 0.05 * r, "two agents overlap by {overlap}");
    // 80 discs packed as tightly as discs pack would fill a circle of
    // radius about 3.8; measured, the farthest stands 4.6 to 5.8 from the
    // goal.
    assert!(
        spread > 2.0 && spread < 6.5,
        "the farthest stands {spread} from the goal"
    );
}
