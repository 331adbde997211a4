//! DaemonSet overhead: what the DaemonSets that would run on a node take from it before any pending pod does.
//!
//! kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/provisioning/scheduling/scheduler.go`:
//! `buildDaemonOverheadGroups` finds, per NodePool and instance type, the DaemonSet pods that would run there
//! (`isDaemonPodCompatible`: the pod tolerates the NodePool's taints, PreferNoSchedule ones always, and its nodeSelector
//! plus one of its required node affinity terms is compatible with the NodePool's requirements and intersects the
//! type's labels); their requests and one `pods` slot each (`resources.RequestsForPods`) are the type's overhead.
//! `nodeclaim.go` `filterInstanceTypesByRequirements` then keeps a type only if the NodeClaim's requests plus that
//! overhead fit its allocatable, and skips it when the pod's host ports clash with a daemon's (`HostPortUsage`).
//! Startup taints do not count (only `spec.taints` are checked), so a daemon kept off a node by a startup taint still
//! counts as overhead there.

use super::manifests::NodePool;
use super::pods::{HostPort, Pod, ports_conflict};
use super::requirements::{Requirements, Toleration, untolerated};
use super::yaml::{Doc, Resources};

/// The daemons of one instance type in one NodePool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DaemonOverhead {
    /// `namespace/name` of each DaemonSet that runs there, in input order.
    pub daemon_sets: Vec<String>,
    /// Their summed requests, `pods` included.
    pub requests: Resources,
    pub host_ports: Vec<HostPort>,
}

impl DaemonOverhead {
    /// The DaemonSets of `daemons` that would run on a node of `pool` with the type's labels `type_labels`.
    pub fn of(pool: &NodePool, type_labels: &Requirements, daemons: &[Pod]) -> DaemonOverhead {
        let mut out = DaemonOverhead::default();
        for d in daemons.iter().filter(|d| runs_on(pool, type_labels, d)) {
            out.daemon_sets.push(d.key.clone());
            for (k, v) in &d.requests {
                *out.requests.entry(k.clone()).or_default() += v;
            }
            out.host_ports.extend(d.host_ports.iter().cloned());
        }
        out
    }

    /// Whether a pod binding `ports` clashes with a daemon's host port (the type is then skipped).
    pub fn blocks_ports(&self, ports: &[HostPort]) -> bool {
        ports_conflict(ports, &self.host_ports)
    }

    /// resources.Fits of `requests` plus this overhead against `allocatable`, without building the sum: this runs for
    /// every candidate type on every attempt to add a pod. A type with a negative allocatable fits nothing.
    pub fn fits(&self, requests: &Resources, allocatable: &Resources) -> bool {
        if !super::yaml::allocatable_usable(allocatable) {
            return false;
        }
        let within = |k: &String, v: i128| v <= 0 || allocatable.get(k).is_some_and(|a| v <= *a);
        requests
            .iter()
            .all(|(k, v)| within(k, v + self.requests.get(k).copied().unwrap_or(0)))
            && self
                .requests
                .iter()
                .filter(|(k, _)| !requests.contains_key(*k))
                .all(|(k, v)| within(k, *v))
    }
}

/// The DaemonSets of the add-ons the cluster's objects configure (`crate::charts::daemon_sets`) and the EKS node
/// DaemonSets named in `node_daemons` (`crate::charts::node_daemons`), less those of a `namespace/name` in `given`: a
/// DaemonSet given as input describes the cluster better than the chart's defaults.
pub fn add_ons(objects: &[&serde_json::Value], given: &[Pod], node_daemons: &[String]) -> Vec<serde_json::Value> {
    let key = |o: &serde_json::Value| {
        format!(
            "{}/{}",
            o["metadata"]["namespace"].as_str().unwrap_or("default"),
            o["metadata"]["name"].as_str().unwrap_or("")
        )
    };
    crate::charts::daemon_sets::daemon_set_objects(objects)
        .into_iter()
        .chain(crate::charts::node_daemons::daemon_set_objects(node_daemons))
        .filter(|o| !given.iter().any(|g| g.key == key(o)))
        .collect()
}

