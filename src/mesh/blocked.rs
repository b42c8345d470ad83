//! The blocked cells of a window of the grid, a bit each, row by row: read from the grid a word at a time, and scanned a word at a time for the runs of cell edges between free and blocked cells and the obstacles' convex corners.

use crate::grid::{Grid, next_bit};

/// The blocked cells `x0..x0 + width` x `y0..y0 + height` of a grid (cells
/// outside the grid count as blocked).
pub(super) struct BlockedBits {
    x0: i64,
    y0: i64,
    width: i64,
    height: i64,
    /// Words per row.
    stride: usize,
    /// Bit `i` of row `j` (word `j * stride + i / 64`) is cell
    /// `(x0 + i, y0 + j)`, set when blocked. Bits past `width` are 0.
    words: Vec<u64>,
}

/// Calls `f(start, end)` for each maximal run `start..end` of set bits of
/// `mask`.
fn for_each_run(mask: &[u64], mut f: impl FnMut(usize, usize)) {
    let bits = mask.len() * 64;
    let mut i = 0;
    while let Some(start) = next_bit(mask, i, true) {
        let end = next_bit(mask, start, false).unwrap_or(bits);
        f(start, end);
        i = end;
    }
}

/// Calls `f(i)` for each set bit `i` of `mask`.
fn for_each_bit(mask: &[u64], mut f: impl FnMut(usize)) {
    for (w, &word) in mask.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            f(w * 64 + word.trailing_zeros() as usize);
            word &= word - 1;
        }
    }
}

impl BlockedBits {
    /// The window `x0..x0 + width` x `y0..y0 + height` of `grid`.
    pub(super) fn new(grid: &Grid, x0: i64, y0: i64, width: i64, height: i64) -> Self {
        let stride = (width.max(0) as usize).div_ceil(64);
        let mut words = Vec::with_capacity(stride * height.max(0) as usize);
        let (gw, gh) = (i64::from(grid.width()), i64::from(grid.height()));
        for y in y0..y0 + height {
            let inside = (0..gh).contains(&y);
            let row = grid.row_words(y.clamp(-1, gh));
            for w in 0..stride {
                // Cell `x` is stored bit `x + 1`, set when free; bits past
                // the row's words read as 0 (blocked).
                let first = x0 + 64 * w as i64 + 1;
                let free = if !inside || first > gw || first <= -64 {
                    0
                } else if first >= 0 {
                    let (k, s) = ((first / 64) as usize, (first % 64) as u32);
                    let lo = row.get(k).copied().unwrap_or(0) >> s;
                    if s == 0 {
                        lo
                    } else {
                        lo | row.get(k + 1).copied().unwrap_or(0) << (64 - s)
                    }
                } else {
                    row.first().copied().unwrap_or(0) << (-first) as u32
                };
                let bits = (width - 64 * w as i64).min(64);
                let valid = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                words.push(!free & valid);
            }
        }
        BlockedBits {
            x0,
            y0,
            width,
            height,
            stride,
            words,
        }
    }

    /// Whether cell `(x, y)` lies in the window.
    #[inline]
    pub(super) fn holds(&self, x: i64, y: i64) -> bool {
        x >= self.x0 && y >= self.y0 && x < self.x0 + self.width && y < self.y0 + self.height
    }

    /// Whether cell `(x, y)`, in the window, is blocked.
    #[inline]
    pub(super) fn blocked(&self, x: i64, y: i64) -> bool {
        debug_assert!(self.holds(x, y));
        let (i, j) = ((x - self.x0) as usize, (y - self.y0) as usize);
        self.words[j * self.stride + i / 64] >> (i % 64) & 1 == 1
    }

    /// The words of the window's row `y`.
    #[inline]
    fn row(&self, y: i64) -> &[u64] {
        let j = (y - self.y0) as usize;
        &self.words[j * self.stride..(j + 1) * self.stride]
    }

    /// Bits `xs.0 - x0 ..= xs.1 - x0` of a row-long mask set, the others
    /// clear, into `out`.
    fn span(&self, xs: (i64, i64), out: &mut Vec<u64>) {
        out.clear();
        let (lo, hi) = ((xs.0 - self.x0) as usize, (xs.1 - self.x0) as usize);
        for w in 0..self.stride {
            let (a, b) = (w * 64, w * 64 + 63);
            let word = if hi < a || lo > b {
                0
            } else {
                let from = lo.max(a) - a;
                let to = hi.min(b) - a;
                (u64::MAX >> (63 - to)) & (u64::MAX << from)
            };
            out.push(word);
        }
    }

