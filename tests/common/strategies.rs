//! `proptest` strategies for the property tests: grids of the families of
//! [`super::generate`], and query points, cells and edits drawn for a grid.
//! A failing case shrinks to a small grid and one query.
//!
//! A grid is generated from its family, size and seed, as
//! [`super::generate::grid_of`] does. It shrinks in two stages: first the
//! family (towards [`Family::Random`]) and the size (towards 3 x 3), which
//! draws another grid from the same seed; then its cells, in place: columns
//! and rows are cropped off each side, then blocked cells are freed, for as
//! long as the test keeps failing.
//!
//! Points, cells and edits are drawn in the coordinates of the grid as it
//! was generated, and [`GridCase::place`] and [`GridCase::cell`] move them
//! onto the cropped grid, so they keep naming the same spot while the grid
//! shrinks around them. [`on_grid`] draws them for the generated grid; the
//! values shrink first (down to one query), then the grid, then each again
//! in turn for as long as either changes.

use std::fmt;

use bevy_anyangle::prelude::*;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::{NewTree, Union, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use super::Reference;
use super::generate::{Family, Query, Rng, grid_of};

// ----- running ---------------------------------------------------------------

/// Runs `test` on `cases` values of `strategy`, drawn from a fixed seed (the
/// same cases on every run, every machine). Writes no file. On a failure,
/// panics with the shrunk case and the test's report of it.
pub fn check<S: Strategy>(
    seed: u64,
    cases: u32,
    strategy: &S,
    test: impl Fn(S::Value) -> Result<(), String>,
) {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 20_000,
        max_shrink_time: 120_000,
        ..Config::default()
    };
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    match runner.run(strategy, |value| test(value).map_err(TestCaseError::fail)) {
        Ok(()) => {}
        Err(TestError::Fail(why, value)) => panic!(
            "{why}\n\nthe shrunk case (points, cells and edits in the coordinates of the grid as \
             generated, before cropping): {value:?}"
        ),
        Err(TestError::Abort(why)) => panic!("the property run stopped: {why}"),
    }
}

// ----- grids -----------------------------------------------------------------

/// A grid drawn by [`grids`], as it stands after shrinking.
#[derive(Clone, PartialEq, Eq)]
pub struct GridCase {
    /// The family it was generated as.
    pub family: Family,
    /// The generator seed (`grid_of(&mut Rng::new(seed), family, w, h)`
    /// draws the grid as generated).
    pub seed: u64,
    /// Width and height as generated.
    pub generated: (i64, i64),
    /// The columns and rows cropped off the left and the top.
    pub origin: (i64, i64),
    /// Width now.
    pub width: i64,
    /// Height now.
    pub height: i64,
    /// Blocked cells now, row by row.
    blocked: Vec<bool>,
}

impl GridCase {
    /// The grid `grid_of` draws for these parameters.
    #[must_use]
    pub fn generate(family: Family, width: i64, height: i64, seed: u64) -> Self {
        let tg = grid_of(&mut Rng::new(seed), family, width, height);
        let mut blocked = Vec::with_capacity((width * height) as usize);
        for y in 0..height {
            for x in 0..width {
                blocked.push(!tg.grid.is_free_xy(x, y));
            }
        }
        GridCase {
            family,
            seed,
            generated: (width, height),
            origin: (0, 0),
            width,
            height,
            blocked,
        }
    }

    /// Whether cell `(x, y)` (current coordinates) is blocked; outside the
    /// grid everything is.
    #[must_use]
    pub fn is_blocked(&self, x: i64, y: i64) -> bool {
        !(0..self.width).contains(&x)
            || !(0..self.height).contains(&y)
            || self.blocked[(y * self.width + x) as usize]
    }

    /// Blocks or frees cell `(x, y)` (current coordinates, inside the grid);
    /// returns whether it changed.
    pub fn set_blocked(&mut self, x: i64, y: i64, blocked: bool) -> bool {
        let cell = &mut self.blocked[(y * self.width + x) as usize];
        let changed = *cell != blocked;
        *cell = blocked;
        changed
    }