/// The EKS node DaemonSets a cluster of these objects runs when nothing says otherwise
/// (`crate::charts::node_daemons::default_names`): none when its nodes are all EKS Auto Mode's (an
/// `eks.amazonaws.com` NodeClass and no EC2NodeClass), all four otherwise.
pub fn default_node_daemons(objects: &[&serde_json::Value]) -> Vec<String> {
    let has = |kind: &str| objects.iter().any(|o| o["kind"] == kind);
    crate::charts::node_daemons::default_names(has("NodeClass") && !has("EC2NodeClass"))
}

/// The pods of DaemonSet objects gpuplan built (`add_ons`).
pub fn daemon_pods(objects: &[serde_json::Value]) -> Vec<Pod> {
    let docs: Vec<Doc> = objects
        .iter()
        .map(|o| Doc {
            path: "<add-on DaemonSets>".into(),
            line: 1,
            text: String::new(),
            value: std::borrow::Cow::Borrowed(o),
        })
        .collect();
    // Built from constants and rendered values: every one has a name and a pod spec.
    super::pods::daemon_sets(&docs).unwrap_or_default()
}

/// scheduler.go `isDaemonPodCompatible`.
fn runs_on(pool: &NodePool, type_labels: &Requirements, daemon: &Pod) -> bool {
    let mut tolerations = daemon.tolerations.clone();
    tolerations.push(Toleration::prefer_no_schedule());
    if untolerated(&pool.taints, &tolerations).is_some() {
        return false;
    }
    // No required term: the nodeSelector alone. Several: each in turn (preferences.go `removeRequiredNodeAffinityTerm`
    // drops the first while more than one is left).
    let terms: Vec<Requirements> = if daemon.required_terms.is_empty() {
        vec![daemon.node_selector.clone()]
    } else {
        daemon
            .required_terms
            .iter()
            .map(|t| daemon.node_selector.merged(t))
            .collect()
    };
    terms.iter().any(|reqs| {
        pool.requirements.compatible(reqs).is_ok() && type_labels.intersects(reqs).is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::requirements::{Requirement, Taint};

    fn pool(taints: &[(&str, &str)], labels: &[(&str, &str)]) -> NodePool {
        let mut requirements = Requirements::default();
        for (k, v) in labels {
            requirements.add(k, Requirement::is_in([v.to_string()]));
        }
        NodePool {
            name: "p".into(),
            weight: 0,
            requirements,
            taints: taints
                .iter()
                .map(|(k, e)| Taint {
                    key: k.to_string(),
                    value: String::new(),
                    effect: e.to_string(),
                })
                .collect(),
            limits: Resources::new(),
            node_class: "c".into(),
            auto_mode: false,
            static_replicas: None,
            catalog_region: None,
            labels: Default::default(),
            location: String::new(),
        }
    }

    fn daemon(key: &str, cpu: i128) -> Pod {
        Pod {
            key: key.into(),
            requests: Resources::from([("cpu".to_string(), cpu), ("pods".to_string(), 1000)]),
            ..Pod::default()
        }
    }

    fn type_labels(instance_type: &str) -> Requirements {
        let mut r = Requirements::default();
        r.add(
            "node.kubernetes.io/instance-type",
            Requirement::is_in([instance_type.to_string()]),
        );
        r
    }

    #[test]
    fn overhead_sums_the_requests_and_one_pod_slot_per_daemon() {
        let o = DaemonOverhead::of(
            &pool(&[], &[]),
            &type_labels("m5.large"),
            &[daemon("a/x", 100), daemon("a/y", 250)],
        );
        assert_eq!(o.daemon_sets, ["a/x", "a/y"]);
        assert_eq!(
            o.requests,
            Resources::from([("cpu".to_string(), 350), ("pods".to_string(), 2000)])
        );
    }

    #[test]
    fn a_daemon_that_does_not_tolerate_the_pool_taint_is_no_overhead() {
        let o = DaemonOverhead::of(
            &pool(&[("gpu", "NoSchedule")], &[]),
            &type_labels("m5.large"),
            &[daemon("a/x", 100)],
        );
        assert!(o.daemon_sets.is_empty());
    }

    #[test]
    fn prefer_no_schedule_taints_never_keep_a_daemon_off() {
        let o = DaemonOverhead::of(
            &pool(&[("soft", "PreferNoSchedule")], &[]),
            &type_labels("m5.large"),
            &[daemon("a/x", 100)],
        );
        assert_eq!(o.daemon_sets, ["a/x"]);
    }

    // The GPU Operator's operands select `nvidia.com/gpu.deploy.<operand>=true`, a label the operator sets after the
    // node registers: no NodePool defines it, so for Karpenter they run nowhere (IsCompatible with
    // AllowUndefinedWellKnownLabels refuses an undefined custom label).
    #[test]
    fn a_daemon_selecting_a_label_the_pool_does_not_define_is_no_overhead() {
        let mut d = daemon("gpu-operator/nvidia-device-plugin-daemonset", 0);
        d.node_selector.add(
            "nvidia.com/gpu.deploy.device-plugin",
            Requirement::is_in(["true".to_string()]),
        );
        assert!(
            DaemonOverhead::of(&pool(&[], &[]), &type_labels("g5.xlarge"), &[d.clone()])
                .daemon_sets
                .is_empty()
        );
        let labelled = pool(&[], &[("nvidia.com/gpu.deploy.device-plugin", "true")]);
        assert_eq!(
            DaemonOverhead::of(&labelled, &type_labels("g5.xlarge"), &[d])
                .daemon_sets
                .len(),
            1
        );
    }

    #[test]
    fn instance_type_affinity_decides_per_type_and_any_required_term_will_do() {
        let mut d = daemon("kube-system/efa", 10);
        let term = |t: &str| type_labels(t);
        d.required_terms = vec![term("p5.48xlarge"), term("p4d.24xlarge")];
        assert_eq!(
            DaemonOverhead::of(&pool(&[], &[]), &type_labels("p4d.24xlarge"), &[d.clone()])
                .daemon_sets
                .len(),
            1
        );
        assert!(
            DaemonOverhead::of(&pool(&[], &[]), &type_labels("g5.xlarge"), &[d])
                .daemon_sets
                .is_empty()
        );
    }

    #[test]
    fn fits_counts_overhead_on_resources_the_pod_does_not_request() {
        let o = DaemonOverhead {
            requests: Resources::from([("memory".to_string(), 2000)]),
            ..Default::default()
        };
        let alloc = Resources::from([("cpu".to_string(), 2000), ("memory".to_string(), 1000)]);
        assert!(
            !o.fits(&Resources::from([("cpu".to_string(), 500)]), &alloc),
            "the daemons' memory alone exceeds allocatable"
        );
        assert!(
            DaemonOverhead::default().fits(&Resources::from([("cpu".to_string(), 500)]), &alloc)
        );
    }

    // sigs.k8s.io/karpenter v1.14.1 pkg/utils/resources `Fits`: "If any of the total resource values are negative
    // then the resource will never fit", whatever is requested.
    #[test]
    fn a_type_with_negative_allocatable_memory_fits_no_pod_even_one_asking_for_cpu_only() {
        let alloc = Resources::from([("cpu".to_string(), 2000), ("memory".to_string(), -5)]);
        let cpu = Resources::from([("cpu".to_string(), 500)]);
        assert!(!DaemonOverhead::default().fits(&cpu, &alloc));
        assert!(!super::super::yaml::fits(&Resources::new(), &alloc), "nor a NodeClaim that requests nothing");
        let zero = Resources::from([("cpu".to_string(), 2000), ("memory".to_string(), 0)]);
        assert!(DaemonOverhead::default().fits(&cpu, &zero), "zero is not negative");
    }

    #[test]
    fn host_ports_clash_unless_ip_or_protocol_differ() {
        let port = |ip: &str, protocol: &str| HostPort {
            ip: ip.parse().ok(),
            port: 9100,
            protocol: protocol.into(),
        };
        let o = DaemonOverhead {
            host_ports: vec![port("0.0.0.0", "")],
            ..Default::default()
        };
        assert!(
            o.blocks_ports(&[port("10.0.0.1", "")]),
            "0.0.0.0 matches every IP"
        );
        assert!(
            !o.blocks_ports(&[port("10.0.0.1", "TCP")]),
            "an unset protocol is not TCP in undefaulted pods"
        );
        let specific = DaemonOverhead {
            host_ports: vec![port("10.0.0.1", "TCP")],
            ..Default::default()
        };
        assert!(!specific.blocks_ports(&[port("10.0.0.2", "TCP")]));
    }
}
