//! What a NodePool says about disruption and lifetime, read from its generated object: `spec.disruption`
//! (`consolidationPolicy`, `consolidateAfter`, `budgets`) and `spec.template.spec` (`expireAfter`,
//! `terminationGracePeriod`), as kubernetes-sigs/karpenter v1.14.1 `pkg/apis/v1/nodepool.go` defines them, and the
//! budgets' windows as `nodepool.go` `GetAllowedDisruptionsByReason` / `Budget.IsActive` evaluate them.

use serde_json::Value;

use crate::forecast::timeline::EndedBy;

/// `spec.disruption.consolidationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consolidation {
    WhenEmpty,
    WhenEmptyOrUnderutilized,
    /// Underutilized moves scored against their disruption (balanced.go, `BalancedK` = 2).
    Balanced,
}

impl Consolidation {
    /// Whether underutilized (not only empty) nodes are consolidated.
    pub fn underutilized(self) -> bool {
        self != Consolidation::WhenEmpty
    }
}

/// A NodePool's disruption and lifetime settings, durations in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub consolidation: Consolidation,
    /// None: `Never` (no consolidation at all).
    pub consolidate_after: Option<u64>,
    pub budgets: Vec<Budget>,
    /// None: `Never`.
    pub expire_after: Option<u64>,
    /// None: pods blocked by a PDB or `do-not-disrupt` block the drain for ever.
    pub termination_grace: Option<u64>,
}

impl Default for Policy {
    /// The API defaults (nodepool.go kubebuilder defaults): WhenEmptyOrUnderutilized, consolidateAfter 0s, one budget
    /// of 10%, expireAfter 720h, no grace period.
    fn default() -> Policy {
        Policy {
            consolidation: Consolidation::WhenEmptyOrUnderutilized,
            consolidate_after: Some(0),
            budgets: vec![Budget { nodes: BudgetNodes::Percent(10), reasons: None, window: None }],
            expire_after: Some(720 * 3600),
            termination_grace: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetNodes {
    Count(u64),
    Percent(u64),
}

/// One `spec.disruption.budgets` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub nodes: BudgetNodes,
    /// None: every reason.
    pub reasons: Option<Vec<EndedBy>>,
    /// `schedule` and `duration`: active only within `duration` after each time the cron schedule fires.
    pub window: Option<(Cron, u64)>,
}

impl Budget {
    /// nodepool.go `Budget.IsActive`: no schedule, or the schedule fired within `(now - duration, now]`.
    pub fn active(&self, now: u64) -> bool {
        let Some((cron, duration)) = &self.window else { return true };
        cron.last_fire_at_or_before(now).is_some_and(|f| f + *duration as i64 > now as i64)
    }

    /// The allowed disruptions out of `nodes` (`intstr.GetScaledValueFromIntOrPercent`, rounded up).
    pub fn allowed(&self, nodes: u64) -> u64 {
        match self.nodes {
            BudgetNodes::Count(n) => n,
            BudgetNodes::Percent(p) => (nodes * p).div_ceil(100),
        }
    }

    fn applies(&self, reason: EndedBy) -> bool {
        self.reasons.as_ref().is_none_or(|r| r.contains(&reason))
    }
}

impl Policy {
    /// nodepool.go `GetAllowedDisruptionsByReason`: the smallest allowance of the budgets active now for the reason
    /// (no active budget: unlimited).
    pub fn allowed_disruptions(&self, now: u64, nodes: u64, reason: EndedBy) -> u64 {
        self.budgets.iter().filter(|b| b.applies(reason) && b.active(now)).map(|b| b.allowed(nodes)).min().unwrap_or(u64::MAX)
    }

    /// The times in `(after, horizon]` at which a budget opens or closes: the disruption controller may decide
    /// differently from then on.
    pub fn budget_boundaries(&self, after: u64) -> impl Iterator<Item = u64> + '_ {
        self.budgets.iter().filter_map(move |b| {
            let (cron, duration) = b.window.as_ref()?;
            let next_fire = cron.first_fire_after(after);
            let close = cron.last_fire_at_or_before(after).map(|f| f + *duration as i64).filter(|c| *c > after as i64).map(|c| c as u64);
            [next_fire, close].into_iter().flatten().min()
        })
    }
}

/// Reads a NodePool object's policy; what it leaves out takes the API defaults. `horizon` bounds the cron schedules'
/// fire times computed up front; `start_unix` is the run's second 0 on the calendar.
pub fn read(nodepool: &Value, horizon: u64, start_unix: i64) -> Policy {
    let d = nodepool.pointer("/spec/disruption");
    let spec = nodepool.pointer("/spec/template/spec");
    let defaults = Policy::default();
    let text = |v: Option<&Value>, key: &str| v.and_then(|v| v.get(key)).and_then(Value::as_str).map(str::to_string);
    let consolidation = match text(d, "consolidationPolicy").as_deref() {
        Some("WhenEmpty") => Consolidation::WhenEmpty,
        Some("Balanced") => Consolidation::Balanced,
        _ => Consolidation::WhenEmptyOrUnderutilized,
    };
    Policy {
        consolidation,
        consolidate_after: text(d, "consolidateAfter").map_or(defaults.consolidate_after, |a| duration(&a)),
        budgets: d.and_then(|d| d.get("budgets")).and_then(Value::as_array).map_or(defaults.budgets, |b| b.iter().filter_map(|b| budget(b, horizon, start_unix)).collect()),
        expire_after: text(spec, "expireAfter").map_or(defaults.expire_after, |e| duration(&e)),
        termination_grace: text(spec, "terminationGracePeriod").and_then(|g| duration(&g)),
    }
}

fn budget(b: &Value, horizon: u64, start_unix: i64) -> Option<Budget> {
    let nodes = match b.get("nodes")?.as_str()? {
        n if n.ends_with('%') => BudgetNodes::Percent(n.trim_end_matches('%').parse().ok()?),
        n => BudgetNodes::Count(n.parse().ok()?),
    };
    let reasons = b.get("reasons").and_then(Value::as_array).map(|r| {
        r.iter()
            .filter_map(Value::as_str)
            .filter_map(|r| match r {
                "Empty" => Some(EndedBy::Empty),
                "Underutilized" => Some(EndedBy::Underutilized),
                "Drifted" => Some(EndedBy::Drifted),
                _ => None,
            })
            .collect()
    });
    let window = match (b.get("schedule").and_then(Value::as_str), b.get("duration").and_then(Value::as_str)) {
        (Some(s), Some(d)) => Some((Cron::parse(s, horizon + duration(d).unwrap_or(0), start_unix)?, duration(d)?)),
        _ => None,
    };
    Some(Budget { nodes, reasons, window })
}

/// A Go `time.ParseDuration` string (`5m`, `720h`, `1h30m`, `30s`) in whole seconds; `Never` is None.
pub fn duration(text: &str) -> Option<u64> {
    if text == "Never" {
        return None;
    }
    let mut total = 0.0;
    let mut number = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let mut unit = c.to_string();
        if c == 'm' && chars.peek() == Some(&'s') {
            unit.push(chars.next()?);
        }
        let scale = match unit.as_str() {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += number.parse::<f64>().ok()? * scale;
        number.clear();
    }
    number.is_empty().then_some(total as u64)
}

/// A budget's cron schedule (robfig/cron's standard 5-field parser, which Karpenter uses: minute, hour, day of month,
/// month, day of week, with `*`, `a-b`, `*/n`, `a,b` and the `@daily`-style descriptors), as its fire times over the
/// run, computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct Cron {
    /// Seconds from the start, ascending; the last fire before the start (if any in the week before) first.
    fires: Vec<i64>,
}

