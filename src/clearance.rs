//! Eroded grids: the cells an agent of a given radius may occupy.
//!
//! # Definition
//!
//! An agent is a disc of radius `r` (in cells) whose centre follows the path.
//! For `r > 0` a cell is free on the *eroded grid* of radius `r` iff every
//! point of it is at least `r` from every blocked cell and from the grid's
//! outside (which counts as blocked, as everywhere in the crate). The agent
//! plans on the eroded grid with the usual rules of `SPEC.md` (segments may
//! run along blocked cells but not through them, no squeezing between
//! diagonal blockers), so every point of its path lies in a free eroded cell
//! and is at least `r` from every obstacle.
//!
//! The distance between cell `(x, y)` and a blocked cell `(x + dx, y + dy)`
//! is that of two unit squares, `sqrt(g(dx)² + g(dy)²)` with
//! `g(d) = max(0, |d| - 1)`: cells that share an edge or a corner are at
//! distance 0. So any `r > 0` blocks every cell next to (or diagonally next to) an
//! obstacle, and a corridor needs at least 3 free cells of width to stay open
//! for any agent wider than a point. The erosion is conservative by less than
//! one cell: the disc could stand in places of a blocked eroded cell, never
//! the other way round.
//!
//! # Classes
//!
//! Squared distances between cells are integers, sums of two squares, so
//! "closer than `r`" only depends on the smallest sum of two squares `s` with
//! `s >= r²`: radii with the same `s` have the same eroded grid, exactly. A
//! [`Clearance`] is that class. Agents of radius 0.3 and 0.9 cells share one
//! grid (`s = 1`), as do 1.1 and 1.4 (`s = 2`). There are 7 classes up to a
//! radius of 3 cells, 19 up to 6, so a game with many sizes keeps few grids,
//! with no rounding of any radius.
//!
//! # How the grids are made and kept
//!
//! A cell is blocked on the eroded grid iff a blocked cell lies within a
//! fixed shape around it (the offsets closer than `r`). The shape is a union
//! of a few centred rectangles, and erosion by a rectangle is a run of word
//! wide `AND`s of shifted bit rows, first along rows, then across them, with
//! a doubling trick (`log` steps in the rectangle's width and height). All of
//! it is integer arithmetic on the grid's bit rows, exact.
//!
//! An edit of the base grid changes the eroded grid only within
//! [`Clearance::reach`] cells of the edited cells; [`ErodedGrid::update`]
//! recomputes those rows and columns only and applies the differences as
//! edits of the eroded [`Grid`] (which keeps its own regions, vertex table,
//! version and edit log up to date, as for any edit).
//!
//! ```
//! use bevy_anyangle::clearance::{Clearance, ErodedGrid};
//! use bevy_anyangle::prelude::*;
//!
//! let mut grid = Grid::from_ascii(
//!     ".......
//!      .......
//!      ...#...
//!      .......
//!      .......",
//! )
//! .unwrap();
//! let half_cell = Clearance::from_radius(0.5).unwrap();
//! let mut eroded = ErodedGrid::new(&grid, half_cell);
//! // The border and the 3 x 3 cells around the block are closer than 0.5.
//! assert!(eroded.grid().is_free(UVec2::new(1, 1)));
//! assert!(!eroded.grid().is_free(UVec2::new(2, 1)));
//! assert!(!eroded.grid().is_free(UVec2::new(0, 2)));
//!
//! grid.set_free(UVec2::new(3, 2), true).unwrap();
//! eroded.update(&grid, [URect::new(3, 2, 4, 3)]);
//! assert!(eroded.grid().is_free(UVec2::new(3, 2)));
//!
//! // A path for the agent: plan on the eroded grid.
//! let path = plan(
//!     eroded.grid(),
//!     DVec2::new(1.5, 1.5),
//!     DVec2::new(5.5, 3.5),
//!     &PlanOptions::default(),
//! )
//! .unwrap();
//! assert!(path.waypoints.iter().all(|p| p.x >= 1.0 && p.x <= 6.0));
//! ```

