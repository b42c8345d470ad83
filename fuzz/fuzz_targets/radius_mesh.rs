//! Fuzz target `radius_mesh`: a thin wrapper around `checks::radius_mesh::check`, which the
//! stable test `tests/fuzz_corpus.rs` also runs on the committed corpus.

#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::radius_mesh::check(data));
