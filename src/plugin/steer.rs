//! Built-in steering: [`PathFollower`] walks an agent along its [`NavPath`].
//!
//! Add a `PathFollower` next to the [`PathRequest`] and
//! the agent moves at `speed` world units per second along the waypoints,
//! in [`AnyAngleSystems::Steer`](crate::plugin::AnyAngleSystems::Steer). It moves the
//! agent's `Transform` (feature `transform`) when it has one, otherwise its
//! [`NavPosition`]. Only the two coordinates of the grid's
//! [`WorldPlane`] change (`translation.z` is kept in the
//! XY plane, the height `translation.y` on the XZ plane). A child entity is
//! steered in world space: its `Transform` is set so that, through its
//! parent's `GlobalTransform`, it lands on the path. It never writes a
//! non-finite position: an agent at a non-finite position, or heading for a
//! non-finite waypoint, stays where it is.
//!
//! # Time
//!
//! Followers advance by Bevy's `Time` of the schedule the plugin runs in:
//! `Time<Virtual>` in `Update`, so pausing or slowing virtual time pauses or
//! slows them, and `Time<Fixed>` with
//! [`AnyAnglePlugin::in_schedule`](crate::plugin::AnyAnglePlugin::in_schedule)`(FixedUpdate)`.
//! `Time` comes from `bevy_time::TimePlugin` (part of `DefaultPlugins` and
//! `MinimalPlugins`); in an app without it, followers stand still. Tests and
//! lockstep simulations override it with a [`SteeringClock`]:
//!
//! ```
//! use bevy_anyangle::plugin::SteeringClock;
//! use bevy_ecs::prelude::*;
//!
//! let mut world = World::new();
//! world.insert_resource(SteeringClock::fixed(1.0 / 60.0));
//! ```
//!
//! Steering only visits followers that still have somewhere to go: an
//! agent joins that set when it gets a new path (`Changed<NavPath>`) or a
//! `PathFollower`, and leaves it on arrival. A game that rewinds
//! [`NavPath::next`] by hand does so through `&mut NavPath`, which marks it
//! changed and so wakes the follower up again.
//!
//! A follower moved off its path (by the game) walks straight to the
//! waypoint it heads for only if it sees it; otherwise, or if its step
//! there ends where the waypoint is hidden (a line through a wall's corner,
//! rounded), it stops: its path is cut to where it stands
//! ([`NavPath::cut`]) and it is planned again from there.
//!
//! Followers with [`LocalAvoidance`] and a radius are steered by the crowd
//! stage instead: around each other and the walls, towards the same
//! waypoints.
//!
//! A game that steers its own agents leaves out `PathFollower` and reads
//! [`NavPath::next_waypoint`] in a system ordered after
//! [`AnyAngleSystems::Apply`](crate::plugin::AnyAngleSystems::Apply); the plugin
//! advances [`NavPath::next`] as the agent passes waypoints.

use bevy_ecs::entity::EntityHashSet;
#[cfg(feature = "transform")]
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::prelude::*;
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::{ReflectComponent, ReflectResource};
use bevy_math::Vec2;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use bevy_time::Time;
#[cfg(feature = "transform")]
use bevy_transform::components::{GlobalTransform, Transform};

use crate::plugin::agent::PlanState;
use crate::plugin::api::{NavPath, PathRequest};
use crate::plugin::geometry::{closest_on_segment, sees_waypoint, stop_here};
use crate::plugin::stats::Meter;
use crate::plugin::world::{Fit, NavGrid, NavPosition, OnArea, ProfileId, WorldPlane, plane_of};

/// Walks the agent along its [`NavPath`].
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PathFollower {
    /// World units per second. Not finite or not positive: the agent stays.
    pub speed: f32,
    /// The agent stops once it is this close to the last waypoint (world
    /// units). Intermediate waypoints are passed exactly, so the agent stays
    /// on the path around corners.
    pub arrive_radius: f32,
}

