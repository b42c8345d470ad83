//! The one entry point: a [`PathQuery`] goes to the route that answers it
//! (grid, eroded grid, mesh, mesh for a radius; terrain costs on grids),
//! whole or a slice at a time, with the same answer either way.

use bevy_math::DVec2;

use super::{
    Algorithm, Costs, Path, PathQuery, PlanError, PlanOptions, Planner, Query, SearchSpace,
    SearchStats, SearchTrace, Step, TerrainCosts,
};
use crate::clearance::start_point;

impl Planner {
    /// Answers `query`: a path from its start to its goal in its
    /// [`SearchSpace`], by the planner its options name (see
    /// [`Planner::plan`] for the rules on endpoints, fallbacks and budgets,
    /// which every space follows).
    ///
    /// # Errors
    ///
    /// As [`Planner::plan`]; in an eroded grid or on a mesh for a radius
    /// also [`PlanError::NoRoom`] when the agent fits nowhere in sight of
    /// its start; with costs [`PlanError::TerrainSize`] and
    /// [`PlanError::CostsNotSupported`] (see [`Planner::plan_with_costs`];
    /// a mesh takes none);
    /// [`PlanError::Cancelled`] once its cancel flag is raised.
    ///
    /// ```
    /// use bevy_anyangle::clearance::{Clearance, erode};
    /// use bevy_anyangle::prelude::*;
    ///
    /// let base = Grid::from_ascii("......\n......\n......").unwrap();
    /// let clearance = Clearance::from_radius(0.5).unwrap();
    /// let eroded = erode(&base, clearance);
    /// let space = SearchSpace::Eroded { base: &base, eroded: &eroded, clearance };
    /// let query = PathQuery::new(space, DVec2::new(0.5, 0.5), DVec2::new(4.0, 1.5));
    /// let path = Planner::new().find(&query).unwrap();
    /// // Moved to where a disc of radius 0.5 fits first.
    /// assert_eq!(path.start_moved_from, Some(DVec2::new(0.5, 0.5)));
    /// ```
    pub fn find(&mut self, query: &PathQuery<'_>) -> Result<Path, PlanError> {
        let step = self.run(query, None, false, None);
        self.whole(step)
    }

