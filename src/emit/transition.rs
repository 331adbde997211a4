//! Updates the API server refuses: out/ holds what the GitOps tool applied, so a generated object that replaces the
//! one out/ holds under the same path is an update of that object, and the CRD's transition rules (`oldSelf`)
//! decide whether the API server accepts it (see `validate::transition`). Refused, the sync fails at the API server
//! after the change was reviewed and merged; here it fails at compile, with out/ untouched.
//!
//! The rules of the embedded CRDs (src/crds/), checked against the previous object:
//! - NodePool `spec`: `has(self.replicas) == has(oldSelf.replicas)`, "Cannot transition NodePool between static
//!   (replicas set) and dynamic (replicas unset) provisioning modes" — E0308, at the pool's `static` line (or the
//!   pool's name when `static` was removed);
//! - NodePool `spec.template.spec.nodeClassRef`: `self.group == oldSelf.group`, `self.kind == oldSelf.kind`
//!   ("nodeClassRef.group/kind is immutable"; an EKS Auto Mode switch changes both), and Kueue's
//!   LocalQueue `spec.clusterQueue` and ResourceFlavor `spec` rules (`self == oldSelf`, "field is immutable"...) —
//!   E0309, at the pool's name or the profile's name.
//!
//! Both leave one way through: a new object. Renaming the pool makes one; deleting the old object first lets the
//! GitOps tool create the new one.

use std::path::Path;

use serde_json::Value;

use super::{OutputTree, cluster_of, parse_header};
use crate::compile::CompileError;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::Profile;
use crate::validate::{Validator, Violation};

/// Refuses the compile (every refused update, located in the profiles) when the API server would refuse to update
/// an object of `old` (the previous out/) into its counterpart in `new`.
pub fn refuse(old: &OutputTree, new: &OutputTree, profiles: &[Profile], sources: &Sources) -> Result<(), CompileError> {
    let validator = Validator::builtin();
    let mut diagnostics = Vec::new();
    let mut has_rules = std::collections::BTreeMap::new();
    for (path, text) in &new.files {
        let Some(old_text) = old.files.get(path).filter(|t| *t != text) else { continue };
        // Only the kinds with transition rules are parsed: a large change rewrites thousands of files.
        let Some(kind) = top_level(text, "apiVersion").zip(top_level(text, "kind")) else { continue };
        if !*has_rules.entry(kind).or_insert_with(|| validator.has_transition_rules(kind.0, kind.1)) {
            continue;
        }
        let (Some(before), Some((source, after))) = (object(old_text), parse_header(text).and_then(|h| Some((h.source, object(text)?)))) else { continue };
        for violation in validator.transition_violations(&before, &after) {
            diagnostics.push(diagnostic(path, source, &before, &after, &violation, profiles, sources));
        }
    }
    if diagnostics.is_empty() { Ok(()) } else { Err(CompileError::Profiles { diagnostics }) }
}

/// A top-level `key: value` of a generated file, as gpuplan writes it (unquoted, unindented).
fn top_level<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(": ")).map(str::trim)
}

/// The object of a generated file (None for a file gpuplan did not write, or that is not one YAML object).
fn object(text: &str) -> Option<Value> {
    serde_saphyr::from_str(parse_header(text)?.body).ok()
}

fn diagnostic(path: &Path, source: &str, before: &Value, after: &Value, violation: &Violation, profiles: &[Profile], sources: &Sources) -> ProfileDiagnostic {
    let kind = after["kind"].as_str().unwrap_or("object");
    let name = after["metadata"]["name"].as_str().unwrap_or("");
    let cluster = cluster_of(path).unwrap_or_default();
    let file = Path::new("out").join(path);
    let (static_before, static_after) = (before["spec"].get("replicas"), after["spec"].get("replicas"));
    let tier = (kind == "NodePool").then(|| node_pool_tier(profiles, &cluster, name)).flatten();
    if kind == "NodePool" && violation.pointer == "/spec" && static_before.is_some() != static_after.is_some() {
        let (span, change) = match (tier, static_after) {
            (Some((_, Some(at))), Some(r)) => (at, format!("pool `{name}` turns NodePool {name} static (replicas={r}), but {} holds it dynamic (no spec.replicas)", file.display())),
            (Some((at, _)), Some(r)) => (at, format!("NodePool {name} turns static (replicas={r}), but {} holds it dynamic", file.display())),
            (Some((at, _)), None) => (at, format!("pool `{name}` is no longer static, but {} holds NodePool {name} static (spec.replicas={})", file.display(), static_before.unwrap_or(&Value::Null))),
            (None, _) => (profile_span(profiles, sources, &cluster, source), format!("NodePool {name} changes between static and dynamic against {}", file.display())),
        };
        let message = format!("{change}: the API server refuses the update (the CRD's rule `has(self.replicas) == has(oldSelf.replicas)`: Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes), so the GitOps sync would fail");
        return sources.error(span, "E0308", message).help(format!("rename the pool (a new NodePool), or delete NodePool {name} first and let the GitOps tool recreate it"));
    }
    let span = tier.map_or_else(|| profile_span(profiles, sources, &cluster, source), |(at, _)| at);
    let message = format!("{kind} {name} at {}: the API server refuses this update of the object {} holds: {}", violation.pointer, file.display(), violation.message);
    sources.error(span, "E0309", message).help(format!("keep the field as out/ has it, or rename the object, or delete {kind} {name} first and let the GitOps tool recreate it"))
}

/// The NodePool's tier in the profiles of its cluster: the span of its name, and of its `static` line if any.
fn node_pool_tier(profiles: &[Profile], cluster: &str, name: &str) -> Option<(Span, Option<Span>)> {
    let tiers = profiles.iter().filter(|p| p.cluster.name.value == cluster).flat_map(|p| &p.pools).flat_map(|pool| &pool.tiers);
    tiers.into_iter().find(|t| t.name.value == name).map(|t| (t.name.span, t.settings.static_pool.as_ref().map(|s| s.span)))
}

/// The name of the profile that generated the file (its header's source), else the cluster's first profile.
fn profile_span(profiles: &[Profile], sources: &Sources, cluster: &str, source: &str) -> Span {
    let of_cluster = || profiles.iter().filter(|p| p.cluster.name.value == cluster);
    let profile = of_cluster().find(|p| sources.source_name(p.file) == source).or_else(|| of_cluster().next()).or(profiles.first());
    profile.expect("a compile has at least one profile").name.span
}
