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

use crate::diagnostic::ErrorCode;
use crate::layout::{OutputTree, cluster_of, parse_header};
use crate::compile::CompileError;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::Profile;
use crate::validate::{Validator, Violation};

/// Refuses the compile (every refused update, located in the profiles) when the API server would refuse to update
/// an object of `old` (the previous out/) into its counterpart in `new`.
/// `out_dir` names out/ in the messages.
pub fn refuse(out_dir: &Path, old: &OutputTree, new: &OutputTree, profiles: &[Profile], sources: &Sources) -> Result<(), CompileError> {
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
        let at = Located { file: out_dir.join(path), cluster: cluster_of(path).unwrap_or_default(), source, profiles, sources };
        for violation in validator.transition_violations(&before, &after) {
            diagnostics.push(diagnostic(&at, &before, &after, &violation));
        }
    }
    if diagnostics.is_empty() { Ok(()) } else { Err(CompileError::profiles(diagnostics)) }
}

/// A top-level `key: value` of a generated file, as gpuplan writes it (unquoted, unindented).
fn top_level<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(": ")).map(str::trim)
}

/// The object of a generated file (None for a file gpuplan did not write, or that is not one YAML object).
fn object(text: &str) -> Option<Value> {
    serde_saphyr::from_str(parse_header(text)?.body).ok()
}

fn diagnostic(at: &Located, before: &Value, after: &Value, violation: &Violation) -> ProfileDiagnostic {
    let kind = after["kind"].as_str().unwrap_or("object");
    let name = after["metadata"]["name"].as_str().unwrap_or("");
    let tier = (kind == "NodePool").then(|| node_pool_tier(at.profiles, &at.cluster, name)).flatten();
    let (replicas_before, replicas_after) = (before["spec"].get("replicas"), after["spec"].get("replicas"));
    let file = at.file.display();
    if kind == "NodePool" && violation.pointer == "/spec" && replicas_before.is_some() != replicas_after.is_some() {
        // At the `static` line when there is one, else at the pool's name (the line was removed).
        let span = tier.map_or_else(|| at.profile_span(), |(name_at, static_at)| static_at.unwrap_or(name_at));
        let change = match (replicas_after, replicas_before) {
            (Some(r), _) => format!("pool `{name}` turns NodePool {name} static (replicas={r}), but {file} holds it dynamic (no spec.replicas)"),
            (None, r) => format!("pool `{name}` is no longer static, but {file} holds NodePool {name} static (spec.replicas={})", r.unwrap_or(&Value::Null)),
        };
        let message = format!("{change}: the API server refuses the update ({}), so the GitOps sync would fail", violation.message);
        return at.sources.error(span, ErrorCode::E0308, message).help(format!("rename the pool (a new NodePool), or delete NodePool {name} from the cluster and {file} from out/, then compile again: the GitOps tool creates it anew"));
    }
    let span = tier.map_or_else(|| at.profile_span(), |(name_at, _)| name_at);
    let message = format!("{kind} {name} at {}: the API server refuses this update of the object {file} holds: {}", violation.pointer, violation.message);
    at.sources.error(span, ErrorCode::E0309, message).help(format!("keep the field as {file} has it, or rename the object, or delete {kind} {name} from the cluster and {file} from out/, then compile again: the GitOps tool creates it anew"))
}

/// Where a refused update is reported: the generated file and the profiles that wrote it.
struct Located<'a> {
    /// The file under out/ (as the user names out/).
    file: std::path::PathBuf,
    cluster: String,
    /// The profile source its header names.
    source: &'a str,
    profiles: &'a [Profile],
    sources: &'a Sources,
}

impl Located<'_> {
    /// The name of the profile that generated the file, else the cluster's first profile.
    fn profile_span(&self) -> Span {
        let of_cluster = || self.profiles.iter().filter(|p| p.cluster.name.value == self.cluster);
        let profile = of_cluster().find(|p| self.sources.source_name(p.file) == self.source).or_else(|| of_cluster().next()).or(self.profiles.first());
        profile.expect("a compile has at least one profile").name.span
    }
}

/// The NodePool's tier in the profiles of its cluster: the span of its name, and of its `static` line if any.
fn node_pool_tier(profiles: &[Profile], cluster: &str, name: &str) -> Option<(Span, Option<Span>)> {
    let tiers = profiles.iter().filter(|p| p.cluster.name.value == cluster).flat_map(|p| &p.pools).flat_map(|pool| &pool.tiers);
    tiers.into_iter().find(|t| t.name.value == name).map(|t| (t.name.span, t.settings.static_pool.as_ref().map(|s| s.span)))
}
