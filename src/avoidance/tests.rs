//! Crowds stepped for many frames: the rules of the module docs checked frame by frame.

use bevy_math::DVec2;

use super::neighbours::SpatialHash;
use super::walls::wall_distance;
use super::{Avoidance, AvoidanceOptions, Disc, Motion};
use crate::grid::Grid;
use crate::los::line_of_sight;

const DT: f64 = 1.0 / 60.0;

fn disc(position: DVec2, radius: f64, max_speed: f64) -> Disc {
    Disc {
        position,
        velocity: DVec2::ZERO,
        preferred: DVec2::ZERO,
        radius,
        max_speed,
        grid: 0,
        goal: None,
        arrived: false,
    }
}

/// The velocity towards `target` at up to `max_speed`, slowing down over
/// the last quarter second.
fn towards(from: DVec2, target: DVec2, max_speed: f64) -> DVec2 {
    ((target - from) * 4.0).clamp_length_max(max_speed)
}

/// What a run measured, frame by frame.
#[derive(Debug, Default)]
struct Record {
    /// Frames run.
    frames: usize,
    /// The frame at which the last disc arrived.
    all_arrived_at: Option<usize>,
    /// Disc-frames closer than the radius (less 1e-9) to a wall.
    in_walls: usize,
    /// The worst gap below the radius seen.
    worst_wall_overlap: f64,
    /// Sum over disc-frames of the disc's largest overlap with another.
    overlap_sum: f64,
    /// The largest overlap seen.
    overlap_worst: f64,
    /// Disc-frames measured.
    disc_frames: usize,
}

impl Record {
    fn mean_overlap(&self) -> f64 {
        self.overlap_sum / self.disc_frames.max(1) as f64
    }
}

/// Steps `discs` for up to `frames` frames (stopping once all have
/// arrived), with their preferred velocities from `steer` before each step.
fn run(
    discs: &mut [Disc],
    grid: &Grid,
    options: &AvoidanceOptions,
    frames: usize,
    mut steer: impl FnMut(usize, &Disc) -> DVec2,
) -> Record {
    let mut avoidance = Avoidance::new();
    let mut out: Vec<Motion> = Vec::new();
    let mut hash = SpatialHash::default();
    let mut record = Record::default();
    let largest = discs.iter().map(|d| d.radius).fold(0.0, f64::max);
    for frame in 0..frames {
        for (i, disc) in discs.iter_mut().enumerate() {
            disc.preferred = steer(i, disc);
        }
        avoidance.step(discs, &[grid], options, DT, &mut out);
        for (disc, motion) in discs.iter_mut().zip(&out) {
            disc.position += motion.step;
            disc.velocity = motion.velocity;
            disc.arrived = motion.arrived;
        }
        record.frames = frame + 1;
        hash.rebuild(2.0 * largest, discs.iter().map(|d| Some(d.position)));
        for (i, disc) in discs.iter().enumerate() {
            let gap = wall_distance(grid, disc.position, 2.0) - disc.radius;
            if gap < -1e-9 {
                record.in_walls += 1;
            }
            record.worst_wall_overlap = record.worst_wall_overlap.max(-gap);
            let mut overlap: f64 = 0.0;
            hash.around(disc.position, 2.0 * largest, |j, _| {
                if j != i {
                    let other = &discs[j];
                    let reach = disc.radius + other.radius;
                    overlap = overlap.max(reach - disc.position.distance(other.position));
                }
            });
            record.overlap_sum += overlap;
            record.overlap_worst = record.overlap_worst.max(overlap);
            record.disc_frames += 1;
        }
        if discs.iter().all(|d| d.arrived) {
            record.all_arrived_at = Some(frame + 1);
            break;
        }
    }
    record
}

#[test]
fn two_discs_head_on_swap_without_touching() {
    let grid = Grid::new(20, 20).expect("a grid");
    let goals = [DVec2::new(16.0, 10.0), DVec2::new(4.0, 10.0)];
    let mut discs = [disc(goals[1], 0.5, 2.0), disc(goals[0], 0.5, 2.0)];
    for (i, d) in discs.iter_mut().enumerate() {
        d.goal = Some((i as u64, goals[i]));
    }
    let record = run(
        &mut discs,
        &grid,
        &AvoidanceOptions::default(),
        1200,
        |i, d| towards(d.position, goals[i], d.max_speed),
    );
    assert!(record.all_arrived_at.is_some(), "{record:?}");
    assert!(record.overlap_worst < 0.01, "{record:?}");
    assert_eq!(record.in_walls, 0);
}

