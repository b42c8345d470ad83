//! Agents with a radius: paths planned on eroded grids, checked against the
//! definition by brute force.
//!
//! Every path is validated by the independent reference of `tests/common` on
//! the eroded grid (Anya's length against its optimum there), and then
//! sampled densely: every sample's distance to every blocked cell of the
//! *original* grid (and to its outside) must be at least the radius asked
//! for. Radii are turned into clearance classes as `Clearance::from_radius`
//! documents.

mod common;

use bevy_anyangle::clearance::{Clearance, ClearanceError, ErodedGrid, MAX_RADIUS, erode};
use bevy_anyangle::prelude::*;
use common::Reference;
use common::generate::{Family, PointKind, Rng, grid_of, point};
use common::harness::{Optimality, Tally, check_query};
use common::{path_clearance, wall_distance};

/// Radii, in cells, the runs draw from.
const RADII: [f64; 8] = [0.2, 0.5, 1.0, 1.2, 1.5, 2.2, 3.0, 4.5];

/// The clearance of a path, computed exactly segment by cell, is never more
/// than the least distance of dense samples along it (every 1/256 cell),
/// and falls short of it by no more than sampling can miss.
#[test]
fn path_clearance_is_exact() {
    let mut rng = Rng::new(0xc1ea_7a4c);
    for case in 0..400 {
        let generated = common::generate::random_grid(&mut rng, 24);
        let grid = &generated.grid;
        let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
        let points: Vec<DVec2> = (0..=rng.below(4))
            .map(|_| {
                DVec2::new(
                    rng.unit() * f64::from(grid.width()),
                    rng.unit() * f64::from(grid.height()),
                )
            })
            .collect();
        let within = 3;
        let (exact, at) = path_clearance(grid, &points, within);
        let mut sampled = f64::INFINITY;
        for pair in points.windows(2) {
            let steps = ((pair[0].distance(pair[1]) * 256.0).ceil() as usize).max(1);
            for i in 0..=steps {
                let p = pair[0].lerp(pair[1], i as f64 / steps as f64);
                sampled = sampled.min(wall_distance(grid, p, within + 1));
            }
        }
        if let [p] = points[..] {
            sampled = wall_distance(grid, p, within);
        }
        // Walls beyond `within` may be seen by one and not the other.
        let (exact, sampled) = (
            exact.min(f64::from(within as u32)),
            sampled.min(f64::from(within as u32)),
        );
        assert!(
            exact <= sampled + 1e-12 && sampled - exact < 1.0 / 256.0,
            "case {case} ({w} x {h}): exact {exact} at {at}, sampled {sampled}: {points:?}"
        );
    }
}

#[test]
fn paths_on_eroded_grids_keep_the_radius_from_every_obstacle() {
    let mut rng = Rng::new(0xc1ea_5a9c);
    let mut tally = Tally::default();
    let mut planner = Planner::new();
    let mut paths = 0;
    let mut moved = 0;
    for case in 0..400 {
        let family = Family::ALL[case % Family::ALL.len()];
        let (w, h) = (rng.range(6, 40), rng.range(6, 40));
        let generated = grid_of(&mut rng, family, w, h);
        let radius = *rng.pick(&RADII);
        let clearance = Clearance::from_radius(radius).unwrap();
        let eroded = erode(&generated.grid, clearance);
        let reference = Reference::new(&eroded);
        if eroded.free_count() == 0 {
            continue;
        }
        for _ in 0..4 {
            let kind = *rng.pick(&[PointKind::Centre, PointKind::Float, PointKind::Half]);
            let (start, goal) = (point(&mut rng, kind, w, h), point(&mut rng, kind, w, h));
            for (algorithm, optimality) in [
                (Algorithm::Anya, Optimality::Optimum),
                (Algorithm::LazyTheta, Optimality::AtLeastOptimum),
                (Algorithm::AStar, Optimality::GridOptimum),
            ] {
                let options = PlanOptions::with_algorithm(algorithm);
                let result = planner.plan(&eroded, start, goal, &options);
                let context = || {
                    format!(
                        "{family:?} {w}x{h}, radius {radius}, {algorithm} from {start} to {goal}\n{}",
                        generated.picture
                    )
                };
                if let Err(why) = check_query(
                    &reference,
                    algorithm,
                    optimality,
                    (start, goal),
                    &result,
                    &mut tally,
                ) {
                    panic!("{why}\n{}", context());
                }
                let path = result.unwrap();
                let within = i64::from(clearance.reach()) + 2;
                let (worst, at) = path_clearance(&generated.grid, &path.waypoints, within);
                assert!(
                    worst >= radius - 1e-9 && worst >= clearance.radius() - 1e-9,
                    "a point of the path, {at}, is {worst} from an obstacle (radius {radius}): \
                     {:?}\n{}",
                    path.waypoints,
                    context()
                );
                paths += 1;
                moved += usize::from(path.start_moved_from.is_some());
            }
        }
    }
    assert!(paths > 2_000, "only {paths} paths checked");
    assert!(moved > 200, "only {moved} moved starts");
    assert!(tally.fallback > 50, "only {} fallbacks", tally.fallback);
}