impl Cron {
    /// `start_unix`: the run's second 0 on the calendar (UTC, as Karpenter reads schedules).
    pub fn parse(spec: &str, horizon: u64, start_unix: i64) -> Option<Cron> {
        let spec = match spec.trim() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            s => s,
        };
        let f: Vec<&str> = spec.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = f.as_slice() else { return None };
        let fields = [field(minute, 0, 59)?, field(hour, 0, 23)?, field(dom, 1, 31)?, field(month, 1, 12)?, field(dow, 0, 7)?];
        // robfig/cron `dayMatches`: when both day fields are restricted, either may match.
        let (dom_star, dow_star) = (dom.starts_with('*'), dow.starts_with('*'));
        let mut fires = Vec::new();
        // From 35 days before the start (a budget's duration may reach into the run from a fire before it) to the
        // horizon, minute by minute: 80,000 checks for a 30-day run, once per budget.
        let first = -35 * 86_400;
        for minute_start in (first..=horizon as i64).step_by(60) {
            let Ok(t) = time::OffsetDateTime::from_unix_timestamp(start_unix + minute_start) else { continue };
            let dow_value = t.weekday().number_days_from_sunday() as usize;
            let dom_ok = fields[2][t.day() as usize];
            let dow_ok = fields[4][dow_value] || (dow_value == 0 && fields[4][7]);
            let day_ok = if dom_star || dow_star { dom_ok && dow_ok } else { dom_ok || dow_ok };
            if fields[0][t.minute() as usize] && fields[1][t.hour() as usize] && fields[3][u8::from(t.month()) as usize] && day_ok {
                fires.push(minute_start);
            }
        }
        Some(Cron { fires })
    }

    /// The last fire at or before `now` (negative: before the run's start).
    pub fn last_fire_at_or_before(&self, now: u64) -> Option<i64> {
        let i = self.fires.partition_point(|&f| f <= now as i64);
        self.fires.get(i.checked_sub(1)?).copied()
    }

    pub fn first_fire_after(&self, after: u64) -> Option<u64> {
        let i = self.fires.partition_point(|&f| f <= after as i64);
        self.fires.get(i).map(|&f| f as u64)
    }
}

/// One cron field as the values it admits (index = value).
fn field(text: &str, min: usize, max: usize) -> Option<Vec<bool>> {
    let mut set = vec![false; max + 1];
    for part in text.split(',') {
        let (range, step) = part.split_once('/').map_or((part, 1), |(r, s)| (r, s.parse().unwrap_or(0)));
        if step == 0 {
            return None;
        }
        let (lo, hi) = match range {
            "*" | "?" => (min, max),
            r => match r.split_once('-') {
                Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
                None => {
                    let v: usize = r.parse().ok()?;
                    (v, if part.contains('/') { max } else { v })
                }
            },
        };
        if lo < min || hi > max || lo > hi {
            return None;
        }
        (lo..=hi).step_by(step).for_each(|v| set[v] = true);
    }
    Some(set)
}
