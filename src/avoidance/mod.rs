//! Local avoidance: disc agents that keep clear of each other and of a grid's walls, frame by frame.
//!
//! A path tells an agent where to go; [`Avoidance::step`] tells a crowd of
//! them how to get there this frame without walking through each other or
//! through walls. Everything is in grid coordinates (one cell is one unit,
//! see the [`grid`](crate::grid) docs), speeds in cells per second.
//!
//! Each [`Disc`] states where it is, how it moved last frame, where its
//! path wants it to go (its preferred velocity) and how fast it may go.
//! A step then, for every disc:
//!
//! 1. **Neighbours.** Finds the [`max_neighbours`](AvoidanceOptions::max_neighbours)
//!    nearest other discs within
//!    [`neighbour_distance`](AvoidanceOptions::neighbour_distance) (a spatial
//!    hash kept between steps).
//! 2. **Arrival.** Decides whether the disc has arrived at its goal (see
//!    [Arrival](#arrival)); an arrived disc wants to stand still.
//!    **Keeping right.** A disc that has another disc ahead in its way
//!    wanting to go the opposite way turns its preferred velocity by about
//!    80° to its right (towards +y when it heads towards +x). Two discs
//!    meeting exactly head-on would otherwise only slow down: the
//!    velocities avoidance allows go round each other, but the ones closest
//!    to what they want point straight ahead.
//! 3. **Velocity.** Chooses the velocity closest to the preferred one among
//!    the velocities allowed by
//!    - one half-plane per neighbour, from optimal reciprocal collision
//!      avoidance (ORCA: van den Berg, Guy, Lin, Manocha, "Reciprocal n-body
//!      collision avoidance", ISRR 2011): the velocities that keep the pair
//!      apart for [`time_horizon`](AvoidanceOptions::time_horizon) seconds
//!      if the other does its half of the work (or, between a disc with
//!      the [right of way](#right-of-way) and one without, a tenth and all
//!      of it). Discs already overlapping aim to be apart after one step;
//!    - one half-plane per nearby wall (up to 8, from the nearest points of
//!      blocked cells that border free ones): with `d` the gap between the
//!      disc and the wall and `n` the direction from the wall to the disc,
//!      `v · n >= -d / wall_horizon`, so that the disc closes the gap no
//!      faster than in [`wall_horizon`](AvoidanceOptions::wall_horizon)
//!      seconds;
//!    - the disc's speed limit.
//!
//!    Wall half-planes are hard, neighbour half-planes soft: when they
//!    have no common velocity, the disc keeps the wall half-planes and
//!    minimises the largest violation of the others. When the wall
//!    half-planes alone leave no velocity within the speed limit (a disc
//!    already closer to walls than its radius, that cannot back off as
//!    fast as they ask), they only ask it to come no closer to any of
//!    them; should even that fail, it stands still.
//! 4. **The safe step.** Turns the velocity into this frame's displacement
//!    ([`Motion::step`]) and makes it safe: the disc's centre keeps at
//!    least its radius from every blocked cell (and from the outside of the
//!    grid) along the whole segment it moves, not only at its end. The
//!    displacement is cut where the swept disc would first come within its
//!    radius plus 10⁻⁹ of a wall (the margin absorbs the rounding of later
//!    arithmetic), then what is left slides once along that wall, checked
//!    the same way.
//!
//! # Guarantees and edge cases
//!
//! - A disc whose centre is at least its radius from every blocked cell
//!   before a step is so after it, and along the way.
//! - A disc already closer than its radius to a wall (spawned there, or a
//!   wall was built on it) only moves in directions that take it no closer
//!   to any wall it overlaps; a disc whose centre is inside a blocked cell
//!   or outside the grid stands still.
//! - A disc of radius 0 takes no part in avoidance: nobody avoids it, and
//!   it avoids nobody. Its preferred velocity (within its speed limit) is
//!   made safe for a point: it moves along a segment visible by
//!   [`line_of_sight`](crate::los::line_of_sight) (the longest visible
//!   prefix, found by halving, then a slide along one axis).
//! - A disc with a non-finite position, velocity, preferred velocity,
//!   radius or speed limit, a negative radius or speed limit, or a grid
//!   index out of range, gets a zero velocity and step and keeps its
//!   arrival flag; the others ignore it.
//! - A `dt` that is not positive and finite gives every disc a zero
//!   velocity and step.
//! - Horizons shorter than `dt` (or not numbers) count as `dt`.
//!
//! # Arrival
//!
//! Many agents sent to one point cannot all stand on it. A disc with a
//! [`goal`](Disc::goal) `(id, point)` that has not arrived yet arrives when
//!
//! - its centre is within half its radius (at least 0.05 cells) of the
//!   point, or
//! - it touches (centre distance at most the sum of the radii plus a tenth
//!   of its own) an arrived disc of the same goal id that is closer to the
//!   point than itself, and it is within `(2 sqrt(n) + 2) r` of the point,
//!   where `n` counts the arrived discs of that goal id and `r` is its
//!   radius.
//!
//! So a stream of discs ending in a crowd stops at the crowd's edge, while
//! a disc held up far from its goal by a stranger does not stop. Arrived
//! discs prefer to stand still, but still give way to others. A disc stays
//! arrived; the caller clears [`Disc::arrived`] when its goal changes.
//!
//! # Right of way
//!
//! Reciprocity alone can leave two crowds pressed against each other in a
//! door, each waiting for the other to give way. So some pairs are not
//! even:
//!
//! - a disc that has not arrived has the right of way over one that has;
//! - of two discs that have not arrived, whose preferred velocities point
//!   away from each other (`a · b < 0`) and that both have a goal, the one
//!   closer to its goal point (straight-line distance, by more than its
//!   radius) has it.
//!
//! The disc without the right of way takes all of the pair's avoidance
//! effort, reckoning that the other will move at its preferred velocity;
//! the one with it takes a tenth (so that it still slows down for a disc
//! that cannot make way). So arrived discs are pushed aside by the ones
//! passing through them, and in a door the stream that has got further
//! comes out before the other goes in.
//!
//! # Cost
//!
//! A step takes time linear in the number of discs (each sees at most
//! `max_neighbours` others and a few cells around it) and, once its
//! memory has grown to the crowd's size, allocates nothing.

