//! gpuplan's own PodDisruptionBudgets, HorizontalPodAutoscalers, KEDA ScaledObjects and workload alerts →
//! `workload` blocks (the inverse of `ops::plan` / `ops::render` for workloads).
//!
//! A workload leaves up to three traces: its PDB (a budget, or the default one when max replicas ≥ 2), its HPA
//! (only with `autoscale`) or its ScaledObject (with `scale-to-zero` or a `trigger`: replicas, `autoscale` from the
//! `gpu-utilization` trigger, the other triggers, cooldown and polling) and, always, its rules in the PrometheusRule's `workloads` group. Each field comes
//! from the trace that states it; the `gpuplan.dev/*` annotations say what the spec alone cannot (the pool as
//! the profile wrote it, the target as a percentage), and the unschedulable alert's `gpuplan_replicas` and
//! `gpuplan_selector` annotations the replica count and selector a workload without HPA or PDB shows nowhere
//! else. Output from before those annotations gets placeholders, warned.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{q, Line, Warning};
use super::read::Doc;
use crate::ops::alerts::WORKLOAD_UNSCHEDULABLE;
use crate::ops::workload::{parse_replicas_record, parse_selector_record, REPLICAS_ANNOTATION, SELECTOR_ANNOTATION};
use crate::profile::ops::{IntOrPercent, PdbBudget};
use crate::solve::ops::metrics::{gpu_metric, metric_is_ratio};
use crate::solve::ops::scaling::{HpaPlan, ScalingStyle};
use crate::solve::{SpreadAdvice, HOST_KEY, ONE_PER_NODE};

/// One adopted `workload` block and what the profile's pools must agree with.
#[derive(Debug, Clone)]
pub struct AdoptedWorkload {
    pub profile: String,
    pub namespace: String,
    pub name: String,
    /// The pool as the profile wrote it: a pool, or one tier's NodePool.
    pub pool: String,
    /// The HPA scales like a training or batch pool's (ops::plan gives that behaviour by the pool's preset only),
    /// so the pool must be adopted with a training preset.
    pub training: bool,
    /// Whether its `gpuplan.dev/placement` annotation tells pods to spread over zones and hosts (an inference preset's
    /// advice); None without the annotation. The pool's `spread` setting follows it.
    pub spread: Option<bool>,
    pub line: Line,
    /// The first of its objects (`file`, `Kind/name`), for warnings and the skipped list.
    pub file: String,
    pub object: String,
}

/// The traces of one workload, keyed by (profile, namespace, name): two clusters may each run a workload of the
/// same namespace and name, and those are two workloads of two profiles.
#[derive(Default)]
struct Traces<'a> {
    pdb: Option<&'a Doc>,
    hpa: Option<&'a Doc>,
    keda: Option<&'a Doc>,
    /// The PrometheusRule and its rules labelled `gpuplan_workload: <namespace>/<name>`.
    rules: Vec<(&'a Doc, &'a Value)>,
}

/// (profile, namespace, name). The profile is the PDB's or HPA's `gpuplan.dev/profile` annotation and the
/// rule's `gpuplan_profile` label, which gpuplan writes on all of them; a trace without one (empty) joins the
/// workload of that namespace and name when there is exactly one, else stays alone (and is then skipped).
type Key = (String, String, String);

