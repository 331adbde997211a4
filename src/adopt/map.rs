//! NodePool (+ its EC2NodeClass) → a pool in a profile. Every leaf field of the original is either consumed by a
//! profile line (whose comment names it) or reported as a warning and kept as a comment: nothing is dropped.
//!
//! Fields gpuplan derives itself are consumed without a line: the `gpuplan.dev/*` annotations, the
//! `gpuplan.dev/pool` label and taint, the accelerator's NoSchedule taint, `kubernetes.io/os: linux`, and the
//! instance-family requirement when it only restates the named instance types.

use std::collections::BTreeSet;

use serde_json::Value;

use super::consumed::Consumed;
use super::model::{q, AdoptedPool, Line, Warning};
use super::nodepool::{limit, sharing_of, units};
use super::read::Doc;
use super::requirements::{bounds, capacity_types, requirements, Requirement};
use crate::catalog::{Catalog, CapacityType};

pub const GPU_TAINT_KEYS: [&str; 3] = ["nvidia.com/gpu", "aws.amazon.com/neuron", "amd.com/gpu"];
const DERIVED_LABELS: [&str; 1] = ["gpuplan.dev/pool"];

pub struct PoolContext<'a> {
    pub doc: &'a Doc,
    pub catalog: &'a Catalog,
    /// The EC2NodeClass's capacity reservation terms, for reserved pools.
    pub reservation: Option<(&'a Doc, Vec<Line>)>,
    /// `--reservation`: what the reservation holds when the user gave it.
    pub reservation_arg: Option<super::ReservationArg>,
    /// The EC2NodeClass stripes local NVMe (`instanceStorePolicy: RAID0`): the pool asks for `scratch`. The class
    /// (`file EC2NodeClass/name`), for provenance.
    pub instance_store_raid0: bool,
    pub class_at: Option<String>,
    /// The class's `placementGroupSelector.name`: the pool's `placement-group`.
    pub placement_group: Option<String>,
    /// The EC2NodeClass's Bottlerocket user data time-slices the GPUs this many times (`bottlerocket::time_slicing`).
    pub class_time_slicing: Option<u32>,
    /// The class's `spec.kubelet` (`kubelet` is a pool setting), with where it came from.
    pub class_kubelet: Option<(Value, String)>,
    /// The class's fields no setting says, when the class is not the profile's primary one (whose go to the cluster
    /// block): the pool's `raw "EC2NodeClass"`.
    pub class_raw: Option<Line>,
    /// `--optimize`: no `admit "as-required"` line (gpuplan's selection).
    pub optimize: bool,
    /// The original class's name, where gpuplan would derive another: the pool's `node-class`.
    pub class_name: Option<String>,
}

/// Maps one NodePool. Returns the pool, the zones its requirements name, and those requirements (`file NodePool/x
/// spec.template.spec.requirements[i]`: the cluster's `zones` line says them).
pub fn map_pool(ctx: &PoolContext, warnings: &mut Vec<Warning>) -> (AdoptedPool, Vec<String>, Vec<String>) {
    let doc = ctx.doc;
    let np = &doc.object;
    let from = |field: &str| format!("{} {}/{} {field}", doc.file, doc.kind, doc.name);
    let mut used = Consumed::default();
    for f in ["apiVersion", "kind", "metadata.name", "spec.template.spec.nodeClassRef"] {
        used.take(f);
    }
    take_gpuplan_metadata(np, &mut used);

    let reqs = requirements(np);
    let (kind_line, resource) = accelerator(np, &reqs, ctx.catalog, &mut used, &from);
    let mut lines = vec![kind_line];
    lines.extend(keeping_lines(ctx, &from, warnings));
    let mut missing = Vec::new();
    // A static NodePool's size is its replicas: no accelerator or cpu limit to adopt (the CRD allows only `nodes`).
    let static_line = super::static_pool::line(doc, &mut used, &from);
    let is_static = static_line.is_some();
    lines.extend(requirement_lines(&reqs, ctx.catalog, doc.is_gpuplans(), &mut used, &from));
    let capacity = capacity_types(&reqs);
    let reserved = capacity.contains(&CapacityType::Reserved);
    // A reserved pool's other capacity types are its fallback tiers; reserved alone makes the pool the reservation.
    let reserved_only = reserved && capacity.iter().all(|c| *c == CapacityType::Reserved);
    lines.extend(capacity_line(&reqs, &capacity, reserved_only, &from));
    if np["metadata"]["annotations"][crate::render::EFA_ANNOTATION].as_str().is_some_and(|v| v.starts_with("required")) {
        lines.push(Line::new("efa #true", from(&format!("metadata.annotations.{}", crate::render::EFA_ANNOTATION))));
    }
    lines.extend(class_lines(ctx));
    let (reserved_line, needed) = reserved_line(ctx, &reqs, &resource, reserved, &from, warnings);
    lines.extend(reserved_line);
    missing.extend(needed);
    // A reserved pool that falls back to other capacity types: the original limit bounds the whole NodePool, so the
    // fallback tier (the reservation's tier is bounded by the reservation) keeps it.
    if !reserved_only && !is_static {
        lines.push(limit_line(ctx, &resource, warnings));
    }
    lines.extend(static_line);
    if reserved {
        used.take(format!("spec.limits.{resource}"));
    }
    if !np["spec"]["limits"][&resource].is_null() {
        used.take(format!("spec.limits.{resource}"));
    }
    if resource == "aws.amazon.com/neuron" && !np["spec"]["limits"]["aws.amazon.com/neuroncore"].is_null() {
        used.take("spec.limits.aws.amazon.com/neuroncore");
    }
    if let Some(w) = np["spec"]["weight"].as_u64() {
        used.take("spec.weight");
        lines.push(Line::new(format!("weight {w}"), from("spec.weight")));
    }
    let template_labels = np["spec"]["template"]["metadata"]["labels"].as_object().cloned().unwrap_or_default();
    lines.extend(sharing(&template_labels, &mut used, &from));
    if let Some(replicas) = ctx.class_time_slicing.filter(|_| sharing_of(np).is_none()) {
        // gpuplan writes the same settings into the class (plus fail-requests-greater-than-one), and a NodeOverlay
        // with the sliced capacity for the pool's types, as the hand-written ones do.
        lines.push(Line::new(format!("time-slicing replicas={replicas}"), "the EC2NodeClass's spec.userData: Bottlerocket settings.kubelet-device-plugins.nvidia time-slicing"));
        time_slicing_warnings(ctx, warnings);
    }
    if !reserved && !is_static {
        lines.extend(resource_limits(np, &mut used, &from));
    }
    lines.push(disruption_line(doc, is_static, &mut used, &from, warnings));
    lines.extend(label_lines(&template_labels, &mut used, &from));
    lines.extend(taints(np, &resource, &mut used, &from));
    lines.extend(kubelet(ctx, &mut used));
    super::raw::take_gitops_annotations(doc, &mut used);
    let zones = super::requirements::zones(&reqs);
    let (raw, owned) = super::raw::carry(doc, &used, "NodePool", warnings);
    let comments = used.leftovers(doc, &owned, warnings);
    lines.extend(raw);
    lines.extend(ctx.class_raw.clone());
    let tier_of = tier_of(&template_labels, &doc.name);
    let zone_fields = reqs.iter().enumerate().filter(|(_, r)| r.key == "topology.kubernetes.io/zone").map(|(i, _)| from(&format!("spec.template.spec.requirements[{i}]"))).collect();
    (AdoptedPool { name: doc.name.clone(), tier_of, preset: preset(np), from: from(""), lines, comments, missing }, zones, zone_fields)
}