use std::sync::Arc;

use crate::endpoint::{Endpoint, nearest_valid_point, owned_point};
use crate::geom::{cell_distance, segment_distance};
use crate::grid::{Grid, GridEdit};
use crate::los::line_of_sight;
use bevy_math::{DVec2, URect};
use thiserror::Error;

/// The largest agent radius, in cells, that [`Clearance::from_radius`]
/// accepts.
pub const MAX_RADIUS: f64 = 256.0;

/// The clearance class of an agent's radius: agents of the same class plan
/// on the same eroded grid (see the [module docs](self)).
///
/// The default is [`Clearance::NONE`], a point agent planning on the grid
/// itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Clearance(u32);

/// Why a radius has no [`Clearance`].
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum ClearanceError {
    /// The radius is negative, infinite or not a number.
    #[error("agent radius {0} is not a finite number >= 0")]
    BadRadius(f64),
    /// The radius is above [`MAX_RADIUS`] cells.
    #[error("agent radius {0} cells is above the largest, {MAX_RADIUS}")]
    TooLarge(f64),
}

impl Clearance {
    /// No clearance: a point agent, which plans on the grid itself.
    pub const NONE: Clearance = Clearance(0);

    /// The class of radius `radius`, in cells: the smallest sum of two
    /// squares `s >= radius²`, computed exactly (no rounding of the radius).
    ///
    /// ```
    /// use bevy_anyangle::clearance::Clearance;
    ///
    /// let c = |r| Clearance::from_radius(r).unwrap();
    /// assert_eq!(c(0.0), Clearance::NONE);
    /// assert_eq!(c(0.3), c(1.0));
    /// assert_ne!(c(1.0), c(1.01));
    /// assert_eq!(c(1.5).squared(), 4);
    /// assert_eq!(c(2.2).squared(), 5);
    /// assert!(Clearance::from_radius(-1.0).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ClearanceError::BadRadius`] for a negative or non-finite radius,
    /// [`ClearanceError::TooLarge`] above [`MAX_RADIUS`].
    pub fn from_radius(radius: f64) -> Result<Self, ClearanceError> {
        if !radius.is_finite() || radius < 0.0 {
            return Err(ClearanceError::BadRadius(radius));
        }
        if radius > MAX_RADIUS {
            return Err(ClearanceError::TooLarge(radius));
        }
        let mut s = ceil_square(radius);
        while !is_sum_of_two_squares(s) {
            s += 1;
        }
        // At most MAX_RADIUS², itself a sum of two squares.
        Ok(Clearance(u32::try_from(s).unwrap_or(u32::MAX)))
    }

    /// The class's threshold `s`: a cell is blocked on the eroded grid iff a
    /// blocked cell lies at a squared distance below `s` from it.
    #[must_use]
    pub fn squared(self) -> u32 {
        self.0
    }

    /// The largest radius of the class, `sqrt(s)`, in cells: every point of a
    /// path on the eroded grid is at least this far from every obstacle.
    #[must_use]
    pub fn radius(self) -> f64 {
        f64::from(self.0).sqrt()
    }

    /// Whether this is [`Clearance::NONE`].
    #[must_use]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// How far, in cells, a blocked cell can block eroded cells: an edit of
    /// cell `c` changes eroded cells at most `reach` columns and rows from
    /// `c`. It is `ceil(sqrt(s))`.
    #[must_use]
    pub fn reach(self) -> u32 {
        ceil_sqrt(self.0)
    }

    /// The rectangles `(half width, half height)` whose union is the set of
    /// offsets closer than the radius (see the [module docs](self)), widest
    /// first.
    fn rectangles(self) -> Vec<(u32, u32)> {
        let s = self.0;
        let mut rects: Vec<(u32, u32)> = Vec::new();
        for dy in 0..=self.reach() {
            let g = dy.saturating_sub(1).pow(2);
            if s == 0 || g >= s {
                break;
            }
            let w = ceil_sqrt(s - g);
            match rects.last_mut() {
                Some(last) if last.0 == w => last.1 = dy,
                _ => rects.push((w, dy)),
            }
        }
        rects
    }
}

