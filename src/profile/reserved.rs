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
    /// `capacity-block …`: the reservation is a Capacity Block for ML, priced per block (paid up front), not by the
    /// on-demand table.
    pub capacity_block: Option<Spanned<CapacityBlock>>,
}

/// A Capacity Block for ML: its up-front price for the whole block and the hours between its start and end (EC2
/// `describe-capacity-block-offerings` gives both: UpfrontFee, StartDate, EndDate).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapacityBlock {
    /// USD paid up front for every instance of the block over its whole duration; None: not said (the cost figures
    /// then say they leave it out).
    pub price_usd: Option<f64>,
    pub start: Option<String>,
    pub end: Option<String>,
    /// Hours from start to end, when both are given and parse (RFC 3339).
    pub hours: Option<f64>,
}

impl CapacityBlock {
    /// The block's price spread over its hours: what it costs per hour while it runs.
    pub fn usd_per_hour(&self) -> Option<f64> {
        Some(self.price_usd? / self.hours.filter(|h| *h > 0.0)?)
    }
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
                "capacity-block" => reserved.capacity_block = Some(self.parse_capacity_block(child)),
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

    /// `capacity-block price-usd=31464.0 start="2026-12-01T11:30:00Z" end="2026-12-08T11:30:00Z"` (all optional): E0121
    /// for a date that is not RFC 3339, E0106 for an end not after the start or a negative price.
    fn parse_capacity_block(&mut self, node: &KdlNode) -> Spanned<CapacityBlock> {
        let span = self.span(node.span());
        self.check_entries(node, &["price-usd", "start", "end"], 0);
        let price_usd = super::parser::prop(node, "price-usd").and_then(|e| self.expect_number(e, "price-usd"));
        if let Some(p) = price_usd.as_ref().filter(|p| p.value < 0.0) {
            self.error(p.span, ErrorCode::E0106, "a Capacity Block's price-usd cannot be negative", "write the UpfrontFee of the block in USD");
        }
        let date = |this: &mut Self, key: &str| {
            let v = super::parser::prop(node, key).and_then(|e| this.expect_string(e, key))?;
            match time::OffsetDateTime::parse(&v.value, &time::format_description::well_known::Rfc3339) {
                Ok(t) => Some((v.value.clone(), t)),
                Err(e) => {
                    this.error(v.span, ErrorCode::E0121, format!("`{}` is not an RFC 3339 date ({e})", v.value), "write it as EC2 gives it, e.g. \"2026-12-01T11:30:00Z\"");
                    None
                }
            }
        };
        let (start, end) = (date(self, "start"), date(self, "end"));
        let hours = match (&start, &end) {
            (Some((_, s)), Some((_, e))) if e > s => Some((*e - *s).as_seconds_f64() / 3600.0),
            (Some(_), Some(_)) => {
                self.error(span, ErrorCode::E0106, "a Capacity Block's `end` must come after its `start`", "check `start` and `end`");
                None
            }
            _ => None,
        };
        let block = CapacityBlock { price_usd: price_usd.map(|p| p.value), start: start.map(|s| s.0), end: end.map(|e| e.0), hours };
        Spanned::new(block, span)
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
