//! The independent reference every planner test checks against, written from
//! `SPEC.md` alone.
//!
//! Nothing here shares code with `src/` beyond reading which cells of a
//! [`Grid`] are free: the line of sight, the endpoint rules, regions, the
//! fallback target, the shortest any-angle path and the shortest 8-connected
//! path are all computed again, the plain way.
//!
//! - [`Reference::visible`] decides visibility exactly, in integer and
//!   rational arithmetic: it lists every parameter `t` in `[0, 1]` at which the
//!   segment meets a grid line, checks each of those points and one stretch
//!   between each two consecutive ones. No floating-point number decides
//!   anything.
//! - [`Reference::validate`] checks one returned [`Path`] against every rule of
//!   the spec (endpoints, moved starts, fallback targets, visibility, double
//!   corners, length, grid moves for A*).
//! - [`Reference::optimum`] is Dijkstra on the visibility graph of the corners
//!   plus start and goal; [`Reference::grid_optimum`] is Dijkstra on the
//!   8-connected vertex graph.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the reference"
)]

pub mod generate;
pub mod harness;
#[cfg(feature = "plugin")]
pub mod history;
pub mod hog;
pub mod lattice;
pub mod strategies;

use std::cell::OnceCell;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt::Write as _;

use bevy_anyangle::prelude::*;

/// Relative tolerance of length comparisons.
pub const REL_EPS: f64 = 1e-9;

/// How far (at most) the crate moves a fallback target or a moved start off a
/// double corner that belongs to another cell: 1/1024 of a cell each way.
pub const NUDGE: f64 = std::f64::consts::SQRT_2 / 1024.0;

/// Whether `a` is within `REL_EPS` (relative, at least absolute 1e-9) of `b`.
#[must_use]
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= REL_EPS * a.abs().max(b.abs()).max(1.0)
}

/// An exact rational `num / den`, `den > 0`.
#[derive(Clone, Copy, Debug)]
struct Ratio {
    num: i128,
    den: i128,
}

impl Ratio {
    fn new(num: i128, den: i128) -> Self {
        debug_assert_ne!(den, 0);
        if den < 0 {
            Ratio {
                num: -num,
                den: -den,
            }
        } else {
            Ratio { num, den }
        }
    }

    fn floor(self) -> i128 {
        self.num.div_euclid(self.den)
    }

    fn ceil(self) -> i128 {
        -(-self.num).div_euclid(self.den)
    }

    fn is_integer(self) -> bool {
        self.num.rem_euclid(self.den) == 0
    }

    /// The cells (inclusive range) whose closed span contains this value.
    fn span(self) -> (i128, i128) {
        let f = self.floor();
        if self.is_integer() {
            (f - 1, f)
        } else {
            (f, f)
        }
    }

    fn cmp(self, other: Ratio) -> Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }
}

/// The smallest `s <= 56` such that `v * 2^s` is an integer (multiplying by
/// a power of two is exact).
fn dyadic_shift(v: f64) -> Option<i32> {
    (0..=56).find(|&s| (v * 2f64.powi(s)).fract() == 0.0)
}

fn scaled(v: f64, shift: i32) -> i128 {
    (v * 2f64.powi(shift)) as i128
}

/// Largest scaled coordinate the exact arithmetic accepts (products stay
/// below 2^126).
const MAX_SCALED: i128 = 1 << 61;

/// A snapshot of a grid's free cells with the spec's rules on top.
pub struct Reference {
    w: i64,
    h: i64,
    free: Vec<bool>,
    /// Region label per cell, 0 for blocked.
    region: Vec<u32>,
    corners: OnceCell<CornerGraph>,
}

/// The corners of the grid and which pairs see each other.
struct CornerGraph {
    points: Vec<DVec2>,
    /// `dist[i * n + j]`: Euclidean length if corner i sees corner j, else infinity.
    dist: Vec<f64>,
}

/// What a validated path is expected to look like besides the spec's rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// A* on the vertex grid: every leg is a grid edge or a cell diagonal,
    /// except legs between a non-vertex start or goal and a corner of one of
    /// its cells (or between start and goal sharing a cell).
    pub grid_moves: bool,
}

impl Expect {
    /// Any-angle planners: only the spec's rules.
    pub const ANY_ANGLE: Expect = Expect { grid_moves: false };
    /// A* (8-connected).
    pub const GRID_MOVES: Expect = Expect { grid_moves: true };

    /// The expectation for an algorithm.
    #[must_use]
    pub fn for_algorithm(algorithm: Algorithm) -> Expect {
        if algorithm == Algorithm::AStar {
            Self::GRID_MOVES
        } else {
            Self::ANY_ANGLE
        }
    }
}

/// The closest points of a set of cells to a target point.
#[derive(Clone, Debug)]
pub struct Nearest {
    /// The distance.
    pub dist: f64,
    /// Every point attaining it (the target clamped into an optimal cell).
    pub points: Vec<DVec2>,
}

fn is_vertex(p: DVec2) -> bool {
    p.x.fract() == 0.0 && p.y.fract() == 0.0
}

