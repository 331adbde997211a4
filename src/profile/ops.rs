//! The operations part of a profile ([`ProfileOps`]): its `workload` blocks, which become a PodDisruptionBudget
//! and an HorizontalPodAutoscaler or a KEDA ScaledObject each (rendered by the `ops` stage), and its `monitoring`
//! block (see [`super::monitoring`]). Error codes E0170–E0177, E0182 and E0183 (workload selectors) and
//! E0220–E0226 (KEDA: scale-to-zero, triggers) are reported here.
//!
//! ```kdl
//! workload "llm-server" namespace="inference" pool="llm-inference" {
//!     selector "app" "llm-server"
//!     replicas min=2 max=12
//!     gpus-per-replica 1
//!     disruption-budget max-unavailable="25%"     // or min-available=1
//!     autoscale gpu-utilization=70                 // metric="DCGM_FI_DEV_GPU_UTIL"
//! }
//! workload "llm-batch" namespace="inference" pool="llm-inference" {
//!     selector "app" "llm-batch"
//!     replicas min=0 max=4                         // min=0 only with scale-to-zero (E0220, E0221)
//!     scale-to-zero cooldown="15m" polling="30s"   // a KEDA ScaledObject instead of the HPA
//!     trigger "prometheus" query="sum(backlog)" threshold=20   // what wakes it (E0223); or:
//!     trigger "kueue-pending" cluster-queue="research" per-replica=1
//!     autoscale gpu-utilization=70                 // becomes a prometheus trigger on the same DCGM query
//! }
//! ```

use std::collections::BTreeMap;

use kdl::{KdlEntry, KdlNode, KdlValue};

use super::duration::{duration_seconds, format_seconds};
use super::monitoring::Monitoring;
use super::parser::{args, describe, prop, Parser};
use super::{Pool, Preset};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{did_you_mean, Span, Spanned};

const WORKLOAD_CHILDREN: &[&str] = &["selector", "replicas", "gpus-per-replica", "max-per-node", "requests", "disruption-budget", "autoscale", "scale-to-zero", "trigger"];
const TRIGGER_TYPES: [&str; 2] = ["prometheus", "kueue-pending"];
const TARGET_KINDS: [&str; 2] = ["Deployment", "StatefulSet"];

/// The operations part of one profile.
#[derive(Debug, Clone, Default)]
pub struct ProfileOps {
    pub workloads: Vec<Workload>,
    pub monitoring: Option<Spanned<Monitoring>>,
}

/// `workload "name" namespace="…" pool="…" { … }`
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: Spanned<String>,
    pub namespace: Spanned<String>,
    /// A pool of the profile (all its tiers) or one tier's NodePool name.
    pub pool: Spanned<String>,
    /// scaleTargetRef kind: Deployment (default) or StatefulSet.
    pub kind: Spanned<String>,
    pub selector: BTreeMap<String, Spanned<String>>,
    pub replicas_min: Spanned<u32>,
    pub replicas_max: Spanned<u32>,
    pub gpus_per_replica: Spanned<u32>,
    /// `max-per-node N`: at most N replicas on one node (a hard host spread of skew N, as Karpenter provisions it).
    pub max_per_node: Option<Spanned<u32>>,
    /// `requests cpu=… memory=…`: Kubernetes quantities per replica, as written (each parsed once here).
    pub requests: BTreeMap<String, Spanned<String>>,
    pub disruption_budget: Option<Spanned<PdbBudget>>,
    pub autoscale: Option<Spanned<Autoscale>>,
    /// `scale-to-zero`: KEDA may take the workload to 0 replicas (`replicas min=0`).
    pub scale_to_zero: Option<Spanned<ScaleToZero>>,
    /// `trigger …`: KEDA scales on these (besides `autoscale`'s GPU utilization).
    pub triggers: Vec<Spanned<Trigger>>,
    pub span: Span,
}

impl Workload {
    /// KEDA scales this workload (a ScaledObject instead of the HPA): it scales to zero or has a trigger.
    pub fn keda(&self) -> bool {
        self.scale_to_zero.is_some() || !self.triggers.is_empty()
    }
}

