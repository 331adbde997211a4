//! The `queue` profile node and its type, [`Queue`] (Kueue queues; the `queue` stage plans and renders them),
//! walked with the same helpers, spans and did-you-mean as the rest of the profile. Error codes E0200–E0205,
//! E0207–E0209.
//!
//! ```kdl
//! queue "research" namespace="ml-research" pool="training" {
//!     gpus nominal=16 borrowing-limit=8 lending-limit=4   // or: gpus share="50%" (of each flavor's NodePool limit)
//!     cohort "ml"
//!     gang #true
//!     preemption within-cluster-queue="LowerPriority" reclaim-within-cohort="Any" borrow-within-cohort="Never"
//! }
//! ```

use std::collections::BTreeMap;

use kdl::{KdlEntry, KdlNode, KdlValue};

use super::parser::{args, describe, prop, Parser};
use super::{schema, Pool};
use crate::diagnostic::ErrorCode;
use crate::catalog::AcceleratorKind;
use crate::diagnostic::{did_you_mean, Span, Spanned};

/// `queue "research" namespace="ml-research" pool="training" { gpus nominal=16 borrowing-limit=8; cohort "ml"; … }`
#[derive(Debug, Clone)]
pub struct Queue {
    pub name: Spanned<String>,
    /// Where its LocalQueue lives (and the only namespace the ClusterQueue admits from).
    pub namespace: Spanned<String>,
    /// A pool of the profile (every tier a flavor, in fallback order) or one tier's NodePool name.
    pub pool: Spanned<String>,
    pub quota: Spanned<Quota>,
    pub cohort: Option<Spanned<String>>,
    /// `gang #true`: all-or-nothing admission, which needs Kueue's `waitForPodsReady` (a Configuration setting).
    pub gang: Option<Spanned<bool>>,
    pub preemption: Preemption,
    pub span: Span,
}

/// The accelerator quota of a queue, per flavor (each NodePool of its pool): Kueue quotas are per flavor.
#[derive(Debug, Clone, PartialEq)]
pub struct Quota {
    /// `gpus` (NVIDIA/AMD pools) or `neuron-devices` (Neuron pools), as written.
    pub node: &'static str,
    pub nominal: Spanned<Amount>,
    pub borrowing_limit: Option<Spanned<Amount>>,
    pub lending_limit: Option<Spanned<Amount>>,
}

/// A number of schedulable accelerators (the resource pods request: time-slices or MIG devices on shared pools),
/// or a share of the flavor's NodePool limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Count(u32),
    Percent(u32),
}

impl Amount {
    /// Units of a flavor whose NodePool limit is `limit`; a share rounds down (it must fit the limit).
    pub fn of(self, limit: u32) -> u32 {
        match self {
            Amount::Count(n) => n,
            Amount::Percent(p) => (u64::from(p) * u64::from(limit) / 100) as u32,
        }
    }

