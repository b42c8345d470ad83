//! Start and goal points on a grid: which cells they may use, their region,
//! and the nearest valid point to an invalid one.

use bevy_math::DVec2;

use crate::grid::{Grid, RegionId, cell_span, next_bit, prev_bit};

/// A valid start or goal point.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Endpoint {
    /// The point, in grid coordinates.
    pub p: DVec2,
    /// The vertex, when `p` is an integer point.
    pub vertex: Option<[i64; 2]>,
    /// The free cells the path may leave or arrive through: every free cell
    /// whose closed square contains `p`, or only the south-east one on a
    /// double corner. One to four cells; unused slots repeat the first.
    pub cells: [[i64; 2]; 4],
    /// How many of `cells` are used.
    pub cell_count: usize,
    /// On a double corner: segments at `p` must point into the south-east
    /// quadrant (both direction components `>= 0`).
    pub restricted: bool,
    /// The region of the cells.
    pub region: RegionId,
}

impl Endpoint {
    /// Resolves `p` into an endpoint, or `None` if it is not a valid start
    /// or goal (outside, not traversable, or a double corner whose
    /// south-east cell is blocked).
    pub(crate) fn resolve(grid: &Grid, p: DVec2) -> Option<Endpoint> {
        if !grid.contains_point(p) {
            return None;
        }
        let vertex = (p.x.fract() == 0.0 && p.y.fract() == 0.0).then_some([p.x as i64, p.y as i64]);
        let mut cells = [[0i64; 2]; 4];
        let mut cell_count = 0;
        let mut restricted = false;
        if let Some([x, y]) = vertex
            && grid.is_double_corner(x, y)
        {
            if !grid.is_free_xy(x, y) {
                return None;
            }
            cells[0] = [x, y];
            cell_count = 1;
            restricted = true;
        } else {
            for cy in cell_span(p.y).into_iter().flatten() {
                for cx in cell_span(p.x).into_iter().flatten() {
                    if grid.is_free_xy(cx, cy) {
                        cells[cell_count] = [cx, cy];
                        cell_count += 1;
                    }
                }
            }
        }
        if cell_count == 0 {
            return None;
        }
        for i in cell_count..4 {
            cells[i] = cells[0];
        }
        let region = grid.region(cells[0][0], cells[0][1])?;
        Some(Endpoint {
            p,
            vertex,
            cells,
            cell_count,
            restricted,
            region,
        })
    }

    /// The cells the path may use at this point.
    pub(crate) fn cells(&self) -> &[[i64; 2]] {
        &self.cells[..self.cell_count]
    }

    /// Whether a segment may leave (or arrive at) this point heading from it
    /// towards `other`.
    #[inline]
    pub(crate) fn allows_towards(&self, other: DVec2) -> bool {
        !self.restricted || (other.x >= self.p.x && other.y >= self.p.y)
    }

    /// Whether `cell` is one of this endpoint's cells.
    pub(crate) fn has_cell(&self, cell: [i64; 2]) -> bool {
        self.cells().contains(&cell)
    }
}

