//! E0410: the names a pool picks instance types by (`gpu { name … }`, `neuron { name … }`, `families`, `types`)
//! checked against the region's catalog before any type is filtered. A misspelt name otherwise removes every
//! candidate (E0140 "relax this constraint") or, beside a correct name, silently narrows the pool. The help names
//! what the catalog has, with did-you-mean.

use crate::catalog::query::accelerator_names;
use crate::catalog::{AcceleratorKind, Catalog};
use crate::diagnostic::{did_you_mean_among, ErrorCode, ProfileDiagnostic, Sources, Spanned};
use crate::profile::{Admit, Tier};

/// One E0410 per name of the tier that the catalog does not have. A pool adopted as Karpenter has it (`admit
/// "as-required"`) keeps its lists as written: Karpenter ignores names it does not know.
pub fn unknown_names(tier: &Tier, catalog: &Catalog, sources: &Sources) -> Vec<ProfileDiagnostic> {
    let s = &tier.settings;
    let mut out = Vec::new();
    let kind = s.accelerator.value;
    if kind != AcceleratorKind::Cpu {
        let known = accelerator_names(catalog, Some(kind));
        let what = if kind == AcceleratorKind::Neuron { "Neuron device" } else { "GPU" };
        for name in s.accelerator_names.iter().filter(|n| !known.iter().any(|k| k.eq_ignore_ascii_case(n))) {
            let set = format!("{what}s in {}", catalog.region);
            let help = memory_suffix_hint(name, &known, &set).unwrap_or_else(|| did_you_mean_among(name, &known, &set));
            out.push(unknown(sources, name, &format!("{what} name"), &catalog.region, help));
        }
    }
    if s.admit.value == Admit::AsRequired {
        return out;
    }
    let families = sorted(catalog.instance_types.iter().map(|t| t.family.clone()));
    for family in s.families.iter().filter(|f| !families.contains(&f.value)) {
        let known: Vec<&str> = families.iter().map(String::as_str).collect();
        out.push(unknown(sources, family, "instance family", &catalog.region, did_you_mean_among(family, &known, &format!("families in {}", catalog.region))));
    }
    for name in s.types.iter().filter(|n| catalog.get(n).is_none()) {
        // The region has hundreds of types: the help lists those of the family the name is in, or of the closest.
        let family = name.split('.').next().unwrap_or_default();
        let of_family: Vec<&str> = catalog.instance_types.iter().filter(|t| t.family == family).map(|t| t.name.as_str()).collect();
        let help = if of_family.is_empty() {
            let known: Vec<&str> = families.iter().map(String::as_str).collect();
            did_you_mean_among(family, &known, &format!("no family `{family}`; families in {}", catalog.region))
        } else {
            did_you_mean_among(name, &of_family, &format!("{family} types in {}", catalog.region))
        };
        out.push(unknown(sources, name, "instance type", &catalog.region, help));
    }
    out
}

fn unknown(sources: &Sources, name: &Spanned<String>, what: &str, region: &str, help: String) -> ProfileDiagnostic {
    sources.error(name.span, ErrorCode::E0410, format!("the {region} catalog has no {what} `{}`", name.value)).label(format!("not a {what} of {region}")).help(help)
}

fn sorted(names: impl Iterator<Item = String>) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = names.collect();
    set.into_iter().collect()
}

/// A model name with its memory glued on (`A100-80GB`, `a100_40g`): the catalog names the model alone and the
/// memory is a constraint of its own, so the hint is the model with `memory-min`.
pub fn memory_suffix_hint(name: &str, known: &[&str], set: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let model = known.iter().filter(|k| lower.starts_with(&k.to_ascii_lowercase())).max_by_key(|k| k.len())?;
    let rest = lower[model.len()..].trim_start_matches(['-', '_', ' ']);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let unit = &rest[digits.len()..];
    (!digits.is_empty() && ["g", "gb", "gib"].contains(&unit)).then(|| {
        format!("did you mean `{model}` (with `memory-min \"{digits}GiB\"`)? GPU names carry no memory; {set}: {}", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::memory_suffix_hint;

    #[test]
    fn a_model_with_its_memory_glued_on_suggests_the_model_and_memory_min() {
        for name in ["A100-80GB", "a100_80g", "A100 80GiB"] {
            let hint = memory_suffix_hint(name, &["A10G", "A100", "H100"], "GPUs").unwrap();
            assert!(hint.starts_with("did you mean `A100` (with `memory-min \"80GiB\"`)?"), "{hint}");
        }
        assert_eq!(memory_suffix_hint("A100X", &["A100"], "GPUs"), None);
    }
}