fn traces(ops: &[Doc]) -> BTreeMap<Key, Traces<'_>> {
    #[derive(Clone, Copy)]
    enum Trace<'a> {
        Pdb(&'a Doc),
        Hpa(&'a Doc),
        Keda(&'a Doc),
        Rule(&'a Doc, &'a Value),
    }
    let mut found: Vec<(Key, Trace)> = Vec::new();
    for doc in ops {
        let key = || {
            let profile = doc.object["metadata"]["annotations"]["gpuplan.dev/profile"].as_str().unwrap_or_default().to_string();
            (profile, doc.object["metadata"]["namespace"].as_str().unwrap_or("default").to_string(), doc.name.clone())
        };
        match doc.kind.as_str() {
            "PodDisruptionBudget" => found.push((key(), Trace::Pdb(doc))),
            "HorizontalPodAutoscaler" => found.push((key(), Trace::Hpa(doc))),
            crate::ops::keda::KIND => found.push((key(), Trace::Keda(doc))),
            "PrometheusRule" => {
                let rules = doc.object["spec"]["groups"].as_array().into_iter().flatten().flat_map(|g| g["rules"].as_array().into_iter().flatten());
                for rule in rules {
                    if let Some((ns, name)) = rule["labels"]["gpuplan_workload"].as_str().and_then(|w| w.split_once('/')) {
                        let profile = rule["labels"]["gpuplan_profile"].as_str().unwrap_or_default().to_string();
                        found.push(((profile, ns.to_string(), name.to_string()), Trace::Rule(doc, rule)));
                    }
                }
            }
            _ => {}
        }
    }
    let profiled: Vec<Key> = found.iter().map(|(k, _)| k.clone()).filter(|k| !k.0.is_empty()).collect();
    let mut out: BTreeMap<Key, Traces> = BTreeMap::new();
    for (mut key, trace) in found {
        if key.0.is_empty() {
            let mut same: Vec<&Key> = profiled.iter().filter(|k| (&k.1, &k.2) == (&key.1, &key.2)).collect();
            same.sort();
            same.dedup();
            if let [only] = same.as_slice() {
                key = (*only).clone();
            }
        }
        let t = out.entry(key).or_default();
        match trace {
            Trace::Pdb(doc) => t.pdb = Some(doc),
            Trace::Hpa(doc) => t.hpa = Some(doc),
            Trace::Keda(doc) => t.keda = Some(doc),
            Trace::Rule(doc, rule) => t.rules.push((doc, rule)),
        }
    }
    out
}

impl Traces<'_> {
    fn annotation(&self, key: &str) -> Option<&str> {
        self.docs().find_map(|d| d.object["metadata"]["annotations"][key].as_str())
    }

    /// The PDB, HPA and ScaledObject that exist.
    fn docs(&self) -> impl Iterator<Item = &Doc> {
        [self.pdb, self.hpa, self.keda].into_iter().flatten()
    }

    fn rule(&self, alert: &str) -> Option<(&Doc, &Value)> {
        self.rules.iter().copied().find(|(_, r)| r["alert"] == alert)
    }

    /// An annotation of the unschedulable alert, and `file PrometheusRule/name <alert> annotations.<key>`.
    fn recorded(&self, key: &str) -> Option<(&str, String)> {
        let (doc, rule) = self.rule(WORKLOAD_UNSCHEDULABLE)?;
        Some((rule["annotations"][key].as_str()?, format!("{} {WORKLOAD_UNSCHEDULABLE} annotations.{key}", doc.at())))
    }

    /// `file Kind/name` of every trace, for the block's provenance comment.
    fn origin(&self) -> String {
        let mut docs: Vec<String> = self.docs().map(Doc::at).collect();
        if let Some((doc, _)) = self.rules.first() {
            docs.push(format!("{} (workload rules)", doc.at()));
        }
        docs.join(" + ")
    }
}

/// A regex's first capture in `text`.
fn capture(pattern: &str, text: &str) -> Option<String> {
    regex::Regex::new(pattern).ok()?.captures(text)?.get(1).map(|m| m.as_str().to_string())
}

/// Every `workload` gpuplan generated objects for, with the warnings for what its output does not record; and
/// `file Kind/name (reason)` for the objects of a workload whose profile or pool no object names.
pub fn adopt(ops: &[Doc], node_pools: &[Doc], warnings: &mut Vec<Warning>) -> (Vec<AdoptedWorkload>, Vec<String>) {
    let mut adopted = Vec::new();
    let mut skipped = Vec::new();
    for ((profile, namespace, name), t) in traces(ops) {
        let id = format!("{namespace}/{name}");
        match workload(profile, namespace, name, &t, node_pools, warnings) {
            Some(w) => adopted.push(w),
            None => {
                let (file, object) = first_trace(&t);
                skipped.push(format!("{file} {object} (workload {id}: no gpuplan.dev/profile and gpuplan.dev/pool annotations, and no workload alert naming them)"));
            }
        }
    }
    (adopted, skipped)
}