mod lp;
mod neighbours;
mod orca;
#[cfg(test)]
mod tests;
mod walls;

use bevy_math::DVec2;

use crate::fast_hash::FastMap;
use crate::grid::Grid;
use lp::{Goal, HalfPlane, least_violation, solve};
use neighbours::SpatialHash;
use orca::{Body, orca};
use walls::{safe_step, wall_planes};

/// How far ahead avoidance looks, and how many neighbours it considers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AvoidanceOptions {
    /// Seconds ahead within which discs avoid contact with each other.
    /// Longer horizons give way earlier and more timidly. Default 1.
    pub time_horizon: f64,
    /// Seconds within which a disc may close the gap to a wall. Default
    /// 0.25.
    pub wall_horizon: f64,
    /// The distance between centres, in cells, within which other discs
    /// count as neighbours (overlapping discs always do). Default 2.
    pub neighbour_distance: f64,
    /// How many of the nearest neighbours a disc avoids. Default 10.
    pub max_neighbours: usize,
}

impl Default for AvoidanceOptions {
    fn default() -> Self {
        Self {
            time_horizon: 1.0,
            wall_horizon: 0.25,
            neighbour_distance: 2.0,
            max_neighbours: 10,
        }
    }
}

/// One agent as avoidance sees it, in grid coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Disc {
    /// The centre.
    pub position: DVec2,
    /// The velocity of the last step (cells per second): what the others
    /// expect it to keep doing.
    pub velocity: DVec2,
    /// The velocity its path asks for (cells per second).
    pub preferred: DVec2,
    /// The radius, in cells. 0 takes no part in avoidance (see the
    /// [module docs](self)).
    pub radius: f64,
    /// The highest speed, in cells per second.
    pub max_speed: f64,
    /// Index into the `grids` passed to [`Avoidance::step`] of the grid
    /// whose walls this disc keeps `radius` from.
    pub grid: usize,
    /// An id of its final goal and that goal's point, for arrival (see
    /// [Arrival](self#arrival)); `None` never arrives.
    pub goal: Option<(u64, DVec2)>,
    /// Whether it has arrived (as the last step reported).
    pub arrived: bool,
}

/// What one step decided for one disc.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// The velocity the step realises: `step / dt`. Pass it back as
    /// [`Disc::velocity`] next time.
    pub velocity: DVec2,
    /// The displacement to apply this frame: the chosen velocity times
    /// `dt`, made safe against the walls.
    pub step: DVec2,
    /// Whether the disc counts as arrived after this step.
    pub arrived: bool,
}

/// How far a disc turns its preferred velocity to the right when another
/// disc comes at it head-on (radians).
const KEEP_RIGHT: f64 = 1.4;

