//! The markdown summary of a change: the pull-request comment.

use std::collections::{BTreeMap, BTreeSet};

use super::detail::{CostMeasure, Detail, ObjectChange, money, signed_money};
use super::policy::{HOURS_PER_MONTH, Level, Verdict};
use super::pools::{Figures, PoolFigures, ProfileFigures, cents, figures, queue_quotas};
use super::semantic::{REMOVAL_WARNING, change_words, removed_node_pools, semantic_changes};
use super::unified::slash;
use crate::emit::{ChangeKind, FileChange, changes};
use crate::layout::{OutputTree, cluster_of};

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// What the review comment says beyond the two trees: the policy's verdict, and the footer the caller computes
/// (the catalog's age needs a clock, which the caller injects).
#[derive(Debug, Clone, Default)]
pub struct ReviewContext<'a> {
    pub verdict: Option<&'a Verdict>,
    pub footer: Option<String>,
    /// Each workload at max replicas before → after, simulated as `explain` does (the caller compiles both sides:
    /// out/ does not record the pods' requests).
    pub workloads: Vec<WorkloadRow>,
    /// Both sides forecast on the same seeds, when the repository has a demand file: the expected cost.
    pub forecast: Option<super::forecast::ForecastReview>,
    /// What merging does to running nodes, when the caller has the catalogs to judge it (`drift_review`).
    pub drift: Option<Vec<super::drift_review::PoolDrift>>,
}

/// One workload of a profile at max replicas, on each side of the change (None: not declared there).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRow {
    pub cluster: String,
    pub profile: String,
    /// `namespace/name`.
    pub workload: String,
    pub before: Option<WorkloadAt>,
    pub after: Option<WorkloadAt>,
}

/// Where a workload's replicas land at max replicas: how many, what their nodes cost, how many pend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadAt {
    pub replicas: u32,
    pub usd_per_hour: f64,
    pub pending: usize,
}

/// The markdown summary without policy or footer (see [`render_review`]).
pub fn render_markdown(old: &OutputTree, new: &OutputTree) -> String {
    render_review(old, new, &ReviewContext::default())
}

/// The pull-request comment, in the order a reviewer reads it (after Infracost's comment: one headline with the
/// change in $/h and $/month, then per project, the details collapsed): the totals, the NodePools the change
/// removes, the policy's verdict, then per cluster and profile the NodePools' costs with a chart against the
/// budget, the other changed objects, and the files.
pub fn render_review(old: &OutputTree, new: &OutputTree, ctx: &ReviewContext) -> String {
    let files = changes(old, new);
    let mut policy = String::new();
    if let Some(verdict) = ctx.verdict {
        push_policy(&mut policy, verdict);
    }
    if files.is_empty() {
        // The policy only when it found something (the rules it passes say nothing of a change that is not there).
        let findings = ctx.verdict.is_some_and(|v| !v.findings.is_empty());
        return format!("## gpuplan: no changes to out/\n{}", if findings { policy.as_str() } else { "" });
    }
    let objects = semantic_changes(old, new);
    let (before, after) = (figures(old), figures(new));
    let (quotas_before, quotas_after) = (queue_quotas(old), queue_quotas(new));
    let removed = removed_node_pools(old, new);
    let clusters: BTreeSet<String> = files.iter().map(|f| cluster_of(&f.path).unwrap_or_default()).chain(objects.iter().map(|o| o.cluster.clone())).collect();
    let count = |k: ChangeKind| objects.iter().filter(|o| o.change == k).count();
    let mut s = String::from("## gpuplan: changes to out/\n");
    if let Some(drift) = &ctx.drift {
        s.push_str(&super::drift_review::markdown_section(drift));
    }
    s.push('\n');
    s.push_str(&headline(&before, &after));
    let worst = |f: &super::pools::Figures| f.values().flat_map(|p| p.values()).map(|p| p.total(CostMeasure::WorstCase)).sum::<f64>();
    if let Some(note) = ctx.drift.as_deref().and_then(|d| super::drift_review::savings_note(d, cents(worst(&after) - worst(&before)))) {
        s.push_str(&note);
    }
    if let Some(review) = &ctx.forecast {
        s.push_str(&super::forecast::section(review));
    }
    s.push_str(&format!(
        "\n{} object(s) changed: {} added, {} modified, {} removed; {} file(s).\n",
        objects.len(),
        count(ChangeKind::Added),
        count(ChangeKind::Modified),
        count(ChangeKind::Removed),
        files.len()
    ));
    if !removed.is_empty() {
        s.push_str(&format!("\n> [!WARNING]\n> This change removes {} NodePool(s): {REMOVAL_WARNING}.\n", removed.len()));
        for r in &removed {
            s.push_str(&format!("> - {}\n", md_escape(&r.to_string())));
        }
    }
    s.push_str(&policy);
    for cluster in clusters {
        let title = if cluster.is_empty() { "out/".to_owned() } else { format!("`{cluster}`") };
        s.push_str(&format!("\n### {title}\n\n"));
        let workloads: Vec<&WorkloadRow> = ctx.workloads.iter().filter(|w| w.cluster == cluster && w.before != w.after).collect();
        push_profiles(&mut s, before.get(&cluster), after.get(&cluster), &workloads);
        push_queues(&mut s, quotas_before.get(&cluster), quotas_after.get(&cluster));
        push_object_table(&mut s, &objects, &cluster);
        push_file_list(&mut s, &files, &cluster);
    }
    s.push_str(&format!(
        "\n<sub>Worst case: every NodePool at its limit on its dearest admitted type, steady state; drain peak: while nodes drain beside their replacements. A month is {HOURS_PER_MONTH:.0} h.{}</sub>\n",
        ctx.footer.as_deref().map(|f| format!(" {f}")).unwrap_or_default()
    ));
    s
}