/// The pool settings its class says: RAID0 instance storage (`scratch`) and the placement group.
fn class_lines(ctx: &PoolContext) -> Vec<Line> {
    let class = ctx.class_at.clone().unwrap_or_else(|| "EC2NodeClass".into());
    let mut lines = Vec::new();
    if ctx.instance_store_raid0 {
        lines.push(Line::new("scratch \"instance-store\"", format!("{class} spec.instanceStorePolicy: RAID0")));
    }
    if let Some(group) = &ctx.placement_group {
        lines.push(Line::new(format!("placement-group {}", super::model::q(group)), format!("{class} spec.placementGroupSelector.name")));
    }
    lines
}

/// What compiling a Bottlerocket time-sliced pool writes beyond the original, named: gpuplan's settings of the class's
/// time-slicing (`fail-requests-greater-than-one`, so a pod asking for two slices is refused rather than given two
/// slices of one GPU).
fn time_slicing_warnings(ctx: &PoolContext, warnings: &mut Vec<Warning>) {
    if let Some((file, object)) = ctx.class_at.as_deref().and_then(|at| at.rsplit_once(' ')) {
        warnings.push(Warning {
            file: file.to_string(),
            object: object.to_string(),
            field: "spec.userData".into(),
            message: "gpuplan writes the time-slicing settings itself, with fail-requests-greater-than-one = true: a pod requesting two slices is refused instead of being given two slices of one GPU".into(),
        });
    }
}

/// The GPU Operator labels gpuplan puts on an accelerated pool whose AMI runs its own device plugin (Bottlerocket),
/// named: `nvidia.com/gpu.deploy.device-plugin=false` and `…mig-manager=false` leave the device plugin to the host's,
/// as on the original's nodes.
pub fn host_plugin_labels_warning(doc: &Doc) -> Warning {
    Warning {
        file: doc.file.clone(),
        object: format!("NodePool/{}", doc.name),
        field: "spec.template.metadata.labels".into(),
        message: "its nodes run Bottlerocket's own device plugin: gpuplan labels them nvidia.com/gpu.deploy.device-plugin=false and nvidia.com/gpu.deploy.mig-manager=false, so that the GPU Operator (if installed) does not run a second one".into(),
    }
}

/// The lines that keep a hand-written pool's behaviour: `admit "as-required"` (gpuplan's own NodePools are its
/// selection already, their `types` pin it), or with `--optimize` a warning naming what gpuplan's selection changes;
/// and `node-class` where gpuplan would rename the class.
fn keeping_lines(ctx: &PoolContext, from: &dyn Fn(&str) -> String, warnings: &mut Vec<Warning>) -> Vec<Line> {
    let mut lines = Vec::new();
    let doc = ctx.doc;
    if !doc.is_gpuplans() && !ctx.optimize {
        lines.push(Line::new("admit \"as-required\"", from("spec.template.spec.requirements: exactly the types they admit (--optimize for gpuplan's selection)")));
    } else if !doc.is_gpuplans() {
        warnings.push(Warning {
            file: doc.file.clone(),
            object: format!("NodePool/{}", doc.name),
            field: "spec.template.spec.requirements".into(),
            message: "--optimize: gpuplan's selection replaces the original's: only types with the pool's accelerator, whole, within price-ratio-max of the cheapest $/accelerator-hour (the types removed and the $/h they change are in the pool's report), and minValues 2 on instance-family for a spot pool of two families or more (a pod pinned to one family then pends)".into(),
        });
    }
    if let Some(name) = &ctx.class_name {
        lines.push(Line::new(format!("node-class {}", q(name)), from("spec.template.spec.nodeClassRef.name")));
    }
    lines
}

