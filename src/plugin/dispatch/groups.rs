//! Shared-goal groups: waiting agents with one goal, gathered into one
//! search from that goal that answers them all.
//!
//! As dispatch takes agents from the queue, each search that may be shared
//! is held back here instead of being sent: Anya or Polyanya (exact, so
//! equally long paths), a point agent on its profile's uniform grid or an
//! agent of a radius on its profile's mesh for that radius class, not
//! traced. Searches with the same layout, grid version, profile, radius
//! class, planner and goal point (an entity's position when sent) gather.
//! Once the pace is spent, dispatch looks [`LOOKAHEAD`] entries further
//! down the paced lines for agents whose request names a goal (a point, or
//! an entity) that a held-back search was asked for, and that would gather
//! with it: they join now, ahead of their turn, as they add little to the
//! shared search, if that makes the gathering a group (at least
//! [`MIN_GROUP`]; a smaller one would send them past the pace as single
//! searches). Then a gathering
//! of at least [`MIN_GROUP`] goes out as group jobs of at most `max` agents
//! each (a few thousand on search threads, fewer on the main thread, where
//! a group's search runs in slices but setting it up and reading its paths
//! take a slice each), and a smaller one as single searches.
//!
//! The group's search is [`Planner::plan_many_on_mesh`] on the profile's
//! mesh (for point agents, the one Polyanya searches; for a radius class,
//! the one its agents always plan on): its answers are exactly as long as
//! each agent's own search. For Anya's point agents, whose searches need no
//! mesh, a group is formed only where the mesh costs little: it is built
//! already (by Polyanya searches or earlier groups), or the grid has at
//! most [`SMALL_GRID`] cells (built in some tens of milliseconds by the
//! group's search), or meshes are built on demand (the group's search
//! builds the chunks around its way). Otherwise, on a larger grid that has
//! no mesh yet, Anya agents keep their own searches. Shared searches are not kept after they answer:
//! agents that ask later get a new one, so no cached answer outlives an
//! edit.
//!
//! [`Planner::plan_many_on_mesh`]: crate::search::Planner::plan_many_on_mesh

use core::hash::BuildHasherDefault;
use std::collections::HashSet;

use bevy_ecs::entity::Entity;
use bevy_math::DVec2;

use super::executor::Searches;
use super::job::{Group, Job, Member, on_shared_mesh};
use crate::fast_hash::{FastHasher, FastMap};
use crate::plugin::agent::Priority;
use crate::plugin::api::PathGoal;
use crate::plugin::world::{Fit, ProfileId};
use crate::search::Algorithm;

/// The fewest agents one search is shared by: from about 2 to 9 starts on,
/// depending on the map, one search from the goal costs less than a search
/// per agent (see [`Planner::plan_many_on_mesh`]).
///
/// [`Planner::plan_many_on_mesh`]: crate::search::Planner::plan_many_on_mesh
pub(crate) const MIN_GROUP: usize = 8;

/// The most agents a group job answers on search threads (about 1.5 ms of
/// search on a game map).
pub(crate) const MAX_GROUP_THREADS: usize = 4096;

/// The most agents a group job answers on the main thread, where its search
/// runs in slices but setting it up and reading its members' paths take a
/// slice each (about 0.1 ms each for 512).
pub(crate) const MAX_GROUP_MAIN_THREAD: usize = 512;

/// The most cells of a grid on which Anya agents are grouped before a mesh
/// of it exists: the group's search builds it, in some tens of
/// milliseconds.
pub(crate) const SMALL_GRID: u64 = 1 << 20;

/// The most agents held back in one dispatch: dispatch takes them all from
/// the queue in one frame, at about a microsecond each.
pub(crate) const MAX_GATHERED: usize = 8192;

/// How far down each paced line dispatch looks, once the pace is spent,
/// for agents heading for a goal some held-back search has: they join it
/// (see [`Gather::heads_for`]).
pub(crate) const LOOKAHEAD: usize = 4096;

/// Where a request's goal comes from: the same source, the same goal.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    /// A point, as bits.
    Point(u32, u32),
    /// An entity followed.
    Entity(Entity),
}

impl From<PathGoal> for Source {
    fn from(goal: PathGoal) -> Self {
        match goal {
            PathGoal::Point(p) => Source::Point(p.x.to_bits(), p.y.to_bits()),
            PathGoal::Entity(e) => Source::Entity(e),
        }
    }
}

/// What searches that share one must agree on.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    layout_id: u64,
    version: u64,
    profile: ProfileId,
    fit: Fit,
    algorithm: Algorithm,
    /// The goal in grid coordinates, as bits.
    goal: (u64, u64),
}

