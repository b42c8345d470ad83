//! Crowd steering: followers with [`LocalAvoidance`] walk their paths
//! around each other and the walls, and spread out where they arrive.
//!
//! Each frame, in [`AnyAngleSystems::Steer`](crate::plugin::AnyAngleSystems::Steer),
//! every agent with a [`PathFollower`], a [`PathRequest`] and
//! [`LocalAvoidance`] becomes a disc of the core's
//! [`avoidance`](crate::avoidance): its radius is the request's, its speed
//! limit the follower's, and it wants to head for its next waypoint at that
//! speed. [`Avoidance::step`](crate::avoidance::Avoidance::step) then gives
//! every disc its move for the frame: around the others (ORCA), never
//! closer to a wall of its profile's grid than its radius, along the whole
//! move. The agent moves there (its `Transform` or [`NavPosition`], as
//! [`PathFollower`] moves it) and passes the waypoints it comes close to.
//!
//! An agent arrives within its radius of its path's end (or its
//! [`PathFollower::arrive_radius`], if larger), or when others hold it up
//! close to its end for half a second: it stands still within three radii
//! of it, or, where others have already arrived at its end, it comes no
//! closer to it within the reach of their crowd (the core's arrival bound),
//! however it jostles. Agents heading for one goal
//! do not stack on it: one that touches an agent already arrived there
//! counts as arrived too (see the core's
//! [arrival rule](crate::avoidance#arrival)), and its path is finished. An
//! arrived agent still gives way to others; pushed farther than
//! [`PathfindingSettings::replan_distance`](crate::plugin::PathfindingSettings::replan_distance)
//! from where it came to rest, it plans again and walks back.
//!
//! An agent that comes no closer to the waypoint it heads for looks, every
//! quarter of a second, whether it still sees that waypoint; one pushed to where a wall hides
//! it (the wall leaves it no way forward) plans again from where it stands.
//!
//! An agent of radius 0 takes no part: it walks its path as a plain
//! follower, within the walls, through the others. An agent that does
//! not fit where it stands (it spawned there, or an edit closed in on it)
//! walks its path's way out as a plain follower, before avoidance takes it
//! on again.
//!
//! [`NavPosition`]: crate::plugin::NavPosition

use bevy_ecs::prelude::*;
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectResource;
use bevy_math::{DVec2, Vec2};
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use bevy_time::Time;
#[cfg(feature = "transform")]
use bevy_transform::components::GlobalTransform;

use crate::avoidance::{Avoidance, AvoidanceOptions, Disc, Motion};
use crate::clearance::Clearance;
use crate::fast_hash::FastMap;
use crate::grid::Grid;
use crate::plugin::api::{NavPath, PathRequest};
use crate::plugin::geometry::{fits, sees};
use crate::plugin::stats::{Counters, Meter};
use crate::plugin::steer::{
    LocalAvoidance, PathFollower, Place, SteeringClock, Unseen, frame_step, in_crowd, move_on,
    place_position,
};
use crate::plugin::world::OnArea;
use crate::plugin::world::{NavGrid, ProfileId, plane_of};

/// How agents with [`LocalAvoidance`] avoid each other (a resource the
/// plugin inserts; change it at any time).
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AvoidanceSettings {
    /// Seconds ahead within which agents avoid touching each other: longer
    /// horizons give way earlier and more timidly. Default 1.
    pub time_horizon: f32,
    /// Seconds within which an agent may close the gap to a wall. Default
    /// 0.25.
    pub wall_horizon: f32,
    /// How far apart (in cells, between centres) agents still see each
    /// other. Default 2.
    pub neighbour_distance: f32,
    /// How many of the nearest agents each one avoids. Default 10.
    pub max_neighbours: usize,
}

impl Default for AvoidanceSettings {
    fn default() -> Self {
        let core = AvoidanceOptions::default();
        AvoidanceSettings {
            time_horizon: core.time_horizon as f32,
            wall_horizon: core.wall_horizon as f32,
            neighbour_distance: core.neighbour_distance as f32,
            max_neighbours: core.max_neighbours,
        }
    }
}

impl AvoidanceSettings {
    /// The core's options for these settings.
    fn options(&self) -> AvoidanceOptions {
        AvoidanceOptions {
            time_horizon: f64::from(self.time_horizon),
            wall_horizon: f64::from(self.wall_horizon),
            neighbour_distance: f64::from(self.neighbour_distance),
            max_neighbours: self.max_neighbours,
        }
    }
}