impl Reference {
    /// Reads the free cells of `grid`.
    #[must_use]
    pub fn new(grid: &Grid) -> Self {
        let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
        let mut free = Vec::with_capacity((w * h) as usize);
        for y in 0..h {
            for x in 0..w {
                free.push(grid.is_free_xy(x, y));
            }
        }
        let mut r = Reference {
            w,
            h,
            free,
            region: Vec::new(),
            corners: OnceCell::new(),
        };
        r.label_regions();
        r
    }

    /// Width in cells.
    #[must_use]
    pub fn width(&self) -> i64 {
        self.w
    }

    /// Height in cells.
    #[must_use]
    pub fn height(&self) -> i64 {
        self.h
    }

    /// Whether cell `(x, y)` is free; outside the grid everything is blocked.
    #[must_use]
    pub fn free(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && x < self.w && y < self.h && self.free[(y * self.w + x) as usize]
    }

    fn free_i128(&self, x: i128, y: i128) -> bool {
        match (i64::try_from(x), i64::try_from(y)) {
            (Ok(x), Ok(y)) => self.free(x, y),
            _ => false,
        }
    }

    /// The region label of a cell (0 if blocked or outside).
    #[must_use]
    pub fn region_of_cell(&self, x: i64, y: i64) -> u32 {
        if self.free(x, y) {
            self.region[(y * self.w + x) as usize]
        } else {
            0
        }
    }

    /// The number of regions (4-connected components of free cells).
    #[must_use]
    pub fn region_count(&self) -> u32 {
        self.region.iter().copied().max().unwrap_or(0)
    }

