//! What a tier's settings make of its NodePool once its types are chosen: the [`PoolPlan`] with its labels and
//! taints ([`pool_plan`]), and its requirements once the limit has dropped the types too big for it
//! ([`requirements`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::{AcceleratorKind, CapacityType};
use crate::profile::{Pool, Profile, Settings, Sharing, Taint, Tier};

use super::disruption::disruption_plan;
use super::node_class::host_device_plugin;
use super::pool::{Candidate, PoolPlan, Requirement, POOL_LABEL};
use crate::charts::gpu_operator::{DEPLOY_DEVICE_PLUGIN_LABEL, DEPLOY_MIG_MANAGER_LABEL};
use super::select::Selected;

/// One tier of a profile's pool, with the pool it belongs to and its place in the pool's fallback order.
#[derive(Clone, Copy)]
pub struct TierAt<'p> {
    pub pool: &'p Pool,
    pub index: usize,
    pub tier: &'p Tier,
}

/// The NodePool of a tier whose types are chosen (`selected`), in node class `node_class`. The limit, weight,
/// requirements and costs are filled in by the later steps.
pub fn pool_plan(at: TierAt, profile: &Profile, source: &str, node_class: String, zones: &[String], selected: Selected) -> PoolPlan {
    let TierAt { pool: pool_node, index: tier_index, tier } = at;
    let s = &tier.settings;
    let pool = pool_node.name.value.as_str();
    let host_plugin = s.accelerator.value == AcceleratorKind::Nvidia && host_device_plugin(&profile.cluster.ami.value);
    let allow: BTreeSet<String> = profile
        .allow
        .iter()
        .chain(&tier.settings.allow)
        .map(|a| a.value.clone())
        .collect();
    PoolPlan {
        name: tier.name.value.clone(),
        profile: profile.name.value.clone(),
        source: source.to_string(),
        pool: pool.to_string(),
        tier_index,
        node_class,
        auto_mode: profile.cluster.auto_mode.value,
        accelerator: s.accelerator.value,
        capacity_types: s.capacity.value.clone(),
        zones: zones.to_vec(),
        // Filled in by size_limits, once the limit has dropped the types too big for it.
        requirements: Vec::new(),
        candidates: selected.candidates,
        removed: selected.removed,
        taints: pool_taints(s, pool_node),
        labels: pool_labels(s, pool, host_plugin),
        limit: 0,
        cpu_limit: None,
        resource_limits: s.resource_limits.as_ref().map(|l| l.value.clone()).unwrap_or_default(),
        fixed_usd_per_hour: None,
        static_pool: s.static_pool.as_ref().map(|x| x.value),
        spot_ceiling: s.spot_ceiling.value,
        raws: s.raws.iter().filter(|r| r.kind == "NodePool").cloned().collect(),
        limit_reason: String::new(),
        cap_unreached: None,
        weight: 0,
        disruption: disruption_plan(s),
        sharing: s.sharing.as_ref().map(|x| x.value.clone()),
        efa: s.efa.as_ref().is_some_and(|e| e.value),
        at_limit_usd_per_hour: 0.0,
        worst_case_usd_per_hour: 0.0,
        node_storage_usd_per_hour: 0.0,
        node_storage: String::new(),
        node_storage_prices: String::new(),
        draining_nodes: 0,
        drain_peak_usd_per_hour: 0.0,
        budget_usd_per_hour: None,
        allow,
        adopted: s.admit.value == crate::profile::Admit::AsRequired,
        // Serving presets: replicas of a service, which one interruption should not take together (issue 32, item 11).
        serving: s.spread.as_ref().map_or(pool_node.preset.value.spreads(), |v| v.value),
        notes: Vec::new(),
    }
}

/// The NodePool's template labels: the tier's own, the pool label, the GPU Operator's operand labels on a host-plugin
/// node, and the device-plugin or MIG config a shared pool needs.
fn pool_labels(s: &Settings, pool: &str, host_plugin: bool) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = s.labels.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    // One label for all tiers of the pool: a workload selects its pool, and Karpenter falls back across its
    // tiers by weight (karpenter.sh/nodepool names the tier).
    labels.insert(POOL_LABEL.into(), pool.to_string());
    if host_plugin {
        // The GPU Operator keeps an operand off a node whose `nvidia.com/gpu.deploy.<operand>` label is already set
        // (NVIDIA/gpu-operator v26.7.0 controllers/state_manager.go `addGPUStateLabels`: "If a required state label
        // already exists on the node with a non-empty value, honor it"): the host's plugin is the only one.
        labels.insert(DEPLOY_DEVICE_PLUGIN_LABEL.into(), "false".into());
        labels.insert(DEPLOY_MIG_MANAGER_LABEL.into(), "false".into());
    }
    match s.sharing.as_ref().map(|x| &x.value) {
        // On Bottlerocket the node class's user data carries it (`class_time_slicing`).
        Some(Sharing::TimeSlicing { replicas }) if !host_plugin => {
            labels.insert("nvidia.com/device-plugin.config".into(), format!("time-slicing-{replicas}"));
        }
        Some(Sharing::Mig { config }) => {
            labels.insert("nvidia.com/mig.config".into(), config.clone());
        }
        _ => {}
    }
    labels
}

