//! Policy gates on a change: `--fail-on RULE` and `--warn-on RULE`, each evaluated per cluster and per profile.
//!
//! Grammar (one rule per flag):
//! ```text
//! rule   := check | metric ".increase" (">" | ">=") amount
//! check  := "over-budget"        a profile's worst case after the change is above its budget
//!         | "estimated-prices"   a NodePool's prices are estimated (not observed) spot prices
//!         | "nodepool-removed"   the change deletes a NodePool (and with it every node it launched)
//!         | "drift"              the change replaces running nodes (Karpenter's drift)
//!         | "stuck-drift"        the change drifts nodes whose pods then fit no NodePool: the drift cannot finish
//!         | "drift.nodes" (">" | ">=") N     a NodePool's roll replaces more than N nodes
//!         | "drift.share" (">" | ">=") N "%" a NodePool's roll replaces more than N% of its nodes
//! metric := "worst-case" | "drain-peak" | "at-limit"
//!         | "expected"           the forecast's mean $/h (`forecast`): needs a demand file, gpuplan.demand.kdl
//! amount := N "%"                of the cost before (from nothing, any increase is above every percentage)
//!         | "$" N "/h" | "$" N "/month"   (a month is 730 hours, as on the comment)
//! ```
//! A rule is evaluated for every cluster and every profile the change touches (`over-budget` and
//! `estimated-prices` judge the state after it, so a profile left as it was is not judged again): `worst-case.increase > 10%` denies a
//! change that raises one profile's worst case by 11% even when the cluster's total rises by 2%. The change is
//! denied when any `--fail-on` rule holds anywhere, warned when any `--warn-on` rule does. `nodepool-removed` is a
//! `--fail-on` rule unless the removed NodePools are each allowed by name (`--allow-removal NAME` or
//! `CLUSTER/NAME`): a removal cannot be undone by reverting the pull request (the nodes are gone). `stuck-drift` is
//! one too unless each NodePool is allowed by name (`--allow-stuck-drift`): its old nodes stay, and their pods go
//! pending as the nodes leave for other reasons, long after the merge.

use std::collections::BTreeSet;
use std::fmt;

pub use super::detail::Metric;
use super::detail::CostMeasure;
use super::pools::{Figures, ProfileFigures, cents};
use super::semantic::removed_node_pools;
use crate::layout::OutputTree;

/// Hours in a month, for the comment's $/month and the `/month` amounts.
pub const HOURS_PER_MONTH: f64 = 730.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    Percent(f64),
    PerHour(f64),
    /// Kept as written, compared per hour (÷ 730).
    PerMonth(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    OverBudget,
    EstimatedPrices,
    NodePoolRemoved,
    /// Any running node is replaced (Karpenter's drift: `drift_review`), proven or not.
    Drift,
    /// A drift that certainly cannot finish (`stuck`).
    StuckDrift,
    /// A NodePool's roll replaces more than (or at least) this many nodes.
    DriftNodes { inclusive: bool, nodes: u32 },
    /// A NodePool's roll replaces more than (or at least) this share of its nodes, in percent.
    DriftShare { inclusive: bool, percent: f64 },
    Increase { metric: Metric, inclusive: bool, amount: Amount },
}


impl Rule {
    /// Whether the rule needs the forecast (`expected.increase`), which needs a demand file.
    pub fn needs_forecast(&self) -> bool {
        matches!(self, Rule::Increase { metric: Metric::Expected, .. })
    }
}

impl std::str::FromStr for Rule {
    type Err = String;

