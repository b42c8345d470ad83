//! Jobs: one search to run (for one agent, or for a group of agents with
//! one goal), what it sends back, and how it runs, whole or in slices, on
//! whichever executor takes it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy_ecs::entity::Entity;
use bevy_math::{DVec2, Vec2};
#[cfg(feature = "debug-gizmos")]
use core::time::Duration;

use super::mesh_share::MeshShare;
use super::route::{RouteAnswer, RouteWork};
use crate::grid::Grid;
use crate::mesh::NavMesh;
use crate::plugin::world::{Fit, ViewKey};
use crate::search::{
    Algorithm, Path, PathQuery, PlanError, PlanOptions, Planner, SearchSpace, SearchTrace, Step,
};
use crate::terrain::{Profile, TerrainMap};

/// One search to run.
pub(crate) struct Job {
    /// The job's number, in the order jobs were sent (set when sent; in
    /// lockstep it names the frame its outcomes are due in).
    pub seq: u64,
    pub entity: Entity,
    pub ticket: u64,
    pub layout_id: u64,
    /// The [`NavGrid`](crate::plugin::NavGrid) version `grid` belongs to.
    pub grid_version: u64,
    /// The version the search ran on: `grid_version`, or for a search on a
    /// mesh from `share` a newer one.
    pub searched_version: u64,
    /// The meshes for the radii in use and the newest grids of the
    /// profiles they follow.
    pub share: MeshShare,
    /// The profile and clearance `grid` is for.
    pub key: ViewKey,
    /// The grid the agent plans on (its profile's, eroded for its
    /// clearance; for a disc, its profile's, whose mesh `share` keeps).
    pub grid: Arc<Grid>,
    /// For a clearance: the profile's grid `grid` is eroded from.
    pub base: Option<Arc<Grid>>,
    /// For a profile whose costs differ: the terrain and the profile.
    pub costs: Option<(Arc<TerrainMap>, Profile)>,
    /// Start and goal in grid coordinates.
    pub start: DVec2,
    pub goal_grid: DVec2,
    /// The goal in world coordinates (as asked for).
    pub goal: Vec2,
    pub algorithm: Algorithm,
    pub options: PlanOptions,
    /// Raised when the agent no longer wants this plan.
    pub cancel: Arc<AtomicBool>,
    /// Whether to record what the search expands (for the debug view).
    #[cfg(feature = "debug-gizmos")]
    pub trace: bool,
    /// The other agents this job's search answers, if it is a group's
    /// (see [`groups`](super::groups)).
    pub group: Option<Box<Group>>,
    /// For a route across areas: the search to run instead of one on
    /// `grid` (the fields above then only name the agent and its ticket).
    pub route: Option<Box<RouteWork>>,
}

/// The agents a group job answers besides its own one (the first member),
/// all agents of one profile and radius class heading for `goal_grid`.
pub(crate) struct Group {
    pub rest: Vec<Member>,
    /// Every member's answer, in order (the first one's taken out), once
    /// the search ran.
    answers: Vec<Result<Path, PlanError>>,
}

impl Group {
    /// A group of `rest` (besides the job's own agent).
    pub(crate) fn new(rest: Vec<Member>) -> Self {
        Group {
            rest,
            answers: Vec::new(),
        }
    }
}

/// One more agent a group job answers.
pub(crate) struct Member {
    pub entity: Entity,
    pub ticket: u64,
    /// Its start in grid coordinates.
    pub start: DVec2,
    pub cancel: Arc<AtomicBool>,
}

/// What a job sends back.
pub(crate) struct Outcome {
    /// The [`Job::seq`] of the job it answers.
    pub seq: u64,
    pub entity: Entity,
    pub ticket: u64,
    pub layout_id: u64,
    /// The [`NavGrid`](crate::plugin::NavGrid) version of the grid the search ran
    /// on.
    pub grid_version: u64,
    /// The version the job was sent with.
    pub sent_version: u64,
    /// The profile and clearance of the grid the search ran on.
    pub key: ViewKey,
    pub start: DVec2,
    pub algorithm: Algorithm,
    pub goal: Vec2,
    /// `None`: the job was cancelled (before or during its search).
    pub result: Option<Result<Path, PlanError>>,
    /// For a route search: its answer (`None` if it did not run), beside a
    /// placeholder `result`.
    pub route: Option<Box<RouteAnswer>>,
    /// What the search expanded and how long it took, if the job asked
    /// for it.
    #[cfg(feature = "debug-gizmos")]
    pub trace: Option<(Box<SearchTrace>, Duration)>,
}

