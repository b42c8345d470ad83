//! Copy-on-write storage of equal-length lines, in bands of `2^SHIFT` lines
//! that clones of a grid share.
//!
//! Each band sits behind its own [`Arc`]: cloning a [`Bands`] copies one
//! pointer per band, and writing to a line copies that line's band only if a
//! clone still shares it ([`Arc::make_mut`]). A line is always one contiguous
//! slice; consecutive lines of a band are adjacent in memory, so a walk over
//! lines steps by the line length and fetches the next band every `2^SHIFT`
//! lines. Fewer, larger bands make clones cheaper and the first write after
//! a clone dearer.

use std::sync::Arc;

/// Lines of `line_len` values each, stored in shared bands of `2^SHIFT`
/// lines (see the [module docs](self)); lines past the last one keep their
/// initial value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bands<T, const SHIFT: u32> {
    line_len: usize,
    bands: Vec<Arc<[T]>>,
}

impl<T: Copy + Default, const SHIFT: u32> Bands<T, SHIFT> {
    /// Lines per band.
    pub(crate) const BAND_LINES: usize = 1 << SHIFT;

    /// `lines` lines of `line_len` default values.
    pub(crate) fn new(lines: usize, line_len: usize) -> Self {
        let bands = (0..lines.div_ceil(Self::BAND_LINES))
            .map(|_| Arc::from(vec![T::default(); Self::BAND_LINES * line_len]))
            .collect();
        Bands { line_len, bands }
    }

    /// Where line `i` is stored: its band, and the index of its first value
    /// in the band.
    #[inline]
    pub(crate) fn locate(&self, i: usize) -> (usize, usize) {
        (i >> SHIFT, (i & (Self::BAND_LINES - 1)) * self.line_len)
    }

    /// Values per line.
    #[inline]
    pub(crate) fn line_len(&self) -> usize {
        self.line_len
    }

    /// Line `i`.
    #[inline]
    pub(crate) fn line(&self, i: usize) -> &[T] {
        let (band, start) = self.locate(i);
        &self.bands[band][start..start + self.line_len]
    }

    /// Value `j` of line `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize, j: usize) -> T {
        let (band, start) = self.locate(i);
        self.bands[band][start + j]
    }

    /// Line `i`, writable; copies its band first if a clone shares it.
    #[inline]
    pub(crate) fn line_mut(&mut self, i: usize) -> &mut [T] {
        let (band, start) = self.locate(i);
        &mut Arc::make_mut(&mut self.bands[band])[start..start + self.line_len]
    }

    /// Band `b`: lines `b * 2^SHIFT ..`, one after the other.
    #[inline]
    pub(crate) fn band(&self, b: usize) -> &[T] {
        &self.bands[b]
    }

    /// Every band, in order.
    pub(crate) fn bands(&self) -> impl Iterator<Item = &[T]> {
        self.bands.iter().map(|b| &**b)
    }

    /// Whether band `b` is the very band `other` holds (a clone not
    /// written to since), so that its lines are equal without a look.
    #[inline]
    pub(crate) fn shares_band(&self, other: &Self, b: usize) -> bool {
        other
            .bands
            .get(b)
            .is_some_and(|o| Arc::ptr_eq(&self.bands[b], o))
    }

    /// How many bands there are.
    #[inline]
    pub(crate) fn band_count(&self) -> usize {
        self.bands.len()
    }

    /// How many of the bands are not shared with `other`.
    #[cfg(test)]
    pub(crate) fn unshared_with(&self, other: &Self) -> usize {
        self.bands
            .iter()
            .zip(&other.bands)
            .filter(|(a, b)| !Arc::ptr_eq(a, b))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_copy_only_the_shared_band_they_touch() {
        let mut a = Bands::<u16, 6>::new(200, 3);
        a.line_mut(70)[2] = 7;
        let mut b = a.clone();
        assert_eq!(b.unshared_with(&a), 0);
        b.line_mut(130)[0] = 9;
        assert_eq!(b.unshared_with(&a), 1);
        assert_eq!((a.get(130, 0), b.get(130, 0)), (0, 9));
        assert_eq!((a.line(70), b.line(70)), (&[0, 0, 7][..], &[0, 0, 7][..]));
        b.line_mut(131)[0] = 1;
        assert_eq!(b.unshared_with(&a), 1, "the band is already b's own");
        assert_ne!(a, b);
    }
}
