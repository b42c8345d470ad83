//! Line of sight on a game map (`den520d`, 256 x 257): batches of 1,000
//! segments between random traversable vertices, between random free-cell
//! centres, and between vertex pairs known to be visible (each check walks
//! the whole segment, the worst case for the walk). Pairs come from a fixed
//! seed and are drawn before timing; the loop asserts how many are visible.
//!
//! ```text
//! cargo bench --bench los
//! ```

use std::hint::black_box;
use std::time::Duration;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// Segments per batch.
const BATCH: usize = 1000;

/// A small deterministic generator (xorshift64*), so the pairs are the same
/// on every run without a `rand` dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// A random point of `grid` of the given kind: a traversable vertex, or the
/// centre of a free cell.
fn random_point(grid: &Grid, rng: &mut Rng, centres: bool) -> DVec2 {
    loop {
        let (x, y) = if centres {
            (rng.below(grid.width()), rng.below(grid.height()))
        } else {
            (rng.below(grid.width() + 1), rng.below(grid.height() + 1))
        };
        let (xi, yi) = (i64::from(x), i64::from(y));
        if centres && grid.is_free_xy(xi, yi) {
            return DVec2::new(f64::from(x) + 0.5, f64::from(y) + 0.5);
        }
        if !centres && grid.is_vertex_traversable(xi, yi) {
            return DVec2::new(f64::from(x), f64::from(y));
        }
    }
}

/// `BATCH` pairs; with `visible_only`, only pairs that see each other.
fn pairs(grid: &Grid, seed: u64, centres: bool, visible_only: bool) -> Vec<(DVec2, DVec2)> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(BATCH);
    while out.len() < BATCH {
        let a = random_point(grid, &mut rng, centres);
        let b = random_point(grid, &mut rng, centres);
        if !visible_only || line_of_sight(grid, a, b) {
            out.push((a, b));
        }
    }
    out
}

fn los(c: &mut Criterion) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/maps/den520d.map"
    ))
    .expect("den520d.map is bundled with the crate");
    let grid = Grid::from_movingai(&text).expect("a bundled map parses");

    let mut group = c.benchmark_group("los/den520d");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(BATCH as u64));
    for (name, centres, visible_only) in [
        ("random", false, false),
        ("random", true, false),
        ("visible", false, true),
        ("visible", true, true),
    ] {
        let batch = pairs(&grid, 0x9e37_79b9_7f4a_7c15, centres, visible_only);
        let expected = batch
            .iter()
            .filter(|(a, b)| line_of_sight(&grid, *a, *b))
            .count();
        let kind = if centres { "centres" } else { "vertices" };
        group.bench_with_input(BenchmarkId::new(name, kind), &batch, |b, batch| {
            b.iter(|| {
                let seen = black_box(batch)
                    .iter()
                    .filter(|(a, b)| line_of_sight(&grid, *a, *b))
                    .count();
                assert_eq!(seen, expected);
            });
        });
    }
    group.finish();
}

criterion_group!(benches, los);
criterion_main!(benches);