/// Where a job's search stands between its slices.
#[derive(Default)]
pub(crate) struct Progress {
    /// Whether the search has begun (its next slice resumes it).
    begun: bool,
    /// For a search on a mesh from the store: that mesh, the same for every
    /// slice.
    mesh: Option<Arc<NavMesh>>,
}

/// The radius class (64ths of a cell) of the store's mesh a search with
/// `key` runs on (0: a point agent's).
fn mesh_radius(key: ViewKey) -> u32 {
    match key.1 {
        Fit::Disc(radius) => radius,
        Fit::Eroded(_) => 0,
    }
}

/// Whether a search runs on a mesh from the [`MeshShare`]: an agent's on
/// the mesh for its radius, and Polyanya's for a point agent without costs
/// (its profile's grid's mesh). Polyanya on an eroded grid keeps its
/// planner's mesh of that grid.
pub(crate) fn on_shared_mesh(key: ViewKey, algorithm: Algorithm, costed: bool) -> bool {
    matches!(key.1, Fit::Disc(_))
        || (algorithm == Algorithm::Polyanya && key.1 == Fit::POINT && !costed)
}

impl Job {
    /// Whether no agent wants this plan any more.
    pub(crate) fn cancelled(&self) -> bool {
        if let Some(route) = &self.route {
            return route.cancelled(&self.cancel);
        }
        self.cancel.load(Ordering::Relaxed)
            && self
                .group
                .as_ref()
                .is_none_or(|g| g.rest.iter().all(|m| m.cancel.load(Ordering::Relaxed)))
    }

    /// How many agents this job answers (one outcome each).
    pub(crate) fn members(&self) -> usize {
        1 + self.group.as_ref().map_or(0, |g| g.rest.len())
            + self.route.as_ref().map_or(0, |r| r.others())
    }

    /// Runs this job's search on `planner` for at most `slice` more
    /// expansions (`None`: to the end), going on from `progress`. The
    /// planner must not run another search between two slices of this one.
    /// The answer is the same however the search is sliced.
    pub(crate) fn run(
        &mut self,
        planner: &mut Planner,
        progress: &mut Progress,
        trace: Option<&mut SearchTrace>,
        slice: Option<u64>,
    ) -> Step {
        if let Some(route) = self.route.as_deref_mut() {
            return route.run(planner, &self.cancel, slice);
        }
        let mut work = slice.map_or(u64::MAX, |n| n.max(1));
        if self.group.is_some() {
            return self.run_group(planner, progress, slice.is_some(), &mut work);
        }
        // A search on a mesh from the store (an agent's on the mesh for its
        // radius, Polyanya's for a point agent) keeps that mesh for every
        // slice.
        if progress.mesh.is_none()
            && on_shared_mesh(self.key, self.options.algorithm, self.costs.is_some())
        {
            let radius = match self.key.1 {
                Fit::Disc(radius) => radius,
                Fit::Eroded(_) => 0,
            };
            let Some(mesh) = self.shared_mesh(radius, &mut work) else {
                return Step::Paused;
            };
            progress.mesh = Some(mesh);
        }
        let mut trace = trace;
        loop {
            let space = match (progress.mesh.as_deref(), &self.base, self.key.1) {
                (Some(mesh), ..) => SearchSpace::Mesh(mesh),
                // An agent with a clearance: on its eroded grid, starting
                // where it fits.
                (None, Some(base), Fit::Eroded(clearance)) => SearchSpace::Eroded {
                    base,
                    eroded: &self.grid,
                    clearance,
                },
                _ => SearchSpace::Grid(&self.grid),
            };
            let mut query = PathQuery::new(space, self.start, self.goal_grid)
                .with_options(self.options)
                .with_cancel(&self.cancel);
            if let Some((terrain, profile)) = &self.costs {
                query = query.with_costs(terrain, profile);
            }
            let resume = core::mem::replace(&mut progress.begun, true);
            // (What building the mesh left of the slice.)
            let step = planner.run(
                &query,
                trace.as_deref_mut(),
                resume,
                slice.map(|_| work.max(1)),
            );
            if !self.grew(planner, progress, slice.is_some(), &mut work) {
                return step;
            }
            if slice.is_some() {
                return Step::Paused;
            }
        }
    }

