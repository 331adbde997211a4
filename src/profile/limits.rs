//! `limits cpu=… memory=…`: the NodePool's cpu and memory limits, beside the accelerator limit gpuplan sizes.
//!
//! Karpenter launches a node only if its instance type's capacity fits what is left of every limit
//! (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/provisioning/scheduling/scheduler.go`,
//! `filterByRemainingResources`; karpenter.sh docs, NodePools, "Limits"), so each limit caps the active nodes on
//! its own: the pool's worst case is the least of what each allows (`cost::worst_case`), and a limit can only lower
//! it. The accelerator limit is still sized without them (a cpu cap must not make the budget buy a limit of a
//! million GPUs).

use kdl::{KdlNode, KdlValue};

use super::parser::{describe, prop, Parser};
use super::Settings;
use crate::diagnostic::ErrorCode;
use crate::diagnostic::Spanned;

/// The limits as written (Kubernetes quantities), each at most once per level; a tier's replaces its pool's, key by key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceLimits {
    pub cpu: Option<String>,
    pub memory: Option<String>,
}

impl ResourceLimits {
    /// Whole vCPUs: instance types have whole vCPUs, so a fractional limit admits what its floor admits.
    pub fn cpu_vcpu(&self) -> Option<u32> {
        self.cpu.as_deref().and_then(crate::simulate::yaml::milli).map(|m| u32::try_from((m / 1000).max(0)).unwrap_or(u32::MAX))
    }

    /// Whole MiB (Karpenter's capacities are whole MiB).
    pub fn memory_mib(&self) -> Option<u64> {
        self.memory.as_deref().and_then(crate::simulate::yaml::milli).map(|m| u64::try_from((m / 1000 / (1024 * 1024)).max(0)).unwrap_or(u64::MAX))
    }
}

impl Parser<'_> {
    /// `limits cpu=<quantity> memory=<quantity>`: E0285 for a quantity that is not one (or below one vCPU / 1 MiB),
    /// E0286 for `limits` with neither.
    pub(super) fn apply_limits(&mut self, node: &KdlNode, s: &mut Settings) {
        self.check_entries(node, &["cpu", "memory"], 0);
        let span = self.span(node.span());
        let mut limits = s.resource_limits.as_ref().map(|l| l.value.clone()).unwrap_or_default();
        if prop(node, "cpu").is_none() && prop(node, "memory").is_none() {
            return self.error(span, ErrorCode::E0286, "`limits` needs cpu= or memory=", "write limits cpu=100 memory=\"200Gi\"");
        }
        if let Some(cpu) = prop(node, "cpu").and_then(|e| self.limit_quantity(e, "cpu", 1000)) {
            limits.cpu = Some(cpu);
        }
        if let Some(memory) = prop(node, "memory").and_then(|e| self.limit_quantity(e, "memory", 1024 * 1024 * 1000)) {
            limits.memory = Some(memory);
        }
        s.resource_limits = Some(Spanned::new(limits, span));
    }

    /// A quantity (a string, or an integer for whole units) of at least `least_milli`.
    fn limit_quantity(&mut self, entry: &kdl::KdlEntry, what: &str, least_milli: i128) -> Option<String> {
        let text = match entry.value() {
            KdlValue::String(s) => s.clone(),
            KdlValue::Integer(i) => i.to_string(),
            _ => String::new(),
        };
        match crate::simulate::yaml::milli(&text) {
            Some(v) if v >= least_milli => Some(text),
            _ => {
                let least = if what == "cpu" { "1 vCPU" } else { "1Mi" };
                let message = format!("limits {what} must be a Kubernetes quantity of at least {least}, found {}", describe(entry.value()));
                self.error(self.span(entry.span()), ErrorCode::E0285, message, "write cpu=100 (vCPUs) or cpu=\"1000\", memory=\"200Gi\"");
                None
            }
        }
    }
}