impl Default for PathFollower {
    /// Speed 4, arrive radius 0.05.
    fn default() -> Self {
        PathFollower {
            speed: 4.0,
            arrive_radius: 0.05,
        }
    }
}

/// On an agent with a [`PathFollower`]: it steers around the other agents
/// with `LocalAvoidance` and keeps its [`PathRequest::radius`] from every
/// wall, instead of walking its path exactly (see the
/// [crowd steering docs](crate::plugin#crowds-one-search-for-many-agents-and-local-avoidance)).
///
/// ```
/// use bevy_anyangle::plugin::{LocalAvoidance, PathFollower, PathRequest};
/// use bevy_ecs::prelude::*;
/// use bevy_math::Vec2;
///
/// let mut world = World::new();
/// world.spawn((
///     PathRequest::to(Vec2::new(10.0, 4.0)).with_radius(0.4),
///     PathFollower::default(),
///     LocalAvoidance,
/// ));
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LocalAvoidance;

/// How [`SteeringClock`] advances.
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClockMode {
    /// The same step every frame (deterministic runs, tests).
    Fixed(f32),
    /// The game writes [`SteeringClock::delta_seconds`] itself each frame,
    /// before [`AnyAngleSystems::Steer`](crate::plugin::AnyAngleSystems::Steer).
    Manual,
}

/// A clock for steering that overrides Bevy's `Time`: insert it for
/// deterministic tests or lockstep simulations. Without it (the normal
/// case) followers advance by `Time::delta_secs()`.
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, PartialEq, Default, Clone)
)]
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
pub struct SteeringClock {
    /// How the step is obtained.
    pub mode: ClockMode,
    /// Seconds advanced this frame (read for [`ClockMode::Manual`]).
    pub delta_seconds: f32,
}

impl Default for SteeringClock {
    /// A fixed step of 1/60 s.
    fn default() -> Self {
        SteeringClock::fixed(1.0 / 60.0)
    }
}

impl SteeringClock {
    /// A clock advancing `seconds` each frame.
    #[must_use]
    pub fn fixed(seconds: f32) -> Self {
        SteeringClock {
            mode: ClockMode::Fixed(seconds),
            delta_seconds: seconds,
        }
    }

    /// A clock the game drives through [`SteeringClock::delta_seconds`].
    #[must_use]
    pub fn manual() -> Self {
        SteeringClock {
            mode: ClockMode::Manual,
            delta_seconds: 0.0,
        }
    }

    /// Seconds to advance this frame.
    fn step(&self) -> f32 {
        match self.mode {
            ClockMode::Fixed(step) => step,
            ClockMode::Manual => self.delta_seconds,
        }
    }
}

/// This frame's steering step: the [`SteeringClock`] if the app has one,
/// else the schedule's `Time` (virtual time in `Update`, fixed time in
/// `FixedUpdate`), else none.
pub(crate) fn frame_step(clock: Option<&SteeringClock>, time: Option<&Time>) -> f32 {
    match (clock, time) {
        (Some(clock), _) => clock.step(),
        (None, Some(time)) => time.delta_secs(),
        (None, None) => 0.0,
    }
}