    /// Rows of `.` (free) and `#` (blocked), for [`Grid::from_ascii`].
    #[must_use]
    pub fn picture(&self) -> String {
        let mut s = String::with_capacity(((self.width + 1) * self.height) as usize);
        for row in self.blocked.chunks(self.width as usize) {
            s.extend(row.iter().map(|&b| if b { '#' } else { '.' }));
            s.push('\n');
        }
        s
    }

    /// The grid.
    #[must_use]
    pub fn grid(&self) -> Grid {
        Grid::from_ascii(&self.picture()).expect("a grid case is at least 1 x 1")
    }

    /// A point drawn for the generated grid, on the grid as it is now.
    #[must_use]
    pub fn place(&self, p: DVec2) -> DVec2 {
        DVec2::new(p.x - self.origin.0 as f64, p.y - self.origin.1 as f64)
    }

    /// A query drawn for the generated grid, on the grid as it is now.
    #[must_use]
    pub fn place_query(&self, q: Query) -> Query {
        Query {
            start: self.place(q.start),
            goal: self.place(q.goal),
        }
    }

    /// A cell of the generated grid, in the grid as it is now (`None` if it
    /// was cropped off).
    #[must_use]
    pub fn cell(&self, (x, y): (i64, i64)) -> Option<UVec2> {
        let (x, y) = (x - self.origin.0, y - self.origin.1);
        ((0..self.width).contains(&x) && (0..self.height).contains(&y))
            .then(|| UVec2::new(x as u32, y as u32))
    }

    /// Cuts `n` columns or rows off one side: 0 right, 1 bottom, 2 left,
    /// 3 top.
    fn crop(&mut self, side: u8, n: i64) {
        let (x0, y0, x1, y1) = match side {
            0 => (0, 0, self.width - n, self.height),
            1 => (0, 0, self.width, self.height - n),
            2 => (n, 0, self.width, self.height),
            _ => (0, n, self.width, self.height),
        };
        let mut blocked = Vec::with_capacity(((x1 - x0) * (y1 - y0)) as usize);
        for y in y0..y1 {
            for x in x0..x1 {
                blocked.push(self.is_blocked(x, y));
            }
        }
        self.blocked = blocked;
        self.origin = (self.origin.0 + x0, self.origin.1 + y0);
        self.width = x1 - x0;
        self.height = y1 - y0;
    }

    /// The blocked cells, current coordinates.
    fn blocked_cells(&self) -> Vec<(i64, i64)> {
        (0..self.height)
            .flat_map(|y| (0..self.width).map(move |x| (x, y)))
            .filter(|&(x, y)| self.is_blocked(x, y))
            .collect()
    }
}

impl fmt::Debug for GridCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "GridCase {{ {:?} grid, seed {:#x}, generated {} x {}, now {} x {} from ({}, {}) (Grid::from_ascii):",
            self.family,
            self.seed,
            self.generated.0,
            self.generated.1,
            self.width,
            self.height,
            self.origin.0,
            self.origin.1
        )?;
        for row in self.picture().lines() {
            writeln!(f, "    {row}")?;
        }
        write!(f, "}}")
    }
}

/// Grids of every family, each side in `sides`.
#[must_use]
pub fn grids(sides: std::ops::RangeInclusive<i64>) -> Grids {
    Grids { sides }
}

/// See [`grids`].
#[derive(Clone, Debug)]
pub struct Grids {
    sides: std::ops::RangeInclusive<i64>,
}

/// Family, width, height and seed of a generated grid.
type Params = (Family, i64, i64, u64);

impl Strategy for Grids {
    type Tree = GridTree;
    type Value = GridCase;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let params = (
            select(&Family::ALL[..]),
            self.sides.clone(),
            self.sides.clone(),
            any::<u64>().no_shrink(),
        )
            .boxed()
            .new_tree(runner)?;
        let (family, w, h, seed) = params.current();
        Ok(GridTree {
            params,
            current: GridCase::generate(family, w, h, seed),
            stage: Stage::Params,
            undo: None,
            changed: false,
        })
    }
}

