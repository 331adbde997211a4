//! `overlay "<name>" { price "<$>" | price-adjustment "<±N% | ±$>"; capacity "<resource>" "<quantity>"; weight N;
//! require … }`: a Karpenter NodeOverlay (karpenter.sh/v1alpha1, feature gate `NodeOverlay`) as profile input.
//!
//! **Where.** In a `pool` (every NodePool of the pool) or a `tier` (that NodePool only). Karpenter applies an overlay
//! to the instance types of *every* NodePool whose name, template labels and types are compatible with the overlay's
//! requirements (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeoverlay/controller.go`,
//! `getOverlaidOfferings`), so an overlay written without a `karpenter.sh/nodepool` requirement leaks onto other
//! pools. gpuplan therefore writes `karpenter.sh/nodepool In [<the NodePools that carry the block>]` itself, and a
//! block scoped to its pool reads better than a profile-level one that would have to name pools; a `require` on
//! `karpenter.sh/nodepool` is refused (E0294).
//!
//! **Rules**, as Karpenter has them (the NodeOverlay CRD's `x-kubernetes-validations`, and v1.14.1
//! `pkg/apis/v1alpha1/nodeoverlay_validation.go` `RuntimeValidate`): price and priceAdjustment are exclusive; price
//! matches `^\d+(\.\d+)?$`, priceAdjustment `±n`, `+n%` or `-n%` down to -100%; capacity names extended resources
//! only (never cpu, memory, ephemeral-storage or pods: `v1.WellKnownResources`); requirement keys in the
//! `karpenter.sh` domain are capacity-type and nodepool only, in `karpenter.k8s.aws` the CRD's list, never
//! `kubernetes.io/hostname`; weight 1–10000. An overlay that sets neither price nor capacity does nothing (E0290).
//!
//! What the solver does with it: `solve` ranks a pool's types by the overlaid price (what Karpenter ranks by), keeps
//! the worst case at list prices, and counts a capacity overlay on the pool's accelerator resource as that type's
//! schedulable units (as time-slicing does).

use kdl::{KdlNode, KdlValue};

use super::labels::LABEL_VALUE_HELP;
use super::parser::{args, describe, Parser};
use super::requirements::NodeRequirement;
use super::{schema, Pool, Settings};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{did_you_mean, Span, Spanned};

/// The price change an overlay declares.
#[derive(Debug, Clone, PartialEq)]
pub enum OverlayPrice {
    /// `price "0.52"`: the offering's price becomes this ($/h).
    Price(String),
    /// `price-adjustment "-30%"` or `"+0.10"`: applied to the offering's price (never below 0).
    Adjustment(String),
}

impl OverlayPrice {
    /// The offering's price as Karpenter sees it under this overlay (v1.14.1 `pkg/cloudprovider/types.go`
    /// `AdjustedPrice`: a percentage scales, a signed number adds, a result below 0 is 0).
    pub fn apply(&self, list: f64) -> f64 {
        let adjusted = match self {
            OverlayPrice::Price(p) => return p.parse().unwrap_or(list),
            OverlayPrice::Adjustment(a) => match a.strip_suffix('%') {
                Some(pct) => list * (1.0 + pct.parse::<f64>().unwrap_or(0.0) / 100.0),
                None => list + a.parse::<f64>().unwrap_or(0.0),
            },
        };
        adjusted.max(0.0)
    }

    /// How it is written in the profile and shown in explain: `price 0.52`, `price-adjustment -30%`.
    pub fn describe(&self) -> String {
        match self {
            OverlayPrice::Price(p) => format!("price ${p}/h"),
            OverlayPrice::Adjustment(a) => format!("price-adjustment {a}"),
        }
    }
}

/// One `overlay` block: one NodeOverlay named `name`, scoped to the NodePools that carry it.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    pub name: Spanned<String>,
    /// 1–10000; absent means 0 to Karpenter (the CRD's default).
    pub weight: Option<u32>,
    pub price: Option<OverlayPrice>,
    /// Extended resources and their quantity per node, in the order written.
    pub capacity: Vec<(String, String)>,
    /// Requirements selecting instance types (and offerings, by capacity type or zone), besides the NodePool scope.
    pub requires: Vec<NodeRequirement>,
}