    /// 4-connected components of free cells, by breadth-first search.
    fn label_regions(&mut self) {
        self.region = vec![0; self.free.len()];
        let mut next = 0;
        let mut queue = VecDeque::new();
        for y0 in 0..self.h {
            for x0 in 0..self.w {
                if !self.free(x0, y0) || self.region[(y0 * self.w + x0) as usize] != 0 {
                    continue;
                }
                next += 1;
                self.region[(y0 * self.w + x0) as usize] = next;
                queue.push_back((x0, y0));
                while let Some((x, y)) = queue.pop_front() {
                    for (nx, ny) in [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)] {
                        if self.free(nx, ny) && self.region[(ny * self.w + nx) as usize] == 0 {
                            self.region[(ny * self.w + nx) as usize] = next;
                            queue.push_back((nx, ny));
                        }
                    }
                }
            }
        }
    }

    /// Free flags of the four cells around vertex `(x, y)`: NW, NE, SW, SE.
    fn around(&self, x: i64, y: i64) -> [bool; 4] {
        [
            self.free(x - 1, y - 1),
            self.free(x, y - 1),
            self.free(x - 1, y),
            self.free(x, y),
        ]
    }

    /// Two blocked cells touching diagonally and two free cells touching diagonally.
    #[must_use]
    pub fn is_double_corner(&self, x: i64, y: i64) -> bool {
        matches!(
            self.around(x, y),
            [true, false, false, true] | [false, true, true, false]
        )
    }

    /// Exactly one blocked cell among the four.
    #[must_use]
    pub fn is_corner(&self, x: i64, y: i64) -> bool {
        self.around(x, y).iter().filter(|f| !**f).count() == 1
    }

    /// Whether `p` is a vertex lying on a double corner.
    #[must_use]
    pub fn on_double_corner(&self, p: DVec2) -> bool {
        is_vertex(p) && self.is_double_corner(p.x as i64, p.y as i64)
    }

    /// Whether `p` lies in the closed square of a free cell.
    #[must_use]
    #[expect(
        clippy::float_cmp,
        reason = "whether a coordinate is an integer, exactly"
    )]
    pub fn traversable(&self, p: DVec2) -> bool {
        if !p.is_finite() {
            return false;
        }
        let span = |v: f64| {
            let f = v.floor();
            if f == v {
                (f as i64 - 1, f as i64)
            } else {
                (f as i64, f as i64)
            }
        };
        let ((x0, x1), (y0, y1)) = (span(p.x), span(p.y));
        (x0..=x1).any(|x| (y0..=y1).any(|y| self.free(x, y)))
    }

    /// The free cells a start or goal at `p` belongs to: every free cell whose
    /// closed square holds `p`, except on a double corner, where only the
    /// south-east cell counts. Empty when `p` is not a valid start or goal.
    #[must_use]
    pub fn endpoint_cells(&self, p: DVec2) -> Vec<[i64; 2]> {
        if !p.is_finite() || p.x < 0.0 || p.y < 0.0 || p.x > self.w as f64 || p.y > self.h as f64 {
            return Vec::new();
        }
        if self.on_double_corner(p) {
            let (x, y) = (p.x as i64, p.y as i64);
            return if self.free(x, y) {
                vec![[x, y]]
            } else {
                Vec::new()
            };
        }
        let mut cells = Vec::new();
        let (fx, fy) = (p.x.floor() as i64, p.y.floor() as i64);
        let xs = if p.x.fract() == 0.0 {
            fx - 1..=fx
        } else {
            fx..=fx
        };
        let ys = if p.y.fract() == 0.0 {
            fy - 1..=fy
        } else {
            fy..=fy
        };
        for y in ys {
            for x in xs.clone() {
                if self.free(x, y) {
                    cells.push([x, y]);
                }
            }
        }
        cells
    }

    /// The region of a valid start or goal, `None` if `p` is not valid.
    #[must_use]
    pub fn endpoint_region(&self, p: DVec2) -> Option<u32> {
        let cells = self.endpoint_cells(p);
        let first = cells.first()?;
        let r = self.region_of_cell(first[0], first[1]);
        assert!(
            cells.iter().all(|c| self.region_of_cell(c[0], c[1]) == r),
            "reference: the cells of a valid point are always connected ({p})"
        );
        Some(r)
    }

    /// The closest points to `p` of the free cells (of one region, or of any
    /// when `region` is `None`): the spec's fallback target.
    #[must_use]
    pub fn nearest(&self, p: DVec2, region: Option<u32>) -> Option<Nearest> {
        let mut best: Option<Nearest> = None;
        for y in 0..self.h {
            for x in 0..self.w {
                let r = self.region_of_cell(x, y);
                if r == 0 || region.is_some_and(|want| want != r) {
                    continue;
                }
                let q = DVec2::new(
                    p.x.clamp(x as f64, (x + 1) as f64),
                    p.y.clamp(y as f64, (y + 1) as f64),
                );
                let d = q.distance(p);
                match &mut best {
                    Some(b) if d < b.dist - 1e-12 => {
                        *b = Nearest {
                            dist: d,
                            points: vec![q],
                        }
                    }
                    Some(b) if d <= b.dist + 1e-12 => {
                        if !b.points.contains(&q) {
                            b.points.push(q);
                        }
                    }
                    Some(_) => {}
                    None => {
                        best = Some(Nearest {
                            dist: d,
                            points: vec![q],
                        });
                    }
                }
            }
        }
        best
    }

    // ----- line of sight -------------------------------------------------

    /// Exact visibility of segment `a-b` (`SPEC.md`: every point traversable,
    /// no double corner in the relative interior).
    ///
    /// `None` when a coordinate is not a multiple of `2^-56` small enough for
    /// the 128-bit arithmetic (never for vertices, centres or `2^-k` lattice
    /// points on grids of up to 2^15 cells).
    #[must_use]
    pub fn visible(&self, a: DVec2, b: DVec2) -> Option<bool> {
        if !a.is_finite() || !b.is_finite() {
            return Some(false);
        }
        // Points outside the closed grid are never traversable; this also
        // keeps the exact arithmetic small.
        if !self.traversable(a) || !self.traversable(b) {
            return Some(false);
        }
        let mut shift = 0;
        for v in [a.x, a.y, b.x, b.y] {
            shift = shift.max(dyadic_shift(v)?);
        }
        let d: i128 = 1 << shift;
        let [xa, ya, xb, yb] = [a.x, a.y, b.x, b.y].map(|v| scaled(v, shift));
        if [xa, ya, xb, yb].iter().any(|v| v.abs() >= MAX_SCALED) {
            return None;
        }
        Some(self.visible_scaled([xa, ya], [xb, yb], d))
    }

    /// Visibility with exact decisions; panics where [`Reference::visible`]
    /// cannot decide (a test-infrastructure error, never a planner's).
    #[must_use]
    pub fn sees(&self, a: DVec2, b: DVec2) -> bool {
        self.visible(a, b).unwrap_or_else(|| {
            panic!("reference: cannot decide visibility of {a:?} - {b:?} exactly")
        })
    }

    /// Segment from `a / d` to `b / d`.
    fn visible_scaled(&self, a: [i128; 2], b: [i128; 2], d: i128) -> bool {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let start = (Ratio::new(a[0], d), Ratio::new(a[1], d));
        if dx == 0 && dy == 0 {
            return self.point_ok(start.0, start.1);
        }
        // Grid lines met strictly between a and b, in travel order, with
        // their parameters t = num / den.
        let lines = |from: i128, to: i128| -> Vec<i128> {
            let (f, t) = (Ratio::new(from, d), Ratio::new(to, d));
            match to.cmp(&from) {
                Ordering::Greater => (f.floor() + 1..t.ceil()).collect(),
                Ordering::Less => (t.floor() + 1..f.ceil()).rev().collect(),
                Ordering::Equal => Vec::new(),
            }
        };
        let xs = lines(a[0], b[0]);
        let ys = lines(a[1], b[1]);
        let tx = |k: i128| Ratio::new(k * d - a[0], dx);
        let ty = |k: i128| Ratio::new(k * d - a[1], dy);
        // The point at parameter t, as exact coordinates.
        let at = |t: Ratio| {
            (
                Ratio::new(a[0] * t.den + t.num * dx, t.den * d),
                Ratio::new(a[1] * t.den + t.num * dy, t.den * d),
            )
        };

        if !self.point_ok(start.0, start.1) || !self.stretch_ok(start, dx, dy) {
            return false;
        }
        let (mut i, mut j) = (0, 0);
        loop {
            let t = match (xs.get(i), ys.get(j)) {
                (None, None) => break,
                (Some(&k), None) => {
                    i += 1;
                    tx(k)
                }
                (None, Some(&k)) => {
                    j += 1;
                    ty(k)
                }
                (Some(&kx), Some(&ky)) => {
                    let (u, v) = (tx(kx), ty(ky));
                    match u.cmp(v) {
                        Ordering::Less => {
                            i += 1;
                            u
                        }
                        Ordering::Greater => {
                            j += 1;
                            v
                        }
                        Ordering::Equal => {
                            i += 1;
                            j += 1;
                            u
                        }
                    }
                }
            };
            let p = at(t);
            if !self.point_ok(p.0, p.1) {
                return false;
            }
            // A vertex strictly inside the segment must not be a double corner.
            if p.0.is_integer() && p.1.is_integer() {
                let (vx, vy) = (p.0.floor(), p.1.floor());
                if let (Ok(vx), Ok(vy)) = (i64::try_from(vx), i64::try_from(vy))
                    && self.is_double_corner(vx, vy)
                {
                    return false;
                }
            }
            if !self.stretch_ok(p, dx, dy) {
                return false;
            }
        }
        self.point_ok(Ratio::new(b[0], d), Ratio::new(b[1], d))
    }

    /// Whether the exact point lies in a free cell's closed square.
    fn point_ok(&self, x: Ratio, y: Ratio) -> bool {
        let ((x0, x1), (y0, y1)) = (x.span(), y.span());
        (x0..=x1).any(|cx| (y0..=y1).any(|cy| self.free_i128(cx, cy)))
    }

    /// Whether the open stretch that starts at `p` and heads along `(dx, dy)`
    /// up to the next grid line (or the end) is traversable. It meets no grid
    /// line it does not lie on, so one set of cells holds all of it.
    fn stretch_ok(&self, p: (Ratio, Ratio), dx: i128, dy: i128) -> bool {
        let cells = |c: Ratio, s: i128| match s.cmp(&0) {
            Ordering::Greater => (c.floor(), c.floor()),
            Ordering::Less => (c.ceil() - 1, c.ceil() - 1),
            Ordering::Equal => c.span(),
        };
        let ((x0, x1), (y0, y1)) = (cells(p.0, dx), cells(p.1, dy));
        (x0..=x1).any(|cx| (y0..=y1).any(|cy| self.free_i128(cx, cy)))
    }

    /// A path leg between two points, with the south-east rule at a start or
    /// goal on a double corner: from such a point a leg must head into the
    /// south-east quadrant.
    fn leg_ok(&self, a: DVec2, b: DVec2) -> bool {
        se_ok(self, a, b) && se_ok(self, b, a) && self.sees(a, b)
    }

    // ----- reference optima ----------------------------------------------

    fn corner_graph(&self) -> &CornerGraph {
        self.corners.get_or_init(|| {
            let mut points = Vec::new();
            for y in 0..=self.h {
                for x in 0..=self.w {
                    if self.is_corner(x, y) {
                        points.push(DVec2::new(x as f64, y as f64));
                    }
                }
            }
            let n = points.len();
            let mut dist = vec![f64::INFINITY; n * n];
            for i in 0..n {
                dist[i * n + i] = 0.0;
                for j in i + 1..n {
                    if self.sees(points[i], points[j]) {
                        let d = points[i].distance(points[j]);
                        dist[i * n + j] = d;
                        dist[j * n + i] = d;
                    }
                }
            }
            CornerGraph { points, dist }
        })
    }

    /// Number of corners (vertices with exactly one blocked cell).
    #[must_use]
    pub fn corner_count(&self) -> usize {
        self.corner_graph().points.len()
    }

    /// The length of a shortest valid path from `s` to `t`, by Dijkstra on
    /// the visibility graph of the corners plus `s` and `t`. `None` if one of
    /// them is not a valid start or goal, or no path exists.
    #[must_use]
    pub fn optimum(&self, s: DVec2, t: DVec2) -> Option<f64> {
        let rs = self.endpoint_region(s)?;
        let rt = self.endpoint_region(t)?;
        if rs != rt {
            return None;
        }
        if s == t {
            return Some(0.0);
        }
        let g = self.corner_graph();
        let n = g.points.len();
        // Nodes: corners 0..n, s = n, t = n + 1.
        let s_edge: Vec<f64> = g
            .points
            .iter()
            .map(|&c| {
                if self.leg_ok(s, c) {
                    s.distance(c)
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let t_edge: Vec<f64> = g
            .points
            .iter()
            .map(|&c| {
                if self.leg_ok(c, t) {
                    c.distance(t)
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let direct = if self.leg_ok(s, t) {
            s.distance(t)
        } else {
            f64::INFINITY
        };
        let mut dist = vec![f64::INFINITY; n + 2];
        let mut done = vec![false; n + 2];
        dist[n] = 0.0;
        loop {
            let mut u = None;
            for (i, &d) in dist.iter().enumerate() {
                if !done[i] && d.is_finite() && u.is_none_or(|(_, bd)| d < bd) {
                    u = Some((i, d));
                }
            }
            let Some((u, du)) = u else { break };
            if u == n + 1 {
                return Some(du);
            }
            done[u] = true;
            let edge = |v: usize| -> f64 {
                match (u, v) {
                    (u, v) if u < n && v < n => g.dist[u * n + v],
                    (u, v) if u == n && v < n => s_edge[v],
                    (u, v) if u < n && v == n + 1 => t_edge[u],
                    (u, v) if u == n && v == n + 1 => direct,
                    _ => f64::INFINITY,
                }
            };
            for v in 0..n + 2 {
                if !done[v] {
                    let c = edge(v);
                    if du + c < dist[v] {
                        dist[v] = du + c;
                    }
                }
            }
        }
        None
    }

    /// The length of a shortest path from `s` to `t` made of grid edges and
    /// cell diagonals (8-connected), each a visible segment, never passing
    /// through a double corner (and leaving or reaching a start or goal on
    /// one through its south-east cell). A start or goal that is not a vertex
    /// is joined to the corners of its cells, and to the other end if they
    /// share a cell. `None` if unreachable or an endpoint is not valid.
    #[must_use]
    pub fn grid_optimum(&self, s: DVec2, t: DVec2) -> Option<f64> {
        let (s_cells, t_cells) = (self.endpoint_cells(s), self.endpoint_cells(t));
        if s_cells.is_empty() || t_cells.is_empty() {
            return None;
        }
        if s == t {
            return Some(0.0);
        }
        let w1 = self.w + 1;
        let vertices = (w1 * (self.h + 1)) as usize;
        // Nodes: vertices, then s and t when they are not vertices.
        let node = |p: DVec2, special: usize| {
            if is_vertex(p) {
                (p.y as i64 * w1 + p.x as i64) as usize
            } else {
                special
            }
        };
        let (sn, tn) = (node(s, vertices), node(t, vertices + 1));
        let point = |n: usize| match n {
            n if n == sn => s,
            n if n == tn => t,
            n => DVec2::new((n as i64 % w1) as f64, (n as i64 / w1) as f64),
        };
        // A vertex may be passed through unless it is a double corner; the
        // start and goal may be double corners (then the south-east rule,
        // in `leg_ok`, applies).
        let passable = |n: usize| {
            let p = point(n);
            n == sn || n == tn || !self.is_double_corner(p.x as i64, p.y as i64)
        };
        let corners = |cells: &[[i64; 2]]| -> Vec<usize> {
            let mut out = Vec::new();
            for c in cells {
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let n = ((c[1] + dy) * w1 + c[0] + dx) as usize;
                    if !out.contains(&n) {
                        out.push(n);
                    }
                }
            }
            out
        };
        let (s_corners, t_corners) = (corners(&s_cells), corners(&t_cells));
        let share_a_cell = s_cells.iter().any(|c| t_cells.contains(c));
        let mut dist = vec![f64::INFINITY; vertices + 2];
        let mut heap = BinaryHeap::new();
        dist[sn] = 0.0;
        heap.push(Key(0.0, sn));
        while let Some(Key(d, u)) = heap.pop() {
            if d > dist[u] {
                continue;
            }
            if u == tn {
                return Some(d);
            }
            if !passable(u) {
                continue;
            }
            let here = point(u);
            let mut next: Vec<usize> = Vec::with_capacity(9);
            if u >= vertices {
                next.extend(&s_corners);
                if tn >= vertices && share_a_cell {
                    next.push(tn);
                }
            } else {
                let (x, y) = (here.x as i64, here.y as i64);
                for (dx, dy) in lattice::EIGHT {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx >= 0 && ny >= 0 && nx <= self.w && ny <= self.h {
                        next.push((ny * w1 + nx) as usize);
                    }
                }
                if tn >= vertices && t_corners.contains(&u) {
                    next.push(tn);
                }
            }
            for n in next {
                let there = point(n);
                if !passable(n) || !self.leg_ok(here, there) {
                    continue;
                }
                let nd = d + here.distance(there);
                if nd < dist[n] {
                    dist[n] = nd;
                    heap.push(Key(nd, n));
                }
            }
        }
        None
    }

    // ----- the validator -------------------------------------------------

    /// Checks `path`, returned for a query from `start` to `goal`, against
    /// every rule of `SPEC.md`.
    ///
    /// # Errors
    ///
    /// A description of the first rule the path breaks.
    pub fn validate(
        &self,
        start: DVec2,
        goal: DVec2,
        path: &Path,
        expect: Expect,
    ) -> Result<(), String> {
        let w = &path.waypoints;
        let (Some(&first), Some(&last)) = (w.first(), w.last()) else {
            return Err("the path has no waypoints".into());
        };

        // The start: kept if valid, else moved to a nearest valid point.
        if self.endpoint_cells(start).is_empty() {
            if path.start_moved_from != Some(start) {
                return Err(format!(
                    "the start {start:?} is not a valid point, so start_moved_from should be Some({start:?}), \
                     not {:?}",
                    path.start_moved_from
                ));
            }
            self.check_nearest(start, first, None, "the moved start")?;
        } else {
            if path.start_moved_from.is_some() {
                return Err(format!(
                    "the start {start:?} is valid but start_moved_from is {:?}",
                    path.start_moved_from
                ));
            }
            if first != start {
                return Err(format!(
                    "the first waypoint {first:?} is not the start {start:?}"
                ));
            }
        }
        let Some(region) = self.endpoint_region(first) else {
            return Err(format!("the first waypoint {first:?} is not a valid start"));
        };

        // The goal: reached if in the start's region, else the fallback target.
        if self.endpoint_region(goal) == Some(region) {
            if path.kind != PathKind::Found {
                return Err(format!(
                    "the goal is reachable but the path is {:?}",
                    path.kind
                ));
            }
            if last != goal {
                return Err(format!(
                    "the last waypoint {last:?} is not the goal {goal:?}"
                ));
            }
        } else {
            match path.kind {
                PathKind::Fallback { requested_goal } if requested_goal == goal => {}
                other => {
                    return Err(format!(
                        "the goal is unreachable from the start's region, so the path should be \
                         Fallback {{ requested_goal: {goal:?} }}, not {other:?}"
                    ));
                }
            }
            if self.endpoint_region(last) != Some(region) {
                return Err(format!(
                    "the fallback end {last:?} is not a valid point of the start's region"
                ));
            }
            self.check_nearest(goal, last, Some(region), "the fallback end")?;
        }

        // Shape.
        if first == last {
            if w.len() != 1 || path.length != 0.0 {
                return Err(format!(
                    "start and end coincide: the path must be the single point, length 0 (got {} points, length {})",
                    w.len(),
                    path.length
                ));
            }
            return Ok(());
        }
        if w.len() < 2 {
            return Err("a path between two different points needs two waypoints".into());
        }
        for (i, pair) in w.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            if a == b {
                return Err(format!("waypoints {i} and {} coincide at {a:?}", i + 1));
            }
            match self.visible(a, b) {
                Some(true) => {}
                Some(false) => return Err(format!("leg {i}: {a:?} -> {b:?} is not visible")),
                None => {
                    return Err(format!(
                        "leg {i}: {a:?} -> {b:?} has points the exact check cannot read"
                    ));
                }
            }
        }
        // The south-east rule at a start or goal on a double corner.
        if self.on_double_corner(first) && !heads_south_east(first, w[1]) {
            return Err(format!(
                "the start {first:?} is on a double corner: the path must leave through its south-east cell, \
                 but it heads to {:?}",
                w[1]
            ));
        }
        if self.on_double_corner(last) && !heads_south_east(last, w[w.len() - 2]) {
            return Err(format!(
                "the goal {last:?} is on a double corner: the path must arrive through its south-east cell, \
                 but it comes from {:?}",
                w[w.len() - 2]
            ));
        }
        // Interior waypoints on double corners must not cross between the free sides.
        for i in 1..w.len() - 1 {
            let p = w[i];
            if self.on_double_corner(p) {
                let (q1, q2) = (self.free_side(p, w[i - 1]), self.free_side(p, w[i + 1]));
                if q1.is_none() || q1 != q2 {
                    return Err(format!(
                        "waypoint {i} {p:?} is a double corner and the path crosses it \
                         (from the {q1:?} side to the {q2:?} side)"
                    ));
                }
            }
        }
        // Length.
        let sum: f64 = w.windows(2).map(|p| p[0].distance(p[1])).sum();
        if !close(sum, path.length) {
            return Err(format!(
                "path.length is {} but the polyline is {sum} long",
                path.length
            ));
        }
        if expect.grid_moves {
            self.check_grid_moves(w)?;
        }
        Ok(())
    }

    /// `got` must be a closest valid point to `target` (among the cells of
    /// `region`, or of every region): at the reference distance, or within
    /// [`NUDGE`] of a closest point that is a double corner belonging to
    /// another cell (the crate steps off such a point into its own cell).
    fn check_nearest(
        &self,
        target: DVec2,
        got: DVec2,
        region: Option<u32>,
        what: &str,
    ) -> Result<(), String> {
        let Some(near) = self.nearest(target, region) else {
            return Err(format!("{what}: the reference finds no free cell at all"));
        };
        let valid = |q: DVec2| {
            self.endpoint_region(q)
                .is_some_and(|r| region.is_none_or(|want| want == r))
        };
        if !valid(got) {
            return Err(format!("{what} {got:?} is not a valid point of the region"));
        }
        let d = got.distance(target);
        if (d - near.dist).abs() <= 1e-9 {
            return Ok(());
        }
        let all_invalid = near.points.iter().all(|&q| !valid(q));
        let next_to_one = near
            .points
            .iter()
            .any(|&q| q.distance(got) <= NUDGE + 1e-12);
        if all_invalid && next_to_one && d <= near.dist + NUDGE + 1e-9 {
            return Ok(());
        }
        Err(format!(
            "{what} {got:?} is {d} from {target:?}, but the closest point is {} away (at {:?})",
            near.dist, near.points
        ))
    }

    #[expect(clippy::float_cmp, reason = "vertices are compared exactly")]
    fn check_grid_moves(&self, w: &[DVec2]) -> Result<(), String> {
        let last_leg = w.len() - 2;
        for (i, pair) in w.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            let (va, vb) = (is_vertex(a), is_vertex(b));
            if va && vb {
                let d = (b - a).abs();
                if d.x > 1.0 || d.y > 1.0 {
                    return Err(format!(
                        "leg {i}: {a:?} -> {b:?} is not a grid edge or cell diagonal"
                    ));
                }
                continue;
            }
            let from_start = i == 0 && !va;
            let to_goal = i == last_leg && !vb;
            if !from_start && !to_goal {
                return Err(format!(
                    "leg {i}: {a:?} -> {b:?} leaves the vertices in the middle of an A* path"
                ));
            }
            let ok = if va || vb {
                let (p, v) = if va { (b, a) } else { (a, b) };
                self.endpoint_cells(p).iter().any(|c| {
                    let (cx, cy) = (c[0] as f64, c[1] as f64);
                    (v.x == cx || v.x == cx + 1.0) && (v.y == cy || v.y == cy + 1.0)
                })
            } else {
                let cb = self.endpoint_cells(b);
                self.endpoint_cells(a).iter().any(|c| cb.contains(c))
            };
            if !ok {
                return Err(format!(
                    "leg {i}: {a:?} -> {b:?} joins a non-vertex endpoint to a point that is not a corner of its cells"
                ));
            }
        }
        Ok(())
    }

    // ----- reports -------------------------------------------------------

    /// The grid as a picture for [`Grid::from_ascii`].
    #[must_use]
    pub fn picture(&self) -> String {
        let mut s = String::new();
        for y in 0..self.h {
            for x in 0..self.w {
                s.push(if self.free(x, y) { '.' } else { '#' });
            }
            s.push('\n');
        }
        s
    }

    /// A report of a failed query: the grid, the query and the path, enough
    /// to reproduce it.
    #[must_use]
    pub fn report(
        &self,
        what: &str,
        start: DVec2,
        goal: DVec2,
        result: &Result<Path, PlanError>,
    ) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{what}");
        let _ = writeln!(s, "grid {} x {} (Grid::from_ascii):", self.w, self.h);
        let mut header = String::from("     ");
        for x in 0..self.w {
            header.push(char::from(b'0' + (x % 10) as u8));
        }
        let _ = writeln!(s, "{header}");
        for (y, row) in self.picture().lines().enumerate() {
            let _ = writeln!(s, "{y:>3}  {row}");
        }
        let _ = writeln!(s, "start: DVec2::new({:?}, {:?})", start.x, start.y);
        let _ = writeln!(s, "goal:  DVec2::new({:?}, {:?})", goal.x, goal.y);
        match result {
            Ok(p) => {
                let _ = writeln!(
                    s,
                    "path: kind {:?}, length {:?}, start_moved_from {:?}",
                    p.kind, p.length, p.start_moved_from
                );
                let pts: Vec<String> = p
                    .waypoints
                    .iter()
                    .map(|q| format!("({:?}, {:?})", q.x, q.y))
                    .collect();
                let _ = writeln!(s, "waypoints: {}", pts.join(" "));
                let ref_opt = self.optimum(p.start(), p.end());
                let _ = writeln!(s, "reference optimum between its ends: {ref_opt:?}");
            }
            Err(e) => {
                let _ = writeln!(s, "error: {e:?}");
            }
        }
        s
    }
}

/// Whether a leg from `p` towards `q` is allowed if `p` is a start or goal:
/// anything, unless `p` is on a double corner, where `q - p` must point into
/// the south-east quadrant.
fn se_ok(r: &Reference, p: DVec2, q: DVec2) -> bool {
    !r.on_double_corner(p) || heads_south_east(p, q)
}

fn heads_south_east(from: DVec2, to: DVec2) -> bool {
    to.x >= from.x && to.y >= from.y
}

/// A free quadrant of a double corner (screen directions, y down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quadrant {
    NW,
    NE,
    SW,
    SE,
}