/// Moves one position along `path` by `step`; returns the new position, or
/// `None` if the agent does not move.
///
/// An agent at most `snap` (world units) off the segment it walks is first
/// put back on it, so that it walks the planned segment and not a line a
/// rounding error away, which could graze an obstacle corner the segment
/// passes close by. An agent farther off (pushed by the game) walks straight
/// to its next waypoint if `sees` says it can see it, and otherwise stays
/// where it is until it has a new path (the caller cuts its path to where it
/// stands and lists it in [`Unseen`], and it is planned again from there).
/// Such a straight walk is not a segment of its path, to be put back on: if
/// rounding its new position leaves the waypoint hidden from there (the
/// line passes a wall's corner within a rounding error), it stops there
/// too, so that it never heads for a waypoint it cannot see. The way out of
/// a wall ([`NavPath::start_moved`], `next` 0) is walked without that test
/// while the agent is `stuck` in a blocked cell: it crosses blocked cells
/// by design. Elsewhere (a disc that does not fit in free space, whose way
/// out is in sight by construction, or an agent moved after its search
/// started) it walks to its path's moved start only if it sees it, as to
/// any waypoint.
///
/// Works in `f64`, so that the difference of two far-apart `f32` points
/// cannot overflow: each new position lies between two finite points, so it
/// is finite. A non-finite position or waypoint stops the agent where it is.
fn advance(
    path: &mut NavPath,
    follower: PathFollower,
    from: Vec2,
    step: f32,
    snap: f64,
    stuck: bool,
    mut sees: impl FnMut(&NavPath, Vec2) -> bool,
) -> Option<Vec2> {
    let last = path.waypoints.len().checked_sub(1)?;
    if !from.is_finite() {
        return None;
    }
    let arrive = f64::from(follower.arrive_radius.max(0.0));
    let mut step = f64::from(step);
    let mut p = from.as_dvec2();
    // Whether it walks a segment of its path (or the way out of a wall).
    let mut on_path = path.start_moved && path.next == 0 && stuck || path.next > last;
    if (1..=last).contains(&path.next) {
        let (a, b) = (
            path.waypoints[path.next - 1].as_dvec2(),
            path.waypoints[path.next].as_dvec2(),
        );
        let on = closest_on_segment(p, a, b);
        if on.is_finite() && p.distance(on) <= snap {
            p = on;
            on_path = true;
        }
    }
    if !on_path && !sees(path, from) {
        return None;
    }
    let aim = path.next;
    while step > 0.0 && path.next <= last {
        let target = path.waypoints[path.next];
        if !target.is_finite() {
            break;
        }
        let target = target.as_dvec2();
        let to = target - p;
        let d = to.length();
        // The arrive radius is for real ends: a cut path's end and the way
        // out of a wall are walked to the point.
        let exact = path.cut || (path.start_moved && path.next == 0);
        if path.next == last && d <= arrive && !exact {
            path.next += 1;
            break;
        }
        if d <= step {
            p = target;
            step -= d;
            path.next += 1;
        } else {
            p += to * (step / d);
            step = 0.0;
        }
    }
    let p = p.as_vec2();
    let moved = p != from && p.is_finite();
    if moved && !on_path && path.next == aim {
        // (The answer is the caller's: heading for a waypoint hidden from
        // its new position, it stops there.)
        sees(path, p);
    }
    moved.then_some(p)
}

/// How far off its segment a follower is put back on it: a thousandth of
/// a cell (none without a grid).
fn snap_distance(nav: Option<&NavGrid>) -> f64 {
    nav.map_or(0.0, |nav| f64::from(nav.transform().cell_size()) * 1e-3)
}

/// Followers that steering found unable to see the waypoint they head for
/// (the game moved them, or a crowd pushed them, to where it is hidden):
/// they stay where they are, and the next frame's `Detect` plans them again
/// from there.
#[derive(Resource, Default)]
pub(crate) struct Unseen(pub(crate) Vec<Entity>);

/// The followers that may still have somewhere to go, so that steering does
/// not visit agents that have arrived.
#[derive(Resource, Default)]
pub(crate) struct ActiveFollowers(EntityHashSet);

/// Followers that got a new path or just became followers.
type NewlyMoving = (
    With<PathFollower>,
    Without<OnArea>,
    Or<(Added<PathFollower>, Changed<NavPath>)>,
);

/// Adds followers that got a new path (or a new `PathFollower`) to
/// [`ActiveFollowers`]. `NavPath::next` advances without change detection,
/// so this only sees new paths and writes by the game.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn collect_followers(
    meter: Res<Meter>,
    mut active: ResMut<ActiveFollowers>,
    changed: Query<Entity, NewlyMoving>,
) {
    let _cost = meter.start();
    for entity in &changed {
        active.0.insert(entity);
    }
}