/// The `reserved { … }` block of a reserved pool, with what the inputs lack to say it; for a pool whose class selects
/// reservations it admits no capacity of, a warning that they are not carried.
fn reserved_line(ctx: &PoolContext, reqs: &[Requirement], resource: &str, reserved: bool, from: &dyn Fn(&str) -> String, warnings: &mut Vec<Warning>) -> (Option<Line>, Option<String>) {
    let doc = ctx.doc;
    let Some((class, reserved_lines)) = &ctx.reservation else { return (None, None) };
    if !reserved {
        warnings.push(Warning {
            file: class.file.clone(),
            object: format!("{}/{}", class.kind, class.name),
            field: "spec.capacityReservationSelectorTerms".into(),
            message: format!("NodePool {} admits no reserved capacity (karpenter.sh/capacity-type), so Karpenter launches nothing into these reservations: not carried (add `reserved` to its capacity types to use them)", doc.name),
        });
        return (None, None);
    }
    let (mut block, needed) = super::reservations::reserved_block(reserved_lines.clone(), reqs, resource, doc, ctx.catalog, ctx.reservation_arg.as_ref());
    block.extend(super::reservations::capacity_block(reqs, doc, warnings));
    let line = Line::block("reserved", from("capacity-type reserved + EC2NodeClass capacityReservationSelectorTerms"), block);
    let needed = needed.map(|field| format!("{}: a reserved pool needs what its capacity reservation holds, and the catalog knows no reservations: {field}, then adopt again", from("").trim_end()));
    (Some(line), needed)
}

/// `disruption { … }`; a static NodePool's consolidation is dropped (with a warning: Karpenter ignores it there).
fn disruption_line(doc: &Doc, is_static: bool, used: &mut Consumed, from: &dyn Fn(&str) -> String, warnings: &mut Vec<Warning>) -> Line {
    if is_static {
        super::static_pool::drop_consolidation(doc, used, warnings);
    }
    let mut disruption = disruption(&doc.object, used, from);
    if is_static {
        disruption.children.retain(|l| !l.kdl.starts_with("consolidat"));
    }
    disruption
}

/// The gpuplan pool a NodePool is a tier of: its `gpuplan.dev/pool` label, when the NodePool is named `<pool>-<tier>`.
fn tier_of(template_labels: &serde_json::Map<String, Value>, name: &str) -> Option<String> {
    template_labels
        .get("gpuplan.dev/pool")
        .and_then(Value::as_str)
        .filter(|pool| name.strip_prefix(*pool).is_some_and(|rest| rest.len() > 1 && rest.starts_with('-')))
        .map(str::to_string)
}

/// gpuplan's own metadata on an object it wrote: its `gpuplan.dev/*` annotations and its managed-by label, consumed
/// without a line.
pub(super) fn take_gpuplan_metadata(object: &Value, used: &mut Consumed) {
    if let Some(annotations) = object["metadata"]["annotations"].as_object() {
        for k in annotations.keys().filter(|k| k.starts_with("gpuplan.dev/")) {
            used.take(format!("metadata.annotations.{k}"));
        }
    }
    if super::read::generated_by_gpuplan(object) {
        used.take("metadata.labels.app.kubernetes.io/managed-by");
    }
}

/// `capacity …`: the capacity types the requirements admit.
fn capacity_line(reqs: &[Requirement], capacity: &[CapacityType], reserved_only: bool, from: &dyn Fn(&str) -> String) -> Option<Line> {
    let capacity_values: Vec<&str> = capacity.iter().filter(|c| **c != CapacityType::Reserved || reserved_only).map(|c| c.as_str()).collect();
    // A reserved pool's capacity type follows from its `reserved` block.
    if capacity_values.is_empty() {
        return None;
    }
    // Named by each requirement it reads (a provenance comment names whole fields).
    let fields: Vec<String> = reqs.iter().enumerate().filter(|(_, r)| r.key == "karpenter.sh/capacity-type").map(|(i, _)| format!("spec.template.spec.requirements[{i}]")).collect();
    let field = if fields.is_empty() { "requirements karpenter.sh/capacity-type".to_string() } else { fields.join(", ") };
    Some(Line::new(format!("capacity {}", capacity_values.iter().map(|c| q(c)).collect::<Vec<_>>().join(" ")), from(&field)))
}