/// Where the shrinking of a [`GridTree`] stands.
#[derive(Clone, Debug)]
enum Stage {
    /// Shrinking family and size.
    Params,
    /// Cropping `chunk` columns or rows at a time off `side` (0 right,
    /// 1 bottom, 2 left, 3 top; 0: not started on this side).
    Crop { side: u8, chunk: i64 },
    /// Freeing `targets[pos..pos + chunk]`.
    Free {
        targets: Vec<(i64, i64)>,
        pos: usize,
        chunk: usize,
    },
    /// Nothing simpler to try.
    Done,
}

/// The value tree of [`grids`].
pub struct GridTree {
    params: Box<dyn ValueTree<Value = Params>>,
    current: GridCase,
    stage: Stage,
    /// The case before the last cell step, while the test has not failed
    /// with that step.
    undo: Option<GridCase>,
    /// Whether a cell step stuck since the cropping last started.
    changed: bool,
}

impl GridTree {
    fn regenerate(&mut self) {
        let (family, w, h, seed) = self.params.current();
        self.current = GridCase::generate(family, w, h, seed);
    }
}

impl ValueTree for GridTree {
    type Value = GridCase;

    fn current(&self) -> GridCase {
        self.current.clone()
    }

    fn simplify(&mut self) -> bool {
        if matches!(self.stage, Stage::Params) {
            if self.params.simplify() {
                self.regenerate();
                return true;
            }
            self.stage = Stage::Crop { side: 0, chunk: 0 };
        }
        // The test failed with the last cell step: keep it, go on from there.
        if self.undo.take().is_some() {
            self.changed = true;
            if let Stage::Free { pos, chunk, .. } = &mut self.stage {
                *pos += *chunk;
            }
        }
        loop {
            match &mut self.stage {
                Stage::Params => unreachable!("left above"),
                Stage::Crop { side, chunk } => {
                    if *side == 4 {
                        let targets = self.current.blocked_cells();
                        let chunk = (targets.len() / 2).max(1);
                        self.stage = Stage::Free {
                            targets,
                            pos: 0,
                            chunk,
                        };
                        continue;
                    }
                    let across = if *side % 2 == 0 {
                        self.current.width
                    } else {
                        self.current.height
                    };
                    if *chunk == 0 {
                        *chunk = (across / 2).max(1);
                    }
                    let n = (*chunk).min(across - 1);
                    if n == 0 {
                        *side += 1;
                        *chunk = 0;
                        continue;
                    }
                    let side = *side;
                    self.undo = Some(self.current.clone());
                    self.current.crop(side, n);
                    return true;
                }
                Stage::Free {
                    targets,
                    pos,
                    chunk,
                } => {
                    if *pos >= targets.len() {
                        if std::mem::take(&mut self.changed) {
                            self.stage = Stage::Crop { side: 0, chunk: 0 };
                            continue;
                        }
                        self.stage = Stage::Done;
                        return false;
                    }
                    let end = (*pos + *chunk).min(targets.len());
                    let cells = targets[*pos..end].to_vec();
                    self.undo = Some(self.current.clone());
                    for (x, y) in cells {
                        self.current.set_blocked(x, y, false);
                    }
                    return true;
                }
                Stage::Done => {
                    // Asked again (the values around the grid changed):
                    // one more pass.
                    self.stage = Stage::Crop { side: 0, chunk: 0 };
                }
            }
        }
    }

    fn complicate(&mut self) -> bool {
        if matches!(self.stage, Stage::Params) {
            if self.params.complicate() {
                self.regenerate();
                return true;
            }
            return false;
        }
        let Some(before) = self.undo.take() else {
            return false;
        };
        self.current = before;
        // The test passed without the step: try a smaller one, or move on.
        match &mut self.stage {
            Stage::Crop { side, chunk } => {
                if *chunk > 1 {
                    *chunk /= 2;
                } else {
                    *side += 1;
                    *chunk = 0;
                }
            }
            Stage::Free { pos, chunk, .. } => {
                if *chunk > 1 {
                    *chunk /= 2;
                } else {
                    *pos += 1;
                }
            }
            Stage::Params | Stage::Done => {}
        }
        true
    }
}

// ----- values drawn for a grid -----------------------------------------------

