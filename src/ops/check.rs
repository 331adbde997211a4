//! Moved to the check stage ([`crate::check::ops`]).

// MOVED(issue 29): re-export until the merge
pub use crate::check::ops::{adapter_config, rendered};
