//! Operations manifests generated from the same profiles as the pools.
pub mod mig;
