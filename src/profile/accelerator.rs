//! What a NodePool runs on: a `gpu` or `neuron` block (accelerator names, memory, devices per node) or a `cpu`
//! block (a CPU pool, whose unit is the vCPU), one kind per pool (E0261) and per pool's tiers (E0264).
//!
//! ```kdl
//! gpu { manufacturer "nvidia"; name "A10G" "L4"; memory-min "22GiB"; per-node min=1 max=4 }
//! neuron { name "Inferentia2" }
//! cpu { per-node min=4 max=64; memory-min "4GiB" }     // memory per vCPU
//! ```

use kdl::KdlNode;

use super::parser::{prop, Parser};
use super::{schema, Settings, Tier};
use crate::diagnostic::ErrorCode;
use crate::catalog::AcceleratorKind;
use crate::catalog::query::{binary_size_mib, SizeError};
use crate::diagnostic::Spanned;

/// What one `gpu`, `neuron` or `cpu` block writes, laid over the inherited settings by [`Accelerator::apply`].
/// An optional field is `Some` when its line is written; the value inside is None when the line was refused,
/// which clears the inherited value as it always has.
pub(super) struct Accelerator {
    kind: Spanned<AcceleratorKind>,
    names: Vec<Spanned<String>>,
    memory_min_mib: Option<Option<Spanned<u64>>>,
    per_node_min: Option<Option<Spanned<u32>>>,
    per_node_max: Option<Option<Spanned<u32>>>,
}

impl Accelerator {
    pub(super) fn apply(self, s: &mut Settings) {
        s.accelerator = self.kind;
        s.accelerator_names = self.names;
        if let Some(m) = self.memory_min_mib {
            s.memory_min_mib = m;
        }
        if let Some(m) = self.per_node_min {
            s.per_node_min = m;
        }
        if let Some(m) = self.per_node_max {
            s.per_node_max = m;
        }
    }
}

