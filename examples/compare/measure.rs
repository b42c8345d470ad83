//! Running the planners: loading a map and its scenario, choosing the
//! queries, crafting unreachable ones, and timing every solver on each of
//! them in turn.

use std::hint::black_box;
use std::io::IsTerminal as _;
use std::path::{Path as FsPath, PathBuf};
use std::time::Instant;

use bevy_anyangle::grid::ScenarioEntry;
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;

use crate::args::{Args, Points};
use crate::baseline::VertexGraph;
use crate::validate::Validator;

/// The maps of `SPEC.md`'s game benchmarks (the others are synthetic or a
/// city map). The Anya targets about game maps are checked on these.
pub const GAME_MAPS: [&str; 7] = [
    "arena",
    "lak303d",
    "den520d",
    "brc202d",
    "AR0011SR",
    "BigGameHunters",
    "lt_backalley_n",
];

/// A solver: one of the crate's planners, or the `pathfinding` baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// [`Planner::plan`] with this algorithm; for [`Algorithm::Polyanya`],
    /// [`Planner::plan_on_mesh`] on the map's [`NavMesh`], built before
    /// timing (its build is timed on its own, [`MeshFigures`]).
    Ours(Algorithm),
    /// `pathfinding::astar` on the vertex grid.
    Baseline,
}

impl Solver {
    /// The row name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Solver::Ours(a) => a.name(),
            Solver::Baseline => "pathfinding",
        }
    }
}

/// Every solver, in report order; the indices below point into it.
pub const SOLVERS: [Solver; 6] = [
    Solver::Ours(Algorithm::Anya),
    Solver::Ours(Algorithm::Polyanya),
    Solver::Ours(Algorithm::LazyTheta),
    Solver::Ours(Algorithm::AStarSmoothed),
    Solver::Ours(Algorithm::AStar),
    Solver::Baseline,
];
/// Index of Anya in [`SOLVERS`].
pub const ANYA: usize = 0;
/// Index of Polyanya (on the prebuilt mesh).
pub const POLYANYA: usize = 1;
/// Index of Lazy Theta*.
pub const LAZY_THETA: usize = 2;
/// Index of A* with post-smoothing.
pub const ASTAR_PS: usize = 3;
/// Index of our grid A*.
pub const ASTAR: usize = 4;
/// Index of the `pathfinding` baseline.
pub const BASELINE: usize = 5;

/// How one run of one solver ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A path to the goal.
    Found {
        /// Its length.
        length: f64,
    },
    /// A path to the closest reachable point.
    Fallback {
        /// Its length.
        length: f64,
    },
    /// "The goal is unreachable", with no path.
    Unreachable,
    /// The start was not a valid point (the planner moved it).
    InvalidStart,
    /// Any other error.
    Failed(String),
    /// The solver cannot run this query (the baseline on non-vertex points).
    Skipped,
}

/// One solver on one query.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Wall-clock time of the call, microseconds (the fastest repetition).
    pub time_us: f64,
    /// Nodes expanded (expand calls), when the solver reports it.
    pub expanded: Option<u64>,
    /// Open-list pops (stale entries and the goal included), when the
    /// solver reports them.
    pub popped: Option<u64>,
    /// How it ended.
    pub outcome: Outcome,
    /// Why the answer breaks `SPEC.md`, as `scen --validate` checks it
    /// (our planners only, on the first repetition, outside the clock;
    /// `None`: valid, or not checked).
    pub invalid: Option<String>,
}

impl Run {
    /// The length of a path to the goal.
    pub fn found_length(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Found { length } => Some(length),
            _ => None,
        }
    }
}

/// A scenario query and every solver's run on it (indexed like [`SOLVERS`]).
#[derive(Clone, Debug)]
pub struct Query {
    /// Start point.
    pub start: DVec2,
    /// Goal point.
    pub goal: DVec2,
    /// The runs.
    pub runs: Vec<Run>,
}