#[test]
fn a_disc_driven_into_a_wall_stops_at_its_radius() {
    let grid = Grid::from_ascii(
        "..........
         ..........
         ....##....
         ..........",
    )
    .expect("a picture");
    let mut discs = [disc(DVec2::new(4.9, 0.6), 0.45, 3.0)];
    let record = run(
        &mut discs,
        &grid,
        &AvoidanceOptions::default(),
        300,
        |_, _| DVec2::new(0.0, 3.0),
    );
    assert_eq!(record.in_walls, 0, "{record:?}");
    let p = discs[0].position;
    assert!(
        (p.y - (2.0 - 0.45)).abs() < 1e-3,
        "it stopped against the wall: {p}"
    );
    let ahead = discs[0].preferred * DT;
    let mut out = Vec::new();
    Avoidance::new().step(&discs, &[&grid], &AvoidanceOptions::default(), DT, &mut out);
    assert!(
        out[0].step.y <= 1e-9,
        "pushing on does not move it in: {:?} for {ahead}",
        out[0]
    );
}

/// A wall across a `side x side` grid at column `side / 2`, with a door of
/// `door` cells in its middle.
fn wall_with_door(side: u32, door: u32) -> Grid {
    let mut grid = Grid::new(side, side).expect("a grid");
    let top = (side - door) / 2;
    for y in (0..side).filter(|y| !(top..top + door).contains(y)) {
        grid.set_free(bevy_math::UVec2::new(side / 2, y), false)
            .expect("inside");
    }
    grid
}

/// `per_side` discs on each side of the door of [`wall_with_door`], in
/// columns of 20 from 4 cells off the wall; each side's discs share one
/// goal (id 0 for those going towards +x, 1 for the others), `beyond`
/// cells past the wall level with the door.
fn door_crowd(side: u32, per_side: usize, beyond: f64) -> Vec<Disc> {
    let middle = f64::from(side / 2) + 0.5;
    let door = f64::from(side) / 2.0;
    let rows = 20;
    let mut discs = Vec::with_capacity(2 * per_side);
    for k in 0..per_side {
        let (column, row) = ((k / rows) as f64, (k % rows) as f64);
        let y = door - rows as f64 / 2.0 + row + 0.5;
        let x = middle - 4.0 - column;
        for (start, id, goal) in [
            (DVec2::new(x, y), 0, middle + beyond),
            (DVec2::new(2.0 * middle - x, y), 1, middle - beyond),
        ] {
            let mut d = disc(start, 0.4, 1.5);
            d.goal = Some((id, DVec2::new(goal, door)));
            discs.push(d);
        }
    }
    discs
}

/// The two-waypoint path of the door crowd: the door's centre, then the goal.
fn through_door(side: u32, d: &Disc) -> DVec2 {
    let middle = f64::from(side / 2) + 0.5;
    let (_, goal) = d.goal.expect("every disc has a goal");
    let door = DVec2::new(middle, f64::from(side) / 2.0);
    let past = (d.position.x - middle) * (goal.x - middle) >= 0.0;
    if past {
        towards(d.position, goal, d.max_speed)
    } else {
        (door - d.position).normalize_or_zero() * d.max_speed
    }
}

/// Two crowds of 200 discs cross a wall both ways through a door 4 cells
/// wide, each to a goal 18 cells past it.
#[test]
fn two_crowds_cross_a_door() {
    let side = 64;
    let grid = wall_with_door(side, 4);
    let mut discs = door_crowd(side, 200, 18.0);
    let record = run(
        &mut discs,
        &grid,
        &AvoidanceOptions::default(),
        200 * 60,
        |_, d| through_door(side, d),
    );
    let arrived = discs.iter().filter(|d| d.arrived).count();
    assert_eq!(record.in_walls, 0, "{record:?}");
    // Measured with the starts moved by up to 0.1 cell each way: a mean
    // overlap of 0.06 to 0.09 % of the radius, at worst 12 to 26 %; all
    // arrive in 130 to 180 s, or all but 2 in 200 s.
    assert!(
        record.mean_overlap() < 0.002 * 0.4 && record.overlap_worst < 0.3 * 0.4,
        "{record:?}"
    );
    assert!(
        arrived * 100 >= 99 * discs.len(),
        "{arrived} of {} arrived in {} s",
        discs.len(),
        record.frames / 60
    );
    eprintln!("door: {record:?}, mean overlap {}", record.mean_overlap());
}

