//! What the solver refuses before it selects a tier's types: zones the catalog does not know, settings a cluster's
//! kind of node cannot carry out (EKS Auto Mode, Bottlerocket's host device plugin), and a cluster whose profiles
//! disagree on Auto Mode.

use std::collections::BTreeSet;

use crate::diagnostic::ErrorCode;
use crate::catalog::Catalog;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::{Profile, Sharing, Tier};

use super::node_class::class_time_slicing;

/// E0152: a cluster zone the region's catalog does not know.
pub fn unknown_zones(profile: &Profile, catalog: &Catalog, sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    for zone in &profile.cluster.zones {
        if !catalog.zones.is_empty() && !catalog.zones.contains(&zone.value) {
            diagnostics.push(
                sources
                    .error(zone.span, ErrorCode::E0152, format!("the {} catalog knows no zone `{}`", catalog.region, zone.value))
                    .help(crate::diagnostic::did_you_mean_among(&zone.value, &catalog.zones.iter().map(String::as_str).collect::<Vec<_>>(), "zones in the catalog")),
            );
        }
    }
    diagnostics
}

/// E0278: the NodeClass is named after the profile, and `default` is the built-in NodeClass of Auto Mode's
/// `system` and `general-purpose` NodePools (EKS User Guide, create-node-class: "Do not name your custom
/// node class `default`").
pub fn default_class_in_auto_mode(profile: &Profile, auto_mode: Option<Span>, sources: &Sources) -> Option<ProfileDiagnostic> {
    (auto_mode.is_some() && profile.name.value == "default").then(|| {
        sources
            .error(profile.name.span, ErrorCode::E0278, "an EKS Auto Mode profile named `default` would replace Auto Mode's built-in NodeClass `default`")
            .label("the NodeClass's name")
            .help("rename the profile: its NodeClass takes its name")
    })
}

/// E0277: the profiles of one cluster disagree on `auto-mode`. One cluster's output is one kustomization; a mixed
/// cluster (Auto Mode beside self-managed Karpenter) is possible on EKS but AWS advises against it, and gpuplan would
/// have to emit the GPU Operator for some nodes and keep it off the others.
pub fn mixed_auto_mode(cluster: &str, profiles: &[&Profile], sources: &Sources) -> Option<ProfileDiagnostic> {
    let auto = profiles.iter().find(|p| p.cluster.auto_mode.value)?;
    let other = profiles.iter().find(|p| !p.cluster.auto_mode.value)?;
    Some(
        sources
            .error(auto.cluster.auto_mode.span, ErrorCode::E0277, format!("cluster `{cluster}` is in EKS Auto Mode for profile `{}` but not for profile `{}`", auto.name.value, other.name.value))
            .label("auto-mode here")
            .help(format!("write `auto-mode #true` in the cluster block of profile `{}` too ({}), or remove it here", other.name.value, sources.location(other.cluster.span))),
    )
}

/// E0273 (time-slicing) and E0274 (MIG): device-plugin sharing in an EKS Auto Mode cluster. Auto Mode runs its own
/// NVIDIA device plugin, "not visible as a daemon set within your cluster" (EKS User Guide, "Deploy an accelerated
/// workload"), and its NodeClass has no user data: neither the GPU Operator's ConfigMap nor Bottlerocket settings
/// reach it, so a pool's slices would never be advertised.
pub fn sharing_in_auto_mode(tier: &Tier, auto_mode: Option<Span>, sources: &Sources) -> Option<ProfileDiagnostic> {
    auto_mode?;
    let sharing = tier.settings.sharing.as_ref()?;
    let (code, what, label) = match sharing.value {
        Sharing::TimeSlicing { .. } => (ErrorCode::E0273, "time-slicing", "time-slicing here"),
        Sharing::Mig { .. } => (ErrorCode::E0274, "MIG", "a mig-parted config"),
    };
    Some(
        sources
            .error(sharing.span, code, format!("EKS Auto Mode cannot configure {what}: pool `{}` is in an Auto Mode cluster, whose NVIDIA device plugin is managed by AWS and takes no GPU Operator or user-data settings", tier.name.value))
            .label(label)
            .help("give each pod whole GPUs in Auto Mode (remove this line), or run this pool on self-managed Karpenter: a cluster without `auto-mode #true` gets an EC2NodeClass and the GPU Operator"),
    )
}

