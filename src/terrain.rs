//! Terrain types per cell, movement profiles, and the exact cost of a segment across them.
//!
//! A [`TerrainMap`] gives every cell a [`Terrain`] type, a small integer. The
//! types of Moving AI maps have names ([`Terrain::GROUND`], `SWAMP`, `WATER`,
//! `TREES`, `OUT_OF_BOUNDS`); a game may use any other value for its own.
//!
//! A [`Profile`] says how one kind of agent moves: for each terrain type, a
//! cost multiplier (at least 1) or impassable. A soldier and a boat are two
//! profiles of one map. [`TerrainMap::grid`] gives the free/blocked [`Grid`]
//! of a profile (free where it may go), on which every planner runs as
//! usual; [`segment_cost`] gives what a straight move costs under the
//! profile, for planners that weigh terrain.
//!
//! ```
//! use bevy_anyangle::prelude::*;
//! use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap};
//!
//! let map = TerrainMap::from_ascii(
//!     "....WWWW....
//!      ....WWWW....
//!      ............",
//! )
//! .unwrap();
//! let soldier = Profile::default();
//! let boat = Profile::impassable().with(Terrain::WATER, 1.0).unwrap();
//! assert!(!map.grid(&soldier).is_free(UVec2::new(5, 0)));
//! assert!(map.grid(&boat).is_free(UVec2::new(5, 0)));
//! assert!(!map.grid(&boat).is_free(UVec2::new(0, 0)));
//! ```
//!
//! # The cost of a segment
//!
//! The cost of segment `a-b` is the sum, over the cells it crosses, of the
//! length of the segment inside the cell times the cell's cost. A part that
//! runs along the edge between two cells takes the cheaper of the two (as
//! in the Theta* paper's non-uniform costs), and a part through the interior
//! of an impassable cell makes the segment impassable. With every passable
//! cost 1 it is the segment's length.

use bevy_math::{DVec2, URect, UVec2};
use thiserror::Error;

use crate::grid::{
    BitPlane, Grid, GridError, MAX_DIMENSION, MapParseError, ascii_rows, check_row, map_rows,
};

/// The terrain type of a cell (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Terrain(pub u8);

impl Terrain {
    /// Passable ground: `.` and `G` in a Moving AI map.
    pub const GROUND: Terrain = Terrain(0);
    /// Swamp: `S` (passable for the default profile).
    pub const SWAMP: Terrain = Terrain(1);
    /// Water: `W`.
    pub const WATER: Terrain = Terrain(2);
    /// Trees: `T`.
    pub const TREES: Terrain = Terrain(3);
    /// Out of bounds, a wall: `@` and `O`, and every other character of a
    /// map file.
    pub const OUT_OF_BOUNDS: Terrain = Terrain(4);

    /// The terrain a character of a Moving AI map stands for: `.` `G`
    /// ground, `S` swamp, `W` water, `T` trees, anything else out of bounds.
    #[must_use]
    pub fn from_char(c: char) -> Terrain {
        match c {
            '.' | 'G' => Terrain::GROUND,
            'S' => Terrain::SWAMP,
            'W' => Terrain::WATER,
            'T' => Terrain::TREES,
            _ => Terrain::OUT_OF_BOUNDS,
        }
    }
}

/// Why a [`Profile`] cost was refused.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum ProfileError {
    /// A cost multiplier is below 1, infinite or not a number.
    #[error("terrain cost {0} is not a finite number >= 1")]
    BadCost(f64),
}

/// How one kind of agent moves over terrain: per [`Terrain`] type, a cost
/// multiplier `>= 1`, or impassable.
///
/// The default is the rule of Moving AI maps and of [`Grid::from_movingai`]:
/// ground and swamp passable at cost 1, everything else impassable.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Cost per terrain type; `f64::INFINITY` is impassable.
    costs: Box<[f64; 256]>,
}

impl Default for Profile {
    fn default() -> Self {
        let mut costs = Box::new([f64::INFINITY; 256]);
        costs[usize::from(Terrain::GROUND.0)] = 1.0;
        costs[usize::from(Terrain::SWAMP.0)] = 1.0;
        Profile { costs }
    }
}