/// The totals over every cluster, before → after: the worst case first, in $/h and $/month.
fn headline(before: &Figures, after: &Figures) -> String {
    let total = |f: &Figures, m: CostMeasure| cents(f.values().flat_map(|p| p.values()).map(|p| p.total(m)).sum());
    let mut s = String::from("| | Before | After | Change |\n|---|---|---|---|\n");
    for (label, m) in [("**Worst case** (steady state)", CostMeasure::WorstCase), ("Drain peak", CostMeasure::DrainPeak), ("At limit, cheapest", CostMeasure::AtLimit), ("Budget", CostMeasure::Budget)] {
        let (b, a) = (total(before, m), total(after, m));
        if b == 0.0 && a == 0.0 {
            continue;
        }
        let delta = cents(a - b);
        let change = if delta == 0.0 { "unchanged".to_string() } else { format!("**{}/h** ({}/month)", dollars(delta, true), dollars(delta * HOURS_PER_MONTH, true)) };
        s.push_str(&format!("| {label} | {}/h | {}/h | {change} |\n", dollars(b, false), dollars(a, false)));
    }
    s
}

/// `$1,234.50`, with a sign when `signed`.
fn dollars(v: f64, signed: bool) -> String {
    let sign = if v < 0.0 { "-" } else if signed { "+" } else { "" };
    let whole = format!("{:.2}", v.abs());
    let (int, frac) = whole.split_once('.').unwrap_or((&whole, "00"));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}${grouped}.{frac}")
}

/// The policy's verdict: the rules that held (deny first), then the rules that passed.
fn push_policy(s: &mut String, verdict: &Verdict) {
    if verdict.rules.is_empty() {
        return;
    }
    s.push_str("\n### Policies\n\n");
    let mut findings = verdict.findings.clone();
    findings.sort_by_key(|f| std::cmp::Reverse(f.level));
    for f in &findings {
        let (icon, word) = if f.level == Level::Deny { ("❌", "deny") } else { ("⚠️", "warn") };
        s.push_str(&format!("- {icon} **{word}** `{}`, {}: {}\n", f.rule, f.scope, md_escape(&f.why)));
    }
    for (level, rule) in &verdict.rules {
        if !verdict.findings.iter().any(|f| &f.rule == rule && f.level == *level) {
            s.push_str(&format!("- ✅ **pass** `{rule}`\n"));
        }
    }
}

/// Per profile of the cluster that changed: its budget once, its NodePools' figures before → after, its fixed
/// costs apart, and a chart of its worst case against its budget.
fn push_profiles(s: &mut String, before: Option<&BTreeMap<String, ProfileFigures>>, after: Option<&BTreeMap<String, ProfileFigures>>, workloads: &[&WorkloadRow]) {
    let empty = ProfileFigures::default();
    let names: BTreeSet<&String> = before.into_iter().chain(after).flat_map(|m| m.keys()).collect();
    for name in names {
        let b = before.and_then(|m| m.get(name)).unwrap_or(&empty);
        let a = after.and_then(|m| m.get(name)).unwrap_or(&empty);
        let rows: Vec<&WorkloadRow> = workloads.iter().copied().filter(|w| &w.profile == name).collect();
        if b != a {
            push_profile(s, name, b, a);
        } else if !rows.is_empty() {
            s.push_str(&format!("#### Profile `{name}`: NodePools unchanged\n\n"));
        }
        push_workloads(s, &rows);
    }
}

