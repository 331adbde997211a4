//! Every limit gpuplan puts on the work a pull request controls, in one list ([`ALL`]): what it counts, its
//! default, and the environment variable that raises it on purpose. Each is a count the code enforces, and an input
//! beyond it is a located error that names the limit and the variable (exit 2, out/ untouched), never a crash or a
//! run without end. `docs/src/reliability.md` ("Bounded inputs") lists the same rows, and `tests/hostile.rs` checks
//! that it lists every one of [`ALL`] with its default.
//!
//! The defaults fit the repository's examples with room (its demand file replays 600 cluster-days and draws fewer
//! than 2,000 random events per cluster and seed) and keep a debug-build CI run bounded (`benches/bounded.rs`
//! measures each at its maximum).

use std::io;

/// One limit: what it counts and how to raise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The environment variable that changes it (a positive whole number; `_` separators allowed).
    pub env: &'static str,
    pub default: u64,
    /// What is counted, for messages and the docs: "random events one forecast draw produces".
    pub counts: &'static str,
}

impl Limit {
    /// The limit in force: the variable's value when set, else the default (a value that is not a positive whole
    /// number is an error, see [`crate::input::env_limit`]).
    pub fn value(&self) -> io::Result<u64> {
        crate::input::env_limit(self.env, self.default)
    }

    /// The value in force, or the default when the variable is malformed (for the draw's safety stops, which run
    /// after [`Limit::value`] has already been checked and reported).
    pub fn value_or_default(&self) -> u64 {
        self.value().unwrap_or(self.default)
    }

    /// The end of a message: how to raise it on purpose.
    pub fn how_to_raise(&self) -> String {
        format!("raise the limit on purpose with {}=N (default {})", self.env, self.default)
    }
}

/// Bytes of one input file: a profile, catalog, pods YAML, template, CRD, CSV, and each file of the base's out/
/// that `diff --base` reads from git (its size is checked before the blob is read).
pub const INPUT_BYTES: Limit = Limit { env: crate::input::MAX_INPUT_BYTES_ENV, default: crate::input::DEFAULT_MAX_INPUT_BYTES, counts: "bytes of one input file, and of each file of the base's out/ read from git" };

/// Pods one simulation makes, counted from `replicas`/`parallelism` before any pod is made.
pub const PODS: Limit = Limit { env: "GPUPLAN_MAX_PODS", default: 100_000, counts: "pods one simulation makes" };

/// Pools one compile takes, over every profile (each pool is solved against the catalog, and the budget's search
/// prices them ~20 times: 20,000 pools take 0.4 s and 240 MiB in release).
pub const POOLS: Limit = Limit { env: "GPUPLAN_MAX_POOLS", default: 20_000, counts: "pools one compile takes, over every profile" };

/// Random events (Jobs, spot interruptions, shortage starts; for a queue, the candidates its thinning draws at
/// the pattern's peak) one forecast draw of one cluster and one seed is expected to produce, from the rates and the
/// horizon, checked before anything is drawn.
pub const FORECAST_EVENTS: Limit = Limit { env: "GPUPLAN_MAX_FORECAST_EVENTS", default: 20_000, counts: "random events (Jobs, spot interruptions, shortages) one forecast draw of one cluster and seed is expected to produce" };

/// Simulated days one forecast replays: clusters × horizon days × seeds (`diff` replays the base and the head,
/// each counted on its own).
pub const SIMULATED_DAYS: Limit = Limit { env: "GPUPLAN_MAX_SIMULATED_DAYS", default: 1_500, counts: "simulated days one forecast replays: clusters × horizon days × seeds" };

/// Bytes of the CSV files one demand file reads, together (each distinct file read once, however many series name it).
pub const CSV_BYTES: Limit = Limit { env: "GPUPLAN_MAX_CSV_BYTES", default: 64 << 20, counts: "bytes of the distinct CSV files one demand file reads, together" };

/// Rows of the CSV series of one demand file, counted once per series that names the file (each series holds its
/// points: a year of one-minute samples is 525,600 rows).
pub const CSV_ROWS: Limit = Limit { env: "GPUPLAN_MAX_CSV_ROWS", default: 2_000_000, counts: "rows of the CSV series of one demand file, counted per series naming the file" };

/// Template instructions the renders of one compile run together: minijinja's fuel (`Environment::set_fuel`, which
/// stops one render), summed over the renders (`render::Renderer`), so that a loop in a template rendered once per
/// pool cannot multiply by the pool limit.
pub const TEMPLATE_FUEL: Limit = Limit { env: "GPUPLAN_TEMPLATE_FUEL", default: 10_000_000, counts: "template instructions (minijinja fuel) the renders of one compile run together" };

/// Bytes the template renders of one compile write, together (each render writes into a buffer that refuses the
/// byte past what is left), so that `{{ "x" * 100000000 }}` in a loop stops at the limit instead of at the
/// machine's memory.
pub const RENDERED_BYTES: Limit = Limit { env: "GPUPLAN_MAX_RENDERED_BYTES", default: 256 << 20, counts: "bytes the template renders of one compile write together" };

/// Bytes of memory the `gpuplan` process holds at once, the backstop for growth no count above sees (a template
/// that doubles a string in a loop writes nothing until it is done): past it the process stops with exit 2 and a
/// message naming the limit (`src/main.rs`'s allocator), never a crash.
pub const MEMORY_BYTES: Limit = Limit { env: "GPUPLAN_MAX_MEMORY_BYTES", default: 4 << 30, counts: "bytes of memory the gpuplan process holds at once" };

/// Bytes of the base's out/ that `diff --base` reads from git, together (each blob's size read from its header
/// before its content).
pub const BASE_OUT_BYTES: Limit = Limit { env: "GPUPLAN_MAX_BASE_OUT_BYTES", default: 256 << 20, counts: "bytes of the base's out/ (and base profiles) read from git by `diff --base`, together" };

/// Every limit, in the order the docs list them.
pub const ALL: &[Limit] = &[INPUT_BYTES, PODS, POOLS, FORECAST_EVENTS, SIMULATED_DAYS, CSV_BYTES, CSV_ROWS, TEMPLATE_FUEL, RENDERED_BYTES, BASE_OUT_BYTES, MEMORY_BYTES];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variable names one limit, so raising one never raises another.
    #[test]
    fn every_limit_has_its_own_variable() {
        let mut envs: Vec<&str> = ALL.iter().map(|l| l.env).collect();
        envs.sort_unstable();
        envs.dedup();
        assert_eq!(envs.len(), ALL.len());
    }

    /// The two limits that predate this list keep their own constants' values.
    #[test]
    fn the_older_limits_are_the_ones_their_readers_use() {
        assert_eq!(PODS.env, crate::simulate::pods::MAX_PODS_ENV);
        assert_eq!(PODS.default, crate::simulate::pods::DEFAULT_MAX_PODS);
    }
}