/// Moves every active [`PathFollower`] along its path.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
#[expect(clippy::too_many_arguments, reason = "system parameters")]
pub(crate) fn follow_paths(
    meter: Res<Meter>,
    clock: Option<Res<SteeringClock>>,
    time: Option<Res<Time>>,
    nav: Option<Res<NavGrid>>,
    mut active: ResMut<ActiveFollowers>,
    mut unseen: ResMut<Unseen>,
    mut agents: Query<FollowerData>,
    #[cfg(feature = "transform")] parents: Query<&GlobalTransform>,
) {
    let _cost = meter.start();
    let dt = frame_step(clock.as_deref(), time.as_deref());
    if !(dt.is_finite() && dt > 0.0) || active.0.is_empty() {
        return;
    }
    let plane = plane_of(nav.as_deref());
    let snap = snap_distance(nav.as_deref());
    let nav = nav.as_deref();
    active.0.retain(|&entity| {
        let Ok((follower, mut path, mut place, crowd, state)) = agents.get_mut(entity) else {
            return false; // despawned, or no longer a follower
        };
        if crowd.is_some_and(|(request, _)| in_crowd(request.radius)) {
            return false; // steered by the crowd stage
        }
        if path.is_finished() {
            return false;
        }
        if !(follower.speed.is_finite() && follower.speed > 0.0) {
            return true;
        }
        let step = follower.speed * dt;
        let mut hidden = false;
        let mut at = None;
        {
            let path = path.bypass_change_detection();
            let sees = |path: &NavPath, from: Vec2| {
                hidden = !may_walk(nav, state, path, from);
                !hidden
            };
            let walk = |from: Vec2| {
                let stuck = path.start_moved && path.next == 0 && stuck_at(nav, state, from);
                let to = advance(path, *follower, from, step, snap, stuck, sees);
                at = Some(to.unwrap_or(from));
                to
            };
            #[cfg(feature = "transform")]
            move_on(&mut place, &parents, plane, walk);
            #[cfg(not(feature = "transform"))]
            move_on(&mut place, plane, walk);
        }
        if hidden && let (Some(nav), Some(at)) = (nav, at) {
            // It stays where it stands (its path says so, for games that
            // steer by it too) until it is planned again from there.
            stop_here(nav, &mut path, nav.to_grid(at));
            unseen.0.push(entity);
        }
        !path.is_finished()
    });
}

/// What steering reads and writes of a follower: its path and its place
/// (and its request, if it has [`LocalAvoidance`]), and its planning state
/// (the grid it plans on).
type FollowerData = (
    &'static PathFollower,
    &'static mut NavPath,
    Place,
    Option<(&'static PathRequest, &'static LocalAvoidance)>,
    Option<&'static PlanState>,
);

/// Whether a follower at `from` (world) may walk straight to the waypoint
/// of `path` it heads for (see [`sees_waypoint`]). Without a grid there is
/// nothing to test against, and it may.
fn may_walk(nav: Option<&NavGrid>, state: Option<&PlanState>, path: &NavPath, from: Vec2) -> bool {
    let Some(nav) = nav else {
        return true;
    };
    let key = state.map_or((ProfileId::DEFAULT, Fit::POINT), PlanState::key);
    if path.start_moved && path.next == 0 {
        // The way out of where a disc does not fit keeps its radius only
        // from where it fits: it must be in sight.
        let to = match (path.grid_waypoints.first(), path.waypoints.first()) {
            (Some(&to), _) if path.grid_waypoints.len() == path.waypoints.len() => to,
            (_, Some(&to)) => nav.to_grid(to),
            _ => return false,
        };
        return nav
            .view(key)
            .is_some_and(|view| crate::los::line_of_sight(view.grid, nav.to_grid(from), to));
    }
    sees_waypoint(nav, key, path, from, path.next)
}