impl Profile {
    /// A profile for which every terrain is impassable (to build on with
    /// [`Profile::with`]).
    #[must_use]
    pub fn impassable() -> Self {
        Profile {
            costs: Box::new([f64::INFINITY; 256]),
        }
    }

    /// This profile with `terrain` passable at `cost` (a multiplier of the
    /// distance, at least 1).
    ///
    /// # Errors
    ///
    /// [`ProfileError::BadCost`] if `cost` is below 1 or not finite.
    pub fn with(mut self, terrain: Terrain, cost: f64) -> Result<Self, ProfileError> {
        if !(cost.is_finite() && cost >= 1.0) {
            return Err(ProfileError::BadCost(cost));
        }
        self.costs[usize::from(terrain.0)] = cost;
        Ok(self)
    }

    /// This profile with `terrain` impassable.
    #[must_use]
    pub fn without(mut self, terrain: Terrain) -> Self {
        self.costs[usize::from(terrain.0)] = f64::INFINITY;
        self
    }

    /// The cost multiplier of `terrain`, `None` if impassable.
    #[must_use]
    #[inline]
    pub fn cost(&self, terrain: Terrain) -> Option<f64> {
        let c = self.costs[usize::from(terrain.0)];
        c.is_finite().then_some(c)
    }

    /// Whether every passable terrain costs 1: then the cost of a path is
    /// its length, and Anya's shortest paths on [`TerrainMap::grid`] are the
    /// cheapest.
    #[must_use]
    pub fn is_uniform(&self) -> bool {
        self.costs.iter().all(|&c| c == 1.0 || c.is_infinite())
    }
}

/// A terrain type per cell (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerrainMap {
    width: u32,
    height: u32,
    /// Row by row.
    cells: Vec<u8>,
}

impl TerrainMap {
    /// A `width x height` map of `terrain` everywhere.
    ///
    /// # Errors
    ///
    /// [`GridError::BadSize`] if a side is 0 or above [`MAX_DIMENSION`],
    /// [`GridError::OutOfMemory`] if the cells cannot be allocated.
    pub fn new(width: u32, height: u32, terrain: Terrain) -> Result<Self, GridError> {
        if width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION {
            return Err(GridError::BadSize { width, height });
        }
        let n = u64::from(width) * u64::from(height);
        let mut cells = Vec::new();
        if usize::try_from(n)
            .ok()
            .and_then(|n| cells.try_reserve_exact(n).ok())
            .is_none()
        {
            return Err(GridError::OutOfMemory {
                width,
                height,
                bytes: n,
            });
        }
        cells.resize(cells.capacity(), terrain.0);
        cells.truncate(usize::try_from(n).unwrap_or(usize::MAX));
        Ok(TerrainMap {
            width,
            height,
            cells,
        })
    }

    /// Parses a Moving AI `.map` file, keeping each cell's terrain (see
    /// [`Terrain::from_char`]).
    ///
    /// # Errors
    ///
    /// A [`MapParseError`] naming the offending line, as
    /// [`Grid::from_movingai`].
    pub fn from_movingai(text: &str) -> Result<Self, MapParseError> {
        let (width, rows) = map_rows(text)?;
        Self::from_rows(&rows, width)
    }

    /// Builds a map from a picture, one text line per row, as
    /// [`Grid::from_ascii`] (surrounding white space and empty lines
    /// ignored), each character read by [`Terrain::from_char`].
    ///
    /// # Errors
    ///
    /// A [`MapParseError`] naming the line if the picture is empty, its rows
    /// differ in length, or it is too large.
    pub fn from_ascii(picture: &str) -> Result<Self, MapParseError> {
        let (width, rows) = ascii_rows(picture)?;
        Self::from_rows(&rows, width)
    }

    fn from_rows(rows: &[(usize, &str)], width: usize) -> Result<Self, MapParseError> {
        let (w, h) = (width as u32, rows.len() as u32);
        let mut map = TerrainMap::new(w, h, Terrain::OUT_OF_BOUNDS).map_err(|e| {
            // Sizes were checked with the header; only memory can fail.
            let bytes = match e {
                GridError::OutOfMemory { bytes, .. } => bytes,
                _ => u64::from(w) * u64::from(h),
            };
            MapParseError {
                line: 1,
                column: 1,
                kind: crate::grid::MapParseErrorKind::TooLarge { bytes },
            }
        })?;
        for (y, &(line, row)) in rows.iter().enumerate() {
            check_row(line, row, width)?;
            let at = y * width;
            for (x, c) in row.chars().enumerate() {
                map.cells[at + x] = Terrain::from_char(c).0;
            }
        }
        Ok(map)
    }