/// E0332: an `overlay` block in an EKS Auto Mode cluster. Auto Mode runs Karpenter itself and installs the NodePool,
/// NodeClaim and NodeClass CRDs (EKS User Guide, "Create a Node Pool for EKS Auto Mode", "Create a Node Class"); it
/// documents no NodeOverlay and no feature gate a user can turn on, so the overlay's price would not rank the types
/// and its capacity would not be offered, while gpuplan's ranking and explain would say they do. Each block is reported
/// once (a pool's blocks are inherited by its tiers).
pub fn overlays_in_auto_mode(profile: &Profile, auto_mode: Option<Span>, sources: &Sources) -> Vec<ProfileDiagnostic> {
    if auto_mode.is_none() {
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    let overlays = profile.pools.iter().flat_map(|p| &p.tiers).flat_map(|t| &t.settings.overlays).filter(|o| seen.insert((o.span.file, o.span.offset)));
    overlays
        .map(|o| {
            sources
                .error(o.span, ErrorCode::E0332, format!("overlay `{}` is in an EKS Auto Mode cluster, which documents no NodeOverlay support: its price would not rank the types and its capacity would not be offered", o.value.name.value))
                .label("a NodeOverlay here")
                .help("remove the block (in Auto Mode, narrow the types with `types`, `families` or `require` instead), or run this pool on self-managed Karpenter: a cluster without `auto-mode #true`")
        })
        .collect()
}

/// E0287: on Bottlerocket, a time-sliced pool's class gets gpuplan's `settings.kubelet-device-plugins.nvidia` after
/// the cluster's `user-data`; user data that sets that table too would declare it twice (invalid TOML, or two
/// sharing settings of which the node applies one).
pub fn time_slicing_in_user_data(profile: &Profile, tier: &Tier, host_plugin: bool, sources: &Sources) -> Option<ProfileDiagnostic> {
    class_time_slicing(tier, host_plugin)?;
    let user_data = profile.cluster.user_data.as_ref().filter(|u| u.contains("kubelet-device-plugins"))?;
    Some(
        sources
            .error(user_data.span, ErrorCode::E0287, format!("the cluster's `user-data` sets Bottlerocket's kubelet-device-plugins, and pool `{}` asks for time-slicing, which gpuplan writes there too", tier.name.value))
            .help("remove the device-plugin settings from `user-data` (the pool's `time-slicing replicas=N` writes them), or remove `time-slicing` from the pool"),
    )
}

/// E0185: MIG on a Bottlerocket NVIDIA variant is a host setting keyed by GPU model
/// (`settings.kubelet-device-plugins.nvidia.mig.profile`, bottlerocket.dev API settings "kubelet-device-plugins"), not
/// a mig-parted config the GPU Operator's MIG manager applies; gpuplan does not write those settings yet.
pub fn mig_on_host_plugin(tier: &Tier, host_plugin: bool, sources: &Sources) -> Option<ProfileDiagnostic> {
    let sharing = tier.settings.sharing.as_ref().filter(|s| host_plugin && matches!(s.value, Sharing::Mig { .. }))?;
    Some(
        sources
            .error(sharing.span, ErrorCode::E0185, format!("MIG on Bottlerocket: pool `{}` runs the Bottlerocket NVIDIA variant, whose host device plugin takes MIG profiles per GPU model from its own settings, not from the GPU Operator's mig-parted configs", tier.name.value))
            .label("a mig-parted config")
            .help("use an AL2023 AMI (`ami \"al2023@v…\"`) for MIG pools, or time-slicing on Bottlerocket (written into the EC2NodeClass user data)"),
    )
}
