//! GP033: a `raw "EC2NodeClass"` fragment that sets a field the AWS provider filters instance types by.
//!
//! aws/karpenter-provider-aws v1.14.1 `pkg/providers/instancetype/compatibility/compatibility.go`
//! `IsCompatibleWithNodeClass` drops every instance type the class cannot launch: `cpuOptions.nestedVirtualization:
//! enabled` keeps only types whose processor supports it, `networkInterfaces` (EFA-only cards, several interfaces)
//! only types with those cards, a `placementGroupSelector` only types that support the group's strategy, and
//! `connectionTracking` only types that support its timeouts. gpuplan's catalog holds none of those facts, so the
//! pool's candidates, its cost and `simulate` may count types Karpenter never launches; a GPU family without the
//! feature can leave the pool launching nothing.

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp033,
    name: "raw-field-filters-types",
    summary: "a `raw \"EC2NodeClass\"` fragment sets cpuOptions, networkInterfaces, placementGroupSelector or connectionTracking: Karpenter drops the types the class cannot launch, which gpuplan's catalog cannot tell",
    checks_output: false,
    check: Scope::Profile(check),
};

/// The class fields `IsCompatibleWithNodeClass` filters by, with what it checks.
const FILTERING: [(&str, &str); 4] = [
    ("cpuOptions", "the processor's nested-virtualization support"),
    ("networkInterfaces", "the network cards and EFA interfaces"),
    ("placementGroupSelector", "the placement group's strategy"),
    ("connectionTracking", "connection-tracking timeouts"),
];

/// GP033 on one profile: each class fragment (cluster or pool level) that sets a filtering field, once.
pub fn check(_: &LintCtx, profile: &Profile, out: &mut Findings) {
    // A pool's own fragments are silenced by the pool's `allow`, the cluster block's by the profile's.
    let silenced = |t: &crate::profile::Tier| t.settings.allow.iter().any(|a| a.value == RULE.code.as_str());
    for raw in crate::profile::raw::fragments_once(profile, "EC2NodeClass", silenced) {
        let spec = &raw.patch["spec"];
        let set: Vec<String> = FILTERING.iter().filter(|(field, _)| !spec[field].is_null()).map(|(field, what)| format!("{field} ({what})")).collect();
        if set.is_empty() {
            continue;
        }
        let message = format!(
            "this raw EC2NodeClass fragment sets {}: Karpenter drops every instance type the class cannot launch (the provider's IsCompatibleWithNodeClass), which gpuplan's catalog cannot tell, so the pool's types, cost and simulation may include types Karpenter never launches",
            set.join(", ")
        );
        let help = "pin types that support it (`types` or `require`), and check the pool with a real launch".to_string();
        out.profile(profile, RULE.code, raw.span, message, help);
    }
}
