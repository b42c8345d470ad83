//! `avoidance`: the core's local avoidance. A grid of up to 16 x 16 cells
//! as walls, up to 12 discs (positions anywhere in and a little around the
//! grid, velocities, preferred velocities, radii from 0 to a cell, speed
//! limits, goals, arrival flags; now and then a non-finite or negative
//! number, or an index of a grid that is not there), options and a frame
//! duration (some not positive or not finite), then up to 8 steps, each
//! moving every disc by its step.
//!
//! After every step, as the [`avoidance`](bevy_anyangle::avoidance) docs
//! promise: one motion per disc; with an unusable `dt`, every step and
//! velocity zero and every arrival flag kept; an unusable disc gets a zero
//! velocity and step and keeps its arrival flag; a usable disc gets a
//! finite step no longer than its speed limit times `dt` (plus 1e-12,
//! relative), and the velocity `step / dt`; a disc of radius above 0 whose
//! centre was at least its radius from every blocked cell and from the
//! grid's outside stays so all along its step (sampled every 1/64 cell and
//! at least 64 times, less 1e-9), and one whose centre lies inside a
//! blocked cell or outside the grid stands still; a disc of radius 0 that
//! stands on a traversable point steps along a visible segment. And, for
//! two discs that stand still and want to, far enough from every wall that
//! no wall has a say (more than their radius plus their speed limit times
//! the wall horizon): the step never makes them overlap more (plus 1e-9),
//! which ORCA guarantees for a pair whose velocities both lie in their
//! half-planes.

use bevy_anyangle::avoidance::{Avoidance, AvoidanceOptions, Disc, Motion};
use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;

use super::common::wall_distance;
use super::input::Input;
use super::picture;

/// Discs per input, at most.
const MAX_DISCS: u32 = 12;

/// Steps per input, at most.
const MAX_STEPS: u32 = 8;

/// A number from a small set of usable values, now and then one that is
/// not (NaN, an infinity, a negative one).
fn number(input: &mut Input<'_>, usable: &[f64]) -> f64 {
    let code = input.byte();
    if code >= 248 {
        [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0][usize::from(code & 3)]
    } else {
        usable[usize::from(code) % usable.len()]
    }
}

/// A coordinate in `-1 ..= side + 1`, on a lattice of about 1/4,000 of a
/// cell (two bytes).
fn coordinate(input: &mut Input<'_>, side: u32) -> f64 {
    let n = f64::from(u16::from_le_bytes([input.byte(), input.byte()]));
    n / 65535.0 * (f64::from(side) + 2.0) - 1.0
}

/// A velocity of up to 4 cells a second each way, or now and then one
/// with a non-finite component.
fn velocity(input: &mut Input<'_>) -> DVec2 {
    let (x, y) = (input.byte(), input.byte());
    let component = |b: u8| match b {
        255 => f64::NAN,
        254 => f64::INFINITY,
        _ => (f64::from(b) - 127.0) / 32.0,
    };
    DVec2::new(component(x), component(y))
}

fn disc(input: &mut Input<'_>, w: u32, h: u32) -> Disc {
    let position = DVec2::new(coordinate(input, w), coordinate(input, h));
    let flags = input.byte();
    Disc {
        position: if flags & 0xf0 == 0xf0 {
            DVec2::new(f64::NAN, position.y)
        } else {
            position
        },
        velocity: if flags & 1 == 0 {
            DVec2::ZERO
        } else {
            velocity(input)
        },
        preferred: if flags & 2 == 0 {
            DVec2::ZERO
        } else {
            velocity(input)
        },
        radius: number(
            input,
            &[0.0, 0.1, 0.25, 0.3, 0.4, 0.45, 0.5, 0.7, 1.0, 17.0 / 64.0],
        ),
        max_speed: number(input, &[0.0, 0.5, 1.0, 2.0, 4.0, 10.0]),
        grid: usize::from(flags & 0x0c == 0x0c),
        goal: (flags & 0x10 != 0).then(|| {
            let id = u64::from(input.below(3));
            (id, DVec2::new(coordinate(input, w), coordinate(input, h)))
        }),
        arrived: flags & 0x20 != 0,
    }
}

/// Runs the `avoidance` check on one input.
///
/// # Panics
///
/// When a step breaks a promise of the avoidance docs.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let grid = input.grid();
    let (w, h) = (grid.width(), grid.height());
    let options = AvoidanceOptions {
        time_horizon: number(&mut input, &[1.0, 0.25, 0.0, 3.0]),
        wall_horizon: number(&mut input, &[0.25, 0.0, 1.0, 0.05]),
        neighbour_distance: number(&mut input, &[2.0, 0.5, 10.0]),
        max_neighbours: [10, 0, 1, 3, 100][input.below(5) as usize],
    };
    let dt = number(
        &mut input,
        &[1.0 / 60.0, 1.0 / 30.0, 0.1, 0.25, 1.0 / 60.0, 0.0],
    );
    let steps = 1 + input.below(MAX_STEPS);
    let mut discs: Vec<Disc> = (0..=input.below(MAX_DISCS))
        .map(|_| disc(&mut input, w, h))
        .collect();
    let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    for step in 0..steps {
        avoidance.step(&discs, &[&grid], &options, dt, &mut out);
        let report = |what: String| {
            format!(
                "step {step}, dt {dt}, {options:?}: {what}\ndiscs {discs:#?}\non\n{}",
                picture(&grid)
            )
        };
        assert_eq!(
            out.len(),
            discs.len(),
            "{}",
            report("one motion per disc".into())
        );
        let usable_dt = dt > 0.0 && dt.is_finite();
        for (k, (disc, motion)) in discs.iter().zip(&out).enumerate() {
            if let Err(why) = check_motion(&grid, disc, motion, dt, usable_dt) {
                panic!("{}", report(format!("disc {k}: {why}: {motion:?}")));
            }
        }
        if usable_dt && let Err(why) = check_pair(&grid, &discs, &out, &options, dt) {
            panic!("{}", report(why));
        }
        for (disc, motion) in discs.iter_mut().zip(&out) {
            disc.position += motion.step;
            disc.velocity = motion.velocity;
            disc.arrived = motion.arrived;
        }
    }
}