    fn from_str(text: &str) -> Result<Rule, String> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        match t.as_str() {
            "over-budget" => return Ok(Rule::OverBudget),
            "estimated-prices" => return Ok(Rule::EstimatedPrices),
            "nodepool-removed" => return Ok(Rule::NodePoolRemoved),
            "drift" => return Ok(Rule::Drift),
            "stuck-drift" => return Ok(Rule::StuckDrift),
            _ => {}
        }
        if let Some(rule) = drift_threshold(&t) {
            return rule.ok_or_else(|| format!("`{text}`: drift.nodes takes a whole number (drift.nodes > 10), drift.share a percentage (drift.share > 25%)"));
        }
        let help = "a rule is over-budget, estimated-prices, nodepool-removed, drift, stuck-drift, drift.nodes > N, drift.share > N%, or <worst-case|drain-peak|at-limit|expected>.increase > <N%|$N/h|$N/month>, e.g. worst-case.increase > 10%";
        let (metric, rest) = t.split_once(".increase").ok_or_else(|| format!("`{text}` is not a rule: {help}"))?;
        let metric = match metric {
            "worst-case" => Metric::Cost(CostMeasure::WorstCase),
            "drain-peak" => Metric::Cost(CostMeasure::DrainPeak),
            "at-limit" => Metric::Cost(CostMeasure::AtLimit),
            "expected" => Metric::Expected,
            _ => return Err(format!("`{metric}` in `{text}` is not a cost: worst-case, drain-peak, at-limit or expected")),
        };
        let (inclusive, amount) = match rest.strip_prefix(">=") {
            Some(a) => (true, a),
            None => (false, rest.strip_prefix('>').ok_or_else(|| format!("`{text}` needs `>` or `>=`: {help}"))?),
        };
        Ok(Rule::Increase { metric, inclusive, amount: amount_of(amount).ok_or_else(|| format!("`{amount}` in `{text}` is not an amount: N%, $N/h or $N/month"))? })
    }
}

/// `drift.nodes > N` / `drift.share > P%` (spaces already removed); None when the text is neither, Some(None) when it
/// is one with a bad number.
fn drift_threshold(t: &str) -> Option<Option<Rule>> {
    let (metric, rest) = t.strip_prefix("drift.nodes").map(|r| ("nodes", r)).or_else(|| t.strip_prefix("drift.share").map(|r| ("share", r)))?;
    let (inclusive, number) = match rest.strip_prefix(">=") {
        Some(n) => (true, n),
        None => (false, rest.strip_prefix('>')?),
    };
    Some(match metric {
        "nodes" => number.parse::<u32>().ok().map(|nodes| Rule::DriftNodes { inclusive, nodes }),
        _ => number.strip_suffix('%').and_then(|p| p.parse::<f64>().ok()).filter(|p| p.is_finite() && *p >= 0.0).map(|percent| Rule::DriftShare { inclusive, percent }),
    })
}

fn amount_of(text: &str) -> Option<Amount> {
    let number = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    if let Some(p) = text.strip_suffix('%') {
        return number(p).map(Amount::Percent);
    }
    let dollars = text.strip_prefix('$')?;
    if let Some(h) = dollars.strip_suffix("/h") {
        return number(h).map(Amount::PerHour);
    }
    number(dollars.strip_suffix("/month")?).map(Amount::PerMonth)
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::OverBudget => f.write_str("over-budget"),
            Rule::EstimatedPrices => f.write_str("estimated-prices"),
            Rule::NodePoolRemoved => f.write_str("nodepool-removed"),
            Rule::Drift => f.write_str("drift"),
            Rule::StuckDrift => f.write_str("stuck-drift"),
            Rule::DriftNodes { inclusive, nodes } => write!(f, "drift.nodes {} {nodes}", if *inclusive { ">=" } else { ">" }),
            Rule::DriftShare { inclusive, percent } => write!(f, "drift.share {} {percent}%", if *inclusive { ">=" } else { ">" }),
            Rule::Increase { metric, inclusive, amount } => {
                let metric = match metric {
                    Metric::Cost(CostMeasure::WorstCase) => "worst-case",
                    Metric::Cost(CostMeasure::DrainPeak) => "drain-peak",
                    Metric::Cost(_) => "at-limit",
                    Metric::Expected => "expected",
                };
                let op = if *inclusive { ">=" } else { ">" };
                match amount {
                    Amount::Percent(p) => write!(f, "{metric}.increase {op} {p}%"),
                    Amount::PerHour(h) => write!(f, "{metric}.increase {op} ${h}/h"),
                    Amount::PerMonth(m) => write!(f, "{metric}.increase {op} ${m}/month"),
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Warn,
    Deny,
}

/// The rules of one run.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub fail_on: Vec<Rule>,
    pub warn_on: Vec<Rule>,
    /// NodePools whose removal is allowed: `NAME` or `CLUSTER/NAME`.
    pub allow_removal: Vec<String>,
    /// NodePools whose drift may be stuck: `NAME` or `CLUSTER/NAME`.
    pub allow_stuck_drift: Vec<String>,
}

/// One rule that held, where, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub level: Level,
    pub rule: String,
    pub scope: String,
    pub why: String,
}