    /// After a step that stopped for chunks of its mesh not built yet (a
    /// mesh built on demand): builds them, the search's mesh the grown one
    /// (see [`MeshShare::grow`]), and returns `true` (the search goes on
    /// with `resume`); `false` after any other step. The work is taken off
    /// `work` when `sliced`.
    fn grew(
        &mut self,
        planner: &Planner,
        progress: &mut Progress,
        sliced: bool,
        work: &mut u64,
    ) -> bool {
        if !planner.wants_chunks() {
            return false;
        }
        let Some(mesh) = progress.mesh.take() else {
            return false;
        };
        let radius = mesh_radius(self.key);
        let (mesh, cost) = self.share.grow(
            self.layout_id,
            self.key.0,
            radius,
            self.searched_version,
            mesh,
            planner.wanted_chunks(),
        );
        progress.mesh = Some(mesh);
        if sliced {
            *work = work.saturating_sub(cost);
        }
        true
    }

    /// A group's searches: once its profile's mesh is built (within
    /// `work`), one search from the goal answers every member that reaches
    /// it, the others are planned alone; in slices of `work` when `sliced`.
    /// Returns the first member's answer and keeps the others'.
    fn run_group(
        &mut self,
        planner: &mut Planner,
        progress: &mut Progress,
        sliced: bool,
        work: &mut u64,
    ) -> Step {
        if progress.mesh.is_none() {
            let radius = match self.key.1 {
                Fit::Disc(radius) => radius,
                Fit::Eroded(_) => 0,
            };
            let Some(mesh) = self.shared_mesh(radius, work) else {
                return Step::Paused;
            };
            progress.mesh = Some(mesh);
        }
        let Some(group) = self.group.as_deref() else {
            return Step::Done(Err(PlanError::Cancelled));
        };
        let starts: Vec<DVec2> = core::iter::once(self.start)
            .chain(group.rest.iter().map(|m| m.start))
            .collect();
        let answers = loop {
            let mesh = progress.mesh.as_deref().expect("set above");
            let resume = core::mem::replace(&mut progress.begun, true);
            let slice = sliced.then(|| (*work).max(1));
            let answers =
                planner.many_slice(mesh, &starts, self.goal_grid, &self.options, resume, slice);
            if let Some(answers) = answers {
                break answers;
            }
            if !self.grew(planner, progress, sliced, work) || sliced {
                return Step::Paused;
            }
        };
        let Some(group) = self.group.as_deref_mut() else {
            return Step::Done(Err(PlanError::Cancelled));
        };
        group.answers = answers;
        match group.answers.first_mut() {
            Some(first) => Step::Done(core::mem::replace(first, Err(PlanError::Cancelled))),
            None => Step::Done(Err(PlanError::Cancelled)),
        }
    }

    /// The store's mesh for this job's profile and `radius` (64ths of a
    /// cell; 0: a point agent's), on the newest grid of the profile, built
    /// or brought up to date for at most `work`; `None` if not yet (call
    /// again). The answer names the grid version it is the mesh of.
    fn shared_mesh(&mut self, radius: u32, work: &mut u64) -> Option<Arc<NavMesh>> {
        if let Some((version, grid)) =
            self.share
                .newer(self.layout_id, self.key.0, self.searched_version)
        {
            self.searched_version = version;
            self.grid = grid;
        }
        let (version, mesh) = self.share.mesh(
            self.layout_id,
            self.key.0,
            radius,
            self.searched_version,
            &self.grid,
            work,
        )?;
        self.searched_version = version;
        Some(mesh)
    }