impl Parser<'_> {
    /// `gpu { … }` or `neuron { … }`: the accelerator's kind (a `gpu`'s manufacturer), names, memory-min and
    /// per-node device bounds (1–64).
    pub(super) fn parse_accelerator(&mut self, node: &KdlNode) -> Accelerator {
        let name = node.name().value();
        self.check_entries(node, &[], 0);
        let kind = if name == "gpu" { AcceleratorKind::Nvidia } else { AcceleratorKind::Neuron };
        let mut a = Accelerator { kind: Spanned::new(kind, self.span(node.span())), names: Vec::new(), memory_min_mib: None, per_node_min: None, per_node_max: None };
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "name" => a.names = self.strings(child),
                "manufacturer" if name == "gpu" => {
                    if let Some(k) = self.manufacturer(child) {
                        a.kind.value = k;
                    }
                }
                "memory-min" => {
                    if let Some(m) = self.single_string(child) {
                        a.memory_min_mib = Some(self.memory_mib(&m));
                    }
                }
                "per-node" => {
                    self.check_entries(child, &["min", "max"], 0);
                    if let Some(e) = prop(child, "min") {
                        a.per_node_min = Some(self.expect_integer(e, "per-node min", 1, 64).map(|v| Spanned::new(v.value as u32, v.span)));
                    }
                    if let Some(e) = prop(child, "max") {
                        a.per_node_max = Some(self.expect_integer(e, "per-node max", 1, 64).map(|v| Spanned::new(v.value as u32, v.span)));
                    }
                }
                _ => {
                    let valid: Vec<&str> = schema::names("gpu")
                        .iter()
                        .copied()
                        .filter(|c| name == "gpu" || *c != "manufacturer")
                        .collect();
                    self.unknown_node(child, &valid, &format!("`{name}`"));
                }
            }
        }
        a
    }

    /// `manufacturer "nvidia"` or `"amd"` (any case) in a `gpu` block.
    fn manufacturer(&mut self, child: &KdlNode) -> Option<AcceleratorKind> {
        let m = self.single_string(child)?;
        match m.to_ascii_lowercase().as_str() {
            "nvidia" => Some(AcceleratorKind::Nvidia),
            "amd" => Some(AcceleratorKind::Amd),
            other => {
                self.error(
                    m.span,
                    ErrorCode::E0118,
                    format!("unknown GPU manufacturer `{other}`"),
                    "one of nvidia, amd (for AWS Inferentia/Trainium write a `neuron` block)",
                );
                None
            }
        }
    }

    /// `cpu { per-node min= max=; memory-min "4GiB" }`: a CPU pool, whose unit is the vCPU. Per-node bounds count
    /// vCPUs; memory-min is per vCPU (what tells c, m and r types apart).
    pub(super) fn parse_cpu(&mut self, node: &KdlNode) -> Accelerator {
        self.check_entries(node, &[], 0);
        let kind = Spanned::new(AcceleratorKind::Cpu, self.span(node.span()));
        let mut a = Accelerator { kind, names: Vec::new(), memory_min_mib: Some(None), per_node_min: None, per_node_max: None };
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "per-node" => {
                    self.check_entries(child, &["min", "max"], 0);
                    let bound = |this: &mut Self, key: &str| {
                        prop(child, key).and_then(|e| this.expect_integer(e, &format!("per-node {key} (vCPUs)"), 1, 4096)).map(|v| Spanned::new(v.value as u32, v.span))
                    };
                    a.per_node_min = Some(bound(self, "min"));
                    a.per_node_max = Some(bound(self, "max"));
                }
                "memory-min" => {
                    if let Some(m) = self.single_string(child) {
                        a.memory_min_mib = Some(self.memory_mib(&m));
                    }
                }
                "name" | "manufacturer" => self.error(
                    self.span(child.name().span()),
                    ErrorCode::E0260,
                    format!("`{}` selects an accelerator, and a `cpu` pool has none", child.name().value()),
                    "remove it, or write a `gpu { … }` / `neuron { … }` block instead of `cpu { … }`",
                ),
                _ => self.unknown_node(child, &schema::names("cpu"), "`cpu`"),
            }
        }
        a
    }

    /// "24GiB", "22888MiB" → MiB ([`binary_size_mib`]). Decimal units are rejected: EC2 reports MiB and "GB" is
    /// ambiguous.
    fn memory_mib(&mut self, m: &Spanned<String>) -> Option<Spanned<u64>> {
        match binary_size_mib(m) {
            Ok(mib) => Some(Spanned::new(mib, m.span)),
            Err(SizeError::UnknownUnit(unit)) => {
                self.error(
                    m.span,
                    ErrorCode::E0122,
                    format!("unknown memory unit `{unit}` in `{}`", m.value),
                    "use binary units GiB or MiB (EC2 reports GPU memory in MiB; \"24GB\" → \"24GiB\")",
                );
                None
            }
            Err(SizeError::NotASize) => {
                self.error(m.span, ErrorCode::E0122, format!("`{}` is not a memory size", m.value), "write a whole number with a unit, e.g. \"24GiB\"");
                None
            }
        }
    }

    /// A pool (or tier) says what it runs on once: `gpu`, `neuron` or `cpu`, not two of them (the last would win
    /// silently).
    pub(super) fn one_kind(&mut self, nodes: &[KdlNode], context: &str) {
        let kinds: Vec<&KdlNode> = nodes.iter().filter(|n| matches!(n.name().value(), "gpu" | "neuron" | "cpu")).collect();
        if let [first, second, ..] = kinds.as_slice() {
            let at = self.sources.location(self.span(first.name().span()));
            self.error(
                self.span(second.name().span()),
                ErrorCode::E0261,
                format!("{context} says both `{}` (at {at}) and `{}`: a NodePool runs on one kind of node", first.name().value(), second.name().value()),
                "keep one; for CPU and GPU capacity side by side write two pools",
            );
        }
    }

    /// Every NodePool of a pool runs on the same kind of node: pods select the pool, so a CPU tier in a GPU pool
    /// would take the pool's GPU pods' fallback (and the reverse), and queues and workloads of a pool count one
    /// resource.
    pub(super) fn one_kind_of_tiers(&mut self, tiers: &[Tier]) {
        let Some(first) = tiers.first() else { return };
        let cpu = |t: &Tier| t.settings.accelerator.value == AcceleratorKind::Cpu;
        if let Some(other) = tiers.iter().find(|t| cpu(t) != cpu(first)) {
            let (a, b) = if cpu(first) { ("CPU", "accelerated") } else { ("accelerated", "CPU") };
            self.error(other.settings.accelerator.span, ErrorCode::E0264, format!("tier `{}` is {b} while tier `{}` is {a}: a pool's tiers run on one kind of node", other.name.value, first.name.value), "write the CPU capacity as a pool of its own");
        }
    }
}

