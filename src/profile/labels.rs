//! `label "team" "ml"` and `taint "dedicated" value="ml" effect="NoSchedule"`: the labels and taints of a
//! NodePool's nodes, each key and value checked as Kubernetes checks them (E0188 labels, E0189 taints).

use kdl::KdlNode;

use super::parser::{args, prop, Parser};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::Spanned;

/// Help for label and taint keys (E0188, E0189): the Kubernetes rule in a line.
pub(super) const LABEL_KEY_HELP: &str = "a key is a name of at most 63 characters (alphanumerics, '-', '_', '.', starting and ending with an alphanumeric), optionally after a lowercase DNS subdomain and '/': team, example.com/team";
/// Help for label and taint values (E0188, E0189).
pub(super) const LABEL_VALUE_HELP: &str = "a value is empty or at most 63 characters: alphanumerics, '-', '_', '.', starting and ending with an alphanumeric";

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

#[derive(Debug, Clone, PartialEq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

impl Parser<'_> {
    /// `label "key" "value"`: the key and the value, when both are written.
    pub(super) fn parse_label(&mut self, node: &KdlNode) -> Option<(String, Spanned<String>)> {
        self.check_entries(node, &[], 2);
        let kv: Vec<_> = args(node).filter_map(|e| self.expect_string(e, "label")).collect();
        match kv.as_slice() {
            [k, v] => {
                self.check_value(k, crate::names::check_node_label_key, ErrorCode::E0188, "label key", LABEL_KEY_HELP);
                self.check_value(v, crate::names::check_label_value, ErrorCode::E0188, "label value", LABEL_VALUE_HELP);
                Some((k.value.clone(), v.clone()))
            }
            _ => {
                self.error(self.span(node.span()), ErrorCode::E0107, "`label` needs a key and a value", "write label \"team\" \"ml\"");
                None
            }
        }
    }

    /// `taint "key" [value="…"] [effect="NoSchedule"]`: a taint whenever its key is a string (an unknown effect
    /// is reported and kept as written).
    pub(super) fn parse_taint(&mut self, node: &KdlNode) -> Option<Spanned<Taint>> {
        let node_span = self.span(node.span());
        self.check_entries(node, &["value", "effect"], 1);
        let key = args(node).next().and_then(|e| self.expect_string(e, "taint key"));
        let value = prop(node, "value").and_then(|e| self.expect_string(e, "taint value"));
        let effect = prop(node, "effect")
            .and_then(|e| self.expect_string(e, "taint effect"))
            .unwrap_or_else(|| Spanned::new("NoSchedule".into(), node_span));
        if !TAINT_EFFECTS.contains(&effect.as_str()) {
            self.unknown_keyword(&effect, "taint effect", TAINT_EFFECTS, "one of NoSchedule, PreferNoSchedule, NoExecute");
        }
        if let Some(key) = &key {
            self.check_value(key, crate::names::check_taint_key, ErrorCode::E0189, "taint key", LABEL_KEY_HELP);
        }
        if let Some(value) = &value {
            self.check_value(value, crate::names::check_taint_value, ErrorCode::E0189, "taint value", LABEL_VALUE_HELP);
        }
        let key = key?;
        Some(Spanned::new(Taint { key: key.value, value: value.map(|v| v.value), effect: effect.value }, node_span))
    }
}
