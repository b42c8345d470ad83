//! Route queries, whole or a slice at a time: the legs from the start and
//! to the goal searched one at a time, best bound first (the shorter leg
//! of a pair first), over the cached routes between link ends; each side's
//! legs by one search that goes on from one leg to the next (see
//! `search::legs`). When no route exists that way: every leg at once and
//! Dijkstra over every end, which also finds the fallback.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use bevy_math::DVec2;

use super::closure::{GoalEdges, Ordered, Queue, Rows, Via, relax};
use super::route::{RouteQuery, chain_to, finish};
use super::table::EndTable;
use super::{Atlas, AtlasError, Leg, Place, Route};
use crate::search::legs::LegSearch;
use crate::search::{
    Algorithm, FallbackPolicy, Path, PathKind, PathQuery, PlanError, PlanOptions, Planner, Role,
};

/// A route query run a slice at a time by [`Atlas::step`]: the answer is
/// the one [`Atlas::find`] gives, however the work is sliced. An atlas
/// changed between two slices makes the next slice start the query over.
///
/// ```
/// use bevy_anyangle::atlas::{Atlas, Link, Place, RouteQuery, RouteTask};
/// use bevy_anyangle::prelude::*;
///
/// let mut atlas = Atlas::new();
/// let ground = atlas.add_area(Grid::from_ascii("......\n.####.\n......").unwrap());
/// let upper = atlas.add_area(Grid::new(6, 3).unwrap());
/// let at = DVec2::new(5.5, 1.5);
/// atlas.add_link(Link::new(Place::new(ground, at), Place::new(upper, at))).unwrap();
/// let query = RouteQuery::new(
///     Place::new(ground, DVec2::new(0.5, 1.5)),
///     Place::new(upper, DVec2::new(0.5, 1.5)),
/// );
/// let mut planner = Planner::new();
/// let mut task = RouteTask::new(query);
/// let route = loop {
///     // At most 2 node expansions a slice.
///     if let Some(answer) = atlas.step(&mut planner, &mut task, 2) {
///         break answer.unwrap();
///     }
/// };
/// assert_eq!(route, atlas.find(&mut Planner::new(), &query).unwrap());
/// ```
#[derive(Clone, Debug)]
pub struct RouteTask {
    query: RouteQuery,
    /// The atlas version the work so far was done on.
    version: u64,
    state: State,
    /// The legs to the goal, searched for many queries at once.
    goal_legs: Option<Arc<GoalLegs>>,
}

impl RouteTask {
    /// A task for `query`, not begun.
    #[must_use]
    pub fn new(query: RouteQuery) -> Self {
        RouteTask {
            query,
            version: u64::MAX,
            state: State::Fresh,
            goal_legs: None,
        }
    }

    /// This task, reading the legs to its goal from `legs` (see
    /// [`Atlas::goal_legs`]) instead of searching them: a route as short as
    /// without them (the same route, but where two are equally short), for
    /// less work. Legs of another goal, radius class or atlas version are
    /// not read.
    #[must_use]
    pub fn with_goal_legs(self, legs: Arc<GoalLegs>) -> Self {
        RouteTask {
            goal_legs: Some(legs),
            ..self
        }
    }

    /// The query.
    #[must_use]
    pub fn query(&self) -> &RouteQuery {
        &self.query
    }
}

/// The legs from every link end of one area to one goal on it, for agents
/// of one served radius: one search from the goal answers them all, and
/// every route query to that goal may read them
/// ([`RouteTask::with_goal_legs`]). Made by [`Atlas::goal_legs`].
pub struct GoalLegs {
    /// The atlas version they were searched on.
    version: u64,
    goal: Place,
    /// The served radius's index.
    k: usize,
    legs: Arc<Legs>,
}

impl core::fmt::Debug for GoalLegs {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GoalLegs")
            .field("goal", &self.goal)
            .field("ends", &self.legs.bound.len())
            .finish_non_exhaustive()
    }
}

/// Where a task stands.
#[derive(Clone, Debug)]
enum State {
    Fresh,
    Lazy(Box<Lazy>),
    Full(Box<Full>),
}