/// Why a crafted query is unreachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreachability {
    /// The goal lies inside an obstacle.
    Obstacle,
    /// The goal lies in another connected region.
    OtherRegion,
    /// The goal lies outside the grid.
    Outside,
}

/// A crafted unreachable query, run with both fallback policies.
#[derive(Clone, Debug)]
pub struct UnreachableQuery {
    /// Why it is unreachable.
    pub kind: Unreachability,
    /// Runs with [`FallbackPolicy::Fail`] (the baseline: `astar` until its
    /// open list runs dry).
    pub fail: Vec<Run>,
    /// Runs with [`FallbackPolicy::ClosestReachable`] (the baseline is
    /// skipped: it has no fallback).
    pub fallback: Vec<Run>,
}

/// Everything measured on one map.
#[derive(Clone, Debug)]
pub struct MapRecord {
    /// The map's name (file name without `.map`).
    pub name: String,
    /// Grid width and height.
    pub size: (u32, u32),
    /// Queries in the scenario file.
    pub scenario_queries: usize,
    /// The queries run.
    pub queries: Vec<Query>,
    /// The crafted unreachable queries.
    pub unreachable: Vec<UnreachableQuery>,
    /// Polyanya's navigation mesh of the map (`None` only in tests).
    pub mesh: Option<MeshFigures>,
}

/// The navigation mesh Polyanya searches, built once per map before any
/// query is timed.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshFigures {
    /// The fastest [`NavMesh::build`] of the map, seconds.
    pub build_s: f64,
    /// The first (cold) build, seconds.
    pub first_build_s: f64,
    /// Builds timed.
    pub builds: u32,
    /// [`NavMesh::polygon_count`].
    pub polygons: usize,
    /// [`NavMesh::memory_bytes`].
    pub bytes: usize,
    /// [`Grid::free_count`].
    pub free_cells: u64,
}

impl MeshFigures {
    /// Mesh bytes per free cell of the grid.
    pub fn bytes_per_free_cell(&self) -> Option<f64> {
        (self.free_cells > 0).then(|| self.bytes as f64 / self.free_cells as f64)
    }
}

/// Builds `grid`'s mesh at least 3 times (up to 10 while they take less than
/// half a second in all) and keeps the fastest time; returns the last mesh.
pub fn build_mesh(grid: &Grid) -> (NavMesh, MeshFigures) {
    let mut times = Vec::new();
    let mut total = 0.0;
    let mut mesh;
    loop {
        let clock = Instant::now();
        mesh = black_box(NavMesh::build(black_box(grid)));
        let t = clock.elapsed().as_secs_f64();
        times.push(t);
        total += t;
        if times.len() >= 10 || (times.len() >= 3 && total >= 0.5) {
            break;
        }
    }
    let figures = MeshFigures {
        build_s: times.iter().copied().fold(f64::INFINITY, f64::min),
        first_build_s: times[0],
        builds: times.len() as u32,
        polygons: mesh.polygon_count(),
        bytes: mesh.memory_bytes(),
        free_cells: grid.free_count(),
    };
    (mesh, figures)
}

impl MapRecord {
    /// Whether this is one of [`GAME_MAPS`].
    pub fn is_game_map(&self) -> bool {
        GAME_MAPS.contains(&self.name.as_str())
    }

    /// Whether this is a maze (`maze512-1-0` and the like).
    pub fn is_maze(&self) -> bool {
        self.name.starts_with("maze")
    }

    /// Whether this is a random map (`random512-10-0` and the like).
    pub fn is_random(&self) -> bool {
        self.name.starts_with("random")
    }

    /// The map's file name (`find_maps` only takes `NAME.map` files).
    pub fn file_name(&self) -> String {
        format!("{}.map", self.name)
    }
}

/// A map file and its scenario.
#[derive(Clone, Debug)]
pub struct MapFiles {
    /// The name (file name without `.map`).
    pub name: String,
    /// The `.map` file.
    pub map: PathBuf,
    /// The `.map.scen` (or `.scen`) file.
    pub scen: PathBuf,
}

