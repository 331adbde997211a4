//! The table format: aligned plain-text columns for a terminal, no colour.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::model::{EXAMPLES, Explanation, FindingExplanation, PoolExplanation, ProfileExplanation, QueueExplanation};
use crate::catalog::AcceleratorKind;
use crate::catalog::cost::Bound;
use crate::layout::write_table;

/// `queue research (namespace ml-research, cohort ml, gang: gpus share="50%")`, then one line per flavor:
/// `→ flavor training-reserved → NodePool training-reserved (limit 16): nominal 8 → $55.04/h; + borrowing 8 → $110.08/h`.
pub(super) fn write_queues(out: &mut String, queues: &[QueueExplanation]) {
    if queues.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n  queues (Kueue: queue → flavor → NodePool → worst case $/h)");
    for q in queues {
        let mut about = vec![format!("namespace {}", q.namespace)];
        about.extend(q.cohort.as_ref().map(|c| format!("cohort {c}")));
        if q.gang {
            about.push("gang".into());
        }
        let _ = writeln!(out, "    queue {} ({}: {})", q.name, about.join(", "), q.quota);
        for f in &q.flavors {
            let held = if f.non_queued > 0 { format!(", {} held by non-queued workloads at max replicas", f.non_queued) } else { String::new() };
            let mut line = format!("      → flavor {0} → NodePool {0} (limit {1} {2}{held}): nominal {3} → ${4:.2}/h", f.flavor, f.nodepool_limit, q.resource, f.nominal, f.nominal_usd_per_hour);
            if let Some(b) = f.borrowing_limit {
                let _ = write!(line, "; + borrowing {b} → ${:.2}/h", f.with_borrowing_usd_per_hour);
            }
            if let Some(l) = f.lending_limit {
                let _ = write!(line, "; lends at most {l}");
            }
            let _ = writeln!(out, "{line}");
        }
        for nodepool in &q.full {
            let _ = writeln!(out, "      → NodePool {nodepool}: no flavor, non-queued workloads at max replicas hold its whole limit");
        }
    }
}

/// "$12.34/h" with a `*` when estimated (a space otherwise, so columns of them stay aligned).
pub(super) fn money(v: f64, decimals: usize, estimate: bool) -> String {
    format!("{v:.decimals$}{}", if estimate { "*" } else { " " })
}

/// The profile's steady-state worst case, its drain peak against the budget, and the prices the budget check could
/// not verify, as (label, text) lines.
fn profile_bounds(p: &ProfileExplanation) -> Lines {
    let bound = match p.worst_case_bound {
        Bound::Empirical => "EMPIRICAL bound, not guaranteed: some spot pools are bounded by observed spot prices",
        Bound::Estimated => "ESTIMATED bound, not guaranteed: some on-demand prices are estimates (see unverified)",
        Bound::Guaranteed => "guaranteed bound: every pool at its limits on its priciest type, spot at the on-demand price",
    };
    let mut lines: Lines = vec![
        ("worst case", format!("{}  (steady state; {bound})", per_hour(p.worst_case_usd_per_hour, p.worst_case_is_estimate))),
        ("covers", crate::catalog::ebs::COVERS.to_string()),
    ];
    let over = p.budget_usd_per_hour.filter(|b| p.drain_peak_usd_per_hour > b + 1e-9).map(|b| format!("; over the budget by ${:.2}/h", p.drain_peak_usd_per_hour - b));
    let duration = p.drain_peak_for.as_ref().map_or_else(|| "with no end (a pool has no terminationGracePeriod)".to_string(), |g| format!("for up to {g}"));
    lines.push((
        "drain peak",
        format!(
            "{}  ({duration} while nodes drain beside their replacements: Karpenter leaves deleting nodes out of the limits{})",
            per_hour(p.drain_peak_usd_per_hour, p.worst_case_is_estimate),
            over.unwrap_or_default()
        ),
    ));
    if !p.unverified_prices.is_empty() {
        let shown: Vec<&str> = p.unverified_prices.iter().take(EXAMPLES).map(String::as_str).collect();
        let more = p.unverified_prices.len().saturating_sub(shown.len());
        lines.push((
            "unverified",
            format!(
                "the budget check used estimated on-demand prices for {} type(s): {}{} (see the footnotes)",
                p.unverified_prices.len(),
                shown.join(", "),
                if more > 0 { format!(", … +{more}") } else { String::new() }
            ),
        ));
    }
    lines
}