/// An avoiding agent's state between frames (not public).
#[derive(Component, Clone, Copy, Debug, Default)]
pub(crate) struct CrowdState {
    /// Its last velocity, cells per second.
    velocity: DVec2,
    /// Whether it has arrived at `end`.
    arrived: bool,
    /// The goal it arrived at (its path's end, as bits).
    end: Option<(u64, u64)>,
    /// Frames it has come no closer to its path's end (by [`PROGRESS`])
    /// while within reach of it (see [`held_reach`]).
    stalled: u16,
    /// The closest it has come to its path's end (cells) since it last
    /// made progress towards it within reach; `None` out of reach.
    closest: Option<f64>,
    /// How far from its end it may be held up (cells), as reckoned where
    /// it was: its reach while it is arrived [`Arrival::HeldUp`].
    reach: f64,
    /// Frames it has come no closer to the waypoint it heads for (by
    /// [`PROGRESS`]), since it last did or last looked whether it still
    /// sees that waypoint.
    held: u16,
    /// The waypoint it heads for ([`NavPath::next`]) and the closest it has
    /// come to it (cells).
    aim: (usize, f64),
    /// Where it arrived (world coordinates), while it stays arrived.
    rest: Option<Vec2>,
    /// How it arrived, while it stays arrived.
    arrival: Arrival,
}

/// How an agent in a crowd arrived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// It has not (or it arrived beside the agents that took its end first:
    /// a crowd sent to one point).
    #[default]
    Beside,
    /// At its path's end itself, within its radius (or arrive radius).
    AtEnd,
    /// Held up by others close to its end.
    HeldUp,
}

impl CrowdState {
    /// Where the agent arrived, if it has: the crowd may push it from
    /// there; pushed farther than the replan distance, it plans again.
    pub(crate) fn rest(&self) -> Option<Vec2> {
        self.rest
    }

    /// How it arrived, if it has.
    pub(crate) fn arrival(&self) -> Option<Arrival> {
        self.arrived.then_some(self.arrival)
    }

    /// How far from its end (world units) an agent that arrived held up
    /// was allowed to stop: pushed farther, it walks back.
    pub(crate) fn held_reach(&self, cell: f32) -> f32 {
        (self.reach * f64::from(cell)) as f32
    }
}

/// How far from its path's end (cells) an agent of `radius` (cells) that
/// comes no closer to it may count as held up there: three radii, or, where
/// `arrived` agents have already arrived at that end, the reach of their
/// crowd (the core's [arrival bound](crate::avoidance#arrival)).
fn held_reach(radius: f64, arrived: u32) -> f64 {
    let alone = 3.0 * radius + 0.05;
    if arrived == 0 {
        alone
    } else {
        alone.max((2.0 * f64::from(arrived).sqrt() + 2.0) * radius)
    }
}

/// Frames an agent close to its path's end may come no closer to it, held
/// up by others, before it counts as arrived: half a second at 60 fps.
const STALL_FRAMES: u16 = 30;

/// Frames an agent on its way may come no closer to the waypoint it heads
/// for before it looks whether it still sees it (a quarter of a second at
/// 60 fps): one pushed behind a wall plans again instead of pressing or
/// sliding to and fro against it.
const HELD_FRAMES: u16 = 15;

/// How much closer to its waypoint (cells) an agent must come to count as
/// making progress.
const PROGRESS: f64 = 0.05;

/// The crowd stage's memory, reused every frame.
#[derive(Resource, Default)]
pub(crate) struct Crowd {
    avoidance: Avoidance,
    discs: Vec<Disc>,
    motions: Vec<Motion>,
    /// Each disc's agent and where it stood (grid coordinates).
    agents: Vec<(Entity, DVec2)>,
    /// Scratch: the agents and their discs, put in the order of the
    /// entities.
    sorted: Vec<((Entity, DVec2), Disc)>,
    profiles: Vec<ProfileId>,
    /// Per goal id, the agents that stood arrived there at the frame's
    /// start.
    arrived_at: FastMap<u64, u32>,
}

/// What the crowd stage reads and writes of an agent.
type CrowdData = (
    Entity,
    &'static PathFollower,
    &'static PathRequest,
    &'static mut NavPath,
    &'static mut CrowdState,
    Place,
);