/// The maps of `dir` that have a scenario (game maps first), restricted to
/// `only` when it is not empty.
///
/// # Errors
///
/// An unreadable folder, a name in `only` that is not there, or no map at
/// all.
pub fn find_maps(dir: &FsPath, only: &[String]) -> Result<Vec<MapFiles>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut maps = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".map"))
        else {
            continue;
        };
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let scen = [format!("{name}.map.scen"), format!("{name}.scen")]
            .into_iter()
            .map(|s| dir.join(s))
            .find(|s| s.is_file());
        match scen {
            Some(scen) => maps.push(MapFiles {
                name: name.to_owned(),
                map: path.clone(),
                scen,
            }),
            None => eprintln!(
                "warning: {} has no {name}.map.scen beside it; skipped",
                path.display()
            ),
        }
    }
    if let Some(missing) = only.iter().find(|o| !maps.iter().any(|m| &m.name == *o)) {
        return Err(format!(
            "no map {missing:?} with a scenario in {}",
            dir.display()
        ));
    }
    if maps.is_empty() {
        return Err(format!(
            "no NAME.map with a NAME.map.scen in {}",
            dir.display()
        ));
    }
    // Game maps first, in the order of `GAME_MAPS`, then the others by name.
    let rank = |m: &MapFiles| {
        GAME_MAPS
            .iter()
            .position(|g| *g == m.name)
            .unwrap_or(GAME_MAPS.len())
    };
    maps.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name)));
    Ok(maps)
}

/// Reads a text file, naming it in errors.
fn read_text(path: &FsPath) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: not a text file (invalid UTF-8 at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// `k` indices spread evenly over `0..n` (all of them when `n <= k`).
/// Scenario files list queries by difficulty bucket, so an even spread
/// covers every difficulty.
pub fn spread(n: usize, k: usize) -> Vec<usize> {
    if n <= k {
        return (0..n).collect();
    }
    (0..k).map(|i| (2 * i + 1) * n / (2 * k)).collect()
}

/// The solvers' memory, warmed up for one grid.
struct Solvers<'g> {
    planners: Vec<Planner>,
    baseline: Option<VertexGraph>,
    /// The mesh Polyanya plans on (`Planner::plan_on_mesh`).
    mesh: NavMesh,
    /// Checks our planners' answers, outside the clock.
    validator: Validator<'g>,
}

impl<'g> Solvers<'g> {
    fn new(grid: &'g Grid, points: Points, mesh: NavMesh) -> Self {
        let planners = (0..SOLVERS.len())
            .map(|_| {
                let mut p = Planner::new();
                p.reserve(grid);
                p
            })
            .collect();
        Solvers {
            planners,
            baseline: (points == Points::Corners).then(|| VertexGraph::new(grid)),
            mesh,
            validator: Validator::new(grid),
        }
    }

