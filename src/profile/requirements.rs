//! `require "<label key>" "<operator>" "<value>"… min-values=<n>`: a NodePool requirement on any well-known
//! Karpenter / AWS label (instance category, size, CPU, memory, local NVMe, network bandwidth, …) or on a label of
//! the user's, with every operator Karpenter v1.14 takes. The solver keeps only the catalog's types whose labels
//! satisfy it (`solve::require_constraints`), and the NodePool carries it as written.
//!
//! Operators and their rules follow kubernetes-sigs/karpenter v1.14.1 `pkg/apis/v1/nodepool.go` (the CRD's
//! requirement rules: Gt, Lt, Gte and Lte take a single non-negative integer; `minValues` is 1–50 and an In list
//! holds at least that many values) and `pkg/apis/v1/labels.go` (`IsRestrictedLabel`: a key in the karpenter.sh
//! domain, or the provider's karpenter.k8s.aws, must be a well-known label; kubernetes.io/hostname never is). The
//! well-known keys are the simulator's list (`simulate::requirements::WELL_KNOWN`, core and
//! aws/karpenter-provider-aws v1.14.1 `pkg/apis/v1/labels.go`).

use kdl::{KdlNode, KdlValue};

use super::labels::LABEL_KEY_HELP;
use super::parser::{args, prop, Parser};
use super::Settings;
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{did_you_mean, Spanned};
use crate::simulate::requirements::WELL_KNOWN;

/// One requirement as the profile writes it (and the NodePool carries it).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
    pub min_values: Option<u32>,
}

impl NodeRequirement {
    /// How the solver names it in removals and E0140: `require karpenter.k8s.aws/instance-category In [g, p]`.
    pub fn describe(&self) -> String {
        let values = if self.values.is_empty() { String::new() } else { format!(" [{}]", self.values.join(", ")) };
        format!("require {} {}{values}", self.key, self.operator)
    }
}

/// Karpenter v1.14's node selector operators (nodeclaim.go `NodeSelectorOpGte`, `NodeSelectorOpLte` besides the
/// Kubernetes ones).
pub const OPERATORS: [&str; 8] = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"];

/// Keys gpuplan writes from settings of their own, with the setting to use instead (two requirements on one key
/// would intersect, which the profile would not show).
pub const DERIVED: [(&str, &str); 7] = [
    ("karpenter.sh/capacity-type", "write `capacity \"spot\" \"on-demand\"`"),
    ("node.kubernetes.io/instance-type", "write `types …` or `exclude-types …`"),
    ("karpenter.k8s.aws/instance-family", "write `families …` or `exclude-families …`"),
    ("kubernetes.io/arch", "write `arch \"amd64\" \"arm64\"`"),
    ("kubernetes.io/os", "gpuplan's nodes are linux; remove it"),
    ("topology.kubernetes.io/zone", "zones are the cluster's `zones` (or `efa zone=`)"),
    ("karpenter.sh/nodepool", "Karpenter sets it on every node; remove it"),
];

/// Well-known keys of aws/karpenter-provider-aws v1.14.1 `pkg/apis/v1/labels.go` the simulator's list lacks.
const MORE_WELL_KNOWN: [&str; 2] = ["karpenter.k8s.aws/capacity-reservation-interruptible", "karpenter.k8s.aws/instance-tenancy"];

pub fn is_well_known(key: &str) -> bool {
    WELL_KNOWN.contains(&key) || MORE_WELL_KNOWN.contains(&key)
}

/// A key Karpenter refuses in a NodePool unless it is well known (`IsRestrictedLabel`).
fn restricted(key: &str) -> bool {
    let domain = key.split_once('/').map_or("", |(d, _)| d);
    let in_domain = |d: &str| domain == d || domain.ends_with(&format!(".{d}"));
    key == "kubernetes.io/hostname" || in_domain("karpenter.sh") || in_domain("karpenter.k8s.aws")
}

fn well_known_keys() -> impl Iterator<Item = &'static str> {
    WELL_KNOWN.iter().copied().chain(MORE_WELL_KNOWN)
}

