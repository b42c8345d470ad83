//! The wedge of directions a new root sends successors into, and the
//! corners where a taut path may turn (which give a corner its wedge).

use core::cmp::Ordering;

use bevy_math::DVec2;

use super::Anya;
use crate::search::anya::node::orient;

/// The directions a new root sends successors into.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wedge {
    /// Every direction (a start that is not on a double corner).
    Full,
    /// Right, down and everything between (a start on a double corner).
    SouthEast,
    /// Directions `v` with `s cross(e, v) >= 0` and `s cross(v, f) >= 0`,
    /// where `e = c - p` continues the incoming segment and `f` runs along
    /// the blocked cell's edge.
    Turn {
        /// The previous root.
        p: DVec2,
        /// `+1` or `-1`: which way the path turns.
        s: i8,
        /// Unit axis direction of the blocked cell's edge.
        f: [i8; 2],
    },
}

/// The sign of an ordering as `-1`, `0` or `+1`.
#[inline]
pub(super) fn sgn(o: Ordering) -> i8 {
    o as i8
}

/// The sign of `a - b` as `-1`, `0` or `+1` (`a`, `b` finite).
#[inline]
pub(super) fn sgn_diff(a: f64, b: f64) -> i8 {
    i8::from(a > b) - i8::from(a < b)
}

/// The sign of `v` as `-1`, `0` or `+1` (`v` finite).
#[inline]
fn sgn_f(v: f64) -> i8 {
    sgn_diff(v, 0.0)
}

impl Wedge {
    /// Whether the direction from root `c` to point `q` is in the wedge.
    pub(super) fn contains(self, c: DVec2, q: DVec2) -> bool {
        match self {
            Wedge::Full => true,
            Wedge::SouthEast => q.x >= c.x && q.y >= c.y,
            Wedge::Turn { p, s, f } => {
                // cross(c - p, q - c) = cross(c - p, q - p).
                if sgn(orient(p, c, q)) * s < 0 {
                    return false;
                }
                // cross(q - c, f) for an axis-aligned f.
                let cross = if f[0] == 0 {
                    sgn_f(q.x - c.x) * f[1]
                } else {
                    -sgn_f(q.y - c.y) * f[0]
                };
                cross * s >= 0
            }
        }
    }

    /// Whether the wedge from root `c` may reach the grid line next to `c`
    /// in direction `dir` (`false` only when a turn's wedge points away from
    /// it: the direction tests of [`Anya::cone_from_root`], before any
    /// scan).
    #[inline]
    pub(super) fn may_reach(self, c: DVec2, dir: i8) -> bool {
        match self {
            Wedge::Turn { p, s, f } => {
                !((c.y == p.y && sgn_diff(c.x, p.x) * dir * s < 0)
                    || (f[1] == 0 && -dir * f[0] * s < 0))
            }
            _ => true,
        }
    }

    /// [`Wedge::contains`] for the direction `(dir, 0)` along root `c`'s
    /// grid line, without arithmetic on points.
    #[inline]
    pub(super) fn contains_along_x(self, c: DVec2, dir: i8) -> bool {
        match self {
            Wedge::Full => true,
            Wedge::SouthEast => dir > 0,
            Wedge::Turn { p, s, f } => {
                // cross(c - p, (dir, 0)) = -dir (c.y - p.y), exact in sign.
                if -dir * sgn_diff(c.y, p.y) * s < 0 {
                    return false;
                }
                // cross((dir, 0), f) = dir f.y.
                dir * f[1] * s >= 0
            }
        }
    }
}

/// For each mask of four cells' free flags (see [`Grid::vertex_mask`]),
/// the bit of the one blocked cell when exactly one is blocked, else 4.
///
/// [`Grid::vertex_mask`]: crate::grid::Grid::vertex_mask
const LONE_BLOCKED: [u8; 16] = {
    let mut table = [4u8; 16];
    let mut bit = 0;
    while bit < 4 {
        table[0xF ^ (1 << bit)] = bit as u8;
        bit += 1;
    }
    table
};

impl Anya<'_> {
    /// The free flags of the four cells around vertex `(x, y)` (see
    /// [`Grid::vertex_mask`]), read from the grid's precomputed vertex info
    /// when the vertex is on the grid (always, for interval endpoints).
    ///
    /// [`Grid::vertex_mask`]: crate::grid::Grid::vertex_mask
    #[expect(
        clippy::inline_always,
        reason = "measured: plain `inline` left it a call on the hottest path"
    )]
    #[inline(always)]
    fn mask(&self, x: i64, y: i64) -> u8 {
        let (w, h) = (u64::from(self.grid.width()), u64::from(self.grid.height()));
        // One unsigned comparison per axis: negative values wrap above.
        if x as u64 <= w && y as u64 <= h {
            (self.grid.vertex_info(x, y) >> 8) as u8
        } else {
            self.grid.vertex_mask(x, y)
        }
    }

    /// Whether corner candidate `v` is a vertex where a taut path from `r`
    /// may turn: exactly one of its cells is blocked, the incoming segment
    /// neither points into that cell nor runs along its edge, and the cell is
    /// strictly on one side of the incoming line. Returns the wedge.
    #[expect(
        clippy::inline_always,
        reason = "measured: most calls end at the first test, cheaper than a call"
    )]
    #[inline(always)]
    pub(super) fn taut_turn(&self, v: [i64; 2], r: DVec2) -> Option<Wedge> {
        // Quadrant of the blocked cell: 0 = (x-1, y-1), 1 = (x, y-1),
        // 2 = (x-1, y), 3 = (x, y). Most candidates are no corner: this
        // test stays inline, the rest is a call.
        let blocked = LONE_BLOCKED[usize::from(self.mask(v[0], v[1]) & 0xF)];
        if blocked > 3 {
            return None;
        }
        Self::corner_wedge(v, r, blocked)
    }

    /// [`Anya::taut_turn`] at a vertex whose only blocked cell is in
    /// quadrant `blocked`.
    #[inline(never)]
    fn corner_wedge(v: [i64; 2], r: DVec2, blocked: u8) -> Option<Wedge> {
        let sx: i8 = if blocked & 1 == 1 { 1 } else { -1 };
        let sy: i8 = if blocked & 2 == 2 { 1 } else { -1 };
        let vp = Self::vpoint(v[0], v[1]);
        let (dx, dy) = (vp.x - r.x, vp.y - r.y);
        let (ex, ey) = (sgn_f(dx), sgn_f(dy));
        // Into the blocked cell, or along one of its edges.
        if (ey == sy && (ex == sx || ex == 0)) || (ey == 0 && ex == sx) {
            return None;
        }
        // The side of the incoming line the cell is on: the sign of
        // cross(v - r, centre - v) = (sy dx - sx dy) / 2. The differences
        // are exact for a vertex root (almost always); otherwise each is
        // within one rounding of the truth, and a result within the bound
        // of that error is decided exactly.
        let t = f64::from(sy) * dx - f64::from(sx) * dy;
        let s = if t.abs() > 1e-15 * (dx.abs() + dy.abs()) {
            sgn_f(t)
        } else {
            let centre = DVec2::new(vp.x + 0.5 * f64::from(sx), vp.y + 0.5 * f64::from(sy));
            sgn(orient(r, vp, centre))
        };
        if s == 0 {
            return None;
        }
        // Rotating from e towards the cell, the first of its two edges met is
        // the one with the cell on its `s` side.
        let f = if sx * sy == s { [sx, 0] } else { [0, sy] };
        Some(Wedge::Turn { p: r, s, f })
    }
}