impl Key {
    /// The key of a search on layout `layout_id` at grid `version`, on the
    /// grid of `view` (profile and fit), by `algorithm`, to `goal` (grid
    /// coordinates).
    pub(crate) fn new(
        (layout_id, version): (u64, u64),
        view: (ProfileId, Fit),
        algorithm: Algorithm,
        goal: DVec2,
    ) -> Key {
        Key {
            layout_id,
            version,
            profile: view.0,
            fit: view.1,
            algorithm,
            goal: (goal.x.to_bits(), goal.y.to_bits()),
        }
    }

    fn of(job: &Job) -> Key {
        Key::new(
            (job.layout_id, job.grid_version),
            job.key,
            job.algorithm,
            job.goal_grid,
        )
    }
}

/// Searches gathered for one key, and the most urgent priority among them.
struct Gathering {
    /// Gatherings begun before it in this dispatch (they are sent in the
    /// order they began).
    order: usize,
    priority: Priority,
    jobs: Vec<Job>,
}

/// The searches held back in one dispatch, by what they may share.
#[derive(Default)]
pub(crate) struct Gather {
    gatherings: FastMap<Key, Gathering>,
    /// The goals of the searches held back, as requested.
    goals: HashSet<Source, BuildHasherDefault<FastHasher>>,
    /// Jobs the gatherings count as (see [`jobs_for`]).
    jobs: usize,
    /// Searches held back.
    held: usize,
}

impl Gather {
    /// Whether `job` may share a search (see the module docs).
    pub(crate) fn may_share(job: &Job) -> bool {
        let exact = matches!(job.algorithm, Algorithm::Anya | Algorithm::Polyanya)
            && job.options.heuristic_weight == 1.0;
        let fits = job.key.1 == Fit::POINT || matches!(job.key.1, Fit::Disc(_));
        if !exact || !fits || job.costs.is_some() || job.base.is_some() {
            return false;
        }
        #[cfg(feature = "debug-gizmos")]
        if job.trace {
            return false;
        }
        let cells = u64::from(job.grid.width()) * u64::from(job.grid.height());
        on_shared_mesh(job.key, job.algorithm, false)
            || job.share.has_mesh(job.layout_id, job.key.0, 0)
            || job.share.on_demand(cells)
            || cells <= SMALL_GRID
    }

    /// Whether a search held back was asked for with `goal`: an agent
    /// heading for it may share that search.
    pub(crate) fn heads_for(&self, goal: PathGoal) -> bool {
        self.goals.contains(&Source::from(goal))
    }

    /// Holds `job` (one that [`may_share`](Self::may_share)), asked for with
    /// `goal`, back with `priority`.
    pub(crate) fn hold(&mut self, job: Job, goal: PathGoal, priority: Priority, max: usize) {
        self.goals.insert(Source::from(goal));
        let key = Key::of(&job);
        let order = self.gatherings.len();
        let gathering = self.gatherings.entry(key).or_insert_with(|| Gathering {
            order,
            priority,
            jobs: Vec::new(),
        });
        let before = jobs_for(gathering.jobs.len(), max);
        gathering.priority = gathering.priority.min(priority);
        gathering.jobs.push(job);
        self.jobs = self.jobs + jobs_for(gathering.jobs.len(), max) - before;
        self.held += 1;
    }

    /// The jobs the searches held back count as, for the pace.
    pub(crate) fn jobs(&self) -> usize {
        self.jobs
    }

    /// Searches held back.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Searches held back under `key`.
    pub(crate) fn members(&self, key: &Key) -> usize {
        self.gatherings.get(key).map_or(0, |g| g.jobs.len())
    }

    /// Sends what was held back: gatherings of at least [`MIN_GROUP`] as
    /// group jobs of at most `max` agents, the others one by one. Returns
    /// how many group jobs went out.
    pub(crate) fn flush(&mut self, searches: &mut Searches, max: usize) -> usize {
        let mut groups = 0;
        let mut gatherings: Vec<Gathering> = self.gatherings.drain().map(|(_, g)| g).collect();
        gatherings.sort_unstable_by_key(|g| g.order);
        for Gathering { priority, jobs, .. } in gatherings {
            if jobs.len() < MIN_GROUP {
                for job in jobs {
                    searches.send(job, priority);
                }
                continue;
            }
            let mut jobs = jobs.into_iter();
            loop {
                let mut chunk = jobs.by_ref().take(max.max(1));
                let Some(mut head) = chunk.next() else {
                    break;
                };
                let rest: Vec<Member> = chunk
                    .map(|job| Member {
                        entity: job.entity,
                        ticket: job.ticket,
                        start: job.start,
                        cancel: job.cancel,
                    })
                    .collect();
                if !rest.is_empty() {
                    head.group = Some(Box::new(Group::new(rest)));
                    groups += 1;
                }
                searches.send(head, priority);
            }
        }
        self.goals.clear();
        self.jobs = 0;
        self.held = 0;
        groups
    }
}