    /// As written in a profile: `16` or `"50%"`.
    pub fn kdl(self) -> String {
        match self {
            Amount::Count(n) => n.to_string(),
            Amount::Percent(p) => format!("\"{p}%\""),
        }
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Amount::Count(n) => write!(f, "{n}"),
            Amount::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// ClusterQueue `spec.preemption`; unset fields take Kueue's defaults (all `Never`), which gpuplan writes out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preemption {
    pub within_cluster_queue: Option<Spanned<String>>,
    pub reclaim_within_cohort: Option<Spanned<String>>,
    pub borrow_within_cohort: Option<Spanned<String>>,
}

/// Kueue's enums for `spec.preemption` (CRD `kueue.x-k8s.io_clusterqueues.yaml`, v1beta2), by profile property.
pub const PREEMPTION_VALUES: [(&str, &[&str]); 3] = [
    ("within-cluster-queue", &["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
    ("reclaim-within-cohort", &["Never", "LowerPriority", "Any"]),
    ("borrow-within-cohort", &["Never", "LowerPriority"]),
];

impl Preemption {
    pub fn within_cluster_queue(&self) -> &str {
        self.within_cluster_queue.as_ref().map_or("Never", |v| v.as_str())
    }
    pub fn reclaim_within_cohort(&self) -> &str {
        self.reclaim_within_cohort.as_ref().map_or("Never", |v| v.as_str())
    }
    pub fn borrow_within_cohort(&self) -> &str {
        self.borrow_within_cohort.as_ref().map_or("Never", |v| v.as_str())
    }
}

impl Parser<'_> {
    /// Parses the profile's `queue` nodes; checks each against the profile's pools. A queue name is its
    /// ClusterQueue's, cluster-wide: twice in one profile is E0205 (across profiles: `solve::queue`).
    pub(super) fn parse_queues(&mut self, nodes: &[&KdlNode], pools: &[Pool]) -> Vec<Queue> {
        let mut seen: BTreeMap<String, Span> = BTreeMap::new();
        let mut out = Vec::new();
        for node in nodes {
            let Some(q) = self.parse_queue(node, pools) else { continue };
            if let Some(first) = seen.insert(q.name.value.clone(), q.name.span) {
                let at = self.sources.location(first);
                self.error(q.name.span, ErrorCode::E0205, format!("queue `{}` is defined twice (first at {at})", q.name.value), "a queue is a cluster-wide ClusterQueue: give each queue a distinct name");
                continue;
            }
            out.push(q);
        }
        out
    }

    fn parse_queue(&mut self, node: &KdlNode, pools: &[Pool]) -> Option<Queue> {
        self.check_entries(node, &["namespace", "pool"], 1);
        let span = self.span(node.name().span());
        let name = self.queue_string(node, None, "the queue name", span, "queue \"research\" namespace=\"ml-research\" pool=\"training\" { … }")?;
        self.check_name(&name, "queue");
        let namespace = self.queue_string(node, Some("namespace"), "namespace", span, "add namespace=\"ml-research\": the LocalQueue's namespace")?;
        self.check_name(&namespace, "namespace");
        let pool = self.queue_string(node, Some("pool"), "pool", span, "add pool=\"…\", a pool of this profile (or one of its tiers)")?;
        let kind = self.queue_pool(&name, &pool, pools)?;
        // A quota line written but refused (E0203, E0204) is the cause; "no quota" (E0202) only when none is written.
        let (mut quota, mut wrote_quota) = (None, false);
        let (mut cohort, mut gang, mut preemption) = (None, None, Preemption::default());
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "gpus" | "neuron-devices" => {
                    wrote_quota = true;
                    quota = self.parse_quota(child, kind);
                }
                "cohort" => cohort = self.single_string(child),
                "gang" => {
                    self.check_entries(child, &[], 1);
                    gang = args(child).next().and_then(|e| self.expect_bool(e, "gang"));
                }
                "preemption" => preemption = self.parse_preemption(child),
                _ => self.unknown_node(child, &schema::names("queue"), "`queue`"),
            }
        }
        if let Some(c) = &cohort {
            self.check_name(c, "cohort");
        }
        let Some(quota) = quota else {
            if wrote_quota {
                return None;
            }
            let child = if kind == AcceleratorKind::Neuron { "neuron-devices" } else { "gpus" };
            self.error(span, ErrorCode::E0202, format!("queue `{}` has no quota", name.value), format!("add `{child} nominal=8` (or `{child} share=\"50%\"` of the pool's limit)"));
            return None;
        };
        self.check_queue(&quota, cohort.as_ref(), &preemption);
        Some(Queue { name, namespace, pool, quota, cohort, gang, preemption, span })
    }

    /// A required string: the node's argument (`key` None) or a property; E0200 at the node when absent.
    fn queue_string(&mut self, node: &KdlNode, key: Option<&str>, what: &str, at: Span, help: &str) -> Option<Spanned<String>> {
        let entry = match key {
            None => args(node).next(),
            Some(k) => prop(node, k),
        };
        let value = entry.and_then(|e| self.expect_string(e, what));
        if value.is_none() && entry.is_none() {
            self.error(at, ErrorCode::E0200, format!("`queue` needs {what}"), help);
        }
        value
    }

    /// The accelerator kind of the pool (or tier) a queue names; E0201 when the profile has none of that name.
    fn queue_pool(&mut self, name: &Spanned<String>, pool: &Spanned<String>, pools: &[Pool]) -> Option<AcceleratorKind> {
        let found = pools.iter().find(|p| p.name.value == pool.value || p.tiers.iter().any(|t| t.name.value == pool.value));
        if let Some(p) = found {
            let kind = p.tiers.first().map(|t| t.settings.accelerator.value);
            if kind == Some(AcceleratorKind::Cpu) {
                // A queue's quota is written in the pool's accelerators (`gpus`, `neuron-devices`): a CPU pool has none.
                self.error(pool.span, ErrorCode::E0265, format!("queue `{}` admits to `{}`, a CPU pool: gpuplan's queues hold accelerator quotas", name.value, pool.value), "point the queue at a GPU or Neuron pool, or write the CPU pool's ClusterQueue by hand");
                return None;
            }
            return kind;
        }
        let help = self.unknown_pool_help(pool, pools)?;
        self.error(pool.span, ErrorCode::E0201, format!("queue `{}` admits to unknown pool `{}`", name.value, pool.value), help);
        None
    }

