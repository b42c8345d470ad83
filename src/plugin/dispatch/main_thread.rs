//! Main-thread executor: searches run on the main thread in slices, within a
//! time budget each frame, where there are no search threads.
//!
//! In the browser (`wasm32` without atomics) no thread can be started, and a
//! game may ask for none ([`AnyAnglePlugin::search_threads`] `Some(0)`).
//! Then each frame, once dispatch has sent its searches, [`MainThread::work`]
//! runs them until the frame's budget
//! ([`PathfindingSettings::main_thread_budget`]) is spent: a search that
//! does not end in its slice is paused, its state kept in its own
//! [`Planner`], and goes on in a later slice, in this frame or the next.
//! Answers are the ones the search threads give. A Polyanya search first
//! builds the mesh it searches if there is none yet, in slices too: at
//! least one chunk a slice, each chunk counting as the expansions it takes
//! about the time of. Bringing a built mesh up to date after edits is done
//! at once, in the search's first slice (the chunks the edits touched).
//!
//! Order of service, as the threads serve: the most urgent search first; of
//! two as urgent, the one begun first. A search that has run longer than
//! [`LONG_SEARCH`] in all no longer holds up the others: it runs when nothing
//! else waits, and gets one slice at the start of every frame, so it still
//! ends. At most [`PLANNERS`] searches are begun and not ended at once, each
//! with its planner's memory.
//!
//! [`AnyAnglePlugin::search_threads`]: crate::plugin::AnyAnglePlugin::search_threads
//! [`PathfindingSettings::main_thread_budget`]: crate::plugin::PathfindingSettings::main_thread_budget

use core::time::Duration;
use std::collections::VecDeque;

use bevy_platform::time::Instant;

use super::fair::Turns;
use super::job::{Job, Outcome, Progress};
use super::workers::LONG_SEARCH;
use crate::plugin::agent::Priority;
#[cfg(feature = "debug-gizmos")]
use crate::search::SearchTrace;
use crate::search::{Path, PlanError, Planner, Step};

/// The most searches begun and not yet ended at once (each holds a planner,
/// whose memory on a grid up to about 1000 x 1000 cells is the grid's).
pub(crate) const PLANNERS: usize = 2;

/// The longest slice aimed for: a search is paused about this often, so a
/// frame overruns its budget by at most about this much.
const SLICE: Duration = Duration::from_micros(150);

/// The shortest slice aimed for.
const MIN_SLICE: Duration = Duration::from_micros(50);

/// A search begun and not yet ended.
struct Running {
    job: Job,
    priority: Priority,
    planner: Planner,
    progress: Progress,
    /// Time it has run so far.
    spent: Duration,
    /// When it began, in the order searches begin.
    order: u64,
    #[cfg(feature = "debug-gizmos")]
    trace: Option<(Box<SearchTrace>, Duration)>,
}

/// The main-thread executor's searches: waiting, begun, answered.
pub(crate) struct MainThread {
    /// Searches sent and not begun, one line per priority.
    waiting: [VecDeque<Job>; 4],
    running: Vec<Running>,
    /// Planners of ended searches, for the next ones (memory kept).
    spare: Vec<Planner>,
    outcomes: Vec<Outcome>,
    /// Answers owed for the jobs sent and not taken yet (one per agent a
    /// job answers).
    owed: usize,
    /// Whether searches not yet begun are held.
    paused: bool,
    begun: u64,
    finished: u64,
    busy: Duration,
    cancelled: u64,
    /// Smoothed nanoseconds of one expansion, to size slices.
    per_expansion: f64,
    /// How long a search runs before it counts as long.
    long: Duration,
    /// Whether a long search gets the next slice (once a frame).
    long_due: bool,
    /// Whether a slice ran this frame.
    sliced: bool,
    /// Which line the next search begun comes from first.
    turns: Turns,
}

