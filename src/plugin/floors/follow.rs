//! Walking routes across areas: followers on areas walk their legs, walk
//! across walked links (their height moving from one area's to the
//! other's), and wait at handed links until the game carries them over.

use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use bevy_time::Time;
#[cfg(feature = "transform")]
use bevy_transform::components::GlobalTransform;

use super::plan::{RouteState, RouteUnseen};
use super::sync::Areas;
use super::{CrossLink, CrossingLink, LinkReached};
use crate::geom::segment_distance;
use crate::plugin::agent::Priority;
use crate::plugin::api::{LinkCrossing, NavPath, PathCrossing, PlanReason};
use crate::plugin::geometry::sees;
use crate::plugin::steer::{PathFollower, Place, SteeringClock, frame_step, move_on};
use crate::plugin::world::{OnArea, WorldPlane};

/// What following reads and writes of an agent on an area.
type FollowData = (
    Entity,
    &'static PathFollower,
    &'static mut NavPath,
    &'static mut OnArea,
    &'static mut RouteState,
    Place,
);

/// Moves every follower on an area along its route.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn follow_routes(
    clock: Option<Res<SteeringClock>>,
    time: Option<Res<Time>>,
    areas: Res<Areas>,
    mut unseen: ResMut<RouteUnseen>,
    mut agents: Query<FollowData, Without<CrossingLink>>,
    #[cfg(feature = "transform")] parents: Query<&GlobalTransform>,
    mut commands: Commands,
) {
    let dt = frame_step(clock.as_deref(), time.as_deref());
    if !(dt.is_finite() && dt > 0.0) {
        return;
    }
    for (entity, follower, mut path, mut on, mut state, mut place) in &mut agents {
        if path.is_finished() || !(follower.speed.is_finite() && follower.speed > 0.0) {
            continue;
        }
        let Some(area) = areas.area(on.0) else {
            continue;
        };
        let plane = area.transform.plane();
        let on_area = on.0;
        let grid = areas.atlas().grid(area.id);
        let radius = state.radius;
        let mut hidden = false;
        let mut step = follower.speed * dt;
        let mut reached: Option<PathCrossing> = None;
        let mut entered: Option<Entity> = None;
        let mut height = None;
        {
            let path = path.bypass_change_detection();
            let walk = |from: Vec2| -> Option<Vec2> {
                if !from.is_finite() {
                    return None;
                }
                let mut at = from;
                let last = path.waypoints.len() - 1;
                // Off its path (moved by the game, or its route planned
                // from where it stood before): it walks on only to a
                // waypoint it sees.
                let k = path.next;
                let link = crossing_from(path, k.wrapping_sub(1));
                let target = match link {
                    // Never along a handed link: to its near end first.
                    Some(c) if c.crossing == LinkCrossing::Handed => Some(c.at),
                    // Along a walked one, off every area.
                    Some(_) => None,
                    None => Some(k),
                };
                // (The way out of a wall, to the route's start, crosses
                // blocked cells by design.)
                let way_out = path.start_moved && k == 0;
                if let Some(t) = target.filter(|_| k <= last && !way_out) {
                    if path.area_of(t) != Some(on_area) {
                        // A route from another area than it stands on.
                        hidden = true;
                        return None;
                    }
                    let to = path.grid_waypoints[t];
                    let here = area.to_grid(at);
                    let on = if t == k {
                        k > 0 && segment_distance(here, path.grid_waypoints[k - 1], to) <= 1e-4
                    } else {
                        here.distance(to) <= 1e-4
                    };
                    if !on && grid.is_some_and(|g| !sees(g, radius, here, to)) {
                        hidden = true;
                        return None;
                    }
                }
                while step > 0.0 && path.next <= last {
                    let handed = crossing_from(path, path.next.wrapping_sub(1))
                        .filter(|c| c.crossing == LinkCrossing::Handed);
                    // Arrived at a handed link's near end: wait there.
                    if let Some(c) = handed
                        && at == path.waypoints[c.at]
                    {
                        reached = Some(c);
                        break;
                    }
                    let to = handed.map_or(path.waypoints[path.next], |c| path.waypoints[c.at]);
                    if !to.is_finite() {
                        break;
                    }
                    let d = at.distance(to);
                    let end = path.next == last && !path.cut;
                    if end && d <= follower.arrive_radius.max(0.0) {
                        path.next = last + 1;
                        break;
                    }
                    if d <= step {
                        at = to;
                        step -= d;
                        if handed.is_some() {
                            continue; // at the near end: it waits there
                        }
                        if let Some(c) = crossing_from(path, path.next.wrapping_sub(1)) {
                            // At the far end of a walked link: on its area.
                            entered = Some(c.to_area);
                        }
                        path.next += 1;
                    } else {
                        at += (to - at) * (step / d);
                        step = 0.0;
                    }
                }
                // On a walked link: the height between its two areas'.
                if let Some(c) = crossing_from(path, path.next.wrapping_sub(1))
                    && path.next < path.waypoints.len()
                {
                    let (a, b) = (path.waypoints[c.at], path.waypoints[c.at + 1]);
                    let t = if a == b {
                        1.0
                    } else {
                        (at.distance(a) / a.distance(b)).clamp(0.0, 1.0)
                    };
                    let h0 = areas.area(c.from_area).map_or(0.0, |v| v.height);
                    let h1 = areas.area(c.to_area).map_or(0.0, |v| v.height);
                    height = Some(h0 + (h1 - h0) * t);
                } else if entered.is_some() {
                    height = entered.and_then(|e| areas.area(e)).map(|v| v.height);
                }
                Some(at)
            };
            #[cfg(feature = "transform")]
            move_on(&mut place, &parents, plane, walk);
            #[cfg(not(feature = "transform"))]
            move_on(&mut place, plane, walk);
        }
        if let Some(h) = height {
            set_height(&mut place, plane, h);
        }
        if hidden {
            // It stays where it stands until it is planned again from there.
            let path = path.bypass_change_detection();
            path.waypoints.truncate(path.next);
            path.grid_waypoints.truncate(path.next);
            let n = path.waypoints.len();
            path.crossings.retain(|c| c.at + 1 < n);
            path.cut = true;
            unseen
                .0
                .push((entity, Priority::Urgent, PlanReason::OffPath));
        }
        if let Some(to) = entered {
            state.area = Some(to);
            on.0 = to;
            if let Some((priority, reason)) = state.deferred.take() {
                unseen.0.push((entity, priority, reason));
            }
        }
        if let Some(crossing) = reached.filter(|c| !areas.link_enabled(c.link)) {
            // Closed as it got there: it waits for a new route, not at the
            // link.
            let path = path.bypass_change_detection();
            path.waypoints.truncate(crossing.at + 1);
            path.grid_waypoints.truncate(crossing.at + 1);
            path.crossings.retain(|c| c.at < crossing.at);
            path.next = path.waypoints.len();
            path.cut = true;
            unseen
                .0
                .push((entity, Priority::Urgent, PlanReason::PathBlocked));
        } else if let Some(crossing) = reached {
            let far_end = path.waypoints[crossing.at + 1];
            commands.entity(entity).insert(CrossingLink(crossing));
            let event = LinkReached {
                entity,
                crossing,
                far_end,
            };
            commands.write_message(event);
            commands.trigger(event);
        }
    }
}

