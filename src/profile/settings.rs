//! The settings of one NodePool: [`Settings`], written at pool level and again inside a `tier` (the inner one
//! winning) over the preset's defaults, one node at a time by [`Parser::apply_setting`], and the checks of one
//! NodePool's settings taken together (E0130, E0131, E0262, E0263, E0266).
//!
//! `apply_setting` only dispatches: each setting's node is read by a typed parser (here for the one-line
//! settings; `accelerator`, `reserved`, `labels`, `disruption` and the other files for blocks), and the scalar
//! settings share [`Parser::bounded_u32`] and [`Parser::keyword`].

use std::collections::BTreeMap;

use kdl::KdlNode;

use super::parser::{args, prop, Parser};
use super::{raw, schema, Disruption, NodeRequirement, Overlay, Raw, Reserved, ResourceLimits, StaticPool, Taint};
use crate::diagnostic::ErrorCode;
use crate::catalog::cost::SpotCeiling;
use crate::catalog::{AcceleratorKind, Arch, CapacityType};
use crate::diagnostic::Spanned;

/// GPU sharing on the pool's nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Sharing {
    /// Device-plugin time-slicing: each GPU is advertised `replicas` times.
    TimeSlicing { replicas: u32 },
    /// A mig-parted configuration name (e.g. `all-1g.10gb`), applied via the `nvidia.com/mig.config` label.
    Mig { config: String },
}

/// How a pool's instance types are chosen among those its settings admit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// gpuplan's selection (the default): only the pool's accelerator kind, whole accelerators, a CPU pool's
    /// defaults, types within `price-ratio-max` of the cheapest, and spot pools spread over at least two families
    /// (`minValues: 2`).
    BestValue,
    /// Exactly the types the pool's requirements admit, as Karpenter reads them: no accelerator-kind, price or CPU
    /// default filter and no added `minValues`. What `adopt` writes, so that an adopted pool keeps its original's
    /// behaviour (`--optimize` leaves it out).
    AsRequired,
}

/// `admit`'s keywords.
pub const ADMIT: [(&str, Admit); 2] = [("best-value", Admit::BestValue), ("as-required", Admit::AsRequired)];