/// The NodePool's taints: the accelerator's, the pool's own (every pool but a `general` one), then the tier's.
fn pool_taints(s: &Settings, pool_node: &Pool) -> Vec<Taint> {
    let pool = pool_node.name.value.as_str();
    // A CPU pool has no accelerator taint: it is where the cluster's ordinary pods (which tolerate nothing) run; nor
    // does a pool written with `accelerator-taint #false` (lint GP007 says why the taint is worth keeping).
    let mut taints: Vec<Taint> = Vec::new();
    if s.accelerator.value.is_accelerator() && s.accelerator_taint.value {
        taints.push(Taint { key: s.accelerator.value.resource().to_string(), value: None, effect: "NoSchedule".into() });
    }
    // Isolation: without a pool taint, any pod that tolerates the accelerator taint lands on the
    // highest-weight pool that fits it (an 8-GPU trainer on the inference pool). Only `general` pools take
    // such pods; every other pool admits only pods that tolerate its own taint.
    // (The pool's own preset: looking it up among the profile's pools by name made a file of n pools cost n².)
    let general = pool_node.preset.value == crate::profile::Preset::General;
    if !general {
        taints.push(Taint { key: POOL_LABEL.into(), value: Some(pool.to_string()), effect: "NoSchedule".into() });
    }
    for t in &s.taints {
        if !taints.iter().any(|x| x.key == t.key && x.effect == t.effect) {
            taints.push(t.value.clone());
        }
    }
    taints
}

/// The NodePool's requirements. In EKS Auto Mode the family label is `eks.amazonaws.com/instance-family` and
/// `kubernetes.io/os` is left out: the EKS User Guide lists it as not supported (Auto Mode is Linux only).
pub fn requirements(s: &Settings, zones: &[String], candidates: &[Candidate], auto_mode: bool) -> Vec<Requirement> {
    let mut types: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
    types.sort();
    let families: BTreeSet<String> = candidates.iter().map(|c| c.family.clone()).collect();
    let mut reqs = vec![
        Requirement {
            key: "karpenter.sh/capacity-type".into(),
            operator: "In".into(),
            values: s.capacity.value.iter().map(|c| c.as_str().to_string()).collect(),
            min_values: None,
        },
        Requirement {
            key: if auto_mode { "eks.amazonaws.com/instance-family" } else { "karpenter.k8s.aws/instance-family" }.into(),
            operator: "In".into(),
            // Spot diversity, gpuplan's own: `admit "as-required"` adds no minValues the original did not have.
            min_values: s.family_min_values.as_ref().map(|m| m.value).or((s.capacity.contains(&CapacityType::Spot) && families.len() >= 2 && s.admit.value == crate::profile::Admit::BestValue).then_some(2)),
            values: families.into_iter().collect(),
        },
        Requirement { key: "node.kubernetes.io/instance-type".into(), operator: "In".into(), values: types, min_values: s.type_min_values.as_ref().map(|m| m.value) },
    ];
    let arch: BTreeSet<&str> = if s.arch.is_empty() {
        BTreeSet::from(["amd64"])
    } else {
        s.arch.iter().map(|a| a.value.as_str()).collect()
    };
    reqs.push(Requirement { key: "kubernetes.io/arch".into(), operator: "In".into(), values: arch.into_iter().map(String::from).collect(), min_values: None });
    if !auto_mode {
        reqs.push(Requirement { key: "kubernetes.io/os".into(), operator: "In".into(), values: vec!["linux".into()], min_values: None });
    }
    if !zones.is_empty() {
        let mut z = zones.to_vec();
        z.sort();
        reqs.push(Requirement { key: "topology.kubernetes.io/zone".into(), operator: "In".into(), values: z, min_values: None });
    }
    // In Auto Mode the instance labels are `eks.amazonaws.com/instance-*` (the profile says `karpenter.k8s.aws/…`, as
    // adopt reads Auto Mode's twins): each `require` on one is written in Auto Mode's domain.
    let key = |k: &str| if auto_mode { crate::catalog::auto_mode::auto_label(k).unwrap_or_else(|| k.to_string()) } else { k.to_string() };
    reqs.extend(s.requires.iter().map(|r| Requirement { key: key(&r.key), operator: r.operator.clone(), values: r.values.clone(), min_values: r.min_values }));
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    reqs
}