    /// `gpus nominal=16 borrowing-limit=8 lending-limit=4` or `gpus share="50%" …`.
    fn parse_quota(&mut self, node: &KdlNode, kind: AcceleratorKind) -> Option<Spanned<Quota>> {
        self.check_entries(node, &["nominal", "share", "borrowing-limit", "lending-limit"], 0);
        let span = self.span(node.span());
        let written = if node.name().value() == "gpus" { "gpus" } else { "neuron-devices" };
        let expected = if kind == AcceleratorKind::Neuron { "neuron-devices" } else { "gpus" };
        if written != expected {
            let resource = kind.resource();
            self.error(self.span(node.name().span()), ErrorCode::E0204, format!("`{written}` on a pool whose accelerators are {resource}"), format!("write `{expected}`: the quota is on the pool's resource, {resource}"));
            return None;
        }
        let nominal = match (prop(node, "nominal"), prop(node, "share")) {
            (Some(n), None) => self.amount(n, "nominal", false),
            (None, Some(s)) => self.amount(s, "share", true),
            (Some(_), Some(s)) => {
                self.error(self.span(s.span()), ErrorCode::E0203, "a quota has nominal= or share=, not both", "keep one: nominal=16 (accelerators) or share=\"50%\" (of each flavor's NodePool limit)");
                None
            }
            (None, None) => {
                self.error(span, ErrorCode::E0203, format!("`{written}` needs nominal= or share="), format!("write {written} nominal=16 or {written} share=\"50%\""));
                None
            }
        }?;
        let borrowing_limit = prop(node, "borrowing-limit").and_then(|e| self.amount(e, "borrowing-limit", false));
        let lending_limit = prop(node, "lending-limit").and_then(|e| self.amount(e, "lending-limit", false));
        Some(Spanned::new(Quota { node: written, nominal, borrowing_limit, lending_limit }, span))
    }

    /// A count (`16`) or, where `percent_only` is false, also a share (`"25%"`); `share=` takes a share only.
    fn amount(&mut self, entry: &KdlEntry, what: &str, percent_only: bool) -> Option<Spanned<Amount>> {
        let span = self.span(entry.span());
        let parsed = match entry.value() {
            KdlValue::Integer(i) if !percent_only && (0..=100_000).contains(i) => Some(Amount::Count(*i as u32)),
            KdlValue::String(s) => s.strip_suffix('%').and_then(|p| p.parse::<u32>().ok()).filter(|p| *p <= 100).map(Amount::Percent),
            _ => None,
        };
        if parsed.is_none() {
            let (must, example) = if percent_only { ("a quoted percentage of the pool's limit", "share=\"50%\"") } else { ("a number of accelerators (0–100000) or a quoted percentage", "nominal=16, borrowing-limit=\"25%\"") };
            self.error(span, ErrorCode::E0203, format!("{what} must be {must}, found {}", describe(entry.value())), format!("write e.g. {example}"));
        }
        parsed.map(|v| Spanned::new(v, span))
    }

    /// `preemption within-cluster-queue=… reclaim-within-cohort=… borrow-within-cohort=…`: Kueue's enum values.
    fn parse_preemption(&mut self, node: &KdlNode) -> Preemption {
        let keys: Vec<&str> = PREEMPTION_VALUES.iter().map(|(k, _)| *k).collect();
        self.check_entries(node, &keys, 0);
        let mut fields: Vec<Option<Spanned<String>>> = Vec::new();
        for (key, values) in PREEMPTION_VALUES {
            let value = prop(node, key).and_then(|e| self.expect_string(e, key));
            if let Some(v) = &value
                && !values.contains(&v.as_str()) {
                    let help = did_you_mean(v, values.iter().copied()).unwrap_or_else(|| format!("one of {}", values.join(", ")));
                    self.error(v.span, ErrorCode::E0207, format!("`{}` is not a Kueue {key} policy", crate::input::excerpt(v)), help);
                }
            fields.push(value);
        }
        let [within, reclaim, borrow]: [Option<Spanned<String>>; 3] = fields.try_into().expect("three policies");
        Preemption { within_cluster_queue: within, reclaim_within_cohort: reclaim, borrow_within_cohort: borrow }
    }

    /// What Kueue itself rejects, said at the profile line: borrowing without a cohort (the ClusterQueue CRD's
    /// rule "borrowingLimit must be nil when cohort is empty"), a lending limit above the nominal quota (Kueue's
    /// ClusterQueue webhook, `pkg/webhooks/clusterqueue_webhook.go` `validateFlavorQuotas`), and borrowing
    /// preemption while reclaiming is off (CRD rule "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never").
    fn check_queue(&mut self, quota: &Spanned<Quota>, cohort: Option<&Spanned<String>>, preemption: &Preemption) {
        if let (Some(b), None) = (&quota.borrowing_limit, cohort) {
            self.error(b.span, ErrorCode::E0208, "borrowing-limit on a queue without a cohort", "a ClusterQueue borrows only from its cohort: add `cohort \"…\"` or remove borrowing-limit");
        }
        if let (Amount::Count(n), Some(l)) = (quota.nominal.value, &quota.lending_limit)
            && matches!(l.value, Amount::Count(m) if m > n) {
                self.error(l.span, ErrorCode::E0208, format!("lending-limit {} is above the nominal quota {n}", l.value), "a queue lends at most its own nominal quota: lower lending-limit");
            }
        if let Some(b) = &preemption.borrow_within_cohort
            && b.as_str() != "Never" && preemption.reclaim_within_cohort() == "Never" {
                self.error(b.span, ErrorCode::E0209, "borrow-within-cohort preempts while reclaim-within-cohort is Never", "Kueue rejects this ClusterQueue: set reclaim-within-cohort=\"LowerPriority\" or \"Any\", or borrow-within-cohort=\"Never\"");
            }
    }
}
