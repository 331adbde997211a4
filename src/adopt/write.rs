//! Adopted profiles as KDL text: every line ends with a comment naming the original file, object and field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    if let Some(queue) = &c.interruption_queue {
        out.push_str(&format!("    interruption-queue {}{}\n", q(queue), from("interruption-queue")));
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

/// The adopted profiles written into `into` (replacing files of the same name), taken back when dropped before
/// [`Written::keep`]: each replaced file gets its old text again, each new one is removed, and so is `into` when
/// adopt created it.
pub struct Written {
    /// Each written path with the text it had before (None: it did not exist).
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
    created_dir: Option<PathBuf>,
    kept: bool,
}

impl Written {
    /// Writes `files` (file name → text) into `into`; on failure, the error and the path it failed on (what was
    /// written before is taken back).
    pub fn new(into: &Path, files: &BTreeMap<String, String>) -> Result<Written, (std::io::Error, PathBuf)> {
        crate::confine::check_write(into).map_err(|e| (e, into.to_path_buf()))?;
        for name in files.keys() {
            crate::confine::check_write(&into.join(name)).map_err(|e| (e, into.join(name)))?;
        }
        let created_dir = (!into.exists()).then(|| into.to_path_buf());
        std::fs::create_dir_all(into).map_err(|e| (e, into.to_path_buf()))?;
        let mut written = Written { files: Vec::new(), created_dir, kept: false };
        for (name, text) in files {
            let path = into.join(name);
            written.files.push((path.clone(), std::fs::read(&path).ok()));
            std::fs::write(&path, text).map_err(|e| (e, path.clone()))?;
        }
        eprintln!("wrote {}", written.files.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(", "));
        Ok(written)
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|(p, _)| p.clone()).collect()
    }

    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        for (path, before) in &self.files {
            let _ = match before {
                Some(text) => std::fs::write(path, text),
                None => std::fs::remove_file(path),
            };
        }
        if let Some(dir) = &self.created_dir {
            let _ = std::fs::remove_dir(dir);
        }
        eprintln!("adopt failed: the profiles it wrote were taken back ({} is as it was)", self.created_dir.as_ref().map_or("the directory".to_string(), |d| d.display().to_string()));
    }
}

#[cfg(test)]
mod written_tests {
    use super::*;

    /// A failed adopt leaves `--into` as it was: a replaced file gets its old text, a new one goes, and so does a
    /// directory adopt created; kept, they stay.
    #[test]
    fn dropped_without_keep_takes_back_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let into = dir.path().join("profiles");
        std::fs::create_dir(&into).unwrap();
        std::fs::write(into.join("a.kdl"), "// mine\n").unwrap();
        let files = BTreeMap::from([("a.kdl".to_string(), "new a".to_string()), ("b.kdl".to_string(), "new b".to_string())]);
        drop(Written::new(&into, &files).unwrap());
        assert_eq!(std::fs::read_to_string(into.join("a.kdl")).unwrap(), "// mine\n");
        assert!(!into.join("b.kdl").exists());
        let fresh = dir.path().join("fresh");
        drop(Written::new(&fresh, &files).unwrap());
        assert!(!fresh.exists());
        Written::new(&fresh, &files).unwrap().keep();
        assert_eq!(std::fs::read_to_string(fresh.join("b.kdl")).unwrap(), "new b");
    }
}