fn workload(profile: String, namespace: String, name: String, t: &Traces, node_pools: &[Doc], warnings: &mut Vec<Warning>) -> Option<AdoptedWorkload> {
    if profile.is_empty() {
        return None;
    }
    let (pool, pool_from) = pool_as_written(t)?;
    let kind = kind(t);
    let mut props = format!("workload {} namespace={} pool={}", q(&name), q(&namespace), q(&pool));
    if kind != "Deployment" {
        props.push_str(&format!(" kind={}", q(&kind)));
    }
    let id = format!("{namespace}/{name}");
    let mut children = selector(t, &id, &name, warnings);
    let pdb = t.pdb.and_then(|d| pdb_budget(&d.object["spec"]));
    children.push(replicas(t, &id, pdb, warnings));
    if let Some(line) = gpus_per_replica(t) {
        children.push(line);
    }
    if let (Some(budget), Some(doc)) = (pdb, t.pdb) {
        children.push(Line::new(budget_kdl(budget), format!("{} spec", doc.at())));
    }
    // What the pods were told to need: the placement annotation, or the unschedulable alert's description (a
    // workload with neither PDB nor HPA) — both `PodPlacement::describe`.
    let placement = t
        .docs()
        .find_map(|d| Some((d.at() + " metadata.annotations.gpuplan.dev/placement", d.object["metadata"]["annotations"]["gpuplan.dev/placement"].as_str()?)))
        .or_else(|| t.recorded("description").map(|(text, at)| (at, text)));
    if let Some(line) = placement.as_ref().and_then(|(at, text)| max_per_node(at, text)) {
        children.push(line);
    }
    let spread = placement.map(|(_, text)| text.contains(&format!("topologySpreadConstraint {}", SpreadAdvice::serving()[0])));
    let mut training = false;
    if let Some(doc) = t.hpa {
        let (line, is_training) = autoscale(doc, node_pools);
        children.push(line);
        training = is_training;
    }
    if let Some(doc) = t.keda {
        let (lines, is_training) = keda_lines(doc, node_pools, warnings);
        children.extend(lines);
        training = is_training;
    }
    for doc in t.docs().filter(|d| d.hand_edited) {
        warnings.push(Warning {
            file: doc.file.clone(),
            object: format!("{}/{}", doc.kind, doc.name),
            field: "(file)".into(),
            message: "edited after gpuplan generated it: adopted from its spec and gpuplan.dev annotations; compiling rewrites every other field".into(),
        });
    }
    let line = Line::block(props, format!("{}; pool from {pool_from}", t.origin()), children);
    let (file, object) = first_trace(t);
    Some(AdoptedWorkload { profile, namespace, name, pool, training, spread, line, file, object })
}

/// The pool as written: the `gpuplan.dev/pool` annotation of the PDB/HPA; else the alert's pool, narrowed to one
/// tier's NodePool when the alert names only that one of several.
fn pool_as_written(t: &Traces) -> Option<(String, &'static str)> {
    if let Some(pool) = t.annotation("gpuplan.dev/pool") {
        return Some((pool.to_string(), "metadata.annotations.gpuplan.dev/pool"));
    }
    let (_, rule) = t.rule(WORKLOAD_UNSCHEDULABLE)?;
    let pool = rule["labels"]["gpuplan_pool"].as_str()?.to_string();
    let description = rule["annotations"]["description"].as_str().unwrap_or_default();
    let nodepools = capture(r"is NodePools (.*?); its pods need", description).unwrap_or_default();
    match nodepools.split(", ").collect::<Vec<_>>().as_slice() {
        [one] if *one != pool && !one.is_empty() => Some((one.to_string(), "the workload alert's NodePools (one tier of the pool)")),
        _ => Some((pool, "the workload alert's gpuplan_pool label")),
    }
}

