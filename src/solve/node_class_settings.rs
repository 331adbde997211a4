//! What a pool says about its node class beyond the cluster block: `kubelet { … }` and `raw "EC2NodeClass"`
//! fragments. Pools that say the same share a class; each distinct set gets its own, named deterministically: the
//! set of the profile's first pool keeps the profile's name, each other set takes `<profile>-<first NodePool with
//! it>` (then the usual `-nvme` / `-ts<N>` suffixes).
//! [`ProfileClasses`] picks each tier's class, and a reservation's own.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::node_class::{default_class_name, NodeClassPlan};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span, Spanned};
use crate::profile::{Profile, Raw, Settings, Tier};

/// One pool's class settings (spans dropped from the comparison: two pools saying the same share a class).
#[derive(Debug, Clone, Default)]
pub struct Own {
    kubelet: Option<Map<String, Value>>,
    raws: Vec<Spanned<Raw>>,
    placement_group: Option<String>,
}

impl Own {
    pub fn of(s: &Settings) -> Own {
        Own {
            kubelet: s.kubelet.as_ref().map(|k| k.value.clone()),
            raws: s.raws.iter().filter(|r| r.kind != "NodePool").cloned().collect(),
            placement_group: s.placement_group.as_ref().map(|g| g.value.clone()),
        }
    }

    /// The key two pools share a class by: the kubelet fields and the fragments' values, not where they were written.
    fn key(&self) -> String {
        let raws: Vec<&Value> = self.raws.iter().map(|r| &r.patch).collect();
        serde_json::json!([self.kubelet, raws, self.placement_group]).to_string()
    }

    /// The class with this pool's settings: the cluster block's fragments first, then the pool's.
    pub fn apply(self, mut class: NodeClassPlan) -> NodeClassPlan {
        class.kubelet = self.kubelet;
        class.raws.extend(self.raws);
        class.placement_group = self.placement_group;
        class
    }
}

/// The base names given so far in one profile, by settings.
#[derive(Default)]
pub struct OwnClasses {
    bases: BTreeMap<String, String>,
}

impl OwnClasses {
    /// The profile's name for the first settings seen (every profile without kubelet or class fragments keeps its one
    /// class's name), `<profile>-<tier>` for each other.
    pub fn base(&mut self, profile: &str, tier: &str, own: &Own) -> String {
        let first = self.bases.is_empty();
        self.bases.entry(own.key()).or_insert_with(|| if first { profile.to_string() } else { format!("{profile}-{tier}") }).clone()
    }
}

/// The node classes of one profile's pools, chosen tier by tier: a class of its own for each reservation, and the
/// variants of the profile's default class its pools use (local NVMe, Bottlerocket time-slicing, own settings).
pub struct ProfileClasses {
    default: NodeClassPlan,
    reserved: Vec<NodeClassPlan>,
    /// By (local NVMe, time-slicing, base name, whether the base is the pool's own `node-class` name, and for such a
    /// name the settings' key: two pools naming one class with different settings make two plans, for E0158).
    used: BTreeMap<(bool, Option<u32>, String, bool, String), Own>,
    own: OwnClasses,
}

impl ProfileClasses {
    pub fn new(default: NodeClassPlan) -> ProfileClasses {
        ProfileClasses { default, reserved: Vec::new(), used: BTreeMap::new(), own: OwnClasses::default() }
    }

    /// The name of the class a tier's NodePool uses: its own for a reservation (named after the tier), else the
    /// default class's variant for its local NVMe (`raid0`), time-slicing and own settings.
    pub fn for_tier(&mut self, tier: &Tier, raid0: bool, time_slicing: Option<u32>) -> String {
        let own = Own::of(&tier.settings);
        let explicit = tier.settings.node_class.as_ref().map(|n| n.value.clone());
        match &tier.settings.reserved {
            Some(reserved) => {
                let name = explicit.unwrap_or_else(|| tier.name.value.clone());
                self.reserved.push(own.apply(NodeClassPlan {
                    name: name.clone(),
                    reserved: Some(reserved.value.clone()),
                    instance_store_raid0: raid0,
                    time_slicing,
                    ..self.default.clone()
                }));
                name
            }
            // The pool names its class: that name, whatever its storage or sharing (two pools naming one class
            // with different settings are two classes of one name: E0158).
            None if explicit.is_some() => {
                let name = explicit.unwrap_or_default();
                self.used.insert((raid0, time_slicing, name.clone(), true, own.key()), own);
                name
            }
            None => {
                let base = self.own.base(&self.default.name, &tier.name.value, &own);
                let name = default_class_name(&base, raid0, time_slicing);
                self.used.insert((raid0, time_slicing, base, false, String::new()), own);
                name
            }
        }
    }

    /// Every class the profile's pools use: the reservations' in tier order, then the default class's variants.
    pub fn finish(self) -> Vec<NodeClassPlan> {
        let ProfileClasses { default, mut reserved, used, .. } = self;
        for ((raid0, time_slicing, base, explicit, _), own) in used {
            reserved.push(own.apply(NodeClassPlan {
                name: if explicit { base } else { default_class_name(&base, raid0, time_slicing) },
                instance_store_raid0: raid0,
                time_slicing,
                ..default.clone()
            }));
        }
        reserved
    }
}

