//! Word-at-a-time scans of the grid's bit-packed rows.
//!
//! [`Grid::row_words`] stores cell row `cy` (`-1..=height`) as `u64` words in
//! which bit `x + 1` is cell `x` (set = free) and every padding bit is 0, so a
//! scan always meets a blocked cell at `x = -1` and at `x = width` and never
//! needs a bounds check of its own.
//!
//! Vertex `k` of a grid line sits between cells `k - 1` and `k`; in the flag
//! words below it is bit `k + 1`, the bit of the cell to its right, so that
//! "the cell to the left" is the same word shifted left by one.

#[cfg(doc)]
use crate::grid::Grid;

/// The word of `row` holding bits `64 w .. 64 w + 63`, shifted left by one
/// with the top bit of the previous word carried in: bit `i` of the result is
/// bit `i - 1` of the row (for a cell row: the cell to the left).
#[inline]
fn shifted(row: &[u64], w: usize) -> u64 {
    let prev = if w > 0 { row[w - 1] >> 63 } else { 0 };
    (row[w] << 1) | prev
}

/// The exclusive end of the free run of cell row `cy` that holds the free cell
/// `x`: the first blocked cell to the right of `x`.
pub(super) fn run_right(row: &[u64], x: i64) -> i64 {
    let first = (x + 2) as usize;
    let mut w = first / 64;
    let mut word = !row[w] & (u64::MAX << (first % 64));
    loop {
        if word != 0 {
            return (w * 64 + word.trailing_zeros() as usize) as i64 - 1;
        }
        w += 1;
        // The padding bit of cell `width` is always 0, so this never runs off.
        word = !row[w];
    }
}

/// The first cell of the free run of cell row `cy` that holds the free cell
/// `x`: one right of the last blocked cell left of `x`.
pub(super) fn run_left(row: &[u64], x: i64) -> i64 {
    // Bits 0..=x are the cells -1..x-1.
    let end = (x + 1) as usize;
    let mut w = end / 64;
    let rem = end % 64;
    let mut word = if rem == 0 {
        0
    } else {
        !row[w] & ((1u64 << rem) - 1)
    };
    loop {
        if word != 0 {
            // Bit b is cell b - 1, blocked: the run starts at cell b.
            return (w * 64 + 63 - word.leading_zeros() as usize) as i64;
        }
        // Bit 0 (cell -1) is always 0, so this never runs off.
        w -= 1;
        word = !row[w];
    }
}

/// The smallest vertex `k` in `from..=to` at which a cell row (its
/// [`Grid::row_words`]) changes between free and blocked (cells `k - 1` and
/// `k` differ). Needs `from >= 0`.
pub(super) fn next_transition(row: &[u64], from: i64, to: i64) -> Option<i64> {
    if from > to {
        return None;
    }
    let (first, last) = ((from + 1) as usize, (to + 1) as usize);
    let mut w = first / 64;
    let mut mask = u64::MAX << (first % 64);
    while w * 64 <= last {
        let t = (row[w] ^ shifted(row, w)) & mask;
        if t != 0 {
            let bit = w * 64 + t.trailing_zeros() as usize;
            return (bit <= last).then(|| bit as i64 - 1);
        }
        w += 1;
        mask = u64::MAX;
    }
    None
}

/// Whether cells `from..=to` of a cell row (its [`Grid::row_words`]) are
/// all free: `true` when the range is empty, `false` when it leaves the row.
#[inline]
pub(super) fn all_free(row: &[u64], from: i64, to: i64) -> bool {
    if from > to {
        return true;
    }
    if from < -1 {
        return false;
    }
    let (first, last) = ((from + 1) as usize, (to + 1) as usize);
    let (wf, wl) = (first / 64, last / 64);
    if wl >= row.len() {
        return false;
    }
    let low = u64::MAX << (first % 64);
    let high = u64::MAX >> (63 - last % 64);
    if wf == wl {
        let m = low & high;
        return row[wf] & m == m;
    }
    row[wf] & low == low && row[wf + 1..wl].iter().all(|&w| w == u64::MAX) && row[wl] & high == high
}

/// Whether cell `x` (`-1..=width`) of a cell row (its [`Grid::row_words`])
/// is free.
#[inline]
pub(super) fn free_at(row: &[u64], x: i64) -> bool {
    let bit = (x + 1) as usize;
    row[bit / 64] >> (bit % 64) & 1 == 1
}

