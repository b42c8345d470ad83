//! Replays the committed fuzz corpus on stable: every file of
//! `fuzz/corpus/<target>/` and of `fuzz/regressions/<target>/` goes through
//! the same check function the cargo-fuzz target `<target>` calls (the
//! checks live in `fuzz/checks/`, free of libFuzzer, and are included here by
//! path). Run the fuzzers themselves with `cargo +nightly fuzz run <target>`
//! from `fuzz/` (see `docs/robustness.md`).

#[path = "../fuzz/checks/mod.rs"]
mod checks;

use std::path::{Path, PathBuf};

/// The files of `fuzz/<folder>/<target>/`, sorted (none if it is missing).
fn inputs(folder: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(folder)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `check` on every corpus and regression input of `target`; reports
/// the file of the first one that fails.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let mut count = 0;
    for folder in ["corpus", "regressions"] {
        for file in inputs(folder, target) {
            let data = std::fs::read(&file).expect("a readable input");
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "{target}: {} fails its check (the panic message is above)",
                file.display()
            );
            count += 1;
        }
    }
    count
}

#[test]
fn parse_corpus_replays() {
    assert!(replay("parse", checks::parse::check) > 0, "no parse corpus");
}

#[test]
fn los_corpus_replays() {
    assert!(replay("los", checks::los::check) > 0, "no los corpus");
}

#[test]
fn plan_corpus_replays() {
    assert!(replay("plan", checks::plan::check) > 0, "no plan corpus");
}

#[test]
fn plugin_ops_corpus_replays() {
    assert!(
        replay("plugin_ops", checks::plugin_ops::check) > 0,
        "no plugin_ops corpus"
    );
}

#[test]
fn radius_mesh_corpus_replays() {
    assert!(
        replay("radius_mesh", checks::radius_mesh::check) > 0,
        "no radius_mesh corpus"
    );
}

#[test]
fn many_corpus_replays() {
    assert!(replay("many", checks::many::check) > 0, "no many corpus");
}

#[test]
fn on_demand_corpus_replays() {
    assert!(
        replay("on_demand", checks::on_demand::check) > 0,
        "no on_demand corpus"
    );
}

#[test]
fn avoidance_corpus_replays() {
    assert!(
        replay("avoidance", checks::avoidance::check) > 0,
        "no avoidance corpus"
    );
}

#[test]
fn atlas_corpus_replays() {
    assert!(replay("atlas", checks::atlas::check) > 0, "no atlas corpus");
}

/// The decoders accept any bytes, the empty input included.
#[test]
fn empty_and_tiny_inputs_are_valid() {
    for data in [&[][..], &[0], &[255; 3]] {
        checks::parse::check(data);
        checks::los::check(data);
        checks::plan::check(data);
        checks::plugin_ops::check(data);
        checks::radius_mesh::check(data);
        checks::many::check(data);
        checks::on_demand::check(data);
        checks::avoidance::check(data);
        checks::atlas::check(data);
    }
}
