//! `cargo +nightly fuzz run adopt_yaml`: see [`gpuplan_fuzz::adopt_yaml`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gpuplan_fuzz::adopt_yaml(data));
