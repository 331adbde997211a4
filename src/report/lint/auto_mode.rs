//! The EKS Auto Mode rule: what a profile asks for that Auto Mode's cluster cannot observe.
//!
//! - GP032: a `budget` in an Auto Mode cluster. The budget still bounds the NodePool limits, but its spend alert
//!   (`GpuplanProfileOverBudget`, on `karpenter_nodepools_cost_total`) is not emitted: Auto Mode runs Karpenter in the
//!   AWS-managed control plane with no metrics endpoint in the cluster (`ops::MetricSources`), so nothing would ever
//!   tell that the profile spends more than it should.

use super::Lint;
use crate::profile::Profile;
use crate::solve::ClusterPlan;

impl Lint<'_> {
    /// GP032 on one profile of the cluster.
    pub(super) fn auto_mode_budget(&mut self, cluster: &ClusterPlan, profile: &Profile) {
        let (true, Some(budget)) = (cluster.auto_mode, &profile.budget_usd_per_hour) else { return };
        let message = format!(
            "profile `{}` has a budget of ${:.2}/h, but cluster `{}` is in EKS Auto Mode: the budget bounds the NodePool limits, and no spend alert is emitted (Auto Mode exposes no Karpenter metrics, so karpenter_nodepools_cost_total does not exist)",
            profile.name.value, budget.value, cluster.name
        );
        let help = "watch the spend elsewhere (AWS Budgets or Cost Explorer on the cluster's tags; Auto Mode's AUTO_MODE_COMPUTE_LOGS show each launch), or leave out `auto-mode #true` to run Karpenter yourself".to_string();
        self.profile(cluster, profile, "GP032", budget.span, message, help);
    }
}