impl Parser<'_> {
    /// `require`: replaces an earlier requirement on the same key (a tier's overrides its pool's).
    pub(super) fn apply_require(&mut self, node: &KdlNode, s: &mut Settings) {
        self.check_entries(node, &["min-values"], usize::MAX);
        let node_span = self.span(node.span());
        let mut entries = args(node);
        let (Some(key), Some(operator)) = (entries.next(), entries.next()) else {
            let help = "write require \"karpenter.k8s.aws/instance-category\" \"In\" \"g\" \"p\"";
            return self.error(node_span, ErrorCode::E0283, "`require` needs a label key and an operator", help);
        };
        let (Some(key), Some(operator)) = (self.expect_string(key, "requirement key"), self.expect_string(operator, "requirement operator")) else { return };
        let values: Vec<Spanned<String>> = entries.filter_map(|e| self.requirement_value(e)).collect();
        let min_values = prop(node, "min-values").and_then(|e| self.expect_integer(e, "min-values", 1, 50)).map(|v| v.value as u32);
        let key_ok = self.check_requirement_key(&key);
        let op_ok = self.check_operator(&operator);
        if !(key_ok && op_ok && self.check_requirement_values(&operator, &values, min_values, node_span)) {
            return;
        }
        let requirement = NodeRequirement { key: key.value, operator: operator.value, values: values.into_iter().map(|v| v.value).collect(), min_values };
        s.requires.retain(|r| r.key != requirement.key);
        s.requires.push(Spanned::new(requirement, node_span));
    }

    /// A value: a string, or an integer (`"8"` and `8` say the same to Karpenter, whose values are strings).
    pub(super) fn requirement_value(&mut self, entry: &kdl::KdlEntry) -> Option<Spanned<String>> {
        match entry.value() {
            KdlValue::Integer(i) => Some(Spanned::new(i.to_string(), self.span(entry.span()))),
            _ => self.expect_string(entry, "requirement value"),
        }
    }

    /// E0280 (a key Karpenter refuses, or a bare well-known name), E0281 (a key gpuplan derives), E0188 (a
    /// malformed user label key).
    fn check_requirement_key(&mut self, key: &Spanned<String>) -> bool {
        if let Some((_, instead)) = DERIVED.iter().find(|(k, _)| *k == key.value) {
            let message = format!("`require` on `{}`: gpuplan writes this requirement itself", key.value);
            self.error(key.span, ErrorCode::E0281, message, *instead);
            return false;
        }
        if is_well_known(&key.value) {
            return true;
        }
        let bare = well_known_keys().find(|k| k.rsplit('/').next() == Some(key.value.as_str()));
        if restricted(&key.value) || bare.is_some() {
            let suggestion = bare.map(|k| format!("did you mean `{k}`?")).or_else(|| did_you_mean(&key.value, well_known_keys()));
            let help = suggestion.unwrap_or_else(|| "a key in the karpenter.sh or karpenter.k8s.aws domain must be one of Karpenter's well-known labels (`gpuplan schema` lists `require`)".into());
            let message = format!("`{}` is not a well-known Karpenter label, and Karpenter refuses other keys in its domains", crate::input::excerpt(&key.value));
            self.error(key.span, ErrorCode::E0280, message, help);
            return false;
        }
        let before = self.diagnostics.len();
        self.check_value(key, crate::names::check_node_label_key, ErrorCode::E0188, "requirement key", LABEL_KEY_HELP);
        self.diagnostics.len() == before
    }

    /// E0282: an operator Karpenter does not know (the spelling is case-sensitive).
    pub(super) fn check_operator(&mut self, operator: &Spanned<String>) -> bool {
        if OPERATORS.contains(&operator.as_str()) {
            return true;
        }
        let help = OPERATORS
            .iter()
            .find(|o| o.eq_ignore_ascii_case(operator))
            .map(|o| format!("did you mean `{o}`? (operators are case-sensitive)"))
            .or_else(|| did_you_mean(operator, OPERATORS))
            .unwrap_or_else(|| format!("one of {}", OPERATORS.join(", ")));
        self.error(operator.span, ErrorCode::E0282, format!("unknown requirement operator `{}`", crate::input::excerpt(operator)), help);
        false
    }

    /// E0283: the values the operator takes; E0284: minValues beyond an In list.
    pub(super) fn check_requirement_values(&mut self, operator: &Spanned<String>, values: &[Spanned<String>], min_values: Option<u32>, span: crate::diagnostic::Span) -> bool {
        let problem = match operator.as_str() {
            "In" | "NotIn" if values.is_empty() => Some(format!("`{}` needs at least one value", operator.value)),
            "Exists" | "DoesNotExist" if !values.is_empty() => Some(format!("`{}` takes no values", operator.value)),
            "Gt" | "Lt" | "Gte" | "Lte" if values.len() != 1 || values[0].parse::<u64>().is_err() => {
                Some(format!("`{}` takes one non-negative integer (Karpenter's CRD rule)", operator.value))
            }
            _ => None,
        };
        if let Some(problem) = problem {
            self.error(values.first().map_or(operator.span, |v| v.span), ErrorCode::E0283, problem, "e.g. require \"karpenter.k8s.aws/instance-cpu\" \"Gte\" 8");
            return false;
        }
        if let Some(min) = min_values.filter(|m| operator.as_str() == "In" && values.len() < *m as usize) {
            let message = format!("min-values={min} but the requirement lists {} value{}", values.len(), if values.len() == 1 { "" } else { "s" });
            self.error(span, ErrorCode::E0284, message, "Karpenter refuses an In requirement with fewer values than minValues: list more, or lower min-values");
            return false;
        }
        true
    }
}

/// Whether a requirement as found in a NodePool can be written as `require` (the parser's rules, for adopt):
/// a key that is well known or a user label, not one gpuplan derives, a known operator and the values it takes.
pub fn expressible(key: &str, operator: &str, values: &[String], min_values: Option<u64>) -> bool {
    let key_ok = !DERIVED.iter().any(|(k, _)| *k == key) && (is_well_known(key) || (!restricted(key) && crate::names::check_node_label_key(key).is_ok()));
    let values_ok = match operator {
        "In" | "NotIn" => !values.is_empty(),
        "Exists" | "DoesNotExist" => values.is_empty(),
        "Gt" | "Lt" | "Gte" | "Lte" => values.len() == 1 && values[0].parse::<u64>().is_ok(),
        _ => false,
    };
    let min_ok = min_values.is_none_or(|m| (1..=50).contains(&m) && (operator != "In" || values.len() as u64 >= m));
    key_ok && values_ok && min_ok
}
