//! `cargo +nightly fuzz run demand`: see [`gpuplan_fuzz::demand`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gpuplan_fuzz::demand(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/csv")), data));
