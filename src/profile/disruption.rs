//! `disruption { … }`: when Karpenter may take a pool's nodes away (consolidation, expiry, drift), how long a
//! node's pods get to finish, the training presets' weekly maintenance window, and explicit disruption budgets.
//!
//! ```kdl
//! disruption {
//!     consolidation "WhenEmpty"; consolidate-after "10m"; expire-after "720h"; termination-grace-period "1h"
//!     maintenance-window day="sunday" start="02:00" duration="4h" nodes="1"   // UTC
//!     budget nodes="10%" schedule="0 9 * * 1-5" duration="8h" reasons="Underutilized,Empty"
//! }
//! ```

use kdl::KdlNode;

use super::duration::duration_minutes;
use super::parser::{prop, Parser};
use super::schema;
use crate::diagnostic::ErrorCode;
use crate::diagnostic::Spanned;

/// A `budget` line of a `disruption` block: defined in `catalog::cost`, whose drain-peak model reads it.
pub use crate::catalog::cost::DisruptionBudget;

/// A weekly maintenance window, UTC: the only time training nodes may be disrupted voluntarily.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceWindow {
    /// 0 = Sunday … 6 = Saturday (cron numbering).
    pub weekday: u32,
    pub start_minute_of_day: u32,
    pub duration_minutes: u32,
    /// Nodes that may be disrupted at once inside the window.
    pub nodes: String,
}

#[derive(Debug, Clone)]
pub struct Disruption {
    pub consolidation_policy: Spanned<String>,
    pub consolidate_after: Spanned<String>,
    pub expire_after: Spanned<String>,
    pub termination_grace_period: Option<Spanned<String>>,
    pub maintenance_window: Option<Spanned<MaintenanceWindow>>,
    /// Explicit budgets; when given they replace the preset's.
    pub budgets: Vec<Spanned<DisruptionBudget>>,
}

/// Karpenter v1.14.1's policies (sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/nodepool.go, the `ConsolidationPolicy`
/// enum; `Balanced` needs no feature gate: pkg/operator/options/options.go lists none for it).
const CONSOLIDATION_POLICIES: [&str; 3] = ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"];
const BUDGET_REASONS: [&str; 3] = ["Underutilized", "Empty", "Drifted"];
const WEEKDAYS: [&str; 7] = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