/// scaleTargetRef's kind, else the alert's summary (`… of StatefulSet trainer cannot be scheduled …`).
fn kind(t: &Traces) -> String {
    if let Some(kind) = [t.hpa, t.keda].into_iter().flatten().find_map(|d| d.object["spec"]["scaleTargetRef"]["kind"].as_str()) {
        return kind.to_string();
    }
    t.rule(WORKLOAD_UNSCHEDULABLE)
        .and_then(|(_, r)| capture(r"of (Deployment|StatefulSet) ", r["annotations"]["summary"].as_str()?))
        .unwrap_or_else(|| "Deployment".into())
}

/// The PDB's matchLabels (its spec wins: it may have been edited), else the unschedulable alert's
/// `gpuplan_selector`; output from before that annotation without a PDB does not record the selector, and a
/// hand edit may have broken it: a placeholder, warned (with what is wrong with the record, if there is one).
fn selector(t: &Traces, id: &str, name: &str, warnings: &mut Vec<Warning>) -> Vec<Line> {
    let kdl = |k: &str, v: &str| format!("selector {} {}", q(k), q(v));
    if let Some((doc, labels)) = t.pdb.and_then(|d| Some((d, d.object["spec"]["selector"]["matchLabels"].as_object().filter(|l| !l.is_empty())?))) {
        let line = |(k, v): (&String, &Value)| Line::new(kdl(k, v.as_str().unwrap_or_default()), format!("{} spec.selector.matchLabels", doc.at()));
        return labels.iter().map(line).collect();
    }
    let placeholder = format!("the profile says selector \"app\" \"{name}\": edit it");
    let (warning, from) = match t.recorded(SELECTOR_ANNOTATION) {
        Some((record, from)) => match parse_selector_record(record) {
            Ok(labels) => return labels.iter().map(|(k, v)| Line::new(kdl(k, v), from.clone())).collect(),
            Err(reason) => (
                (t.rule(WORKLOAD_UNSCHEDULABLE).map(|(d, _)| d), format!("malformed {SELECTOR_ANNOTATION} `{record}`: {reason}; {placeholder}")),
                format!("{from}: malformed, a placeholder"),
            ),
        },
        None => {
            let (file, object) = first_trace(t);
            let message = format!(
                "gpuplan's output records a workload's selector in its PodDisruptionBudget and its {WORKLOAD_UNSCHEDULABLE} alert's {SELECTOR_ANNOTATION} annotation, and there is neither (output of an older gpuplan?); {placeholder}"
            );
            ((None, message), format!("{file} {object}: not recorded (no PodDisruptionBudget, no {SELECTOR_ANNOTATION}), a placeholder"))
        }
    };
    warn(t, warning, format!("workload {id}: selector"), warnings);
    vec![Line::new(kdl("app", name), from)]
}

/// A warning about a workload, on `doc` (the object holding the malformed record), else its first trace.
fn warn(t: &Traces, (doc, message): (Option<&Doc>, String), field: String, warnings: &mut Vec<Warning>) {
    let (file, object) = doc.map(|d| (d.file.clone(), format!("{}/{}", d.kind, d.name))).unwrap_or_else(|| first_trace(t));
    warnings.push(Warning { file, object, field, message });
}

fn first_trace(t: &Traces) -> (String, String) {
    let doc = t.docs().next().or(t.rules.first().map(|(d, _)| *d));
    doc.map(|d| (d.file.clone(), format!("{}/{}", d.kind, d.name))).unwrap_or_default()
}

fn pdb_budget(spec: &Value) -> Option<PdbBudget> {
    let value = |v: &Value| match v {
        Value::Number(n) => n.as_u64().map(|n| IntOrPercent::Int(n as u32)),
        Value::String(s) => s.strip_suffix('%').and_then(|p| p.parse().ok()).map(IntOrPercent::Percent).or_else(|| s.parse().ok().map(IntOrPercent::Int)),
        _ => None,
    };
    value(&spec["minAvailable"]).map(PdbBudget::MinAvailable).or_else(|| value(&spec["maxUnavailable"]).map(PdbBudget::MaxUnavailable))
}