    /// The outcomes that answer this job, one per member: the first
    /// member's with `result` (`None`: cancelled), a group's others with
    /// the answers its search kept (none if it did not run). A member that
    /// no longer wants its plan is answered as cancelled.
    pub(crate) fn answer(
        self,
        result: Option<Result<Path, PlanError>>,
        #[cfg(feature = "debug-gizmos")] trace: Option<(Box<SearchTrace>, Duration)>,
    ) -> impl Iterator<Item = Outcome> {
        let (layout_id, grid_version, sent_version) =
            (self.layout_id, self.searched_version, self.grid_version);
        let (key, algorithm, goal, seq) = (self.key, self.algorithm, self.goal, self.seq);
        let (route, route_rest) = match self.route {
            Some(mut work) => {
                let rest = work.take_rest();
                let own = Box::new(RouteAnswer {
                    atlas_version: work.atlas.version(),
                    answer: work.answer,
                });
                (Some(own), rest)
            }
            None => (None, Vec::new()),
        };
        let outcome = move |entity, ticket, start, result| Outcome {
            seq,
            entity,
            ticket,
            layout_id,
            grid_version,
            sent_version,
            key,
            start,
            algorithm,
            goal,
            result,
            route: None,
            #[cfg(feature = "debug-gizmos")]
            trace: None,
        };
        let result = result.filter(|_| !self.cancel.load(Ordering::Relaxed));
        let mut first = outcome(self.entity, self.ticket, self.start, result);
        first.route = route;
        #[cfg(feature = "debug-gizmos")]
        {
            first.trace = trace;
        }
        let rest = self.group.map(|group| {
            let Group { rest, answers } = *group;
            let mut answers = answers.into_iter().skip(1);
            rest.into_iter().map(move |m| {
                let answer = answers.next();
                let wanted = !m.cancel.load(Ordering::Relaxed);
                outcome(m.entity, m.ticket, m.start, answer.filter(|_| wanted))
            })
        });
        // A route group's others: their routes beside a placeholder.
        let start = self.start;
        let route_rest = route_rest.into_iter().map(move |(entity, ticket, route)| {
            let result = route
                .as_ref()
                .is_some_and(|r| r.answer.is_some())
                .then(|| Ok(super::route::placeholder()));
            Outcome {
                route,
                ..outcome(entity, ticket, start, result)
            }
        });
        core::iter::once(first)
            .chain(rest.into_iter().flatten())
            .chain(route_rest)
    }
}

/// The job of route search `work` for `entity`'s plan `ticket` to `goal`
/// (world), cancelled by `cancel`; `grid` fills the grid field it does not
/// read.
pub(crate) fn route_job(
    (entity, ticket, goal): (Entity, u64, Vec2),
    work: RouteWork,
    grid: Arc<Grid>,
    cancel: Arc<AtomicBool>,
) -> Job {
    use crate::plugin::world::ProfileId;

    Job {
        seq: 0,
        entity,
        ticket,
        layout_id: 0,
        // (No grid version: a route pins no edits of the grid resource.)
        grid_version: u64::MAX,
        searched_version: u64::MAX,
        share: MeshShare::default(),
        key: (ProfileId::DEFAULT, Fit::POINT),
        grid,
        base: None,
        costs: None,
        start: DVec2::ZERO,
        goal_grid: DVec2::ZERO,
        goal,
        algorithm: Algorithm::Polyanya,
        options: PlanOptions::default(),
        cancel,
        #[cfg(feature = "debug-gizmos")]
        trace: false,
        group: None,
        route: Some(Box::new(work)),
    }
}

/// A job for the executors' tests: an Anya search for entity `ticket` on
/// `grid` from `start` to `goal` (grid coordinates).
#[cfg(test)]
pub(crate) fn test_job(grid: &Arc<Grid>, ticket: u32, start: DVec2, goal: DVec2) -> Job {
    use crate::plugin::world::ProfileId;

    Job {
        seq: 0,
        entity: Entity::from_raw_u32(ticket).unwrap(),
        ticket: u64::from(ticket),
        layout_id: 1,
        grid_version: grid.version(),
        searched_version: grid.version(),
        share: MeshShare::default(),
        key: (ProfileId::DEFAULT, Fit::POINT),
        grid: Arc::clone(grid),
        base: None,
        costs: None,
        start,
        goal_grid: goal,
        goal: Vec2::ZERO,
        algorithm: Algorithm::Anya,
        options: PlanOptions::default(),
        cancel: Arc::new(AtomicBool::new(false)),
        #[cfg(feature = "debug-gizmos")]
        trace: false,
        group: None,
        route: None,
    }
}
