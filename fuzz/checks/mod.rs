//! The checks behind the fuzz targets, shared with the stable replay of the
//! committed corpus (`tests/fuzz_corpus.rs`).
//!
//! Each `check` takes the raw bytes of one input, decodes them by hand (see
//! [`input`]) and panics when the crate breaks a promise of `docs/SPEC.md` or
//! of its API docs. Nothing here depends on libFuzzer, so a stable test can
//! include this folder with `#[path]`.

/// The independent reference of the crate's tests: exact visibility, the
/// path validator, reference optima.
#[path = "../../tests/common/mod.rs"]
pub mod common;

pub mod atlas;
pub mod avoidance;
pub mod input;
pub mod los;
pub mod many;
pub mod on_demand;
pub mod parse;
pub mod plan;
pub mod plugin_ops;
pub mod radius_mesh;

use bevy_anyangle::grid::Grid;

/// `grid` as rows of `.` (free) and `#` (blocked), for failure reports.
pub fn picture(grid: &Grid) -> String {
    let mut s = String::new();
    for y in 0..i64::from(grid.height()) {
        for x in 0..i64::from(grid.width()) {
            s.push(if grid.is_free_xy(x, y) { '.' } else { '#' });
        }
        s.push('\n');
    }
    s
}