fn budget_kdl(budget: PdbBudget) -> String {
    let (name, v) = match budget {
        PdbBudget::MinAvailable(v) => ("min-available", v),
        PdbBudget::MaxUnavailable(v) => ("max-unavailable", v),
    };
    match v {
        IntOrPercent::Int(n) => format!("disruption-budget {name}={n}"),
        IntOrPercent::Percent(p) => format!("disruption-budget {name}=\"{p}%\""),
    }
}

/// The HPA's min/max (its spec wins: it may have been edited), else the unschedulable alert's `gpuplan_replicas`.
/// Output from before that annotation without an HPA does not record the count: a PDB means max ≥ 2 (gpuplan gives
/// every such workload one), no PDB means 1. The smallest count the PDB can be satisfied with (E0172) is written,
/// and warned; so it is for a malformed record, with the reason.
fn replicas(t: &Traces, id: &str, pdb: Option<PdbBudget>, warnings: &mut Vec<Warning>) -> Line {
    let kdl = |min: u64, max: u64| if min == max { format!("replicas {min}") } else { format!("replicas min={min} max={max}") };
    if let Some(doc) = t.hpa {
        let spec = &doc.object["spec"];
        let (min, max) = (spec["minReplicas"].as_u64().unwrap_or(1), spec["maxReplicas"].as_u64().unwrap_or(1));
        return Line::new(kdl(min, max), format!("{} spec.minReplicas / spec.maxReplicas", doc.at()));
    }
    if let Some(doc) = t.keda {
        let spec = &doc.object["spec"];
        // KEDA's defaults when absent: minReplicaCount 0, maxReplicaCount 100 (`GetHPAMinReplicas`, `GetHPAMaxReplicas`).
        let (min, max) = (spec["minReplicaCount"].as_u64().unwrap_or(0), spec["maxReplicaCount"].as_u64().unwrap_or(100));
        return Line::new(format!("replicas min={min} max={max}"), format!("{} spec.minReplicaCount / spec.maxReplicaCount", doc.at()));
    }
    let count = match pdb {
        None => 1,
        Some(b) => (2..10_000).find(|r| satisfiable(b, *r)).unwrap_or(2),
    };
    let placeholder = format!(
        "the profile says replicas {count}, the smallest count {}: edit it",
        if pdb.is_some() { "its PodDisruptionBudget allows" } else { "without a PodDisruptionBudget" }
    );
    let (warning, from) = match t.recorded(REPLICAS_ANNOTATION) {
        Some((record, from)) => match parse_replicas_record(record) {
            Ok((min, max)) => return Line::new(kdl(min.into(), max.into()), from),
            Err(reason) => (
                (t.rule(WORKLOAD_UNSCHEDULABLE).map(|(d, _)| d), format!("malformed {REPLICAS_ANNOTATION} `{record}`: {reason}; {placeholder}")),
                format!("{from}: malformed, the smallest consistent count"),
            ),
        },
        None => {
            let (file, object) = first_trace(t);
            let message = format!(
                "gpuplan's output records a workload's replica count in its HorizontalPodAutoscaler and its {WORKLOAD_UNSCHEDULABLE} alert's {REPLICAS_ANNOTATION} annotation, and there is neither (output of an older gpuplan?); {placeholder}"
            );
            ((None, message), format!("{file} {object}: not recorded (no HorizontalPodAutoscaler, no {REPLICAS_ANNOTATION}), the smallest consistent count"))
        }
    };
    warn(t, warning, format!("workload {id}: replicas"), warnings);
    Line::new(format!("replicas {count}"), from)
}

/// Whether a budget lets at least one of `replicas` pods be evicted (the parser's E0172 check).
fn satisfiable(b: PdbBudget, replicas: u32) -> bool {
    match b {
        PdbBudget::MinAvailable(v) => v.of(replicas) < replicas,
        PdbBudget::MaxUnavailable(v) => v.of(replicas) > 0,
    }
}

