//! Fuzz target `on_demand`: a thin wrapper around `checks::on_demand::check`, which the
//! stable test `tests/fuzz_corpus.rs` also runs on the committed corpus.

#![no_main]

#[path = "../checks/mod.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::on_demand::check(data));