impl Overlay {
    /// Everything but where it was written.
    pub fn same_settings(&self, other: &Overlay) -> bool {
        self.name.value == other.name.value && self.weight == other.weight && self.price == other.price && self.capacity == other.capacity && self.requires == other.requires
    }
}

/// Requirement keys a NodeOverlay may use in the `karpenter.k8s.aws` domain (the NodeOverlay CRD's rule "label
/// domain \"karpenter.k8s.aws\" is restricted", aws/karpenter-provider-aws v1.14.1).
const AWS_KEYS: [&str; 22] = [
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
];

/// The accelerator resources gpuplan sizes pools by: a capacity overlay on one must give at least one whole unit.
const ACCELERATOR_RESOURCES: [&str; 3] = ["nvidia.com/gpu", "aws.amazon.com/neuron", "amd.com/gpu"];

/// Resources a capacity overlay may not name (v1.14.1 `pkg/apis/v1/labels.go` `WellKnownResources`; the CRD's rule
/// "invalid resource restricted").
pub const RESTRICTED_RESOURCES: [&str; 4] = ["cpu", "memory", "ephemeral-storage", "pods"];

/// Why Karpenter refuses `key` in a NodeOverlay requirement, or None. `karpenter.sh/nodepool` is Karpenter's to
/// accept, but gpuplan writes it (the caller refuses it separately).
pub fn restricted_key(key: &str) -> Option<String> {
    let domain = key.split_once('/').map_or("", |(d, _)| d);
    if key == "kubernetes.io/hostname" {
        return Some("Karpenter refuses `kubernetes.io/hostname` in a NodeOverlay (each node has its own)".into());
    }
    if domain.ends_with("karpenter.sh") && !["karpenter.sh/capacity-type", "karpenter.sh/nodepool"].contains(&key) {
        return Some(format!("the karpenter.sh domain allows only karpenter.sh/capacity-type and karpenter.sh/nodepool in a NodeOverlay, not `{}`", crate::input::excerpt(key)));
    }
    if domain.ends_with("karpenter.k8s.aws") && !AWS_KEYS.contains(&key) {
        return Some(format!("`{}` is not one of the karpenter.k8s.aws labels a NodeOverlay may select on", crate::input::excerpt(key)));
    }
    crate::names::check_label_key(key).err()
}

/// The NodeOverlay CRD's `price` pattern `^\d+(\.\d+)?$`.
pub fn valid_price(p: &str) -> bool {
    let (int, frac) = p.split_once('.').map_or((p, None), |(i, f)| (i, Some(f)));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(int) && frac.is_none_or(digits)
}

/// The NodeOverlay CRD's `priceAdjustment` pattern: `[+-]\d*\.?\d+`, `+\d*\.?\d+%`, `-\d{1,2}(\.\d+)?%` or `-100%`.
pub fn valid_price_adjustment(a: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // `\d*\.?\d+`
    let number = |n: &str| match n.split_once('.') {
        Some((int, frac)) => (int.is_empty() || digits(int)) && digits(frac),
        None => digits(n),
    };
    if let Some(pct) = a.strip_prefix('-').and_then(|r| r.strip_suffix('%')) {
        let (int, frac) = pct.split_once('.').map_or((pct, None), |(i, f)| (i, Some(f)));
        return pct == "100" || (digits(int) && int.len() <= 2 && frac.is_none_or(digits));
    }
    match (a.strip_prefix('+'), a.strip_prefix('-')) {
        (Some(rest), _) => number(rest.strip_suffix('%').unwrap_or(rest)),
        (_, Some(rest)) => number(rest),
        _ => false,
    }
}

const PRICE_HELP: &str = "write price \"0.52\" ($/h, digits and one dot) or price-adjustment \"-30%\" (or \"+10%\", \"-0.25\", \"+0.10\")";