/// The jobs a gathering of `n` searches counts as while dispatch takes
/// agents from the queue: the group jobs it would fill, or below
/// [`MIN_GROUP`] its single searches (as it goes out). Groups larger than
/// the pace form as agents further down the lines join (see the module
/// docs).
fn jobs_for(n: usize, max: usize) -> usize {
    if n < MIN_GROUP {
        n
    } else {
        n.div_ceil(max.max(1))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bevy_math::DVec2;

    use super::*;
    use crate::grid::Grid;
    use crate::plugin::dispatch::job::test_job;

    #[test]
    fn gatherings_are_counted_as_the_group_jobs_they_fill() {
        assert_eq!(jobs_for(0, 100), 0);
        assert_eq!(jobs_for(1, 100), 1);
        assert_eq!(jobs_for(MIN_GROUP, 100), 1);
        assert_eq!(jobs_for(250, 100), 3);
        let grid = Arc::new(Grid::new(16, 16).unwrap());
        let mut gather = Gather::default();
        for i in 0..20 {
            let goal = if i < 12 {
                DVec2::new(15.5, 15.5)
            } else {
                DVec2::new(1.5, 15.5)
            };
            let mut job = test_job(&grid, i + 1, DVec2::new(0.5, f64::from(i) * 0.5), goal);
            job.algorithm = Algorithm::Polyanya;
            assert!(Gather::may_share(&job));
            gather.hold(
                job,
                PathGoal::Point(bevy_math::Vec2::ZERO),
                Priority::Refine,
                5,
            );
        }
        // 12 with one goal: 3 jobs of up to 5; 8 with the other: 2 jobs.
        assert_eq!(gather.held(), 20);
        assert_eq!(gather.jobs(), 5);
        assert!(gather.heads_for(PathGoal::Point(bevy_math::Vec2::ZERO)));
        assert!(!gather.heads_for(PathGoal::Point(bevy_math::Vec2::ONE)));
        let e = Entity::from_raw_u32(7).unwrap();
        assert!(!gather.heads_for(PathGoal::Entity(e)));
        let mut searches = Searches::new(0);
        assert_eq!(gather.flush(&mut searches, 5), 5);
        assert_eq!(searches.outstanding(), 20, "an answer owed per agent");
        assert_eq!((gather.held(), gather.jobs()), (0, 0));
        assert!(!gather.heads_for(PathGoal::Point(bevy_math::Vec2::ZERO)));
    }

    #[test]
    fn only_exact_point_searches_without_costs_share() {
        let grid = Arc::new(Grid::new(16, 16).unwrap());
        let job = || test_job(&grid, 1, DVec2::new(0.5, 0.5), DVec2::new(9.5, 9.5));
        assert!(Gather::may_share(&job()), "Anya on a small grid");
        let mut theta = job();
        theta.algorithm = Algorithm::LazyTheta;
        assert!(!Gather::may_share(&theta));
        let mut weighted = job();
        weighted.options.heuristic_weight = 1.5;
        assert!(!Gather::may_share(&weighted));
        let mut disc = job();
        disc.key.1 = Fit::Disc(32);
        assert!(Gather::may_share(&disc), "on the mesh for its radius");
        let mut eroded = job();
        eroded.key.1 = Fit::Eroded(crate::clearance::Clearance::from_radius(0.5).unwrap());
        eroded.base = Some(Arc::clone(&grid));
        assert!(!Gather::may_share(&eroded));
        // Anya on a large grid shares where meshes are built on demand
        // (the default there); built whole, without a mesh yet, it keeps its
        // own searches.
        let big = Arc::new(Grid::new(2048, 1024).unwrap());
        let anya = test_job(&big, 1, DVec2::new(0.5, 0.5), DVec2::new(9.5, 9.5));
        assert!(Gather::may_share(&anya));
        anya.share.set_building(crate::plugin::MeshBuilding::Whole);
        assert!(!Gather::may_share(&anya));
        let mut polyanya = test_job(&big, 1, DVec2::new(0.5, 0.5), DVec2::new(9.5, 9.5));
        polyanya.algorithm = Algorithm::Polyanya;
        assert!(Gather::may_share(&polyanya));
    }
}