/// `preferred` turned by [`KEEP_RIGHT`] to the right of its direction when
/// one of `neighbours` ahead of `disc`, in its way, wants to go the other
/// way; otherwise `preferred` itself.
fn keep_right<'a>(
    disc: &Disc,
    preferred: DVec2,
    mut neighbours: impl Iterator<Item = &'a Disc>,
) -> DVec2 {
    let speed = preferred.length();
    if speed == 0.0 {
        return preferred;
    }
    let direction = preferred / speed;
    let oncoming = neighbours.any(|other| {
        let offset = other.position - disc.position;
        !other.arrived
            && offset.dot(direction) > 0.0
            && offset.perp_dot(direction).abs() < 2.0 * disc.radius + other.radius
            && other.preferred.dot(direction) < 0.0
    });
    if oncoming {
        DVec2::from_angle(KEEP_RIGHT).rotate(preferred)
    } else {
        preferred
    }
}

/// The share of the avoidance effort a disc with the right of way takes
/// (the other takes all of it).
const HOLDER_SHARE: f64 = 0.1;

/// Whether disc `a` has the right of way over disc `b` (`Some(true)`), `b`
/// over `a` (`Some(false)`), or neither (see [Right of way](self#right-of-way)).
fn right_of_way(a: &Disc, b: &Disc) -> Option<bool> {
    match (a.arrived, b.arrived) {
        (false, true) => return Some(true),
        (true, false) => return Some(false),
        (true, true) => return None,
        (false, false) => {}
    }
    if a.preferred.dot(b.preferred) >= 0.0 {
        return None;
    }
    let (Some((_, ga)), Some((_, gb))) = (a.goal, b.goal) else {
        return None;
    };
    let (da, db) = (a.position.distance(ga), b.position.distance(gb));
    if da < db - a.radius {
        Some(true)
    } else if db < da - b.radius {
        Some(false)
    } else {
        None
    }
}

/// The smallest distance to its goal point at which a disc arrives.
const ARRIVE_DISTANCE: f64 = 0.05;

/// Local avoidance for a crowd of discs (see the [module docs](self)): the
/// memory it reuses from step to step.
#[derive(Debug, Default)]
pub struct Avoidance {
    /// Discs that take part in avoidance.
    hash: SpatialHash,
    /// Per disc: whether its input is usable.
    usable: Vec<bool>,
    /// Neighbour lists, one after another; disc `i`'s are
    /// `neighbours[first[i]..first[i + 1]]`.
    neighbours: Vec<u32>,
    /// Where each disc's neighbours start in `neighbours`.
    first: Vec<u32>,
    /// The nearest candidates of one disc: squared distance (as `f32`
    /// bits) and index.
    nearest: Vec<u64>,
    /// Arrived discs per goal id.
    arrived_per_goal: FastMap<u64, u32>,
    /// Per disc: arrived after this step.
    arrived: Vec<bool>,
    /// One disc's half-planes: walls first, then neighbours.
    planes: Vec<HalfPlane>,
    /// The half-planes of the least-violation program.
    relaxed: Vec<HalfPlane>,
    /// Nearby wall points of one disc.
    wall_points: Vec<(f64, DVec2)>,
}

impl Disc {
    /// Whether every number is usable and the grid exists.
    fn usable(&self, grids: &[&Grid]) -> bool {
        self.position.is_finite()
            && self.velocity.is_finite()
            && self.preferred.is_finite()
            && self.radius.is_finite()
            && self.radius >= 0.0
            && self.max_speed.is_finite()
            && self.max_speed >= 0.0
            && self.grid < grids.len()
    }

    /// Whether its goal counts as reached from where it stands, given the
    /// arrived discs of its goal around it.
    fn reaches_goal(&self, mut neighbours: impl Iterator<Item = Self>, arrived_here: u32) -> bool {
        let Some((id, point)) = self.goal.filter(|(_, p)| p.is_finite()) else {
            return false;
        };
        let distance = self.position.distance(point);
        if distance <= (0.5 * self.radius).max(ARRIVE_DISTANCE) {
            return true;
        }
        let bound = (2.0 * f64::from(arrived_here).sqrt() + 2.0) * self.radius;
        distance <= bound
            && neighbours.any(|other| {
                other.arrived
                    && other.goal.is_some_and(|(other_id, _)| other_id == id)
                    && other.position.distance(point) < distance
                    && other.position.distance(self.position) <= other.radius + 1.1 * self.radius
            })
    }
}

