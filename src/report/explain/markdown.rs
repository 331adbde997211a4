//! The markdown format, for a pull-request comment or a wiki page: the table format's content with a heading per
//! cluster, profile and NodePool, and markdown tables for the costs, candidates and removals. The lines and tables
//! are the table format's own ([`super::table`]'s builders), so the two formats cannot say different things.

use std::fmt::Write as _;

use super::model::{Explanation, FindingExplanation};
use super::table::{
    Grid, Lines, candidate_grid, candidates_title, overlay_lines, pool_heading, pool_lines, pool_tail_lines, profile_lines, removed_grid, write_queues,
};
use super::WhyNot;

/// The markdown format.
pub fn markdown(e: &Explanation) -> String {
    let mut out = String::new();
    for cluster in &e.clusters {
        let _ = writeln!(out, "# Cluster `{}` ({}, catalog `{}`)\n", cluster.name, cluster.region, cluster.catalog);
        let mut placements = String::new();
        crate::check::write_placements(&mut placements, &cluster.workloads);
        write_fenced(&mut out, "Workloads", &placements);
        let mut queues = String::new();
        write_queues(&mut queues, &cluster.queues);
        write_fenced(&mut out, "Queues", &queues);
        for p in &cluster.profiles {
            let _ = writeln!(out, "## Profile `{}` ({}, priority {})\n", p.name, p.source, p.priority);
            write_lines_table(&mut out, &profile_lines(p));
            write_findings(&mut out, &p.findings);
            for pool in &p.pools {
                let _ = writeln!(out, "### {}\n", pool_heading(pool));
                write_lines_table(&mut out, &pool_lines(pool));
                let _ = writeln!(out, "**Candidates**: {}\n", candidates_title(pool));
                write_grid(&mut out, &candidate_grid(pool));
                write_lines_table(&mut out, &overlay_lines(pool));
                if !pool.removed.is_empty() {
                    let _ = writeln!(out, "**Removed** by constraint, in the order applied (`--format json` lists every type):\n");
                    write_grid(&mut out, &removed_grid(pool));
                }
                write_lines_table(&mut out, &pool_tail_lines(pool));
                write_findings(&mut out, &pool.findings);
            }
        }
    }
    for s in &e.estimate_sources {
        let _ = writeln!(out, "\\* estimate [{}]: {}\n", s.id, cell(&s.description));
    }
    out
}

/// `--why-not` in markdown: a heading per type, a table of the NodePools' answers.
pub fn why_not_markdown(answers: &[WhyNot]) -> String {
    let mut out = String::new();
    for w in answers {
        let _ = writeln!(out, "## Why not `{}` ({})?\n", w.instance_type, w.has);
        let rows = w.pools.iter().map(|p| vec![p.cluster.clone(), p.profile.clone(), p.nodepool.clone(), p.verdict.describe()]).collect();
        write_grid(&mut out, &Grid { headers: &["cluster", "profile", "NodePool", "answer"], right: &[false; 4], rows });
    }
    out
}

/// A text section the table format lays out in columns of its own, kept as it is under a heading.
fn write_fenced(out: &mut String, heading: &str, text: &str) {
    let text = text.trim_matches('\n');
    if !text.is_empty() {
        let _ = writeln!(out, "## {heading}\n\n```text\n{text}\n```\n");
    }
}

/// Labelled lines as a two-column table (a continuation line has an empty label).
fn write_lines_table(out: &mut String, lines: &Lines) {
    if lines.is_empty() {
        return;
    }
    out.push_str("| | |\n|---|---|\n");
    for (label, text) in lines {
        let _ = writeln!(out, "| {} | {} |", label, cell(text));
    }
    out.push('\n');
}

fn write_grid(out: &mut String, grid: &Grid) {
    if grid.rows.is_empty() {
        return;
    }
    let header: Vec<String> = grid.headers.iter().map(|h| cell(h.trim())).collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = grid.right.iter().map(|r| if *r { "--:" } else { "---" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for row in &grid.rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c.trim())).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

fn write_findings(out: &mut String, findings: &[FindingExplanation]) {
    for f in findings {
        let help = f.help.as_ref().map(|h| format!(" (help: {})", cell(h))).unwrap_or_default();
        let _ = writeln!(out, "- **{}** {}: {}{help}", f.code, f.location, cell(&f.message));
    }
    if !findings.is_empty() {
        out.push('\n');
    }
}

/// Text in a table cell or list item: a `|` would end the cell and a `*` (an estimate's mark) start emphasis.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('*', "\\*").replace('\n', " ")
}
