//! Step 5: NodePool weights, distinct across the cluster: explicit ones as written, the others spread between them
//! in (profile priority, tier order) ([`order`]).

use std::collections::BTreeMap;

use crate::diagnostic::ErrorCode;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span, Spanned};

use super::pool::PoolPlan;

/// A sized pool on its way to a weight: its explicit `weight`, if any, and where the tier is written.
pub struct WeightedPool {
    pub plan: PoolPlan,
    pub explicit: Option<Spanned<u32>>,
    pub span: Span,
}

/// Weights: pools arrive in (profile priority, tier order); explicit weights win, the rest are spread
/// evenly, highest first, in the room between the explicit ones. E0153 for two pools at one weight. None when the
/// explicit weights leave no room (its E0153 is in `diagnostics`): nothing further can be checked.
pub fn order(pools: Vec<WeightedPool>, name: &str, sources: &Sources, diagnostics: &mut Vec<ProfileDiagnostic>) -> Option<Vec<WeightedPool>> {
    // A static NodePool has no weight (the CRD refuses one) and takes no part in the order of dynamic provisioning.
    let (statics, mut pools): (Vec<_>, Vec<_>) = pools.into_iter().partition(|p| p.plan.static_pool.is_some());
    if let Err(d) = assign_weights(&mut pools, name, sources) {
        diagnostics.extend(d);
        return None;
    }
    let mut by_weight: BTreeMap<u32, (String, Span)> = BTreeMap::new();
    for WeightedPool { plan, explicit, span } in &pools {
        if let Some((other, _)) = by_weight.insert(plan.weight, (plan.name.clone(), explicit.as_ref().map_or(*span, |w| w.span))) {
            let span = explicit.as_ref().map_or(*span, |w| w.span);
            diagnostics.push(
                sources
                    .error(span, ErrorCode::E0153, format!("NodePool `{}` and `{other}` both have weight {} in cluster `{name}`", plan.name, plan.weight))
                    .help("Karpenter breaks weight ties by name, silently; give every pool of a cluster a distinct weight"),
            );
        }
    }
    pools.extend(statics);
    Some(pools)
}

/// Gives every pool a weight: explicit ones as written; each run of pools without one gets distinct weights
/// spaced up to 10 apart, strictly between the explicit weights around it (100 at the top of the cluster).
fn assign_weights(pools: &mut [WeightedPool], cluster: &str, sources: &Sources) -> Result<(), Vec<ProfileDiagnostic>> {
    let n = pools.len();
    let mut i = 0;
    while i < n {
        if let Some(w) = &pools[i].explicit {
            pools[i].plan.weight = w.value;
            i += 1;
            continue;
        }
        let start = i;
        while i < n && pools[i].explicit.is_none() {
            i += 1;
        }
        let run = (i - start) as u32;
        let lower = pools.get(i).and_then(|p| p.explicit.as_ref()).map_or(0, |w| w.value);
        let above = start.checked_sub(1).map(|k| pools[k].plan.weight);
        // Candidate weights: `first - k·step` for k in 0..run, all > lower.
        let (first, step) = match above {
            // Top of the cluster: start at 100.
            None => (100, if run > 1 { (99u32.saturating_sub(lower) / (run - 1)).clamp(1, 10) } else { 10 }),
            // Below an explicit weight: start one step under it.
            Some(upper) => {
                let step = (upper.saturating_sub(lower + 1) / run).clamp(1, 10);
                (upper.saturating_sub(step), step)
            }
        };
        let room = match above {
            None => 100u32.saturating_sub(lower),
            Some(upper) => upper.saturating_sub(lower + 1),
        };
        if room < run {
            let span = pools[start].span;
            return Err(vec![sources
                .error(span, ErrorCode::E0153, match above {
                    Some(upper) => format!("no room for distinct weights in cluster `{cluster}`: {run} pool(s) must fit between weights {lower} and {upper}"),
                    None => format!("no room for distinct weights in cluster `{cluster}`: {run} pool(s) must rank above the explicit weight {lower}, and 100 is the maximum"),
                })
                .help("spread the explicit `weight`s further apart, or remove them and let gpuplan assign weights")]);
        }
        for (k, pool) in pools[start..i].iter_mut().enumerate() {
            pool.plan.weight = first - k as u32 * step;
        }
    }
    Ok(())
}