fn push_profile(s: &mut String, name: &str, b: &ProfileFigures, a: &ProfileFigures) {
    let budget = match (b.budget, a.budget) {
        (Some(x), Some(y)) if money(x) == money(y) => format!("budget ${}/h", money(y)),
        (x, y) => format!("budget {} → {}", per_hour(x), per_hour(y)),
    };
    s.push_str(&format!("#### Profile `{name}`: {budget}\n\n| NodePool | Limit | Worst case $/h | At limit, cheapest $/h | Drain peak $/h |\n|---|---|---|---|---|\n"));
    let pools: BTreeSet<&String> = b.pools.keys().chain(a.pools.keys()).collect();
    for pool in pools {
        let (pb, pa) = (b.pools.get(pool), a.pools.get(pool));
        let limit = limit_change(pb, pa);
        let figure = |f: fn(&PoolFigures) -> f64| change(pb.map(f), pa.map(f));
        s.push_str(&format!("| `{pool}` | {limit} | {} | {} | {} |\n", figure(|p| p.worst_case), figure(|p| p.at_limit), figure(|p| p.drain_peak)));
    }
    let total = |m| change(Some(b.total(m)), Some(a.total(m)));
    s.push_str(&format!("| **total** | | {} | {} | {} |\n\n", total(CostMeasure::WorstCase), total(CostMeasure::AtLimit), total(CostMeasure::DrainPeak)));
    if b.fixed() > 0.0 || a.fixed() > 0.0 {
        s.push_str(&format!("Fixed (reservations, static pools; billed whatever runs, inside the worst case): {}\n\n", change(Some(b.fixed()), Some(a.fixed()))));
    }
    push_chart(s, name, b, a);
}

/// A Mermaid `xychart-beta` (in Mermaid since 10.6; GitHub and GitLab render Mermaid blocks in comments): the
/// worst case as bars and the budget as a line, before and after.
fn push_chart(s: &mut String, name: &str, before: &ProfileFigures, after: &ProfileFigures) {
    let (wb, wa) = (before.total(CostMeasure::WorstCase), after.total(CostMeasure::WorstCase));
    let top = [wb, wa, before.budget.unwrap_or(0.0), after.budget.unwrap_or(0.0)].into_iter().fold(0.0, f64::max);
    if top <= 0.0 {
        return;
    }
    s.push_str(&format!(
        "```mermaid\nxychart-beta\n    title \"{}: worst case (bars) and budget (line), $/h\"\n    x-axis [\"before\", \"after\"]\n    y-axis \"$/h\" 0 --> {}\n    bar [{}, {}]\n",
        name.replace('"', "'"),
        (top * 1.1).ceil(),
        money(wb),
        money(wa)
    ));
    if let (Some(bb), Some(ba)) = (before.budget.or(after.budget), after.budget.or(before.budget)) {
        s.push_str(&format!("    line [{}, {}]\n", money(bb), money(ba)));
    }
    s.push_str("```\n\n");
}