/// The nearest valid endpoint to `p` (Euclidean), among the free cells of
/// `region` (or of any region when `None`): the minimum over those cells of
/// `p` clamped into the cell's square, as `SPEC.md` defines the fallback
/// target. `None` if there is no such cell.
///
/// When that point is a vertex that would belong to another cell (a double
/// corner, whose points belong to the south-east cell), it is moved 1/1024 of
/// a cell into the chosen cell so that it is valid. The cell is chosen by the
/// distance before that move, the fallback target's own, and an equally
/// close point that needs no move wins the tie.
pub(crate) fn nearest_valid_point(
    grid: &Grid,
    p: DVec2,
    region: Option<RegionId>,
) -> Option<DVec2> {
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    let cx = (p.x.floor().clamp(0.0, (w - 1) as f64)) as i64;
    let cy = (p.y.floor().clamp(0.0, (h - 1) as f64)) as i64;
    // (distance, whether the point was moved, the point)
    let mut best: Option<(f64, bool, DVec2)> = None;
    let consider = |x: i64, y: i64, best: &mut Option<(f64, bool, DVec2)>| {
        let clamped = DVec2::new(
            p.x.clamp(x as f64, (x + 1) as f64),
            p.y.clamp(y as f64, (y + 1) as f64),
        );
        let q = owned_point(grid, [x, y], clamped);
        let (d, moved) = (clamped.distance(p), q != clamped);
        if best.is_none_or(|(bd, bmoved, _)| d < bd || (d == bd && bmoved && !moved)) {
            *best = Some((d, moved, q));
        }
    };
    // Rows by increasing distance from p; in each row, the nearest wanted
    // cell on either side of column cx, found by scanning runs of free cells
    // a word at a time (a run of free cells lies in one region).
    for k in 0..(h.max(cy + 1)) {
        let mut any_row = false;
        for y in [cy - k, cy + k] {
            if !(0..h).contains(&y) || (k == 0 && y != cy - k) {
                continue;
            }
            let dy = (y as f64 - p.y).max(p.y - (y + 1) as f64).max(0.0);
            // (Bounds computed as `consider` computes distances, so that an
            // equally close cell is never skipped.)
            if best.is_some_and(|(d, _, _)| DVec2::new(0.0, dy).length() > d) {
                continue;
            }
            any_row = true;
            let words = grid.row_words(y);
            let wanted = |x: i64| region.is_none_or(|r| grid.region(x, y) == Some(r));
            let too_far = |x: i64, best: &Option<(f64, bool, DVec2)>| {
                let dx = (x as f64 - p.x).max(p.x - (x + 1) as f64).max(0.0);
                best.is_some_and(|(d, _, _)| DVec2::new(dx, dy).length() > d)
            };
            // Rightwards from cx (stored bit of cell x is x + 1).
            let mut bit = cx as usize + 1;
            while let Some(start) = next_bit(words, bit, true) {
                let x = start as i64 - 1;
                if x >= w || too_far(x, &best) {
                    break;
                }
                if wanted(x) {
                    consider(x, y, &mut best);
                    break;
                }
                bit = next_bit(words, start, false).unwrap_or(usize::MAX);
                if bit == usize::MAX {
                    break;
                }
            }
            // Leftwards from cx - 1.
            let mut bit = cx as usize; // cell cx - 1
            while bit >= 1 {
                let Some(end) = prev_bit(words, bit, true) else {
                    break;
                };
                let x = end as i64 - 1;
                if x < 0 || too_far(x, &best) {
                    break;
                }
                if wanted(x) {
                    consider(x, y, &mut best);
                    break;
                }
                match prev_bit(words, end, false) {
                    Some(b) => bit = b,
                    None => break,
                }
            }
        }
        if !any_row && k > 0 && (cy - k < 0 || best.is_some()) && (cy + k >= h || best.is_some()) {
            break;
        }
    }
    best.map(|(_, _, q)| q)
}

/// `q`, a point of free `cell`'s square, or — if `q` is a double corner that
/// belongs to another cell (its south-east one) — `q` moved 1/1024 of a cell
/// diagonally into `cell`, so that it is a valid point of `cell`.
pub(crate) fn owned_point(grid: &Grid, cell: [i64; 2], q: DVec2) -> DVec2 {
    let (x, y) = (q.x as i64, q.y as i64);
    let on_vertex = q.x.fract() == 0.0 && q.y.fract() == 0.0;
    if !on_vertex || !grid.is_double_corner(x, y) || cell == [x, y] {
        return q;
    }
    let step = |v: i64, c: i64| if v == c { 1.0 / 1024.0 } else { -1.0 / 1024.0 };
    q + DVec2::new(step(x, cell[0]), step(y, cell[1]))
}