/// The four flag words of a grid line at word `w`: cells above (`u`) and
/// below (`d`) each vertex's right, and the same for its left (`ul`, `dl`).
#[inline]
fn line_words(up: &[u64], dn: &[u64], w: usize) -> (u64, u64, u64, u64) {
    (up[w], dn[w], shifted(up, w), shifted(dn, w))
}

/// Double corners: two free cells touching diagonally, the other two blocked.
#[inline]
fn double_corners(u: u64, d: u64, ul: u64, dl: u64) -> u64 {
    (ul & d & !u & !dl) | (u & dl & !ul & !d)
}

/// Walking right along a grid line (`up` and `dn` the [`Grid::row_words`] of
/// its cell rows above and below) from vertex `from - 1`, the first vertex
/// `k >= from` where the walk must end: the edge right of `k` has no free
/// side, `k` is a double corner, or `k` is a corner whose blocked cell lies
/// behind (to the left), where a taut path may turn.
pub(super) fn flat_right(up: &[u64], dn: &[u64], from: i64) -> i64 {
    let first = (from + 1) as usize;
    let mut w = first / 64;
    let mut mask = u64::MAX << (first % 64);
    loop {
        let (u, d, ul, dl) = line_words(up, dn, w);
        let flags = !(u | d) | double_corners(u, d, ul, dl) | (u & d & (ul ^ dl));
        let hit = flags & mask;
        if hit != 0 {
            return (w * 64 + hit.trailing_zeros() as usize) as i64 - 1;
        }
        // The vertex `width` has no free cell to its right: always flagged.
        w += 1;
        mask = u64::MAX;
    }
}

/// Walking left along a grid line (its cell rows `up` and `dn`) from vertex
/// `from + 1`, the first vertex `k <= from` where the walk must end (the
/// mirror image of [`flat_right`]).
pub(super) fn flat_left(up: &[u64], dn: &[u64], from: i64) -> i64 {
    let last = (from + 1) as usize;
    let mut w = last / 64;
    let rem = last % 64;
    let mut mask = if rem == 63 {
        u64::MAX
    } else {
        (1u64 << (rem + 1)) - 1
    };
    loop {
        let (u, d, ul, dl) = line_words(up, dn, w);
        let flags = !(ul | dl) | double_corners(u, d, ul, dl) | (ul & dl & (u ^ d));
        let hit = flags & mask;
        if hit != 0 {
            return (w * 64 + 63 - hit.leading_zeros() as usize) as i64 - 1;
        }
        // Vertex 0 has no free cell to its left (bit 1 shifted from bit 0): always flagged.
        w -= 1;
        mask = u64::MAX;
    }
}

#[cfg(test)]
mod tests {
    use bevy_math::UVec2;

    use super::{all_free, free_at};
    use crate::grid::Grid;
    use crate::test_rng::Rng;

    /// `all_free` and `free_at` against cell-by-cell lookups, on widths
    /// around word boundaries and ranges that touch or leave the grid.
    #[test]
    fn word_tests_agree_with_cell_lookups() {
        let mut rng = Rng(0x5eed_cafe);
        for width in [1u32, 62, 63, 64, 65, 127, 128, 130, 200] {
            let height = 3;
            let mut grid = Grid::new(width, height).unwrap();
            for y in 0..height {
                for x in 0..width {
                    // Mostly free, so that long free ranges occur.
                    if rng.below(8) == 0 {
                        grid.set_free(UVec2::new(x, y), false).unwrap();
                    }
                }
            }
            let w = i64::from(width);
            for cy in -1..=i64::from(height) {
                let row = grid.row_words(cy);
                for x in -1..=w {
                    assert_eq!(free_at(row, x), grid.is_free_xy(x, cy), "cell ({x}, {cy})");
                }
                for _ in 0..400 {
                    let from = i64::from(rng.below(width + 4)) - 2;
                    let to = from + i64::from(rng.below(width + 2)) - 1;
                    let want = (from..=to).all(|x| grid.is_free_xy(x, cy));
                    assert_eq!(
                        all_free(row, from, to),
                        want,
                        "cells {from}..={to} of row {cy}, width {width}"
                    );
                }
            }
        }
    }
}
