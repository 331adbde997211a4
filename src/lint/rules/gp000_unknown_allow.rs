//! GP000: an `allow` that names no lint rule silences nothing (a typo, or a code that never existed).

use std::collections::BTreeSet;

use crate::diagnostic::did_you_mean;
use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp000,
    name: "unknown-allow",
    summary: "`allow` names a code that is no lint rule (it silences nothing)",
    checks_output: false,
    check: Scope::Profile(check),
};

/// GP000: `allow` codes that name no rule, at the profile's top level or in its pools and tiers (each place once).
pub fn check(_: &LintCtx, profile: &Profile, out: &mut Findings) {
    let mut seen = BTreeSet::new();
    let tiers = profile.pools.iter().flat_map(|p| &p.tiers);
    let codes = RuleCode::ALL;
    for allow in profile.allow.iter().chain(tiers.flat_map(|t| &t.settings.allow)) {
        if RuleCode::parse(&allow.value).is_some() || !seen.insert(allow.span) {
            continue;
        }
        let help = did_you_mean(&allow.value, codes.iter().map(|c| c.as_str()))
            .map(|d| format!("{d} "))
            .unwrap_or_default()
            + &format!("lint codes are {}…{} (see the book's lint.md)", codes[1], codes[codes.len() - 1]);
        let message = format!("`allow \"{}\"` names no lint rule: it silences nothing", allow.value);
        out.unsilenced(RULE.code, &profile.name.value, None, allow.span, message, help);
    }
}