/// The crossing of `path` whose near end is waypoint `k`, if any: the
/// agent heading for waypoint `k + 1` is on that link.
fn crossing_from(path: &NavPath, k: usize) -> Option<PathCrossing> {
    path.crossings.iter().find(|c| c.at == k).copied()
}

/// Sets a follower's height, on the `Xz` plane (its `Transform` only).
#[cfg(feature = "transform")]
fn set_height(
    place: &mut <Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    plane: WorldPlane,
    height: f32,
) {
    if plane == WorldPlane::Xz
        && let (Some(t), None) = (place.0.as_mut(), place.2)
    {
        t.translation.y = height;
    }
}

/// Heights are kept in `Transform`s only.
#[cfg(not(feature = "transform"))]
fn set_height(
    _place: &mut <Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    _plane: WorldPlane,
    _height: f32,
) {
}

/// The game carried an agent across the handed link it waited at: it
/// stands at the far end, on the far area, and walks on.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn on_cross_link(
    cross: On<CrossLink>,
    areas: Res<Areas>,
    mut agents: Query<(
        &CrossingLink,
        &mut NavPath,
        &mut OnArea,
        &mut RouteState,
        Place,
    )>,
    mut commands: Commands,
) {
    let entity = cross.entity;
    let Ok((waiting, mut path, mut on, mut state, mut place)) = agents.get_mut(entity) else {
        return;
    };
    let crossing = waiting.0;
    commands.entity(entity).remove::<CrossingLink>();
    if !path.crossings.contains(&crossing) {
        return; // its path changed meanwhile
    }
    let Some(&far) = path.waypoints.get(crossing.at + 1) else {
        return;
    };
    let Some(area) = areas.area(crossing.to_area) else {
        return;
    };
    let plane = area.transform.plane();
    put(&mut place, plane, far);
    set_height(&mut place, plane, area.height);
    path.bypass_change_detection().next = crossing.at + 2;
    state.area = Some(crossing.to_area);
    on.0 = crossing.to_area;
}

/// Puts an agent at `p` (world) in `plane`.
#[cfg(feature = "transform")]
fn put(
    place: &mut <Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    plane: WorldPlane,
    p: Vec2,
) {
    let (transform, _, parent, nav_position) = place;
    if let (Some(t), None) = (transform.as_mut(), parent) {
        t.translation = plane.lift(p, plane.height(t.translation));
    } else if let Some(n) = nav_position {
        n.0 = p;
    }
}

/// Puts an agent at `p` (world).
#[cfg(not(feature = "transform"))]
fn put(
    place: &mut <Place as bevy_ecs::query::QueryData>::Item<'_, '_>,
    _plane: WorldPlane,
    p: Vec2,
) {
    place.0 = p;
}
