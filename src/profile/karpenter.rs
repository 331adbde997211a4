//! The cluster's Karpenter as the profile states it: `karpenter-version` (the release the output targets) and
//! `interruption-queue` (the SQS queue its interruption handling reads).
//!
//! ```kdl
//! cluster "ml-prod" { …; karpenter-version "v1.14.1"; interruption-queue "Karpenter-ml-prod" }
//! ```

use kdl::KdlNode;

use super::parser::Parser;
use crate::diagnostic::{ErrorCode, Spanned};

/// The one Karpenter release gpuplan's output targets: the CRDs in `src/crds/karpenter` (NodePool, EC2NodeClass,
/// NodeOverlay) that validate every object are this release's, and the feature gates the prerequisites list are its
/// (`solve::prerequisites`). Another release is refused (E0380) until its CRDs are pinned beside these.
pub const KARPENTER_VERSION: &str = "v1.14.1";

/// What an SQS queue name may be (Amazon SQS Developer Guide, "Amazon SQS queue quotas" / CreateQueue `QueueName`:
/// "up to 80 characters … alphanumeric characters, hyphens (-), and underscores (_)"; a FIFO queue's ends in
/// `.fifo`, which EC2's event delivery through EventBridge does not support, so Karpenter's queue is a standard one).
pub fn check_queue_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 80 {
        return Err(format!("{} characters, where a queue name has 1 to 80", name.len()));
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        Some(c) => Err(format!("`{c}` is not a letter, digit, `-` or `_` (write the queue's name, not its URL or ARN)")),
        None => Ok(()),
    }
}

impl Parser<'_> {
    /// `karpenter-version "v1.14.1"`: the release the output targets. Only [`KARPENTER_VERSION`] (with or without
    /// its `v`): another release's CRDs and feature gates differ, and gpuplan validates against these alone (E0380).
    pub(super) fn parse_karpenter_version(&mut self, node: &KdlNode) {
        let Some(version) = self.single_string(node) else { return };
        if version.trim_start_matches('v') != KARPENTER_VERSION.trim_start_matches('v') {
            self.error_labelled(
                version.span,
                ErrorCode::E0380,
                format!("Karpenter `{}` is not a version gpuplan targets: its output is validated against the CRDs of Karpenter {KARPENTER_VERSION} only", crate::input::excerpt(&version.value)),
                "a Karpenter release",
                &format!("write karpenter-version \"{KARPENTER_VERSION}\" (and run that release), or leave the line out; another release needs its CRDs pinned in gpuplan first"),
            );
        }
    }

    /// `interruption-queue "<name>"`: the SQS queue Karpenter reads EC2's interruption events from (E0381 for a
    /// name SQS refuses).
    pub(super) fn parse_interruption_queue(&mut self, node: &KdlNode) -> Option<Spanned<String>> {
        let queue = self.single_string(node)?;
        if let Err(reason) = check_queue_name(&queue.value) {
            let message = format!("interruption queue `{}` is not an SQS queue name: {reason}", crate::input::excerpt(&queue.value));
            self.error_labelled(queue.span, ErrorCode::E0381, message, "a queue name", "write the name of the SQS queue Karpenter's interruption handling reads (its Helm value settings.interruptionQueue), e.g. interruption-queue \"Karpenter-ml-prod\"");
            return None;
        }
        Some(queue)
    }
}

/// What an EC2 placement group name may be (EC2 `CreatePlacementGroup`, `GroupName`: "Up to 255 ASCII
/// characters"; the EC2NodeClass CRD's `placementGroupSelector.name` has `minLength: 1`).
pub fn check_placement_group_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 255 {
        return Err(format!("{} characters, where a placement group name has 1 to 255", name.len()));
    }
    match name.chars().find(|c| !c.is_ascii() || c.is_ascii_control()) {
        Some(c) => Err(format!("`{}` is not a printable ASCII character", c.escape_default())),
        None => Ok(()),
    }
}

impl Parser<'_> {
    /// `placement-group "<name>"`: the EC2 placement group of the pool's nodes (E0384 for a name EC2 refuses).
    pub(super) fn parse_placement_group(&mut self, node: &KdlNode) -> Option<Spanned<String>> {
        let group = self.single_string(node)?;
        if let Err(reason) = check_placement_group_name(&group.value) {
            let message = format!("placement group `{}` is not an EC2 placement group name: {reason}", crate::input::excerpt(&group.value));
            self.error_labelled(group.span, ErrorCode::E0384, message, "a placement group name", "write the name of a cluster placement group created in the pool's zone, e.g. placement-group \"training-ml-prod\"");
            return None;
        }
        Some(group)
    }
}

#[cfg(test)]
mod tests {
    use super::check_queue_name;

    /// Amazon SQS CreateQueue `QueueName`: up to 80 alphanumerics, hyphens and underscores.
    #[test]
    fn a_queue_url_is_not_a_queue_name() {
        assert!(check_queue_name("Karpenter-ml_prod").is_ok());
        assert!(check_queue_name("https://sqs.us-east-1.amazonaws.com/1/Karpenter-ml-prod").is_err());
        assert!(check_queue_name(&"q".repeat(81)).is_err());
    }
}