    /// Width in cells.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in cells.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The terrain of cell `(x, y)`, or `None` outside the map.
    #[must_use]
    #[inline]
    pub fn get(&self, x: i64, y: i64) -> Option<Terrain> {
        (x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height))
            .then(|| Terrain(self.cells[(y * i64::from(self.width) + x) as usize]))
    }

    /// Sets the terrain of every cell of `rect` (half-open, see
    /// [`crate::grid`]); returns whether a cell changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the rectangle leaves the map.
    pub fn set_rect(&mut self, rect: URect, terrain: Terrain) -> Result<bool, GridError> {
        if rect.max.x > self.width || rect.max.y > self.height {
            return Err(GridError::OutOfBounds {
                x: rect.max.x.saturating_sub(1).max(rect.min.x),
                y: rect.max.y.saturating_sub(1).max(rect.min.y),
                width: self.width,
                height: self.height,
            });
        }
        let mut changed = false;
        for y in rect.min.y..rect.max.y {
            let at = (y * self.width) as usize;
            for cell in &mut self.cells[at + rect.min.x as usize..at + rect.max.x as usize] {
                changed |= *cell != terrain.0;
                *cell = terrain.0;
            }
        }
        Ok(changed)
    }

    /// Sets the terrain of one cell; returns whether it changed.
    ///
    /// # Errors
    ///
    /// [`GridError::OutOfBounds`] if the cell is not in the map.
    pub fn set(&mut self, cell: UVec2, terrain: Terrain) -> Result<bool, GridError> {
        self.set_rect(URect::from_corners(cell, cell + UVec2::ONE), terrain)
    }

    /// The grid of `profile`: a cell is free iff its terrain is passable.
    #[must_use]
    pub fn grid(&self, profile: &Profile) -> Grid {
        let mut rows = BitPlane::new(self.height, self.width);
        for y in 0..self.height {
            let row = &self.cells[(y * self.width) as usize..((y + 1) * self.width) as usize];
            let mut x = 0;
            while x < row.len() {
                if profile.cost(Terrain(row[x])).is_some() {
                    let start = x;
                    while x < row.len() && profile.cost(Terrain(row[x])).is_some() {
                        x += 1;
                    }
                    rows.set_range(y, start as u32, x as u32, true);
                } else {
                    x += 1;
                }
            }
        }
        Grid::from_rows(self.width, self.height, rows)
    }

    /// The cost of cell `(x, y)` under `profile`; outside the map,
    /// impassable.
    #[inline]
    fn cost(&self, profile: &Profile, x: i64, y: i64) -> Option<f64> {
        self.get(x, y).and_then(|t| profile.cost(t))
    }
}