impl Reference {
    /// Which free closed quadrant of the double corner `v` the point `q`
    /// (different from `v`) lies in; `None` if it lies in a blocked one.
    fn free_side(&self, v: DVec2, q: DVec2) -> Option<Quadrant> {
        let d = q - v;
        let [nw, ..] = self.around(v.x as i64, v.y as i64);
        if nw {
            if d.x <= 0.0 && d.y <= 0.0 {
                Some(Quadrant::NW)
            } else if d.x >= 0.0 && d.y >= 0.0 {
                Some(Quadrant::SE)
            } else {
                None
            }
        } else if d.x >= 0.0 && d.y <= 0.0 {
            Some(Quadrant::NE)
        } else if d.x <= 0.0 && d.y >= 0.0 {
            Some(Quadrant::SW)
        } else {
            None
        }
    }
}

/// Heap key: smallest distance first.
struct Key(f64, usize);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Distance from `p` to the closed square of cell `(x, y)`.
#[must_use]
pub fn cell_distance(p: DVec2, x: i64, y: i64) -> f64 {
    let dx = (x as f64 - p.x).max(p.x - (x + 1) as f64).max(0.0);
    let dy = (y as f64 - p.y).max(p.y - (y + 1) as f64).max(0.0);
    dx.hypot(dy)
}

