//! Routes across an atlas: the legs from the start to the link ends of its
//! area and from the link ends of the goal's area to the goal (one
//! one-to-many search each), joined through the link tables by Dijkstra's
//! algorithm.

use bevy_math::DVec2;

use super::closure::{Layout, Via};
use super::{AreaId, Atlas, LinkId, Place, Side};
use crate::geom::polyline_length;
use crate::search::{FallbackPolicy, PathKind};

/// A route query: from a place to a place, for an agent of a radius and a
/// profile.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RouteQuery {
    /// Where the route starts.
    pub from: Place,
    /// Where it should end.
    pub to: Place,
    /// The agent's radius, in cells (0: a point).
    pub radius: f64,
    /// The agent's profiles, as a bit mask: a link may be crossed if it
    /// shares a bit with [`Link::profiles`](super::Link::profiles).
    pub profiles: u64,
    /// Unreachable goals: fallback route or error (see the
    /// [module docs](super)).
    pub fallback: FallbackPolicy,
}

impl RouteQuery {
    /// A query for a point agent of any profile, with a fallback route.
    #[must_use]
    pub fn new(from: Place, to: Place) -> Self {
        RouteQuery {
            from,
            to,
            radius: 0.0,
            profiles: u64::MAX,
            fallback: FallbackPolicy::ClosestReachable,
        }
    }

    /// The same query for an agent of radius `radius`.
    #[must_use]
    pub fn with_radius(self, radius: f64) -> Self {
        RouteQuery { radius, ..self }
    }

    /// The same query for the profiles of bit mask `profiles`.
    #[must_use]
    pub fn with_profiles(self, profiles: u64) -> Self {
        RouteQuery { profiles, ..self }
    }

    /// The same query with fallback policy `fallback`.
    #[must_use]
    pub fn with_fallback(self, fallback: FallbackPolicy) -> Self {
        RouteQuery { fallback, ..self }
    }
}

/// A link a route crosses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Crossing {
    /// The link.
    pub link: LinkId,
    /// Whether it is crossed from its `from` end to its `to` end (else
    /// back).
    pub forward: bool,
    /// What crossing it costs.
    pub cost: f64,
}

/// The part of a route on one area.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Leg {
    /// The area.
    pub area: AreaId,
    /// Waypoints in the area's grid coordinates, each consecutive pair
    /// mutually visible (keeping the agent's radius from walls).
    pub waypoints: Vec<DVec2>,
    /// The length of the polyline.
    pub length: f64,
    /// The link crossed at the end of the leg; `None` for the last.
    pub then: Option<Crossing>,
}

/// A route across an atlas: legs joined by links.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Route {
    /// The legs, at least one.
    pub legs: Vec<Leg>,
    /// The legs' lengths plus the links' costs.
    pub length: f64,
    /// Whether the route reaches the goal or falls back.
    pub kind: PathKind,
    /// If the start was not a valid point for the agent, where it was: the
    /// route starts at the point the start rule moved it to.
    pub start_moved_from: Option<DVec2>,
}

impl Route {
    /// Whether the route falls back (the goal was unreachable).
    #[must_use]
    pub fn is_fallback(&self) -> bool {
        matches!(self.kind, PathKind::Fallback { .. })
    }

    /// The links crossed, in order.
    pub fn crossings(&self) -> impl Iterator<Item = Crossing> + '_ {
        self.legs.iter().filter_map(|l| l.then)
    }

    /// Where the route ends.
    #[must_use]
    pub fn end(&self) -> Place {
        let last = &self.legs[self.legs.len() - 1];
        Place::new(last.area, last.waypoints[last.waypoints.len() - 1])
    }
}

impl Atlas {
    /// The legs of a route from `start`: along `start_path` (from the start
    /// to `chain`'s first node; empty if the chain is), through `chain`
    /// (nodes, each after the first reached as `via` says), then along
    /// `goal_path` (from the chain's last node, or from the start).
    pub(super) fn assemble(
        &self,
        (k, layout): (usize, &Layout),
        start: (AreaId, DVec2),
        start_path: &[DVec2],
        (chain, via): (&[u32], &[Via]),
        goal_path: &[DVec2],
    ) -> Vec<Leg> {
        let mut legs = vec![Leg {
            area: start.0,
            waypoints: vec![start.1],
            length: 0.0,
            then: None,
        }];
        if let Some(path) = start_path.get(1..) {
            legs[0].waypoints.extend_from_slice(path);
        }
        for pair in chain.windows(2) {
            let (previous, node) = (pair[0] as usize, pair[1] as usize);
            let a = layout.area_of[node] as usize;
            let table = &self.areas[a].tables[k];
            let i = node - layout.offsets[a];
            let Some(leg) = legs.last_mut() else { break };
            match via[node] {
                Via::Link(_) => {
                    let end = &table.ends[i];
                    let cost = self.link(end.link).map_or(0.0, |l| l.cost);
                    leg.then = Some(Crossing {
                        link: end.link,
                        forward: end.side == Side::To,
                        cost,
                    });
                    legs.push(Leg {
                        area: AreaId(a as u32),
                        waypoints: vec![end.point],
                        length: 0.0,
                        then: None,
                    });
                }
                _ => table.extend_path(previous - layout.offsets[a], i, &mut leg.waypoints),
            }
        }
        if let (Some(leg), Some(path)) = (legs.last_mut(), goal_path.get(1..)) {
            leg.waypoints.extend_from_slice(path);
        }
        legs
    }
}

/// The nodes from the first of a search's chain to `last` (`u32::MAX`:
/// none), following the table and link steps of `via` back.
pub(super) fn chain_to(via: &[Via], last: u32) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut node = last;
    while node != u32::MAX {
        chain.push(node);
        node = match via[node as usize] {
            Via::Table(n) | Via::Link(n) => n,
            _ => u32::MAX,
        };
    }
    chain.reverse();
    chain
}

/// The route of `legs`, their lengths summed.
pub(super) fn finish(mut legs: Vec<Leg>, kind: PathKind, start_moved_from: Option<DVec2>) -> Route {
    let mut length = 0.0;
    for leg in &mut legs {
        leg.waypoints.dedup();
        leg.length = polyline_length(&leg.waypoints);
        length += leg.length + leg.then.map_or(0.0, |c| c.cost);
    }
    Route {
        legs,
        length,
        kind,
        start_moved_from,
    }
}
