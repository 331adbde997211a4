//! GP032, the EKS Auto Mode rule: what a profile asks for that Auto Mode's cluster cannot observe. A `budget` in an
//! Auto Mode cluster still bounds the NodePool limits, but its spend alert (`GpuplanProfileOverBudget`, on
//! `karpenter_nodepools_cost_total`) is not emitted: Auto Mode runs Karpenter in the AWS-managed control plane with
//! no metrics endpoint in the cluster (`ops::MetricSources`), so nothing would ever tell that the profile spends more
//! than it should.

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp032,
    name: "budget-alert-in-auto-mode",
    summary: "a `budget` in an EKS Auto Mode cluster: it bounds the NodePool limits, but no spend alert can be emitted (Auto Mode exposes no Karpenter metrics)",
    checks_output: false,
    check: Scope::Profile(check),
};

/// GP032 on one profile of the cluster.
pub fn check(lint: &LintCtx, profile: &Profile, out: &mut Findings) {
    let cluster = lint.cluster();
    let (true, Some(budget)) = (cluster.auto_mode, &profile.budget_usd_per_hour) else { return };
    let message = format!(
        "profile `{}` has a budget of ${:.2}/h, but cluster `{}` is in EKS Auto Mode: the budget bounds the NodePool limits, and no spend alert is emitted (Auto Mode exposes no Karpenter metrics, so karpenter_nodepools_cost_total does not exist)",
        profile.name.value, budget.value, cluster.name
    );
    let help = "watch the spend elsewhere (AWS Budgets or Cost Explorer on the cluster's tags; Auto Mode's AUTO_MODE_COMPUTE_LOGS show each launch), or leave out `auto-mode #true` to run Karpenter yourself".to_string();
    out.profile(profile, RULE.code, budget.span, message, help);
}
