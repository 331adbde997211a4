//! GP050: spot NodePools in a cluster whose Karpenter has no interruption queue.
//!
//! Karpenter drains a spot node ahead of its interruption only when it reads EC2's events from an SQS queue
//! (aws/karpenter-provider-aws v1.14.1 `pkg/operator/options/options.go`, `--interruption-queue` / Helm
//! `settings.interruptionQueue`: "Interruption handling is disabled if not specified"; `pkg/controllers/controllers.go`
//! starts the interruption controller only when it is set). Without it the two-minute spot warning passes unseen:
//! the node's pods are killed with the instance and their replacements are provisioned only after they went
//! pending. A risk some accept (batch that retries), so a warning; `interruption-queue "<name>"` in the cluster
//! block says the queue exists. EKS Auto Mode handles interruption notices itself (EKS User Guide, "Automate cluster
//! infrastructure with EKS Auto Mode": "Automatically handles EC2 Spot Instance interruption notices").

use crate::catalog::CapacityType;
use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp050,
    name: "spot-without-interruption-queue",
    summary: "spot NodePools while the cluster names no Karpenter interruption queue (`interruption-queue`): spot nodes are not drained ahead of an interruption",
    checks_output: true,
    check: Scope::Profile(check),
};

/// GP050 on one profile: its rendered spot NodePools, when the cluster (any of its profiles) names no queue. One
/// finding per profile, at its cluster block, where the line goes.
pub fn check(lint: &LintCtx, profile: &Profile, out: &mut Findings) {
    let cluster = lint.cluster();
    if cluster.auto_mode || cluster.interruption_queue.is_some() {
        return;
    }
    let spot: Vec<&str> = lint.pools_of(profile).iter().filter(|p| p.np.capacity_types().contains(&CapacityType::Spot)).map(|p| p.plan.name.as_str()).collect();
    if spot.is_empty() {
        return;
    }
    let message = format!(
        "spot NodePool{} {} in cluster `{}`, whose Karpenter has no interruption queue named: spot nodes are not cordoned and drained on EC2's two-minute interruption warning, so their pods die with the instance",
        if spot.len() == 1 { "" } else { "s" },
        spot.join(", "),
        cluster.name
    );
    let help = "create the SQS queue and its EventBridge rules (Karpenter's getting-started CloudFormation template), set Karpenter's settings.interruptionQueue to it, and say so in the cluster block: interruption-queue \"<queue name>\"".to_string();
    out.profile(profile, RULE.code, profile.cluster.span, message, help);
}
