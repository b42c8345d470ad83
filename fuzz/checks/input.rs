//! Decoding raw fuzzer bytes into grids, points and choices.
//!
//! Reading past the end yields zeros, so every byte string is a valid input
//! and a shorter one is a simpler one.

use bevy_anyangle::grid::Grid;
use bevy_anyangle::prelude::{Algorithm, DVec2, FallbackPolicy};

/// A cursor over the bytes of one input.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
    bits: u8,
    bits_left: u32,
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    #[must_use]
    pub fn new(data: &'a [u8]) -> Self {
        Input {
            data,
            pos: 0,
            bits: 0,
            bits_left: 0,
        }
    }

    /// Whether every byte has been read.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The next byte (0 past the end).
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1).min(self.data.len());
        b
    }

    /// The next little-endian `u32` (missing bytes are 0).
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// A number in `0..n` from one byte (`n <= 256`; 0 when `n` is 0).
    pub fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            u32::from(self.byte()) % n
        }
    }

    /// One bit, from a byte read eight bits at a time.
    pub fn bit(&mut self) -> bool {
        if self.bits_left == 0 {
            self.bits = self.byte();
            self.bits_left = 8;
        }
        let b = self.bits & 1 == 1;
        self.bits >>= 1;
        self.bits_left -= 1;
        b
    }

    /// A planner: Polyanya three times in four, else any of them.
    pub fn algorithm(&mut self) -> Algorithm {
        if self.below(4) == 0 {
            Algorithm::ALL[self.below(Algorithm::ALL.len() as u32) as usize]
        } else {
            Algorithm::Polyanya
        }
    }

    /// A fallback policy, either one.
    pub fn fallback(&mut self) -> FallbackPolicy {
        if self.bit() {
            FallbackPolicy::Fail
        } else {
            FallbackPolicy::ClosestReachable
        }
    }

    /// A grid of 1 to 16 cells each way. A mode byte picks how dense the
    /// blocked cells are (about 1/2, 1/4, 1/8 or 3/4), then each cell takes
    /// one to three bits. Built from an ASCII picture, so it has version 0.
    pub fn grid(&mut self) -> Grid {
        self.grid_within(16)
    }

    /// [`Input::grid`] of 1 to `max_side` cells each way (`max_side` from 1
    /// to 256); `grid_within(16)` is `grid()`.
    pub fn grid_within(&mut self, max_side: u32) -> Grid {
        let (w, h) = (1 + self.below(max_side), 1 + self.below(max_side));
        let mode = self.below(4);
        let mut picture = String::with_capacity(((w + 1) * h) as usize);
        for _ in 0..h {
            for _ in 0..w {
                let blocked = match mode {
                    0 => self.bit(),
                    1 => self.bit() && self.bit(),
                    2 => self.bit() && self.bit() && self.bit(),
                    _ => !(self.bit() && self.bit()),
                };
                picture.push(if blocked { '#' } else { '.' });
            }
            picture.push('\n');
        }
        Grid::from_ascii(&picture).expect("a well-formed picture")
    }

    /// A point for a `w x h` grid, often a vertex, a cell centre or an edge
    /// midpoint, else on a finer dyadic lattice (down to `2^-28`), and now
    /// and then a little or far outside the grid. Always finite, and always
    /// a multiple of `2^-28`.
    pub fn point(&mut self, w: u32, h: u32) -> DVec2 {
        let (w, h) = (f64::from(w), f64::from(h));
        match self.below(10) {
            // Vertices.
            0 | 1 => DVec2::new(self.lattice(w, 1, 0), self.lattice(h, 1, 0)),
            // Cell centres.
            2 | 3 => DVec2::new(
                self.lattice(w - 1.0, 1, 0) + 0.5,
                self.lattice(h - 1.0, 1, 0) + 0.5,
            ),
            // Half and quarter lattices, a little outside too.
            4 => DVec2::new(self.lattice(w, 2, 1), self.lattice(h, 2, 1)),
            5 => DVec2::new(self.lattice(w, 4, 1), self.lattice(h, 4, 1)),
            // Finer lattices.
            6 => DVec2::new(self.lattice(w, 16, 0), self.lattice(h, 16, 0)),
            7 => DVec2::new(self.lattice(w, 1 << 28, 0), self.lattice(h, 1 << 28, 0)),
            // An edge midpoint.
            8 => {
                if self.bit() {
                    DVec2::new(self.lattice(w - 1.0, 1, 0) + 0.5, self.lattice(h, 1, 0))
                } else {
                    DVec2::new(self.lattice(w, 1, 0), self.lattice(h - 1.0, 1, 0) + 0.5)
                }
            }
            // Far outside.
            _ => DVec2::new(
                self.lattice(w, 1, 8) * 2.0 - 0.25,
                self.lattice(h, 1, 8) * 2.0,
            ),
        }
    }

    /// A coordinate on the lattice of step `1 / d` in
    /// `-margin / d ..= side + margin / d` (`side` a whole number of cells).
    fn lattice(&mut self, side: f64, d: u32, margin: u32) -> f64 {
        let span = (side as u64) * u64::from(d) + 2 * u64::from(margin) + 1;
        let n = if span <= 256 {
            u64::from(self.byte()) % span
        } else {
            u64::from(self.u32()) % span
        };
        (n as f64 - f64::from(margin)) / f64::from(d)
    }
}