/// Labelled lines of a profile or NodePool section: ("limit", "8 nvidia.com/gpu: …"); an empty label continues the
/// line above.
pub(super) type Lines = Vec<(&'static str, String)>;

/// A table's columns (right-aligned or not) and rows, for either format.
pub(super) struct Grid {
    pub headers: &'static [&'static str],
    pub right: &'static [bool],
    pub rows: Vec<Vec<String>>,
}

/// Appends labelled lines with the labels in a column `width` wide.
fn write_lines(out: &mut String, indent: &str, width: usize, lines: &Lines) {
    for (label, text) in lines {
        let _ = writeln!(out, "{indent}{label:<width$} {text}");
    }
}

pub(super) fn per_hour(v: f64, estimate: bool) -> String {
    format!("${v:.2}/h{}", if estimate { "*" } else { "" })
}

/// Appends a [`Grid`] as an aligned table.
fn write_grid(out: &mut String, indent: &str, grid: &Grid) {
    write_table(out, indent, grid.headers, grid.right, &grid.rows);
}

pub(super) fn write_findings(out: &mut String, indent: &str, findings: &[FindingExplanation]) {
    for f in findings {
        let _ = writeln!(out, "{indent}{} {}: {}", f.code, f.location, f.message);
        if let Some(help) = &f.help {
            let _ = writeln!(out, "{indent}      help: {help}");
        }
    }
}

/// The table format.
pub fn table(e: &Explanation) -> String {
    let mut out = String::new();
    for cluster in &e.clusters {
        let _ = writeln!(out, "cluster {} ({}, catalog {})", cluster.name, cluster.region, cluster.catalog);
        crate::check::write_placements(&mut out, &cluster.workloads);
        write_queues(&mut out, &cluster.queues);
        for p in &cluster.profiles {
            write_profile(&mut out, p);
            for pool in &p.pools {
                write_pool(&mut out, pool);
            }
        }
        out.push('\n');
    }
    for s in &e.estimate_sources {
        let _ = writeln!(out, "* estimate [{}]: {}", s.id, s.description);
    }
    out
}

/// A profile's heading: its budget, at-limit cost, bounds and profile-wide lint findings.
fn write_profile(out: &mut String, p: &ProfileExplanation) {
    let _ = writeln!(out, "\nprofile {} ({}, priority {})", p.name, p.source, p.priority);
    write_lines(out, "  ", 12, &profile_lines(p));
    if !p.findings.is_empty() {
        let _ = writeln!(out, "  lint");
        write_findings(out, "    ", &p.findings);
    }
}

/// A profile's budget, at-limit cost and bounds.
pub(super) fn profile_lines(p: &ProfileExplanation) -> Lines {
    let budget = match (p.budget_usd_per_hour, p.worst_case_budget_share) {
        (Some(b), Some(share)) => format!(
            "${b:.2}/h; worst case is {:.0}% of it{}",
            share * 100.0,
            if share > 1.0 + 1e-9 { " — OVER BUDGET" } else { "" }
        ),
        _ => "none (limits come from max-accelerators)".into(),
    };
    let mut lines: Lines = vec![
        ("budget", budget),
        (
            "at limit",
            format!(
                "{}  (every pool at its limit on its cheapest type, spot where allowed: a reference, not a forecast)",
                per_hour(p.at_limit_usd_per_hour, p.at_limit_is_estimate)
            ),
        ),
    ];
    lines.extend(profile_bounds(p));
    lines
}