/// A grid and values drawn for it (by `then`, from the grid as generated).
/// Shrinks the values first, then the grid, then each in turn again; the
/// values are never drawn again.
pub fn on_grid<G, S, F>(grid: G, then: F) -> OnGrid<G, F>
where
    G: Strategy,
    S: Strategy,
    F: Fn(&G::Value) -> S,
{
    OnGrid { grid, then }
}

/// See [`on_grid`].
pub struct OnGrid<G, F> {
    grid: G,
    then: F,
}

impl<G: fmt::Debug, F> fmt::Debug for OnGrid<G, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnGrid")
            .field("grid", &self.grid)
            .finish_non_exhaustive()
    }
}

impl<G, S, F> Strategy for OnGrid<G, F>
where
    G: Strategy,
    S: Strategy,
    F: Fn(&G::Value) -> S,
{
    type Tree = OnGridTree<G::Tree, S::Tree>;
    type Value = (G::Value, S::Value);

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let grid = self.grid.new_tree(runner)?;
        let values = (self.then)(&grid.current()).new_tree(runner)?;
        Ok(OnGridTree {
            grid,
            values,
            turn: Part::Values,
            turns: 0,
            kept: false,
            last: None,
            undone: false,
        })
    }
}

/// The two parts of an [`OnGridTree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Grid,
    Values,
}

/// The value tree of [`on_grid`]. The values and the grid take turns:
/// each shrinks until it can no more, then the other, for as long as a
/// turn changes something (a smaller grid may let more values go, and the
/// other way round).
pub struct OnGridTree<G, S> {
    grid: G,
    values: S,
    /// Whose turn it is.
    turn: Part,
    /// Turns finished.
    turns: u32,
    /// Whether a step of this turn stuck (the test failed with it).
    kept: bool,
    /// The part that took the last step, until it is undone for good.
    last: Option<Part>,
    /// Whether the last step was (partly) undone.
    undone: bool,
}

impl<G: ValueTree, S: ValueTree> ValueTree for OnGridTree<G, S> {
    type Value = (G::Value, S::Value);

    fn current(&self) -> Self::Value {
        (self.grid.current(), self.values.current())
    }

    fn simplify(&mut self) -> bool {
        // Called after a failure: the last step, if it was not undone, stuck.
        if self.last.take().is_some() && !self.undone {
            self.kept = true;
        }
        self.undone = false;
        loop {
            let simpler = match self.turn {
                Part::Values => self.values.simplify(),
                Part::Grid => self.grid.simplify(),
            };
            if simpler {
                self.last = Some(self.turn);
                return true;
            }
            // A turn that changed nothing leaves the other part where its
            // own last turn left it: nothing more to try.
            if !std::mem::take(&mut self.kept) && self.turns > 0 {
                return false;
            }
            self.turns += 1;
            self.turn = match self.turn {
                Part::Values => Part::Grid,
                Part::Grid => Part::Values,
            };
        }
    }

    fn complicate(&mut self) -> bool {
        let changed = match self.last {
            Some(Part::Values) => self.values.complicate(),
            Some(Part::Grid) => self.grid.complicate(),
            None => false,
        };
        if changed {
            self.undone = true;
        } else {
            self.last = None;
        }
        changed
    }
}

/// `count` values of `element`; shrinks by dropping values (down to one),
/// then by shrinking each.
pub fn several<S: Strategy>(element: S, count: usize) -> Several<S> {
    Several { element, count }
}

/// See [`several`].
#[derive(Clone, Debug)]
pub struct Several<S> {
    element: S,
    count: usize,
}

impl<S: Strategy> Strategy for Several<S> {
    type Tree = SeveralTree<S::Tree>;
    type Value = Vec<S::Value>;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let elements = (0..self.count)
            .map(|_| self.element.new_tree(runner))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SeveralTree {
            kept: vec![true; elements.len()],
            elements,
            next: Step::Drop(0),
            last: None,
        })
    }
}

/// A shrinking step of a [`SeveralTree`].
#[derive(Clone, Copy, Debug)]
enum Step {
    Drop(usize),
    Shrink(usize),
}

