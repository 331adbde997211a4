//! The solve of every cluster ([`solve`]): its profiles planned one by one (steps 1–4), the cluster's pools weighted
//! and checked together (step 5), then the plans that read the finished pools: NodeOverlays, ops and queues.

use std::collections::BTreeMap;

use crate::diagnostic::ErrorCode;
use crate::catalog::Catalog;
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::profile::Profile;
use crate::simulate::instances::TypeLabels;

use super::node_class::{class_settings, NodeClassPlan};
use super::plan::{ClusterPlan, Plan, ProfileSummary};
use super::pool::{ClusterPools, PoolPlan};
use super::profile_pools::plan_profile;
use super::refusals::mixed_auto_mode;
use super::select::{AcceleratorIndex, Region, Selections};
use super::weights::{self, WeightedPool};
use super::{ops, overlays, queue};

/// Everything the solver needs from outside: the profiles, their sources, and a catalog (with its digest) per
/// region.
pub fn solve(
    profiles: &[Profile],
    sources: &Sources,
    catalogs: &BTreeMap<String, Catalog>,
    // The provenance digest of each catalog (`Catalog::load_with_digest`), by region.
    digests: &BTreeMap<String, String>,
    // Each catalog's type labels, by region: `require` lines read them, and compile keeps them for its simulations.
    labels: &BTreeMap<String, TypeLabels>,
) -> Result<Plan, Vec<ProfileDiagnostic>> {
    let mut diagnostics = Vec::new();
    let mut clusters: BTreeMap<String, Vec<&Profile>> = BTreeMap::new();
    for p in profiles {
        clusters.entry(p.cluster.name.value.clone()).or_default().push(p);
    }
    let indexes: BTreeMap<&String, AcceleratorIndex> = catalogs.iter().map(|(region, c)| (region, AcceleratorIndex::new(c))).collect();
    // The digest serializes the whole catalog: once per region, not once per cluster.
    let mut ready = Vec::new();
    for (cluster_name, mut members) in clusters {
        members.sort_by(|a, b| b.priority.value.cmp(&a.priority.value).then(a.name.value.cmp(&b.name.value)));
        let first = members[0];
        for other in &members[1..] {
            if other.cluster.region.value != first.cluster.region.value {
                diagnostics.push(
                    sources
                        .error(
                            other.cluster.region.span,
                            ErrorCode::E0150,
                            format!(
                                "cluster `{cluster_name}` is in {} here but in {} at {}",
                                other.cluster.region.value,
                                first.cluster.region.value,
                                sources.location(first.cluster.region.span)
                            ),
                            )
                        .help("a cluster lives in one region; use another cluster name for another region"),
                );
            }
        }
        let Some(catalog) = catalogs.get(&first.cluster.region.value) else {
            diagnostics.push(
                sources
                    .error(first.cluster.region.span, ErrorCode::E0151, format!("no catalog for region {}", first.cluster.region.value))
                    .help(format!("run `gpuplan catalog refresh --region {}`", first.cluster.region.value)),
            );
            continue;
        };
        let digest = digests.get(&first.cluster.region.value).cloned().unwrap_or_else(|| catalog.digest());
        let index = &indexes[&first.cluster.region.value];
        let Some(type_labels) = labels.get(&first.cluster.region.value) else { continue };
        ready.push((cluster_name, members, Region { catalog, index, labels: type_labels }, digest));
    }
    // Clusters are independent: solved on every core, collected in name order.
    use rayon::prelude::*;
    let solved: Vec<Result<ClusterPlan, Vec<ProfileDiagnostic>>> = ready
        .into_par_iter()
        .map(|(name, members, region, digest)| solve_cluster(&name, &members, sources, region, digest))
        .collect();
    let mut plan = Plan { clusters: Vec::new() };
    for result in solved {
        match result {
            Ok(c) => plan.clusters.push(c),
            Err(d) => diagnostics.extend(d),
        }
    }
    if diagnostics.is_empty() { Ok(plan) } else { Err(diagnostics) }
}