/// Distance from grid point `p` to the nearest blocked cell of `grid` or to
/// its outside, looking `within` cells around `p` (farther walls are not
/// seen).
#[must_use]
pub fn wall_distance(grid: &Grid, p: DVec2, within: i64) -> f64 {
    let (w, h) = (f64::from(grid.width()), f64::from(grid.height()));
    let mut best = p.x.min(w - p.x).min(p.y).min(h - p.y);
    let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
    for y in cy - within..=cy + within {
        for x in cx - within..=cx + within {
            if grid.contains_xy(x, y) && !grid.is_free_xy(x, y) {
                best = best.min(cell_distance(p, x, y));
            }
        }
    }
    best
}

/// The least distance from a point of segment `a b` to the closed square
/// of cell `(x, y)`, and a point of the segment at that distance.
fn segment_cell_distance(a: DVec2, b: DVec2, x: i64, y: i64) -> (f64, DVec2) {
    let (lo, hi) = (
        DVec2::new(x as f64, y as f64),
        DVec2::new(x as f64 + 1.0, y as f64 + 1.0),
    );
    // Clipped to the square (Liang-Barsky): a point inside is at distance 0.
    let d = b - a;
    let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
    let mut meets = true;
    for (p, q) in [
        (-d.x, a.x - lo.x),
        (d.x, hi.x - a.x),
        (-d.y, a.y - lo.y),
        (d.y, hi.y - a.y),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                meets = false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if meets && t0 <= t1 {
        return (0.0, a + d * t0);
    }
    // Apart, two convex shapes are nearest at a corner of one of them.
    let mut best = (cell_distance(a, x, y), a);
    let at_b = cell_distance(b, x, y);
    if at_b < best.0 {
        best = (at_b, b);
    }
    let len2 = d.length_squared();
    for corner in [lo, DVec2::new(hi.x, lo.y), hi, DVec2::new(lo.x, hi.y)] {
        let t = if len2 == 0.0 {
            0.0
        } else {
            ((corner - a).dot(d) / len2).clamp(0.0, 1.0)
        };
        let on = a + d * t;
        let dist = on.distance(corner);
        if dist < best.0 {
            best = (dist, on);
        }
    }
    best
}

/// The least distance from a point of the path through `waypoints` to a
/// blocked cell of `grid` or to its edge, and a point at that distance,
/// exactly (a path of one waypoint is that point; an empty one is
/// infinitely far from every wall). Blocked cells more than `within` cells
/// (along either axis) from every point of the path are not looked at.
#[must_use]
pub fn path_clearance(grid: &Grid, waypoints: &[DVec2], within: i64) -> (f64, DVec2) {
    let mut worst = (
        f64::INFINITY,
        waypoints.first().copied().unwrap_or(DVec2::NAN),
    );
    if let [p] = waypoints {
        return (wall_distance(grid, *p, within), *p);
    }
    let (w, h) = (f64::from(grid.width()), f64::from(grid.height()));
    for pair in waypoints.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        // The grid's edge: nearest at an end of the segment.
        for p in [a, b] {
            let edge = p.x.min(w - p.x).min(p.y).min(h - p.y);
            if edge < worst.0 {
                worst = (edge, p);
            }
        }
        // Row by row, the cells within `within` of the segment's part that
        // crosses the row's band.
        let reach = within as f64;
        let (y0, y1) = (
            (a.y.min(b.y) - reach).floor() as i64 - 1,
            (a.y.max(b.y) + reach).floor() as i64 + 1,
        );
        for y in y0..=y1 {
            let (band_lo, band_hi) = (y as f64 - reach - 1.0, y as f64 + 1.0 + reach + 1.0);
            let (mut lo_x, mut hi_x) = (f64::INFINITY, f64::NEG_INFINITY);
            let mut take = |p: DVec2| {
                lo_x = lo_x.min(p.x);
                hi_x = hi_x.max(p.x);
            };
            if a.y == b.y {
                if a.y >= band_lo && a.y <= band_hi {
                    take(a);
                    take(b);
                }
            } else {
                let (t0, t1) = ((band_lo - a.y) / (b.y - a.y), (band_hi - a.y) / (b.y - a.y));
                let (t0, t1) = (t0.min(t1).max(0.0), t0.max(t1).min(1.0));
                if t0 <= t1 {
                    take(a.lerp(b, t0));
                    take(a.lerp(b, t1));
                }
            }
            if lo_x > hi_x {
                continue;
            }
            let (x0, x1) = (
                (lo_x - reach).floor() as i64 - 1,
                (hi_x + reach).floor() as i64 + 1,
            );
            for x in x0..=x1 {
                if grid.contains_xy(x, y) && !grid.is_free_xy(x, y) {
                    let found = segment_cell_distance(a, b, x, y);
                    if found.0 < worst.0 {
                        worst = found;
                    }
                }
            }
        }
    }
    worst
}

/// Whether every point of the path through `waypoints` (see
/// [`path_clearance`]) keeps `radius` (less 1e-9) from every
/// blocked cell of `grid` and from its edge; if not, the closest point and
/// its distance.
pub fn keeps_radius(grid: &Grid, waypoints: &[DVec2], radius: f64) -> Result<(), String> {
    let (least, at) = path_clearance(grid, waypoints, radius.ceil() as i64 + 2);
    if least >= radius - 1e-9 {
        Ok(())
    } else {
        Err(format!(
            "the path passes {at}, {least} from a wall (radius {radius})"
        ))
    }
}
