//! `cargo +nightly fuzz run profile`: see [`gpuplan_fuzz::profile`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gpuplan_fuzz::profile(data));