/// `ceil(r²)` exactly, for a finite `0 <= r <= MAX_RADIUS`.
fn ceil_square(r: f64) -> u64 {
    if r == 0.0 {
        return 0;
    }
    // r = m 2^e exactly.
    let bits = r.to_bits();
    let (exponent, fraction) = (((bits >> 52) & 0x7ff) as i64, bits & ((1 << 52) - 1));
    let (m, e) = if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, exponent - 1075)
    };
    let square = u128::from(m) * u128::from(m);
    let shift = -2 * e;
    if shift <= 0 {
        return u64::try_from(square << -shift).expect("r² <= MAX_RADIUS²");
    }
    if shift >= 128 {
        return 1;
    }
    let whole = square >> shift;
    let rest = square & ((1u128 << shift) - 1);
    u64::try_from(whole + u128::from(rest != 0)).expect("r² <= MAX_RADIUS²")
}

/// `ceil(sqrt(n))`.
fn ceil_sqrt(n: u32) -> u32 {
    let q = n.isqrt();
    if q * q == n { q } else { q + 1 }
}

/// Whether `n = a² + b²` for some integers `a`, `b`.
fn is_sum_of_two_squares(n: u64) -> bool {
    (0..=n.isqrt()).map(|a| a * a).any(|a2| {
        let b = (n - a2).isqrt();
        b * b == n - a2
    })
}

/// The eroded grid of `base` for `clearance` (a new grid of version 0; for
/// [`Clearance::NONE`], a copy of `base`'s cells).
///
/// To keep one up to date under edits of `base`, use [`ErodedGrid`].
#[must_use]
pub fn erode(base: &Grid, clearance: Clearance) -> Grid {
    let mut eroder = Eroder::new(clearance);
    let mut rows = crate::grid::BitPlane::new(base.height(), base.width());
    eroder.rows(base, 0, base.height());
    let stride = rows.stride();
    for y in 0..base.height() {
        let at = y as usize * stride;
        rows.line_mut(y)
            .copy_from_slice(&eroder.out[at..at + stride]);
    }
    Grid::from_rows(base.width(), base.height(), rows)
}

/// How far, in cells, [`start_point`] looks for a place where the agent fits.
pub const MAX_EXIT_DISTANCE: u32 = 64;