/// The value tree of [`several`].
pub struct SeveralTree<T> {
    elements: Vec<T>,
    kept: Vec<bool>,
    next: Step,
    last: Option<Step>,
}

impl<T: ValueTree> ValueTree for SeveralTree<T> {
    type Value = Vec<T::Value>;

    fn current(&self) -> Self::Value {
        self.elements
            .iter()
            .zip(&self.kept)
            .filter(|(_, kept)| **kept)
            .map(|(e, _)| e.current())
            .collect()
    }

    fn simplify(&mut self) -> bool {
        loop {
            match self.next {
                Step::Drop(i) => {
                    if i >= self.elements.len() || self.kept.iter().filter(|k| **k).count() <= 1 {
                        self.next = Step::Shrink(0);
                    } else {
                        self.next = Step::Drop(i + 1);
                        if self.kept[i] {
                            self.kept[i] = false;
                            self.last = Some(Step::Drop(i));
                            return true;
                        }
                    }
                }
                Step::Shrink(i) => {
                    if i >= self.elements.len() {
                        // Start over if asked again (what is around the
                        // values may have shrunk meanwhile).
                        self.next = Step::Drop(0);
                        self.last = None;
                        return false;
                    }
                    if self.kept[i] && self.elements[i].simplify() {
                        self.last = Some(Step::Shrink(i));
                        return true;
                    }
                    self.next = Step::Shrink(i + 1);
                }
            }
        }
    }

    fn complicate(&mut self) -> bool {
        match self.last {
            None => false,
            Some(Step::Drop(i)) => {
                self.kept[i] = true;
                self.last = None;
                true
            }
            Some(Step::Shrink(i)) => {
                if self.elements[i].complicate() {
                    true
                } else {
                    self.last = None;
                    false
                }
            }
        }
    }
}

// ----- points and queries ----------------------------------------------------

/// Kinds of query points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    /// An integer point of `[0, w] x [0, h]`.
    Vertex,
    /// The centre of a cell.
    Centre,
    /// A multiple of 1/2 in `[0, w] x [0, h]`: vertices, centres, edge
    /// midpoints.
    Half,
    /// A multiple of 2^-20, half of the time with one coordinate rounded to
    /// a grid line.
    Float,
    /// Outside the grid, up to two cells out.
    Outside,
    /// A double corner (two free cells touching diagonally, two blocked).
    DoubleCorner,
    /// Strictly inside a blocked cell.
    InObstacle,
}

/// How to draw query points: kinds with weights, and how often (percent)
/// a point of the first five kinds is drawn among the traversable ones
/// (an `Outside` point then becomes a `Half` one), so that most queries
/// are not degenerate.
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    /// Kinds and their weights.
    pub spots: &'static [(u32, Spot)],
    /// Percent of traversable points.
    pub prefer_free: u32,
}

impl Mix {
    /// Every kind (the weights of `QueryMix::ANY`, plus double corners and
    /// points inside obstacles).
    pub const ANY: Mix = Mix {
        spots: &[
            (20, Spot::Vertex),
            (10, Spot::Centre),
            (10, Spot::Half),
            (20, Spot::Float),
            (10, Spot::Outside),
            (4, Spot::DoubleCorner),
            (3, Spot::InObstacle),
        ],
        prefer_free: 80,
    };
    /// Vertices only, double corners among them.
    pub const VERTICES: Mix = Mix {
        spots: &[(20, Spot::Vertex), (2, Spot::DoubleCorner)],
        prefer_free: 90,
    };
}

/// The points of a grid that a draw may pick from.
struct Candidates {
    w: i64,
    h: i64,
    free_cells: Vec<(i64, i64)>,
    blocked_cells: Vec<(i64, i64)>,
    /// Traversable multiples of 1/2, doubled.
    free_halves: Vec<(i64, i64)>,
    free_vertices: Vec<(i64, i64)>,
    double_corners: Vec<(i64, i64)>,
}