    /// [`Planner::plan_on_mesh`] on a mesh that builds its chunks as the
    /// searches reach them ([`NavMesh::on_demand`](crate::mesh::NavMesh::on_demand)):
    /// the search stops at each chunk it needs that is not built yet, the
    /// chunk is built, and the search goes on. The answer is the one a mesh
    /// with every chunk built gives. (On any other mesh, the same as
    /// `plan_on_mesh`.)
    ///
    /// # Errors
    ///
    /// As [`Planner::plan_on_mesh`].
    pub fn plan_on_growing_mesh(
        &mut self,
        mesh: &mut crate::mesh::NavMesh,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<Path, PlanError> {
        let mut resume = false;
        loop {
            let query = PathQuery::new(&*mesh, start, goal).with_options(*options);
            match self.run(&query, None, resume, None) {
                Step::Done(answer) => return answer,
                Step::Paused if !self.polyanya.wanted.is_empty() => {
                    let wanted = core::mem::take(&mut self.polyanya.wanted);
                    mesh.build_chunks(&wanted);
                    self.polyanya.wanted = wanted;
                    resume = true;
                }
                step @ Step::Paused => return self.whole(step),
            }
        }
    }

    /// [`Planner::plan_many_on_mesh`] on a mesh that builds its chunks as
    /// the searches reach them, as [`Planner::plan_on_growing_mesh`]
    /// plans one path.
    pub fn plan_many_on_growing_mesh(
        &mut self,
        mesh: &mut crate::mesh::NavMesh,
        starts: &[DVec2],
        goal: DVec2,
        options: &PlanOptions,
        out: &mut Vec<Result<Path, PlanError>>,
    ) {
        out.clear();
        let mut resume = false;
        loop {
            if let Some(answers) = self.many_slice(mesh, starts, goal, options, resume, None) {
                out.extend(answers);
                return;
            }
            if self.polyanya.wanted.is_empty() {
                out.extend(starts.iter().map(|_| {
                    Err(PlanError::SearchFailed {
                        stats: SearchStats::default(),
                    })
                }));
                return;
            }
            let wanted = core::mem::take(&mut self.polyanya.wanted);
            mesh.build_chunks(&wanted);
            self.polyanya.wanted = wanted;
            resume = true;
        }
    }

    /// Whether the last step paused for chunks of a mesh built on demand
    /// that are not built yet (listed in `polyanya.wanted`).
    pub(crate) fn wants_chunks(&self) -> bool {
        !self.polyanya.wanted.is_empty()
    }

    /// The chunks the last step paused for (see [`Planner::wants_chunks`]).
    #[cfg(feature = "plugin")]
    pub(crate) fn wanted_chunks(&self) -> &[u32] {
        &self.polyanya.wanted
    }

    /// The answer of a search run whole (or of a slice that stopped for
    /// chunks of a mesh built on demand, which a whole search cannot
    /// build).
    fn whole(&self, step: Step) -> Result<Path, PlanError> {
        match step {
            Step::Done(answer) => answer,
            Step::Paused if self.wants_chunks() => Err(PlanError::MeshNotBuilt),
            // (Without a slice limit a search never pauses.)
            Step::Paused => Err(PlanError::SearchFailed {
                stats: SearchStats::default(),
            }),
        }
    }

    /// [`Planner::find`], recording what the search expands in `trace`
    /// (cleared first; searches over a mesh's corners record nothing).
    ///
    /// # Errors
    ///
    /// As [`Planner::find`].
    pub fn find_traced(
        &mut self,
        query: &PathQuery<'_>,
        trace: &mut SearchTrace,
    ) -> Result<Path, PlanError> {
        let step = self.run(query, Some(trace), false, None);
        self.whole(step)
    }

    /// Runs `query` for at most `max_expansions` more node expansions (at
    /// least one), for a game loop with no thread to spare that gives
    /// planning a few milliseconds a frame: `None` while the search goes
    /// on, its answer once it has ended. `first` starts the search afresh
    /// (dropping any search paused in this planner); otherwise the call goes
    /// on with the search this planner paused last, which must be the same
    /// query (the planner must run no other query in between). The answer is
    /// the one [`Planner::find`] gives, however the work is sliced; the node
    /// budget counts the expansions of every slice. Setting a query up
    /// (moving its start, finding a fallback target) and building a mesh's
    /// chunk are done whole within a slice.
    ///
    /// # Errors
    ///
    /// The answer's errors are those of [`Planner::find`].
    ///
    /// ```
    /// use bevy_anyangle::prelude::*;
    ///
    /// let grid = Grid::from_ascii("......\n.####.\n......").unwrap();
    /// let query = PathQuery::new(&grid, DVec2::new(0.5, 1.5), DVec2::new(5.5, 1.5));
    /// let mut planner = Planner::new();
    /// let mut first = true;
    /// let path = loop {
    ///     if let Some(answer) = planner.step(&query, first, 2, None) {
    ///         break answer.unwrap();
    ///     }
    ///     first = false;
    /// };
    /// assert_eq!(Ok(path), Planner::new().find(&query));
    /// ```
    pub fn step(
        &mut self,
        query: &PathQuery<'_>,
        first: bool,
        max_expansions: u64,
        trace: Option<&mut SearchTrace>,
    ) -> Option<Result<Path, PlanError>> {
        match self.run(query, trace, !first, Some(max_expansions)) {
            Step::Done(answer) => Some(answer),
            // (A mesh built on demand that this call cannot build.)
            Step::Paused if self.wants_chunks() => Some(Err(PlanError::MeshNotBuilt)),
            Step::Paused => None,
        }
    }

    /// Every route's one dispatcher: runs `query` for at most `slice` more
    /// expansions (`None`: to the end), going on with the search this
    /// planner paused last when `resume` is set.
    pub(crate) fn run(
        &mut self,
        query: &PathQuery<'_>,
        trace: Option<&mut SearchTrace>,
        resume: bool,
        slice: Option<u64>,
    ) -> Step {
        let PathQuery {
            space,
            start,
            goal,
            cancel,
            ..
        } = *query;
        let options = &query.options;
        let costs = match costs_of(query) {
            Ok(costs) => costs,
            Err(error) => return Step::Done(Err(error)),
        };
        let on = |grid| Query {
            grid,
            start,
            goal,
            options,
            cancel,
            costs,
            mesh: None,
        };
        match space {
            SearchSpace::Grid(grid) => self.plan_slice(&on(grid), trace, resume, slice),
            SearchSpace::Eroded {
                base,
                eroded,
                clearance,
            } => {
                let from = match self.paused_from {
                    Some(from) if resume => from,
                    _ => match start_point(base, eroded, clearance, start) {
                        Some(from) => from,
                        None => return Step::Done(Err(PlanError::NoRoom)),
                    },
                };
                self.paused_from = Some(from);
                let query = Query {
                    start: from,
                    ..on(eroded)
                };
                let mut step = self.plan_slice(&query, trace, resume, slice);
                if let Step::Done(Ok(path)) = &mut step
                    && from != start
                {
                    path.start_moved_from = Some(start);
                }
                step
            }
            SearchSpace::Mesh(_) if costs.is_some() => {
                Step::Done(Err(PlanError::CostsNotSupported(options.algorithm)))
            }
            SearchSpace::Mesh(mesh) if mesh.radius() > 0.0 => {
                self.radius_slice(mesh, (start, goal), options, cancel, trace, resume, slice)
            }
            SearchSpace::Mesh(mesh) => {
                // A point agent's mesh is Polyanya's.
                let options = PlanOptions {
                    algorithm: Algorithm::Polyanya,
                    ..*options
                };
                let query = Query {
                    options: &options,
                    mesh: Some(mesh),
                    ..on(mesh.grid())
                };
                self.plan_slice(&query, trace, resume, slice)
            }
        }
    }
}

/// The costs a query is searched with: none for a uniform profile (costs
/// are lengths, every planner runs as without), an error for a terrain of
/// another size than the grid or for Anya and Polyanya.
fn costs_of<'a>(query: &PathQuery<'a>) -> Result<Option<Costs<'a>>, PlanError> {
    let Some(TerrainCosts { terrain, profile }) = query.costs else {
        return Ok(None);
    };
    let grid = match query.space {
        SearchSpace::Grid(grid) | SearchSpace::Eroded { eroded: grid, .. } => grid,
        SearchSpace::Mesh(mesh) => mesh.grid(),
    };
    if (terrain.width(), terrain.height()) != (grid.width(), grid.height()) {
        return Err(PlanError::TerrainSize {
            terrain: (terrain.width(), terrain.height()),
            grid: (grid.width(), grid.height()),
        });
    }
    if profile.is_uniform() {
        return Ok(None);
    }
    if matches!(
        query.options.algorithm,
        Algorithm::Anya | Algorithm::Polyanya
    ) {
        return Err(PlanError::CostsNotSupported(query.options.algorithm));
    }
    Ok(Some(Costs { terrain, profile }))
}