impl Parser<'_> {
    /// Applies a `disruption` block's lines over the inherited (preset or pool) ones.
    pub(super) fn parse_disruption(&mut self, node: &KdlNode, d: &mut Disruption) {
        self.check_entries(node, &[], 0);
        let mut budgets = Vec::new();
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(child);
            match child.name().value() {
                "consolidation" => {
                    if let Some(p) = self.single_string(child) {
                        if CONSOLIDATION_POLICIES.contains(&p.as_str()) {
                            d.consolidation_policy = p;
                        } else {
                            self.unknown_keyword(&p, "consolidation policy", CONSOLIDATION_POLICIES, "one of WhenEmpty, WhenEmptyOrUnderutilized, Balanced");
                        }
                    }
                }
                "consolidate-after" => {
                    if let Some(v) = self.single_string(child).and_then(|v| self.duration(v, true)) {
                        d.consolidate_after = v;
                    }
                }
                "expire-after" => {
                    if let Some(v) = self.single_string(child).and_then(|v| self.duration(v, true)) {
                        d.expire_after = v;
                    }
                }
                "termination-grace-period" => {
                    // "none": no terminationGracePeriod (Karpenter's default: a node waits for its pods however long).
                    d.termination_grace_period = self.single_string(child).filter(|v| v.as_str() != "none").and_then(|v| self.duration(v, false));
                }
                "maintenance-window" => {
                    if let Some(window) = self.parse_maintenance_window(child) {
                        d.maintenance_window = Some(window);
                    }
                }
                "budget" => budgets.extend(self.parse_budget(child)),
                _ => self.unknown_node(child, &schema::names("disruption"), "`disruption`"),
            }
        }
        if !budgets.is_empty() {
            d.budgets = budgets;
        }
    }

    /// `maintenance-window day="sunday" start="02:00" duration="4h" [nodes="1"]`; None (the inherited window kept)
    /// when a part is missing or wrong.
    fn parse_maintenance_window(&mut self, child: &KdlNode) -> Option<Spanned<MaintenanceWindow>> {
        let span = self.span(child.span());
        self.check_entries(child, &["day", "start", "duration", "nodes"], 0);
        let day = prop(child, "day").and_then(|e| self.expect_string(e, "day"));
        let start = prop(child, "start").and_then(|e| self.expect_string(e, "start"));
        let duration = prop(child, "duration").and_then(|e| self.expect_string(e, "duration"));
        let nodes = prop(child, "nodes").and_then(|e| self.expect_string(e, "nodes"));
        let (Some(day), Some(start), Some(duration)) = (day, start, duration) else {
            self.error(
                span,
                ErrorCode::E0107,
                "`maintenance-window` needs day, start and duration",
                "write maintenance-window day=\"sunday\" start=\"02:00\" duration=\"4h\" (UTC)",
            );
            return None;
        };
        let weekday = WEEKDAYS.iter().position(|w| w.eq_ignore_ascii_case(&day) || w[..3].eq_ignore_ascii_case(&day));
        let start_minute = parse_hhmm(&start);
        let minutes = self.duration(duration.clone(), false).and_then(|d| duration_minutes(&d));
        match (weekday, start_minute, minutes) {
            (None, _, _) => self.error(day.span, ErrorCode::E0118, format!("unknown day `{}`", day.value), "sunday … saturday"),
            (_, None, _) => self.error(start.span, ErrorCode::E0118, format!("`{}` is not a UTC time of day", start.value), "write HH:MM, e.g. 02:00"),
            (_, _, None) => {}
            (Some(_), Some(_), Some(m)) if m == 0 || m >= 7 * 24 * 60 => self.error(
                duration.span,
                ErrorCode::E0106,
                "a maintenance window lasts between 1 minute and 1 week",
                "",
            ),
            (Some(w), Some(s), Some(m)) => {
                let nodes = nodes.map(|n| n.value).unwrap_or_else(|| "1".into());
                if !valid_budget_nodes(&nodes) {
                    self.error(span, ErrorCode::E0118, format!("nodes `{nodes}` is not a count or a percentage"), "write e.g. nodes=\"1\" or nodes=\"10%\"");
                }
                return Some(Spanned::new(
                    MaintenanceWindow { weekday: w as u32, start_minute_of_day: s, duration_minutes: m, nodes },
                    span,
                ));
            }
        }
        None
    }

    /// `budget nodes="10%" [schedule="…" duration="…"] [reasons="…"]`: one Karpenter disruption budget.
    fn parse_budget(&mut self, child: &KdlNode) -> Option<Spanned<DisruptionBudget>> {
        let span = self.span(child.span());
        self.check_entries(child, &["nodes", "schedule", "duration", "reasons"], 0);
        let nodes = prop(child, "nodes").and_then(|e| self.expect_string(e, "budget nodes"));
        let Some(nodes) = nodes else {
            self.error(span, ErrorCode::E0107, "`budget` needs nodes", "write budget nodes=\"10%\" (a count or a percentage, quoted)");
            return None;
        };
        if !valid_budget_nodes(&nodes) {
            self.error(nodes.span, ErrorCode::E0118, format!("nodes `{}` is not a count or a percentage", nodes.value), "write e.g. nodes=\"1\" or nodes=\"10%\"");
        }
        let schedule = prop(child, "schedule").and_then(|e| self.expect_string(e, "budget schedule"));
        let duration = prop(child, "duration").and_then(|e| self.expect_string(e, "budget duration"));
        if schedule.is_some() != duration.is_some() {
            self.error(
                span,
                ErrorCode::E0120,
                "a scheduled budget needs both schedule and duration",
                "write both, e.g. schedule=\"0 9 * * 1-5\" duration=\"8h\" (cron in UTC); or neither for an always-on budget",
            );
        }
        if let Some(s) = &schedule
            && s.split_whitespace().count() != 5 && !s.starts_with('@') {
                self.error(s.span, ErrorCode::E0118, format!("`{}` is not a 5-field cron schedule", s.value), "minute hour day-of-month month day-of-week, in UTC, e.g. \"0 9 * * 1-5\"");
            }
        let duration = duration.and_then(|d| self.duration(d, false));
        let reasons = prop(child, "reasons").and_then(|e| self.expect_string(e, "budget reasons"));
        let reasons = reasons.map(|r| self.budget_reasons(&r)).unwrap_or_default();
        let budget = DisruptionBudget { nodes: nodes.value, schedule: schedule.map(|s| s.value), duration: duration.map(|d| d.value), reasons };
        Some(Spanned::new(budget, span))
    }

    /// `reasons="Underutilized,Empty"` (commas or spaces): the known reasons, E0118 for each other word.
    fn budget_reasons(&mut self, r: &Spanned<String>) -> Vec<String> {
        let mut reason_list = Vec::new();
        for reason in r.split([',', ' ']).filter(|s| !s.is_empty()) {
            if BUDGET_REASONS.contains(&reason) {
                reason_list.push(reason.to_string());
            } else {
                let word = Spanned::new(reason.to_string(), r.span);
                self.unknown_keyword(&word, "disruption reason", BUDGET_REASONS, "reasons are Underutilized, Empty, Drifted (comma-separated)");
            }
        }
        reason_list
    }
}

fn parse_hhmm(s: &str) -> Option<u32> {
    let (h, m) = s.split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

fn valid_budget_nodes(nodes: &str) -> bool {
    let digits = nodes.strip_suffix('%').unwrap_or(nodes);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) && (!nodes.ends_with('%') || digits.parse::<u32>().is_ok_and(|p| p <= 100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_nodes() {
        assert!(valid_budget_nodes("0"));
        assert!(valid_budget_nodes("10%"));
        assert!(!valid_budget_nodes("110%"));
        assert!(!valid_budget_nodes("ten"));
    }
}