/// GPUs per pod, from the unschedulable alert's description (`…, with 8 × nvidia.com/gpu each.`); 1 is the default.
fn gpus_per_replica(t: &Traces) -> Option<Line> {
    let (doc, rule) = t.rule(WORKLOAD_UNSCHEDULABLE)?;
    let gpus: u32 = capture(r"with (\d+) × \S+ each\.$", rule["annotations"]["description"].as_str()?)?.parse().ok()?;
    (gpus != 1).then(|| Line::new(format!("gpus-per-replica {gpus}"), format!("{} {WORKLOAD_UNSCHEDULABLE} description", doc.at())))
}

/// `autoscale gpu-utilization=N [metric=…]`, and whether the HPA scales like a training pool's. The target is the
/// percentage gpuplan annotated (`target 60% = 600m`), else the averageValue in the metric's unit; the metric is
/// written only when it is not the pool's default (MIG pools: DCGM_FI_PROF_GR_ENGINE_ACTIVE).
fn autoscale(doc: &Doc, node_pools: &[Doc]) -> (Line, bool) {
    let spec = &doc.object["spec"];
    let metric = spec["metrics"][0]["pods"]["metric"]["name"].as_str().unwrap_or(crate::solve::ops::metrics::DEFAULT_GPU_METRIC).to_string();
    let quantity = match &spec["metrics"][0]["pods"]["target"]["averageValue"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let annotated = doc.object["metadata"]["annotations"]["gpuplan.dev/metric"].as_str().and_then(|m| capture(r"target (\d+)% = ", m)).and_then(|p| p.parse().ok());
    let percent = annotated.or_else(|| percent_of(&metric, &quantity)).unwrap_or(70);
    let nodepools: Vec<&str> = doc.object["metadata"]["annotations"]["gpuplan.dev/nodepools"].as_str().unwrap_or_default().split(',').collect();
    let mig = node_pools.iter().any(|np| nodepools.contains(&np.name.as_str()) && np.object["spec"]["template"]["metadata"]["labels"]["nvidia.com/mig.config"].is_string());
    let mut kdl = format!("autoscale gpu-utilization={percent}");
    if metric != gpu_metric(mig) {
        kdl.push_str(&format!(" metric={}", q(&metric)));
    }
    let plan = |style| HpaPlan { min: 0, max: 0, metric: metric.clone(), target_utilization: percent, target_quantity: quantity.clone(), style };
    let training = spec["behavior"] == plan(ScalingStyle::Training).behavior();
    let from = format!("{} spec.metrics[0] + metadata.annotations.gpuplan.dev/metric", doc.at());
    (Line::new(kdl, from), training)
}

/// A ScaledObject's `scale-to-zero`, `trigger` and `autoscale` lines (in the order the parser documents them), and
/// whether its HPA behaviour is a training pool's. Triggers gpuplan does not write (another type, a query of the
/// `gpu-utilization` trigger it did not write) are warned and left out.
fn keda_lines(doc: &Doc, node_pools: &[Doc], warnings: &mut Vec<Warning>) -> (Vec<Line>, bool) {
    use crate::ops::keda::{gpu_metric_of, kueue_queue_of};
    use crate::profile::format_seconds;
    use crate::solve::ops::keda::GPU_TRIGGER;
    let spec = &doc.object["spec"];
    let mut lines = Vec::new();
    if spec["minReplicaCount"].as_u64().unwrap_or(0) == 0 {
        // KEDA's defaults when absent: cooldownPeriod 300, pollingInterval 30.
        let cooldown = spec["cooldownPeriod"].as_u64().unwrap_or(300) as u32;
        let polling = spec["pollingInterval"].as_u64().unwrap_or(30) as u32;
        lines.push(Line::new(format!("scale-to-zero cooldown={} polling={}", q(&format_seconds(cooldown)), q(&format_seconds(polling))), format!("{} spec.minReplicaCount 0, spec.cooldownPeriod, spec.pollingInterval", doc.at())));
    }
    let mut gpu = None;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    for (i, t) in spec["triggers"].as_array().into_iter().flatten().enumerate() {
        let from = format!("{} spec.triggers[{i}]", doc.at());
        let meta = &t["metadata"];
        let query = meta["query"].as_str().unwrap_or_default();
        let number = |v: &Value| text(v).parse::<f64>().ok().map(|n| format!("{n}"));
        if t["type"] != "prometheus" || query.is_empty() {
            let message = format!("trigger of type {} is not one gpuplan writes (prometheus, with a query): left out; keep it in a ScaledObject of your own", text(&t["type"]));
            warnings.push(Warning { file: doc.file.clone(), object: format!("{}/{}", doc.kind, doc.name), field: format!("spec.triggers[{i}]"), message });
            continue;
        }
        if t["name"] == GPU_TRIGGER
            && let Some(metric) = gpu_metric_of(query) {
                gpu = Some((metric.to_string(), text(&meta["threshold"]), from));
                continue;
            }
        let line = match (kueue_queue_of(query), number(&meta["threshold"])) {
            (Some(queue), Some(per)) => format!("trigger \"kueue-pending\" cluster-queue={} per-replica={per}", q(queue)),
            (_, threshold) => {
                let mut line = format!("trigger \"prometheus\" query={} threshold={}", q(query), threshold.unwrap_or_else(|| "1".into()));
                if let Some(a) = meta.get("activationThreshold").and_then(number) {
                    line.push_str(&format!(" activation={a}"));
                }
                line
            }
        };
        lines.push(Line::new(line, from));
    }
    if let Some((metric, threshold, from)) = gpu {
        let annotated = doc.object["metadata"]["annotations"]["gpuplan.dev/metric"].as_str().and_then(|m| capture(r"target (\d+)% = ", m)).and_then(|p| p.parse().ok());
        let percent = annotated.or_else(|| percent_of(&metric, &threshold).or_else(|| threshold.parse::<f64>().ok().map(|r| (r * 100.0).round() as u32))).unwrap_or(70);
        let mig = uses_mig(doc, node_pools);
        let mut kdl = format!("autoscale gpu-utilization={percent}");
        if metric != gpu_metric(mig) {
            kdl.push_str(&format!(" metric={}", q(&metric)));
        }
        lines.push(Line::new(kdl, format!("{from} + metadata.annotations.gpuplan.dev/metric")));
    }
    let plan = HpaPlan { min: 0, max: 0, metric: String::new(), target_utilization: 0, target_quantity: String::new(), style: ScalingStyle::Training };
    let training = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"] == plan.behavior();
    (lines, training)
}

/// Whether the object's NodePools (its `gpuplan.dev/nodepools` annotation) use MIG.
fn uses_mig(doc: &Doc, node_pools: &[Doc]) -> bool {
    let nodepools: Vec<&str> = doc.object["metadata"]["annotations"]["gpuplan.dev/nodepools"].as_str().unwrap_or_default().split(',').collect();
    node_pools.iter().any(|np| nodepools.contains(&np.name.as_str()) && np.object["spec"]["template"]["metadata"]["labels"]["nvidia.com/mig.config"].is_string())
}

/// The inverse of `ops::quantity`: `"70"` → 70 for a percentage metric, `"600m"` / `"1"` → 60 / 100 for a ratio.
fn percent_of(metric: &str, quantity: &str) -> Option<u32> {
    match (metric_is_ratio(metric), quantity.strip_suffix('m')) {
        (false, _) => quantity.parse().ok(),
        (true, Some(milli)) => milli.parse::<u32>().ok().map(|m| m / 10),
        (true, None) => quantity.parse::<u32>().ok().map(|r| r * 100),
    }
}

/// `max-per-node N` from the placement annotation: the anti-affinity of 1, or the hard host spread of N
/// (`SpreadAdvice::max_per_node`).
fn max_per_node(at: &str, placement: &str) -> Option<Line> {
    if placement.contains(ONE_PER_NODE) {
        return Some(Line::new("max-per-node 1", at.to_string()));
    }
    let (_, rest) = placement.split_once(&format!("topologySpreadConstraint {{topologyKey: {HOST_KEY}, maxSkew: "))?;
    let (n, rest) = rest.split_once(", ")?;
    let n: u32 = n.parse().ok()?;
    rest.starts_with("whenUnsatisfiable: DoNotSchedule}").then(|| Line::new(format!("max-per-node {n}"), at.to_string()))
}