impl Avoidance {
    /// New, with no memory grown yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// One frame of avoidance: for every disc of `discs` (in order), its
    /// velocity, its safe displacement for `dt` seconds, and whether it has
    /// arrived, written to `out` (cleared first).
    ///
    /// - `discs`: the crowd; see [`Disc`] for each field's contract. A disc
    ///   with unusable numbers stands still (see the
    ///   [module docs](self#guarantees-and-edge-cases)).
    /// - `grids`: the grids the discs' [`Disc::grid`] index into (agents of
    ///   different sizes may keep to different grids; they still avoid each
    ///   other).
    /// - `options`: horizons and neighbours.
    /// - `dt`: the frame's duration in seconds; not positive or not finite
    ///   gives every disc a zero step.
    ///
    /// # Example
    ///
    /// Two discs walking at each other along a corridor pass each other
    /// without touching:
    ///
    /// ```
    /// use bevy_anyangle::avoidance::{Avoidance, AvoidanceOptions, Disc};
    /// use bevy_anyangle::prelude::{DVec2, Grid};
    ///
    /// let grid = Grid::new(12, 3).unwrap();
    /// let disc = |x: f64, direction: f64| Disc {
    ///     position: DVec2::new(x, 1.5),
    ///     velocity: DVec2::ZERO,
    ///     preferred: DVec2::new(direction, 0.0),
    ///     radius: 0.4,
    ///     max_speed: 1.0,
    ///     grid: 0,
    ///     goal: None,
    ///     arrived: false,
    /// };
    /// let mut discs = [disc(2.0, 1.0), disc(10.0, -1.0)];
    /// let (mut avoidance, mut out) = (Avoidance::new(), Vec::new());
    /// for _ in 0..600 {
    ///     avoidance.step(&discs, &[&grid], &AvoidanceOptions::default(), 1.0 / 60.0, &mut out);
    ///     for (disc, motion) in discs.iter_mut().zip(&out) {
    ///         disc.position += motion.step;
    ///         disc.velocity = motion.velocity;
    ///     }
    ///     assert!(discs[0].position.distance(discs[1].position) >= 0.8 - 1e-3);
    /// }
    /// assert!(discs[0].position.x > 10.0 && discs[1].position.x < 2.0, "they swapped sides");
    /// ```
    pub fn step(
        &mut self,
        discs: &[Disc],
        grids: &[&Grid],
        options: &AvoidanceOptions,
        dt: f64,
        out: &mut Vec<Motion>,
    ) {
        out.clear();
        if !(dt > 0.0 && dt.is_finite()) {
            out.extend(discs.iter().map(|disc| Motion {
                arrived: disc.arrived,
                ..Motion::default()
            }));
            return;
        }
        let time_horizon = options.time_horizon.max(dt);
        let wall_horizon = options.wall_horizon.max(dt);
        self.find_neighbours(discs, grids, options);
        self.decide_arrivals(discs);
        for (i, disc) in discs.iter().enumerate() {
            let arrived = self.arrived[i];
            if !self.usable[i] {
                out.push(Motion {
                    arrived,
                    ..Motion::default()
                });
                continue;
            }
            let grid = grids[disc.grid];
            let preferred = if arrived { DVec2::ZERO } else { disc.preferred };
            let velocity = if disc.radius == 0.0 {
                preferred.clamp_length_max(disc.max_speed)
            } else {
                let around = self.neighbours_of(i).iter().map(|&j| &discs[j as usize]);
                let preferred = keep_right(disc, preferred, around);
                self.choose_velocity(discs, i, grid, preferred, time_horizon, wall_horizon, dt)
            };
            let step = safe_step(grid, disc.position, velocity * dt, disc.radius);
            out.push(Motion {
                velocity: step / dt,
                step,
                arrived,
            });
        }
    }

