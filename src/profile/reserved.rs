//! `reserved { … }`: the on-demand capacity reservations or capacity blocks a pool launches into, by id or by
//! tag, and what the reservation holds (its full cost is fixed, so it is counted first against the budget).
//!
//! ```kdl
//! reserved { id "cr-0123456789abcdef0"; instance-type "p5.48xlarge"; instances 2 }
//! reserved { tag "purpose" "training"; instance-type "p4d.24xlarge"; instances 4 }
//! ```

use std::collections::BTreeMap;

use kdl::KdlNode;

use super::parser::{args, Parser};
use super::schema;
use crate::diagnostic::ErrorCode;
use crate::diagnostic::Spanned;

/// On-demand capacity reservations or capacity blocks the pool launches into.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reserved {
    pub ids: Vec<String>,
    pub tags: BTreeMap<String, String>,
    /// The reserved instance type and how many instances the reservation holds: a reservation is billed
    /// whether used or not, so its full cost is fixed and counted first against the budget.
    pub instance_type: Option<Spanned<String>>,
    pub instances: Option<Spanned<u32>>,
}

impl Parser<'_> {
    /// A `reserved` block: E0190 for what the EC2NodeClass CRD refuses, E0132 without the type and count.
    pub(super) fn parse_reserved(&mut self, node: &KdlNode) -> Spanned<Reserved> {
        let node_span = self.span(node.span());
        self.check_entries(node, &[], 0);
        let mut reserved = Reserved::default();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "id" => {
                    for id in self.strings(child) {
                        let help = "copy the id from the EC2 console or `aws ec2 describe-capacity-reservations`";
                        self.check_value(&id, crate::names::check_reservation_id, ErrorCode::E0190, "capacity reservation id", help);
                        reserved.ids.push(id.value);
                    }
                }
                "instance-type" => reserved.instance_type = self.single_string(child),
                "instances" => reserved.instances = self.bounded_u32(child, "instances", 1..=10_000),
                "tag" => self.reservation_tag(child, &mut reserved.tags),
                _ => self.unknown_node(child, &schema::names("reserved"), "`reserved`"),
            }
        }
        // The EC2NodeClass CRD takes at most 20 tags in a capacity reservation selector term.
        if reserved.tags.len() > 20 {
            let message = format!("`reserved` selects by {} tags, and Karpenter takes at most 20", reserved.tags.len());
            self.error(node_span, ErrorCode::E0190, message, "keep the tags that single out the reservation, or name it by id");
        }
        if reserved.instance_type.is_none() || reserved.instances.is_none() {
            self.error(
                node_span,
                ErrorCode::E0132,
                "`reserved` needs the reservation's `instance-type` and `instances`",
                "a capacity reservation is billed whether used or not, so gpuplan counts its full cost: add e.g. instance-type \"p5.48xlarge\" and instances 2",
            );
        }
        Spanned::new(reserved, node_span)
    }

    /// `tag "key" "value"` in a `reserved` block.
    fn reservation_tag(&mut self, child: &KdlNode, tags: &mut BTreeMap<String, String>) {
        self.check_entries(child, &[], 2);
        let kv: Vec<_> = args(child).filter_map(|e| self.expect_string(e, "tag")).collect();
        if let [k, v] = kv.as_slice() {
            // The EC2NodeClass CRD refuses empty tag keys and values in a selector term.
            let non_empty = |t: &str| if t.is_empty() { Err("it is empty, and Karpenter refuses empty tag keys and values".to_string()) } else { Ok(()) };
            self.check_value(k, non_empty, ErrorCode::E0190, "reservation tag key", "write the tag's key and value as EC2 shows them");
            self.check_value(v, non_empty, ErrorCode::E0190, "reservation tag value", "write the tag's key and value as EC2 shows them (\"*\" matches any value)");
            tags.insert(k.value.clone(), v.value.clone());
        } else {
            self.error(self.span(child.span()), ErrorCode::E0107, "`tag` needs a key and a value", "write tag \"purpose\" \"training\"");
        }
    }
}