/// `max-accelerators` / `max-cpu` from the original's limit, or a chosen one with a warning when it has none.
fn limit_line(ctx: &PoolContext, resource: &str, warnings: &mut Vec<Warning>) -> Line {
    let doc = ctx.doc;
    let np = &doc.object;
    let Some(limit) = limit(np, resource) else {
        return neuroncore_limit(ctx, resource, warnings).unwrap_or_else(|| unbounded(ctx, resource, warnings));
    };
    let from = |field: &str| format!("{} {}/{} {field}", doc.file, doc.kind, doc.name);
    // A shared pool's limit counts slices (time-slicing replicas, MIG devices); max-accelerators counts GPUs.
    let units = ctx.class_time_slicing.unwrap_or_else(|| units(np));
    let value = match limit.parse::<u32>() {
        Ok(n) if units > 1 && n % units == 0 => (n / units).to_string(),
        _ => limit,
    };
    let why = if units > 1 { format!(" ÷ {units} per GPU") } else { String::new() };
    let keyword = if resource == "cpu" { "max-cpu" } else { "max-accelerators" };
    Line::new(format!("{keyword} {value}"), from(&format!("spec.limits.{resource}{why}")))
}

/// `label …` for each template label no other line consumed (gpuplan's own derived labels consumed silently).
fn label_lines(template_labels: &serde_json::Map<String, Value>, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Vec<Line> {
    let mut lines = Vec::new();
    for (k, v) in template_labels {
        let field = format!("spec.template.metadata.labels.{k}");
        if used.covers(&field) {
            continue;
        }
        used.take(field.clone());
        if !DERIVED_LABELS.contains(&k.as_str()) {
            lines.push(Line::new(format!("label {} {}", q(k), q(v.as_str().unwrap_or_default())), from(&field)));
        }
    }
    lines
}

/// `kubelet { … }`: the class's `spec.kubelet` over a v1beta1-style NodePool `spec.template.spec.kubelet` (Karpenter v1
/// reads kubelet settings from the EC2NodeClass; gpuplan renders the block there).
fn kubelet(ctx: &PoolContext, used: &mut Consumed) -> Option<Line> {
    let field = "spec.template.spec.kubelet";
    // Only a v1beta1 NodePool has kubelet settings; a karpenter.sh/v1 NodePool's are dropped by the API server, so
    // carrying them would change the nodes (they stay a warning and a comment, `raw::owner`).
    let v1beta1 = ctx.doc.object["apiVersion"] == "karpenter.sh/v1beta1";
    let mut merged = if v1beta1 { ctx.doc.object["spec"]["template"]["spec"]["kubelet"].clone() } else { Value::Null };
    let mut at = format!("{} {}/{}", ctx.doc.file, ctx.doc.kind, ctx.doc.name);
    if let Some((class, from)) = &ctx.class_kubelet {
        crate::profile::raw::merge_patch(&mut merged, class);
        at = from.clone();
    }
    let line = super::raw::kubelet_block(&merged, field, &at, used);
    line.map(|mut l| {
        // The children's fields are the class's when it says them.
        if ctx.class_kubelet.is_some() {
            l.from = format!("{at} spec.kubelet");
            l.children.iter_mut().for_each(|c| c.from = c.from.replace(field, "spec.kubelet"));
        }
        l
    })
}

/// Presets only supply defaults, and adopt writes every setting out, so the preset is chosen for the two things
/// a written setting cannot say: `general` pools are untainted, every other preset taints its NodePools
/// `gpuplan.dev/pool=<pool>:NoSchedule` (so pods must opt in). `inference-on-demand` is the tainting preset
/// with one NodePool and no default a NodePool could lack (batch-spot and training add a
/// terminationGracePeriod, inference-spot makes two NodePools); `capacity` says the rest.
fn preset(np: &Value) -> &'static str {
    let pool_taint = np["spec"]["template"]["spec"]["taints"].as_array().into_iter().flatten().any(|t| t["key"] == "gpuplan.dev/pool");
    if pool_taint { "inference-on-demand" } else { "general" }
}

/// `cpu { … }`: per-node bounds from `karpenter.k8s.aws/instance-cpu` (vCPUs per node, as `per-node` counts them).
fn cpu_block(reqs: &[Requirement], used: &mut Consumed, from: &dyn Fn(&str) -> String) -> (Line, String) {
    let mut children = Vec::new();
    for (i, r) in reqs.iter().enumerate().filter(|(_, r)| r.key == "karpenter.k8s.aws/instance-cpu" && matches!(r.operator.as_str(), "Gt" | "Gte" | "Lt" | "Lte")) {
        let field = format!("spec.template.spec.requirements[{i}]");
        let (min, max) = bounds(r);
        let props: Vec<String> = [min.filter(|m| *m > 1).map(|m| format!("min={m}")), max.map(|m| format!("max={m}"))].into_iter().flatten().collect();
        if !props.is_empty() {
            children.push(Line::new(format!("per-node {}", props.join(" ")), from(&field)));
        }
        used.take(field);
    }
    (Line::block("cpu", from("no accelerator limit, taint or requirement: a CPU pool"), children), "cpu".to_string())
}

