//! Routes across an atlas: the legs from the start to the link ends of its
//! area and from the link ends of the goal's area to the goal (one
//! one-to-many search each), joined through the link tables by Dijkstra's
//! algorithm.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bevy_math::DVec2;

use super::table::EndTable;
use super::{AreaId, Atlas, AtlasError, LinkId, Place, Side};
use crate::geom::polyline_length;
use crate::search::{Algorithm, FallbackPolicy, Path, PathKind, PlanError, PlanOptions, Planner};

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

/// How the search reached a node.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    None,
    /// From the start, by the start leg to this end.
    Start,
    /// From end `node` of the same area, through the table.
    Table(u32),
    /// From end `node`, across a link.
    Link(u32),
    /// From end `node` (the goal's area), by its goal leg; or from the
    /// start directly (`u32::MAX`).
    Goal(u32),
}

impl Atlas {
    /// The shortest route for `query` (see the [module docs](super)),
    /// using `planner`'s memory for the legs' searches.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownArea`], [`AtlasError::RadiusNotServed`], or
    /// [`AtlasError::Plan`] for a leg's error (a non-finite point, a start
    /// where the agent does not fit and sees no place where it does, an
    /// unreachable goal with [`FallbackPolicy::Fail`]).
    pub fn find(&self, planner: &mut Planner, query: &RouteQuery) -> Result<Route, AtlasError> {
        let k = self
            .class_of(query.radius)
            .filter(|_| query.radius >= 0.0)
            .ok_or(AtlasError::RadiusNotServed(query.radius))?;
        let table = |place: Place| {
            self.areas
                .get(place.area.index())
                .map(|a| &a.tables[k])
                .ok_or(AtlasError::UnknownArea(place.area))
        };
        let (first, last) = (table(query.from)?, table(query.to)?);
        if !query.to.point.is_finite() {
            return Err(PlanError::NonFinite(crate::search::Role::Goal).into());
        }
        let (from, start_moved_from) = planner.start_on_mesh(&first.mesh, query.from.point)?;
        let goal = query.to.point + DVec2::ZERO;
        let options = PlanOptions {
            algorithm: Algorithm::Polyanya,
            fallback: FallbackPolicy::ClosestReachable,
            heuristic_weight: 1.0,
            node_budget: None,
        };
        let same = query.from.area == query.to.area;

        // The legs from the start to its area's ends (searched from the
        // start, so each answer runs from an end to the start).
        let mut starts: Vec<DVec2> = first.ends.iter().map(|e| e.point).collect();
        let mut start_legs = Vec::new();
        planner.plan_many_on_mesh(&first.mesh, &starts, from, &options, &mut start_legs);
        // The legs from the goal area's ends (and the start, in the same
        // area) to the goal.
        starts.clear();
        starts.extend(last.ends.iter().map(|e| e.point));
        if same {
            starts.push(from);
        }
        let mut goal_legs = Vec::new();
        planner.plan_many_on_mesh(&last.mesh, &starts, goal, &options, &mut goal_legs);
        let found = |answer: &Result<Path, PlanError>, valid: bool| match answer {
            Ok(path) if valid && path.kind == PathKind::Found => path.length,
            _ => f64::INFINITY,
        };

        // Dijkstra over the ends of every area; the start and the goal
        // are nodes `n` and `n + 1`.
        let offsets: Vec<usize> = self
            .areas
            .iter()
            .scan(0, |sum, a| {
                let at = *sum;
                *sum += a.tables[k].ends.len();
                Some(at)
            })
            .collect();
        let n = self
            .areas
            .iter()
            .map(|a| a.tables[k].ends.len())
            .sum::<usize>();
        let (source, target) = (n, n + 1);
        let mut dist = vec![f64::INFINITY; n + 2];
        let mut via = vec![Via::None; n + 2];
        // Which node each link end is.
        let mut node_of = vec![[u32::MAX; 2]; self.links.len()];
        let mut area_of = vec![0_u32; n];
        for (a, area) in self.areas.iter().enumerate() {
            for (i, end) in area.tables[k].ends.iter().enumerate() {
                let node = offsets[a] + i;
                node_of[end.link.index()][end.side as usize] = node as u32;
                area_of[node] = a as u32;
            }
        }
        let mut heap = BinaryHeap::new();
        let mut relax =
            |dist: &mut Vec<f64>, heap: &mut BinaryHeap<_>, to: usize, d: f64, how: Via| {
                if d < dist[to] {
                    dist[to] = d;
                    via[to] = how;
                    heap.push(Reverse((Ordered(d), to as u32)));
                }
            };
        dist[source] = 0.0;
        let first_offset = offsets[query.from.area.index()];
        for (i, answer) in start_legs.iter().enumerate() {
            let d = found(answer, first.ends[i].valid);
            relax(&mut dist, &mut heap, first_offset + i, d, Via::Start);
        }
        if same {
            let d = found(&goal_legs[last.ends.len()], true);
            relax(&mut dist, &mut heap, target, d, Via::Goal(u32::MAX));
        }
        let goal_area = query.to.area.index();
        while let Some(Reverse((Ordered(d), node))) = heap.pop() {
            let node = node as usize;
            if d > dist[node] {
                continue;
            }
            if node == target {
                break;
            }
            let a = area_of[node] as usize;
            let table: &EndTable = &self.areas[a].tables[k];
            let i = node - offsets[a];
            for j in 0..table.ends.len() {
                if j != i {
                    let to = offsets[a] + j;
                    relax(
                        &mut dist,
                        &mut heap,
                        to,
                        d + table.dist(i, j),
                        Via::Table(node as u32),
                    );
                }
            }
            let end = &table.ends[i];
            if let Some(link) = self.link(end.link)
                && link.allows(query.radius, query.profiles)
                && (end.side == Side::From || link.both_ways)
            {
                let other = node_of[end.link.index()][1 - end.side as usize] as usize;
                let a2 = area_of[other] as usize;
                if self.areas[a2].tables[k].ends[other - offsets[a2]].valid {
                    relax(
                        &mut dist,
                        &mut heap,
                        other,
                        d + link.cost,
                        Via::Link(node as u32),
                    );
                }
            }
            if a == goal_area {
                let leg = found(&goal_legs[i], true);
                relax(
                    &mut dist,
                    &mut heap,
                    target,
                    d + leg,
                    Via::Goal(node as u32),
                );
            }
        }

        let walk = Walk {
            atlas: self,
            k,
            offsets: &offsets,
            area_of: &area_of,
            via: &via,
            start: (query.from.area, from),
            start_legs: &start_legs,
        };
        if dist[target].is_finite() {
            let before = match via[target] {
                Via::Goal(before) => before,
                _ => u32::MAX,
            };
            let leg = if before == u32::MAX {
                last.ends.len()
            } else {
                before as usize - offsets[goal_area]
            };
            let mut legs = walk.legs_to(before);
            extend(&mut legs, &goal_legs[leg]);
            return Ok(finish(legs, PathKind::Found, start_moved_from));
        }
        // Unreachable: the closest fallback target the agent reaches on the
        // goal's area, the shorter route on a tie.
        let mut best: Option<(f64, f64, u32, usize)> = None;
        for (i, answer) in goal_legs.iter().enumerate() {
            let (node, reached) = if i < last.ends.len() {
                let node = offsets[goal_area] + i;
                (node as u32, dist[node])
            } else {
                (u32::MAX, 0.0)
            };
            if let Ok(path) = answer
                && reached.is_finite()
                && (i == last.ends.len() || last.ends[i].valid)
            {
                let key = (path.end().distance(goal), reached + path.length);
                if best.is_none_or(|(a, b, ..)| (key.0, key.1) < (a, b)) {
                    best = Some((key.0, key.1, node, i));
                }
            }
        }
        let closest = best
            .and_then(|(.., i)| goal_legs[i].as_ref().ok())
            .map_or(from, Path::end);
        if query.fallback == FallbackPolicy::Fail {
            return Err(PlanError::Unreachable { closest }.into());
        }
        let kind = PathKind::Fallback {
            requested_goal: goal,
        };
        let legs = match best {
            Some((.., node, i)) => {
                let mut legs = walk.legs_to(node);
                extend(&mut legs, &goal_legs[i]);
                legs
            }
            None => vec![Leg {
                area: query.from.area,
                waypoints: vec![from],
                length: 0.0,
                then: None,
            }],
        };
        Ok(finish(legs, kind, start_moved_from))
    }
}