impl Default for MainThread {
    fn default() -> Self {
        MainThread {
            waiting: Default::default(),
            running: Vec::with_capacity(PLANNERS),
            spare: Vec::new(),
            outcomes: Vec::new(),
            owed: 0,
            paused: false,
            begun: 0,
            finished: 0,
            busy: Duration::ZERO,
            cancelled: 0,
            // Cautious until measured.
            per_expansion: 500.0,
            long: LONG_SEARCH,
            long_due: false,
            sliced: false,
            turns: Turns::default(),
        }
    }
}

/// What to run next.
enum Next {
    /// The begun search at this index.
    Running(usize),
    /// The oldest waiting search of this priority.
    Waiting(Priority),
}

impl MainThread {
    /// Queues `job` with `priority`.
    pub(crate) fn send(&mut self, job: Job, priority: Priority) {
        self.owed += job.members();
        self.waiting[priority as usize].push_back(job);
    }

    /// Holds (or releases) searches not yet begun.
    pub(crate) fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// The answers ready, taken.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Outcome> {
        self.owed -= self.outcomes.len();
        core::mem::take(&mut self.outcomes)
    }

    /// Whether an answer is ready.
    pub(crate) fn has_outcomes(&self) -> bool {
        !self.outcomes.is_empty()
    }

    /// Answers owed for the searches sent (one per agent a search
    /// answers) and not taken yet.
    pub(crate) fn outstanding(&self) -> usize {
        self.owed
    }

    /// Searches of `priority` sent and not begun.
    pub(crate) fn waiting(&self, priority: Priority) -> usize {
        self.waiting[priority as usize].len()
    }

    /// Searches answered as cancelled so far.
    pub(crate) fn cancelled(&self) -> u64 {
        self.cancelled
    }

    /// Searches ended so far and the time they ran.
    pub(crate) fn work_done(&self) -> (u64, Duration) {
        (self.finished, self.busy)
    }

    /// A new frame begins: searches no longer wanted are answered, a long
    /// search, if any, gets the next slice, and one slice runs whatever the
    /// budget.
    pub(crate) fn new_frame(&mut self) {
        self.drop_cancelled();
        self.long_due = true;
        self.sliced = false;
    }

    /// Runs searches for about `budget`: slices of the most urgent ones
    /// until the budget is spent or nothing is left to run (and one short
    /// slice in a frame at least, so that searches go on at any budget).
    /// Returns whether it ran out of searches (rather than of time).
    pub(crate) fn work(&mut self, budget: Duration) -> bool {
        let began = Instant::now();
        loop {
            let spent = began.elapsed();
            if spent >= budget && self.sliced {
                return false;
            }
            let long_first = core::mem::take(&mut self.long_due);
            let Some(next) = self.next(long_first) else {
                return true;
            };
            let index = match next {
                Next::Running(i) => i,
                Next::Waiting(priority) => {
                    let Some(job) = self.waiting[priority as usize].pop_front() else {
                        return true;
                    };
                    if job.cancelled() {
                        self.skip(job);
                        continue;
                    }
                    // A search begun on its line's fair turn gets its
                    // slices before the more urgent ones begun: it would
                    // wait for them otherwise.
                    let fair = self.turns.fair() && priority >= Priority::FirstPath;
                    self.turns.begun();
                    self.begin(job, if fair { Priority::Walled } else { priority })
                }
            };
            let aim = budget.saturating_sub(spent).max(MIN_SLICE).min(SLICE);
            self.slice(index, aim);
            self.sliced = true;
        }
    }

    /// Answers the searches, begun or not, whose agent no longer wants
    /// them.
    fn drop_cancelled(&mut self) {
        for line in 0..self.waiting.len() {
            if self.waiting[line].iter().any(Job::cancelled) {
                let jobs = core::mem::take(&mut self.waiting[line]);
                for job in jobs {
                    if job.cancelled() {
                        self.skip(job);
                    } else {
                        self.waiting[line].push_back(job);
                    }
                }
            }
        }
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].job.cancelled() {
                let done = self.running.swap_remove(i);
                self.end(done, None);
            } else {
                i += 1;
            }
        }
    }

    /// What to run next: the most urgent begun or waiting search (a begun
    /// one before a waiting one as urgent), long searches last; with
    /// `long_first`, a long search if there is one.
    fn next(&self, long_first: bool) -> Option<Next> {
        let pick = |long: bool| {
            self.running
                .iter()
                .enumerate()
                .filter(|(_, r)| (r.spent > self.long) == long)
                .min_by_key(|(_, r)| (r.priority, r.order))
                .map(|(i, r)| (i, r.priority))
        };
        let long = pick(true);
        if long_first && let Some((i, _)) = long {
            return Some(Next::Running(i));
        }
        let begun = pick(false);
        let waiting = if self.paused || self.running.len() >= PLANNERS {
            None
        } else {
            self.turns
                .order()
                .into_iter()
                .find(|&p| !self.waiting[p as usize].is_empty())
        };
        match (begun, waiting) {
            (Some((i, p)), Some(w)) if p <= w => Some(Next::Running(i)),
            (_, Some(w)) => Some(Next::Waiting(w)),
            (Some((i, _)), None) => Some(Next::Running(i)),
            (None, None) => long.map(|(i, _)| Next::Running(i)),
        }
    }

    /// Begins `job`'s search (no work yet); returns its index.
    fn begin(&mut self, job: Job, priority: Priority) -> usize {
        #[cfg(feature = "debug-gizmos")]
        let trace = job
            .trace
            .then(|| (Box::<SearchTrace>::default(), Duration::ZERO));
        self.begun += 1;
        self.running.push(Running {
            job,
            priority,
            planner: self.spare.pop().unwrap_or_default(),
            progress: Progress::default(),
            spent: Duration::ZERO,
            order: self.begun,
            #[cfg(feature = "debug-gizmos")]
            trace,
        });
        self.running.len() - 1
    }

    /// Runs one slice of the begun search at `index`, sized to take about
    /// `aim`.
    fn slice(&mut self, index: usize, aim: Duration) {
        let expansions = (aim.as_nanos() as f64 / self.per_expansion).clamp(16.0, 1e7) as u64;
        let running = &mut self.running[index];
        #[cfg(feature = "debug-gizmos")]
        let traced = running.trace.as_mut().map(|t| &mut *t.0);
        #[cfg(not(feature = "debug-gizmos"))]
        let traced = None;
        let began = Instant::now();
        let step = running.job.run(
            &mut running.planner,
            &mut running.progress,
            traced,
            Some(expansions),
        );
        let took = began.elapsed();
        running.spent += took;
        match step {
            Step::Paused => {
                // A paused slice did all its expansions: the news on their
                // cost.
                let each = took.as_nanos() as f64 / expansions as f64;
                self.per_expansion = (self.per_expansion * 3.0 + each) / 4.0;
            }
            Step::Done(result) => {
                let done = self.running.swap_remove(index);
                let result = match result {
                    Err(PlanError::Cancelled) => None,
                    result => Some(result),
                };
                self.end(done, result);
            }
        }
    }

    /// Answers an ended (or cancelled) search and keeps its planner.
    fn end(&mut self, done: Running, result: Option<Result<Path, PlanError>>) {
        let Running {
            job,
            planner,
            spent,
            #[cfg(feature = "debug-gizmos")]
            mut trace,
            ..
        } = done;
        self.spare.push(planner);
        #[cfg(feature = "debug-gizmos")]
        if let Some(t) = trace.as_mut() {
            t.1 = spent;
        }
        self.busy += spent;
        self.finished += 1;
        if result.is_none() {
            self.cancelled += 1;
        }
        self.outcomes.extend(job.answer(
            result,
            #[cfg(feature = "debug-gizmos")]
            trace,
        ));
    }

    /// Answers a search that never began (its agent no longer wants it).
    fn skip(&mut self, job: Job) {
        self.cancelled += 1;
        self.outcomes.extend(job.answer(
            None,
            #[cfg(feature = "debug-gizmos")]
            None,
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use bevy_math::DVec2;

    use super::*;
    use crate::grid::Grid;
    use crate::plugin::dispatch::job::test_job;
    use crate::search::PlanOptions;

    fn short(grid: &Arc<Grid>, ticket: u32) -> Job {
        let goal = DVec2::new(f64::from(grid.width()) - 0.5, 0.5);
        test_job(grid, ticket, DVec2::new(0.5, 0.5), goal)
    }

    /// The maze corner to corner: thousands of expansions.
    fn maze() -> (Arc<Grid>, DVec2, DVec2) {
        let text = include_str!("../../../data/maps/maze512-1-0.map");
        let grid = Arc::new(Grid::from_movingai(text).unwrap());
        (grid, DVec2::new(1.5, 1.5), DVec2::new(510.5, 510.5))
    }

    #[test]
    fn every_job_is_answered_once_and_cancelled_jobs_do_not_search() {
        let grid = Arc::new(Grid::new(64, 8).unwrap());
        let mut main = MainThread::default();
        for i in 1..=50 {
            let job = short(&grid, i);
            job.cancel.store(i % 5 == 0, Ordering::Relaxed);
            main.send(job, Priority::ALL[i as usize % 4]);
        }
        assert_eq!(main.outstanding(), 50);
        let mut got = Vec::new();
        for _ in 0..100 {
            main.work(Duration::from_millis(5));
            got.extend(main.take_outcomes());
        }
        assert_eq!(got.len(), 50);
        assert_eq!(main.outstanding(), 0);
        assert!(Priority::ALL.iter().all(|&p| main.waiting(p) == 0));
        for o in &got {
            assert_eq!(o.result.is_none(), o.ticket % 5 == 0, "ticket {}", o.ticket);
            if let Some(result) = &o.result {
                assert!(result.is_ok(), "ticket {}: {result:?}", o.ticket);
            }
        }
        assert_eq!(main.cancelled(), 10);
        // Cancelled jobs never ran.
        assert_eq!(main.work_done().0, 40);
    }

    #[test]
    fn urgent_jobs_jump_the_line_and_paused_ones_wait() {
        let grid = Arc::new(Grid::new(64, 8).unwrap());
        let mut main = MainThread::default();
        main.set_paused(true);
        for i in 1..=20 {
            main.send(short(&grid, i), Priority::Refine);
        }
        main.send(short(&grid, 100), Priority::FirstPath);
        main.send(short(&grid, 200), Priority::Urgent);
        main.work(Duration::from_millis(50));
        assert!(!main.has_outcomes(), "held while paused");
        main.set_paused(false);
        let mut order = Vec::new();
        while main.outstanding() > 0 {
            main.work(Duration::from_millis(50));
            order.extend(main.take_outcomes().into_iter().map(|o| o.ticket));
        }
        assert_eq!(&order[..2], &[200, 100], "{order:?}");
        assert_eq!(order.len(), 22);
    }

    #[test]
    fn a_search_paused_across_frames_gives_the_answer_it_gives_whole() {
        let (grid, start, goal) = maze();
        let whole = crate::search::plan(&grid, start, goal, &PlanOptions::default()).unwrap();
        assert!(whole.stats.expanded > 2_000, "{:?}", whole.stats);
        let mut main = MainThread::default();
        main.send(test_job(&grid, 1, start, goal), Priority::FirstPath);
        // Frames of a tenth of a millisecond: the search takes many.
        let mut frames = 0;
        while !main.has_outcomes() {
            main.work(Duration::from_micros(100));
            frames += 1;
            assert!(frames < 1_000_000);
        }
        assert!(frames > 3, "{frames} frames");
        let outcome = main.take_outcomes().pop().unwrap();
        assert_eq!(outcome.result, Some(Ok(whole)));
        assert_eq!(main.outstanding(), 0);
    }

    #[test]
    fn searches_go_on_at_a_zero_budget_one_slice_a_frame() {
        let (grid, start, goal) = maze();
        let small = Arc::new(Grid::new(64, 8).unwrap());
        let mut main = MainThread::default();
        main.send(test_job(&grid, 1, start, goal), Priority::FirstPath);
        main.send(short(&small, 2), Priority::FirstPath);
        let mut frames = 0;
        let mut got = Vec::new();
        while got.len() < 2 {
            main.new_frame();
            main.work(Duration::ZERO);
            // A second call in the same frame runs nothing.
            let state = |main: &MainThread| {
                let spent: Duration = main.running.iter().map(|r| r.spent).sum();
                (spent, main.outcomes.len(), main.begun)
            };
            let after_one = state(&main);
            assert!(!main.work(Duration::ZERO), "out of time, not of work");
            assert_eq!(state(&main), after_one);
            got.extend(main.take_outcomes());
            frames += 1;
            assert!(frames < 1_000_000);
        }
        assert!(frames > 3, "{frames} frames");
        let whole = crate::search::plan(&grid, start, goal, &PlanOptions::default()).unwrap();
        let maze_answer = got.iter().find(|o| o.ticket == 1).unwrap();
        assert_eq!(maze_answer.result, Some(Ok(whole)));
    }

    #[test]
    fn a_polyanya_search_builds_its_mesh_a_chunk_or_so_a_frame() {
        let (grid, start, goal) = maze();
        let options = PlanOptions::with_algorithm(crate::search::Algorithm::Polyanya);
        let whole = crate::search::plan(&grid, start, goal, &options).unwrap();
        let mut main = MainThread::default();
        let mut job = test_job(&grid, 1, start, goal);
        job.algorithm = options.algorithm;
        job.options = options;
        main.send(job, Priority::FirstPath);
        // One slice a frame: the maze's mesh (64 chunks, each more work
        // than a slice holds) is built over at least as many frames, never
        // in one go.
        let mut frames = 0;
        while !main.has_outcomes() {
            main.new_frame();
            main.work(Duration::ZERO);
            frames += 1;
            assert!(frames < 1_000_000);
        }
        let chunks = crate::mesh::NavMesh::build(&grid).chunk_count();
        assert!(frames > chunks, "{frames} frames for {chunks} chunks");
        let outcome = main.take_outcomes().pop().unwrap();
        assert_eq!(outcome.result, Some(Ok(whole)));
    }

    #[test]
    fn a_paused_search_is_cancelled_at_the_next_frame() {
        let (grid, start, goal) = maze();
        let mut main = MainThread::default();
        let long = test_job(&grid, 1, start, goal);
        let cancel = Arc::clone(&long.cancel);
        main.send(long, Priority::FirstPath);
        main.work(Duration::from_micros(50));
        assert!(!main.has_outcomes());
        assert_eq!(main.running.len(), 1, "begun and paused");
        cancel.store(true, Ordering::Relaxed);
        main.new_frame();
        let outcome = main.take_outcomes().pop().unwrap();
        assert!(outcome.result.is_none());
        assert_eq!(main.cancelled(), 1);
        assert_eq!(main.outstanding(), 0);
        // Its planner is kept for the next search.
        assert_eq!(main.spare.len(), 1);
    }

    #[test]
    fn a_long_search_does_not_hold_up_short_ones_and_still_ends() {
        let (grid, start, goal) = maze();
        let small = Arc::new(Grid::new(64, 8).unwrap());
        let mut main = MainThread {
            long: Duration::from_micros(500),
            ..MainThread::default()
        };
        main.send(test_job(&grid, 1, start, goal), Priority::FirstPath);
        // Run it until it counts as long.
        while main.running.first().is_some_and(|r| r.spent <= main.long) {
            main.work(Duration::from_micros(100));
        }
        assert!(
            !main.has_outcomes(),
            "the maze search takes longer than that"
        );
        // Short searches, as urgent, sent after it, end first.
        for i in 2..=11 {
            main.send(short(&small, i), Priority::FirstPath);
        }
        let mut order = Vec::new();
        while main.outstanding() > 0 {
            main.work(Duration::from_millis(1));
            order.extend(main.take_outcomes().into_iter().map(|o| o.ticket));
        }
        assert_eq!(order.last(), Some(&1), "{order:?}");
        assert_eq!(order.len(), 11);
    }
}