#[test]
fn a_hundred_discs_sent_to_one_point_spread_around_it() {
    let grid = Grid::new(40, 40).expect("a grid");
    let goal = DVec2::new(28.0, 28.0);
    let mut discs: Vec<Disc> = (0..100)
        .map(|k| {
            let start = DVec2::new(3.0 + f64::from(k % 10) * 1.2, 3.0 + f64::from(k / 10) * 1.2);
            let mut d = disc(start, 0.4, 1.5);
            d.goal = Some((7, goal));
            d
        })
        .collect();
    let record = run(
        &mut discs,
        &grid,
        &AvoidanceOptions::default(),
        90 * 60,
        |_, d| towards(d.position, goal, d.max_speed),
    );
    eprintln!("blob: {record:?}, mean overlap {}", record.mean_overlap());
    assert!(record.all_arrived_at.is_some(), "{record:?}");
    let near = discs
        .iter()
        .filter(|d| d.position.distance(goal) <= 0.4)
        .count();
    assert!(near <= 3, "{near} discs stacked on the goal");
    let farthest = discs
        .iter()
        .map(|d| d.position.distance(goal))
        .fold(0.0, f64::max);
    let mean = discs.iter().map(|d| d.position.distance(goal)).sum::<f64>() / 100.0;
    // 100 discs packed as tightly as discs pack fill a circle of radius
    // about 4.2 around the goal (mean distance 2.8). Measured, with the
    // starts and the goal moved by up to 0.15 cell each way: the farthest
    // stands 6.5 to 8.75 from the goal, 3.5 to 4.4 on average.
    assert!(
        farthest < 9.5 && mean < 4.8,
        "a blob: mean {mean}, farthest {farthest}"
    );
    // At the end, two discs overlap by at most 1.1 % of the radius
    // (measured likewise); on the way, by 0.02 to 0.08 % on average and at
    // worst 2.5 to 12.5 %.
    let mut worst: f64 = 0.0;
    for (i, a) in discs.iter().enumerate() {
        for b in &discs[..i] {
            worst = worst.max(0.8 - a.position.distance(b.position));
        }
    }
    assert!(worst < 0.015 * 0.4, "overlap {worst}");
    assert!(
        record.mean_overlap() < 0.002 * 0.4 && record.overlap_worst < 0.15 * 0.4,
        "{record:?}"
    );
}

#[test]
fn a_warm_step_does_not_grow_memory() {
    let side = 32;
    let grid = wall_with_door(side, 4);
    let mut discs = door_crowd(side, 60, 10.0);
    for d in &mut discs {
        d.preferred = through_door(side, d);
    }
    let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    let options = AvoidanceOptions::default();
    for _ in 0..3 {
        avoidance.step(&discs, &[&grid], &options, DT, &mut out);
    }
    let capacities = |a: &Avoidance| {
        [
            a.usable.capacity(),
            a.neighbours.capacity(),
            a.first.capacity(),
            a.nearest.capacity(),
            a.arrived.capacity(),
            a.planes.capacity(),
            a.relaxed.capacity(),
            a.wall_points.capacity(),
            a.arrived_per_goal.capacity(),
        ]
    };
    let before = capacities(&avoidance);
    avoidance.step(&discs, &[&grid], &options, DT, &mut out);
    assert_eq!(capacities(&avoidance), before);
}

#[test]
fn discs_meeting_head_on_in_a_corridor_keep_right() {
    let grid = Grid::new(12, 3).expect("a grid");
    let mut discs = [
        disc(DVec2::new(2.0, 1.5), 0.4, 1.0),
        disc(DVec2::new(10.0, 1.5), 0.4, 1.0),
    ];
    let record = run(
        &mut discs,
        &grid,
        &AvoidanceOptions::default(),
        600,
        |i, _| DVec2::new(if i == 0 { 1.0 } else { -1.0 }, 0.0),
    );
    assert_eq!(record.in_walls, 0);
    assert!(record.overlap_worst < 1e-3, "{record:?}");
    assert!(
        discs[0].position.x > 10.0 && discs[1].position.x < 2.0,
        "{discs:?}"
    );
    assert!(
        discs[0].position.y > 1.5 && discs[1].position.y < 1.5,
        "each passed on its right"
    );
}