#[test]
fn a_start_too_close_to_a_wall_moves_off_it_and_is_reported() {
    let grid = Grid::from_ascii(
        "##########
         #........#
         #........#
         #........#
         #........#
         #........#
         ##########",
    )
    .unwrap();
    let eroded = ErodedGrid::new(&grid, Clearance::from_radius(1.0).unwrap());
    // Free on the eroded grid: cells 2..=7 x 2..=4.
    let start = DVec2::new(1.2, 1.3);
    let path = plan(
        eroded.grid(),
        start,
        DVec2::new(8.5, 5.5),
        &PlanOptions::default(),
    )
    .unwrap();
    assert_eq!(path.start_moved_from, Some(start));
    assert_eq!(path.start(), DVec2::new(2.0, 2.0));
    assert!(path.is_fallback(), "the goal is too close to the wall too");
    assert_eq!(path.end(), DVec2::new(8.0, 5.0));
    assert_eq!(
        path.waypoints.len(),
        2,
        "one straight line: {:?}",
        path.waypoints
    );
}

#[test]
fn eroded_grids_follow_edits_and_paths_on_them_stay_clear() {
    let mut rng = Rng::new(77);
    for case in 0..30 {
        let (w, h) = (rng.range(12, 48), rng.range(12, 48));
        let mut grid = grid_of(&mut rng, Family::Random, w, h).grid;
        let radius = *rng.pick(&RADII);
        let clearance = Clearance::from_radius(radius).unwrap();
        let mut eroded = ErodedGrid::new(&grid, clearance);
        for step in 0..40 {
            let (x, y) = (rng.below(w as u64) as u32, rng.below(h as u64) as u32);
            let rect = URect::new(x, y, (x + 3).min(w as u32), (y + 2).min(h as u32));
            let free = rng.chance(0.5);
            grid.edit(|e| e.set_rect_free(rect, free)).unwrap();
            if step % 3 == 0 {
                eroded.sync(&grid);
            } else {
                eroded.update(&grid, [rect]);
            }
            assert_eq!(
                eroded.grid(),
                &erode(&grid, clearance),
                "case {case} step {step}"
            );
            let (s, t) = (
                point(&mut rng, PointKind::Float, w, h),
                point(&mut rng, PointKind::Float, w, h),
            );
            let Ok(path) = plan(eroded.grid(), s, t, &PlanOptions::default()) else {
                assert_eq!(eroded.grid().free_count(), 0);
                continue;
            };
            let within = i64::from(clearance.reach()) + 2;
            let (worst, at) = path_clearance(&grid, &path.waypoints, within);
            assert!(
                worst >= radius - 1e-9,
                "case {case} step {step}: {at} is {worst} from a wall"
            );
        }
    }
}