/// Whether a follower at `from` (world) stands in a blocked cell of the
/// grid it plans on (for an agent with a clearance, its eroded grid): the
/// way out of there is walked without the sight test. Without a grid, it
/// counts as stuck (nothing to test against).
fn stuck_at(nav: Option<&NavGrid>, state: Option<&PlanState>, from: Vec2) -> bool {
    let Some(nav) = nav else {
        return true;
    };
    let key = state.map_or((ProfileId::DEFAULT, Fit::POINT), PlanState::key);
    nav.view(key)
        .is_none_or(|view| !view.grid.is_point_traversable(nav.to_grid(from)))
}

/// Whether a follower with [`LocalAvoidance`] and this
/// [`PathRequest::radius`] is steered by the crowd stage: if it has a
/// radius (a point, or a radius that is not a number, walks as a plain
/// follower).
pub(crate) fn in_crowd(radius: f32) -> bool {
    radius > 0.0
}

/// Where a follower is (see [`position`](crate::plugin::world::position)):
/// the position [`move_on`] moves it from.
#[cfg(feature = "transform")]
pub(crate) fn place_position(
    place: &<Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    plane: WorldPlane,
) -> Option<Vec2> {
    let (transform, global, parent, nav_position) = place;
    crate::plugin::world::position(
        (
            transform.as_deref(),
            *global,
            parent.is_some(),
            nav_position.as_deref(),
        ),
        plane,
    )
}

/// Where a follower is: its [`NavPosition`].
#[cfg(not(feature = "transform"))]
#[expect(
    clippy::unnecessary_wraps,
    reason = "the signature it has with the `transform` feature"
)]
pub(crate) fn place_position(
    place: &<Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    _plane: WorldPlane,
) -> Option<Vec2> {
    Some(place.0)
}

/// Where a follower is, to be moved.
#[cfg(feature = "transform")]
pub(crate) type Place = (
    Option<&'static mut Transform>,
    Option<&'static GlobalTransform>,
    Option<&'static ChildOf>,
    Option<&'static mut NavPosition>,
);
/// Where a follower is, to be moved.
#[cfg(not(feature = "transform"))]
pub(crate) type Place = &'static mut NavPosition;

/// Moves a follower to where `walk` takes it from its position: its
/// `Transform` if it has one (a child in world space, through its parent),
/// else its [`NavPosition`].
#[cfg(feature = "transform")]
pub(crate) fn move_on(
    place: &mut <Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    parents: &Query<&GlobalTransform>,
    plane: WorldPlane,
    walk: impl FnOnce(Vec2) -> Option<Vec2>,
) {
    let (transform, global, parent, nav_position) = place;
    if let Some(t) = transform {
        // A child is steered in world space, through its parent.
        let parent = parent.and_then(|c| parents.get(c.parent()).ok().zip(*global));
        if let Some((parent, global)) = parent {
            let here = global.translation();
            if let Some(p) = walk(plane.project(here)) {
                let world = plane.lift(p, plane.height(here));
                let local = parent.affine().inverse().transform_point3(world);
                if local.is_finite() {
                    t.translation = local;
                }
            }
        } else if let Some(p) = walk(plane.project(t.translation)) {
            t.translation = plane.lift(p, plane.height(t.translation));
        }
    } else if let Some(n) = nav_position
        && let Some(p) = walk(n.0)
    {
        n.0 = p;
    }
}