/// What the policy says of a change: every finding, and the rules checked.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    pub findings: Vec<Finding>,
    pub rules: Vec<(Level, String)>,
}

impl Verdict {
    pub fn denied(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::Deny)
    }
}

impl Policy {
    /// Evaluates every rule per cluster and per profile of `before` → `after`; `drift` is what the change does to
    /// running nodes (`drift_review::pool_drifts`).
    pub fn evaluate(&self, old: &OutputTree, new: &OutputTree, before: &Figures, after: &Figures, drift: &[super::drift_review::PoolDrift]) -> Verdict {
        let mut verdict = Verdict::default();
        let mut fail_on = self.fail_on.clone();
        for always in [Rule::NodePoolRemoved, Rule::StuckDrift] {
            if !fail_on.contains(&always) {
                fail_on.push(always);
            }
        }
        for (level, rules) in [(Level::Deny, &fail_on), (Level::Warn, &self.warn_on)] {
            for rule in rules.iter() {
                verdict.rules.push((level, rule.to_string()));
                let findings = match rule {
                    Rule::NodePoolRemoved => self.removals(old, new),
                    Rule::StuckDrift => self.stuck_drifts(drift),
                    Rule::DriftNodes { .. } | Rule::DriftShare { .. } => drift.iter().filter(|d| d.drifts()).filter_map(|d| drift_size(rule, d).map(|why| (format!("cluster `{}`", d.cluster), why))).collect(),
                    Rule::Drift => drift.iter().filter(|d| d.drifts()).map(|d| (format!("cluster `{}`", d.cluster), format!("replaces nodes of NodePool `{}`: {}", d.nodepool, d.sentence()))).collect(),
                    _ => scoped(rule, before, after),
                };
                verdict.findings.extend(findings.into_iter().map(|(scope, why)| Finding { level, rule: rule.to_string(), scope, why }));
            }
        }
        verdict
    }

    fn stuck_drifts(&self, drift: &[super::drift_review::PoolDrift]) -> Vec<(String, String)> {
        let allowed = |cluster: &str, name: &str| self.allow_stuck_drift.iter().any(|a| a == name || *a == format!("{cluster}/{name}"));
        drift
            .iter()
            .filter(|d| d.stuck() && !allowed(&d.cluster, &d.nodepool))
            .flat_map(|d| d.stuck.iter().filter(|s| s.certain).map(move |s| (d, s)))
            .map(|(d, s)| {
                (format!("cluster `{}`", d.cluster), format!("the drift of NodePool `{}` cannot finish: {} (allow it by name: --allow-stuck-drift {}/{})", d.nodepool, s.why, d.cluster, d.nodepool))
            })
            .collect()
    }

    fn removals(&self, old: &OutputTree, new: &OutputTree) -> Vec<(String, String)> {
        let allowed = |cluster: &str, name: &str| self.allow_removal.iter().any(|a| a == name || *a == format!("{cluster}/{name}"));
        removed_node_pools(old, new)
            .into_iter()
            .filter(|r| !allowed(&r.cluster, &r.name))
            .map(|r| (format!("cluster `{}`", r.cluster), format!("removes NodePool `{}` (allow it by name: --allow-removal {}/{})", r.name, r.cluster, r.name)))
            .collect()
    }
}

/// Whether a size rule holds for one drifting NodePool, and why. A count nobody knows (no limit bounds the pool, no
/// cluster state, no catalog) holds: the rule exists to stop what nobody has measured.
fn drift_size(rule: &Rule, d: &super::drift_review::PoolDrift) -> Option<String> {
    let above = |value: f64, limit: f64, inclusive: bool| if inclusive { value >= limit } else { value > limit };
    let every = d.causes.iter().any(|c| c.nodes == "every node");
    match (rule, &d.roll) {
        (Rule::DriftNodes { inclusive, nodes }, Some(r)) => above(f64::from(r.drifting), f64::from(*nodes), *inclusive)
            .then(|| format!("NodePool `{}` replaces {} ({})", d.nodepool, r.nodes_words(), r.source.words())),
        (Rule::DriftShare { inclusive, percent }, Some(r)) if r.source == super::roll::NodeSource::ClusterState => {
            let share = if r.running == 0 { 0.0 } else { f64::from(r.drifting) / f64::from(r.running) * 100.0 };
            above(share, *percent, *inclusive).then(|| format!("NodePool `{}` replaces {share:.0}% of its nodes ({})", d.nodepool, r.nodes_words()))
        }
        (Rule::DriftShare { inclusive, percent }, _) => above(100.0, *percent, *inclusive).then(|| {
            let why = if every { "every node" } else { "up to every node: which nodes run is not known without --cluster-state" };
            format!("NodePool `{}` replaces {why}", d.nodepool)
        }),
        (Rule::DriftNodes { .. }, None) => Some(format!("NodePool `{}` replaces nodes, how many is not known (its roll was not replayed: stuck, no accelerator limit, or no catalog)", d.nodepool)),
        _ => None,
    }
}

