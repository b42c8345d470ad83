//! Route jobs: searches across areas and links, for one agent or for a
//! group of agents heading for one goal (the legs to the goal searched once
//! for all of them), whole or in slices.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy_ecs::entity::Entity;

use crate::atlas::{Atlas, AtlasError, GoalLegs, Place, Route, RouteTask};
use crate::search::{Path, PathKind, PlanError, Planner, SearchStats, Step};

/// A route search, run a slice at a time like any search (see
/// [`floors`](crate::plugin::floors)).
pub(crate) struct RouteWork {
    /// The areas and links as they were when the search was sent.
    pub atlas: Arc<Atlas>,
    pub task: RouteTask,
    /// Its answer, once it ran.
    pub answer: Option<Result<Route, AtlasError>>,
    /// For agents heading for one goal: the others this job answers.
    pub group: Option<Box<RouteGroup>>,
}

/// The agents a route job answers besides its own, all heading for `goal`
/// with one radius class: the legs to the goal are searched once, first,
/// and every member's search reads them.
pub(crate) struct RouteGroup {
    pub goal: Place,
    /// The members' radius (cells, as served).
    pub radius: f64,
    pub rest: Vec<RouteMember>,
    /// Whether the legs were searched (and attached to every task).
    legs_done: bool,
    /// The member under way: 0 the job's own agent, `i + 1` `rest[i]`.
    at: usize,
}

impl RouteGroup {
    /// A group of `rest` (besides the job's own agent) heading for `goal`.
    pub(crate) fn new(goal: Place, radius: f64, rest: Vec<RouteMember>) -> Self {
        RouteGroup {
            goal,
            radius,
            rest,
            legs_done: false,
            at: 0,
        }
    }
}

/// One more agent a route group answers.
pub(crate) struct RouteMember {
    pub entity: Entity,
    pub ticket: u64,
    pub task: RouteTask,
    pub cancel: Arc<AtomicBool>,
    pub answer: Option<Result<Route, AtlasError>>,
}

/// What a route search sends back.
pub(crate) struct RouteAnswer {
    /// [`Atlas::version`] of the areas and links it searched.
    pub atlas_version: u64,
    /// `None`: it did not run (cancelled).
    pub answer: Option<Result<Route, AtlasError>>,
}

/// Expansions a route search runs between two looks at its cancel flag on a
/// search thread.
const ROUTE_CHUNK: u64 = 4096;

/// A placeholder for the search's answer (the route travels apart).
pub(crate) fn placeholder() -> Path {
    Path {
        waypoints: Vec::new(),
        length: 0.0,
        cost: 0.0,
        kind: PathKind::Found,
        start_moved_from: None,
        stats: SearchStats::default(),
    }
}

impl RouteWork {
    /// Whether no agent wants this job's answers any more (`own`: the job's
    /// own agent's cancel flag).
    pub(crate) fn cancelled(&self, own: &AtomicBool) -> bool {
        own.load(Ordering::Relaxed)
            && self
                .group
                .as_ref()
                .is_none_or(|g| g.rest.iter().all(|m| m.cancel.load(Ordering::Relaxed)))
    }

    /// How many agents this job answers besides its own.
    pub(crate) fn others(&self) -> usize {
        self.group.as_ref().map_or(0, |g| g.rest.len())
    }

    /// Runs the search (a group's: every member's) for at most `slice` more
    /// expansions (`None`: to the end), skipping agents whose flag is up.
    /// `Done` once every member is answered: with a placeholder path if the
    /// job's own agent got a route, as cancelled if it no longer wants one.
    pub(crate) fn run(
        &mut self,
        planner: &mut Planner,
        cancel: &AtomicBool,
        slice: Option<u64>,
    ) -> Step {
        let mut left = slice.map_or(u64::MAX, |n| n.max(1));
        if let Some(group) = self.group.as_deref_mut()
            && !group.legs_done
        {
            // The legs to the goal: one search for every member (a member
            // whose goal is refused answers with the error alone).
            group.legs_done = true;
            if let Ok(legs) = self.atlas.goal_legs(planner, group.goal, group.radius) {
                let legs: Arc<GoalLegs> = Arc::new(legs);
                let tasks = core::iter::once(&mut self.task)
                    .chain(group.rest.iter_mut().map(|m| &mut m.task));
                for task in tasks {
                    let bare = core::mem::replace(task, RouteTask::new(*task.query()));
                    *task = bare.with_goal_legs(Arc::clone(&legs));
                }
            }
            if slice.is_some() {
                return Step::Paused;
            }
        }
        loop {
            let at = self.group.as_ref().map_or(0, |g| g.at);
            let (task, flag, answer) = if at == 0 {
                (&mut self.task, cancel, &mut self.answer)
            } else {
                let Some(member) = self
                    .group
                    .as_deref_mut()
                    .and_then(|g| g.rest.get_mut(at - 1))
                else {
                    // Every member answered.
                    return if self.answer.is_some() {
                        Step::Done(Ok(placeholder()))
                    } else {
                        Step::Done(Err(PlanError::Cancelled))
                    };
                };
                (&mut member.task, &*member.cancel, &mut member.answer)
            };
            let next = |work: &mut Self| match work.group.as_deref_mut() {
                Some(group) => {
                    group.at += 1;
                    false
                }
                None => true,
            };
            if flag.load(Ordering::Relaxed) {
                if next(self) {
                    return Step::Done(Err(PlanError::Cancelled));
                }
                continue;
            }
            let chunk = left.min(ROUTE_CHUNK);
            match self.atlas.step(planner, task, chunk) {
                Some(found) => {
                    *answer = Some(found);
                    if next(self) {
                        return Step::Done(Ok(placeholder()));
                    }
                }
                None => {
                    left = left.saturating_sub(chunk);
                    if left == 0 {
                        return Step::Paused;
                    }
                }
            }
        }
    }

    /// The answers to the group's other members, once the job ran (`None`
    /// for a member that did not get one), with the atlas version they
    /// searched.
    pub(crate) fn take_rest(&mut self) -> Vec<(Entity, u64, Option<Box<RouteAnswer>>)> {
        let version = self.atlas.version();
        self.group.as_deref_mut().map_or_else(Vec::new, |g| {
            g.rest
                .drain(..)
                .map(|m| {
                    let wanted = !m.cancel.load(Ordering::Relaxed);
                    let answer = Box::new(RouteAnswer {
                        atlas_version: version,
                        answer: m.answer.filter(|_| wanted),
                    });
                    (m.entity, m.ticket, Some(answer))
                })
                .collect()
        })
    }
}