    /// Fills `usable`, the spatial hash and the neighbour lists.
    fn find_neighbours(&mut self, discs: &[Disc], grids: &[&Grid], options: &AvoidanceOptions) {
        self.usable.clear();
        self.usable
            .extend(discs.iter().map(|disc| disc.usable(grids)));
        let usable = &self.usable;
        let takes_part = |i: usize| usable[i] && discs[i].radius > 0.0;
        let largest = (0..discs.len())
            .filter(|&i| takes_part(i))
            .map(|i| discs[i].radius)
            .fold(0.0, f64::max);
        let range = if options.neighbour_distance > 0.0 {
            options.neighbour_distance
        } else {
            0.0
        };
        // Queries reach at most `range.max(2 * largest)`: two buckets.
        let cell = 0.5 * range.max(2.0 * largest).max(1e-3);
        self.hash.rebuild(
            cell,
            (0..discs.len()).map(|i| takes_part(i).then_some(discs[i].position)),
        );
        self.neighbours.clear();
        self.first.clear();
        self.first.push(0);
        let wanted = options.max_neighbours;
        for (i, disc) in discs.iter().enumerate() {
            if takes_part(i) && wanted > 0 {
                let reach = range.max(disc.radius + largest);
                let nearest = &mut self.nearest;
                nearest.clear();
                self.hash.around(disc.position, reach, |j, position| {
                    let squared = disc.position.distance_squared(position);
                    if j == i || squared > reach * reach {
                        return;
                    }
                    if squared > range * range {
                        let touching = disc.radius + discs[j].radius;
                        if squared >= touching * touching {
                            return;
                        }
                    }
                    // Non-negative floats order as their bits do: the
                    // distance (to single precision) above, the index below.
                    nearest.push(u64::from((squared as f32).to_bits()) << 32 | j as u64);
                });
                nearest.sort_unstable();
                nearest.truncate(wanted);
                self.neighbours
                    .extend(nearest.iter().map(|&key| key as u32));
            }
            self.first.push(self.neighbours.len() as u32);
        }
    }

    /// Disc `i`'s neighbours.
    fn neighbours_of(&self, i: usize) -> &[u32] {
        &self.neighbours[self.first[i] as usize..self.first[i + 1] as usize]
    }

    /// Fills `arrived` (see [Arrival](self#arrival)).
    fn decide_arrivals(&mut self, discs: &[Disc]) {
        self.arrived_per_goal.clear();
        for (disc, _) in discs
            .iter()
            .zip(&self.usable)
            .filter(|(_, usable)| **usable)
        {
            if let (true, Some((id, _))) = (disc.arrived, disc.goal) {
                *self.arrived_per_goal.entry(id).or_insert(0) += 1;
            }
        }
        self.arrived.clear();
        for (i, disc) in discs.iter().enumerate() {
            let arrived = disc.arrived
                || (self.usable[i] && {
                    let count = disc
                        .goal
                        .and_then(|(id, _)| self.arrived_per_goal.get(&id).copied())
                        .unwrap_or(0);
                    let around = self.neighbours_of(i).iter().map(|&j| discs[j as usize]);
                    disc.reaches_goal(around, count)
                });
            self.arrived.push(arrived);
        }
    }

    /// The velocity of disc `i` (of positive radius) closest to `preferred`
    /// that keeps its wall half-planes and, as far as they allow, its
    /// neighbour half-planes.
    #[expect(clippy::too_many_arguments, reason = "one disc's whole situation")]
    fn choose_velocity(
        &mut self,
        discs: &[Disc],
        i: usize,
        grid: &Grid,
        preferred: DVec2,
        time_horizon: f64,
        wall_horizon: f64,
        dt: f64,
    ) -> DVec2 {
        let disc = &discs[i];
        let max_speed = disc.max_speed;
        let mut planes = std::mem::take(&mut self.planes);
        planes.clear();
        wall_planes(
            grid,
            disc.position,
            disc.radius,
            max_speed,
            wall_horizon,
            &mut self.wall_points,
            &mut planes,
        );
        let hard = planes.len();
        let me = Body {
            position: disc.position,
            velocity: disc.velocity,
            radius: disc.radius,
        };
        for &j in self.neighbours_of(i) {
            let other = &discs[j as usize];
            let them = Body {
                position: other.position,
                velocity: other.velocity,
                radius: other.radius,
            };
            let (them, share) = match right_of_way(disc, other) {
                None => (them, 0.5),
                Some(true) => (them, HOLDER_SHARE),
                // Expect the other to go where it wants, and make way.
                Some(false) => (
                    Body {
                        velocity: other.preferred.clamp_length_max(other.max_speed),
                        ..them
                    },
                    1.0,
                ),
            };
            planes.push(orca(me, them, time_horizon, dt, i < j as usize, share));
        }
        let mut velocity = DVec2::ZERO;
        let mut kept = solve(&planes, max_speed, Goal::Closest(preferred), &mut velocity);
        if kept < hard {
            // Too close to the walls to back off as fast as asked: ask only
            // not to come closer.
            for plane in &mut planes[..hard] {
                plane.offset = plane.offset.min(0.0);
            }
            kept = solve(&planes, max_speed, Goal::Closest(preferred), &mut velocity);
        }
        if kept < hard {
            velocity = DVec2::ZERO;
        } else if kept < planes.len() {
            least_violation(
                &planes,
                hard,
                kept,
                max_speed,
                &mut velocity,
                &mut self.relaxed,
            );
        }
        self.planes = planes;
        velocity
    }
}
