//! Local avoidance of a crowd: 2,000 discs of radius 0.4 cells, 1,000 each
//! way, crossing a wall through a door 4 cells wide on a 128 x 128 grid, at
//! 60 steps a second.
//!
//! Each side's discs start in a block of 40 rows and 25 columns, one cell
//! apart, from 2.5 cells off the wall, and share one goal 40 cells past the
//! wall (so they end in a blob around it). Each heads for the door's
//! centre until it has passed the wall, then for its goal. One run first
//! steps the crowd until all have arrived (or 900 simulated seconds) and
//! prints a summary: when they all arrived, disc-frames inside a wall
//! (closer than the radius to a blocked cell), the mean and worst overlap
//! with another disc per disc-frame, discs stuck at the end, and the wall
//! time of `Avoidance::step`. Then one step of the crowd mid-crossing (60
//! simulated seconds in) is timed.
//!
//! ```text
//! cargo bench --bench avoidance
//! CROSSING_SECONDS=61 cargo bench --bench avoidance   # a shorter run first
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_anyangle::avoidance::{Avoidance, AvoidanceOptions, Disc, Motion};
use bevy_anyangle::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

const SIDE: u32 = 128;
const DOOR: u32 = 4;
const RADIUS: f64 = 0.4;
const SPEED: f64 = 1.5;
const PER_SIDE: usize = 1000;
/// Rows of each group (its columns follow).
const ROWS: usize = 40;
const DT: f64 = 1.0 / 60.0;
/// How far past the wall each side's goal lies.
const BEYOND: f64 = 40.0;

/// The x of the wall's middle.
fn middle() -> f64 {
    f64::from(SIDE / 2) + 0.5
}

/// The door's centre.
fn door() -> DVec2 {
    DVec2::new(middle(), f64::from(SIDE) / 2.0)
}

/// A wall across the grid at column `SIDE / 2`, with the door in its middle.
fn grid() -> Grid {
    let mut grid = Grid::new(SIDE, SIDE).expect("a grid");
    let top = (SIDE - DOOR) / 2;
    for y in (0..SIDE).filter(|y| !(top..top + DOOR).contains(y)) {
        grid.set_free(UVec2::new(SIDE / 2, y), false)
            .expect("inside");
    }
    grid
}

/// Both groups, one cell apart, from 2.5 cells off the wall; each group's
/// goal is `BEYOND` cells past the wall, level with the door.
fn crowd() -> Vec<Disc> {
    let mut discs = Vec::with_capacity(2 * PER_SIDE);
    for k in 0..PER_SIDE {
        let (column, row) = ((k / ROWS) as f64, (k % ROWS) as f64);
        let y = door().y - ROWS as f64 / 2.0 + row + 0.5;
        let x = middle() - 2.5 - column;
        for (start, id, goal) in [
            (DVec2::new(x, y), 0, middle() + BEYOND),
            (DVec2::new(2.0 * middle() - x, y), 1, middle() - BEYOND),
        ] {
            discs.push(Disc {
                position: start,
                velocity: DVec2::ZERO,
                preferred: DVec2::ZERO,
                radius: RADIUS,
                max_speed: SPEED,
                grid: 0,
                goal: Some((id, DVec2::new(goal, door().y))),
                arrived: false,
            });
        }
    }
    discs
}

/// The door's centre until past the wall, then the goal (slowing down over
/// the last quarter second).
fn steer(discs: &mut [Disc]) {
    for d in discs {
        let (_, goal) = d.goal.expect("every disc has a goal");
        let past = (d.position.x - middle()) * (goal.x - middle()) >= 0.0;
        d.preferred = if past {
            ((goal - d.position) * 4.0).clamp_length_max(d.max_speed)
        } else {
            (door() - d.position).normalize_or_zero() * d.max_speed
        };
    }
}

/// Applies a step's motions.
fn apply(discs: &mut [Disc], out: &[Motion]) {
    for (d, m) in discs.iter_mut().zip(out) {
        d.position += m.step;
        d.velocity = m.velocity;
        d.arrived = m.arrived;
    }
}