/// A query's resolved inputs.
#[derive(Clone, Copy, Debug)]
struct Setup {
    /// The served radius.
    k: usize,
    /// The start (moved onto the agent's mesh if need be) and the goal.
    from: DVec2,
    goal: DVec2,
    start_moved_from: Option<DVec2>,
}

/// The search one leg at a time.
#[derive(Clone)]
struct Lazy {
    setup: Setup,
    rows: Arc<Rows>,
    start: Legs,
    /// (Shared with other queries when read from [`GoalLegs`].)
    end: Arc<Legs>,
    /// The straight leg in one area: its bound, whether it is known, its
    /// path.
    direct: (f64, bool, Vec<DVec2>),
    /// The start's ends by the least bound of a route through them (the
    /// straight leg as `usize::MAX`).
    queue: BinaryHeap<Reverse<(Ordered, usize)>>,
    /// The searches of the legs from the start and to the goal (from the
    /// goal, the other way), each going on from its last leg.
    start_search: LegSearch,
    end_search: Option<LegSearch>,
    pending: Option<Pending>,
}

impl core::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Lazy")
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

/// A leg search under way.
#[derive(Clone, Copy, Debug)]
enum Pending {
    /// One leg: from the start to end `i`, from end `j` to the goal, or
    /// straight (and whether its search has begun).
    Start(usize),
    End(usize),
    Direct(bool),
}

/// The full search: every leg from the start, then every leg to the goal.
#[derive(Clone, Debug)]
struct Full {
    setup: Setup,
    /// 0: the start's legs, 1: the goal's.
    phase: usize,
    begun: bool,
    points: Vec<DVec2>,
    start_legs: Vec<Result<Path, PlanError>>,
    goal_legs: Vec<Result<Path, PlanError>>,
}

/// A slice's outcome.
enum Progress<T> {
    Paused,
    Done(T),
}

/// The options of a single leg's search: exact, no budget, no fallback.
const SINGLE: PlanOptions = PlanOptions {
    algorithm: Algorithm::Polyanya,
    fallback: FallbackPolicy::Fail,
    heuristic_weight: 1.0,
    node_budget: None,
};