/// Everything that decides one NodePool.
#[derive(Debug, Clone)]
pub struct Settings {
    pub accelerator: Spanned<AcceleratorKind>,
    /// GPU or Neuron device names, case-insensitive ("A10G", "L4", "Inferentia2"). Empty = any.
    pub accelerator_names: Vec<Spanned<String>>,
    pub memory_min_mib: Option<Spanned<u64>>,
    pub per_node_min: Option<Spanned<u32>>,
    pub per_node_max: Option<Spanned<u32>>,
    pub arch: Vec<Spanned<Arch>>,
    pub generation_min: Option<Spanned<u32>>,
    pub families: Vec<Spanned<String>>,
    pub exclude_families: Vec<Spanned<String>>,
    /// Named types: the only way fractional-GPU types get in.
    pub types: Vec<Spanned<String>>,
    pub exclude_types: Vec<Spanned<String>>,
    pub efa: Option<Spanned<bool>>,
    /// `efa #true zone="…"`: the one zone the pool's nodes launch in (default: chosen by the solver). EFA traffic
    /// stays within a subnet, hence a zone, so a multi-node job must not spread.
    pub efa_zone: Option<Spanned<String>>,
    /// `placement-group "<name>"`: the EC2 cluster placement group the pool's nodes launch into (its class's
    /// `placementGroupSelector`), so a multi-node job's nodes sit close together; one zone only (E0383).
    pub placement_group: Option<Spanned<String>>,
    /// `spread #true|#false`: whether the pool's workloads are told to spread over zones and hosts (None: the
    /// preset's choice, on for the inference presets). Adopt writes it where a pool's original workloads say otherwise.
    pub spread: Option<Spanned<bool>>,
    pub capacity: Spanned<Vec<CapacityType>>,
    pub max_accelerators: Option<Spanned<u32>>,
    /// A CPU pool's limit in vCPUs (`max-cpu`): the same role as `max_accelerators` (see [`Settings::max_units`]).
    pub max_cpu: Option<Spanned<u32>>,
    /// Explicit NodePool weight (1–100); computed from priority and tier order when absent.
    pub weight: Option<Spanned<u32>>,
    pub price_ratio_max: Spanned<f64>,
    /// `admit "as-required"`: the types the requirements admit, no gpuplan narrowing ([`Admit`]).
    pub admit: Spanned<Admit>,
    /// `node-class "<name>"`: the name of the pool's EC2NodeClass (or NodeClass) instead of the one gpuplan derives
    /// from the profile (`<profile>`, `-nvme`, `-ts<N>`): an adopted pool keeps its original class's name, so that its
    /// NodePool's `nodeClassRef` does not change (a changed reference drifts every node).
    pub node_class: Option<Spanned<String>>,
    /// `family-min-values N` / `type-min-values N`: `minValues` on the NodePool's instance-family / instance-type
    /// requirement (Karpenter launches only when that many families / types can satisfy the pods), as an original says.
    pub family_min_values: Option<Spanned<u32>>,
    pub type_min_values: Option<Spanned<u32>>,
    /// What bounds a spot node's price in the worst case (see `cost`): on-demand (guaranteed) by default.
    pub spot_ceiling: Spanned<SpotCeiling>,
    /// `scratch "instance-store"`: local NVMe striped into one RAID0 volume for the kubelet and containers
    /// (EC2NodeClass `instanceStorePolicy: RAID0`); the training preset's default.
    pub instance_store_scratch: Spanned<bool>,
    pub sharing: Option<Spanned<Sharing>>,
    pub reserved: Option<Spanned<Reserved>>,
    pub disruption: Disruption,
    pub labels: BTreeMap<String, Spanned<String>>,
    pub taints: Vec<Spanned<Taint>>,
    /// `require`: NodePool requirements beyond the dedicated settings, one per key.
    pub requires: Vec<Spanned<NodeRequirement>>,
    /// `limits cpu=… memory=…`: the NodePool's cpu and memory limits.
    pub resource_limits: Option<Spanned<ResourceLimits>>,
    /// `static replicas=…`: the NodePool keeps this many nodes whatever the pods (see `static_pool`).
    pub static_pool: Option<Spanned<StaticPool>>,
    /// `accelerator-taint #false`: no `<resource>:NoSchedule` taint (lint GP007 says why it is worth keeping).
    pub accelerator_taint: Spanned<bool>,
    pub allow: Vec<Spanned<String>>,
    /// `kubelet { … }`: the pool's class's `spec.kubelet`, CRD field names (see `raw`).
    pub kubelet: Option<Spanned<serde_json::Map<String, serde_json::Value>>>,
    /// `raw "<Kind>" "<YAML>"`: fragments merged into the pool's NodePool or class, the pool's then the tier's.
    pub raws: Vec<Spanned<Raw>>,
    /// `overlay` blocks: NodeOverlays scoped to the NodePools that carry them (a pool's are inherited by its tiers).
    pub overlays: Vec<Spanned<Overlay>>,
}

impl Settings {
    /// The pool's limit in its own unit: vCPUs for a CPU pool (`max-cpu`), physical accelerators otherwise.
    pub fn max_units(&self) -> Option<&Spanned<u32>> {
        if self.accelerator.value == AcceleratorKind::Cpu { self.max_cpu.as_ref() } else { self.max_accelerators.as_ref() }
    }
}

/// `capacity` and a tier's `capacity=`.
const CAPACITY_TYPES: [(&str, CapacityType); 3] = [("spot", CapacityType::Spot), ("on-demand", CapacityType::OnDemand), ("reserved", CapacityType::Reserved)];
/// `scratch`: whether the instance store is the scratch volume.
const SCRATCH: [(&str, bool); 2] = [("instance-store", true), ("ebs", false)];
/// Settings whose node takes a `{ … }` block; every other setting is one line.
const BLOCK_SETTINGS: [&str; 7] = ["gpu", "neuron", "cpu", "disruption", "reserved", "kubelet", "overlay"];

