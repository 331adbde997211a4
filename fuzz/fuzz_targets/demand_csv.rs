//! `cargo +nightly fuzz run demand_csv`: see [`gpuplan_fuzz::demand_csv`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gpuplan_fuzz::demand_csv(data));