/// The cost of the straight move from `a` to `b` (grid coordinates) under
/// `profile`, as the [module docs](self#the-cost-of-a-segment) define it;
/// `None` if it crosses the interior of an impassable cell, runs along an
/// edge between two impassable cells, or leaves the map. (Squeezing between
/// two impassable cells that touch at a corner is for the line of sight on
/// [`TerrainMap::grid`] to refuse, as everywhere.)
///
/// Exact up to floating-point rounding of the lengths: the segment is cut
/// at every grid line it crosses, and each piece is charged to the cell its
/// midpoint lies in. Allocates nothing.
///
/// ```
/// use bevy_anyangle::prelude::*;
/// use bevy_anyangle::terrain::{Profile, Terrain, TerrainMap, segment_cost};
///
/// let map = TerrainMap::from_ascii("..SS..").unwrap();
/// let slow_swamp = Profile::default().with(Terrain::SWAMP, 3.0).unwrap();
/// let cost = segment_cost(&map, &slow_swamp, DVec2::new(0.5, 0.5), DVec2::new(5.5, 0.5));
/// assert_eq!(cost, Some(3.0 + 2.0 * 3.0));
/// ```
#[must_use]
pub fn segment_cost(map: &TerrainMap, profile: &Profile, a: DVec2, b: DVec2) -> Option<f64> {
    let (w, h) = (f64::from(map.width), f64::from(map.height));
    let inside = |p: DVec2| p.is_finite() && (0.0..=w).contains(&p.x) && (0.0..=h).contains(&p.y);
    if !inside(a) || !inside(b) {
        return None;
    }
    let d = b - a;
    let length = d.length();
    if length == 0.0 {
        return Some(0.0);
    }
    let along_x = d.y == 0.0 && whole(a.y); // on a horizontal grid line
    let along_y = d.x == 0.0 && whole(a.x); // on a vertical grid line
    // The cost of the piece of the segment around `m` (a point of it off
    // every grid line it crosses).
    let piece_cost = |m: DVec2| {
        // (`m` lies in the map, so its coordinates are not negative:
        // truncation is the floor, without a call to libm's `floor`.)
        let (cx, cy) = (m.x as i64, m.y as i64);
        if along_x {
            let y = a.y as i64;
            min_cost(map.cost(profile, cx, y - 1), map.cost(profile, cx, y))
        } else if along_y {
            let x = a.x as i64;
            min_cost(map.cost(profile, x - 1, cy), map.cost(profile, x, cy))
        } else {
            map.cost(profile, cx, cy)
        }
    };
    // A segment that crosses no grid line (a grid move, a move within a
    // cell) is one piece: the loop below would charge it whole to the cell
    // of its midpoint, as here.
    // (As the loop does, with the far end `from + delta`; on a negative
    // one, truncation is not the floor: the loop decides.)
    let crosses = |from: f64, delta: f64| {
        let to = from + delta;
        let (lo, hi) = if delta >= 0.0 { (from, to) } else { (to, from) };
        lo < 0.0 || ((lo as i64 + 1) as f64) < hi
    };
    if !crosses(a.x, d.x) && !crosses(a.y, d.y) {
        return Some(length * piece_cost(a + d * 0.5)?);
    }
    if !along_x && !along_y {
        return across(map, profile, a, d, length);
    }
    // Along a grid line: crossings of the vertical lines x = k, then of the
    // horizontal ones, as parameters t in (0, 1), merged in increasing
    // order.
    let mut xs = Crossings::new(a.x, d.x);
    let mut ys = Crossings::new(a.y, d.y);
    let mut total = 0.0;
    let mut t0 = 0.0;
    loop {
        // (A line without crossings left is at infinity.)
        let t1 = if xs.t <= ys.t && xs.t < f64::INFINITY {
            xs.advance()
        } else if ys.t < f64::INFINITY {
            ys.advance()
        } else {
            1.0
        };
        if t1 > t0 {
            let cost = piece_cost(a + d * f64::midpoint(t0, t1))?;
            total += (t1 - t0) * length * cost;
        }
        if t1 >= 1.0 {
            return Some(total);
        }
        t0 = t1;
    }
}

/// [`segment_cost`] of a move between grid vertices `a` and `b` one row,
/// column or diagonal step apart (`length` its length: 1 or `SQRT_2`, as
/// the vertex graph gives it), read off the cells beside it without the
/// general walk; the same value. Any other segment: [`segment_cost`].
#[inline]
pub(crate) fn move_cost(
    map: &TerrainMap,
    profile: &Profile,
    a: DVec2,
    b: DVec2,
    length: f64,
) -> Option<f64> {
    let d = b - a;
    let (w, h) = (f64::from(map.width), f64::from(map.height));
    let vertex =
        |p: DVec2| (0.0..=w).contains(&p.x) && (0.0..=h).contains(&p.y) && whole(p.x) && whole(p.y);
    if d.x.abs() > 1.0 || d.y.abs() > 1.0 || d == DVec2::ZERO || !vertex(a) || !vertex(b) {
        return segment_cost(map, profile, a, b);
    }
    let (x, y) = (a.x.min(b.x) as i64, a.y.min(b.y) as i64);
    let cost = if d.x == 0.0 {
        min_cost(map.cost(profile, x - 1, y), map.cost(profile, x, y))
    } else if d.y == 0.0 {
        min_cost(map.cost(profile, x, y - 1), map.cost(profile, x, y))
    } else {
        map.cost(profile, x, y)
    }?;
    Some(length * cost)
}

