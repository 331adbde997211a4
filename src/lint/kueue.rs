//! The rendered Kueue objects as the queue rules (GP020, GP021) read them: a hand-edited or adopted ClusterQueue,
//! a `--templates` override. Compile refuses the same in the profile (E0210), so these rules fire on objects
//! changed after it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::profile::Profile;
use crate::solve::NODEPOOL_LABEL;

use super::code::RuleCode;
use super::context::LintCtx;
use super::finding::Findings;
use super::rendered::Rendered;

/// One flavor of one rendered ClusterQueue.
pub struct FlavorRef<'v> {
    pub queue: &'v str,
    pub flavor: &'v str,
    /// The flavor's `nominalQuota` of each resource.
    pub nominal: BTreeMap<&'v str, &'v str>,
}

fn flavor_refs(queue: &Value) -> Vec<FlavorRef<'_>> {
    let name = queue["metadata"]["name"].as_str().unwrap_or_default();
    let groups = queue["spec"]["resourceGroups"].as_array().map(Vec::as_slice).unwrap_or_default();
    let flavors = groups.iter().flat_map(|g| g["flavors"].as_array().map(Vec::as_slice).unwrap_or_default());
    flavors
        .filter_map(|f| {
            let resources = f["resources"].as_array().map(Vec::as_slice).unwrap_or_default();
            let nominal = resources.iter().filter_map(|r| Some((r["name"].as_str()?, r["nominalQuota"].as_str()?))).collect();
            Some(FlavorRef { queue: name, flavor: f["name"].as_str()?, nominal })
        })
        .collect()
}

/// Every flavor of every rendered ClusterQueue of the cluster.
pub fn cluster_flavors<'v>(rendered: &Rendered<'v>) -> Vec<FlavorRef<'v>> {
    rendered.all("ClusterQueue").into_iter().flat_map(flavor_refs).collect()
}

/// The NodePool that a flavor stands for: the one whose nodes carry every one of its ResourceFlavor's nodeLabels
/// (`karpenter.sh/nodepool` is its name). None when no ResourceFlavor has the flavor's name, or no NodePool matches.
pub fn nodepool_of<'v>(rendered: &Rendered<'v>, flavor: &FlavorRef) -> Option<&'v Value> {
    let labels = rendered.get("ResourceFlavor", flavor.flavor)?["spec"]["nodeLabels"].as_object()?;
    rendered.all("NodePool").into_iter().find(|np| {
        let name = np["metadata"]["name"].as_str().unwrap_or_default();
        let template = &np["spec"]["template"]["metadata"]["labels"];
        labels.iter().all(|(k, v)| if k == NODEPOOL_LABEL { v == name } else { &template[k] == v })
    })
}

/// A finding at the queue's block in its profile (else at the first profile's name: a ClusterQueue no profile
/// declares), unless that profile allows the code.
pub fn queue_finding(lint: &LintCtx, out: &mut Findings, queue: &str, code: RuleCode, message: String, help: String) {
    let profiles: &[&Profile] = &lint.ctx.profiles;
    let declared = profiles.iter().find_map(|p| p.queues.iter().find(|q| q.name.value == queue).map(|q| (*p, q.quota.nominal.span)));
    let Some((profile, span)) = declared.or_else(|| profiles.first().map(|p| (*p, p.name.span))) else { return };
    out.profile(profile, code, span, message, help);
}
