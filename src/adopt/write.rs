//! Adopted profiles as KDL text: every line ends with a comment naming the original file, object and field.

use super::model::{q, AdoptedPool, AdoptedProfile, Line};

pub fn profile_text(p: &AdoptedProfile, sources: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&format!("// Adopted by `gpuplan adopt` from {}.\n", sources.join(", ")));
    out.push_str("// Each line's comment names the original file, object and field it came from; `raw` blocks carry\n");
    out.push_str("// verbatim what no setting says; `not adopted` comments are fields gpuplan writes itself (also printed as warnings).\n");
    out.push_str(&format!("profile {} priority={}\n", q(&p.name), p.priority));
    for c in &p.comments {
        out.push_str(&format!("// {c}\n"));
    }
    out.push('\n');
    let c = &p.cluster;
    let from = |k: &str| c.from.get(k).map(|f| format!(" // {f}")).unwrap_or_default();
    out.push_str(&format!("cluster {} {{{}\n", q(&c.name), from("name")));
    out.push_str(&format!("    region {}{}\n", q(&c.region), from("region")));
    out.push_str(&format!("    zones {}{}\n", c.zones.iter().map(|z| q(z)).collect::<Vec<_>>().join(" "), from("zones")));
    out.push_str(&format!("    discovery-tag {}{}\n", q(&c.discovery_tag), from("discovery-tag")));
    match &c.instance_profile {
        Some(profile) => out.push_str(&format!("    instance-profile {}{}\n", q(profile), from("instance-profile"))),
        None => out.push_str(&format!("    node-role {}{}\n", q(&c.node_role), from("node-role"))),
    }
    if c.auto_mode {
        out.push_str(&format!("    auto-mode #true{}\n", from("auto-mode")));
        if let Some(size) = &c.ephemeral_storage {
            out.push_str(&format!("    ephemeral-storage {}{}\n", q(size), from("ephemeral-storage")));
        }
    } else {
        out.push_str(&format!("    ami {}{}\n", q(&c.ami), from("ami")));
    }
    if let Some(user_data) = &c.user_data {
        out.push_str(&format!("    user-data {}{}\n", super::model::q_text(user_data), from("user-data")));
    }
    if let Some(gitops) = &c.gitops {
        out.push_str(&format!("    {gitops}{}\n", from("gitops")));
    }
    if let Some(raw) = &c.raw {
        write_line(&mut out, raw, 1);
    }
    out.push_str("}\n");
    if let Some((budget, origin)) = &p.budget {
        out.push_str(&format!("\nbudget usd-per-hour={budget} // {origin}\n"));
    }
    if let Some(monitoring) = &p.monitoring {
        out.push('\n');
        write_line(&mut out, monitoring, 0);
    }
    let mut written = std::collections::BTreeSet::new();
    for pool in &p.pools {
        match &pool.tier_of {
            None => write_pool(&mut out, pool),
            // Tiers of one gpuplan pool are written together, in the order of their first NodePool.
            Some(parent) if written.insert(parent.clone()) => {
                let tiers: Vec<&AdoptedPool> = p.pools.iter().filter(|t| t.tier_of.as_ref() == Some(parent)).collect();
                out.push_str(&format!("\npool {} preset=\"tiered\" {{\n", q(parent)));
                for tier in tiers {
                    let suffix = &tier.name[parent.len() + 1..];
                    out.push_str(&format!("    // {}\n    tier {} {{\n", tier.from.trim_end(), q(suffix)));
                    write_body(&mut out, tier, 2);
                    out.push_str("    }\n");
                }
                out.push_str("}\n");
            }
            Some(_) => {}
        }
    }
    for workload in &p.workloads {
        out.push('\n');
        write_line(&mut out, workload, 0);
    }
    for queue in &p.queues {
        out.push('\n');
        write_line(&mut out, queue, 0);
    }
    out
}

fn write_pool(out: &mut String, pool: &AdoptedPool) {
    out.push_str(&format!("\n// {}\npool {} preset={} {{\n", pool.from.trim_end(), q(&pool.name), q(pool.preset)));
    write_body(out, pool, 1);
    out.push_str("}\n");
}

fn write_body(out: &mut String, pool: &AdoptedPool, depth: usize) {
    for line in &pool.lines {
        write_line(out, line, depth);
    }
    for comment in &pool.comments {
        out.push_str(&format!("{}// {comment}\n", "    ".repeat(depth)));
    }
}

fn write_line(out: &mut String, line: &Line, depth: usize) {
    let indent = "    ".repeat(depth);
    if line.children.is_empty() && !matches!(line.kdl.as_str(), "gpu" | "neuron" | "disruption" | "reserved") {
        // A multi-line string (a `raw` block's YAML) is indented with its node: KDL dedents it by its closing line.
        let kdl = line.kdl.replace('\n', &format!("\n{indent}")).replace(&format!("\n{indent}\n"), "\n\n");
        out.push_str(&format!("{indent}{kdl} // {}\n", line.from));
        return;
    }
    out.push_str(&format!("{indent}{} {{ // {}\n", line.kdl, line.from));
    for child in &line.children {
        write_line(out, child, depth + 1);
    }
    out.push_str(&format!("{indent}}}\n"));
}
