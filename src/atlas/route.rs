//! Routes across an atlas: the legs from the start to the link ends of its
//! area and from the link ends of the goal's area to the goal (one
//! one-to-many search each), joined through the link tables by Dijkstra's
//! algorithm.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bevy_math::DVec2;

use super::closure::{GoalEdges, Layout, Ordered, Queue, Via, relax};
use super::table::EndTable;
use super::{AreaId, Atlas, AtlasError, LinkId, Place, Side};
use crate::geom::polyline_length;
use crate::search::{
    Algorithm, FallbackPolicy, Path, PathKind, PathQuery, PlanError, PlanOptions, Planner,
};

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
        let k_layout = (k, &self.layouts[k]);
        let layout = k_layout.1;
        if let Some(route) = self.find_between(planner, query, k_layout, (from, goal))? {
            return Ok(finish(route, PathKind::Found, start_moved_from));
        }

        // No route through the rows: every leg from the start and to the
        // goal, then Dijkstra over every end (which also finds the
        // fallback). The legs from the start to its area's ends are
        // searched from the start, so each answer runs from an end to it.
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
        let (source, target) = (layout.n, layout.n + 1);
        let mut dist = vec![f64::INFINITY; layout.n + 2];
        let mut via = vec![Via::None; layout.n + 2];
        let mut heap = Queue::new();
        dist[source] = 0.0;
        let first_offset = layout.offsets[query.from.area.index()];
        for (i, answer) in start_legs.iter().enumerate() {
            let d = found(answer, first.ends[i].valid);
            relax(
                &mut dist,
                &mut via,
                &mut heap,
                first_offset + i,
                d,
                Via::Start,
            );
        }
        if same {
            let d = found(&goal_legs[last.ends.len()], true);
            relax(
                &mut dist,
                &mut via,
                &mut heap,
                target,
                d,
                Via::Goal(u32::MAX),
            );
        }
        let goal_area = query.to.area.index();
        let legs: Vec<f64> = (0..last.ends.len())
            .map(|j| found(&goal_legs[j], last.ends[j].valid))
            .collect();
        let edges = GoalEdges {
            area: goal_area,
            legs: &legs,
        };
        let agent = (query.radius, query.profiles);
        self.end_search(
            k_layout,
            agent,
            &mut dist,
            &mut via,
            &mut heap,
            Some(&edges),
        );
        let offsets = &layout.offsets;

        // The legs to `last` (an end, or `u32::MAX`: the start itself),
        // then `goal_path`.
        let legs_to = |last: u32, goal_path: &Result<Path, PlanError>| {
            let chain = chain_to(&via, last);
            let start_path: Vec<DVec2> = match chain.first() {
                Some(&first) => {
                    match &start_legs[first as usize - offsets[query.from.area.index()]] {
                        Ok(path) => path.waypoints.iter().rev().copied().collect(),
                        Err(_) => Vec::new(),
                    }
                }
                None => Vec::new(),
            };
            let goal_path = goal_path.as_ref().map_or(&[][..], |p| &p.waypoints[..]);
            self.assemble(
                k_layout,
                (query.from.area, from),
                &start_path,
                (&chain, &via),
                goal_path,
            )
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
            let legs = legs_to(before, &goal_legs[leg]);
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
            Some((.., node, i)) => legs_to(node, &goal_legs[i]),
            None => vec![Leg {
                area: query.from.area,
                waypoints: vec![from],
                length: 0.0,
                then: None,
            }],
        };
        Ok(finish(legs, kind, start_moved_from))
    }

    /// The shortest route through the cached rows of the start area's
    /// ends, if one exists: the least of `d(start, i) + row_i(j) + d(j,
    /// goal)` over the ends `i` of the start's area and `j` of the goal's
    /// (and of the straight leg, in one area), each leg searched alone
    /// only once its straight-line bound makes its pair the best left.
    /// `None`: no route (the caller then works out the fallback).
    fn find_between(
        &self,
        planner: &mut Planner,
        query: &RouteQuery,
        (k, layout): (usize, &Layout),
        (from, goal): (DVec2, DVec2),
    ) -> Result<Option<Vec<Leg>>, AtlasError> {
        let (a, b) = (query.from.area.index(), query.to.area.index());
        let (first, last) = (&self.areas[a].tables[k], &self.areas[b].tables[k]);
        let rows = self.rows(a, k, (query.radius, query.profiles));
        let options = PlanOptions {
            algorithm: Algorithm::Polyanya,
            fallback: FallbackPolicy::Fail,
            heuristic_weight: 1.0,
            node_budget: None,
        };
        // Each leg's lower bound (exact once `known`) and path; the
        // straight leg's, in one area.
        // (Ends in another region of the grid than the start or goal are
        // out of reach without a search.)
        let region_of = |table: &EndTable, p: DVec2| {
            crate::endpoint::Endpoint::resolve(table.mesh.grid(), p).map(|e| e.region)
        };
        let (start_region, goal_region) = (region_of(first, from), region_of(last, goal));
        let straight = |p: DVec2, q: DVec2, valid: bool| {
            if valid { p.distance(q) } else { f64::INFINITY }
        };
        let mut start = Legs {
            bound: first
                .ends
                .iter()
                .map(|e| straight(from, e.point, e.valid && e.region() == start_region))
                .collect(),
            known: vec![false; first.ends.len()],
            paths: vec![Vec::new(); first.ends.len()],
        };
        let mut end = Legs {
            bound: last
                .ends
                .iter()
                .map(|e| straight(e.point, goal, e.valid && e.region() == goal_region))
                .collect(),
            known: vec![false; last.ends.len()],
            paths: vec![Vec::new(); last.ends.len()],
        };
        let same = a == b && start_region == goal_region;
        let mut direct = (straight(from, goal, same), !same, Vec::new());
        let leg = |planner: &mut Planner, mesh, p: DVec2, q: DVec2| -> (f64, Vec<DVec2>) {
            match planner.find(&PathQuery::new(mesh, p, q).with_options(options)) {
                Ok(path) if path.kind == PathKind::Found && path.start_moved_from.is_none() => {
                    (path.length, path.waypoints)
                }
                _ => (f64::INFINITY, Vec::new()),
            }
        };
        let b_offset = layout.offsets[b];
        let mut searches = 0;
        // The start's ends by the least bound of a route through them (the
        // straight leg as `usize::MAX`): bounds only grow as legs become
        // known, so a key popped is checked afresh before it counts.
        let through = |i: usize, start: &Legs, end: &Legs, direct: f64| -> (f64, usize) {
            if i == usize::MAX {
                return (direct, 0);
            }
            let row = &self.row(&rows, i, (k, layout)).dist;
            let mut best = (f64::INFINITY, 0);
            for (j, &from_j) in end.bound.iter().enumerate() {
                let key = start.bound[i] + row[b_offset + j] + from_j;
                if key < best.0 {
                    best = (key, j);
                }
            }
            best
        };
        let mut queue: BinaryHeap<Reverse<(Ordered, usize)>> = BinaryHeap::new();
        queue.push(Reverse((Ordered(direct.0), usize::MAX)));
        // (Before its row is read, an end's bound leaves the table out.)
        let nearest_goal = end.bound.iter().copied().fold(f64::INFINITY, f64::min);
        for (i, &to_i) in start.bound.iter().enumerate() {
            if to_i + nearest_goal < f64::INFINITY {
                queue.push(Reverse((Ordered(to_i + nearest_goal), i)));
            }
        }
        loop {
            let Some(Reverse((Ordered(was), i))) = queue.pop() else {
                return Ok(None);
            };
            let (key, j) = through(i, &start, &end, direct.0);
            if key == f64::INFINITY {
                continue;
            }
            if key > was {
                queue.push(Reverse((Ordered(key), i)));
                continue;
            }
            queue.push(Reverse((Ordered(key), i)));
            if i == usize::MAX {
                if direct.1 {
                    let legs = self.assemble(
                        (k, layout),
                        (query.from.area, from),
                        &[],
                        (&[], &[]),
                        &direct.2,
                    );
                    return Ok(Some(legs));
                }
                let (d, path) = leg(planner, &first.mesh, from, goal);
                direct = (d, true, path);
                searches += 1;
                continue;
            }
            if start.known[i] && end.known[j] {
                let via = &self.row(&rows, i, (k, layout)).via;
                let chain = chain_to(via, (b_offset + j) as u32);
                let legs = self.assemble(
                    (k, layout),
                    (query.from.area, from),
                    &start.paths[i],
                    (&chain, via),
                    &end.paths[j],
                );
                return Ok(Some(legs));
            }
            if searches >= ALONE {
                // The bounds are loose here: every leg at once, by one
                // one-to-many search on each side.
                start.search_all(planner, first, from, true);
                end.search_all(planner, last, goal, false);
                continue;
            }
            if !start.known[i] {
                let (d, path) = leg(planner, &first.mesh, from, first.ends[i].point);
                start.learn(first, i, d, path);
                searches += 1;
            }
            if !end.known[j] {
                let (d, path) = leg(planner, &last.mesh, last.ends[j].point, goal);
                end.learn(last, j, d, path);
                searches += 1;
            }
        }
    }

    /// The legs of a route from `start`: along `start_path` (from the start
    /// to `chain`'s first node; empty if the chain is), through `chain`
    /// (nodes, each after the first reached as `via` says), then along
    /// `goal_path` (from the chain's last node, or from the start).
    fn assemble(
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

/// Single-leg searches a route query runs before it searches every leg
/// of a side at once.
const ALONE: usize = 16;

/// The legs between one point (the start, or the goal) and the link ends
/// of its area: a lower bound on each leg's length, exact once known, and
/// its path once searched.
struct Legs {
    bound: Vec<f64>,
    known: Vec<bool>,
    /// From the start to the end, or from the end to the goal.
    paths: Vec<Vec<DVec2>>,
}

impl Legs {
    /// Leg `i` is `d` long (infinite: none) along `path`; the others'
    /// bounds tighten by the triangle inequality through the table: the
    /// point is at least `|d - table(i, i')|` from end `i'`, and cut off
    /// from every end joined to a cut-off one (or cut off from `i`).
    fn learn(&mut self, table: &EndTable, i: usize, d: f64, path: Vec<DVec2>) {
        self.bound[i] = d;
        self.known[i] = true;
        self.paths[i] = path;
        for other in 0..self.bound.len() {
            if self.known[other] {
                continue;
            }
            let t = table.dist(i, other);
            let bound = match (d.is_finite(), t.is_finite()) {
                (true, true) => (t - d).abs(),
                (true, false) | (false, true) => f64::INFINITY,
                (false, false) => continue,
            };
            self.bound[other] = self.bound[other].max(bound);
        }
    }

    /// Searches every leg not yet known at once: one one-to-many search
    /// from `point`, towards the start (`to_end`: the legs run from the
    /// point to the ends) or the goal.
    fn search_all(&mut self, planner: &mut Planner, table: &EndTable, point: DVec2, to_end: bool) {
        let todo: Vec<usize> = (0..self.bound.len())
            .filter(|&i| !self.known[i] && self.bound[i].is_finite())
            .collect();
        if todo.is_empty() {
            return;
        }
        let starts: Vec<DVec2> = todo.iter().map(|&i| table.ends[i].point).collect();
        let options = PlanOptions {
            algorithm: Algorithm::Polyanya,
            fallback: FallbackPolicy::ClosestReachable,
            heuristic_weight: 1.0,
            node_budget: None,
        };
        let mut answers = Vec::new();
        planner.plan_many_on_mesh(&table.mesh, &starts, point, &options, &mut answers);
        for (&i, answer) in todo.iter().zip(answers) {
            let (d, mut path) = match answer {
                Ok(path) if path.kind == PathKind::Found => (path.length, path.waypoints),
                _ => (f64::INFINITY, Vec::new()),
            };
            if to_end {
                path.reverse();
            }
            self.bound[i] = d;
            self.known[i] = true;
            self.paths[i] = path;
        }
    }
}

/// The nodes from the first of a search's chain to `last` (`u32::MAX`:
/// none), following the table and link steps of `via` back.
fn chain_to(via: &[Via], last: u32) -> Vec<u32> {
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
