//! The add-ons' DaemonSets as their charts create them: now `charts::daemon_sets` and `charts::instance_types`.

// MOVED(issue 29): re-export until the merge
pub use crate::charts::daemon_sets::daemon_set_objects;
// MOVED(issue 29): re-export until the merge
pub use crate::charts::instance_types::TypeList;