/// `scale-to-zero cooldown="15m" polling="30s"`: KEDA's `cooldownPeriod` (how long every trigger stays inactive
/// before the last replica goes) and `pollingInterval` (how often KEDA checks the triggers while at zero), seconds.
/// KEDA's defaults are 300 and 30 (kedacore/keda v2.20.2 `pkg/scaling/executor/scale_executor.go` `defaultCooldownPeriod`,
/// `apis/keda/v1alpha1/withtriggers_types.go` `defaultPollingInterval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleToZero {
    pub cooldown_seconds: u32,
    pub polling_seconds: u32,
}

impl Default for ScaleToZero {
    fn default() -> Self {
        ScaleToZero { cooldown_seconds: 300, polling_seconds: 30 }
    }
}

/// A KEDA trigger besides GPU utilization: what wakes a workload at zero replicas, where no pod reports a GPU.
#[derive(Debug, Clone, PartialEq)]
pub enum Trigger {
    /// `trigger "prometheus" query="…" threshold=10 activation=0`: KEDA's prometheus scaler on any query (desired
    /// replicas = ⌈value / threshold⌉; active while value > activation).
    Prometheus { query: String, threshold: String, activation: Option<String> },
    /// `trigger "kueue-pending" cluster-queue="research" per-replica=2`: Kueue's pending workloads of a
    /// ClusterQueue (`kueue_pending_workloads{cluster_queue, status="active"}`), one replica per `per-replica`.
    KueuePending { cluster_queue: String, per_replica: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    Int(u32),
    Percent(u32),
}

impl IntOrPercent {
    /// Pods this stands for out of `total`, rounded up (as the disruption controller does for PDBs).
    pub fn of(self, total: u32) -> u32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => (u64::from(p) * u64::from(total)).div_ceil(100) as u32,
        }
    }

    pub fn to_json(self) -> serde_json::Value {
        match self {
            IntOrPercent::Int(n) => serde_json::json!(n),
            IntOrPercent::Percent(p) => serde_json::json!(format!("{p}%")),
        }
    }
}

impl std::fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IntOrPercent::Int(n) => write!(f, "{n}"),
            IntOrPercent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdbBudget {
    MinAvailable(IntOrPercent),
    MaxUnavailable(IntOrPercent),
}

/// `autoscale gpu-utilization=70 metric="DCGM_FI_DEV_GPU_UTIL"`
#[derive(Debug, Clone, PartialEq)]
pub struct Autoscale {
    /// Target average GPU utilization per pod, percent (converted to the metric's unit).
    pub gpu_utilization: u32,
    /// The per-pod metric prometheus-adapter exposes from dcgm-exporter; None: the pool's (see `ops::gpu_metric`, in the ops stage).
    pub metric: Option<String>,
}

/// A `workload` block's children as they are read, before the block-level checks.
struct WorkloadBody {
    selector: BTreeMap<String, Spanned<String>>,
    selector_keys: BTreeMap<String, Span>,
    replicas: Option<(Spanned<u32>, Spanned<u32>)>,
    gpus_per_replica: Spanned<u32>,
    max_per_node: Option<Spanned<u32>>,
    disruption_budget: Option<Spanned<PdbBudget>>,
    autoscale: Option<Spanned<Autoscale>>,
    scale_to_zero: Option<Spanned<ScaleToZero>>,
    triggers: Vec<Spanned<Trigger>>,
    requests: BTreeMap<String, Spanned<String>>,
}

impl WorkloadBody {
    /// Nothing read yet; one GPU per replica unless the block says otherwise.
    fn new(at: Span) -> WorkloadBody {
        WorkloadBody {
            selector: BTreeMap::new(),
            selector_keys: BTreeMap::new(),
            replicas: None,
            gpus_per_replica: Spanned::new(1, at),
            max_per_node: None,
            disruption_budget: None,
            autoscale: None,
            scale_to_zero: None,
            triggers: Vec::new(),
            requests: BTreeMap::new(),
        }
    }
}


