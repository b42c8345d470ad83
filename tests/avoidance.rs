//! Local avoidance through the public API: discs with unusable numbers
//! stand still while the others move on, and points (discs of radius 0)
//! keep to free space and are not avoided.

use bevy_anyangle::avoidance::{Avoidance, AvoidanceOptions, Disc};
use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_math::DVec2;

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

#[test]
fn bad_input_stands_still() {
    let grid = Grid::new(10, 10).expect("a grid");
    let mut good = disc(DVec2::new(5.0, 5.0), 0.4, 1.0);
    good.preferred = DVec2::new(1.0, 0.0);
    let mut bad = [good; 6];
    bad[0].position.x = f64::NAN;
    bad[1].velocity.y = f64::INFINITY;
    bad[2].radius = f64::NAN;
    bad[3].radius = -1.0;
    bad[4].max_speed = f64::NAN;
    bad[5].grid = 3;
    let mut discs = bad.to_vec();
    discs.push(good);
    let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    let options = AvoidanceOptions::default();
    avoidance.step(&discs, &[&grid], &options, DT, &mut out);
    assert_eq!(out.len(), discs.len());
    for motion in &out[..6] {
        assert_eq!(motion.step, DVec2::ZERO);
        assert_eq!(motion.velocity, DVec2::ZERO);
    }
    assert!(
        out[6].step.x > 0.0,
        "the good disc ignores the bad ones: {:?}",
        out[6]
    );
    for dt in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        avoidance.step(&discs, &[&grid], &options, dt, &mut out);
        assert!(out.iter().all(|m| m.step == DVec2::ZERO));
    }
    let odd = AvoidanceOptions {
        time_horizon: f64::NAN,
        wall_horizon: 0.0,
        neighbour_distance: f64::NAN,
        max_neighbours: 0,
    };
    avoidance.step(&discs, &[&grid], &odd, DT, &mut out);
    assert!(out.iter().all(|m| m.step.is_finite()));
    avoidance.step(&[], &[], &options, DT, &mut out);
    assert!(out.is_empty());
}

#[test]
fn points_keep_to_free_space_and_are_not_avoided() {
    let grid = Grid::from_ascii(
        "....
         .##.
         ....",
    )
    .expect("a picture");
    let mut discs = [
        disc(DVec2::new(0.5, 1.5), 0.0, 2.0),
        disc(DVec2::new(0.6, 1.5), 0.3, 0.0),
    ];
    discs[0].preferred = DVec2::new(2.0, 0.3);
    let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    for _ in 0..120 {
        avoidance.step(&discs, &[&grid], &AvoidanceOptions::default(), DT, &mut out);
        let (p, step) = (discs[0].position, out[0].step);
        assert!(line_of_sight(&grid, p, p + step), "{p} + {step}");
        discs[0].position += step;
        assert_eq!(
            out[1].step,
            DVec2::ZERO,
            "the disc does not dodge the point"
        );
    }
    let p = discs[0].position;
    assert!(
        p.x > 1.5 && p.y >= 2.0,
        "it went round the blocked cells: {p}"
    );
}