/// `gpu { … }` or `neuron { … }` from the limit's resource and the accelerator requirements; `cpu { … }` for a
/// NodePool that names no accelerator.
fn accelerator(np: &Value, reqs: &[Requirement], catalog: &Catalog, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> (Line, String) {
    let kind = super::nodepool::kind(np, catalog);
    if kind == crate::catalog::AcceleratorKind::Cpu {
        return cpu_block(reqs, used, from);
    }
    let neuron = kind == crate::catalog::AcceleratorKind::Neuron;
    let resource = kind.resource();
    let mut children = Vec::new();
    for (i, r) in reqs.iter().enumerate() {
        let field = format!("spec.template.spec.requirements[{i}]");
        let short = r.key.trim_start_matches("karpenter.k8s.aws/");
        match (short, r.operator.as_str()) {
            ("instance-gpu-name", "In") | ("instance-accelerator-name", "In") => {
                let names: Vec<String> = r.values.iter().map(|v| catalog_name(catalog, v)).collect();
                children.push(Line::new(format!("name {}", names.iter().map(|n| q(n)).collect::<Vec<_>>().join(" ")), from(&field)));
                used.take(field);
            }
            ("instance-gpu-manufacturer", "In") if r.values.len() == 1 && (r.values[0] == "amd" || r.values[0] == "nvidia") => {
                if r.values[0] == "amd" {
                    children.push(Line::new("manufacturer \"amd\"", from(&field)));
                }
                used.take(field);
            }
            ("instance-gpu-memory", "Gt" | "Gte" | "In") if bounds(r).0.is_some() => {
                let mib = bounds(r).0.unwrap_or(0).max(0);
                let text = if mib % 1024 == 0 { format!("{}GiB", mib / 1024) } else { format!("{mib}MiB") };
                children.push(Line::new(format!("memory-min {}", q(&text)), from(&field)));
                used.take(field);
            }
            ("instance-gpu-count" | "instance-accelerator-count", "Gt" | "Gte" | "Lt" | "Lte" | "In") => {
                let (min, max) = bounds(r);
                let mut props = Vec::new();
                if let Some(min) = min.filter(|m| *m > 1) {
                    props.push(format!("min={min}"));
                }
                if let Some(max) = max {
                    props.push(format!("max={max}"));
                }
                if r.operator == "In" && r.values.len() > 1 {
                    continue; // a set of counts is not a range: left for the warning
                }
                if !props.is_empty() {
                    children.push(Line::new(format!("per-node {}", props.join(" ")), from(&field)));
                }
                used.take(field);
            }
            ("instance-gpu-count" | "instance-accelerator-count", "Exists") => used.take(field), // implied: accelerators only
            _ => {}
        }
    }
    let name = if neuron { "neuron" } else { "gpu" };
    (Line::block(name, from(&format!("spec.limits.{resource} / requirements")), children), resource.to_string())
}

/// The catalog's spelling of a lowercase label value ("a10g" → "A10G", "inferentia2" → "Inferentia2").
fn catalog_name(catalog: &Catalog, label: &str) -> String {
    catalog
        .instance_types
        .iter()
        .flat_map(|t| t.gpus.iter().map(|g| g.name.clone()).chain(t.neuron.iter().map(|n| n.name.clone())))
        .find(|n| n.eq_ignore_ascii_case(label))
        .unwrap_or_else(|| label.to_string())
}

/// Instance-type selection: types, families, generation, arch; os linux and zones (cluster-level) consumed.
fn requirement_lines(reqs: &[Requirement], catalog: &Catalog, ours: bool, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Vec<Line> {
    let mut lines = Vec::new();
    let named: Vec<&str> = reqs.iter().filter(|r| r.key == "node.kubernetes.io/instance-type" && r.operator == "In").flat_map(|r| r.values.iter().map(String::as_str)).collect();
    let named_families: BTreeSet<String> = named.iter().filter_map(|n| catalog.get(n).map(|t| t.family.clone())).collect();
    let mut arch_seen = false;
    for (i, r) in reqs.iter().enumerate() {
        let field = format!("spec.template.spec.requirements[{i}]");
        let values = || r.values.iter().map(|v| q(v)).collect::<Vec<_>>().join(" ");
        // The family requirement restating the named types is gpuplan's own (with the minValues it derives for
        // spot diversity): derived, consumed.
        if r.key == "karpenter.k8s.aws/instance-family" && r.operator == "In" && !named.is_empty() && r.values.iter().cloned().collect::<BTreeSet<_>>() == named_families {
            // Its minValues is gpuplan's spot default on gpuplan's own output, else the original's.
            if let Some(m) = r.min_values.filter(|m| *m != 2 || !ours) {
                lines.push(Line::new(format!("family-min-values {m}"), from(&format!("{field}.minValues"))));
            }
            used.take(field);
            continue;
        }
        // minValues on the family or type requirement: gpuplan writes those requirements itself, with the pool's
        // `family-min-values` / `type-min-values`; an `Exists` says nothing else (the types are the pool's anyway).
        let setting = match r.key.as_str() {
            "karpenter.k8s.aws/instance-family" => Some("family-min-values"),
            "node.kubernetes.io/instance-type" => Some("type-min-values"),
            _ => None,
        };
        if let (Some(setting), Some(m)) = (setting, r.min_values) {
            lines.push(Line::new(format!("{setting} {m}"), from(&format!("{field}.minValues"))));
            if r.operator == "Exists" {
                used.take(field);
                continue;
            }
        }
        if r.min_values.is_some() && setting.is_none() {
            // Only `require` says minValues (a derived key's is kept for the warning).
            if let Some(line) = require_line(r, &field, used) {
                lines.push(Line::new(line, from(&field)));
            }
            continue;
        }
        let line = match (r.key.as_str(), r.operator.as_str()) {
            ("node.kubernetes.io/instance-type", "In") => Some(format!("types {}", values())),
            ("node.kubernetes.io/instance-type", "NotIn") => Some(format!("exclude-types {}", values())),
            ("karpenter.k8s.aws/instance-family", "In") => Some(format!("families {}", values())),
            ("karpenter.k8s.aws/instance-family", "NotIn") => Some(format!("exclude-families {}", values())),
            ("karpenter.k8s.aws/instance-generation", "Gt" | "Gte") => bounds(r).0.map(|g| format!("generation-min {g}")),
            ("kubernetes.io/arch", "In") if !arch_seen => {
                arch_seen = true;
                Some(format!("arch {}", values()))
            }
            ("kubernetes.io/os", "In") if r.values == ["linux"] => {
                used.take(field);
                continue;
            }
            ("karpenter.sh/capacity-type" | "topology.kubernetes.io/zone", _) if r.operator != "NotIn" || r.key == "karpenter.sh/capacity-type" => {
                used.take(field);
                continue;
            }
            _ => require_line(r, &field, used),
        };
        if let Some(line) = line {
            lines.push(Line::new(line, from(&field)));
            used.take(field);
        }
    }
    // No architecture requirement: Karpenter launches either (kubernetes-sigs/karpenter sets no default arch
    // requirement on a NodePool; karpenter-provider-aws resolves an AMI alias per architecture), where a profile
    // without `arch` means amd64 only. Written out, so that the Graviton GPU types (g5g) stay admitted.
    if !reqs.iter().any(|r| r.key == "kubernetes.io/arch") {
        lines.push(Line::new("arch \"amd64\" \"arm64\"", from("spec.template.spec.requirements (no kubernetes.io/arch: either architecture)")));
    }
    lines
}

/// `require "<key>" "<operator>" "<value>"… [min-values=n]` for a requirement no dedicated setting says and the
/// `gpu`/`neuron` block did not take; None when the profile cannot say it (kept for the warning).
fn require_line(r: &Requirement, field: &str, used: &mut Consumed) -> Option<String> {
    if used.covers(field) || !crate::profile::requirement_expressible(&r.key, &r.operator, &r.values, r.min_values) {
        return None;
    }
    used.take(field);
    let mut words = vec!["require".to_string(), q(&r.key), q(&r.operator)];
    words.extend(r.values.iter().map(|v| q(v)));
    words.extend(r.min_values.map(|m| format!("min-values={m}")));
    Some(words.join(" "))
}

/// gpuplan never emits a GPU NodePool without a limit (E0141): an unbounded original gets
/// `max-accelerators` = twice its largest admitted node (at least 16), and a warning saying so.
/// A CPU pool likewise gets `max-cpu` = twice its largest admitted node's vCPUs, at least 64.
fn unbounded(ctx: &PoolContext, resource: &str, warnings: &mut Vec<Warning>) -> Line {
    let (kind, keyword, least, what) = match resource {
        "aws.amazon.com/neuron" => (crate::catalog::AcceleratorKind::Neuron, "max-accelerators", 16, "accelerator"),
        "amd.com/gpu" => (crate::catalog::AcceleratorKind::Amd, "max-accelerators", 16, "accelerator"),
        "cpu" => (crate::catalog::AcceleratorKind::Cpu, "max-cpu", 64, "cpu"),
        _ => (crate::catalog::AcceleratorKind::Nvidia, "max-accelerators", 16, "accelerator"),
    };
    let admitted = super::nodepool::admitted_as(&ctx.doc.object, ctx.catalog, kind);
    if let Some(line) = implied_by_cpu(ctx, &admitted, kind, keyword, resource, warnings) {
        return line;
    }
    let largest = admitted.iter().map(|t| t.accelerators(kind)).max().unwrap_or(0);
    let chosen = (largest * 2).max(least);
    warnings.push(Warning {
        file: ctx.doc.file.clone(),
        object: format!("NodePool/{}", ctx.doc.name),
        field: format!("spec.limits.{resource}"),
        message: format!("no {what} limit (unbounded spend); the profile says {keyword} {chosen} (twice the largest admitted node, at least {least}): edit it"),
    });
    Line::new(format!("{keyword} {chosen}"), format!("{} NodePool/{} spec.limits.{resource}: absent, chosen by adopt", ctx.doc.file, ctx.doc.name))
}

/// A Neuron pool limited in cores (`aws.amazon.com/neuroncore`, what pods asking for cores request): `max-accelerators`
/// counts devices, so the cores ÷ the cores per device, rounded down (Karpenter launches nothing past a limit). Types
/// of different core counts per device (trn2: 8, inf2: 2) make the two limits bind apart: then the fewest cores per
/// device (the most devices) is taken, and a warning says the core limit is not carried.
fn neuroncore_limit(ctx: &PoolContext, resource: &str, warnings: &mut Vec<Warning>) -> Option<Line> {
    let cores = limit(&ctx.doc.object, "aws.amazon.com/neuroncore").filter(|_| resource == "aws.amazon.com/neuron")?;
    let cores: u64 = crate::simulate::yaml::milli(&cores).map(|m| m / 1000).and_then(|c| u64::try_from(c).ok())?;
    let admitted = super::nodepool::admitted_as(&ctx.doc.object, ctx.catalog, crate::catalog::AcceleratorKind::Neuron);
    let per_device: BTreeSet<u64> = admitted.iter().filter_map(|t| t.neuron.as_ref()).map(|n| u64::from(n.cores_per_device.max(1))).collect();
    let fewest = *per_device.first()?;
    let devices = u32::try_from(cores / fewest).unwrap_or(u32::MAX).clamp(1, 100_000);
    let mixed = per_device.len() > 1;
    warnings.push(Warning {
        file: ctx.doc.file.clone(),
        object: format!("NodePool/{}", ctx.doc.name),
        field: "spec.limits.aws.amazon.com/neuroncore".into(),
        message: if mixed {
            format!("{cores} cores: the profile says max-accelerators {devices} (÷ {fewest} cores per device, the fewest among its types: {}); on types with more cores per device the device limit allows more cores than the original's (the core limit is not carried)", per_device.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
        } else {
            format!("{cores} cores: the profile says max-accelerators {devices} ({fewest} cores per device on every admitted type), the same bound in devices")
        },
    });
    Some(Line::new(format!("max-accelerators {devices}"), format!("{} NodePool/{} spec.limits.aws.amazon.com/neuroncore {cores} ÷ {fewest} cores per device", ctx.doc.file, ctx.doc.name)))
}

/// An accelerated original bounded by its cpu limit alone: the most accelerators that limit lets Karpenter launch (on
/// the admitted type with the most accelerators per vCPU), so the adopted limit binds no earlier than the original's
/// (the cpu limit is kept beside it in `limits`). Named in a warning.
fn implied_by_cpu(ctx: &PoolContext, admitted: &[&crate::catalog::InstanceType], kind: crate::catalog::AcceleratorKind, keyword: &str, resource: &str, warnings: &mut Vec<Warning>) -> Option<Line> {
    if kind == crate::catalog::AcceleratorKind::Cpu {
        return None;
    }
    let milli = limit(&ctx.doc.object, "cpu").and_then(|c| crate::simulate::yaml::milli(&c)).filter(|m| *m > 0)?;
    let vcpus = u64::try_from(milli / 1000).ok()?;
    let implied = admitted.iter().filter(|t| t.vcpu > 0).map(|t| vcpus / u64::from(t.vcpu) * u64::from(t.accelerators(kind))).max()?;
    let implied = u32::try_from(implied).unwrap_or(u32::MAX).clamp(1, 100_000);
    warnings.push(Warning {
        file: ctx.doc.file.clone(),
        object: format!("NodePool/{}", ctx.doc.name),
        field: format!("spec.limits.{resource}"),
        message: format!("no {resource} limit, but spec.limits.cpu bounds the pool: the profile says {keyword} {implied}, the most that cpu limit lets Karpenter launch (the cpu limit is kept too)"),
    });
    Some(Line::new(format!("{keyword} {implied}"), format!("{} NodePool/{} spec.limits.{resource}: absent, implied by spec.limits.cpu", ctx.doc.file, ctx.doc.name)))
}


/// `limits cpu=… memory=…` from `spec.limits` (a shared pool's cpu limit is gpuplan's backstop, taken before).
fn resource_limits(np: &Value, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Option<Line> {
    let mut props = Vec::new();
    let mut fields = Vec::new();
    for (key, least) in [("cpu", 1000), ("memory", 1024 * 1024 * 1000)] {
        let field = format!("spec.limits.{key}");
        // A shared pool's cpu limit in gpuplan's output is its backstop: the profile's own is the recorded one.
        let backstop = key == "cpu" && super::shared_limits::cpu_is_backstop(np);
        let value = if backstop { super::shared_limits::recorded(np, key) } else { limit(np, key).filter(|_| !used.covers(&field)) };
        if backstop {
            used.take(field.clone());
        }
        let Some(value) = value else { continue };
        if crate::simulate::yaml::milli(&value).is_some_and(|m| m >= least) {
            props.push(format!("{key}={}", if value.parse::<u32>().is_ok() { value.clone() } else { q(&value) }));
            used.take(field.clone());
            fields.push(if backstop { "metadata.annotations.gpuplan.dev/worst-case-basis (spec.limits.cpu is gpuplan's backstop)".to_string() } else { field });
        }
    }
    (!props.is_empty()).then(|| Line::new(format!("limits {}", props.join(" ")), from(&fields.join(", "))))
}

/// Time-slicing and MIG: the GPU Operator labels gpuplan sets for them.
fn sharing(labels: &serde_json::Map<String, Value>, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Vec<Line> {
    let mut lines = Vec::new();
    if let Some(config) = labels.get("nvidia.com/device-plugin.config").and_then(Value::as_str)
        && let Some(replicas) = config.strip_prefix("time-slicing-").and_then(|r| r.parse::<u32>().ok()) {
            let field = "spec.template.metadata.labels.nvidia.com/device-plugin.config";
            lines.push(Line::new(format!("time-slicing replicas={replicas}"), from(field)));
            used.take(field);
            // The cpu limit of a time-sliced pool is gpuplan's backstop, derived from the types.
            used.take("spec.limits.cpu");
        }
    if let Some(config) = labels.get("nvidia.com/mig.config").and_then(Value::as_str) {
        let field = "spec.template.metadata.labels.nvidia.com/mig.config";
        lines.push(Line::new(format!("mig {}", q(config)), from(field)));
        used.take(field);
        used.take("spec.limits.cpu"); // MIG pools are shared pools: the cpu backstop is derived too
    }
    lines
}

/// What Karpenter applies when a NodePool leaves a disruption field out, in the order of `disruption`'s fields: the
/// defaults of the NodePool CRD (karpenter.sh_nodepools.yaml, Karpenter v1.14.1: consolidationPolicy
/// WhenEmptyOrUnderutilized, consolidateAfter 0s, expireAfter 720h) and no terminationGracePeriod ("none").
pub const KARPENTER_DISRUPTION_DEFAULTS: [&str; 4] = ["WhenEmptyOrUnderutilized", "0s", "720h", "none"];

fn disruption(np: &Value, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Line {
    let d = &np["spec"]["disruption"];
    let t = &np["spec"]["template"]["spec"];
    let mut children = Vec::new();
    let fields = [
        ("consolidation", &d["consolidationPolicy"], "spec.disruption.consolidationPolicy"),
        ("consolidate-after", &d["consolidateAfter"], "spec.disruption.consolidateAfter"),
        ("expire-after", &t["expireAfter"], "spec.template.spec.expireAfter"),
        ("termination-grace-period", &t["terminationGracePeriod"], "spec.template.spec.terminationGracePeriod"),
    ];
    for ((name, value, field), default) in fields.into_iter().zip(KARPENTER_DISRUPTION_DEFAULTS) {
        match value.as_str() {
            Some(v) => {
                children.push(Line::new(format!("{name} {}", q(v)), from(field)));
                used.take(field);
            }
            // Absent: Karpenter's default, written out (a preset's default would change the pool's behaviour).
            None => children.push(Line::new(format!("{name} {}", q(default)), absent(from, field, "Karpenter's default"))),
        }
    }
    for (i, b) in d["budgets"].as_array().into_iter().flatten().enumerate() {
        let field = format!("spec.disruption.budgets[{i}]");
        let mut props = vec![format!("nodes={}", q(&b["nodes"].as_str().map(str::to_string).unwrap_or_else(|| b["nodes"].to_string())))];
        for key in ["schedule", "duration"] {
            if let Some(v) = b[key].as_str() {
                props.push(format!("{key}={}", q(v)));
            }
        }
        if let Some(reasons) = b["reasons"].as_array() {
            let list: Vec<&str> = reasons.iter().filter_map(Value::as_str).collect();
            props.push(format!("reasons={}", q(&list.join(","))));
        }
        children.push(Line::new(format!("budget {}", props.join(" ")), from(&field)));
        used.take(field);
    }
    if d["budgets"].as_array().is_none_or(Vec::is_empty) {
        children.push(Line::new("budget nodes=\"10%\"", absent(from, "spec.disruption.budgets", "Karpenter's default")));
    }
    let origin = if d.is_null() { absent(from, "spec.disruption", "Karpenter's defaults") } else { from("spec.disruption") };
    Line::block("disruption", origin, children)
}

/// The provenance of a line the original does not say: `absent from <file> <Kind>/<name> (no <field>): <what>`. A
/// comment naming the field as the line's origin would send the reader to a field that is not there.
fn absent(from: &dyn Fn(&str) -> String, field: &str, what: &str) -> String {
    format!("absent from {} (no {field}): {what}", from("").trim_end())
}

/// User taints; the accelerator's NoSchedule taint and gpuplan's pool taint are derived (gpuplan adds them). An
/// original without the accelerator's NoSchedule taint gets `accelerator-taint #false`, so that pods that do not
/// tolerate it keep scheduling (lint GP007 then says why the taint is worth adding).
fn taints(np: &Value, resource: &str, used: &mut Consumed, from: &dyn Fn(&str) -> String) -> Vec<Line> {
    let mut lines = Vec::new();
    let all = np["spec"]["template"]["spec"]["taints"].as_array().cloned().unwrap_or_default();
    // A CPU pool (`resource` is `cpu`) never has an accelerator taint to leave out.
    // gpuplan's accelerator taint has no value: an original's with a value (`nvidia.com/gpu=true:NoSchedule`) is kept
    // as written, since a pod tolerating it by value (`operator: Equal`) does not tolerate the key-only taint.
    let is_ours = |t: &Value| t["key"] == resource && t["effect"].as_str().unwrap_or("NoSchedule") == "NoSchedule" && t["value"].as_str().is_none_or(str::is_empty);
    if resource != "cpu" && !all.iter().any(is_ours) {
        let origin = if np["spec"]["template"]["spec"]["taints"].is_null() { absent(from, "spec.template.spec.taints", &format!("no {resource}:NoSchedule taint")) } else { from(&format!("spec.template.spec.taints: no {resource}:NoSchedule")) };
        lines.push(Line::new("accelerator-taint #false", origin));
    }
    for (i, t) in np["spec"]["template"]["spec"]["taints"].as_array().into_iter().flatten().enumerate() {
        let field = format!("spec.template.spec.taints[{i}]");
        let key = t["key"].as_str().unwrap_or("");
        let effect = t["effect"].as_str().unwrap_or("NoSchedule");
        let value = t["value"].as_str();
        let derived = is_ours(t) || key == "gpuplan.dev/pool";
        used.take(field.clone());
        if derived {
            continue;
        }
        let value = value.filter(|v| !v.is_empty()).map(|v| format!(" value={}", q(v))).unwrap_or_default();
        lines.push(Line::new(format!("taint {}{value} effect={}", q(key), q(effect)), from(&field)));
    }
    lines
}