impl Parser<'_> {
    /// `overlay "<name>" { … }` in a pool or tier: replaces an inherited overlay of the same name.
    pub(super) fn apply_overlay(&mut self, node: &KdlNode, s: &mut Settings) {
        self.check_entries(node, &[], 1);
        let node_span = self.span(node.span());
        let Some(name) = args(node).next().and_then(|e| self.expect_string(e, "the overlay name")) else {
            return self.error(node_span, ErrorCode::E0107, "`overlay` needs a name", "write overlay \"discount\" { price-adjustment \"-30%\" }");
        };
        self.check_name(&name, "overlay");
        let mut overlay = Overlay { name, weight: None, price: None, capacity: Vec::new(), requires: Vec::new() };
        let mut price_at: Option<Span> = None;
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "price" | "price-adjustment" => self.overlay_price(child, &mut overlay, &mut price_at),
                "capacity" => self.overlay_capacity(child, &mut overlay),
                "weight" => {
                    self.check_entries(child, &[], 1);
                    overlay.weight = args(child).next().and_then(|e| self.expect_integer(e, "overlay weight", 1, 10_000)).map(|v| v.value as u32);
                }
                "require" => self.overlay_require(child, &mut overlay),
                _ => self.unknown_node(child, &schema::names("overlay"), "`overlay`"),
            }
        }
        if overlay.price.is_none() && overlay.capacity.is_empty() && price_at.is_none() {
            let message = format!("overlay `{}` sets neither a price nor a capacity, so it changes nothing", overlay.name.value);
            return self.error(overlay.name.span, ErrorCode::E0290, message, "add price \"…\", price-adjustment \"-N%\" or capacity \"<resource>\" \"<quantity>\", or remove the block");
        }
        s.overlays.retain(|o| o.name.value != overlay.name.value);
        s.overlays.push(Spanned::new(overlay, node_span));
    }

    /// `price` / `price-adjustment`: E0291 for both (or either twice), E0292 for a value off the CRD's pattern.
    fn overlay_price(&mut self, child: &KdlNode, overlay: &mut Overlay, price_at: &mut Option<Span>) {
        let span = self.span(child.span());
        let Some(value) = self.single_string(child) else { return };
        if let Some(first) = price_at.replace(span) {
            let at = self.sources.location(first);
            let message = format!("overlay `{}` sets its price twice (first at {at}): Karpenter takes price or priceAdjustment, not both", overlay.name.value);
            return self.error_labelled(span, ErrorCode::E0291, message, "a second price", "keep one line: price \"<$>\" replaces the price, price-adjustment \"<±N%|±$>\" changes it");
        }
        let adjustment = child.name().value() == "price-adjustment";
        if !(if adjustment { valid_price_adjustment(&value) } else { valid_price(&value) }) {
            let what = if adjustment { "a signed number or percentage from -100% (the NodeOverlay CRD's pattern)" } else { "a non-negative number of dollars per hour" };
            let message = format!("`{}` is not {what}", crate::input::excerpt(&value));
            return self.error(value.span, ErrorCode::E0292, message, PRICE_HELP);
        }
        overlay.price = Some(if adjustment { OverlayPrice::Adjustment(value.value) } else { OverlayPrice::Price(value.value) });
    }

    /// `capacity "<resource>" "<quantity>"`: E0293 for a resource Karpenter refuses or a quantity that is not one.
    fn overlay_capacity(&mut self, child: &KdlNode, overlay: &mut Overlay) {
        self.check_entries(child, &[], 2);
        let span = self.span(child.span());
        let mut entries = args(child);
        let (Some(resource), Some(quantity)) = (entries.next(), entries.next()) else {
            return self.error(span, ErrorCode::E0107, "`capacity` needs a resource and a quantity", "write capacity \"example.com/fpga\" \"2\"");
        };
        let Some(resource) = self.expect_string(resource, "capacity resource") else { return };
        let quantity_text = match quantity.value() {
            KdlValue::Integer(i) if *i >= 0 => Some(i.to_string()),
            KdlValue::String(q) if crate::simulate::yaml::milli(q).is_some_and(|m| m >= 0) => Some(q.clone()),
            _ => None,
        };
        if RESTRICTED_RESOURCES.contains(&resource.as_str()) {
            let message = format!("a NodeOverlay may not set `{}`: it adds extended resources only (Karpenter refuses cpu, memory, ephemeral-storage and pods)", resource.value);
            return self.error(resource.span, ErrorCode::E0293, message, "name an extended resource, e.g. capacity \"nvidia.com/gpu\" \"4\" or \"example.com/fpga\" \"2\"; for cpu or memory limits write `limits`");
        }
        if let Err(reason) = crate::names::check_label_key(&resource) {
            let help = did_you_mean(&resource, ["nvidia.com/gpu", "aws.amazon.com/neuron", "vpc.amazonaws.com/efa"]).unwrap_or_else(|| "an extended resource name is a qualified name: example.com/fpga".into());
            return self.error(resource.span, ErrorCode::E0293, format!("capacity resource `{}` is not valid: {reason}", crate::input::excerpt(&resource.value)), help);
        }
        let quantity_span = self.span(quantity.span());
        let Some(quantity) = quantity_text else {
            let message = format!("capacity {} must be a non-negative Kubernetes quantity, found {}", resource.value, describe(quantity.value()));
            return self.error(quantity_span, ErrorCode::E0293, message, "write a whole number (\"4\") or a quantity (\"1Gi\")");
        };
        // The accelerator resources count whole devices (or slices) per node: below one the overlay tells Karpenter the
        // nodes have no accelerator at all, and every pod asking for one pends, while the pool is sized for them.
        let whole = crate::simulate::yaml::milli(&quantity).is_some_and(|m| m >= 1000 && m % 1000 == 0);
        if ACCELERATOR_RESOURCES.contains(&resource.value.as_str()) && !whole {
            let message = format!("capacity {} {quantity} is not a whole number of accelerators: the nodes would offer no {} and every pod asking for one would pend", resource.value, resource.value);
            return self.error(quantity_span, ErrorCode::E0293, message, "write a whole number of devices or slices per node, at least 1 (e.g. \"4\"), or leave the resource out");
        }
        overlay.capacity.retain(|(r, _)| *r != resource.value);
        overlay.capacity.push((resource.value, quantity));
    }

    /// `require` inside an overlay: the pool's `require` syntax without min-values, under the NodeOverlay CRD's key
    /// rules (E0294), with E0282/E0283 for operators and values.
    fn overlay_require(&mut self, child: &KdlNode, overlay: &mut Overlay) {
        self.check_entries(child, &[], usize::MAX);
        let span = self.span(child.span());
        let mut entries = args(child);
        let (Some(key), Some(operator)) = (entries.next(), entries.next()) else {
            return self.error(span, ErrorCode::E0283, "`require` needs a label key and an operator", "write require \"node.kubernetes.io/instance-type\" \"In\" \"g5.xlarge\"");
        };
        let (Some(key), Some(operator)) = (self.expect_string(key, "requirement key"), self.expect_string(operator, "requirement operator")) else { return };
        let values: Vec<Spanned<String>> = entries.filter_map(|e| self.requirement_value(e)).collect();
        if key.value == "karpenter.sh/nodepool" {
            let message = "an overlay's `require` may not name karpenter.sh/nodepool: gpuplan scopes each overlay to the NodePools of the pool (or tier) it is written in";
            return self.error(key.span, ErrorCode::E0294, message, "move the block into the pool or tier it should apply to");
        }
        if let Some(reason) = restricted_key(&key.value) {
            let help = did_you_mean(&key.value, AWS_KEYS.iter().copied().chain(["karpenter.sh/capacity-type", "node.kubernetes.io/instance-type", "topology.kubernetes.io/zone"]))
                .unwrap_or_else(|| "select on a well-known label (node.kubernetes.io/instance-type, karpenter.sh/capacity-type, karpenter.k8s.aws/instance-family, …) or a label of the pool's".into());
            return self.error(key.span, ErrorCode::E0294, reason, help);
        }
        for v in &values {
            self.check_value(v, crate::names::check_label_value, ErrorCode::E0188, "requirement value", LABEL_VALUE_HELP);
        }
        if !(self.check_operator(&operator) && self.check_requirement_values(&operator, &values, None, span)) {
            return;
        }
        let requirement = NodeRequirement { key: key.value, operator: operator.value, values: values.into_iter().map(|v| v.value).collect(), min_values: None };
        overlay.requires.retain(|r| r.key != requirement.key);
        overlay.requires.push(requirement);
    }

    /// E0295: one overlay name per profile (a NodeOverlay name is cluster-wide), unless it is the same block
    /// inherited by a pool's tiers. E0296: a capacity overlay on the accelerator resource of a time-sliced or MIG
    /// NodePool, whose capacity gpuplan declares itself (its own NodeOverlay `<nodepool>-<n>gpu`).
    pub(super) fn check_overlays(&mut self, pools: &[Pool]) {
        let mut reported: Vec<Span> = Vec::new();
        for tier in pools.iter().flat_map(|p| &p.tiers).filter(|t| t.settings.sharing.is_some()) {
            let resource = tier.settings.accelerator.value.resource();
            for o in tier.settings.overlays.iter().filter(|o| o.capacity.iter().any(|(r, _)| r == resource)) {
                if reported.contains(&o.span) {
                    continue;
                }
                reported.push(o.span);
                let message = format!("overlay `{}` sets {resource} capacity on NodePool `{}`, which shares its GPUs: gpuplan declares the shared capacity itself", o.name.value, tier.name.value);
                self.error(o.span, ErrorCode::E0296, message, "remove the capacity line (time-slicing replicas or the MIG config already set it), or remove the sharing");
            }
        }
        // The same block (same settings) written in several tiers of one pool is one NodeOverlay over those tiers
        // (what adopt writes for an overlay scoped to a tiered pool's NodePools).
        let mut seen: std::collections::BTreeMap<String, (usize, Span, &Overlay)> = std::collections::BTreeMap::new();
        for (pool, o) in pools.iter().enumerate().flat_map(|(i, p)| p.tiers.iter().flat_map(move |t| t.settings.overlays.iter().map(move |o| (i, o)))) {
            match seen.get(&o.name.value) {
                Some((first_pool, first, first_o)) if *first != o.name.span && (*first_pool != pool || !o.same_settings(first_o)) => {
                    let at = self.sources.location(*first);
                    let message = format!("overlay name `{}` is used twice in this profile (first at {at}): each block is one NodeOverlay, named cluster-wide", o.name.value);
                    self.error(o.name.span, ErrorCode::E0295, message, "give each overlay block a distinct name (a pool's tiers may repeat one block as written)");
                }
                Some(_) => {}
                None => {
                    seen.insert(o.name.value.clone(), (pool, o.name.span, &o.value));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The NodeOverlay CRD's patterns (karpenter.sh_nodeoverlays.yaml, v1.14.1): price `^\d+(\.\d+)?$`; priceAdjustment
    /// `^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`.
    #[test]
    fn prices_and_adjustments_match_the_crds_patterns() {
        for ok in ["0", "5.00", "0.52", "12"] {
            assert!(valid_price(ok), "{ok}");
        }
        for bad in ["-1", "1.", ".5", "1e3", "$1", ""] {
            assert!(!valid_price(bad), "{bad}");
        }
        for ok in ["+10%", "-15%", "-0.5", "+1.2", "-.5", "+.5%", "-99.5%", "-100%", "-5"] {
            assert!(valid_price_adjustment(ok), "{ok}");
        }
        for bad in ["10%", "0.5", "-101%", "-100.5%", "-150%", "+", "-", "+1.%", "--1"] {
            assert!(!valid_price_adjustment(bad), "{bad}");
        }
    }

    /// cloudprovider/types.go `AdjustedPrice`: a percentage scales, a signed number adds, never below 0; a price replaces.
    #[test]
    fn an_adjustment_applies_as_karpenters_adjusted_price() {
        let adj = |a: &str| OverlayPrice::Adjustment(a.into()).apply(2.0);
        assert_eq!((adj("-25%"), adj("+10%"), adj("-0.5"), adj("-3"), adj("-100%")), (1.5, 2.2, 1.5, 0.0, 0.0));
        assert_eq!(OverlayPrice::Price("0.7".into()).apply(2.0), 0.7);
    }

    #[test]
    fn overlay_keys_follow_the_crds_domain_rules() {
        assert!(restricted_key("karpenter.sh/capacity-type").is_none());
        assert!(restricted_key("karpenter.k8s.aws/instance-gpu-count").is_none());
        assert!(restricted_key("node.kubernetes.io/instance-type").is_none());
        assert!(restricted_key("example.com/team").is_none());
        assert!(restricted_key("karpenter.sh/registered").is_some());
        assert!(restricted_key("karpenter.k8s.aws/instance-pods").is_some());
        assert!(restricted_key("kubernetes.io/hostname").is_some());
    }
}