    /// `row` shifted by one cell: bit `i` of the result is bit `i - 1` of
    /// `row` (the cell to the west), into `out`.
    fn west_of(row: &[u64], out: &mut Vec<u64>) {
        out.clear();
        let mut carry = 0;
        for &word in row {
            out.push(word << 1 | carry);
            carry = word >> 63;
        }
    }

    /// Each maximal run of edges between a blocked and a free cell on the
    /// horizontal lines `ys.0..=ys.1` (line `y` between rows `y - 1` and
    /// `y`), along the cells `xs.0..xs.1`: `f(y, start, end, sign)` for the
    /// cells `start..end`, `sign` 1 where the blocked cells lie in row
    /// `y - 1`, -1 where they lie in row `y`. The window holds the rows
    /// `ys.0 - 1..=ys.1` and the cells `xs`.
    pub(super) fn horizontal_runs(
        &self,
        xs: (i64, i64),
        ys: (i64, i64),
        mut f: impl FnMut(i64, i64, i64, i64),
    ) {
        let mut cells = Vec::with_capacity(self.stride);
        let mut mask = Vec::with_capacity(self.stride);
        if xs.1 <= xs.0 {
            return;
        }
        self.span((xs.0, xs.1 - 1), &mut cells);
        for y in ys.0..=ys.1 {
            let (above, here) = (self.row(y - 1), self.row(y));
            for (sign, pick) in [(1, false), (-1, true)] {
                mask.clear();
                mask.extend((0..self.stride).map(|w| {
                    let (blocked, free) = if pick {
                        (here[w], above[w])
                    } else {
                        (above[w], here[w])
                    };
                    blocked & !free & cells[w]
                }));
                for_each_run(&mask, |a, b| {
                    f(y, self.x0 + a as i64, self.x0 + b as i64, sign);
                });
            }
        }
    }

    /// Each maximal run of edges between a blocked and a free cell on the
    /// vertical lines `xs.0..=xs.1` (line `x` between columns `x - 1` and
    /// `x`), along the cells `ys.0..ys.1`: `f(x, start, end, sign)` for the
    /// cells `start..end`, `sign` 1 where the blocked cells lie in column
    /// `x - 1`, -1 where they lie in column `x`. The window holds the
    /// columns `xs.0 - 1..=xs.1` and the rows `ys`.
    pub(super) fn vertical_runs(
        &self,
        xs: (i64, i64),
        ys: (i64, i64),
        mut f: impl FnMut(i64, i64, i64, i64),
    ) {
        let mut lines = Vec::with_capacity(self.stride);
        self.span(xs, &mut lines);
        let mut west = Vec::with_capacity(self.stride);
        // Per sign: the lines with a run under way, and where each began.
        let mut open = [vec![0u64; self.stride], vec![0u64; self.stride]];
        let mut began = [vec![0i64; self.stride * 64], vec![0i64; self.stride * 64]];
        let mut now = vec![0u64; self.stride];
        for y in ys.0..ys.1 {
            let here = self.row(y);
            Self::west_of(here, &mut west);
            for (k, sign) in [1i64, -1].into_iter().enumerate() {
                for w in 0..self.stride {
                    let (blocked, free) = if sign == 1 {
                        (west[w], here[w])
                    } else {
                        (here[w], west[w])
                    };
                    now[w] = blocked & !free & lines[w];
                }
                let (was, began) = (&mut open[k], &mut began[k]);
                for w in 0..self.stride {
                    let (ended, started) = (was[w] & !now[w], now[w] & !was[w]);
                    for_each_bit(&[ended], |i| {
                        let i = w * 64 + i;
                        f(self.x0 + i as i64, began[i], y, sign);
                    });
                    for_each_bit(&[started], |i| began[w * 64 + i] = y);
                    was[w] = now[w];
                }
            }
        }
        for (k, sign) in [1i64, -1].into_iter().enumerate() {
            for_each_bit(&open[k], |i| f(self.x0 + i as i64, began[k][i], ys.1, sign));
        }
    }