/// The cost of the segment from `a` along `d` (of length `length`, in the
/// map, along no grid line), cell by cell: the cells it crosses are walked
/// in order, deciding which grid line comes next by exact comparison
/// wherever the coordinates are exact in `f64` (grid vertices, multiples of
/// a power of two), so a segment through a vertex passes from cell to
/// diagonal cell as the loop over pieces does; the parameter of a crossing
/// is computed only where the cost changes, and each run of cells of one
/// cost is charged at once.
fn across(map: &TerrainMap, profile: &Profile, a: DVec2, d: DVec2, length: f64) -> Option<f64> {
    let xs = Crossings::new(a.x, d.x);
    let ys = Crossings::new(a.y, d.y);
    let (sx, sy) = (xs.step as i64, ys.step as i64);
    // The cell the segment leaves `a` into (`a` lies in the map: truncation
    // is the floor), and the first lines it crosses.
    let first = |from: f64, step: i64| {
        let cell = from as i64;
        if step < 0 && cell as f64 == from {
            cell - 1
        } else {
            cell
        }
    };
    let (mut cx, mut cy) = (first(a.x, sx), first(a.y, sy));
    let (mut line_x, mut line_y) = (xs.lo, ys.lo);
    let (adx, ady) = (d.x.abs(), d.y.abs());
    let cost_at = |x: i64, y: i64| map.cost(profile, x, y);
    let mut run_cost = cost_at(cx, cy)?;
    let mut run_from = 0.0;
    let mut total = 0.0;
    let (mut left_x, mut left_y) = (xs.count, ys.count);
    while left_x > 0 || left_y > 0 {
        // The next crossing: of a vertical line at t = (line_x - a.x) / d.x,
        // of a horizontal one at t = (line_y - a.y) / d.y; compared as
        // (line_x - a.x) * |d.y| against (line_y - a.y) * |d.x| (signs
        // made positive), both at once on a tie (through a vertex).
        let (step_x, step_y) = if left_y == 0 {
            (true, false)
        } else if left_x == 0 {
            (false, true)
        } else {
            let ex = (line_x - a.x) * xs.step * ady;
            let ey = (line_y - a.y) * ys.step * adx;
            (ex <= ey, ey <= ex)
        };
        let crossed_at = (line_x, line_y);
        if step_x {
            cx += sx;
            line_x += xs.step;
            left_x -= 1;
        }
        if step_y {
            cy += sy;
            line_y += ys.step;
            left_y -= 1;
        }
        let cost = cost_at(cx, cy)?;
        if cost != run_cost {
            let t = if step_x {
                (crossed_at.0 - a.x) / d.x
            } else {
                (crossed_at.1 - a.y) / d.y
            };
            total += (t - run_from) * length * run_cost;
            run_from = t;
            run_cost = cost;
        }
    }
    Some(total + (1.0 - run_from) * length * run_cost)
}

/// The crossings of a segment with the grid lines of one axis, strictly
/// between its ends, as parameters along it, in increasing order.
struct Crossings {
    /// The next crossing's parameter; infinity when none is left.
    t: f64,
    /// The first line crossed.
    lo: f64,
    /// The direction lines are crossed in: 1 or -1.
    step: f64,
    /// The segment's start and extent on this axis.
    from: f64,
    delta: f64,
    /// The next crossing's index, and the number of crossings.
    i: i64,
    count: i64,
}

impl Crossings {
    #[inline]
    fn new(from: f64, delta: f64) -> Crossings {
        let (lo, hi) = if delta > 0.0 {
            (floor(from) + 1.0, ceil(from + delta) - 1.0)
        } else if delta < 0.0 {
            (ceil(from) - 1.0, floor(from + delta) + 1.0)
        } else {
            (1.0, 0.0) // none
        };
        let count = if delta == 0.0 {
            0
        } else {
            ((hi - lo) * delta.signum()).max(-1.0) as i64 + 1
        };
        let mut c = Crossings {
            t: f64::INFINITY,
            lo,
            step: delta.signum(),
            from,
            delta,
            i: 0,
            count,
        };
        c.t = c.at(0);
        c
    }

