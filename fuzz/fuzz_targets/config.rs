//! `cargo +nightly fuzz run config`: see [`gpuplan_fuzz::config`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gpuplan_fuzz::config(data));