/// Where the path of an agent standing at `p` starts on `eroded`, the
/// eroded grid of `base` for `clearance`:
///
/// - `p` itself where it is a valid start on `eroded`, or where `p` is not
///   finite (the planner reports that);
/// - where it is not but `p` lies in free space on `base`: the nearest point
///   of `eroded` it can walk to in a straight line on `base` without coming
///   closer to a wall than it is at `p` or than the clearance's radius,
///   whichever is less (so an agent that fits where it stands keeps its
///   radius on the way, and one too close to a wall gets no closer), within
///   [`MAX_EXIT_DISTANCE`] cells;
/// - inside a blocked cell of `base` or off the grid: the nearest point
///   where it fits, as a point agent in a wall walks straight out;
/// - `None` if it stands in free space and no point where it fits is in
///   sight (a corridor narrower than the agent, closed at both ends for it).
///
/// An `eroded` grid without a free cell gives `Some(p)`: the planner reports
/// [`PlanError::NoFreeCell`](crate::search::PlanError::NoFreeCell).
#[must_use]
pub fn start_point(base: &Grid, eroded: &Grid, clearance: Clearance, p: DVec2) -> Option<DVec2> {
    if !p.is_finite() || Endpoint::resolve(eroded, p).is_some() || eroded.free_count() == 0 {
        return Some(p);
    }
    if !base.is_point_traversable(p) {
        return nearest_valid_point(eroded, p, None);
    }
    let (w, h) = (i64::from(eroded.width()), i64::from(eroded.height()));
    let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
    // The room the walk must keep.
    let keep = wall_distance(base, p, clearance.reach()).min(clearance.radius());
    let mut best: Option<(f64, DVec2)> = None;
    let consider = |x: i64, y: i64, best: &mut Option<(f64, DVec2)>| {
        if !eroded.is_free_xy(x, y) {
            return;
        }
        let clamped = p.clamp(
            DVec2::new(x as f64, y as f64),
            DVec2::new((x + 1) as f64, (y + 1) as f64),
        );
        let q = owned_point(eroded, [x, y], clamped);
        let d = q.distance(p);
        if best.is_none_or(|(bd, _)| d < bd)
            && line_of_sight(base, p, q)
            && keeps_distance(base, p, q, keep)
        {
            *best = Some((d, q));
        }
    };
    for k in 0..=i64::from(MAX_EXIT_DISTANCE) {
        // Cells of ring k are at least k - 1 away.
        if best.is_some_and(|(d, _)| (k - 1) as f64 >= d)
            || (cx - k < 0 && cy - k < 0 && cx + k >= w && cy + k >= h)
        {
            break;
        }
        if k == 0 {
            consider(cx, cy, &mut best);
            continue;
        }
        for x in cx - k..=cx + k {
            consider(x, cy - k, &mut best);
            consider(x, cy + k, &mut best);
        }
        for y in cy - k + 1..cy + k {
            consider(cx - k, y, &mut best);
            consider(cx + k, y, &mut best);
        }
    }
    best.map(|(_, q)| q)
}

/// The distance from point `p` to the nearest blocked cell of `grid` or its
/// outside, if below `within + 1` (else at least that).
pub(crate) fn wall_distance(grid: &Grid, p: DVec2, within: u32) -> f64 {
    let (w, h) = (f64::from(grid.width()), f64::from(grid.height()));
    let mut best = p.x.min(w - p.x).min(p.y).min(h - p.y);
    let r = i64::from(within) + 1;
    let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
    for y in cy - r..=cy + r {
        for x in cx - r..=cx + r {
            if grid.contains_xy(x, y) && !grid.is_free_xy(x, y) {
                best = best.min(cell_distance(p, x, y));
            }
        }
    }
    best
}

/// Whether every point of segment `a-b` (visible on `grid`) is at least
/// `keep` from every blocked cell of `grid` and from its outside (up to
/// rounding).
pub(crate) fn keeps_distance(grid: &Grid, a: DVec2, b: DVec2, keep: f64) -> bool {
    const SLACK: f64 = 1e-9;
    let (w, h) = (f64::from(grid.width()), f64::from(grid.height()));
    // The distance to the outside is smallest at an end.
    if [a, b]
        .iter()
        .any(|p| p.x.min(w - p.x).min(p.y).min(h - p.y) < keep - SLACK)
    {
        return false;
    }
    let margin = keep.ceil() + 1.0;
    let to_segment = |c: DVec2| segment_distance(c, a, b);
    // Column by column, the cells within `margin` of the segment's part
    // over that column.
    let (left, right) = if a.x <= b.x { (a, b) } else { (b, a) };
    let y_at = |x: f64| {
        let x = x.clamp(left.x, right.x);
        if right.x == left.x {
            (left.y.min(right.y), left.y.max(right.y))
        } else {
            let y = left.y + (right.y - left.y) * (x - left.x) / (right.x - left.x);
            (y, y)
        }
    };
    let (x0, x1) = (
        (left.x - margin).floor() as i64,
        (right.x + margin).floor() as i64,
    );
    for x in x0..=x1 {
        let (ya, yb) = (y_at(x as f64 - margin), y_at((x + 1) as f64 + margin));
        let (y0, y1) = (
            (ya.0.min(yb.0) - margin).floor() as i64,
            (ya.1.max(yb.1) + margin).floor() as i64,
        );
        for y in y0..=y1 {
            if !grid.contains_xy(x, y) || grid.is_free_xy(x, y) {
                continue;
            }
            // The segment does not cross the square's interior (it is
            // visible), so their distance is reached at a corner of one.
            let corners = [(0, 0), (1, 0), (0, 1), (1, 1)]
                .map(|(i, j)| to_segment(DVec2::new((x + i) as f64, (y + j) as f64)));
            let d = corners
                .into_iter()
                .fold(cell_distance(a, x, y).min(cell_distance(b, x, y)), f64::min);
            if d < keep - SLACK {
                return false;
            }
        }
    }
    true
}

