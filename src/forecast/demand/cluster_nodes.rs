//! The cluster block's capacity nodes: `startup`, `spot`, `shortage`, `drift`.

use kdl::KdlNode;

use super::{DriftRule, ShortageRule, ShortageWhen, Spot, SpotOverride, Startup, DEFAULT_STARTUP_PART_SECONDS};
use crate::diagnostic::{ErrorCode, Spanned};
use crate::profile::parser::{prop, Parser};

impl Parser<'_> {
    /// `startup pool="training" boot="90s" add-ons="60s" image-pull="5m"` (or `nodepool="…"`): each part left out
    /// takes [`DEFAULT_STARTUP_PART_SECONDS`].
    pub(super) fn startup(&mut self, node: &KdlNode) -> Option<Startup> {
        self.no_children(node);
        self.check_entries(node, &["pool", "nodepool", "boot", "add-ons", "image-pull", "total"], 0);
        let target = self.target(node, &["pool", "nodepool"], "startup pool=\"training\" boot=\"90s\"")?;
        if let Some(total) = self.duration_prop(node, "total") {
            return Some(Startup { target, seconds: total });
        }
        let seconds = ["boot", "add-ons", "image-pull"].iter().map(|part| self.duration_prop(node, part).unwrap_or(DEFAULT_STARTUP_PART_SECONDS)).sum();
        Some(Startup { target, seconds })
    }

    /// `spot rate="5%/month" share-min=0.1 share-max=0.5 { type "g5.xlarge" rate="…"; family "g6" rate="…" }`.
    pub(super) fn spot(&mut self, node: &KdlNode) -> Spot {
        self.check_entries(node, &["rate", "share-min", "share-max"], 0);
        let mut spot = Spot::default();
        if let Some(v) = prop(node, "rate").and_then(|e| self.expect_string(e, "`rate`"))
            && let Some(rate) = self.rate_value(&v)
        {
            spot.rate_per_day = rate;
            spot.rate_span = Some(v.span);
        }
        let share = |p: &mut Self, key: &str| prop(node, key).and_then(|e| p.expect_number(e, &format!("`{key}`")));
        let (lo, hi) = (share(self, "share-min"), share(self, "share-max"));
        for s in [&lo, &hi].into_iter().flatten() {
            if s.value > 1.0 {
                self.error(s.span, ErrorCode::E0106, format!("a share must be at most 1, found {}", s.value), "write the fraction of the type×zone's spot nodes one event reclaims, e.g. 0.3");
            }
        }
        let (lo_v, hi_v) = (lo.as_ref().map_or(spot.share.0, |s| s.value.min(1.0)), hi.as_ref().map_or(spot.share.1, |s| s.value.min(1.0)));
        if lo_v > hi_v {
            let span = hi.as_ref().or(lo.as_ref()).map(|s| s.span).unwrap_or_else(|| self.span(node.span()));
            self.error(span, ErrorCode::E0428, format!("share-min ({lo_v}) is above share-max ({hi_v})"), "swap them, or raise share-max");
        } else {
            spot.share = (lo_v, hi_v);
        }
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            let family = match child.name().value() {
                "type" => false,
                "family" => true,
                _ => {
                    self.unknown_node(child, &["type", "family"], "a `spot` block");
                    continue;
                }
            };
            self.no_children(child);
            self.check_entries(child, &["rate"], 1);
            let name = crate::profile::parser::args(child).next().and_then(|e| self.expect_string(e, &format!("`{}`", child.name().value())));
            let rate = prop(child, "rate").and_then(|e| self.expect_string(e, "`rate`")).and_then(|v| Some((self.rate_value(&v)?, v.span)));
            match (name, rate) {
                (Some(name), Some((rate_per_day, rate_span))) => spot.overrides.push(SpotOverride { family, name, rate_per_day, rate_span }),
                (Some(_), None) if prop(child, "rate").is_none() => {
                    let help = format!("write {} \"…\" rate=\"10%/month\"", child.name().value());
                    self.error(self.span(child.span()), ErrorCode::E0107, "a spot override needs `rate`", help);
                }
                _ => {}
            }
        }
        spot
    }

    /// `shortage type="p5.48xlarge" zone="us-east-1a" capacity-type="on-demand" at="day 3 14:00" for="6h"`, or with
    /// `per-month=2` instead of `at` (random starts).
    pub(super) fn shortage(&mut self, node: &KdlNode) -> Option<ShortageRule> {
        self.no_children(node);
        self.check_entries(node, &["type", "zone", "capacity-type", "at", "per-day", "per-week", "per-month", "for"], 0);
        let instance_type = self.target(node, &["type"], "shortage type=\"p5.48xlarge\" at=\"day 3 14:00\" for=\"6h\"")?;
        let zone = prop(node, "zone").and_then(|e| self.expect_string(e, "`zone`"));
        let capacity_type = prop(node, "capacity-type").and_then(|e| self.expect_string(e, "`capacity-type`"));
        if let Some(ct) = &capacity_type {
            self.keyword(ct, "capacity type", &[("spot", ()), ("on-demand", ())], "write spot or on-demand (leave it out for both)")?;
        }
        let at = prop(node, "at").and_then(|e| self.expect_string(e, "`at`")).and_then(|v| self.time_value(&v));
        let rates = [("per-day", 1.0), ("per-week", 1.0 / 7.0), ("per-month", 1.0 / 30.0)];
        let rate = rates.iter().find_map(|(key, scale)| prop(node, key).map(|e| (self.expect_number(e, &format!("`{key}`")), scale)));
        let wrote_at = prop(node, "at").is_some();
        let rate_span = rate.as_ref().and_then(|(r, _)| r.as_ref().map(|r| r.span));
        let when = match (at, rate) {
            (Some(at), None) => ShortageWhen::At(at),
            (None, Some((Some(r), scale))) if !wrote_at => ShortageWhen::Rate(r.value * scale),
            (None, Some((None, _))) if !wrote_at => return None,
            (None, None) if wrote_at => return None,
            _ => {
                let help = "write at=\"day 3 14:00\" (once) or per-month=2 (at random), not both";
                self.error(self.span(node.name().span()), ErrorCode::E0107, "a `shortage` needs exactly one of `at` or a rate", help);
                return None;
            }
        };
        let Some(for_seconds) = self.duration_prop(node, "for") else {
            if prop(node, "for").is_none() {
                self.error(self.span(node.name().span()), ErrorCode::E0107, "a `shortage` needs `for`, how long it lasts", "add for=\"6h\"");
            }
            return None;
        };
        Some(ShortageRule { instance_type, zone, capacity_type, when, rate_span, for_seconds })
    }

    /// `drift nodepool="training" at="day 10"`.
    pub(super) fn drift(&mut self, node: &KdlNode) -> Option<DriftRule> {
        self.no_children(node);
        self.check_entries(node, &["nodepool", "pool", "at"], 0);
        let nodepool = self.target(node, &["nodepool", "pool"], "drift nodepool=\"training\" at=\"day 10\"")?;
        let Some(at) = prop(node, "at").and_then(|e| self.expect_string(e, "`at`")) else {
            self.error(self.span(node.name().span()), ErrorCode::E0107, "a `drift` needs `at`, when the NodePool changes", "add at=\"day 10\"");
            return None;
        };
        let at = self.time_value(&at)?;
        Some(DriftRule { nodepool, at })
    }

    /// The first of `keys` the node has, as a string (E0107 when none).
    fn target(&mut self, node: &KdlNode, keys: &[&str], example: &str) -> Option<Spanned<String>> {
        match keys.iter().find_map(|k| prop(node, k)) {
            Some(e) => self.expect_string(e, &format!("`{}`", e.name().map(|n| n.value()).unwrap_or_default())),
            None => {
                let message = format!("`{}` needs {}", node.name().value(), keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" or "));
                self.error(self.span(node.name().span()), ErrorCode::E0107, message, format!("write {example}"));
                None
            }
        }
    }

    /// A duration property's seconds (None when absent or refused, with E0424 for the latter).
    fn duration_prop(&mut self, node: &KdlNode, key: &str) -> Option<u64> {
        let v = prop(node, key).and_then(|e| self.expect_string(e, &format!("`{key}`")))?;
        self.duration_value(&v)
    }
}
