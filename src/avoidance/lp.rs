//! The small linear programs on velocities: half-planes, a speed limit, and the least-violation fallback.
//!
//! A velocity `v` is sought inside the disc `|v| <= max_speed` and inside
//! every [`HalfPlane`] `v · normal >= offset`. The half-planes are added one
//! at a time: while the current answer satisfies the next one it stays,
//! otherwise the new answer lies on that half-plane's line and is found by
//! a one-dimensional search along it against the earlier half-planes. This
//! is the incremental method of Seidel's algorithm (without the shuffle, the
//! lists are short), as ORCA uses it.
//!
//! When the half-planes have no common point, [`least_violation`] keeps the
//! first `hard` ones and minimises the largest violation of the others.

use bevy_math::DVec2;

/// Below this, two half-plane normals count as parallel.
const PARALLEL: f64 = 1e-12;

/// The velocities `v` with `v · normal >= offset`; `normal` has length 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HalfPlane {
    /// The unit normal, pointing into the allowed side.
    pub(crate) normal: DVec2,
    /// The least allowed value of `v · normal`.
    pub(crate) offset: f64,
}

impl HalfPlane {
    /// How far `v` is outside (positive) or inside (negative).
    #[inline]
    pub(crate) fn violation(&self, v: DVec2) -> f64 {
        self.offset - self.normal.dot(v)
    }
}

/// What a program optimises.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Goal {
    /// The allowed velocity closest to this one.
    Closest(DVec2),
    /// The allowed velocity furthest along this unit direction.
    Along(DVec2),
}

/// Solves the program over `planes` (in order) and the speed limit, starting
/// from `v` as the goal dictates.
///
/// Returns the number of half-planes satisfied before the first one that
/// could not be: `planes.len()` when all are; `v` then holds the optimum.
/// Otherwise `v` holds the optimum over the planes before the failing one.
pub(crate) fn solve(planes: &[HalfPlane], max_speed: f64, goal: Goal, v: &mut DVec2) -> usize {
    *v = match goal {
        Goal::Closest(target) if target.length_squared() > max_speed * max_speed => {
            target.normalize_or_zero() * max_speed
        }
        Goal::Closest(target) => target,
        Goal::Along(direction) => direction * max_speed,
    };
    for i in 0..planes.len() {
        if planes[i].violation(*v) > 0.0 {
            match on_line(&planes[..=i], max_speed, goal) {
                Some(found) => *v = found,
                None => return i,
            }
        }
    }
    planes.len()
}

/// The optimum on the line of the last of `planes`, subject to the others
/// and the speed limit, or `None` when that part of the line is empty.
fn on_line(planes: &[HalfPlane], max_speed: f64, goal: Goal) -> Option<DVec2> {
    let (line, earlier) = planes.split_last()?;
    // Points of the line: `base + t * along`.
    let base = line.normal * line.offset;
    let along = line.normal.perp();
    let room = max_speed * max_speed - line.offset * line.offset;
    if room < 0.0 {
        return None;
    }
    let half = room.sqrt();
    let (mut low, mut high) = (-half, half);
    for plane in earlier {
        // `plane` holds the points with `t * slope >= need`.
        let slope = plane.normal.dot(along);
        let need = plane.offset - plane.normal.dot(base);
        if slope.abs() <= PARALLEL {
            if need > 0.0 {
                return None;
            }
            continue;
        }
        let t = need / slope;
        if slope > 0.0 {
            low = low.max(t);
        } else {
            high = high.min(t);
        }
        if low > high {
            return None;
        }
    }
    let t = match goal {
        Goal::Closest(target) => (target - base).dot(along).clamp(low, high),
        Goal::Along(direction) if direction.dot(along) > 0.0 => high,
        Goal::Along(_) => low,
    };
    Some(base + t * along)
}

