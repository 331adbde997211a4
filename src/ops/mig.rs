//! Which MIG configuration exists for which GPU: now `solve::mig` (the solver's MIG filter and unit counts read it).

// MOVED(issue 29): re-export until the merge
pub use crate::solve::mig::{MigConfigs, DEFAULT_MIG_PARTED_CONFIG};