/// What the route's legs are read from once the search is done.
struct Walk<'a> {
    atlas: &'a Atlas,
    k: usize,
    offsets: &'a [usize],
    area_of: &'a [u32],
    via: &'a [Via],
    start: (AreaId, DVec2),
    start_legs: &'a [Result<Path, PlanError>],
}

impl Walk<'_> {
    /// The legs from the start to node `last` (`u32::MAX`: the start).
    fn legs_to(&self, last: u32) -> Vec<Leg> {
        let mut chain = Vec::new();
        let mut node = last;
        while node != u32::MAX {
            chain.push(node);
            node = match self.via[node as usize] {
                Via::Start => u32::MAX,
                Via::Table(n) | Via::Link(n) => n,
                Via::None | Via::Goal(_) => unreachable!("ends are reached from the start"),
            };
        }
        chain.reverse();
        let mut legs = vec![Leg {
            area: self.start.0,
            waypoints: vec![self.start.1],
            length: 0.0,
            then: None,
        }];
        let mut previous: Option<usize> = None;
        for &node in &chain {
            let node = node as usize;
            let a = self.area_of[node] as usize;
            let table = &self.atlas.areas[a].tables[self.k];
            let i = node - self.offsets[a];
            let leg = legs.last_mut().expect("a leg");
            match self.via[node] {
                Via::Start => {
                    let path = self.start_legs[i].as_ref().expect("a found leg");
                    leg.waypoints.extend(path.waypoints.iter().rev().skip(1));
                }
                Via::Table(_) => {
                    let from = previous.expect("an end before") - self.offsets[a];
                    table.extend_path(from, i, &mut leg.waypoints);
                }
                Via::Link(_) => {
                    let end = &table.ends[i];
                    let link = self.atlas.link(end.link).expect("a live link");
                    leg.then = Some(Crossing {
                        link: end.link,
                        forward: end.side == Side::To,
                        cost: link.cost,
                    });
                    legs.push(Leg {
                        area: AreaId(a as u32),
                        waypoints: vec![end.point],
                        length: 0.0,
                        then: None,
                    });
                }
                Via::None | Via::Goal(_) => unreachable!("ends are reached from the start"),
            }
            previous = Some(node);
        }
        legs
    }
}

/// Appends the goal leg `path` (which starts where the last leg ends).
fn extend(legs: &mut [Leg], path: &Result<Path, PlanError>) {
    if let (Some(leg), Ok(path)) = (legs.last_mut(), path) {
        leg.waypoints.extend_from_slice(&path.waypoints[1..]);
    }
}

/// The route of `legs`, their lengths summed.
fn finish(mut legs: Vec<Leg>, kind: PathKind, start_moved_from: Option<DVec2>) -> Route {
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

/// An `f64` ordered by `total_cmp`, for the heap.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ordered(f64);

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