/// Moves every follower with [`LocalAvoidance`] one frame along its path,
/// around the others and within the walls.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
#[expect(clippy::too_many_arguments, reason = "system parameters")]
pub(crate) fn steer_crowds(
    meter: Res<Meter>,
    clock: Option<Res<SteeringClock>>,
    time: Option<Res<Time>>,
    nav: Option<Res<NavGrid>>,
    settings: Option<Res<AvoidanceSettings>>,
    mut crowd: ResMut<Crowd>,
    mut counters: ResMut<Counters>,
    mut unseen: ResMut<Unseen>,
    mut agents: Query<CrowdData, (With<LocalAvoidance>, Without<OnArea>)>,
    #[cfg(feature = "transform")] parents: Query<&GlobalTransform>,
) {
    let cost = meter.start();
    let dt = f64::from(frame_step(clock.as_deref(), time.as_deref()));
    let Some(nav) = nav.as_deref() else {
        return;
    };
    if !(dt.is_finite() && dt > 0.0) || agents.is_empty() {
        counters.0.avoidance_cost = core::time::Duration::ZERO;
        return;
    }
    let settings = settings.as_deref().copied().unwrap_or_default();
    let plane = plane_of(Some(nav));
    let cell = f64::from(nav.transform().cell_size());
    let Crowd {
        avoidance,
        discs,
        motions,
        agents: order,
        sorted,
        profiles,
        arrived_at,
    } = &mut *crowd;
    discs.clear();
    order.clear();
    profiles.clear();
    arrived_at.clear();
    for (entity, follower, request, path, mut state, place) in &mut agents {
        // (Points are steered as plain followers.)
        if !in_crowd(request.radius) {
            continue;
        }
        let Some(world) = place_position(&place, plane) else {
            continue;
        };
        let here = nav.to_grid(world);
        // Positions are stored in `f32`: a disc keeps this much more than
        // its radius from the walls, so that rounding its new position
        // cannot bring it closer than its radius.
        let rounding =
            4.0 * f64::from(f32::EPSILON) * f64::from(world.abs().max_element().max(1.0)) / cell;
        let end = path
            .grid_waypoints
            .last()
            .map(|e| (e.x.to_bits(), e.y.to_bits()));
        if state.end != end || path.is_changed() {
            // A new path (a new goal, or planned again after a push): not
            // arrived yet.
            *state = CrowdState {
                end,
                velocity: state.velocity,
                ..CrowdState::default()
            };
        }
        let speed = f64::from(follower.speed.max(0.0)) / cell;
        let preferred = match path.grid_waypoints.get(path.next) {
            Some(&target) if !state.arrived => {
                let to = target - here;
                let d = to.length();
                // Within a step of its waypoint, it heads for the waypoint
                // itself (and at its end, stops there).
                let v = speed.min(d / dt);
                if d > 0.0 { to * (v / d) } else { DVec2::ZERO }
            }
            _ => DVec2::ZERO,
        };
        let grid = match profiles.iter().position(|&p| p == request.profile) {
            Some(i) => i,
            None => {
                profiles.push(request.profile);
                profiles.len() - 1
            }
        };
        let goal = path.grid_waypoints.last().map(|&g| {
            let id = g.x.to_bits() ^ g.y.to_bits().rotate_left(32);
            (id, g)
        });
        discs.push(Disc {
            position: here,
            velocity: state.velocity,
            preferred,
            radius: f64::from(request.radius) / cell + rounding,
            max_speed: speed,
            grid,
            goal,
            arrived: state.arrived,
        });
        order.push((entity, here));
    }
    // In the order of the entities (the query's order over archetypes
    // differs between platforms, and the order of neighbours decides the
    // last bits of a step).
    sorted.clear();
    sorted.extend(order.iter().copied().zip(discs.iter().copied()));
    sorted.sort_unstable_by_key(|((e, _), _)| e.to_bits());
    order.clear();
    discs.clear();
    for &(agent, disc) in sorted.iter() {
        order.push(agent);
        discs.push(disc);
    }
    let grids: Option<Vec<&Grid>> = profiles
        .iter()
        .map(|&p| nav.grid_for(p, Clearance::NONE))
        .collect();
    let Some(grids) = grids else {
        // (A profile the grid does not have: its agents' requests fail, and
        // until then nobody moves.)
        return;
    };
    avoidance.step(discs, &grids, &settings.options(), dt, motions);
    for disc in discs.iter().filter(|d| d.arrived) {
        if let Some((id, _)) = disc.goal {
            *arrived_at.entry(id).or_insert(0) += 1;
        }
    }
    for (&(entity, here), (motion, disc)) in order.iter().zip(motions.iter().zip(discs.iter())) {
        let Ok((_, follower, request, mut path, mut state, mut place)) = agents.get_mut(entity)
        else {
            continue;
        };
        // An agent walking the way out of where it does not fit (it spawned
        // there, or an edit closed in on it), or standing in a wall, walks
        // as a plain follower: the way out leads to where it fits, never
        // closer to a wall, and there avoidance takes over. It walks it to
        // the point: close to the way out's end it has not arrived (an
        // arrived agent stands still, and would stay where it does not fit).
        // (One that fits where it stands, or does not see the way out's
        // end, was moved there after its search started: it walks to its
        // path's moved start by avoidance, which keeps it from the walls.)
        let way_out = path.start_moved
            && path.next == 0
            && !fits(grids[disc.grid], f64::from(request.radius) / cell, here)
            && path.grid_waypoints.first().is_some_and(|&end| {
                !grids[disc.grid].is_point_traversable(here)
                    || crate::los::line_of_sight(grids[disc.grid], here, end)
            });
        state.velocity = motion.velocity;
        state.arrived = motion.arrived && !way_out;
        let was_arrived = disc.arrived;
        let walled = !grids[disc.grid].is_point_traversable(here);
        let step = if way_out || walled {
            disc.preferred * dt
        } else {
            motion.step
        };
        let to = here + step;
        // Held up close to its end (its goal taken by agents that arrived
        // elsewhere and were pushed there, or the crowd arrived there in
        // its way): once it has come no closer to its end for a while, it
        // has arrived. However it jostles, it ends.
        let arrived_here = disc
            .goal
            .map_or(0, |(id, _)| arrived_at.get(&id).copied().unwrap_or(0));
        let reach = held_reach(disc.radius, arrived_here);
        let to_end = path.grid_waypoints.last().map(|e| to.distance(*e));
        // Alone at its end, it must also stand still: one that jostles on
        // towards its own goal is not held up yet.
        let still = arrived_here > 0 || step.length() < 0.1 * disc.max_speed * dt;
        match to_end {
            Some(d) if d <= reach && !state.arrived && still => match state.closest {
                Some(closest) if d > closest - PROGRESS => {
                    state.stalled = state.stalled.saturating_add(1);
                }
                _ => {
                    state.closest = Some(d);
                    state.stalled = 0;
                }
            },
            _ => {
                state.closest = None;
                state.stalled = 0;
            }
        }
        if state.stalled >= STALL_FRAMES {
            state.arrived = true;
            state.reach = reach;
        }
        // Held up on its way: pushed to where a wall hides its waypoint
        // (the wall then leaves it no way forward, or only a slide to and
        // fro along it), it plans again from there.
        let target = path.grid_waypoints.get(path.next).copied();
        match target {
            Some(target) if !state.arrived && !way_out && !walled => {
                let d = to.distance(target);
                // (A new state's aim is (0, 0): taken as unset.)
                let fresh = state.aim.0 != path.next || state.aim.1 == 0.0;
                if fresh || d < state.aim.1 - PROGRESS {
                    state.aim = (path.next, d);
                    state.held = 0;
                } else {
                    state.held += 1;
                }
                if state.held >= HELD_FRAMES {
                    state.held = 0;
                    let radius = f64::from(request.radius) / cell;
                    if !sees(grids[disc.grid], radius, to, target) {
                        unseen.0.push(entity);
                    }
                }
            }
            _ => state.held = 0,
        }
        if step != DVec2::ZERO {
            let world: Vec2 = nav.to_world(to);
            #[cfg(feature = "transform")]
            move_on(&mut place, &parents, plane, |_| Some(world));
            #[cfg(not(feature = "transform"))]
            move_on(&mut place, plane, |_| Some(world));
        }
        // Waypoints it came close to are passed. It arrives within its
        // radius of its path's end (or its arrive radius), or where the
        // crowd there stops it.
        let path = path.bypass_change_detection();
        // It passes a waypoint it comes within half its radius of (its
        // waypoints keep its radius from the walls, and the step to the
        // next one is made safe).
        let pass = (disc.radius * 0.5).max(0.05);
        let arrive = (f64::from(follower.arrive_radius.max(0.0)) / cell).max(disc.radius);
        let n = path.grid_waypoints.len();
        while path.next < n {
            let d = to.distance(path.grid_waypoints[path.next]);
            let last = path.next + 1 == n;
            // A cut path's end and the way out of a wall are walked to the
            // point, as a plain follower walks them.
            let exact = path.cut || (path.start_moved && path.next == 0);
            let arrive = if exact { 1e-9 } else { arrive };
            if last && (d <= arrive || (state.arrived && !exact)) {
                path.next = n;
                if !was_arrived || d <= arrive {
                    state.arrival = if d <= arrive {
                        Arrival::AtEnd
                    } else if state.stalled >= STALL_FRAMES {
                        Arrival::HeldUp
                    } else {
                        Arrival::Beside
                    };
                }
                state.arrived = true;
            } else if !last && d <= pass {
                path.next += 1;
            } else {
                break;
            }
        }
        // Where it came to rest, kept while it stays arrived.
        state.rest = match (state.arrived, state.rest) {
            (false, _) => None,
            (true, Some(rest)) if was_arrived => Some(rest),
            (true, _) => Some(nav.to_world(to)),
        };
    }
    counters.0.avoidance_cost = cost.elapsed();
}
