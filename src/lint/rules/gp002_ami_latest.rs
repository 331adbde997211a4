//! GP002: an EC2NodeClass AMI alias `@latest`: every node of its NodePools drifts on every AMI release.

use std::collections::BTreeSet;

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;
use crate::solve::ClusterPlan;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp002,
    name: "ami-latest",
    summary: "EC2NodeClass AMI alias `@latest` (every node of its NodePools drifts on every AMI release)",
    checks_output: true,
    check: Scope::Profile(check),
};

/// GP002: `@latest` AMI alias on any EC2NodeClass of the profile.
pub fn check(lint: &LintCtx, profile: &Profile, out: &mut Findings) {
    let cluster = lint.cluster();
    let classes = cluster.node_classes.iter().filter(|n| n.profile == profile.name.value);
    let mut latest = BTreeSet::new();
    for class in classes {
        let Some(object) = lint.rendered.get("EC2NodeClass", &class.name) else { continue };
        for term in object["spec"]["amiSelectorTerms"].as_array().into_iter().flatten() {
            if let Some(alias) = term["alias"].as_str().filter(|a| a.ends_with("@latest")) {
                latest.insert((class.name.clone(), alias.to_string()));
            }
        }
    }
    if latest.is_empty() {
        return;
    }
    let aliases: BTreeSet<&str> = latest.iter().map(|(_, a)| a.as_str()).collect();
    let classes: Vec<&str> = latest.iter().map(|(c, _)| c.as_str()).collect();
    let family = aliases.iter().next().and_then(|a| a.split('@').next()).unwrap_or("al2023");
    out.profile(
        profile,
        RULE.code,
        profile.cluster.ami.span,
        format!(
            "AMI alias `{}` (EC2NodeClass {}) follows every AMI release: each release drifts and replaces every node of {}",
            aliases.into_iter().collect::<Vec<_>>().join("`, `"),
            classes.join(", "),
            fleet(cluster, profile)
        ),
        format!("pin a release, e.g. ami \"{family}@v20251023\", and bump it deliberately"),
    );
}

/// What GP002 says an AMI release replaces: the profile's GPU (or Neuron) fleet when its pools are accelerated, its
/// nodes otherwise (a CPU pool's nodes are no GPU fleet).
fn fleet(cluster: &ClusterPlan, profile: &Profile) -> String {
    let accelerated = cluster.pools.iter().filter(|p| p.profile == profile.name.value).any(|p| p.accelerator.is_accelerator());
    if accelerated { format!("profile `{}`'s NodePools (its whole accelerator fleet)", profile.name.value) } else { format!("profile `{}`'s NodePools", profile.name.value) }
}