impl Candidates {
    fn of(case: &GridCase) -> Self {
        let r = Reference::new(&case.grid());
        let (w, h) = (case.width, case.height);
        let mut c = Candidates {
            w,
            h,
            free_cells: Vec::new(),
            blocked_cells: Vec::new(),
            free_halves: Vec::new(),
            free_vertices: Vec::new(),
            double_corners: Vec::new(),
        };
        for y in 0..h {
            for x in 0..w {
                if r.free(x, y) {
                    c.free_cells.push((x, y));
                } else {
                    c.blocked_cells.push((x, y));
                }
            }
        }
        for y2 in 0..=2 * h {
            for x2 in 0..=2 * w {
                if r.traversable(DVec2::new(x2 as f64 / 2.0, y2 as f64 / 2.0)) {
                    c.free_halves.push((x2, y2));
                    if x2 % 2 == 0 && y2 % 2 == 0 {
                        c.free_vertices.push((x2 / 2, y2 / 2));
                        if r.is_double_corner(x2 / 2, y2 / 2) {
                            c.double_corners.push((x2 / 2, y2 / 2));
                        }
                    }
                }
            }
        }
        c
    }
}

const FRACTION: i64 = 1 << 20;

fn at(x: i64, y: i64, scale: f64) -> DVec2 {
    DVec2::new(x as f64 / scale, y as f64 / scale)
}

/// Rounds one coordinate (`round` 0: x, 1: y) to the nearest grid line.
fn round_one(mut p: DVec2, round: u8) -> DVec2 {
    match round {
        0 => p.x = p.x.round(),
        1 => p.y = p.y.round(),
        _ => {}
    }
    p
}

fn vertex(w: i64, h: i64) -> BoxedStrategy<DVec2> {
    (0..=w, 0..=h).prop_map(|(x, y)| at(x, y, 1.0)).boxed()
}

fn centre(w: i64, h: i64) -> BoxedStrategy<DVec2> {
    (0..w, 0..h)
        .prop_map(|(x, y)| at(2 * x + 1, 2 * y + 1, 2.0))
        .boxed()
}

fn half(w: i64, h: i64) -> BoxedStrategy<DVec2> {
    (0..=2 * w, 0..=2 * h)
        .prop_map(|(x, y)| at(x, y, 2.0))
        .boxed()
}

fn float(w: i64, h: i64) -> BoxedStrategy<DVec2> {
    (0..=w * FRACTION, 0..=h * FRACTION, 0..4u8)
        .prop_map(|(x, y, round)| round_one(at(x, y, FRACTION as f64), round))
        .boxed()
}

fn outside(w: i64, h: i64) -> BoxedStrategy<DVec2> {
    (-4..=2 * w + 4, -4..=2 * h + 4, 0..4u8)
        .prop_map(move |(x, y, side)| {
            let mut p = at(x, y, 2.0);
            if (0.0..=w as f64).contains(&p.x) && (0.0..=h as f64).contains(&p.y) {
                match side {
                    0 => p.x = -0.5,
                    1 => p.x = w as f64 + 1.5,
                    2 => p.y = -1.0,
                    _ => p.y = h as f64 + 0.5,
                }
            }
            p
        })
        .boxed()
}

/// One of `points`, scaled down by `scale`.
fn among(points: &[(i64, i64)], scale: f64) -> BoxedStrategy<DVec2> {
    select(points.to_vec())
        .prop_map(move |(x, y)| at(x, y, scale))
        .boxed()
}

/// A traversable point of kind `spot` (`None` for the kinds that have no
/// such variant, or when the grid has no free cell).
fn free_spot(c: &Candidates, spot: Spot) -> Option<BoxedStrategy<DVec2>> {
    if c.free_cells.is_empty() {
        return None;
    }
    Some(match spot {
        Spot::Vertex => among(&c.free_vertices, 1.0),
        Spot::Centre => select(c.free_cells.clone())
            .prop_map(|(x, y)| at(2 * x + 1, 2 * y + 1, 2.0))
            .boxed(),
        Spot::Half | Spot::Outside => among(&c.free_halves, 2.0),
        Spot::Float => (
            select(c.free_cells.clone()),
            0..=FRACTION,
            0..=FRACTION,
            0..4u8,
        )
            .prop_map(|((x, y), fx, fy, round)| {
                round_one(
                    at(x * FRACTION + fx, y * FRACTION + fy, FRACTION as f64),
                    round,
                )
            })
            .boxed(),
        Spot::DoubleCorner | Spot::InObstacle => return None,
    })
}