/// One NodePool: its size and cost, what its pods need, its candidates, what the constraints removed, and its
/// allow list, notes and lint findings.
fn write_pool(out: &mut String, pool: &PoolExplanation) {
    let _ = writeln!(out, "\n  {}", pool_heading(pool));
    write_lines(out, "    ", 10, &pool_lines(pool));
    let _ = writeln!(out, "    candidates {}", candidates_title(pool));
    write_grid(out, "      ", &candidate_grid(pool));
    write_lines(out, "    ", 10, &overlay_lines(pool));
    if !pool.removed.is_empty() {
        let _ = writeln!(out, "    removed    by constraint, in the order applied:");
        write_grid(out, "      ", &removed_grid(pool));
    }
    write_lines(out, "    ", 10, &pool_tail_lines(pool));
    if !pool.findings.is_empty() {
        let _ = writeln!(out, "    lint");
        write_findings(out, "      ", &pool.findings);
    }
}

/// "NodePool a (pool p, tier 1 of 2; spot; weight 40)".
pub(super) fn pool_heading(pool: &PoolExplanation) -> String {
    format!(
        "NodePool {} (pool {}, tier {} of {}; {}; {})",
        pool.name,
        pool.pool,
        pool.tier,
        pool.tiers,
        pool.capacity_types.join(", "),
        pool.replicas.map_or(format!("weight {}", pool.weight), |r| if r == 0 { "static, parked (0 replicas)".to_string() } else { format!("static, {r} replicas") })
    )
}

/// Its replicas or weight and why, its limits, largest node, cost and drain peak, and what its pods need.
pub(super) fn pool_lines(pool: &PoolExplanation) -> Lines {
    let mut lines: Lines = vec![match pool.replicas {
        Some(0) => ("static", format!("parked: 0 replicas (spec.replicas 0), no node launched, no cost; raise replicas to launch them; weight {}", pool.weight_reason)),
        Some(r) => ("static", format!("{r} replicas (spec.replicas); weight {}", pool.weight_reason)),
        None => ("weight", format!("{}: {}", pool.weight, pool.weight_reason)),
    }];
    let sharing = if pool.units_per_accelerator > 1 { format!(" ({} per physical accelerator)", pool.units_per_accelerator) } else { String::new() };
    lines.push(("limit", format!("{} {}{sharing}: {}", pool.limit, pool.resource, pool.limit_reason)));
    if let Some(cpu) = pool.cpu_limit {
        let why = if pool.units_per_accelerator > 1 { "caps the physical nodes while Karpenter counts physical GPUs against a limit in slices" } else { "the profile's `limits cpu`: caps the worst case" };
        lines.push(("cpu limit", format!("{cpu}: {why}")));
    }
    lines.push(("largest", format!("{} {} per node", pool.largest_node, pool.resource)));
    lines.push((
        "cost",
        format!(
            "at limit (cheapest type) {}, worst case {} ({})",
            per_hour(pool.at_limit_usd_per_hour, pool.at_limit_is_estimate),
            per_hour(pool.worst_case_usd_per_hour, pool.worst_case_is_estimate),
            pool.worst_case_basis
        ),
    ));
    if let Some(basis) = &pool.drain_peak_basis {
        lines.push(("drain peak", format!("{}: {basis}", per_hour(pool.drain_peak_usd_per_hour, pool.worst_case_is_estimate))));
    }
    if let Some(way_back) = &pool.way_back {
        lines.push(("way back", way_back.clone()));
    }
    let selector: Vec<String> = pool.placement.node_selector.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    lines.push(("pods need", format!("nodeSelector {{{}}}", selector.join(", "))));
    lines.extend(pool.placement.tolerations.iter().map(|t| ("", format!("toleration {t}"))));
    lines.extend(pool.placement.spread.iter().map(|spread| ("", format!("topologySpreadConstraint {spread} over the workload's pods (labelSelector: its selector)"))));
    if !pool.placement.requests.is_empty() {
        lines.push(("", format!("requests {{{}}} per pod of {} {}", pool.placement.requests_text(), pool.largest_node, pool.resource)));
    }
    lines
}

