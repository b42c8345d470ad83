//! A plane of bit lines: the grid's free cells stored row by row (and, for
//! fast vertical scans, once more column by column).
//!
//! Line `l` of a plane stands for row (or column) `l` of the grid, for `l` in
//! `-1..=len`; bit `i + 1` of a line is cell `i` of it, set when free. The
//! extra lines and bits around the grid are always 0, so scans may step one
//! cell past the border without bounds checks.
//!
//! Lines are stored in copy-on-write [`Bands`] of 64 lines: stored line
//! `l + 1` is line `l` of the plane, so band `b` holds lines
//! `64 b - 1 .. 64 b + 63`.

use super::chunks::Bands;

/// Bit lines with padding, see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BitPlane {
    /// `lines + 2` stored lines of `u64` words.
    words: Bands<u64, 6>,
}

impl BitPlane {
    /// `lines` lines of `cells` cells, all blocked.
    pub(crate) fn new(lines: u32, cells: u32) -> Self {
        let stride = (cells as usize + 2).div_ceil(64);
        BitPlane {
            words: Bands::new(lines as usize + 2, stride),
        }
    }

    /// The words of line `l` (`-1..=lines`).
    #[inline]
    pub(crate) fn line(&self, l: i64) -> &[u64] {
        self.words.line((l + 1) as usize)
    }

    /// Whether cell `i` of line `l` is free; `l` in `-1..=lines`, `i` in
    /// `-1..=cells`.
    #[inline]
    pub(crate) fn get(&self, l: i64, i: i64) -> bool {
        let bit = (i + 1) as usize;
        self.words.get((l + 1) as usize, bit / 64) >> (bit % 64) & 1 == 1
    }

    /// Sets cells `i0..i1` of line `l` (`0 <= l < lines`); returns whether a
    /// bit changed. Copies the line's band first if a clone shares it, and
    /// only if a bit changes.
    pub(crate) fn set_range(&mut self, l: u32, i0: u32, i1: u32, free: bool) -> bool {
        let line = l as usize + 1;
        let mut changed = false;
        let (mut b, end) = (i0 as usize + 1, i1 as usize + 1);
        while b < end {
            let word = b / 64;
            let lo = b % 64;
            let hi = (end - word * 64).min(64);
            let mask = if hi - lo == 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            let old = self.words.get(line, word);
            let new = if free { old | mask } else { old & !mask };
            if new != old {
                self.words.line_mut(line)[word] = new;
                changed = true;
            }
            b = word * 64 + hi;
        }
        changed
    }

    /// Whether cells `i0..=i1` of line `l` are all free (`-1 <= i0 <= i1 <=
    /// cells`, `-1 <= l <= lines`).
    #[expect(
        clippy::inline_always,
        reason = "the inner loop of line of sight; measured"
    )]
    #[inline(always)]
    pub(crate) fn all_free(&self, l: i64, i0: i64, i1: i64) -> bool {
        debug_assert!(i0 <= i1 && i0 >= -1);
        let (b0, b1) = ((i0 + 1) as usize, (i1 + 1) as usize);
        let (w0, w1) = (b0 / 64, b1 / 64);
        let low = u64::MAX << (b0 % 64);
        let high = u64::MAX >> (63 - b1 % 64);
        let line = (l + 1) as usize;
        if w0 == w1 {
            let m = low & high;
            return self.words.get(line, w0) & m == m;
        }
        Self::all_free_slow(self.words.line(line), w0, w1, low, high)
    }

    /// The words of line `l` (`0..lines`), to overwrite; keep the padding
    /// bits 0.
    #[inline]
    pub(crate) fn line_mut(&mut self, l: u32) -> &mut [u64] {
        self.words.line_mut(l as usize + 1)
    }

    /// `u64` words per line.
    #[inline]
    pub(crate) fn stride(&self) -> usize {
        self.words.line_len()
    }

    /// Where line `l` (`-1..=lines`) is stored: its band, and the index of
    /// its first word in [`BitPlane::band`]. The next line of a band starts
    /// [`BitPlane::stride`] words later; the line after the last one of a
    /// band starts band `b + 1` at index 0.
    #[inline]
    pub(crate) fn locate(&self, l: i64) -> (usize, usize) {
        self.words.locate((l + 1) as usize)
    }

    /// The words of band `b` (see [`BitPlane::locate`]).
    #[inline]
    pub(crate) fn band(&self, b: usize) -> &[u64] {
        self.words.band(b)
    }

    /// The multi-word case of [`BitPlane::all_free`]: whether the masked
    /// bits of words `w0..=w1` (`w0 < w1`) of `line` are all set: `low` of
    /// word `w0`, every bit of the words between, `high` of `w1`.
    #[inline(never)]
    pub(crate) fn all_free_slow(line: &[u64], w0: usize, w1: usize, low: u64, high: u64) -> bool {
        line[w0] & low == low
            && line[w0 + 1..w1].iter().all(|w| *w == u64::MAX)
            && line[w1] & high == high
    }

    /// 64 bits of line `l` starting at bit `bit` (bit `i + 1` is cell `i`);
    /// bits past the line read as 0.
    #[inline]
    pub(crate) fn bits_at(&self, l: i64, bit: usize) -> u64 {
        let words = self.line(l);
        let (w, s) = (bit / 64, bit % 64);
        let lo = words.get(w).copied().unwrap_or(0) >> s;
        if s == 0 {
            lo
        } else {
            lo | words.get(w + 1).copied().unwrap_or(0) << (64 - s)
        }
    }

    /// How many bands this plane still shares with `other`.
    pub(crate) fn shared_bands(&self, other: &BitPlane) -> usize {
        (0..self.words.band_count())
            .filter(|&b| self.words.shares_band(&other.words, b))
            .count()
    }

    /// Calls `f(l, i)` for every cell `i` of line `l` whose bit differs in
    /// `other` (a plane of the same shape), skipping at a glance the bands
    /// both still share.
    /// Returns how many bands were not shared (and so compared).
    pub(crate) fn for_each_difference(
        &self,
        other: &BitPlane,
        mut f: impl FnMut(i64, i64),
    ) -> usize {
        let stride = self.stride();
        let band_lines = Bands::<u64, 6>::BAND_LINES;
        let mut compared = 0;
        for b in 0..self.words.band_count() {
            if self.words.shares_band(&other.words, b) {
                continue;
            }
            compared += 1;
            let (mine, theirs) = (self.words.band(b), other.words.band(b));
            for (k, (w0, w1)) in mine.iter().zip(theirs).enumerate() {
                let mut diff = w0 ^ w1;
                let stored_line = b * band_lines + k / stride;
                while diff != 0 {
                    let bit = diff.trailing_zeros() as usize;
                    diff &= diff - 1;
                    let i = ((k % stride) * 64 + bit) as i64 - 1;
                    f(stored_line as i64 - 1, i);
                }
            }
        }
        compared
    }

    /// Number of free cells.
    pub(crate) fn count_free(&self) -> u64 {
        self.words
            .bands()
            .flatten()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// How many chunks are not shared with `other`.
    #[cfg(test)]
    pub(crate) fn unshared_with(&self, other: &Self) -> usize {
        self.words.unshared_with(&other.words)
    }

    /// Sets this plane (all blocked, `cells` lines of `lines` cells) to the
    /// transpose of `other`: cell `i` of line `l` here is cell `l` of line
    /// `i` there. Works on blocks of 64 x 64 cells.
    pub(crate) fn fill_transposed(&mut self, other: &BitPlane, lines: u32, cells: u32) {
        let mut block = [0u64; 64];
        for l0 in (0..lines).step_by(64) {
            for i0 in (0..cells).step_by(64) {
                // Row k of the block: cells l0.. of line i0 + k there.
                for (k, word) in block.iter_mut().enumerate() {
                    let i = i0 as usize + k;
                    *word = if i < cells as usize {
                        other.bits_at(i as i64, l0 as usize + 1)
                    } else {
                        0
                    };
                }
                transpose64(&mut block);
                if block.iter().all(|w| *w == 0) {
                    continue;
                }
                // Row k now holds cells i0.. of line l0 + k; cell c is bit
                // c + 1, and i0 is a multiple of 64.
                for (k, &word) in block.iter().enumerate() {
                    let l = l0 as usize + k;
                    if word == 0 || l >= lines as usize {
                        continue;
                    }
                    let line = self.words.line_mut(l + 1);
                    let w = i0 as usize / 64;
                    line[w] |= word << 1;
                    if word >> 63 != 0 {
                        line[w + 1] |= 1;
                    }
                }
            }
        }
    }
}