/// Any point of kind `spot`.
fn any_spot(c: &Candidates, spot: Spot) -> BoxedStrategy<DVec2> {
    let (w, h) = (c.w, c.h);
    match spot {
        Spot::Vertex => vertex(w, h),
        Spot::Centre => centre(w, h),
        Spot::Half => half(w, h),
        Spot::Float => float(w, h),
        Spot::DoubleCorner if !c.double_corners.is_empty() => among(&c.double_corners, 1.0),
        Spot::DoubleCorner => free_spot(c, Spot::Vertex).unwrap_or_else(|| vertex(w, h)),
        Spot::InObstacle if !c.blocked_cells.is_empty() => {
            (select(c.blocked_cells.clone()), 1..FRACTION, 1..FRACTION)
                .prop_map(|((x, y), fx, fy)| {
                    at(x * FRACTION + fx, y * FRACTION + fy, FRACTION as f64)
                })
                .boxed()
        }
        Spot::Outside | Spot::InObstacle => outside(w, h),
    }
}

/// Query points for the grid of `case` (as generated), drawn from `mix`.
pub fn points(case: &GridCase, mix: Mix) -> BoxedStrategy<DVec2> {
    let c = Candidates::of(case);
    let mut options: Vec<(u32, BoxedStrategy<DVec2>)> = Vec::new();
    for &(weight, spot) in mix.spots {
        match free_spot(&c, spot) {
            Some(free) if !matches!(spot, Spot::DoubleCorner | Spot::InObstacle) => {
                options.push((weight * mix.prefer_free, free));
                options.push((weight * (100 - mix.prefer_free), any_spot(&c, spot)));
            }
            _ => options.push((weight * 100, any_spot(&c, spot))),
        }
    }
    Union::new_weighted(options).boxed()
}

/// Queries for the grid of `case` (as generated): start and goal from
/// `mix`, 3 % of them the same point, and zero coordinates written `-0.0`
/// 30 % of the time.
pub fn queries(case: &GridCase, mix: Mix) -> BoxedStrategy<Query> {
    let p = points(case, mix);
    let flip = || proptest::bool::weighted(0.3);
    (
        p.clone(),
        p,
        proptest::bool::weighted(0.03),
        (flip(), flip(), flip(), flip()),
    )
        .prop_map(|(start, goal, same, (sx, sy, gx, gy))| {
            let signed = |c: f64, flip: bool| if c == 0.0 && flip { -0.0 } else { c };
            let goal = if same { start } else { goal };
            Query {
                start: DVec2::new(signed(start.x, sx), signed(start.y, sy)),
                goal: DVec2::new(signed(goal.x, gx), signed(goal.y, gy)),
            }
        })
        .boxed()
}

// ----- cells and edits -------------------------------------------------------

/// Cells of the grid of `case` (as generated): a free one 80 % of the time.
pub fn cells(case: &GridCase) -> BoxedStrategy<(i64, i64)> {
    let any = (0..case.width, 0..case.height).boxed();
    let free: Vec<(i64, i64)> = (0..case.height)
        .flat_map(|y| (0..case.width).map(move |x| (x, y)))
        .filter(|&(x, y)| !case.is_blocked(x, y))
        .collect();
    if free.is_empty() {
        return any;
    }
    Union::new_weighted(vec![(8, select(free).boxed()), (2, any)]).boxed()
}

/// An edit of a grid, in the coordinates of the grid as generated.
#[derive(Clone, Debug)]
pub enum Edit {
    /// `Grid::set_free` on one cell.
    Cell {
        /// The cell.
        cell: (i64, i64),
        /// Free or blocked.
        free: bool,
    },
    /// `Grid::set_rect_free` on `size` cells from `min`, cut at the border.
    Rect {
        /// The top-left cell.
        min: (i64, i64),
        /// Width and height in cells.
        size: (i64, i64),
        /// Free or blocked.
        free: bool,
    },
    /// `Grid::edit` setting each cell in turn.
    Batch(Vec<((i64, i64), bool)>),
}