/// The rule in every cluster (its profiles summed) and every profile of either tree.
fn scoped(rule: &Rule, before: &Figures, after: &Figures) -> Vec<(String, String)> {
    let empty = ProfileFigures::default();
    let clusters: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut out = Vec::new();
    for cluster in clusters {
        let (b, a) = (before.get(cluster), after.get(cluster));
        let profiles: BTreeSet<&String> = b.into_iter().chain(a).flat_map(|m| m.keys()).collect();
        let sum = |m: Option<&std::collections::BTreeMap<String, ProfileFigures>>, metric| cents(m.map_or(0.0, |m| m.values().map(|p| p.metric(metric)).sum()));
        if let Rule::Increase { metric, .. } = rule
            && let Some(why) = increase(rule, sum(b, *metric), sum(a, *metric))
        {
            out.push((format!("cluster `{cluster}`"), why));
        }
        for profile in profiles {
            let pb = b.and_then(|m| m.get(profile)).unwrap_or(&empty);
            let pa = a.and_then(|m| m.get(profile)).unwrap_or(&empty);
            // A rule on the state after the change (over-budget, estimated-prices) judges the profiles the change
            // touches: a pull request is not denied for a profile it leaves as it was.
            if pb == pa {
                continue;
            }
            if let Some(why) = profile_rule(rule, pb, pa) {
                out.push((format!("profile `{profile}` in `{cluster}`"), why));
            }
        }
    }
    out
}

fn profile_rule(rule: &Rule, before: &ProfileFigures, after: &ProfileFigures) -> Option<String> {
    match rule {
        Rule::Increase { metric, .. } => increase(rule, before.metric(*metric), after.metric(*metric)),
        Rule::OverBudget => {
            let (worst, budget) = (after.total(CostMeasure::WorstCase), after.budget?);
            (worst > budget + 0.005).then(|| format!("worst case ${worst:.2}/h is above the budget ${budget:.2}/h"))
        }
        Rule::EstimatedPrices => {
            let estimated: Vec<&str> = after.pools.iter().filter(|(_, p)| p.estimated_prices).map(|(n, _)| n.as_str()).collect();
            (!estimated.is_empty()).then(|| format!("costs from estimated spot prices: {}", estimated.join(", ")))
        }
        Rule::NodePoolRemoved | Rule::Drift | Rule::StuckDrift | Rule::DriftNodes { .. } | Rule::DriftShare { .. } => None,
    }
}