#[test]
fn an_agent_that_does_not_fit_starts_at_the_nearest_place_in_sight_where_it_does() {
    let mut rng = Rng::new(0x51a7);
    let (mut moved, mut cramped) = (0, 0);
    for case in 0..300 {
        let family = Family::ALL[case % Family::ALL.len()];
        let (w, h) = (rng.range(6, 30), rng.range(6, 30));
        let base = grid_of(&mut rng, family, w, h).grid;
        let clearance = Clearance::from_radius(*rng.pick(&RADII)).unwrap();
        let eroded = erode(&base, clearance);
        if eroded.free_count() == 0 {
            continue;
        }
        for _ in 0..6 {
            let p = point(&mut rng, PointKind::Float, w, h);
            if !base.is_point_traversable(p) || eroded.is_point_traversable(p) {
                continue;
            }
            // Brute force: the clamped point of every free eroded cell that
            // `p` sees on the base grid and walks to without coming closer
            // to a wall than `keep` (sampled: a candidate counts when it
            // clears `keep` by more than the sampling step).
            let within = i64::from(clearance.reach()) + 2;
            let keep = wall_distance(&base, p, within).min(clearance.radius());
            let walk_clearance = |q: DVec2| {
                let steps = ((q.distance(p) * 256.0).ceil() as usize).max(1);
                (0..=steps)
                    .map(|i| wall_distance(&base, p.lerp(q, i as f64 / steps as f64), within))
                    .fold(f64::INFINITY, f64::min)
            };
            let mut best: Option<f64> = None;
            for y in 0..h {
                for x in 0..w {
                    if !eroded.is_free_xy(x, y) {
                        continue;
                    }
                    let q = p.clamp(
                        DVec2::new(x as f64, y as f64),
                        DVec2::new((x + 1) as f64, (y + 1) as f64),
                    );
                    if bevy_anyangle::los::line_of_sight(&base, p, q)
                        && walk_clearance(q) >= keep + 1.0 / 256.0
                    {
                        let d = q.distance(p);
                        best = Some(best.map_or(d, |b: f64| b.min(d)));
                    }
                }
            }
            let found = bevy_anyangle::clearance::start_point(&base, &eroded, clearance, p);
            match (found, best) {
                (Some(q), best) => {
                    moved += 1;
                    assert!(
                        bevy_anyangle::los::line_of_sight(&base, p, q),
                        "case {case}: {p} -> {q} crosses a wall"
                    );
                    assert!(
                        eroded.is_point_traversable(q),
                        "case {case}: {q} is not free"
                    );
                    assert!(
                        walk_clearance(q) >= keep - 1e-9,
                        "case {case}: the walk {p} -> {q} comes closer to a wall than {keep}"
                    );
                    // (A double-corner vertex is nudged 1/1024 into its cell.)
                    if let Some(d) = best {
                        assert!(
                            q.distance(p) <= d + 2e-3,
                            "case {case}: {q} is not the nearest ({d})"
                        );
                    }
                }
                (None, None) => cramped += 1,
                (None, Some(d)) => {
                    panic!("case {case} at {p}: none found, brute force has one {d} away")
                }
            }
        }
    }
    assert!(
        moved > 100 && cramped > 5,
        "moved {moved}, cramped {cramped}"
    );
}

#[test]
fn classes_are_the_sums_of_two_squares_at_or_above_the_squared_radius() {
    let s = |r: f64| Clearance::from_radius(r).unwrap().squared();
    assert_eq!(s(0.0), 0);
    assert_eq!(s(f64::MIN_POSITIVE), 1);
    assert_eq!(s(1.0), 1);
    assert_eq!(s(1.0 + f64::EPSILON), 2);
    assert_eq!(s(2f64.sqrt()), 4, "the f64 nearest √2 lies above √2");
    assert_eq!(s(1.9), 4);
    assert_eq!(s(2.0), 4);
    assert_eq!(s(2.5), 8, "6.25 -> 8 (6 and 7 are not sums of two squares)");
    assert_eq!(s(3.0), 9);
    assert_eq!(s(MAX_RADIUS), 65536);
    let classes: std::collections::BTreeSet<u32> =
        (0..=300).map(|i| s(f64::from(i) * 0.01)).collect();
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        vec![0, 1, 2, 4, 5, 8, 9]
    );
    assert_eq!(
        Clearance::from_radius(-0.1),
        Err(ClearanceError::BadRadius(-0.1))
    );
    assert!(Clearance::from_radius(f64::NAN).is_err());
    assert!(Clearance::from_radius(f64::INFINITY).is_err());
    assert_eq!(
        Clearance::from_radius(256.5),
        Err(ClearanceError::TooLarge(256.5))
    );
    let c = Clearance::from_radius(2.2).unwrap();
    assert_eq!((c.squared(), c.reach()), (5, 3));
    assert!((c.radius() - 5f64.sqrt()).abs() < 1e-15);
}