    /// Each grid vertex `(x, y)`, `x` in `xs.0..=xs.1` and `y` in
    /// `ys.0..=ys.1`, with exactly one blocked cell around it: `f(x, y, q)`,
    /// `q` 0 for the blocked cell at `(x - 1, y - 1)`, 1 at `(x, y - 1)`, 2
    /// at `(x, y)`, 3 at `(x - 1, y)`. The window holds the cells
    /// `xs.0 - 1..=xs.1` x `ys.0 - 1..=ys.1`.
    pub(super) fn convex_corners(
        &self,
        xs: (i64, i64),
        ys: (i64, i64),
        mut f: impl FnMut(i64, i64, usize),
    ) {
        let mut lines = Vec::with_capacity(self.stride);
        self.span(xs, &mut lines);
        let (mut nw, mut sw) = (Vec::new(), Vec::new());
        for y in ys.0..=ys.1 {
            let (north, south) = (self.row(y - 1), self.row(y));
            Self::west_of(north, &mut nw);
            Self::west_of(south, &mut sw);
            for w in 0..self.stride {
                let (a, b, c, d) = (nw[w], north[w], sw[w], south[w]);
                let any = a | b | c | d;
                let two = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d);
                let one = any & !two & lines[w];
                for_each_bit(&[one], |i| {
                    let bit = 1u64 << i;
                    let q = if a & bit != 0 {
                        0
                    } else if b & bit != 0 {
                        1
                    } else if d & bit != 0 {
                        2
                    } else {
                        3
                    };
                    f(self.x0 + (w * 64 + i) as i64, y, q);
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bevy_math::UVec2;

    use super::BlockedBits;
    use crate::grid::Grid;
    use crate::test_rng::Rng;

    fn blocked(grid: &Grid, x: i64, y: i64) -> bool {
        !grid.is_free_xy(x, y)
    }

    /// The runs of edges on lines `lines` along cells `alongs`, cell by
    /// cell: `cell(line, along)` is the cell on the far side of the line.
    fn runs_cell_by_cell(
        lines: (i64, i64),
        alongs: (i64, i64),
        cell: impl Fn(i64, i64) -> bool,
    ) -> Vec<(i64, i64, i64, i64)> {
        let mut out = Vec::new();
        for line in lines.0..=lines.1 {
            let mut run: Option<(i64, i64)> = None;
            for along in alongs.0..=alongs.1 {
                let here = (along < alongs.1)
                    .then(|| match (cell(line - 1, along), cell(line, along)) {
                        (true, false) => Some(1),
                        (false, true) => Some(-1),
                        _ => None,
                    })
                    .flatten();
                if let Some((start, sign)) = run {
                    if here == Some(sign) {
                        continue;
                    }
                    out.push((line, start, along, sign));
                    run = None;
                }
                if let Some(sign) = here {
                    run = Some((along, sign));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Runs and corners read a word at a time are those read cell by cell
    /// from the grid, for windows across the grid's borders, of one word
    /// and of several.
    #[test]
    fn word_scans_find_what_cell_by_cell_scans_find() {
        let mut rng = Rng(0xb10c_4ed5);
        for round in 0..300 {
            let (w, h) = (1 + rng.below(150), 1 + rng.below(40));
            let mut grid = Grid::new(w, h).unwrap();
            let density = rng.below(100);
            for y in 0..h {
                for x in 0..w {
                    if rng.below(100) < density {
                        grid.set_free(UVec2::new(x, y), false).unwrap();
                    }
                }
            }
            let x0 = i64::from(rng.below(w + 80)) - 70;
            let y0 = i64::from(rng.below(h + 10)) - 6;
            let (width, height) = (3 + i64::from(rng.below(140)), 3 + i64::from(rng.below(30)));
            let bits = BlockedBits::new(&grid, x0, y0, width, height);
            for y in y0..y0 + height {
                for x in x0..x0 + width {
                    assert_eq!(bits.blocked(x, y), blocked(&grid, x, y), "round {round}");
                }
            }
            // Lines and cells that keep every cell read in the window.
            let xs = (x0 + 1, x0 + width - 1);
            let ys = (y0 + 1, y0 + height - 1);
            let mut found = Vec::new();
            bits.horizontal_runs(xs, ys, |y, a, b, sign| found.push((y, a, b, sign)));
            found.sort_unstable();
            let expected = runs_cell_by_cell(ys, xs, |y, x| blocked(&grid, x, y));
            assert_eq!(found, expected, "round {round}: horizontal runs");
            found.clear();
            bits.vertical_runs(xs, ys, |x, a, b, sign| found.push((x, a, b, sign)));
            found.sort_unstable();
            let expected = runs_cell_by_cell(xs, ys, |x, y| blocked(&grid, x, y));
            assert_eq!(found, expected, "round {round}: vertical runs");
            let mut corners = Vec::new();
            bits.convex_corners(xs, ys, |x, y, q| corners.push((x, y, q)));
            let mut expected = Vec::new();
            for y in ys.0..=ys.1 {
                for x in xs.0..=xs.1 {
                    let around = [
                        blocked(&grid, x - 1, y - 1),
                        blocked(&grid, x, y - 1),
                        blocked(&grid, x, y),
                        blocked(&grid, x - 1, y),
                    ];
                    if around.iter().filter(|&&b| b).count() == 1 {
                        expected.push((x, y, around.iter().position(|&b| b).unwrap()));
                    }
                }
            }
            assert_eq!(corners, expected, "round {round}: convex corners");
        }
    }
}