/// Whether the disc's numbers are usable (the avoidance docs' list).
fn usable(disc: &Disc) -> bool {
    disc.position.is_finite()
        && disc.velocity.is_finite()
        && disc.preferred.is_finite()
        && disc.radius.is_finite()
        && disc.radius >= 0.0
        && disc.max_speed.is_finite()
        && disc.max_speed >= 0.0
        && disc.grid == 0
}

/// Distance from `p` to the nearest blocked cell or the grid's outside,
/// looking far enough for `radius`.
fn clearance(grid: &Grid, p: DVec2, radius: f64) -> f64 {
    wall_distance(grid, p, radius.ceil() as i64 + 2)
}

/// One disc's motion against the docs.
fn check_motion(
    grid: &Grid,
    disc: &Disc,
    motion: &Motion,
    dt: f64,
    usable_dt: bool,
) -> Result<(), String> {
    if !usable_dt || !usable(disc) {
        if motion.step != DVec2::ZERO || motion.velocity != DVec2::ZERO {
            return Err("moves without a usable dt or with unusable numbers".into());
        }
        if motion.arrived != disc.arrived {
            return Err("an unusable disc changed its arrival flag".into());
        }
        return Ok(());
    }
    if !motion.step.is_finite() || !motion.velocity.is_finite() {
        return Err("a non-finite motion".into());
    }
    let length = motion.step.length();
    let limit = disc.max_speed * dt;
    if length > limit * (1.0 + 1e-12) + 1e-12 {
        return Err(format!("a step of {length}, above {limit}"));
    }
    if (motion.velocity * dt - motion.step).length() > 1e-9 * (1.0 + length) {
        return Err("the velocity is not step / dt".into());
    }
    let (p, (wd, hd)) = (
        disc.position,
        (f64::from(grid.width()), f64::from(grid.height())),
    );
    if disc.radius > 0.0 {
        let inside_blocked = p.x.fract() != 0.0
            && p.y.fract() != 0.0
            && !grid.is_free_xy(p.x.floor() as i64, p.y.floor() as i64);
        let outside = p.x < 0.0 || p.y < 0.0 || p.x > wd || p.y > hd;
        if (inside_blocked || outside) && motion.step != DVec2::ZERO {
            return Err("a disc inside a wall or outside the grid moved".into());
        }
        if clearance(grid, p, disc.radius) >= disc.radius {
            let samples = ((length * 64.0).ceil() as u32).max(64);
            for i in 0..=samples {
                let q = p + motion.step * (f64::from(i) / f64::from(samples));
                let d = clearance(grid, q, disc.radius);
                if d < disc.radius - 1e-9 {
                    return Err(format!(
                        "a disc clear of the walls passes {q}, {d} from a wall"
                    ));
                }
            }
        }
    } else if grid.is_point_traversable(p) && !line_of_sight(grid, p, p + motion.step) {
        return Err("a point steps along a segment it does not see".into());
    }
    Ok(())
}

/// Two discs at rest that want to stay there, out of the walls' reach:
/// their overlap does not grow.
fn check_pair(
    grid: &Grid,
    discs: &[Disc],
    out: &[Motion],
    options: &AvoidanceOptions,
    dt: f64,
) -> Result<(), String> {
    let [a, b] = discs else { return Ok(()) };
    let horizon = if options.wall_horizon > dt {
        options.wall_horizon
    } else {
        dt
    };
    let calm = |d: &Disc| {
        usable(d) && d.radius > 0.0 && d.velocity == DVec2::ZERO && d.preferred == DVec2::ZERO && {
            // (An infinite wall horizon reaches every wall: never calm.)
            let reach = d.radius + d.max_speed * horizon + 0.01;
            reach < 64.0 && wall_distance(grid, d.position, reach.ceil() as i64 + 2) > reach
        }
    };
    if !(calm(a) && calm(b)) {
        return Ok(());
    }
    let overlap = |p: DVec2, q: DVec2| (a.radius + b.radius - p.distance(q)).max(0.0);
    let before = overlap(a.position, b.position);
    let after = overlap(a.position + out[0].step, b.position + out[1].step);
    if after > before + 1e-9 {
        return Err(format!(
            "two discs at rest overlapped by {before}, after the step by {after}"
        ));
    }
    Ok(())
}