    /// Runs solver `i` once, timed; with `check`, validates the answer
    /// afterwards.
    fn run_once(
        &mut self,
        i: usize,
        grid: &Grid,
        (start, goal): (DVec2, DVec2),
        fallback: FallbackPolicy,
        check: bool,
    ) -> Run {
        match SOLVERS[i] {
            Solver::Ours(algorithm) => {
                let options = PlanOptions {
                    fallback,
                    ..PlanOptions::with_algorithm(algorithm)
                };
                let planner = &mut self.planners[i];
                let clock = Instant::now();
                let result = if algorithm == Algorithm::Polyanya {
                    planner.plan_on_mesh(&self.mesh, start, goal, &options)
                } else {
                    planner.plan(grid, start, goal, &options)
                };
                let time_us = clock.elapsed().as_secs_f64() * 1e6;
                let result = black_box(result);
                let invalid = if check {
                    match &result {
                        Ok(path) => self.validator.check_path(start, goal, path),
                        Err(PlanError::Unreachable { closest }) => {
                            self.validator.check_unreachable(start, goal, *closest)
                        }
                        Err(_) => None,
                    }
                } else {
                    None
                };
                let (stats, outcome) = match result {
                    Ok(p) if p.start_moved_from.is_some() => (Some(p.stats), Outcome::InvalidStart),
                    Ok(p) if p.is_fallback() => {
                        (Some(p.stats), Outcome::Fallback { length: p.length })
                    }
                    Ok(p) => (Some(p.stats), Outcome::Found { length: p.length }),
                    Err(PlanError::Unreachable { .. }) => (None, Outcome::Unreachable),
                    Err(e) => (None, Outcome::Failed(e.to_string())),
                };
                Run {
                    time_us,
                    expanded: stats.as_ref().map(|s| s.expanded),
                    popped: stats.as_ref().map(|s| s.popped),
                    outcome,
                    invalid,
                }
            }
            Solver::Baseline => {
                let vertex = |p: DVec2| [p.x as i64, p.y as i64];
                let on_vertices = start.fract() == DVec2::ZERO && goal.fract() == DVec2::ZERO;
                match &self.baseline {
                    Some(graph) if on_vertices && fallback == FallbackPolicy::Fail => {
                        let clock = Instant::now();
                        let found = graph.plan(vertex(start), vertex(goal));
                        let time_us = clock.elapsed().as_secs_f64() * 1e6;
                        let found = black_box(found);
                        Run {
                            time_us,
                            expanded: Some(found.expanded),
                            popped: None,
                            outcome: match found.cost {
                                Some(c) => Outcome::Found { length: c.value() },
                                None => Outcome::Unreachable,
                            },
                            invalid: None,
                        }
                    }
                    _ => Run {
                        time_us: 0.0,
                        expanded: None,
                        popped: None,
                        outcome: Outcome::Skipped,
                        invalid: None,
                    },
                }
            }
        }
    }

    /// Runs solver `i` `reps` times and keeps the fastest time (the first
    /// run's answer is validated).
    fn run(
        &mut self,
        i: usize,
        grid: &Grid,
        ends: (DVec2, DVec2),
        fallback: FallbackPolicy,
        reps: u32,
    ) -> Run {
        let mut best = self.run_once(i, grid, ends, fallback, true);
        for _ in 1..reps {
            let again = self.run_once(i, grid, ends, fallback, false);
            best.time_us = best.time_us.min(again.time_us);
        }
        best
    }

    /// Times every solver on one query again, `reps` times each (answers
    /// unchecked: the first pass checked them), in the order of
    /// [`Solvers::run_all`]; returns each solver's fastest time in µs.
    fn time_all(&mut self, grid: &Grid, ends: (DVec2, DVec2), reps: u32, turn: usize) -> Vec<f64> {
        let n = SOLVERS.len();
        let mut times = vec![f64::INFINITY; n];
        for k in 0..n {
            let i = (turn + k) % n;
            for _ in 0..reps {
                let run = self.run_once(i, grid, ends, FallbackPolicy::Fail, false);
                times[i] = times[i].min(run.time_us);
            }
        }
        times
    }

    /// Every solver on one query, starting with a different solver each
    /// time (`turn`) so that none always runs on a cache the others warmed.
    fn run_all(
        &mut self,
        grid: &Grid,
        ends: (DVec2, DVec2),
        fallback: FallbackPolicy,
        reps: u32,
        turn: usize,
    ) -> Vec<Run> {
        let n = SOLVERS.len();
        let mut runs = vec![None; n];
        for k in 0..n {
            let i = (turn + k) % n;
            runs[i] = Some(self.run(i, grid, ends, fallback, reps));
        }
        runs.into_iter()
            .map(|r| r.expect("every solver ran"))
            .collect()
    }
}

/// Up to `k` items spread evenly over `items`.
fn pick<T: Copy>(items: &[T], k: usize) -> Vec<T> {
    spread(items.len(), k)
        .into_iter()
        .map(|i| items[i])
        .collect()
}

