//! Searches run a slice at a time: [`PlanTask`].

use std::sync::Arc;

use bevy_math::DVec2;

use super::{Path, PathQuery, PlanError, PlanOptions, Planner};
use crate::grid::Grid;

/// One query on a grid planned a slice at a time, for a game loop with no
/// thread to spare (the browser) that gives planning a few milliseconds a
/// frame. It owns its grid and its planner; [`Planner::step`] slices any
/// [`PathQuery`] (eroded grids, meshes, costs) the same way.
///
/// Each [`PlanTask::step`] runs the search for at most a given number of
/// node expansions and returns the answer once the search has ended. The
/// answer is the one [`Planner::plan`] gives for the same query, however
/// the work is sliced. The task holds its grid (an [`Arc`], so the grid
/// cannot change under a paused search) and its own [`Planner`], whose
/// memory can be taken back for the next task with
/// [`PlanTask::into_planner`].
///
/// ```
/// use std::sync::Arc;
/// use bevy_anyangle::prelude::*;
///
/// let grid = Arc::new(Grid::from_ascii(
///     "......
///      .####.
///      ......",
/// )
/// .unwrap());
/// let (start, goal) = (DVec2::new(0.5, 1.5), DVec2::new(5.5, 1.5));
/// let mut task = PlanTask::new(Arc::clone(&grid), start, goal, PlanOptions::default());
/// // A few expansions a frame until the search ends.
/// let path = loop {
///     if let Some(answer) = task.step(2) {
///         break answer.unwrap();
///     }
/// };
/// assert_eq!(Ok(path), plan(&grid, start, goal, &PlanOptions::default()));
/// ```
pub struct PlanTask {
    planner: Planner,
    grid: Arc<Grid>,
    start: DVec2,
    goal: DVec2,
    options: PlanOptions,
    begun: bool,
    done: bool,
}

impl core::fmt::Debug for PlanTask {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PlanTask")
            .field("start", &self.start)
            .field("goal", &self.goal)
            .field("options", &self.options)
            .field("begun", &self.begun)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl PlanTask {
    /// A task that plans from `start` to `goal` (grid coordinates) on
    /// `grid`, with a new planner. Nothing runs until [`PlanTask::step`].
    #[must_use]
    pub fn new(grid: Arc<Grid>, start: DVec2, goal: DVec2, options: PlanOptions) -> Self {
        Self::with_planner(Planner::new(), grid, start, goal, options)
    }

    /// [`PlanTask::new`] with `planner`'s memory (from an earlier task, for
    /// example), so that the search allocates nothing where earlier ones
    /// went.
    #[must_use]
    pub fn with_planner(
        planner: Planner,
        grid: Arc<Grid>,
        start: DVec2,
        goal: DVec2,
        options: PlanOptions,
    ) -> Self {
        PlanTask {
            planner,
            grid,
            start,
            goal,
            options,
            begun: false,
            done: false,
        }
    }

    /// Runs the search for at most `max_expansions` more node expansions
    /// (at least one) and returns its answer once it has ended, `None`
    /// while it goes on. The budget ([`PlanOptions::node_budget`]) counts
    /// the expansions of every step. Besides the expansions, the first step
    /// checks the endpoints and the straight line between them, and the
    /// last builds the path. With [`Algorithm::Polyanya`](super::Algorithm::Polyanya), the first steps
    /// also build the planner's navigation mesh of the grid if it has none
    /// of it, at least one chunk a step (see [`NavMesh`]), a chunk counting
    /// as about as many expansions as it takes the time of; a mesh of an
    /// earlier version of the grid is brought up to date in the first step. Once the answer was given, a step runs
    /// nothing and returns `None` (see [`PlanTask::is_done`]).
    ///
    /// [`NavMesh`]: crate::mesh::NavMesh
    ///
    /// # Errors
    ///
    /// The answer's errors are those of [`Planner::plan`].
    pub fn step(&mut self, max_expansions: u64) -> Option<Result<Path, PlanError>> {
        if self.done {
            return None;
        }
        let query = PathQuery::new(&*self.grid, self.start, self.goal).with_options(self.options);
        let first = !core::mem::replace(&mut self.begun, true);
        let answer = self.planner.step(&query, first, max_expansions, None);
        self.done = answer.is_some();
        answer
    }

    /// Whether the search has given its answer.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The grid the task plans on.
    #[must_use]
    pub fn grid(&self) -> &Arc<Grid> {
        &self.grid
    }

    /// The task's planner, with its memory, for another task (a paused
    /// search in it is dropped).
    #[must_use]
    pub fn into_planner(self) -> Planner {
        self.planner
    }
}