/// Each disc's largest overlap with another (0 when none), by a bucket
/// sort of the centres into cells.
fn overlaps(discs: &[Disc], buckets: &mut Vec<Vec<usize>>, out: &mut Vec<f64>) {
    let side = SIDE as usize + 2;
    buckets.resize_with(side * side, Vec::new);
    buckets.iter_mut().for_each(Vec::clear);
    let cell = |p: DVec2| {
        let x = (p.x.floor() as i64 + 1).clamp(0, side as i64 - 1) as usize;
        let y = (p.y.floor() as i64 + 1).clamp(0, side as i64 - 1) as usize;
        (x, y)
    };
    for (i, d) in discs.iter().enumerate() {
        let (x, y) = cell(d.position);
        buckets[y * side + x].push(i);
    }
    out.clear();
    for (i, d) in discs.iter().enumerate() {
        let (x, y) = cell(d.position);
        let mut worst: f64 = 0.0;
        for by in y.saturating_sub(1)..=(y + 1).min(side - 1) {
            for bx in x.saturating_sub(1)..=(x + 1).min(side - 1) {
                for &j in &buckets[by * side + bx] {
                    if j != i {
                        let o = &discs[j];
                        worst = worst.max(d.radius + o.radius - d.position.distance(o.position));
                    }
                }
            }
        }
        out.push(worst);
    }
}

/// Steps the whole crossing once and prints its summary; returns the crowd
/// as it was 60 simulated seconds in.
fn crossing(grid: &Grid, options: &AvoidanceOptions) -> Vec<Disc> {
    let mut discs = crowd();
    let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    let (mut buckets, mut overlap) = (Vec::new(), Vec::new());
    let mut mid = None;
    let (mut in_walls, mut overlap_sum, mut overlap_worst, mut disc_frames) = (0, 0.0, 0.0_f64, 0);
    let (mut step_total, mut step_worst) = (Duration::ZERO, Duration::ZERO);
    let mut frames = 0;
    let mut all_arrived = None;
    let seconds: usize = std::env::var("CROSSING_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(900);
    while frames < seconds * 60 {
        if frames == 60 * 60 {
            mid = Some(discs.clone());
        }
        steer(&mut discs);
        let start = Instant::now();
        avoidance.step(&discs, &[grid], options, DT, &mut out);
        let took = start.elapsed();
        step_total += took;
        step_worst = step_worst.max(took);
        apply(&mut discs, &out);
        frames += 1;
        in_walls += discs
            .iter()
            .filter(|d| common::wall_distance(grid, d.position, 2) < d.radius - 1e-9)
            .count();
        overlaps(&discs, &mut buckets, &mut overlap);
        overlap_sum += overlap.iter().sum::<f64>();
        overlap_worst = overlap.iter().copied().fold(overlap_worst, f64::max);
        disc_frames += discs.len();
        if all_arrived.is_none() && discs.iter().all(|d| d.arrived) {
            all_arrived = Some(frames);
            break;
        }
    }
    let stuck = discs.iter().filter(|d| !d.arrived).count();
    eprintln!(
        "crossing of {} discs: {}, {in_walls} disc-frames inside a wall, overlap per disc-frame \
         mean {:.3} % and worst {:.1} % of the radius, {stuck} stuck, step mean {:.3} ms and max \
         {:.3} ms over {frames} frames",
        discs.len(),
        all_arrived.map_or_else(
            || format!("not all arrived in {:.0} s", frames as f64 * DT),
            |f| format!("all arrived in {:.1} s", f as f64 * DT)
        ),
        100.0 * overlap_sum / disc_frames as f64 / RADIUS,
        100.0 * overlap_worst / RADIUS,
        step_total.as_secs_f64() * 1e3 / frames as f64,
        step_worst.as_secs_f64() * 1e3,
    );
    mid.unwrap_or(discs)
}

fn avoidance(c: &mut Criterion) {
    let grid = grid();
    let options = AvoidanceOptions::default();
    let mut discs = crossing(&grid, &options);
    steer(&mut discs);
    let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    avoidance.step(&discs, &[&grid], &options, DT, &mut out);
    let mut group = c.benchmark_group("avoidance");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("door-2000", |b| {
        b.iter(|| {
            avoidance.step(black_box(&discs), &[&grid], &options, DT, &mut out);
            assert_eq!(out.len(), discs.len());
        });
    });
    group.finish();
}

criterion_group!(benches, avoidance);
criterion_main!(benches);