#[test]
fn a_disc_passes_through_a_crowd_that_has_arrived() {
    let grid = Grid::new(30, 12).expect("a grid");
    let mut discs: Vec<Disc> = (0..60)
        .map(|k| {
            let mut d = disc(
                DVec2::new(12.0 + f64::from(k % 6), 3.0 + f64::from(k / 6) * 0.85),
                0.4,
                1.5,
            );
            d.goal = Some((1, d.position));
            d.arrived = true;
            d
        })
        .collect();
    let goal = DVec2::new(26.0, 6.5);
    let mut walker = disc(DVec2::new(4.0, 6.5), 0.4, 1.5);
    walker.goal = Some((2, goal));
    discs.push(walker);
    let record = run(
        &mut discs,
        &grid,
        &AvoidanceOptions::default(),
        40 * 60,
        |_, d| {
            if d.arrived {
                DVec2::ZERO
            } else {
                towards(d.position, goal, d.max_speed)
            }
        },
    );
    assert!(
        record.all_arrived_at.is_some(),
        "it got through: {record:?}"
    );
    assert!(record.overlap_worst < 0.1 * 0.4, "{record:?}");
    assert_eq!(record.in_walls, 0);
}

/// Random discs and points (some with unusable numbers) on random grids:
/// every step is finite, unusable discs stand still, a disc clear of the
/// walls stays clear all along its step, and a point in free space steps
/// along a visible segment.
#[test]
fn random_crowds_keep_clear_of_the_walls() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    let number = |low: f64, high: f64| {
        prop_oneof![
            8 => low..high,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(-1.0),
        ]
    };
    // Radii: discs, and points (radius 0).
    let radius = prop_oneof![4 => number(0.0, 0.9), 1 => Just(0.0)];
    let discs = prop::collection::vec(
        (
            (0.0..12.0, 0.0..12.0),
            (-2.0..2.0, -2.0..2.0),
            (-3.0..3.0, -3.0..3.0),
            radius,
            number(0.0, 3.0),
            any::<bool>(),
        ),
        1..40,
    );
    let cells = prop::collection::vec((0..12_u32, 0..12_u32), 0..30);
    let config = Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
    // Points in free space whose step was checked.
    let points = std::cell::Cell::new(0_usize);
    let result = runner.run(&(discs, cells), |(discs, cells)| {
        let mut grid = Grid::new(12, 12).expect("a grid");
        for (x, y) in cells {
            grid.set_free(bevy_math::UVec2::new(x, y), false)
                .expect("inside");
        }
        let discs: Vec<Disc> = discs
            .into_iter()
            .map(
                |((x, y), (vx, vy), (px, py), radius, max_speed, odd)| Disc {
                    position: DVec2::new(x, if odd && radius < 0.1 { f64::NAN } else { y }),
                    velocity: DVec2::new(vx, vy),
                    preferred: DVec2::new(px, py),
                    radius,
                    max_speed,
                    grid: usize::from(odd && max_speed > 2.5),
                    goal: odd.then_some((3, DVec2::new(6.0, 6.0))),
                    arrived: false,
                },
            )
            .collect();
        let mut out = Vec::new();
        Avoidance::new().step(&discs, &[&grid], &AvoidanceOptions::default(), DT, &mut out);
        prop_assert_eq!(out.len(), discs.len());
        for (disc, motion) in discs.iter().zip(&out) {
            prop_assert!(motion.step.is_finite() && motion.velocity.is_finite());
            let usable = disc.position.is_finite()
                && disc.radius.is_finite()
                && disc.radius >= 0.0
                && disc.max_speed.is_finite()
                && disc.max_speed >= 0.0
                && disc.grid == 0;
            if !usable {
                prop_assert_eq!(motion.step, DVec2::ZERO);
                continue;
            }
            prop_assert!(motion.step.length() <= disc.max_speed * DT * (1.0 + 1e-12));
            if disc.radius > 0.0 && wall_distance(&grid, disc.position, 2.0) >= disc.radius {
                for i in 0..=200 {
                    let q = disc.position + motion.step * (f64::from(i) / 200.0);
                    let d = wall_distance(&grid, q, 2.0);
                    prop_assert!(d >= disc.radius, "{:?} {:?}: {} at {}", disc, motion, d, q);
                }
            }
            if disc.radius == 0.0 && grid.is_point_traversable(disc.position) {
                points.set(points.get() + 1);
                let end = disc.position + motion.step;
                prop_assert!(
                    line_of_sight(&grid, disc.position, end),
                    "{:?} {:?}",
                    disc,
                    motion
                );
            }
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    assert!(points.get() > 200, "only {} points checked", points.get());
}
