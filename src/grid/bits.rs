//! A plane of bit lines: the grid's free cells stored row by row (and, for
//! fast vertical scans, once more column by column).
//!
//! Line `l` of a plane stands for row (or column) `l` of the grid, for `l` in
//! `-1..=len`; bit `i + 1` of a line is cell `i` of it, set when free. The
//! extra lines and bits around the grid are always 0, so scans may step one
//! cell past the border without bounds checks.

/// Bit lines with padding, see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BitPlane {
    /// `u64` words per line.
    stride: usize,
    words: Vec<u64>,
}

impl BitPlane {
    /// `lines` lines of `cells` cells, all blocked.
    pub(crate) fn new(lines: u32, cells: u32) -> Self {
        let stride = (cells as usize + 2).div_ceil(64);
        BitPlane {
            stride,
            words: vec![0; stride * (lines as usize + 2)],
        }
    }

    /// The words of line `l` (`-1..=lines`).
    #[inline]
    pub(crate) fn line(&self, l: i64) -> &[u64] {
        let start = (l + 1) as usize * self.stride;
        &self.words[start..start + self.stride]
    }

    /// Whether cell `i` of line `l` is free; `l` in `-1..=lines`, `i` in
    /// `-1..=cells`.
    #[inline]
    pub(crate) fn get(&self, l: i64, i: i64) -> bool {
        let bit = (i + 1) as usize;
        self.words[(l + 1) as usize * self.stride + bit / 64] >> (bit % 64) & 1 == 1
    }

    /// Sets cells `i0..i1` of line `l` (`0 <= l < lines`); returns whether a
    /// bit changed.
    pub(crate) fn set_range(&mut self, l: u32, i0: u32, i1: u32, free: bool) -> bool {
        let base = (l as usize + 1) * self.stride;
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
            let w = &mut self.words[base + word];
            let new = if free { *w | mask } else { *w & !mask };
            changed |= new != *w;
            *w = new;
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
        let base = (l + 1) as usize * self.stride;
        let (b0, b1) = ((i0 + 1) as usize, (i1 + 1) as usize);
        let (w0, w1) = (b0 / 64, b1 / 64);
        let low = u64::MAX << (b0 % 64);
        let high = u64::MAX >> (63 - b1 % 64);
        if w0 == w1 {
            let m = low & high;
            return self.words[base + w0] & m == m;
        }
        self.all_free_slow(base, w0, w1, low, high)
    }

    /// All the words, line `l` starting at [`BitPlane::line_base`]`(l)`.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// `u64` words per line.
    #[inline]
    pub(crate) fn stride(&self) -> usize {
        self.stride
    }

    /// Index in [`BitPlane::words`] of the first word of line `l`
    /// (`-1..=lines`).
    #[inline]
    pub(crate) fn line_base(&self, l: i64) -> usize {
        (l + 1) as usize * self.stride
    }

    /// The multi-word case of [`BitPlane::all_free`]: whether the masked
    /// bits of words `w0..=w1` (`w0 < w1`) of the line at `base` are all set:
    /// `low` of word `w0`, every bit of the words between, `high` of `w1`.
    #[inline(never)]
    pub(crate) fn all_free_slow(
        &self,
        base: usize,
        w0: usize,
        w1: usize,
        low: u64,
        high: u64,
    ) -> bool {
        let words = &self.words[base..base + self.stride];
        words[w0] & low == low
            && words[w0 + 1..w1].iter().all(|w| *w == u64::MAX)
            && words[w1] & high == high
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

    /// Number of free cells.
    pub(crate) fn count_free(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}
