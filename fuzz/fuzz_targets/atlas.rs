//! Fuzz target `atlas`: a thin wrapper around `checks::atlas::check`, which
//! the stable test `tests/fuzz_corpus.rs` also runs on the committed corpus.

#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::atlas::check(data));