    /// The parameter of crossing `i`, or infinity past the last.
    #[inline]
    fn at(&self, i: i64) -> f64 {
        if i < self.count {
            (self.lo + self.step * i as f64 - self.from) / self.delta
        } else {
            f64::INFINITY
        }
    }

    /// The next crossing's parameter; moves on to the one after.
    #[inline]
    fn advance(&mut self) -> f64 {
        let t = self.t;
        self.i += 1;
        self.t = self.at(self.i);
        t
    }
}

/// Whether `v`, a coordinate in a map (not negative), is whole: where
/// truncation keeps it, without a call to libm's `trunc`.
#[inline]
fn whole(v: f64) -> bool {
    (v as i64) as f64 == v
}

/// `v.floor()`, without a call to libm for the coordinates of a map (not
/// negative, below 2^63).
#[inline]
fn floor(v: f64) -> f64 {
    if (0.0..9.2e18).contains(&v) {
        (v as i64) as f64
    } else {
        v.floor()
    }
}

/// `v.ceil()`, as [`floor`].
#[inline]
fn ceil(v: f64) -> f64 {
    let f = floor(v);
    if f < v { f + 1.0 } else { f }
}

/// The cheaper of two costs (`None` is impassable).
fn min_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The cost by brute force: a million midpoints.
    fn integrated(map: &TerrainMap, profile: &Profile, a: DVec2, b: DVec2) -> Option<f64> {
        const STEPS: usize = 1 << 20;
        let d = b - a;
        let piece = d.length() / STEPS as f64;
        let mut total = 0.0;
        for i in 0..STEPS {
            let m = a + d * ((i as f64 + 0.5) / STEPS as f64);
            total += piece * map.cost(profile, m.x.floor() as i64, m.y.floor() as i64)?;
        }
        Some(total)
    }

    /// A `w x h` map of terrains 0, 1 and 2 at random.
    fn random_map(rng: &mut Rng, w: u32, h: u32) -> TerrainMap {
        let mut map = TerrainMap::new(w, h, Terrain::GROUND).unwrap();
        for y in 0..h {
            for x in 0..w {
                map.set(UVec2::new(x, y), Terrain(rng.below(3) as u8))
                    .unwrap();
            }
        }
        map
    }

    /// The cost charged piece by piece: the segment cut at every grid line
    /// it crosses, each piece charged to the cell of its midpoint.
    fn by_pieces(map: &TerrainMap, profile: &Profile, a: DVec2, b: DVec2) -> Option<f64> {
        let d = b - a;
        let (mut xs, mut ys) = (Crossings::new(a.x, d.x), Crossings::new(a.y, d.y));
        let (mut total, mut t0) = (0.0, 0.0);
        loop {
            let t1 = if xs.t <= ys.t && xs.t < f64::INFINITY {
                xs.advance()
            } else if ys.t < f64::INFINITY {
                ys.advance()
            } else {
                1.0
            };
            if t1 > t0 {
                let m = a + d * f64::midpoint(t0, t1);
                let cost = map.cost(profile, m.x.floor() as i64, m.y.floor() as i64)?;
                total += (t1 - t0) * d.length() * cost;
            }
            if t1 >= 1.0 {
                return Some(total);
            }
            t0 = t1;
        }
    }

    #[test]
    fn a_grid_move_costs_what_its_segment_costs() {
        let mut rng = Rng(0x6d0e_5eed);
        let profile = Profile::impassable()
            .with(Terrain(0), 1.0)
            .unwrap()
            .with(Terrain(1), 2.5)
            .unwrap();
        for _ in 0..200 {
            let (w, h) = (1 + rng.below(6), 1 + rng.below(6));
            let map = random_map(&mut rng, w, h);
            // Every move from every vertex, off the map too.
            for y in 0..=i64::from(h) {
                for x in 0..=i64::from(w) {
                    for (dx, dy) in [
                        (1, 0),
                        (-1, 0),
                        (0, 1),
                        (0, -1),
                        (1, 1),
                        (-1, -1),
                        (1, -1),
                        (-1, 1),
                    ] {
                        let a = DVec2::new(x as f64, y as f64);
                        let b = a + DVec2::new(f64::from(dx), f64::from(dy));
                        let length = if dx != 0 && dy != 0 {
                            core::f64::consts::SQRT_2
                        } else {
                            1.0
                        };
                        let (fast, general) = (
                            move_cost(&map, &profile, a, b, length),
                            segment_cost(&map, &profile, a, b),
                        );
                        assert_eq!(
                            fast.map(f64::to_bits),
                            general.map(f64::to_bits),
                            "{a} -> {b}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn walking_cells_costs_what_charging_pieces_costs() {
        let mut rng = Rng(0x5eed_ce11);
        for case in 0..3000 {
            let (w, h) = (1 + rng.below(12), 1 + rng.below(12));
            // Half the maps with an impassable terrain.
            let walls = case % 2 == 0;
            let mut profile = Profile::impassable()
                .with(Terrain(0), 1.0)
                .unwrap()
                .with(Terrain(1), 2.5)
                .unwrap();
            if !walls {
                profile = profile.with(Terrain(2), 7.0).unwrap();
            }
            let map = random_map(&mut rng, w, h);
            // Grid vertices, multiples of 1/8 (both exact: ties through
            // vertices are decided alike), or any point.
            let point = |rng: &mut Rng| match case % 3 {
                0 => DVec2::new(f64::from(rng.below(w + 1)), f64::from(rng.below(h + 1))),
                1 => DVec2::new(
                    f64::from(rng.below(w * 8 + 1)) / 8.0,
                    f64::from(rng.below(h * 8 + 1)) / 8.0,
                ),
                _ => {
                    let mut unit = || (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                    DVec2::new(unit() * f64::from(w), unit() * f64::from(h))
                }
            };
            let (a, b) = (point(&mut rng), point(&mut rng));
            if a == b || (a.y == b.y && a.y.fract() == 0.0) || (a.x == b.x && a.x.fract() == 0.0) {
                continue; // no length, or along a grid line: charged piece by piece
            }
            let (fast, slow) = (
                segment_cost(&map, &profile, a, b),
                by_pieces(&map, &profile, a, b),
            );
            match (fast, slow) {
                (Some(f), Some(s)) => assert!(
                    (f - s).abs() <= 1e-12 * (1.0 + s),
                    "case {case}: {a} -> {b}: {f} vs {s}"
                ),
                // (Through a vertex between arbitrary points, rounding may
                // see a sliver of a cell on one side: only exact points
                // must agree on impassable.)
                _ if case % 3 == 2 => {}
                _ => assert_eq!(fast, slow, "case {case}: {a} -> {b}"),
            }
        }
    }

    #[test]
    fn segment_costs_match_numerical_integration() {
        let mut rng = Rng(0xfeed_beef);
        let profile = Profile::impassable()
            .with(Terrain(0), 1.0)
            .unwrap()
            .with(Terrain(1), 2.5)
            .unwrap()
            .with(Terrain(2), 7.0)
            .unwrap();
        for case in 0..60 {
            let (w, h) = (3 + rng.below(10), 3 + rng.below(10));
            let map = random_map(&mut rng, w, h);
            let point = |rng: &mut Rng| {
                // Multiples of 1/8, so that some segments run along grid
                // lines and through vertices.
                DVec2::new(
                    f64::from(rng.below(w * 8 + 1)) / 8.0,
                    f64::from(rng.below(h * 8 + 1)) / 8.0,
                )
            };
            let (a, b) = (point(&mut rng), point(&mut rng));
            let exact = segment_cost(&map, &profile, a, b).unwrap();
            let brute = integrated(&map, &profile, a, b).unwrap();
            // (Along a grid line the brute force charges one side only.)
            let on_line = (a.x == b.x && a.x.fract() == 0.0) || (a.y == b.y && a.y.fract() == 0.0);
            if !on_line {
                assert!(
                    (exact - brute).abs() <= 1e-4 * (1.0 + brute),
                    "case {case}: {a} -> {b}: {exact} vs {brute}"
                );
            }
            assert!(exact >= a.distance(b) - 1e-12, "case {case}");
            assert!(exact <= 7.0 * a.distance(b) + 1e-12, "case {case}");
        }
    }
}