/// The options of a one-to-many search of legs (fallback paths, which
/// the full search reads).
const MANY: PlanOptions = PlanOptions {
    fallback: FallbackPolicy::ClosestReachable,
    ..SINGLE
};

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
        let mut task = RouteTask::new(*query);
        loop {
            if let Some(answer) = self.step(planner, &mut task, u64::MAX) {
                return answer;
            }
        }
    }

    /// Runs `task` for at most about `max_expansions` node expansions (one
    /// leg search's, or one slice of it): its answer once done (the one
    /// [`Atlas::find`] gives), `None` while the work goes on. The planner
    /// must run no other query between two slices of a task. A task that
    /// has answered starts over if stepped again.
    pub fn step(
        &self,
        planner: &mut Planner,
        task: &mut RouteTask,
        max_expansions: u64,
    ) -> Option<Result<Route, AtlasError>> {
        if task.version != self.version {
            task.version = self.version;
            task.state = State::Fresh;
        }
        // Entries an edit left for later are searched before any is read
        // (a no-op but right after a change, when the task starts over).
        self.settle(planner);
        let query = task.query;
        loop {
            match &mut task.state {
                State::Fresh => match self.setup(planner, &query) {
                    Ok(setup) => {
                        let legs = task.goal_legs.as_deref();
                        task.state = State::Lazy(Box::new(self.lazy(planner, &query, setup, legs)));
                    }
                    Err(error) => return Some(Err(error)),
                },
                State::Lazy(lazy) => match self.lazy_step(planner, &query, lazy, max_expansions) {
                    Progress::Paused => return None,
                    Progress::Done(Some(legs)) => {
                        let moved = lazy.setup.start_moved_from;
                        task.state = State::Fresh;
                        return Some(Ok(finish(legs, PathKind::Found, moved)));
                    }
                    Progress::Done(None) => {
                        task.state = State::Full(Box::new(Full {
                            setup: lazy.setup,
                            phase: 0,
                            begun: false,
                            points: Vec::new(),
                            start_legs: Vec::new(),
                            goal_legs: Vec::new(),
                        }));
                    }
                },
                State::Full(full) => match self.full_step(planner, &query, full, max_expansions) {
                    Progress::Paused => return None,
                    Progress::Done(answer) => {
                        task.state = State::Fresh;
                        return Some(answer);
                    }
                },
            }
        }
    }

    /// Checks `query` and resolves its start.
    fn setup(&self, planner: &mut Planner, query: &RouteQuery) -> Result<Setup, AtlasError> {
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
        let (first, _) = (table(query.from)?, table(query.to)?);
        if !query.to.point.is_finite() {
            return Err(PlanError::NonFinite(Role::Goal).into());
        }
        let (from, start_moved_from) = planner.start_on_mesh(&first.mesh, query.from.point)?;
        Ok(Setup {
            k,
            from,
            goal: query.to.point + DVec2::ZERO,
            start_moved_from,
        })
    }

    /// The one-leg-at-a-time search of `query`, not begun: every leg's
    /// bound a straight line (infinite to an end the agent cannot stand at,
    /// or in another region of the grid than the start or goal).
    fn lazy(
        &self,
        planner: &mut Planner,
        query: &RouteQuery,
        setup: Setup,
        shared: Option<&GoalLegs>,
    ) -> Lazy {
        let (a, b) = (query.from.area.index(), query.to.area.index());
        let (first, last) = (
            &self.areas[a].tables[setup.k],
            &self.areas[b].tables[setup.k],
        );
        let region_of = |table: &EndTable, p: DVec2| {
            crate::endpoint::Endpoint::resolve(table.mesh.grid(), p).map(|e| e.region)
        };
        let (from, goal) = (setup.from, setup.goal);
        let (start_region, goal_region) = (region_of(first, from), region_of(last, goal));
        let straight = |p: DVec2, q: DVec2, valid: bool| {
            if valid { p.distance(q) } else { f64::INFINITY }
        };
        let legs = |table: &EndTable, bound: &dyn Fn(&super::table::End) -> f64| Legs {
            bound: table.ends.iter().map(bound).collect(),
            known: vec![false; table.ends.len()],
            paths: vec![Vec::new(); table.ends.len()],
        };
        let start = legs(first, &|e| {
            straight(from, e.point, e.valid && e.region() == start_region)
        });
        let (end, end_search) = match shared {
            Some(shared)
                if shared.version == self.version
                    && shared.goal == Place::new(query.to.area, goal)
                    && shared.k == setup.k =>
            {
                (Arc::clone(&shared.legs), None)
            }
            _ => (
                Arc::new(legs(last, &|e| {
                    straight(e.point, goal, e.valid && e.region() == goal_region)
                })),
                Some(LegSearch::new(
                    planner,
                    &last.mesh,
                    1,
                    goal,
                    Arc::clone(&last.targets),
                )),
            ),
        };
        let same = a == b && start_region == goal_region;
        let direct = (straight(from, goal, same), !same, Vec::new());
        // Before its row is read, an end's bound leaves the table out.
        let nearest_goal = end.bound.iter().copied().fold(f64::INFINITY, f64::min);
        let mut queue = BinaryHeap::new();
        queue.push(Reverse((Ordered(direct.0), usize::MAX)));
        for (i, &to_i) in start.bound.iter().enumerate() {
            if to_i + nearest_goal < f64::INFINITY {
                queue.push(Reverse((Ordered(to_i + nearest_goal), i)));
            }
        }
        Lazy {
            setup,
            rows: self.rows(a, setup.k, (query.radius, query.profiles)),
            start_search: LegSearch::new(planner, &first.mesh, 0, from, Arc::clone(&first.targets)),
            end_search,
            start,
            end,
            direct,
            queue,
            pending: None,
        }
    }

    /// The legs from every link end of `goal`'s area to `goal`, for
    /// agents of radius `radius`: one search from the goal, to be shared by
    /// the route queries of many agents heading there
    /// ([`RouteTask::with_goal_legs`]), for as long as the atlas does not
    /// change.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownArea`], [`AtlasError::RadiusNotServed`], or
    /// [`AtlasError::Plan`] for a goal that is not a finite point.
    pub fn goal_legs(
        &self,
        planner: &mut Planner,
        goal: Place,
        radius: f64,
    ) -> Result<GoalLegs, AtlasError> {
        self.settle(planner);
        let k = self
            .class_of(radius)
            .filter(|_| radius >= 0.0)
            .ok_or(AtlasError::RadiusNotServed(radius))?;
        let last = self
            .areas
            .get(goal.area.index())
            .map(|a| &a.tables[k])
            .ok_or(AtlasError::UnknownArea(goal.area))?;
        if !goal.point.is_finite() {
            return Err(PlanError::NonFinite(Role::Goal).into());
        }
        let point = goal.point + DVec2::ZERO;
        let region = crate::endpoint::Endpoint::resolve(last.mesh.grid(), point).map(|e| e.region);
        let n = last.ends.len();
        let mut legs = Legs {
            bound: vec![f64::INFINITY; n],
            known: vec![false; n],
            paths: vec![Vec::new(); n],
        };
        let todo: Vec<usize> = (0..n)
            .filter(|&j| last.ends[j].valid && last.ends[j].region() == region)
            .collect();
        let points: Vec<DVec2> = todo.iter().map(|&j| last.ends[j].point).collect();
        let mut answers = Vec::new();
        whole_or_sliced(
            planner,
            &last.mesh,
            (&points, point),
            (true, u64::MAX),
            &mut answers,
        );
        for (&j, answer) in todo.iter().zip(answers) {
            let (d, path) = match answer {
                Ok(path) if path.kind == PathKind::Found => (path.length, path.waypoints),
                _ => (f64::INFINITY, Vec::new()),
            };
            legs.bound[j] = d;
            legs.known[j] = true;
            legs.paths[j] = path;
        }
        Ok(GoalLegs {
            version: self.version,
            goal: Place::new(goal.area, point),
            k,
            legs: Arc::new(legs),
        })
    }

    /// One slice of the one-leg-at-a-time search: the least of `d(start,
    /// i) + row_i(j) + d(j, goal)` over the ends `i` of the start's area
    /// and `j` of the goal's (and of the straight leg, in one area), each
    /// leg searched only once its bound makes its pair the best left.
    /// `Done(None)`: no route that way.
    fn lazy_step(
        &self,
        planner: &mut Planner,
        query: &RouteQuery,
        lazy: &mut Lazy,
        max: u64,
    ) -> Progress<Option<Vec<Leg>>> {
        let Setup { k, from, goal, .. } = lazy.setup;
        let layout = &self.layouts[k];
        let (a, b) = (query.from.area.index(), query.to.area.index());
        let (first, last) = (&self.areas[a].tables[k], &self.areas[b].tables[k]);
        let b_offset = layout.offsets[b];
        loop {
            if let Some(pending) = &mut lazy.pending {
                let slice = (max != u64::MAX).then_some(max);
                let mut path = Vec::new();
                match pending {
                    Pending::Start(i) => {
                        let mesh = &first.mesh;
                        let search = &mut lazy.start_search;
                        let Some(d) = planner.leg(mesh, search, *i, slice, &mut path) else {
                            return Progress::Paused;
                        };
                        lazy.start.learn(first, *i, d, path);
                    }
                    Pending::End(j) => {
                        let search = lazy.end_search.as_mut().expect("legs to the goal searched");
                        let Some(d) = planner.leg(&last.mesh, search, *j, slice, &mut path) else {
                            return Progress::Paused;
                        };
                        // (Searched from the goal.)
                        path.reverse();
                        Arc::make_mut(&mut lazy.end).learn(last, *j, d, path);
                    }
                    Pending::Direct(begun) => {
                        let query = PathQuery::new(&first.mesh, from, goal).with_options(SINGLE);
                        // (Whole, a search is not sliced at all.)
                        let answer = if max == u64::MAX {
                            Some(planner.find(&query))
                        } else {
                            planner.step(&query, !*begun, max, None)
                        };
                        *begun = true;
                        let Some(answer) = answer else {
                            return Progress::Paused;
                        };
                        lazy.direct = match answer {
                            Ok(path)
                                if path.kind == PathKind::Found
                                    && path.start_moved_from.is_none() =>
                            {
                                (path.length, true, path.waypoints)
                            }
                            _ => (f64::INFINITY, true, Vec::new()),
                        };
                    }
                }
                lazy.pending = None;
                if max != u64::MAX {
                    return Progress::Paused;
                }
            }
            let Some(Reverse((Ordered(was), i))) = lazy.queue.pop() else {
                return Progress::Done(None);
            };
            let (key, j) = if i == usize::MAX {
                (lazy.direct.0, 0)
            } else {
                let row = &self.row(&lazy.rows, i, (k, layout)).dist;
                let mut best = (f64::INFINITY, 0);
                for (j, &from_j) in lazy.end.bound.iter().enumerate() {
                    let key = lazy.start.bound[i] + row[b_offset + j] + from_j;
                    if key < best.0 {
                        best = (key, j);
                    }
                }
                best
            };
            if key == f64::INFINITY {
                continue;
            }
            // Bounds only grow: a key is checked afresh before it counts.
            lazy.queue.push(Reverse((Ordered(key), i)));
            if key > was {
                continue;
            }
            if i == usize::MAX {
                if lazy.direct.1 {
                    let start = (query.from.area, from);
                    let legs = self.assemble((k, layout), start, &[], (&[], &[]), &lazy.direct.2);
                    return Progress::Done(Some(legs));
                }
                lazy.pending = Some(Pending::Direct(false));
                continue;
            }
            if lazy.start.known[i] && lazy.end.known[j] {
                let via = &self.row(&lazy.rows, i, (k, layout)).via;
                let chain = chain_to(via, (b_offset + j) as u32);
                let legs = self.assemble(
                    (k, layout),
                    (query.from.area, from),
                    &lazy.start.paths[i],
                    (&chain, via),
                    &lazy.end.paths[j],
                );
                return Progress::Done(Some(legs));
            }
            // The shorter leg first: the cheaper search, and the likelier
            // to be in plain sight.
            lazy.pending = Some(
                if lazy.start.known[i]
                    || (!lazy.end.known[j] && lazy.end.bound[j] < lazy.start.bound[i])
                {
                    Pending::End(j)
                } else {
                    Pending::Start(i)
                },
            );
        }
    }

    /// One slice of the full search: every leg from the start, every leg
    /// to the goal, then Dijkstra over every end, which also finds the
    /// fallback.
    fn full_step(
        &self,
        planner: &mut Planner,
        query: &RouteQuery,
        full: &mut Full,
        max: u64,
    ) -> Progress<Result<Route, AtlasError>> {
        let Setup {
            k,
            from,
            goal,
            start_moved_from,
        } = full.setup;
        let (a, b) = (query.from.area.index(), query.to.area.index());
        let (first, last) = (&self.areas[a].tables[k], &self.areas[b].tables[k]);
        let same = a == b;
        while full.phase < 2 {
            let (table, point) = if full.phase == 0 {
                (first, from)
            } else {
                (last, goal)
            };
            if !full.begun {
                full.points.clear();
                full.points.extend(table.ends.iter().map(|e| e.point));
                if full.phase == 1 && same {
                    full.points.push(from);
                }
            }
            let out = if full.phase == 0 {
                &mut full.start_legs
            } else {
                &mut full.goal_legs
            };
            let done = whole_or_sliced(
                planner,
                &table.mesh,
                (&full.points, point),
                (!full.begun, max),
                out,
            );
            full.begun = !done;
            if !done {
                return Progress::Paused;
            }
            full.phase += 1;
            if max != u64::MAX {
                return Progress::Paused;
            }
        }
        let (start_legs, goal_legs) = (&full.start_legs, &full.goal_legs);
        let k_layout = (k, &self.layouts[k]);
        let layout = k_layout.1;
        Progress::Done((|| {
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
        })())
    }
}

/// The legs between one point (the start, or the goal) and the link ends
/// of its area: a lower bound on each leg's length, exact once known, and
/// its path once searched.
/// A one-to-many search of legs: whole (`max` is `u64::MAX`), or a slice
/// of it; whether it is done.
fn whole_or_sliced(
    planner: &mut Planner,
    mesh: &crate::mesh::NavMesh,
    (points, point): (&[DVec2], DVec2),
    (first, max): (bool, u64),
    out: &mut Vec<Result<Path, PlanError>>,
) -> bool {
    if max == u64::MAX {
        planner.plan_many_on_mesh(mesh, points, point, &MANY, out);
        true
    } else {
        planner.step_many(mesh, (points, point), &MANY, first, max, out)
    }
}

#[derive(Clone)]
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
}