/// E0313: an EKS Auto Mode NodeClass has no kubelet settings; E0314: a `raw` fragment for the other kind of class
/// than the cluster has (EC2NodeClass outside Auto Mode, NodeClass in it).
pub fn auto_mode_refusals(profile: &Profile, auto_mode: Option<Span>, sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    let (class_kind, other) = if auto_mode.is_some() { ("NodeClass", "EC2NodeClass") } else { ("EC2NodeClass", "NodeClass") };
    let mut kubelets: Vec<Span> = profile.pools.iter().flat_map(|p| &p.tiers).filter_map(|t| t.settings.kubelet.as_ref().map(|k| k.span)).collect();
    kubelets.sort_by_key(|s| (s.offset, s.len));
    kubelets.dedup();
    if auto_mode.is_some() {
        for span in kubelets {
            out.push(
                sources
                    .error(span, ErrorCode::E0313, "an EKS Auto Mode NodeClass has no kubelet settings: this `kubelet` block would be dropped")
                    .label("kubelet settings")
                    .help("leave out `kubelet` (Auto Mode configures the kubelet itself), or leave out `auto-mode #true` to emit an EC2NodeClass that carries it"),
            );
        }
    }
    // The Auto Mode NodeClass has no placement group field either (EKS User Guide, "Create a Node Class for Amazon
    // EKS", Node Class Specification).
    let mut groups: Vec<&Spanned<String>> = profile.pools.iter().flat_map(|p| &p.tiers).filter_map(|t| t.settings.placement_group.as_ref()).collect();
    groups.sort_by_key(|g| (g.span.offset, g.span.len));
    groups.dedup_by_key(|g| g.span);
    for group in groups.into_iter().filter(|_| auto_mode.is_some()) {
        out.push(
            sources
                .error(group.span, ErrorCode::E0385, "an EKS Auto Mode NodeClass has no placement group: this `placement-group` would be dropped")
                .label("a placement group")
                .help("leave out `placement-group` in Auto Mode, or leave out `auto-mode #true` to emit an EC2NodeClass with placementGroupSelector"),
        );
    }
    for raw in crate::profile::raw::fragments_once(profile, other, |_| false) {
        let mode = if auto_mode.is_some() { "an EKS Auto Mode cluster" } else { "a cluster outside EKS Auto Mode" };
        out.push(
            sources
                .error(raw.span, ErrorCode::E0314, format!("the pools of {mode} launch with a {class_kind}, so a raw {other} fragment patches nothing"))
                .label("raw fragment")
                .help(format!("write raw \"{class_kind}\" with that kind's fields")),
        );
    }
    out
}

/// The AMI family an alias names (`al2023@v2025…` → `al2023`), as the EC2NodeClass's `amiFamily` spells it in lower case.
fn alias_family(alias: &str) -> String {
    alias.split('@').next().unwrap_or(alias).to_ascii_lowercase()
}

/// E0159: a `raw "EC2NodeClass"` fragment that moves the class to another AMI family than the cluster's `ami` (an
/// alias of another family in `amiSelectorTerms`, or an `amiFamily` other than the alias's or `Custom`). gpuplan
/// decides from the `ami` line which device plugin runs (Bottlerocket's NVIDIA variants run their own on the host,
/// AL2023 gets the GPU Operator's), where the volume goes (`/dev/xvda` or Bottlerocket's `/dev/xvdb`) and how
/// time-slicing is written: a fragment changing the family would leave all of them wrong. `Custom` (AMIs by id or
/// tag, as adopted classes carry them) is the user's to vouch for.
pub fn ami_family_refusals(profile: &Profile, sources: &Sources) -> Vec<ProfileDiagnostic> {
    let cluster_family = alias_family(&profile.cluster.ami.value);
    let mut out = Vec::new();
    for raw in crate::profile::raw::fragments_once(profile, "EC2NodeClass", |_| false) {
        let spec = &raw.patch["spec"];
        let aliases = spec["amiSelectorTerms"].as_array().into_iter().flatten().filter_map(|t| t["alias"].as_str()).map(alias_family);
        let family = spec["amiFamily"].as_str().map(str::to_ascii_lowercase).filter(|f| f != "custom");
        let Some(other) = aliases.chain(family).find(|f| *f != cluster_family) else { continue };
        out.push(
            sources
                .error(raw.span, ErrorCode::E0159, format!("this raw EC2NodeClass fragment moves the class to AMI family `{other}`, but the cluster's `ami` is `{}`: gpuplan chooses the device plugin, the volume and the time-slicing settings from `ami`", profile.cluster.ami.value))
                .label("raw fragment")
                .help(format!("say the image with the cluster's `ami` line (e.g. ami \"{other}@<version>\") and leave amiSelectorTerms and amiFamily out of the fragment")),
        );
    }
    out
}