/// The line `workload "name" namespace="ns" pool="p" kind="…"`, each value with its span.
struct WorkloadHeader {
    name: Spanned<String>,
    namespace: Spanned<String>,
    pool: Spanned<String>,
    kind: Spanned<String>,
}

impl Parser<'_> {
    /// Parses the profile's `workload` and `monitoring` nodes; checks workloads against the profile's pools.
    pub(super) fn parse_ops(&mut self, workloads: &[&KdlNode], monitoring: &[&KdlNode], pools: &[Pool]) -> ProfileOps {
        let mut ops = ProfileOps::default();
        for node in monitoring {
            if ops.monitoring.is_some() {
                self.error(self.span(node.name().span()), ErrorCode::E0175, "a profile has one `monitoring` block", "merge the two blocks");
                continue;
            }
            ops.monitoring = self.parse_monitoring(node);
        }
        let mut seen: BTreeMap<(String, String), Span> = BTreeMap::new();
        for node in workloads {
            let Some(w) = self.parse_workload(node, pools) else { continue };
            if let Some(first) = seen.insert((w.namespace.value.clone(), w.name.value.clone()), w.name.span) {
                let at = self.sources.location(first);
                self.error(
                    w.name.span,
                    ErrorCode::E0177,
                    format!("workload `{}` in namespace `{}` is defined twice (first at {at})", w.name.value, w.namespace.value),
                    "give each workload a distinct name",
                );
                continue;
            }
            ops.workloads.push(w);
        }
        ops
    }

    fn int_or_percent(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<IntOrPercent>> {
        let span = self.span(entry.span());
        let parsed = match entry.value() {
            KdlValue::Integer(i) if (0..=100_000).contains(i) => Some(IntOrPercent::Int(*i as u32)),
            KdlValue::String(s) => match s.strip_suffix('%') {
                Some(p) => p.parse::<u32>().ok().filter(|p| *p <= 100).map(IntOrPercent::Percent),
                None => s.parse::<u32>().ok().map(IntOrPercent::Int),
            },
            _ => None,
        };
        if parsed.is_none() {
            self.error(
                span,
                ErrorCode::E0105,
                format!("{what} must be a pod count or a percentage, found {}", describe(entry.value())),
                "write a whole number (min-available=1) or a quoted percentage (max-unavailable=\"25%\")",
            );
        }
        parsed.map(|v| Spanned::new(v, span))
    }

    fn parse_workload(&mut self, node: &KdlNode, pools: &[Pool]) -> Option<Workload> {
        let WorkloadHeader { name, namespace, pool, kind } = self.parse_workload_header(node, pools)?;
        let node_span = self.span(node.name().span());
        let mut body = WorkloadBody::new(name.span);
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            self.parse_workload_child(child, &name, &mut body);
        }
        if body.selector.is_empty() {
            self.error(node_span, ErrorCode::E0107, format!("workload `{}` has no `selector`", name.value), "add selector \"app\" \"<name>\": the PodDisruptionBudget selects the workload's pods by it");
        }
        let Some((replicas_min, replicas_max)) = body.replicas else {
            self.error(node_span, ErrorCode::E0107, format!("workload `{}` has no `replicas`", name.value), "add replicas min=2 max=12");
            return None;
        };
        if replicas_min.value > replicas_max.value {
            self.error(
                replicas_min.span,
                ErrorCode::E0171,
                format!("replicas min={} is above max={}", replicas_min.value, replicas_max.value),
                "the HorizontalPodAutoscaler needs minReplicas ≤ maxReplicas; lower min or raise max",
            );
        }
        if let Some(b) = &body.disruption_budget {
            self.check_pdb(b, &replicas_min, &replicas_max);
        }
        let keda = KedaIntent { scale_to_zero: body.scale_to_zero.as_ref(), triggers: &body.triggers, autoscale: body.autoscale.as_ref(), budget: body.disruption_budget.as_ref() };
        self.check_keda(&name, &replicas_min, &keda);
        Some(Workload {
            name,
            namespace,
            pool,
            kind,
            selector: body.selector,
            replicas_min,
            replicas_max,
            gpus_per_replica: body.gpus_per_replica,
            max_per_node: body.max_per_node,
            requests: body.requests,
            disruption_budget: body.disruption_budget,
            autoscale: body.autoscale,
            scale_to_zero: body.scale_to_zero,
            triggers: body.triggers,
            span: node_span,
        })
    }

    /// `workload "name" namespace="ns" pool="p" kind="…"`: the name, namespace and pool are required; an unknown pool
    /// or kind is reported and parsing goes on (to report the block's other errors too).
    fn parse_workload_header(&mut self, node: &KdlNode, pools: &[Pool]) -> Option<WorkloadHeader> {
        self.check_entries(node, &["namespace", "pool", "kind"], 1);
        let node_span = self.span(node.name().span());
        let Some(name) = args(node).next().and_then(|e| self.expect_string(e, "the workload name")) else {
            self.error(node_span, ErrorCode::E0107, "`workload` needs a name", "write workload \"llm-server\" namespace=\"inference\" pool=\"llm\" { … }");
            return None;
        };
        self.check_name(&name, "workload");
        let namespace = prop(node, "namespace").and_then(|e| self.expect_string(e, "namespace"));
        let Some(namespace) = namespace else {
            self.error(node_span, ErrorCode::E0107, format!("workload `{}` needs a namespace", name.value), "add namespace=\"inference\"");
            return None;
        };
        self.check_name(&namespace, "namespace");
        let Some(pool) = prop(node, "pool").and_then(|e| self.expect_string(e, "pool")) else {
            let names: Vec<&str> = pools.iter().map(|p| p.name.as_str()).collect();
            self.error(node_span, ErrorCode::E0107, format!("workload `{}` needs a pool", name.value), format!("add pool=\"…\"; pools of this profile: {}", names.join(", ")));
            return None;
        };
        self.check_workload_pool(&name, &pool, pools);
        let kind = match prop(node, "kind").and_then(|e| self.expect_string(e, "kind")) {
            None => Spanned::new("Deployment".to_string(), name.span),
            Some(k) if TARGET_KINDS.contains(&k.as_str()) => k,
            Some(k) => {
                let help = crate::diagnostic::did_you_mean_among(&k, &TARGET_KINDS, "workload kinds");
                self.error(k.span, ErrorCode::E0118, format!("unknown workload kind `{}`", k.value), help);
                k
            }
        };
        Some(WorkloadHeader { name, namespace, pool, kind })
    }

    /// E0170: the workload's pool must be a pool (or one tier's NodePool) of the profile.
    fn check_workload_pool(&mut self, name: &Spanned<String>, pool: &Spanned<String>, pools: &[Pool]) {
        if pools.iter().any(|p| p.name.value == pool.value || p.tiers.iter().any(|t| t.name.value == pool.value)) {
            return;
        }
        let Some(help) = self.unknown_pool_help(pool, pools) else { return };
        self.error(pool.span, ErrorCode::E0170, format!("workload `{}` runs on unknown pool `{}`", name.value, pool.value), help);
    }

    /// One child of a `workload` block into `body`.
    fn parse_workload_child(&mut self, child: &KdlNode, name: &Spanned<String>, body: &mut WorkloadBody) {
        let span = self.span(child.span());
        match child.name().value() {
            "selector" => self.parse_selector_line(child, name, body),
            "replicas" => body.replicas = self.parse_replicas(child),
            "gpus-per-replica" => {
                if let Some(v) = self.bounded_u32(child, "gpus-per-replica", 1..=64) {
                    body.gpus_per_replica = v;
                }
            }
            "max-per-node" => {
                if let Some(v) = self.bounded_u32(child, "max-per-node", 1..=1000) {
                    body.max_per_node = Some(v);
                }
            }
            "requests" => body.requests = self.parse_requests(child),
            "disruption-budget" => body.disruption_budget = self.parse_disruption_budget(child),
            "autoscale" => {
                self.check_entries(child, &["gpu-utilization", "metric"], 0);
                let target = match prop(child, "gpu-utilization") {
                    Some(e) => self.expect_integer(e, "gpu-utilization", 1, 100).map(|v| v.value as u32),
                    None => Some(70),
                };
                let metric = prop(child, "metric").and_then(|e| self.expect_string(e, "metric")).map(|m| m.value);
                if let Some(target) = target {
                    body.autoscale = Some(Spanned::new(Autoscale { gpu_utilization: target, metric }, span));
                }
            }
            "scale-to-zero" => {
                if let Some(first) = &body.scale_to_zero {
                    let at = self.sources.location(first.span);
                    self.error(span, ErrorCode::E0225, format!("workload `{}` has two `scale-to-zero` lines (first at {at})", name.value), "keep one");
                }
                body.scale_to_zero = Some(Spanned::new(self.parse_scale_to_zero(child), span));
            }
            "trigger" => {
                let Some(t) = self.parse_trigger(child) else { return };
                if let Some(first) = body.triggers.iter().find(|x| x.value == t.value) {
                    let at = self.sources.location(first.span);
                    self.error(t.span, ErrorCode::E0225, format!("workload `{}` has this trigger twice (first at {at})", name.value), "keep one: KEDA would compute the same replica count twice");
                } else {
                    body.triggers.push(t);
                }
            }
            _ => self.unknown_node(child, WORKLOAD_CHILDREN, "`workload`"),
        }
    }

    /// `selector "key" "value"`: one line per label key (E0183 for a second).
    fn parse_selector_line(&mut self, child: &KdlNode, name: &Spanned<String>, body: &mut WorkloadBody) {
        self.check_entries(child, &[], 2);
        let kv: Vec<_> = args(child).filter_map(|e| self.expect_string(e, "selector")).collect();
        let [k, v] = kv.as_slice() else {
            let span = self.span(child.span());
            self.error(span, ErrorCode::E0107, "`selector` needs a label key and a value", "write selector \"app\" \"llm-server\"");
            return;
        };
        self.check_selector_label(k, v);
        if let Some(first) = body.selector_keys.insert(k.value.clone(), k.span) {
            let at = self.sources.location(first);
            self.error(
                k.span,
                ErrorCode::E0183,
                format!("workload `{}` has two `selector` lines for label key `{}` (first at {at})", name.value, k.value),
                "a pod has one value per label key: keep one line (each further key narrows the selector)",
            );
        }
        body.selector.insert(k.value.clone(), v.clone());
    }

    /// `replicas 3` or `replicas min=2 max=12` (min alone: fixed).
    fn parse_replicas(&mut self, child: &KdlNode) -> Option<(Spanned<u32>, Spanned<u32>)> {
        self.check_entries(child, &["min", "max"], 1);
        let fixed = args(child).next().and_then(|e| self.expect_integer(e, "replicas", 1, 10_000));
        // 0 only with `scale-to-zero` (E0220, checked once the whole block is read).
        let min = prop(child, "min").and_then(|e| self.expect_integer(e, "replicas min", 0, 10_000));
        let max = prop(child, "max").and_then(|e| self.expect_integer(e, "replicas max", 1, 10_000));
        let to = |v: Spanned<i128>| Spanned::new(v.value as u32, v.span);
        match (fixed, min, max) {
            (Some(n), None, None) => Some((to(n.clone()), to(n))),
            (None, Some(min), Some(max)) => Some((to(min), to(max))),
            (None, Some(min), None) => Some((to(min.clone()), to(min))),
            _ => {
                let span = self.span(child.span());
                self.error(span, ErrorCode::E0107, "`replicas` takes a count or min= and max=", "write replicas min=2 max=12 (or replicas 3 for a fixed count)");
                None
            }
        }
    }

    /// `disruption-budget min-available=… | max-unavailable=…` (exactly one).
    fn parse_disruption_budget(&mut self, child: &KdlNode) -> Option<Spanned<PdbBudget>> {
        self.check_entries(child, &["min-available", "max-unavailable"], 0);
        let min = prop(child, "min-available").and_then(|e| self.int_or_percent(e, "min-available"));
        let max = prop(child, "max-unavailable").and_then(|e| self.int_or_percent(e, "max-unavailable"));
        let span = self.span(child.span());
        match (min, max) {
            (Some(m), None) => Some(Spanned::new(PdbBudget::MinAvailable(m.value), m.span)),
            (None, Some(m)) => Some(Spanned::new(PdbBudget::MaxUnavailable(m.value), m.span)),
            (Some(_), Some(_)) => {
                self.error(span, ErrorCode::E0107, "a PodDisruptionBudget has min-available or max-unavailable, not both", "keep one");
                None
            }
            (None, None) => {
                self.error(span, ErrorCode::E0107, "`disruption-budget` needs min-available or max-unavailable", "write disruption-budget max-unavailable=1");
                None
            }
        }
    }

    /// `scale-to-zero cooldown="15m" polling="30s"` (both optional: KEDA's defaults).
    fn parse_scale_to_zero(&mut self, node: &KdlNode) -> ScaleToZero {
        self.check_entries(node, &["cooldown", "polling"], 0);
        let mut out = ScaleToZero::default();
        for (key, field, max) in [("cooldown", &mut out.cooldown_seconds, 86_400u32), ("polling", &mut out.polling_seconds, 3_600)] {
            let Some(v) = prop(node, key).and_then(|e| self.expect_string(e, key)) else { continue };
            match duration_seconds(&v.value) {
                Some(s) if (1..=max).contains(&s) => *field = s,
                Some(_) => self.error(v.span, ErrorCode::E0226, format!("{key}=\"{}\" is out of range", v.value), format!("write a duration from 1s to {}", format_seconds(max))),
                None => {
                    self.duration(v, false);
                }
            }
        }
        out
    }

    /// `trigger "prometheus" query="…" threshold=10 [activation=0]` or `trigger "kueue-pending" cluster-queue="q" [per-replica=1]`.
    fn parse_trigger(&mut self, node: &KdlNode) -> Option<Spanned<Trigger>> {
        let span = self.span(node.span());
        let Some(kind) = args(node).next().and_then(|e| self.expect_string(e, "the trigger type")) else {
            self.check_entries(node, &[], 1);
            self.error(span, ErrorCode::E0225, "`trigger` needs a type", "write trigger \"prometheus\" query=\"…\" threshold=10, or trigger \"kueue-pending\" cluster-queue=\"…\"");
            return None;
        };
        match kind.as_str() {
            "prometheus" => {
                self.check_entries(node, &["query", "threshold", "activation"], 1);
                let query = prop(node, "query").and_then(|e| self.expect_string(e, "query")).filter(|q| !q.trim().is_empty());
                let threshold = prop(node, "threshold").and_then(|e| self.keda_number(e, "threshold", false));
                let activation = prop(node, "activation").and_then(|e| self.keda_number(e, "activation", true));
                let (Some(query), Some(threshold)) = (query, threshold) else {
                    self.error(span, ErrorCode::E0225, "a prometheus trigger needs a non-empty query= and a positive threshold=", "write trigger \"prometheus\" query=\"sum(queue_depth{queue=\\\"llm\\\"})\" threshold=10: KEDA runs ⌈value / threshold⌉ replicas");
                    return None;
                };
                Some(Spanned::new(Trigger::Prometheus { query: query.value, threshold, activation }, span))
            }
            "kueue-pending" => {
                self.check_entries(node, &["cluster-queue", "per-replica"], 1);
                let per_replica = match prop(node, "per-replica") {
                    Some(e) => self.expect_integer(e, "per-replica", 1, 10_000).map(|v| v.value as u32)?,
                    None => 1,
                };
                let Some(queue) = prop(node, "cluster-queue").and_then(|e| self.expect_string(e, "cluster-queue")) else {
                    self.error(span, ErrorCode::E0225, "a kueue-pending trigger needs the ClusterQueue whose pending workloads it counts", "write trigger \"kueue-pending\" cluster-queue=\"research\"");
                    return None;
                };
                self.check_name(&queue, "ClusterQueue");
                Some(Spanned::new(Trigger::KueuePending { cluster_queue: queue.value, per_replica }, span))
            }
            _ => {
                self.check_entries(node, &["query", "threshold", "activation", "cluster-queue", "per-replica"], 1);
                let mut help = did_you_mean(&kind, TRIGGER_TYPES).map(|d| format!("{d} ")).unwrap_or_default();
                help.push_str("gpuplan writes KEDA triggers of type prometheus and kueue-pending (GPU utilization: `autoscale`)");
                self.error(kind.span, ErrorCode::E0225, format!("unknown trigger type `{}`", kind.value), help);
                None
            }
        }
    }

    /// A KEDA threshold as the string KEDA parses (`strconv.ParseFloat`): a positive number (`zero_ok`: or 0).
    fn keda_number(&mut self, entry: &KdlEntry, what: &str, zero_ok: bool) -> Option<String> {
        let span = self.span(entry.span());
        let value = match entry.value() {
            KdlValue::Integer(i) => Some(*i as f64),
            KdlValue::Float(f) => Some(*f),
            _ => None,
        };
        match value {
            Some(v) if v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0)) && v < 1e12 => Some(format!("{v}")),
            _ => {
                let least = if zero_ok { "0 or more" } else { "above 0" };
                self.error(span, ErrorCode::E0105, format!("{what} must be a number {least}, found {}", describe(entry.value())), format!("write {what}=10 (or a decimal: {what}=0.5)"));
                None
            }
        }
    }

    /// KEDA's rules a workload's scaling settings must follow (E0220–E0224).
    fn check_keda(&mut self, name: &Spanned<String>, min: &Spanned<u32>, k: &KedaIntent) {
        match (k.scale_to_zero, min.value) {
            (None, 0) => self.error(
                min.span,
                ErrorCode::E0220,
                format!("workload `{}` has replicas min=0 but no `scale-to-zero`", name.value),
                "an HorizontalPodAutoscaler never scales below 1 replica: add `scale-to-zero` (KEDA then scales it, with a trigger that wakes it) or write min=1",
            ),
            (Some(s), n) if n > 0 => self.error(
                s.span,
                ErrorCode::E0221,
                format!("workload `{}` scales to zero, but its replicas min is {n}", name.value),
                "write replicas min=0 max=…, or drop `scale-to-zero` (a `trigger` alone keeps KEDA scaling between min and max)",
            ),
            _ => {}
        }
        let Some(s) = k.scale_to_zero else { return };
        if let Some(b) = k.budget.filter(|b| matches!(b.value, PdbBudget::MinAvailable(_))) {
            self.error(
                b.span,
                ErrorCode::E0222,
                format!("workload `{}` scales to zero: min-available blocks every node drain while it runs one replica", name.value),
                "at 1 replica a PodDisruptionBudget with min-available ≥ 1 (or any percentage) allows no eviction; write disruption-budget max-unavailable=1 (the default), which still keeps all but one pod up when it has several",
            );
        }
        if k.triggers.is_empty() {
            let what = if k.autoscale.is_some() { "only GPU utilization (`autoscale`), which no pod reports at zero replicas" } else { "no trigger" };
            self.error(
                s.span,
                ErrorCode::E0223,
                format!("workload `{}` scales to zero on {what}: nothing would ever wake it", name.value),
                "add a trigger that measures demand without a running pod: trigger \"prometheus\" query=\"…\" threshold=… (a queue's backlog, a gateway's request rate) or trigger \"kueue-pending\" cluster-queue=\"…\"",
            );
        }
    }

    /// `requests cpu="4" memory="16Gi"`: each a Kubernetes quantity (parsed as `simulate` reads pod specs).
    fn parse_requests(&mut self, node: &KdlNode) -> BTreeMap<String, Spanned<String>> {
        self.check_entries(node, &["cpu", "memory"], 0);
        let mut out = BTreeMap::new();
        for key in ["cpu", "memory"] {
            let Some(q) = prop(node, key).and_then(|e| self.quantity(e, key)) else { continue };
            out.insert(key.to_string(), q);
        }
        out
    }

    fn quantity(&mut self, entry: &KdlEntry, what: &str) -> Option<Spanned<String>> {
        let span = self.span(entry.span());
        let text = match entry.value() {
            KdlValue::String(s) => s.clone(),
            KdlValue::Integer(i) => i.to_string(),
            _ => String::new(),
        };
        match crate::simulate::yaml::milli(&text) {
            Some(v) if v > 0 => Some(Spanned::new(text, span)),
            _ => {
                self.error(span, ErrorCode::E0105, format!("{what} must be a positive Kubernetes quantity, found {}", describe(entry.value())), "write cpu=\"4\" or cpu=\"3500m\", memory=\"16Gi\"");
                None
            }
        }
    }

    /// A PodDisruptionBudget that allows no eviction even at max replicas blocks every node drain forever
    /// (Karpenter consolidation, drift, expiry, and the training maintenance window all wait on it).
    fn check_pdb(&mut self, b: &Spanned<PdbBudget>, min: &Spanned<u32>, max: &Spanned<u32>) {
        let max_r = max.value;
        let blocked = match b.value {
            PdbBudget::MinAvailable(v) => v.of(max_r) >= max_r,
            PdbBudget::MaxUnavailable(v) => v.of(max_r) == 0,
        };
        if blocked {
            let what = match b.value {
                PdbBudget::MinAvailable(IntOrPercent::Int(n)) => format!("min-available={n} is at least max replicas ({max_r})"),
                PdbBudget::MinAvailable(v @ IntOrPercent::Percent(_)) => {
                    format!("min-available=\"{v}\" rounds up to {} of {max_r} pods, i.e. all of them", v.of(max_r))
                }
                PdbBudget::MaxUnavailable(v) => format!("max-unavailable=\"{v}\" allows no pod to be evicted"),
            };
            self.error(
                b.span,
                ErrorCode::E0172,
                format!("this disruption budget can never be satisfied: {what}"),
                format!(
                    "a PodDisruptionBudget that never allows an eviction blocks node drains forever; allow at least one pod: e.g. min-available={} or max-unavailable=1",
                    max_r.saturating_sub(1).max(min.value.saturating_sub(1)).min(max_r.saturating_sub(1))
                ),
            );
        }
    }

    /// A `selector`'s key and value are a Kubernetes label's (they become the PDB's matchLabels): E0182 otherwise.
    fn check_selector_label(&mut self, key: &Spanned<String>, value: &Spanned<String>) {
        use crate::names::{check_label_key, check_label_value};
        if let Err(reason) = check_label_key(&key.value) {
            let help = "a label key is a name of at most 63 characters (alphanumerics, '-', '_', '.', starting and ending with an alphanumeric), optionally after a DNS subdomain prefix and '/': app, app.kubernetes.io/name";
            self.error(key.span, ErrorCode::E0182, format!("selector key `{}` is not a Kubernetes label key: {reason}", crate::input::excerpt(&key.value)), help);
        }
        if let Err(reason) = check_label_value(&value.value) {
            let help = "a label value is empty or at most 63 characters: alphanumerics, '-', '_', '.', starting and ending with an alphanumeric";
            self.error(value.span, ErrorCode::E0182, format!("selector value `{}` is not a Kubernetes label value: {reason}", crate::input::excerpt(&value.value)), help);
        }
    }

}

/// Pools whose preset is training or batch: workloads there get an HPA only when they ask for one.
pub(crate) fn is_training_pool(pools: &[Pool], pool: &str) -> bool {
    pools
        .iter()
        .find(|p| p.name.value == pool || p.tiers.iter().any(|t| t.name.value == pool))
        .is_some_and(|p| matches!(p.preset.value, Preset::TrainingOnDemand | Preset::BatchSpot))
}


/// A workload's KEDA-related settings, as parsed, for [`Parser::check_keda`].
struct KedaIntent<'a> {
    scale_to_zero: Option<&'a Spanned<ScaleToZero>>,
    triggers: &'a [Spanned<Trigger>],
    autoscale: Option<&'a Spanned<Autoscale>>,
    budget: Option<&'a Spanned<PdbBudget>>,
}