/// Unreachable queries for `grid`: goals inside obstacles, in other regions
/// (when the map has several) and outside the grid, from the given starts.
/// `starts` are scenario start cells, whose points are taken as `points`.
pub fn craft_unreachable(
    grid: &Grid,
    starts: &[UVec2],
    points: Points,
) -> Vec<(Unreachability, UVec2, DVec2)> {
    if starts.is_empty() {
        return Vec::new();
    }
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    let mut out = Vec::new();
    let start = |i: usize| starts[i % starts.len()];

    // Inside an obstacle: a vertex whose four cells are blocked, or the
    // centre of a blocked cell. Two spread over the map, and the one deepest
    // inside an obstacle (farthest from every free cell): the worst case for
    // finding the closest reachable point.
    let depth = obstacle_depth(grid);
    let depth_at = |x: i64, y: i64| -> u32 {
        if (0..w).contains(&x) && (0..h).contains(&y) {
            depth[(y * w + x) as usize]
        } else {
            u32::MAX
        }
    };
    let mut inside = Vec::new();
    let mut deepest: Option<(u32, UVec2)> = None;
    for y in 0..h {
        for x in 0..w {
            let d = match points {
                Points::Corners => (0..2)
                    .flat_map(|dy| (0..2).map(move |dx| (x - 1 + dx, y - 1 + dy)))
                    .map(|(cx, cy)| depth_at(cx, cy))
                    .min()
                    .unwrap_or(0),
                Points::Centres => depth_at(x, y),
            };
            if d > 0 {
                let c = UVec2::new(x as u32, y as u32);
                inside.push(c);
                if deepest.is_none_or(|(best, _)| d > best) {
                    deepest = Some((d, c));
                }
            }
        }
    }
    let mut obstacle_goals = pick(&inside, 2);
    if let Some((_, c)) = deepest
        && !obstacle_goals.contains(&c)
    {
        obstacle_goals.push(c);
    }
    for (i, c) in obstacle_goals.into_iter().enumerate() {
        out.push((Unreachability::Obstacle, start(i), points.of(c)));
    }

    // Another region: a free cell whose point touches no cell of the
    // start's region (and, for a vertex, is not a double corner).
    for i in 0..3 {
        let s = start(i);
        let Some(home) = grid.region(i64::from(s.x), i64::from(s.y)) else {
            continue;
        };
        let mut away = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let Some(r) = grid.region(x, y) else {
                    continue;
                };
                let ok = r != home
                    && match points {
                        Points::Corners => {
                            !grid.is_double_corner(x, y)
                                && (0..2).all(|dy| {
                                    (0..2)
                                        .all(|dx| grid.region(x - 1 + dx, y - 1 + dy) != Some(home))
                                })
                        }
                        Points::Centres => true,
                    };
                if ok {
                    away.push(UVec2::new(x as u32, y as u32));
                }
            }
        }
        if let Some(&c) = pick(&away, 3).get(i) {
            out.push((Unreachability::OtherRegion, s, points.of(c)));
        }
    }

    // Outside the grid.
    out.push((
        Unreachability::Outside,
        start(3),
        DVec2::new(w as f64 + 3.0, h as f64 + 2.0),
    ));
    out
}

/// Per cell, row by row: 0 for a free cell; for a blocked one, its
/// chessboard distance to the nearest free cell (`u32::MAX` on a grid with
/// no free cell). Two chamfer passes.
pub fn obstacle_depth(grid: &Grid) -> Vec<u32> {
    let (w, h) = (grid.width() as usize, grid.height() as usize);
    let mut d: Vec<u32> = (0..w * h)
        .map(|i| {
            if grid.is_free_xy((i % w) as i64, (i / w) as i64) {
                0
            } else {
                u32::MAX
            }
        })
        .collect();
    let relax = |d: &mut [u32], i: usize, j: usize| {
        let via = d[j].saturating_add(1);
        if via < d[i] {
            d[i] = via;
        }
    };
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if x > 0 {
                relax(&mut d, i, i - 1);
            }
            if y > 0 {
                relax(&mut d, i, i - w);
                if x > 0 {
                    relax(&mut d, i, i - w - 1);
                }
                if x + 1 < w {
                    relax(&mut d, i, i - w + 1);
                }
            }
        }
    }
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let i = y * w + x;
            if x + 1 < w {
                relax(&mut d, i, i + 1);
            }
            if y + 1 < h {
                relax(&mut d, i, i + w);
                if x + 1 < w {
                    relax(&mut d, i, i + w + 1);
                }
                if x > 0 {
                    relax(&mut d, i, i + w - 1);
                }
            }
        }
    }
    d
}

