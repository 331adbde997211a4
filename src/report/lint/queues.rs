//! The queue rules, on the rendered Kueue objects (a hand-edited or adopted ClusterQueue, a `--templates`
//! override): compile refuses the same in the profile (E0210), so these fire on objects changed after it.
//!
//! - GP020: a ClusterQueue flavor that stands for no NodePool — no ResourceFlavor of that name, or one whose
//!   `nodeLabels` no NodePool's nodes carry. Kueue admits the workload and injects the labels into its
//!   nodeSelector (`apis/kueue/v1beta2/resourceflavor_types.go`), and the pods stay pending for ever.
//! - GP021: the ClusterQueues' nominal quotas in a flavor add up to more than its NodePool's limit: admitted jobs
//!   wait for nodes Karpenter will not launch.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Lint;
use crate::profile::Profile;
use crate::queue::NODEPOOL_LABEL;
use crate::solve::ClusterPlan;

/// One flavor of one rendered ClusterQueue.
struct FlavorRef<'v> {
    queue: &'v str,
    flavor: &'v str,
    /// The flavor's `nominalQuota` of each resource.
    nominal: BTreeMap<&'v str, &'v str>,
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

/// The NodePool whose nodes carry every one of a ResourceFlavor's nodeLabels (`karpenter.sh/nodepool` is its name).
fn nodepool_of<'c>(lint: &Lint<'c>, flavor: &Value) -> Option<&'c Value> {
    let labels = flavor["spec"]["nodeLabels"].as_object()?;
    lint.rendered.all("NodePool").into_iter().find(|np| {
        let name = np["metadata"]["name"].as_str().unwrap_or_default();
        let template = &np["spec"]["template"]["metadata"]["labels"];
        labels.iter().all(|(k, v)| if k == NODEPOOL_LABEL { v == name } else { &template[k] == v })
    })
}

impl<'c> Lint<'c> {
    /// GP020 and GP021 on the cluster's rendered ClusterQueues.
    pub(super) fn queues(&mut self, cluster: &ClusterPlan, profiles: &[&'c Profile]) {
        let queues = self.rendered.all("ClusterQueue");
        let refs: Vec<FlavorRef> = queues.iter().flat_map(|q| flavor_refs(q)).collect();
        let mut held: BTreeMap<&str, (u64, Vec<String>, &Value)> = BTreeMap::new();
        for r in &refs {
            let nodepool = self.rendered.get("ResourceFlavor", r.flavor).and_then(|f| nodepool_of(self, f));
            let Some(np) = nodepool else {
                let message = format!("ClusterQueue `{}` admits to flavor `{}`, which stands for no NodePool of the cluster: its pods would wait for nodes that never come", r.queue, r.flavor);
                let help = format!("the ResourceFlavor `{}` must exist, and its nodeLabels be labels of one NodePool's nodes ({NODEPOOL_LABEL}: <NodePool>); compile writes both from the queue's pool", r.flavor);
                self.queue_finding(cluster, profiles, r.queue, "GP020", message, help);
                continue;
            };
            let resource = np["spec"]["limits"].as_object().and_then(|l| l.keys().find(|k| r.nominal.contains_key(k.as_str()) && *k != "cpu" && *k != "memory"));
            let Some(n) = resource.and_then(|k| r.nominal.get(k.as_str())).and_then(|n| n.parse::<u64>().ok()) else { continue };
            let e = held.entry(np["metadata"]["name"].as_str().unwrap_or_default()).or_insert((0, Vec::new(), np));
            e.0 += n;
            e.1.push(format!("{} {n}", r.queue));
        }
        for (name, (total, queues, np)) in held {
            let limits = np["spec"]["limits"].as_object();
            let Some((resource, limit)) = limits.and_then(|l| l.iter().find(|(k, _)| *k != "cpu" && *k != "memory")).and_then(|(k, v)| Some((k, v.as_str()?.parse::<u64>().ok()?))) else { continue };
            if total <= limit {
                continue;
            }
            let first = queues[0].split(' ').next().unwrap_or_default().to_string();
            let message = format!("the ClusterQueues' nominal quotas in flavor `{name}` add up to {total} {resource}, above NodePool `{name}`'s limit of {limit} ({})", queues.join(", "));
            let help = format!("lower the nominal quotas to {limit} in all, or raise the NodePool's limit: compile derives both from the profile");
            self.queue_finding(cluster, profiles, &first, "GP021", message, help);
        }
    }

    /// A finding at the queue's block in its profile (else at the first profile's name: a ClusterQueue no profile
    /// declares), unless that profile allows the code.
    fn queue_finding(&mut self, cluster: &ClusterPlan, profiles: &[&'c Profile], queue: &str, code: &'static str, message: String, help: String) {
        let declared = profiles.iter().find_map(|p| p.queues.iter().find(|q| q.name.value == queue).map(|q| (*p, q.quota.nominal.span)));
        let Some((profile, span)) = declared.or_else(|| profiles.first().map(|p| (*p, p.name.span))) else { return };
        self.profile(cluster, profile, code, span, message, help);
    }
}

