//! A fast hasher for the small integer keys of mesh building and mesh searches (lattice points, vertex, polygon and region ids).
//!
//! The standard library's `SipHash` resists crafted keys, which these maps
//! never see (their keys come from the grid's geometry), and costs a tenth
//! of a chunk's build. This one multiplies each word into the state and
//! rotates, as compilers' symbol tables do; the map's table then takes the
//! high bits, which the multiplication mixes well.

use core::hash::{BuildHasherDefault, Hasher};
use std::collections::HashMap;

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Multiply-rotate hashing of integer words (see the [module docs](self)).
#[derive(Clone, Copy, Default)]
pub(crate) struct FastHasher(u64);

/// An odd constant with well-spread bits (from the golden ratio).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // (hashbrown takes its control bits from the top and its index from
        // the bottom: fold the well-mixed top half down.)
        self.0 ^ (self.0 >> 32)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("eight bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_i32(&mut self, n: i32) {
        self.add(u64::from(n as u32));
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_points_spread_over_the_table() {
        // Every point of a 64 x 64 block of lattice points, in a map: the
        // low bits the table indexes by take every value about equally.
        let mut buckets = [0u32; 256];
        for y in -32i64..32 {
            for x in -32i64..32 {
                let mut h = FastHasher::default();
                core::hash::Hash::hash(&[x * 1024, y * 1024], &mut h);
                buckets[(h.finish() & 255) as usize] += 1;
            }
        }
        let (lo, hi) = (
            *buckets.iter().min().unwrap(),
            *buckets.iter().max().unwrap(),
        );
        assert!(lo >= 4 && hi <= 32, "bucket sizes {lo}..{hi}");
        let map: FastMap<[i64; 2], usize> = (0..1000).map(|i| ([i, -i], i as usize)).collect();
        assert_eq!(map.get(&[7, -7]), Some(&7));
    }
}