impl Parser<'_> {
    /// Applies one setting node (valid in `pool` and `tier`) over the inherited settings.
    pub(super) fn apply_setting(&mut self, node: &KdlNode, s: &mut Settings, context: &str) {
        let name = node.name().value();
        if !BLOCK_SETTINGS.contains(&name) {
            self.no_children(node);
        }
        match name {
            "gpu" | "neuron" => self.parse_accelerator(node).apply(s),
            "cpu" => self.parse_cpu(node).apply(s),
            "max-cpu" => s.max_cpu = self.bounded_u32(node, "max-cpu", 1..=10_000_000),
            "arch" => s.arch = self.parse_arch(node),
            "generation-min" => s.generation_min = self.bounded_u32(node, "generation-min", 1..=99),
            "families" => s.families = self.strings(node),
            "exclude-families" => s.exclude_families = self.strings(node),
            "types" => s.types = self.strings(node),
            "exclude-types" => s.exclude_types = self.strings(node),
            "efa" => (s.efa, s.efa_zone) = self.parse_efa(node),
            "placement-group" => s.placement_group = self.parse_placement_group(node),
            "spread" => s.spread = self.single_bool(node, "spread"),
            "capacity" => set(&mut s.capacity, self.parse_capacity(node)),
            "max-accelerators" => s.max_accelerators = self.bounded_u32(node, "max-accelerators", 1..=100_000),
            "weight" => s.weight = self.bounded_u32(node, "weight", 1..=100),
            "price-ratio-max" => set(&mut s.price_ratio_max, self.parse_price_ratio_max(node)),
            "admit" => set(&mut s.admit, self.single_string(node).and_then(|v| self.keyword(&v, "admit", &ADMIT, "one of best-value (gpuplan's selection), as-required (exactly what the requirements admit)"))),
            "node-class" => s.node_class = self.single_string(node).filter(|v| self.is_class_name(v)),
            "family-min-values" => s.family_min_values = self.bounded_u32(node, "family-min-values", 1..=50),
            "type-min-values" => s.type_min_values = self.bounded_u32(node, "type-min-values", 1..=50),
            "spot-ceiling" => set(&mut s.spot_ceiling, self.parse_spot_ceiling(node)),
            "scratch" => set(&mut s.instance_store_scratch, self.parse_scratch(node)),
            "time-slicing" => set(&mut s.sharing, self.parse_time_slicing(node).map(Some)),
            "mig" => set(&mut s.sharing, self.parse_mig(node).map(Some)),
            "reserved" => s.reserved = Some(self.parse_reserved(node)),
            "disruption" => self.parse_disruption(node, &mut s.disruption),
            "label" => s.labels.extend(self.parse_label(node)),
            "taint" => s.taints.extend(self.parse_taint(node)),
            "allow" => s.allow.extend(self.strings(node)),
            "require" => self.apply_require(node, s),
            "limits" => self.apply_limits(node, s),
            "kubelet" => self.apply_kubelet(node, s),
            "raw" => s.raws.extend(self.parse_raw(node, &raw::RAW_KINDS)),
            "overlay" => self.apply_overlay(node, s),
            "static" => self.apply_static(node, s),
            "accelerator-taint" => set(&mut s.accelerator_taint, self.single_bool(node, "accelerator-taint")),
            _ => self.unknown_node(node, &schema::names("pool"), context),
        }
    }

    /// `arch "amd64" "arm64"` (x86_64 and aarch64 are the same two).
    fn parse_arch(&mut self, node: &KdlNode) -> Vec<Spanned<Arch>> {
        self.strings(node)
            .into_iter()
            .filter_map(|a| match a.as_str() {
                "amd64" | "x86_64" => Some(Spanned::new(Arch::Amd64, a.span)),
                "arm64" | "aarch64" => Some(Spanned::new(Arch::Arm64, a.span)),
                other => {
                    self.error(a.span, ErrorCode::E0118, format!("unknown architecture `{other}`"), crate::diagnostic::did_you_mean_among(other, &["amd64", "arm64"], "architectures"));
                    None
                }
            })
            .collect()
    }

    /// `efa #true [zone="…"]`: EFA, and the zone its nodes launch in.
    fn parse_efa(&mut self, node: &KdlNode) -> (Option<Spanned<bool>>, Option<Spanned<String>>) {
        self.check_entries(node, &["zone"], 1);
        let efa = args(node).next().and_then(|e| self.expect_bool(e, "efa"));
        (efa, prop(node, "zone").and_then(|e| self.expect_string(e, "zone")))
    }

    /// `capacity "spot" "on-demand"`: the known types, sorted and once each; None when none is known.
    fn parse_capacity(&mut self, node: &KdlNode) -> Option<Spanned<Vec<CapacityType>>> {
        let types: Vec<Spanned<CapacityType>> = self.strings(node).iter().filter_map(|c| self.capacity_type(c)).collect();
        if types.is_empty() {
            return None;
        }
        let mut values: Vec<CapacityType> = types.iter().map(|t| t.value).collect();
        values.sort();
        values.dedup();
        Some(Spanned::new(values, self.span(node.span())))
    }

    /// One capacity type (`capacity` and a tier's `capacity=`).
    pub(super) fn capacity_type(&mut self, s: &Spanned<String>) -> Option<Spanned<CapacityType>> {
        self.keyword(s, "capacity type", &CAPACITY_TYPES, "one of spot, on-demand, reserved")
    }

    /// `node-class "<name>"`: the class's `metadata.name`, a DNS subdomain (E0113 otherwise).
    fn is_class_name(&mut self, v: &Spanned<String>) -> bool {
        let valid = crate::names::check_dns_subdomain(v).is_ok();
        self.check_value(v, crate::names::check_dns_subdomain, ErrorCode::E0113, "node class name", "write the EC2NodeClass's metadata.name, e.g. node-class \"gpu\"");
        valid
    }

    /// `price-ratio-max 1.6`: at least 1.0 (E0106 below); `price-ratio-max "none"` admits every price.
    fn parse_price_ratio_max(&mut self, node: &KdlNode) -> Option<Spanned<f64>> {
        self.check_entries(node, &[], 1);
        if let Some(none) = args(node).next().filter(|e| e.value().as_string() == Some("none")) {
            return Some(Spanned::new(f64::INFINITY, self.span(none.span())));
        }
        let r = args(node).next().and_then(|e| self.expect_number(e, "price-ratio-max"))?;
        if r.value < 1.0 {
            self.error(r.span, ErrorCode::E0106, "price-ratio-max must be at least 1.0 (1.0 admits only the cheapest $/accelerator-hour)", "");
            return None;
        }
        Some(r)
    }

    /// `spot-ceiling "on-demand"` or `"observed-max"` (see `catalog::cost::SpotCeiling`).
    fn parse_spot_ceiling(&mut self, node: &KdlNode) -> Option<Spanned<SpotCeiling>> {
        let v = self.single_string(node)?;
        match SpotCeiling::parse(&v) {
            Some(c) => Some(Spanned::new(c, v.span)),
            None => {
                self.unknown_keyword(&v, "spot ceiling", SpotCeiling::NAMES, "one of on-demand (guaranteed bound), observed-max (empirical bound)");
                None
            }
        }
    }

    /// `scratch "instance-store"` (local NVMe in RAID0) or `"ebs"`.
    fn parse_scratch(&mut self, node: &KdlNode) -> Option<Spanned<bool>> {
        let v = self.single_string(node)?;
        self.keyword(&v, "scratch", &SCRATCH, "one of instance-store (local NVMe in RAID0), ebs (the root/data volume)")
    }

    /// `mig "all-1g.10gb"`: a mig-parted configuration, spanned at its name.
    fn parse_mig(&mut self, node: &KdlNode) -> Option<Spanned<Sharing>> {
        let config = self.single_string(node)?;
        Some(Spanned::new(Sharing::Mig { config: config.value }, config.span))
    }

    /// `time-slicing replicas=4`: 2–64 replicas (E0119), as the device plugin accepts.
    fn parse_time_slicing(&mut self, node: &KdlNode) -> Option<Spanned<Sharing>> {
        let node_span = self.span(node.span());
        self.check_entries(node, &["replicas"], 0);
        let Some(e) = prop(node, "replicas") else {
            self.error(node_span, ErrorCode::E0107, "`time-slicing` needs replicas", "write time-slicing replicas=4");
            return None;
        };
        let r = self.expect_integer(e, "time-slicing replicas", i128::MIN, i128::MAX)?;
        if r.value < 2 || r.value > 64 {
            self.error(
                r.span,
                ErrorCode::E0119,
                format!("time-slicing replicas must be between 2 and 64, found {}", r.value),
                "the device plugin rejects replicas < 2; for no sharing remove `time-slicing`",
            );
            return None;
        }
        Some(Spanned::new(Sharing::TimeSlicing { replicas: r.value as u32 }, node_span))
    }

    /// A setting of one boolean (`accelerator-taint #false`, `spread #false`): E0107 when the value is missing.
    fn single_bool(&mut self, node: &KdlNode, what: &str) -> Option<Spanned<bool>> {
        self.check_entries(node, &[], 1);
        let value = args(node).next().and_then(|e| self.expect_bool(e, what));
        if value.is_none() && args(node).next().is_none() {
            self.error(self.span(node.span()), ErrorCode::E0107, format!("`{what}` needs #true or #false"), format!("write {what} #false"));
        }
        value
    }

    /// Contradictions within one NodePool's settings.
    pub(super) fn check_settings(&mut self, s: &Settings) {
        if let (Some(min), Some(max)) = (&s.per_node_min, &s.per_node_max)
            && min.value > max.value {
                self.error(
                    min.span,
                    ErrorCode::E0130,
                    format!("per-node min={} is greater than max={}", min.value, max.value),
                    "no instance type can satisfy both; lower min or raise max",
                );
            }
        for (included, excluded, what) in [(&s.families, &s.exclude_families, "family"), (&s.types, &s.exclude_types, "type")] {
            for inc in included {
                if let Some(exc) = excluded.iter().find(|e| e.value == inc.value) {
                    let at = self.sources.location(exc.span);
                    self.error(
                        inc.span,
                        ErrorCode::E0130,
                        format!("{what} `{}` is both included and excluded (excluded at {at})", inc.value),
                        "remove it from one of the two lists",
                    );
                }
            }
        }
        if matches!(s.sharing.as_ref().map(|x| &x.value), Some(Sharing::Mig { .. }) | Some(Sharing::TimeSlicing { .. }))
            && s.accelerator.value != AcceleratorKind::Nvidia
        {
            let span = s.sharing.as_ref().map(|x| x.span).unwrap_or(s.accelerator.span);
            self.error(span, ErrorCode::E0130, "GPU sharing (time-slicing, MIG) is an NVIDIA device-plugin feature", "remove it, or select NVIDIA GPUs");
        }
        self.check_limit_unit(s);
        if s.capacity.contains(&CapacityType::Reserved) && s.reserved.is_none() {
            self.error(
                s.capacity.span,
                ErrorCode::E0131,
                "capacity \"reserved\" needs a `reserved` block naming the capacity reservations",
                "add reserved { id \"cr-0123456789abcdef0\" } or reserved { tag \"purpose\" \"training\" }",
            );
        }
        if let Some(r) = &s.reserved
            && r.ids.is_empty() && r.tags.is_empty() {
                self.error(r.span, ErrorCode::E0131, "`reserved` selects no capacity reservation", "add id \"cr-…\" or tag \"key\" \"value\"");
            }
    }

    /// A CPU pool's limit counts vCPUs (`max-cpu`), an accelerated pool's counts devices (`max-accelerators`):
    /// each keyword where the other unit is meant is an error, not a silent reinterpretation.
    fn check_limit_unit(&mut self, s: &Settings) {
        let cpu = s.accelerator.value == AcceleratorKind::Cpu;
        if let (true, Some(m)) = (cpu, &s.max_accelerators) {
            self.error(m.span, ErrorCode::E0262, "a `cpu` pool has no accelerators to limit", format!("write max-cpu {} for a limit of {} vCPUs", m.value, m.value));
        }
        // A CPU pool's cpu limit is its `max-cpu` (the NodePool's `limits.cpu`): a second one would be a second `cpu`
        // key in that map.
        if let (true, Some(l)) = (cpu, s.resource_limits.as_ref().filter(|l| l.value.cpu.is_some())) {
            let cpu_limit = l.value.cpu.clone().unwrap_or_default();
            self.error(l.span, ErrorCode::E0266, "a `cpu` pool's cpu limit is its `max-cpu`, not `limits cpu=`", format!("write max-cpu {cpu_limit} (keep `limits memory=` if you need it)"));
        }
        if let (false, Some(m)) = (cpu, &s.max_cpu) {
            self.error(m.span, ErrorCode::E0263, "`max-cpu` limits a CPU pool (one with a `cpu { … }` block)", format!("an accelerated pool's limit is max-accelerators; or add `cpu {{ }}` to make this a CPU pool of {} vCPUs", m.value));
        }
    }
}

/// Replaces an inherited setting with the value read, when one was read.
fn set<T>(setting: &mut T, read: Option<T>) {
    if let Some(value) = read {
        *setting = value;
    }
}
