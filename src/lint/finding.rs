//! A lint finding, and [`Findings`], where the rules of one cluster record theirs: it applies `allow` and words the
//! warning the same way for every rule.

use std::collections::BTreeMap;

use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::Profile;

use super::code::RuleCode;
use super::context::PoolCtx;

/// One lint finding with what it is about, so `explain` can list it under its pool.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule's code as the warning prints it ([`RuleCode::as_str`]).
    pub code: &'static str,
    pub cluster: String,
    pub profile: String,
    /// The NodePool it is about; None for profile-wide findings (AMI, budget, allow).
    pub pool: Option<String>,
    pub span: Span,
    /// A warning, ready to print.
    pub diagnostic: ProfileDiagnostic,
}

/// The findings of one cluster's rules, as they record them.
pub struct Findings<'a> {
    sources: &'a Sources,
    cluster: &'a str,
    out: Vec<Finding>,
}

impl<'a> Findings<'a> {
    pub fn new(sources: &'a Sources, cluster: &'a str) -> Findings<'a> {
        Findings { sources, cluster, out: Vec::new() }
    }

    /// Records a pool-level finding unless the pool (or its profile) allows the code.
    pub fn pool(&mut self, ctx: &PoolCtx, code: RuleCode, span: Span, message: String, help: String) {
        if ctx.plan.allow.contains(code.as_str()) {
            return;
        }
        let diagnostic = self.sources.error(span, code.as_str(), message).help(silence_help(help, code)).warning();
        self.push(code, &ctx.profile.name.value, Some(&ctx.plan.name), span, diagnostic);
    }

    /// Records a profile-wide finding unless the profile's top level allows the code.
    pub fn profile(&mut self, profile: &Profile, code: RuleCode, span: Span, message: String, help: String) {
        if profile.allow.iter().any(|a| a.value == code.as_str()) {
            return;
        }
        let diagnostic = self.sources.error(span, code.as_str(), message).help(silence_help(help, code)).warning();
        self.push(code, &profile.name.value, None, span, diagnostic);
    }

    /// Records a finding whose rule decides itself what silences it, with its help as written.
    pub fn unsilenced(&mut self, code: RuleCode, profile: &str, pool: Option<&str>, span: Span, message: String, help: String) {
        let diagnostic = self.sources.error(span, code.as_str(), message).help(help).warning();
        self.push(code, profile, pool, span, diagnostic);
    }

    fn push(&mut self, code: RuleCode, profile: &str, pool: Option<&str>, span: Span, diagnostic: ProfileDiagnostic) {
        let (cluster, profile, pool) = (self.cluster.to_string(), profile.to_string(), pool.map(str::to_string));
        self.out.push(Finding { code: code.as_str(), cluster, profile, pool, span, diagnostic });
    }

    pub fn into_vec(self) -> Vec<Finding> {
        self.out
    }
}

fn silence_help(help: String, code: RuleCode) -> String {
    format!("{help}; or silence with `allow \"{code}\"`")
}

/// By file, position, code and message: the order never depends on the threads.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| (a.span.file, a.span.offset, a.code, &a.diagnostic.message).cmp(&(b.span.file, b.span.offset, b.code, &b.diagnostic.message)));
}

/// Lint findings grouped by (cluster, NodePool) for `explain`; profile-wide ones under (cluster, profile) with
/// an empty pool name.
pub fn by_pool(findings: &[Finding]) -> BTreeMap<(String, String, String), Vec<&Finding>> {
    let mut map: BTreeMap<(String, String, String), Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        map.entry((f.cluster.clone(), f.profile.clone(), f.pool.clone().unwrap_or_default())).or_default().push(f);
    }
    map
}