/// Loads one map and runs every solver on its queries.
///
/// # Errors
///
/// An unreadable or malformed map or scenario file.
pub fn measure_map(files: &MapFiles, args: &Args) -> Result<MapRecord, String> {
    let grid = Grid::from_movingai(&read_text(&files.map)?)
        .map_err(|e| format!("{}: {e}", files.map.display()))?;
    let scenario = Scenario::parse(&read_text(&files.scen)?)
        .map_err(|e| format!("{}: {e}", files.scen.display()))?;
    if let Some(e) = scenario
        .entries
        .iter()
        .find(|e| e.start.x >= grid.width() || e.start.y >= grid.height())
        .or_else(|| {
            scenario
                .entries
                .iter()
                .find(|e| e.goal.x >= grid.width() || e.goal.y >= grid.height())
        })
    {
        return Err(format!(
            "{}: query {} -> {} lies outside the {} x {} map {}",
            files.scen.display(),
            e.start,
            e.goal,
            grid.width(),
            grid.height(),
            files.map.display()
        ));
    }
    let n = scenario.entries.len();
    let chosen = spread(n, args.sample.unwrap_or(n));
    let entries: Vec<_> = chosen.iter().map(|&i| &scenario.entries[i]).collect();
    let ends = |e: &ScenarioEntry| (args.points.of(e.start), args.points.of(e.goal));

    // Polyanya's mesh: built (and timed) before any query, never inside a
    // query's time.
    let (mesh, mesh_figures) = build_mesh(&grid);
    eprintln!(
        "  mesh: {} polygons, {:.1} bytes per free cell, built in {:.2} ms (fastest of {}; first {:.2} ms)",
        mesh_figures.polygons,
        mesh_figures.bytes_per_free_cell().unwrap_or(0.0),
        mesh_figures.build_s * 1e3,
        mesh_figures.builds,
        mesh_figures.first_build_s * 1e3,
    );
    let mut solvers = Solvers::new(&grid, args.points, mesh);
    // Warm up: a few untimed queries per solver, so that first-use
    // allocations and cold caches are not timed.
    for e in entries.iter().rev().take(3) {
        let _ = solvers.run_all(&grid, ends(e), FallbackPolicy::Fail, 1, 0);
    }

    let mut queries = Vec::with_capacity(entries.len());
    let clock = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut next_report = 1;
    for (k, e) in entries.iter().enumerate() {
        let (start, goal) = ends(e);
        let runs = solvers.run_all(&grid, (start, goal), FallbackPolicy::Fail, args.reps, k);
        for (i, r) in runs.iter().enumerate() {
            let why = match (&r.outcome, &r.invalid) {
                (_, Some(why)) | (Outcome::Failed(why), _) => why.as_str(),
                (Outcome::InvalidStart, _) => "the start is not a valid point",
                _ => continue,
            };
            eprintln!(
                "  warning: {} on ({}, {}) -> ({}, {}): {why}",
                SOLVERS[i].name(),
                start.x,
                start.y,
                goal.x,
                goal.y,
            );
        }
        queries.push(Query { start, goal, runs });
        // Progress: a line per quarter, or a counter on a terminal.
        if terminal {
            eprint!("\r  {} / {} queries", k + 1, entries.len());
        } else if (k + 1) * 4 >= next_report * entries.len() {
            eprintln!("  {} / {} queries", k + 1, entries.len());
            next_report += 1;
        }
    }
    if terminal {
        eprintln!();
    }
    // More passes: each query's fastest time over all of them.
    for pass in 1..args.passes {
        for (k, (e, query)) in entries.iter().zip(&mut queries).enumerate() {
            let times = solvers.time_all(&grid, ends(e), args.reps, k + pass as usize);
            for (run, t) in query.runs.iter_mut().zip(times) {
                run.time_us = run.time_us.min(t);
            }
        }
        eprintln!("  pass {} of {} done", pass + 1, args.passes);
    }
    eprintln!(
        "  {} queries x {} solvers in {:.1} s",
        entries.len(),
        SOLVERS.len(),
        clock.elapsed().as_secs_f64()
    );

    let starts: Vec<UVec2> = entries.iter().map(|e| e.start).collect();
    let crafted = craft_unreachable(&grid, &pick(&starts, 8), args.points);
    let mut unreachable = Vec::with_capacity(crafted.len());
    for (k, (kind, s, goal)) in crafted.into_iter().enumerate() {
        let start = args.points.of(s);
        let fail = solvers.run_all(&grid, (start, goal), FallbackPolicy::Fail, args.reps, k);
        let fallback = solvers.run_all(
            &grid,
            (start, goal),
            FallbackPolicy::ClosestReachable,
            args.reps,
            k,
        );
        for (i, r) in fail.iter().chain(&fallback).enumerate() {
            if let Some(why) = &r.invalid {
                eprintln!(
                    "  warning: {} on the crafted query ({}, {}) -> ({}, {}): {why}",
                    SOLVERS[i % SOLVERS.len()].name(),
                    start.x,
                    start.y,
                    goal.x,
                    goal.y,
                );
            }
        }
        for (i, r) in fail.iter().enumerate() {
            if !matches!(r.outcome, Outcome::Unreachable | Outcome::Skipped) {
                eprintln!(
                    "  warning: {} answered the crafted unreachable query ({}, {}) -> ({}, {}) with {:?}",
                    SOLVERS[i].name(),
                    start.x,
                    start.y,
                    goal.x,
                    goal.y,
                    r.outcome
                );
            }
        }
        unreachable.push(UnreachableQuery {
            kind,
            fail,
            fallback,
        });
    }
    Ok(MapRecord {
        name: files.name.clone(),
        size: (grid.width(), grid.height()),
        scenario_queries: n,
        queries,
        unreachable,
        mesh: Some(mesh_figures),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_covers_the_range() {
        assert_eq!(spread(3, 5), [0, 1, 2]);
        assert_eq!(spread(10, 2), [2, 7]);
        let s = spread(1000, 40);
        assert_eq!(s.len(), 40);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(*s.last().expect("40 items") >= 975);
    }

    #[test]
    fn obstacle_depth_is_the_chessboard_distance_to_free_cells() {
        let grid = Grid::from_ascii(
            "#####
             #####
             ####.",
        )
        .expect("a valid picture");
        assert_eq!(
            obstacle_depth(&grid),
            [4, 3, 2, 2, 2, 4, 3, 2, 1, 1, 4, 3, 2, 1, 0]
        );
        let none_free = Grid::from_ascii("##").expect("a valid picture");
        assert_eq!(obstacle_depth(&none_free), [u32::MAX, u32::MAX]);
    }

    #[test]
    fn crafted_queries_are_unreachable() {
        let grid = Grid::from_ascii(
            "...#....
             ...#.##.
             ...#.##.
             ...#....",
        )
        .expect("a valid picture");
        for points in [Points::Corners, Points::Centres] {
            let crafted = craft_unreachable(&grid, &[UVec2::new(0, 0)], points);
            assert!(crafted.iter().any(|c| c.0 == Unreachability::OtherRegion));
            assert!(crafted.iter().any(|c| c.0 == Unreachability::Obstacle));
            for (kind, s, goal) in crafted {
                let result = Planner::new().plan(
                    &grid,
                    points.of(s),
                    goal,
                    &PlanOptions {
                        fallback: FallbackPolicy::Fail,
                        ..PlanOptions::default()
                    },
                );
                assert!(
                    matches!(result, Err(PlanError::Unreachable { .. })),
                    "{kind:?} {goal} with {points:?}: {result:?}"
                );
            }
        }
    }
}