/// Computes eroded bit rows, reusing its buffers.
#[derive(Clone, Debug)]
struct Eroder {
    rects: Vec<(u32, u32)>,
    /// Eroded rows `y0..y1` of the last [`Eroder::rows`], `stride` words
    /// each, laid out as the grid's rows (bit `x + 1` is cell `x`).
    out: Vec<u64>,
    scratch: Vec<u64>,
}

impl Eroder {
    fn new(clearance: Clearance) -> Self {
        Eroder {
            rects: clearance.rectangles(),
            out: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Fills `out` with eroded rows `y0..y1` of `base`.
    fn rows(&mut self, base: &Grid, y0: u32, y1: u32) {
        let stride = base.rows().stride();
        let n = (y1 - y0) as usize;
        self.out.clear();
        self.out.reserve(n * stride);
        for y in y0..y1 {
            self.out.extend_from_slice(base.row_words(i64::from(y)));
        }
        let height = i64::from(base.height());
        for &(w, h) in &self.rects {
            // Rows y0 - h .. y1 + h, eroded along the row by 2w + 1 cells,
            // then across rows by 2h + 1.
            let m = n + 2 * h as usize;
            self.scratch.clear();
            self.scratch.resize(m * stride, 0);
            for (j, line) in self.scratch.chunks_exact_mut(stride).enumerate() {
                let r = i64::from(y0) - i64::from(h) + j as i64;
                if (0..height).contains(&r) {
                    line.copy_from_slice(base.row_words(r));
                    erode_line(line, w as usize);
                }
            }
            erode_across(&mut self.scratch, stride, 2 * h as usize + 1);
            for (out, eroded) in self.out.iter_mut().zip(&self.scratch) {
                *out &= eroded;
            }
        }
    }
}

/// Bit `b` of `line` becomes the `AND` of bits `b - w ..= b + w` (bits
/// outside the line read as 0).
fn erode_line(line: &mut [u64], w: usize) {
    let window = 2 * w + 1;
    let mut len = 1;
    while 2 * len <= window {
        and_shifted_down(line, len);
        len *= 2;
    }
    if len < window {
        and_shifted_down(line, window - len);
    }
    // Bit b now covers bits b ..= b + 2w; centre the window.
    shift_up(line, w);
}

/// `line &= line >> k` as one long integer: bit `b` becomes bit `b` `AND`
/// bit `b + k`.
fn and_shifted_down(line: &mut [u64], k: usize) {
    let (q, r) = (k / 64, k % 64);
    let n = line.len();
    for i in 0..n {
        let word = |j: usize| if j < n { line[j] } else { 0 };
        let shifted = if r == 0 {
            word(i + q)
        } else {
            word(i + q) >> r | word(i + q + 1) << (64 - r)
        };
        line[i] &= shifted;
    }
}

/// `line <<= k` as one long integer: bit `b` becomes bit `b - k`.
fn shift_up(line: &mut [u64], k: usize) {
    let (q, r) = (k / 64, k % 64);
    for i in (0..line.len()).rev() {
        let word = |j: Option<usize>| j.map_or(0, |j| line[j]);
        let lo = word(i.checked_sub(q));
        line[i] = if r == 0 {
            lo
        } else {
            lo << r | word(i.checked_sub(q + 1)) >> (64 - r)
        };
    }
}

/// Row `j` of `rows` (`stride` words each) becomes the `AND` of rows
/// `j .. j + window` (rows past the end read as 0).
fn erode_across(rows: &mut [u64], stride: usize, window: usize) {
    let n = rows.len();
    let mut and_down = |k: usize| {
        let offset = k * stride;
        for i in 0..n {
            rows[i] &= if i + offset < n { rows[i + offset] } else { 0 };
        }
    };
    let mut len = 1;
    while 2 * len <= window {
        and_down(len);
        len *= 2;
    }
    if len < window {
        and_down(window - len);
    }
}

/// An eroded grid kept up to date with the grid it is eroded from.
///
/// See the [module docs](self) for an example.
#[derive(Clone, Debug)]
pub struct ErodedGrid {
    clearance: Clearance,
    grid: Arc<Grid>,
    base_version: u64,
    eroder: Eroder,
    /// Reused by [`ErodedGrid::update`]: runs of cells to change.
    runs: Vec<(URect, bool)>,
}

impl ErodedGrid {
    /// The eroded grid of `base` for `clearance`.
    #[must_use]
    pub fn new(base: &Grid, clearance: Clearance) -> Self {
        ErodedGrid {
            clearance,
            grid: Arc::new(erode(base, clearance)),
            base_version: base.version(),
            eroder: Eroder::new(clearance),
            runs: Vec::new(),
        }
    }

    /// The clearance it is eroded for.
    #[must_use]
    pub fn clearance(&self) -> Clearance {
        self.clearance
    }

    /// The eroded grid. Its version counts its own edits, not the base's.
    #[must_use]
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// A cheap immutable snapshot of the eroded grid, for background work:
    /// later updates copy what they change (see [`crate::grid`]).
    #[must_use]
    pub fn snapshot(&self) -> Arc<Grid> {
        Arc::clone(&self.grid)
    }

    /// The grid behind [`ErodedGrid::snapshot`].
    #[cfg(feature = "plugin")]
    pub(crate) fn snapshot_ref(&self) -> &Arc<Grid> {
        &self.grid
    }

    /// The eroded grid itself, for the plugin to move its logged edits out.
    #[cfg(feature = "plugin")]
    pub(crate) fn grid_mut(&mut self) -> &mut Arc<Grid> {
        &mut self.grid
    }

    /// The version of the base grid it was last brought up to date with.
    #[must_use]
    pub fn base_version(&self) -> u64 {
        self.base_version
    }

    /// Brings it up to date after `base` changed only within the rectangles
    /// `changed` (half-open, in cells); rectangles may overlap or extend past
    /// the grid. Cost: the rectangles grown by [`Clearance::reach`] on every
    /// side. A `base` of another size is eroded anew.
    ///
    /// Returns whether an eroded cell changed.
    pub fn update(&mut self, base: &Grid, changed: impl IntoIterator<Item = URect>) -> bool {
        self.base_version = base.version();
        if base.size() != self.grid.size() {
            self.grid = Arc::new(erode(base, self.clearance));
            return true;
        }
        let reach = self.clearance.reach();
        let (width, height) = (base.width(), base.height());
        let stride = base.rows().stride();
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        for rect in changed {
            let y0 = rect.min.y.min(height).saturating_sub(reach);
            let y1 = rect.max.y.saturating_add(reach).min(height);
            let x0 = rect.min.x.min(width).saturating_sub(reach);
            let x1 = rect.max.x.saturating_add(reach).min(width);
            if y0 >= y1 || x0 >= x1 {
                continue;
            }
            self.eroder.rows(base, y0, y1);
            for y in y0..y1 {
                let at = (y - y0) as usize * stride;
                let new = &self.eroder.out[at..at + stride];
                changed_runs(self.grid.row_words(i64::from(y)), new, y, x0..x1, &mut runs);
            }
        }
        let any = !runs.is_empty();
        if any {
            // Only now, so that an update that changes nothing copies
            // nothing a snapshot shares.
            let applied = Arc::make_mut(&mut self.grid).edit(|editor| {
                for &(rect, free) in &runs {
                    editor.set_rect_free(rect, free)?;
                }
                Ok(())
            });
            debug_assert!(applied.is_ok(), "runs lie in the grid");
        }
        self.runs = runs;
        any
    }

    /// Brings it up to date with `base` from `base`'s edit log: only around
    /// the edits since [`ErodedGrid::base_version`] when the log holds each
    /// of them, else by eroding `base` anew. Returns whether an eroded cell
    /// changed (or it was eroded anew).
    pub fn sync(&mut self, base: &Grid) -> bool {
        if base.version() == self.base_version && base.size() == self.grid.size() {
            return false;
        }
        let since = self.base_version;
        let logged: Vec<&GridEdit> = base.edits_since(since).collect();
        let complete = base.version() > since
            && logged.len() as u64 == base.version() - since
            && logged
                .iter()
                .enumerate()
                .all(|(i, e)| e.version == since + 1 + i as u64);
        if complete {
            let rects: Vec<URect> = logged.iter().map(|e| e.rect).collect();
            self.update(base, rects)
        } else {
            self.grid = Arc::new(erode(base, self.clearance));
            self.base_version = base.version();
            true
        }
    }
}

/// Appends to `runs` the runs of cells `xs` of row `y` whose bit differs
/// between `old` and `new` (row words, bit `x + 1` is cell `x`), each with
/// its new value.
fn changed_runs(
    old: &[u64],
    new: &[u64],
    y: u32,
    xs: std::ops::Range<u32>,
    runs: &mut Vec<(URect, bool)>,
) {
    let bit = |words: &[u64], x: u32| words[(x as usize + 1) / 64] >> ((x as usize + 1) % 64) & 1;
    let mut run: Option<(u32, u32, bool)> = None;
    for x in xs {
        let b = bit(new, x);
        if b == bit(old, x) {
            continue;
        }
        match &mut run {
            Some((_, end, free)) if *end == x && *free == (b == 1) => *end = x + 1,
            _ => {
                if let Some((start, end, free)) = run.replace((x, x + 1, b == 1)) {
                    runs.push((URect::new(start, y, end, y + 1), free));
                }
            }
        }
    }
    if let Some((start, end, free)) = run {
        runs.push((URect::new(start, y, end, y + 1), free));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use bevy_math::UVec2;

    /// The definition, cell by cell: free iff free and no blocked cell or
    /// outside cell lies at squared gap below `s`.
    fn brute(base: &Grid, c: Clearance) -> Vec<bool> {
        let s = i64::from(c.squared());
        let r = i64::from(c.reach()) + 1;
        let g = |d: i64| (d.abs() - 1).max(0).pow(2);
        let mut out = Vec::new();
        for y in 0..i64::from(base.height()) {
            for x in 0..i64::from(base.width()) {
                let blocked = !base.is_free_xy(x, y)
                    || (-r..=r).any(|dy| {
                        (-r..=r).any(|dx| g(dx) + g(dy) < s && !base.is_free_xy(x + dx, y + dy))
                    });
                out.push(!blocked);
            }
        }
        out
    }

    fn cells(grid: &Grid) -> Vec<bool> {
        (0..i64::from(grid.height()))
            .flat_map(|y| (0..i64::from(grid.width())).map(move |x| (x, y)))
            .map(|(x, y)| grid.is_free_xy(x, y))
            .collect()
    }

    fn random_grid(rng: &mut Rng, width: u32, height: u32, percent: u32) -> Grid {
        let mut grid = Grid::new(width, height).unwrap();
        for y in 0..height {
            for x in 0..width {
                if rng.below(100) < percent {
                    grid.set_free(UVec2::new(x, y), false).unwrap();
                }
            }
        }
        grid
    }

    #[test]
    fn ceil_square_is_exact() {
        for (r, want) in [
            (0.5, 1),
            (1.5, 3),
            (2.0, 4),
            (1e-300, 1),
            (3.000_000_000_000_000_4, 10),
            (255.999, 65536),
            (256.0, 65536),
        ] {
            assert_eq!(ceil_square(r), want, "{r}");
        }
    }

    #[test]
    fn erosion_matches_the_definition() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..60 {
            let (w, h) = (1 + rng.below(150), 1 + rng.below(40));
            let grid = random_grid(&mut rng, w, h, [1, 5, 20, 45][case % 4]);
            for s in [0, 1, 2, 4, 5, 8, 9, 10, 13, 25, 50, 200] {
                let c = Clearance(s);
                assert_eq!(
                    cells(&erode(&grid, c)),
                    brute(&grid, c),
                    "case {case}, s {s}, {w}x{h}"
                );
            }
        }
    }

    #[test]
    fn updates_match_a_fresh_erosion() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for case in 0..12 {
            let (w, h) = (20 + rng.below(140), 10 + rng.below(60));
            let mut grid = random_grid(&mut rng, w, h, 10);
            let c = Clearance([1, 2, 5, 13][case % 4]);
            let mut eroded = ErodedGrid::new(&grid, c);
            let mut synced = ErodedGrid::new(&grid, c);
            for step in 0..80 {
                let (x, y) = (rng.below(w), rng.below(h));
                let rect = URect::new(
                    x,
                    y,
                    (x + 1 + rng.below(4)).min(w),
                    (y + 1 + rng.below(4)).min(h),
                );
                let free = rng.below(2) == 0;
                if grid.set_rect_free(rect, free).unwrap() {
                    eroded.update(&grid, [rect]);
                }
                if step % 7 == 0 {
                    synced.sync(&grid);
                    assert_eq!(
                        synced.grid(),
                        &erode(&grid, c),
                        "sync, case {case}, step {step}"
                    );
                }
                assert_eq!(eroded.grid(), &erode(&grid, c), "case {case}, step {step}");
                assert_eq!(eroded.base_version(), grid.version());
            }
            // Regions of the updated grid agree with a fresh one's.
            let fresh = erode(&grid, c);
            assert_eq!(eroded.grid().region_count(), fresh.region_count());
        }
    }

    #[test]
    fn a_grid_of_another_size_is_eroded_anew() {
        let small = Grid::new(5, 5).unwrap();
        let big = Grid::new(9, 7).unwrap();
        let mut eroded = ErodedGrid::new(&small, Clearance(1));
        assert!(eroded.update(&big, []));
        assert_eq!(eroded.grid(), &erode(&big, Clearance(1)));
        assert!(eroded.grid().is_free(UVec2::new(7, 5)));
        assert!(!eroded.grid().is_free(UVec2::new(8, 5)));
    }

    #[test]
    fn rectangles_cover_the_offsets_closer_than_the_radius() {
        for s in [1u32, 2, 4, 5, 8, 9, 10, 13, 16, 17, 18, 20, 25, 100] {
            let c = Clearance(s);
            let rects = c.rectangles();
            let r = i64::from(c.reach()) + 2;
            let g = |d: i64| (d.abs() - 1).max(0).pow(2);
            for dy in -r..=r {
                for dx in -r..=r {
                    let inside = rects
                        .iter()
                        .any(|&(w, h)| dx.abs() <= i64::from(w) && dy.abs() <= i64::from(h));
                    assert_eq!(inside, g(dx) + g(dy) < i64::from(s), "s {s} ({dx}, {dy})");
                    if inside {
                        assert!(
                            dx.abs() <= i64::from(c.reach()) && dy.abs() <= i64::from(c.reach())
                        );
                    }
                }
            }
        }
    }
}