/// Its allow list and notes.
pub(super) fn pool_tail_lines(pool: &PoolExplanation) -> Lines {
    let mut lines: Lines = Vec::new();
    if !pool.allow.is_empty() {
        lines.push(("allow", pool.allow.join(", ")));
    }
    lines.extend(pool.notes.iter().map(|note| ("note", note.clone())));
    lines
}

/// "15 types, cheapest $/accelerator-hour first:".
pub(super) fn candidates_title(pool: &PoolExplanation) -> String {
    let unit = if is_cpu(pool) { "vCPU" } else { "accelerator" };
    format!("{} type{}, cheapest $/{unit}-hour first:", pool.candidates.len(), if pool.candidates.len() == 1 { "" } else { "s" })
}

/// A CPU pool's unit is the vCPU: its columns say so.
fn is_cpu(pool: &PoolExplanation) -> bool {
    pool.resource == AcceleratorKind::Cpu.resource()
}

/// The candidate types, cheapest $/unit-hour first.
pub(super) fn candidate_grid(pool: &PoolExplanation) -> Grid {
    let rows: Vec<Vec<String>> = pool
        .candidates
        .iter()
        .map(|c| {
            vec![
                c.rank.to_string(),
                c.name.clone(),
                c.accelerators.to_string(),
                c.accelerator_name.clone(),
                format!("{:.1}", c.memory_gib_per_accelerator),
                money(c.usd_per_hour, 4, c.estimate),
                money(c.usd_per_accelerator_hour, 4, c.estimate),
                money(c.usd_per_accelerator_gib_hour, 4, c.estimate),
                money(c.ceiling_usd_per_accelerator_hour, 4, c.ceiling_estimate),
            ]
        })
        .collect();
    let headers: &'static [&'static str] = if is_cpu(pool) {
        &["#", "type", "vCPU", "model", "GiB/vCPU", "$/h ", "$/vCPU-h ", "$/vCPU-GiB-h ", "worst $/vCPU-h "]
    } else {
        &["#", "type", "accel", "model", "GiB/accel", "$/h ", "$/accel-h ", "$/accel-GiB-h ", "worst $/accel-h "]
    };
    Grid { headers, right: &[true, false, true, false, true, true, true, true, true], rows }
}

/// The types ranked at an overlay's price.
pub(super) fn overlay_lines(pool: &PoolExplanation) -> Lines {
    let mut by_overlay: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for c in &pool.candidates {
        if let Some(o) = &c.overlay {
            by_overlay.entry(o).or_default().push(&c.name);
        }
    }
    by_overlay
        .into_iter()
        .map(|(overlay, types)| ("overlay", format!("{} ranked at the price of {overlay}, as Karpenter ranks them ($/h and worst case at list price)", types.join(", "))))
        .collect()
}

/// What each constraint removed, in the order applied, with a few examples.
pub(super) fn removed_grid(pool: &PoolExplanation) -> Grid {
    let rows: Vec<Vec<String>> = pool
        .removed
        .iter()
        .map(|r| {
            let shown: Vec<&str> = r.types.iter().take(EXAMPLES).map(|t| t.name.as_str()).collect();
            let more = r.count.saturating_sub(shown.len());
            let examples = format!("{}{}", shown.join(", "), if more > 0 { format!(", … +{more}") } else { String::new() });
            vec![r.constraint.clone(), r.count.to_string(), examples]
        })
        .collect();
    Grid { headers: &["constraint", "removed", "examples"], right: &[false, true, false], rows }
}

/// `--why-not`: per type, one line per NodePool (`cluster/profile/NodePool: candidate, rank 2 of 15: …`).
pub fn why_not_table(answers: &[super::WhyNot]) -> String {
    let mut out = String::new();
    for w in answers {
        let _ = writeln!(out, "why not {} ({})?", w.instance_type, w.has);
        for p in &w.pools {
            let _ = writeln!(out, "  {}/{}/{}: {}", p.cluster, p.profile, p.nodepool, p.verdict.describe());
        }
        if w.pools.is_empty() {
            let _ = writeln!(out, "  no NodePool in the selected profiles");
        }
    }
    out
}
