//! EFA pools: one zone for all their tiers ([`pin_efa_zones`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::diagnostic::ErrorCode;
use crate::catalog::Catalog;
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::profile::Tier;

use super::pool::{Candidate, PoolPlan, Removal};

/// EFA pools launch in one zone, the same for all their tiers. EFA's OS-bypass traffic stays within an
/// Availability Zone (AWS EC2 user guide, "Elastic Fabric Adapter", limitations: historically one subnet): a
/// multi-node job spread over zones gets no EFA between its nodes and NCCL falls back to TCP. The zone is `efa zone="…"`, or the first of the cluster's zones that
/// offers the most of the pool's types; types not offered there are removed (they could never launch).
pub fn pin_efa_zones(pools: &mut [(PoolPlan, &Tier)], catalog: &Catalog, zones: &[String], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    let efa_pools: BTreeSet<String> = pools.iter().filter(|(p, _)| p.efa).map(|(p, _)| p.pool.clone()).collect();
    let offers = |t: &str, zone: &str| catalog.get(t).is_some_and(|it| it.zones.iter().any(|z| z == zone));
    for pool in efa_pools {
        let members: Vec<usize> = (0..pools.len()).filter(|&i| pools[i].0.pool == pool).collect();
        let types: BTreeSet<String> = members.iter().flat_map(|&i| pools[i].0.candidates.iter().map(|c| c.name.clone())).collect();
        let explicit = members.iter().find_map(|&i| pools[i].1.settings.efa_zone.clone());
        let zone = match explicit {
            Some(z) if zones.contains(&z.value) => z.value,
            Some(z) => {
                out.push(sources.error(z.span, ErrorCode::E0152, format!("EFA zone `{}` is not one of the cluster's zones", z.value)).help(format!("one of: {}", zones.join(", "))));
                continue;
            }
            None => {
                let best = zones.iter().map(|z| types.iter().filter(|t| offers(t, z)).count()).max().unwrap_or(0);
                let Some(z) = zones.iter().find(|z| types.iter().filter(|t| offers(t, z)).count() == best) else { continue };
                z.clone()
            }
        };
        for &i in &members {
            let (plan, tier) = &mut pools[i];
            let (kept, dropped): (Vec<Candidate>, Vec<Candidate>) = Arc::make_mut(&mut plan.candidates).drain(..).partition(|c| offers(&c.name, &zone));
            plan.candidates = Arc::new(kept);
            if !dropped.is_empty() {
                let span = tier.settings.efa_zone.as_ref().map(|z| z.span).or(tier.settings.efa.as_ref().map(|e| e.span));
                let figures = dropped.into_iter().map(|c| {
                    let zones = catalog.get(&c.name).map(|t| t.zones.join(", ")).unwrap_or_default();
                    (c.name, format!("offered in [{zones}] only"))
                });
                Arc::make_mut(&mut plan.removed).push(Removal::new(format!("offered in EFA zone {zone}"), span, figures));
            }
            if plan.candidates.is_empty() {
                let span = tier.settings.efa.as_ref().map_or(tier.name.span, |e| e.span);
                out.push(sources.error(span, ErrorCode::E0140, format!("no instance type of pool `{}` is offered in its EFA zone {zone}", plan.name)).help("name another zone: efa #true zone=\"…\""));
            }
            plan.zones = vec![zone.clone()];
            let reservation = if tier.settings.reserved.is_some() { format!("; the reservation must be in {zone}") } else { String::new() };
            plan.notes.push(format!("EFA: nodes launch in {zone} only, so a multi-node job's EFA traffic stays in one Availability Zone{reservation}"));
        }
    }
    out
}