/// One cluster's plan, from its profiles in priority order. Errors are collected as far as the solve can go: every
/// profile is planned, and the cluster-wide checks run on what was planned.
fn solve_cluster(name: &str, profiles: &[&Profile], sources: &Sources, region: Region, catalog_digest: String) -> Result<ClusterPlan, Vec<ProfileDiagnostic>> {
    let mut diagnostics: Vec<ProfileDiagnostic> = mixed_auto_mode(name, profiles, sources).into_iter().collect();
    let interruption_queue = super::prerequisites::interruption_queue(name, profiles, sources).map_err(|d| diagnostics.push(d)).ok().flatten();
    let planned = plan_profiles(profiles, region, sources, &mut diagnostics);
    let Some(pools) = weights::order(planned.pools, name, sources, &mut diagnostics) else { return Err(diagnostics) };
    diagnostics.extend(names_twice(&pools, name, sources));
    let mut node_classes = planned.node_classes;
    node_classes.sort_by(|a, b| a.name.cmp(&b.name));
    diagnostics.extend(class_name_collisions(&node_classes, &pools, sources));
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let mut pools: Vec<PoolPlan> = pools.into_iter().map(|p| p.plan).collect();
    pools.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.name.cmp(&b.name)));
    node_classes.dedup_by(|a, b| a.name == b.name);
    let mut summaries = planned.summaries;
    summaries.sort_by(|a, b| a.name.cmp(&b.name));
    let accelerated_ami = profiles.iter().all(|p| p.cluster.accelerated_ami.value);
    let auto_mode = profiles.iter().any(|p| p.cluster.auto_mode.value);
    let finished = ClusterPools { name, auto_mode, accelerated_ami, pools: &pools };
    let overlays = overlays::plan_overlays(finished, profiles, sources)?;
    let ops = ops::plan_cluster(finished, profiles, sources)?;
    let queues = queue::plan_cluster(finished, &ops.workloads, profiles, sources, region.catalog)?;
    Ok(ClusterPlan {
        name: name.to_string(),
        region: region.catalog.region.clone(),
        catalog_digest,
        accelerated_ami,
        auto_mode,
        interruption_queue,
        node_daemons: profiles
            .iter()
            .find_map(|p| p.cluster.node_daemons.as_ref().map(|d| d.iter().map(|n| n.value.clone()).collect()))
            .unwrap_or_else(|| crate::charts::node_daemons::default_names(auto_mode)),
        gitops: profiles.iter().find_map(|p| p.cluster.gitops.as_ref().map(|g| g.value.clone())),
        node_classes,
        pools,
        profiles: summaries,
        ops,
        queues,
        overlays,
    })
}

/// Steps 1–4 for every profile of a cluster: their pools in (profile priority, tier order), every node class they use,
/// and the figures of each profile whose limits could be sized.
struct Planned {
    pools: Vec<WeightedPool>,
    node_classes: Vec<NodeClassPlan>,
    summaries: Vec<ProfileSummary>,
}

fn plan_profiles(profiles: &[&Profile], region: Region, sources: &Sources, diagnostics: &mut Vec<ProfileDiagnostic>) -> Planned {
    let mut planned = Planned { pools: Vec::new(), node_classes: Vec::new(), summaries: Vec::new() };
    let mut selections = Selections::default();
    for profile in profiles {
        let profile_pools = plan_profile(profile, region, sources, &mut selections, diagnostics);
        planned.node_classes.extend(profile_pools.node_classes);
        if let Some((pools, summary)) = profile_pools.sized {
            planned.pools.extend(pools);
            planned.summaries.push(summary);
        }
    }
    planned
}

/// E0154: NodePool names are cluster-wide, and two profiles name one pool alike.
fn names_twice(pools: &[WeightedPool], name: &str, sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for WeightedPool { plan, span, .. } in pools {
        if let Some(other_profile) = names.insert(&plan.name, &plan.profile) {
            diagnostics.push(
                sources
                    .error(*span, ErrorCode::E0154, format!("NodePool `{}` is also defined by profile `{other_profile}` in cluster `{name}`", plan.name))
                    .help("NodePool names are cluster-wide: rename the pool"),
            );
        }
    }
    diagnostics
}

/// E0158: two node classes of one cluster with one name and different settings (class names are derived: `<profile>`,
/// `-nvme`, `-ts<N>`, `-<tier>` for a pool's own kubelet or raw settings, so profile `ml`'s pool `x` and a profile
/// named `ml-x` can meet). One file would be written and the other pools would launch with its settings: the
/// reported pool is one that uses each.
fn class_name_collisions(sorted: &[NodeClassPlan], pools: &[WeightedPool], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    for pair in sorted.windows(2) {
        let [a, b] = pair else { continue };
        if a.name != b.name || class_settings(a) == class_settings(b) || out.iter().any(|d: &(String, ProfileDiagnostic)| d.0 == a.name) {
            continue;
        }
        let pool_of = |c: &NodeClassPlan| pools.iter().find(|p| p.plan.node_class == c.name && p.plan.profile == c.profile).map(|p| (p.plan.name.clone(), p.span));
        let (Some((first, _)), Some((second, span))) = (pool_of(a), pool_of(b)) else { continue };
        let (first, second) = if first == second { (format!("{first} (profile {})", a.profile), format!("{second} (profile {})", b.profile)) } else { (first, second) };
        let d = sources
            .error(span, ErrorCode::E0158, format!("node class `{}` would be written twice with different settings: for pool {first} and for pool {second}", a.name))
            .label("this pool's class")
            .help("rename a pool or a profile, or change a pool's `node-class` (class names are the pool's `node-class`, else `<profile>`, `<profile>-<pool>` for a pool's own kubelet or raw settings, `-nvme`, `-ts<N>`)");
        out.push((a.name.clone(), d));
    }
    out.into_iter().map(|(_, d)| d).collect()
}