/// Edits of the grid of `case` (as generated): single cells, rectangles up
/// to `max_rect` cells a side, and batches of six cells.
pub fn edits(case: &GridCase, max_rect: i64) -> BoxedStrategy<Edit> {
    let cell = cells(case);
    prop_oneof![
        (cell.clone(), any::<bool>()).prop_map(|(cell, free)| Edit::Cell { cell, free }),
        (cell.clone(), 1..=max_rect, 1..=max_rect, any::<bool>()).prop_map(|(min, w, h, free)| {
            Edit::Rect {
                min,
                size: (w, h),
                free,
            }
        }),
        several((cell, any::<bool>()), 6).prop_map(Edit::Batch),
    ]
    .boxed()
}

impl GridCase {
    /// An edit drawn for the generated grid, on the grid as it is now: the
    /// cells cropped off are left out (`None` if that leaves nothing).
    #[must_use]
    pub fn place_edit(&self, edit: &Edit) -> Option<Edit> {
        let place = |c: (i64, i64)| self.cell(c).map(|c| (i64::from(c.x), i64::from(c.y)));
        match *edit {
            Edit::Cell { cell, free } => Some(Edit::Cell {
                cell: place(cell)?,
                free,
            }),
            Edit::Rect { min, size, free } => {
                let x0 = (min.0 - self.origin.0).max(0);
                let y0 = (min.1 - self.origin.1).max(0);
                let x1 = (min.0 + size.0 - self.origin.0).min(self.width);
                let y1 = (min.1 + size.1 - self.origin.1).min(self.height);
                (x0 < x1 && y0 < y1).then_some(Edit::Rect {
                    min: (x0, y0),
                    size: (x1 - x0, y1 - y0),
                    free,
                })
            }
            Edit::Batch(ref cells) => {
                let cells: Vec<_> = cells
                    .iter()
                    .filter_map(|&(cell, free)| Some((place(cell)?, free)))
                    .collect();
                (!cells.is_empty()).then_some(Edit::Batch(cells))
            }
        }
    }

    /// Applies `edit` (drawn for the generated grid) to `grid`, and to this
    /// case as a model of the grid's cells; the cells cropped off are left
    /// out. Returns the edit as applied, if anything was left of it.
    ///
    /// # Errors
    ///
    /// When the grid refuses the edit, or reports a change where the model
    /// saw none (or the other way round).
    pub fn apply(&mut self, edit: &Edit, grid: &mut Grid) -> Result<Option<Edit>, String> {
        let Some(placed) = self.place_edit(edit) else {
            return Ok(None);
        };
        let cell = |(x, y): (i64, i64)| UVec2::new(x as u32, y as u32);
        let failed = |e: GridError| format!("{placed:?}: {e}");
        let (got, model) = match placed {
            Edit::Cell { cell: c, free } => {
                let model = self.set_blocked(c.0, c.1, !free);
                (grid.set_free(cell(c), free).map_err(failed)?, model)
            }
            Edit::Rect { min, size, free } => {
                let mut model = false;
                for y in min.1..min.1 + size.1 {
                    for x in min.0..min.0 + size.0 {
                        model |= self.set_blocked(x, y, !free);
                    }
                }
                let rect = URect::from_corners(cell(min), cell((min.0 + size.0, min.1 + size.1)));
                (grid.set_rect_free(rect, free).map_err(failed)?, model)
            }
            Edit::Batch(ref cells) => {
                let mut model = false;
                for &(c, free) in cells {
                    model |= self.set_blocked(c.0, c.1, !free);
                }
                let got = grid
                    .edit(|e| {
                        let mut any = false;
                        for &(c, free) in cells {
                            any |= e.set_free(cell(c), free)?;
                        }
                        Ok(any)
                    })
                    .map_err(failed)?;
                (got, model)
            }
        };
        if got != model {
            return Err(format!(
                "{placed:?}: the grid reports changed = {got}, but the cells did{} change",
                if model { "" } else { " not" }
            ));
        }
        Ok(Some(placed))
    }
}