fn increase(rule: &Rule, before: f64, after: f64) -> Option<String> {
    let Rule::Increase { inclusive, amount, .. } = rule else { return None };
    let delta = cents(after - before);
    if delta <= 0.0 {
        return None;
    }
    let above = |value: f64, limit: f64| if *inclusive { value >= limit } else { value > limit };
    let held = match amount {
        Amount::Percent(p) => before <= 0.0 || above(delta / before * 100.0, *p),
        Amount::PerHour(h) => above(delta, *h),
        Amount::PerMonth(m) => above(delta * HOURS_PER_MONTH, *m),
    };
    let percent = if before > 0.0 { format!(" ({:+.1}%)", delta / before * 100.0) } else { String::new() };
    held.then(|| format!("${before:.2}/h → ${after:.2}/h, +${delta:.2}/h{percent}, +${:.0}/month", delta * HOURS_PER_MONTH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_reads_every_form_and_refuses_the_rest() {
        let rule = |t: &str| t.parse::<Rule>();
        assert_eq!(rule("worst-case.increase > 10%"), Ok(Rule::Increase { metric: Metric::Cost(CostMeasure::WorstCase), inclusive: false, amount: Amount::Percent(10.0) }));
        assert_eq!(rule("drain-peak.increase>=$50/h"), Ok(Rule::Increase { metric: Metric::Cost(CostMeasure::DrainPeak), inclusive: true, amount: Amount::PerHour(50.0) }));
        assert_eq!(rule("at-limit.increase > $730/month"), Ok(Rule::Increase { metric: Metric::Cost(CostMeasure::AtLimit), inclusive: false, amount: Amount::PerMonth(730.0) }));
        assert_eq!(rule("expected.increase > 5%"), Ok(Rule::Increase { metric: Metric::Expected, inclusive: false, amount: Amount::Percent(5.0) }));
        assert!(rule("expected.increase > 5%").unwrap().needs_forecast() && !rule("at-limit.increase > 5%").unwrap().needs_forecast());
        assert_eq!(rule("expected.increase >= $5000/month").unwrap().to_string(), "expected.increase >= $5000/month", "shown as written");
        assert_eq!(rule(" over-budget "), Ok(Rule::OverBudget));
        for bad in ["worst-case > 10%", "budget.increase > 1%", "worst-case.increase < 1%", "worst-case.increase > ten%", "worst-case.increase > $5", "worst-case.increase > -1%"] {
            assert!(rule(bad).is_err(), "{bad} was read");
        }
        assert_eq!(rule("worst-case.increase >= $2.5/h").unwrap().to_string(), "worst-case.increase >= $2.5/h");
        assert_eq!(rule("drift.nodes > 10"), Ok(Rule::DriftNodes { inclusive: false, nodes: 10 }));
        assert_eq!(rule("drift.share>=25%"), Ok(Rule::DriftShare { inclusive: true, percent: 25.0 }));
        assert_eq!(rule("drift.share >= 25%").unwrap().to_string(), "drift.share >= 25%");
        assert_eq!(rule(" stuck-drift "), Ok(Rule::StuckDrift));
        for bad in ["drift.nodes > ten", "drift.nodes > 1.5", "drift.share > 25", "drift.share > -1%"] {
            assert!(rule(bad).is_err(), "{bad} was read");
        }
    }

    #[test]
    fn an_expected_increase_judges_the_forecasts_figures() {
        let figures = |expected: f64| -> Figures {
            let profile = ProfileFigures { expected: Some(expected), ..ProfileFigures::default() };
            [("c".to_string(), [("p".to_string(), profile)].into())].into()
        };
        let policy = Policy { fail_on: vec!["expected.increase > 5%".parse().unwrap()], ..Policy::default() };
        let empty = OutputTree::default();
        let verdict = policy.evaluate(&empty, &empty, &figures(10.0), &figures(11.0), &[]);
        assert!(verdict.denied(), "+10% of the forecast: {:?}", verdict.findings);
        assert!(!policy.evaluate(&empty, &empty, &figures(10.0), &figures(10.4), &[]).denied(), "+4% holds nothing");
    }

    #[test]
    fn an_increase_holds_by_percentage_or_dollars_and_from_nothing() {
        let r = |t: &str| t.parse::<Rule>().unwrap();
        assert!(increase(&r("worst-case.increase > 10%"), 100.0, 111.0).is_some());
        assert!(increase(&r("worst-case.increase > 10%"), 100.0, 110.0).is_none(), "not above 10%");
        assert!(increase(&r("worst-case.increase >= 10%"), 100.0, 110.0).is_some());
        assert!(increase(&r("worst-case.increase > 10%"), 0.0, 1.0).is_some(), "from nothing is above every percentage");
        assert!(increase(&r("worst-case.increase > $5/h"), 100.0, 104.0).is_none());
        assert_eq!(increase(&r("worst-case.increase > $5/h"), 100.0, 106.0).as_deref(), Some("$100.00/h → $106.00/h, +$6.00/h (+6.0%), +$4380/month"));
        assert!(increase(&r("worst-case.increase > 0%"), 100.0, 90.0).is_none(), "a decrease never holds");
        assert!(increase(&r("worst-case.increase > $730/month"), 100.0, 101.5).is_some() && increase(&r("worst-case.increase > $730/month"), 100.0, 100.5).is_none());
    }
}