/// Moves a follower to where `walk` takes it from its [`NavPosition`].
#[cfg(not(feature = "transform"))]
pub(crate) fn move_on(
    place: &mut <Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    _plane: WorldPlane,
    walk: impl FnOnce(Vec2) -> Option<Vec2>,
) {
    if let Some(p) = walk(place.0) {
        place.0 = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_passes_corners_and_stops_at_the_end() {
        let mut path = NavPath {
            waypoints: vec![Vec2::ZERO, Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0)],
            next: 1,
            ..NavPath::default()
        };
        let f = PathFollower {
            speed: 1.0,
            arrive_radius: 0.01,
        };
        let p = advance(&mut path, f, Vec2::ZERO, 1.5, 0.0, false, |_, _| true).unwrap();
        assert_eq!(p, Vec2::new(1.0, 0.5));
        assert_eq!(path.next, 2);
        let p = advance(&mut path, f, p, 10.0, 0.0, false, |_, _| true).unwrap();
        assert_eq!(p, Vec2::new(1.0, 1.0));
        assert!(path.is_finished());
        assert_eq!(advance(&mut path, f, p, 1.0, 0.0, false, |_, _| true), None);
    }

    #[test]
    fn a_follower_a_hair_off_its_segment_walks_the_segment() {
        let path = || NavPath {
            waypoints: vec![Vec2::ZERO, Vec2::new(10.0, 0.0)],
            next: 1,
            ..NavPath::default()
        };
        let f = PathFollower::default();
        // Put back on the segment, then moved along it.
        let p = advance(
            &mut path(),
            f,
            Vec2::new(2.0, 0.0005),
            1.0,
            1e-3,
            false,
            |_, _| false,
        )
        .unwrap();
        assert_eq!(p, Vec2::new(3.0, 0.0));
        // Pushed farther off: it heads straight for the waypoint.
        let p = advance(
            &mut path(),
            f,
            Vec2::new(2.0, 0.5),
            1.0,
            1e-3,
            false,
            |_, _| true,
        )
        .unwrap();
        assert!(p.y > 0.4 && p.y < 0.5, "{p}");
        // Pushed off to where it cannot see its waypoint: it stays.
        let mut hidden = path();
        let sees = |path: &NavPath, from: Vec2| {
            assert_eq!((from, path.next), (Vec2::new(2.0, 0.5), 1));
            false
        };
        assert_eq!(
            advance(&mut hidden, f, Vec2::new(2.0, 0.5), 1.0, 1e-3, false, sees),
            None
        );
        assert_eq!(hidden.next, 1);
    }

    /// A follower off its path walking straight to a waypoint whose line
    /// passes a wall's corner: one step, rounded to `f32`, lands a few
    /// millionths of a cell on the wall's side of the line, from where the
    /// waypoint is hidden. Steering looks again from there (and stops it
    /// there, its path cut to where it stands): seen in a game with edits
    /// every frame, the line running through the corner of a cell just
    /// blocked.
    #[test]
    fn a_rounded_step_that_hides_the_waypoint_is_the_last() {
        use crate::grid::Grid;
        use crate::los::line_of_sight;
        let mut grid = Grid::new(160, 120).unwrap();
        grid.set_free(bevy_math::UVec2::new(151, 103), false)
            .unwrap();
        let target = Vec2::new(152.0, 101.0);
        let from = Vec2::new(150.613_57, 103.772_86);
        let mut path = NavPath {
            waypoints: vec![Vec2::new(152.0, 98.0), target],
            next: 1,
            ..NavPath::default()
        };
        let f = PathFollower {
            speed: 6.0,
            arrive_radius: 0.05,
        };
        let mut looked = Vec::new();
        let sees = |_: &NavPath, at: Vec2| {
            looked.push(at);
            line_of_sight(&grid, at.as_dvec2(), target.as_dvec2())
        };
        let to = advance(&mut path, f, from, 0.1, 1e-3, false, sees).unwrap();
        assert!(line_of_sight(&grid, from.as_dvec2(), target.as_dvec2()));
        assert!(
            !line_of_sight(&grid, to.as_dvec2(), target.as_dvec2()),
            "{to}"
        );
        // It looked from where it stood, then from where it stopped.
        assert_eq!(looked, [from, to]);
    }
}