/// The velocity that keeps the first `hard` of `planes` and, among those,
/// makes the largest violation of the others as small as it can (the
/// others are tried in order from `from`, where the ordinary program
/// failed). `v` holds that program's partial answer on entry and the
/// result on return; `scratch` is reused memory.
///
/// The first `hard` planes must have a common point within the speed
/// limit.
pub(crate) fn least_violation(
    planes: &[HalfPlane],
    hard: usize,
    from: usize,
    max_speed: f64,
    v: &mut DVec2,
    scratch: &mut Vec<HalfPlane>,
) {
    let mut worst = 0.0;
    for i in from.max(hard)..planes.len() {
        let plane = planes[i];
        if plane.violation(*v) <= worst {
            continue;
        }
        // Keep the hard planes, and let no earlier soft plane be violated
        // more than this one: `(nj - ni) · v >= oj - oi`.
        scratch.clear();
        scratch.extend_from_slice(&planes[..hard]);
        for other in &planes[hard..i] {
            let normal = other.normal - plane.normal;
            let length = normal.length();
            if length <= PARALLEL {
                // Same direction: the two violations differ by a constant.
                continue;
            }
            scratch.push(HalfPlane {
                normal: normal / length,
                offset: (other.offset - plane.offset) / length,
            });
        }
        let mut candidate = *v;
        if solve(
            scratch,
            max_speed,
            Goal::Along(plane.normal),
            &mut candidate,
        ) == scratch.len()
        {
            *v = candidate;
        }
        worst = plane.violation(*v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane(nx: f64, ny: f64, offset: f64) -> HalfPlane {
        HalfPlane {
            normal: DVec2::new(nx, ny).normalize(),
            offset,
        }
    }

    #[test]
    fn free_goal_is_kept() {
        let mut v = DVec2::ZERO;
        let planes = [plane(1.0, 0.0, -1.0)];
        assert_eq!(
            solve(&planes, 2.0, Goal::Closest(DVec2::new(0.5, 0.5)), &mut v),
            1
        );
        assert_eq!(v, DVec2::new(0.5, 0.5));
    }

    #[test]
    fn goal_beyond_the_speed_limit_is_shortened() {
        let mut v = DVec2::ZERO;
        assert_eq!(
            solve(&[], 2.0, Goal::Closest(DVec2::new(3.0, 4.0)), &mut v),
            0
        );
        assert!((v - DVec2::new(1.2, 1.6)).length() < 1e-12);
    }

    #[test]
    fn goal_is_projected_on_a_violated_plane() {
        let mut v = DVec2::ZERO;
        let planes = [plane(1.0, 0.0, 0.5)];
        assert_eq!(
            solve(&planes, 2.0, Goal::Closest(DVec2::new(-1.0, 1.0)), &mut v),
            1
        );
        assert!((v - DVec2::new(0.5, 1.0)).length() < 1e-12);
    }

    #[test]
    fn corner_of_two_planes() {
        let mut v = DVec2::ZERO;
        let planes = [plane(1.0, 0.0, 0.5), plane(0.0, 1.0, 0.25)];
        assert_eq!(solve(&planes, 2.0, Goal::Closest(DVec2::ZERO), &mut v), 2);
        assert!((v - DVec2::new(0.5, 0.25)).length() < 1e-12);
    }

    #[test]
    fn infeasible_planes_report_where_they_failed() {
        let mut v = DVec2::ZERO;
        let planes = [plane(1.0, 0.0, 0.5), plane(-1.0, 0.0, 0.5)];
        assert_eq!(solve(&planes, 2.0, Goal::Closest(DVec2::ZERO), &mut v), 1);
        assert!(planes[0].violation(v) <= 1e-12);
        let beyond = [plane(1.0, 0.0, 3.0)];
        assert_eq!(solve(&beyond, 2.0, Goal::Closest(DVec2::ZERO), &mut v), 0);
    }

    #[test]
    fn least_violation_keeps_hard_planes_and_splits_the_rest() {
        // Hard: v.y >= 0. Soft: v.x >= 1 and v.x <= -1: the best split is
        // v.x = 0, both violated by 1.
        let planes = [
            plane(0.0, 1.0, 0.0),
            plane(1.0, 0.0, 1.0),
            plane(-1.0, 0.0, 1.0),
        ];
        let mut v = DVec2::ZERO;
        let failed = solve(&planes, 2.0, Goal::Closest(DVec2::new(0.0, -1.0)), &mut v);
        assert_eq!(failed, 2);
        let mut scratch = Vec::new();
        least_violation(&planes, 1, failed, 2.0, &mut v, &mut scratch);
        assert!(v.y >= -1e-12, "the hard plane holds: {v}");
        assert!(v.x.abs() < 1e-9, "violations split evenly: {v}");
    }
}