/// `nvidia.com/gpu 46 → 30` (one resource, as NodePools have), else each side whole.
fn limit_change(before: Option<&PoolFigures>, after: Option<&PoolFigures>) -> String {
    let whole = |p: Option<&PoolFigures>| p.map(|p| p.limits.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")).unwrap_or_else(|| "none".into());
    match (before.map(|p| &p.limits), after.map(|p| &p.limits)) {
        (Some(b), Some(a)) if b == a => whole(after),
        (Some(b), Some(a)) if b.len() == 1 && b.keys().eq(a.keys()) => {
            let (key, old) = b.iter().next().expect("one limit");
            format!("{key} {old} → {}", a[key])
        }
        _ => format!("{} → {}", whole(before), whole(after)),
    }
}

/// The profile's workloads at max replicas whose placement or cost changed, before → after.
fn push_workloads(s: &mut String, changed: &[&WorkloadRow]) {
    if changed.is_empty() {
        return;
    }
    s.push_str("| Workload at max replicas | Replicas | Nodes $/h | Pending |\n|---|---|---|---|\n");
    for w in changed {
        let side = |f: fn(&WorkloadAt) -> String| match (w.before.as_ref().map(f), w.after.as_ref().map(f)) {
            (Some(b), Some(a)) if b == a => a,
            (b, a) => format!("{} → {}", b.unwrap_or_else(|| "none".into()), a.unwrap_or_else(|| "none".into())),
        };
        let cost = change(w.before.map(|b| b.usd_per_hour), w.after.map(|a| a.usd_per_hour));
        s.push_str(&format!("| `{}` | {} | {cost} | {} |\n", w.workload, side(|x| x.replicas.to_string()), side(|x| x.pending.to_string())));
    }
    s.push_str("\nBefore: the base's profiles compiled by this gpuplan (out/ does not record the pods' requests); after: this change's. Pods placed as `gpuplan simulate` places them.\n\n");
}

/// The Kueue queues' accelerator quotas that change: what each team may run at once without borrowing.
fn push_queues(s: &mut String, before: Option<&BTreeMap<(String, String, String), String>>, after: Option<&BTreeMap<(String, String, String), String>>) {
    let keys: BTreeSet<&(String, String, String)> = before.into_iter().chain(after).flat_map(|m| m.keys()).collect();
    let quota = |m: Option<&BTreeMap<(String, String, String), String>>, k| m.and_then(|m| m.get(k)).cloned();
    let rows: Vec<String> = keys
        .into_iter()
        .filter(|k| quota(before, *k) != quota(after, *k))
        .map(|k| {
            let (b, a) = (quota(before, k).unwrap_or_else(|| "none".into()), quota(after, k).unwrap_or_else(|| "none".into()));
            format!("| `{}` | `{}` | {} | {b} → {a} |\n", k.0, k.1, k.2)
        })
        .collect();
    if !rows.is_empty() {
        s.push_str("#### Queues\n\n| ClusterQueue | Flavor | Resource | Nominal quota |\n|---|---|---|---|\n");
        s.push_str(&rows.concat());
        s.push('\n');
    }
}

fn per_hour(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_string(), |v| format!("${}/h", money(v)))
}

/// `before → after (±delta)`, `after` alone when unchanged, `none` for a side without the figure.
fn change(before: Option<f64>, after: Option<f64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) if money(b) == money(a) => money(a),
        (Some(b), Some(a)) => format!("{} → {} ({})", money(b), money(a), signed_money(a - b)),
        (None, Some(a)) => format!("none → {}", money(a)),
        (Some(b), None) => format!("{} → none", money(b)),
        (None, None) => "none".into(),
    }
}

/// The cluster's changed objects as a table (or a line saying there are none).
fn push_object_table(s: &mut String, objects: &[ObjectChange], cluster: &str) {
    let mine: Vec<&ObjectChange> = objects.iter().filter(|o| o.cluster == cluster).collect();
    if mine.is_empty() {
        s.push_str("No object changes (formatting or header only).\n");
        return;
    }
    s.push_str("| | Object | Change |\n|---|---|---|\n");
    for o in mine {
        let sign = match o.change {
            ChangeKind::Added => "➕",
            ChangeKind::Removed => "➖",
            ChangeKind::Modified => "✏️",
        };
        let object = match &o.namespace {
            Some(ns) => format!("{} `{ns}/{}`", o.kind, o.name),
            None => format!("{} `{}`", o.kind, o.name),
        };
        s.push_str(&format!(
            "| {sign} | {} | {} |\n",
            md_escape(&object),
            md_escape(&churn_words(o).unwrap_or_else(|| change_words(o.change, &o.details)))
        ));
    }
}

/// Alert text rewritten (a PrometheusRule's `summary` and `description` annotations, which quote the figures they
/// alert on) as one phrase: a reviewer needs to know it happened, not each field. The other changes (an alert's
/// `expr`) keep their words.
fn churn_words(o: &ObjectChange) -> Option<String> {
    let reworded = |d: &&Detail| matches!(d, Detail::Field { path, .. } if path.contains(".annotations.") && (path.ends_with(".description") || path.ends_with(".summary")));
    let count = o.details.iter().filter(reworded).count();
    if o.change != ChangeKind::Modified || count == 0 {
        return None;
    }
    let rest: Vec<Detail> = o.details.iter().filter(|d| !reworded(d)).cloned().collect();
    let text = format!("alert text reworded ({count} annotation(s))");
    Some(if rest.is_empty() { text } else { format!("{}, {text}", change_words(o.change, &rest)) })
}

/// The cluster's changed files in a collapsed list.
fn push_file_list(s: &mut String, files: &[FileChange], cluster: &str) {
    let my_files: Vec<_> = files
        .iter()
        .filter(|f| cluster_of(&f.path).unwrap_or_default() == cluster)
        .collect();
    s.push_str(&format!(
        "\n<details><summary>{} file(s)</summary>\n\n",
        my_files.len()
    ));
    for f in my_files {
        let kind = match f.kind {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
        };
        s.push_str(&format!("- {kind} `out/{}`\n", slash(&f.path)));
    }
    s.push_str("\n</details>\n");
}