/// Index of the last bit at or before `from` equal to `set`.
pub(crate) fn prev_bit(words: &[u64], from: usize, set: bool) -> Option<usize> {
    let mut w = from / 64;
    if w >= words.len() {
        return None;
    }
    let flip = if set { 0 } else { u64::MAX };
    let mut word = (words[w] ^ flip) & (u64::MAX >> (63 - from % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + 63 - word.leading_zeros() as usize);
        }
        if w == 0 {
            return None;
        }
        w -= 1;
        word = words[w] ^ flip;
    }
}

/// Index of the first bit at or after `from` equal to `set`.
pub(crate) fn next_bit(words: &[u64], from: usize, set: bool) -> Option<usize> {
    let mut w = from / 64;
    if w >= words.len() {
        return None;
    }
    let flip = if set { 0 } else { u64::MAX };
    let mut word = (words[w] ^ flip) & (u64::MAX << (from % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
        w += 1;
        if w >= words.len() {
            return None;
        }
        word = words[w] ^ flip;
    }
}

/// Transposes a 64 x 64 bit matrix in place: bit `c` of `m[r]` trades
/// places with bit `r` of `m[c]`. Swaps the off-diagonal halves, then the
/// quarters within each half, and so on down to single bits.
fn transpose64(m: &mut [u64; 64]) {
    let mut half = 32;
    // Columns whose bit `half` is clear: the low half of each block.
    let mut low_cols: u64 = 0x0000_0000_ffff_ffff;
    while half != 0 {
        for r in 0..64 {
            if r & half == 0 {
                // Row r's high columns trade places with row r + half's low
                // columns.
                let t = (m[r] >> half ^ m[r + half]) & low_cols;
                m[r + half] ^= t;
                m[r] ^= t << half;
            }
        }
        half >>= 1;
        low_cols ^= low_cols << half;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_swaps_rows_and_columns() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut m = [0u64; 64];
        for w in &mut m {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *w = seed;
        }
        let before = m;
        transpose64(&mut m);
        for (r, row) in m.iter().enumerate() {
            for (c, column) in before.iter().enumerate() {
                assert_eq!(row >> c & 1, column >> r & 1, "({r}, {c})");
            }
        }
    }

    #[test]
    fn a_transposed_plane_holds_the_same_cells() {
        let (lines, cells) = (70u32, 131u32);
        let mut rows = BitPlane::new(lines, cells);
        for l in 0..lines {
            for i in 0..cells {
                if (l * 7 + i * 3) % 5 != 0 {
                    rows.set_range(l, i, i + 1, true);
                }
            }
        }
        let mut cols = BitPlane::new(cells, lines);
        cols.fill_transposed(&rows, cells, lines);
        for l in -1..=i64::from(lines) {
            for i in -1..=i64::from(cells) {
                assert_eq!(rows.get(l, i), cols.get(i, l), "({l}, {i})");
            }
        }
    }
}
