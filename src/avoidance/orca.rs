//! The half-plane of velocities one disc may take so as not to hit another, taking its share of the effort.
//!
//! This is the optimal reciprocal collision avoidance (ORCA) of van den
//! Berg, Guy, Lin and Manocha, "Reciprocal n-body collision avoidance"
//! (ISRR 2011). The velocity obstacle of disc B for disc A within horizon
//! `tau` is the set of relative velocities `vA - vB` that bring the discs
//! into contact before `tau`: a cone towards B truncated by a circle of
//! radius `(rA + rB) / tau` around `(pB - pA) / tau`. Let `u` be the
//! smallest change of the current relative velocity that takes it to the
//! obstacle's boundary, and `n` that boundary's outward normal there. A
//! takes half of `u`: it keeps to the velocities `v` with
//! `(v - (vA + u / 2)) · n >= 0`, and B, doing the same from its side, keeps
//! to the mirror half-plane, so that together they avoid the collision.
//! Uneven pairs split `u` otherwise: one takes a share `s` of it, keeping
//! to `(v - (vA + s u)) · n >= 0`.
//!
//! Discs already overlapping aim to be apart after one step: the obstacle
//! is then the circle of radius `(rA + rB) / dt` around `(pB - pA) / dt`.

use bevy_math::DVec2;

use super::lp::HalfPlane;

/// One side of a pair, as the other sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Body {
    /// Centre.
    pub(crate) position: DVec2,
    /// Current velocity.
    pub(crate) velocity: DVec2,
    /// Radius.
    pub(crate) radius: f64,
}

/// The ORCA half-plane of `me` with respect to `other` (see the
/// [module docs](self)), `me` taking `share` of the effort (half for an
/// even pair). `horizon` and `dt` are positive; `first` breaks the tie of
/// two discs at one point (the two sides of a pair must pass opposite
/// values).
pub(crate) fn orca(
    me: Body,
    other: Body,
    horizon: f64,
    dt: f64,
    first: bool,
    share: f64,
) -> HalfPlane {
    let position = other.position - me.position;
    let velocity = me.velocity - other.velocity;
    let distance_squared = position.length_squared();
    let reach = me.radius + other.radius;
    let (normal, change) = if distance_squared > reach * reach {
        // `w`: the relative velocity seen from the centre of the cutoff circle.
        let w = velocity - position / horizon;
        let w_squared = w.length_squared();
        let along = w.dot(position);
        if along < 0.0 && along * along > reach * reach * w_squared {
            // Closest to the cutoff circle.
            let w_length = w_squared.sqrt();
            let unit = w / w_length;
            (unit, unit * (reach / horizon - w_length))
        } else {
            // Closest to one of the legs of the cone.
            let leg = (distance_squared - reach * reach).sqrt();
            let direction = if position.perp_dot(w) > 0.0 {
                DVec2::new(
                    position.x * leg - position.y * reach,
                    position.x * reach + position.y * leg,
                ) / distance_squared
            } else {
                -DVec2::new(
                    position.x * leg + position.y * reach,
                    -position.x * reach + position.y * leg,
                ) / distance_squared
            };
            let change = velocity.dot(direction) * direction - velocity;
            (direction.perp(), change)
        }
    } else {
        // Overlapping: be apart after one step.
        let w = velocity - position / dt;
        let w_length = w.length();
        let unit = if w_length > 0.0 {
            w / w_length
        } else if distance_squared > 0.0 {
            -position / distance_squared.sqrt()
        } else if first {
            DVec2::X
        } else {
            DVec2::NEG_X
        };
        (unit, unit * (reach / dt - w_length))
    };
    HalfPlane {
        normal,
        offset: normal.dot(me.velocity + share * change),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(x: f64, y: f64, vx: f64, vy: f64) -> Body {
        Body {
            position: DVec2::new(x, y),
            velocity: DVec2::new(vx, vy),
            radius: 0.5,
        }
    }

    /// Whether velocities `va`, `vb` keep the discs apart for `horizon`.
    fn apart(a: Body, b: Body, va: DVec2, vb: DVec2, horizon: f64) -> bool {
        (0..=1000).all(|i| {
            let t = horizon * f64::from(i) / 1000.0;
            (a.position + va * t).distance(b.position + vb * t) >= a.radius + b.radius - 1e-9
        })
    }

    #[test]
    fn far_apart_discs_are_not_constrained() {
        let (a, b) = (body(0.0, 0.0, 1.0, 0.0), body(10.0, 0.0, -1.0, 0.0));
        let plane = orca(a, b, 1.0, 0.1, true, 0.5);
        assert!(plane.violation(a.velocity) < 0.0);
    }

    #[test]
    fn head_on_discs_give_way_to_opposite_sides_and_clear_each_other() {
        let (a, b) = (body(0.0, 0.0, 1.0, 0.0), body(3.0, 0.0, -1.0, 0.0));
        let (pa, pb) = (
            orca(a, b, 2.0, 0.1, true, 0.5),
            orca(b, a, 2.0, 0.1, false, 0.5),
        );
        assert!(pa.violation(a.velocity) > 0.0 && pb.violation(b.velocity) > 0.0);
        // The closest allowed velocities to the current ones.
        let va = a.velocity + pa.normal * pa.violation(a.velocity);
        let vb = b.velocity + pb.normal * pb.violation(b.velocity);
        assert!((pa.normal + pb.normal).length() < 1e-12, "mirror planes");
        assert!(apart(a, b, va, vb, 2.0), "{va} {vb}");
    }

    #[test]
    fn overlapping_discs_push_apart() {
        let (a, b) = (body(0.0, 0.0, 0.0, 0.0), body(0.5, 0.0, 0.0, 0.0));
        let plane = orca(a, b, 2.0, 0.1, true, 0.5);
        assert!(plane.normal.x < -0.99, "A is pushed away from B: {plane:?}");
        assert!(plane.offset > 0.0);
        let same = orca(a, body(0.0, 0.0, 0.0, 0.0), 2.0, 0.1, true, 0.5);
        let mirror = orca(body(0.0, 0.0, 0.0, 0.0), a, 2.0, 0.1, false, 0.5);
        assert_eq!(same.normal, -mirror.normal);
    }
}
