//! EC2NodeClass (or EKS Auto Mode NodeClass) → what a profile says of it: the cluster block's role, AMI, discovery and
//! cluster tags, reservations, local NVMe, Bottlerocket time-slicing, user data, ephemeral storage and kubelet, and a
//! `raw` block for the rest. Every leaf field is consumed by a setting or carried (or named in a warning), as for
//! NodePools (`map`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::consumed::Consumed;
use super::map::take_gpuplan_metadata;
use super::model::{Line, Warning};
use super::read::Doc;

/// The EC2NodeClass fields that become the cluster block (and reservation lines); the rest become warnings.
pub struct ClassFacts {
    pub role: Option<String>,
    /// `spec.instanceProfile`: the cluster's `instance-profile` (written instead of `node-role`).
    pub instance_profile: Option<String>,
    pub ami: Option<String>,
    pub discovery_tag: Option<String>,
    pub cluster_tag: Option<String>,
    pub reservation: Vec<Line>,
    /// `instanceStorePolicy: RAID0`: the class's pools use local NVMe as scratch.
    pub instance_store_raid0: bool,
    /// `placementGroupSelector: {name: …}`: the class's pools say `placement-group` (a selector by id stays raw).
    pub placement_group: Option<String>,
    /// Bottlerocket user data that only time-slices the GPUs: the replicas (the class's pools say `time-slicing`).
    pub time_slicing: Option<u32>,
    /// Any other userData, verbatim: the profile's cluster `user-data` (for the profile's primary class).
    pub user_data: Option<String>,
    /// An EKS Auto Mode NodeClass's `ephemeralStorage.size` (`ephemeral-storage` in the cluster block).
    pub ephemeral_storage: Option<String>,
    /// `spec.kubelet`'s fields a `kubelet` block says (the class's pools write it).
    pub kubelet: Option<Value>,
    /// The fields no setting says: a `raw` block (the cluster block's for the profile's primary class, else each pool's).
    pub raw: Option<Line>,
    /// The fragment `raw` carries (to leave out of another class's what the primary class's already says).
    pub raw_fragment: Option<Value>,
    pub comments: Vec<String>,
}

impl ClassFacts {
    /// The image the profile's `ami` line says for this class: its alias, else (AMIs selected by id, carried in `raw`)
    /// the `amiFamily` they belong to, as `<family>@latest`, since gpuplan derives the device plugin and volumes from
    /// the family (E0159 otherwise); None for neither, or a `Custom` family.
    pub fn ami_alias(&self) -> Option<String> {
        let family = || self.raw_fragment.as_ref()?["spec"]["amiFamily"].as_str().filter(|x| !x.eq_ignore_ascii_case("custom")).map(|x| format!("{}@latest", x.to_ascii_lowercase()));
        self.ami.clone().or_else(family)
    }
}

pub fn map_class(doc: &Doc, warnings: &mut Vec<Warning>) -> ClassFacts {
    let (with_storage_defaults, defaults) = auto_mode_storage_defaults(doc).unzip();
    let defaults = defaults.unwrap_or_default();
    let doc = with_storage_defaults.as_ref().unwrap_or(doc);
    let c = &doc.object;
    let mut used = Consumed::default();
    for f in ["apiVersion", "kind", "metadata.name"] {
        used.take(f);
    }
    take_gpuplan_hardware(c, &mut used);
    let instance_store_raid0 = c["spec"]["instanceStorePolicy"] == "RAID0";
    if instance_store_raid0 {
        used.take("spec.instanceStorePolicy");
    }
    let selector = c["spec"]["placementGroupSelector"].as_object();
    let placement_group = selector.filter(|s| s.len() == 1).and_then(|s| s.get("name")?.as_str()).map(str::to_string);
    if placement_group.is_some() {
        used.take("spec.placementGroupSelector.name");
    }
    take_gpuplan_metadata(c, &mut used);
    let at = format!("{} {}/{}", doc.file, doc.kind, doc.name);
    let ephemeral_storage = auto_mode_storage(c, &mut used);
    warnings.extend(default_selectors(doc));
    let role = c["spec"]["role"].as_str().map(str::to_string);
    if role.is_some() {
        used.take("spec.role");
    }
    let instance_profile = c["spec"]["instanceProfile"].as_str().map(str::to_string);
    if instance_profile.is_some() {
        used.take("spec.instanceProfile");
    }
    let ami = c["spec"]["amiSelectorTerms"][0]["alias"].as_str().map(str::to_string);
    if ami.is_some() && c["spec"]["amiSelectorTerms"].as_array().is_some_and(|a| a.len() == 1) {
        used.take("spec.amiSelectorTerms");
    }
    let (discovery_tag, cluster_tag) = class_tags(c, &mut used);
    let reservation = super::reservations::reservation_terms(c, &at, &mut used);
    let time_slicing = c["spec"]["userData"].as_str().filter(|_| ami.as_deref().is_some_and(crate::solve::host_device_plugin)).and_then(super::bottlerocket::time_slicing);
    let user_data = c["spec"]["userData"].as_str().filter(|_| time_slicing.is_none()).map(str::to_string);
    if c["spec"]["userData"].is_string() {
        used.take("spec.userData");
    }
    let kubelet = class_kubelet(c, &at, &mut used);
    super::raw::take_gitops_annotations(doc, &mut used);
    let with_default_volumes = default_volumes(doc);
    let doc = with_default_volumes.as_ref().unwrap_or(doc);
    let (raw, owned) = super::raw::carry_with_defaults(doc, &used, &doc.kind, &defaults, warnings);
    let comments = used.leftovers(doc, &owned, warnings);
    let raw_fragment = super::raw::unconsumed(doc, &used);
    ClassFacts { role, instance_profile, ami, discovery_tag, cluster_tag, reservation, instance_store_raid0, placement_group, time_slicing, user_data, ephemeral_storage, kubelet, raw, raw_fragment, comments }
}

/// gpuplan's own volumes and metadata options, consumed without a line (a class of gpuplan's without volumes is
/// `default_volumes`'s `null`, carried).
fn take_gpuplan_hardware(c: &Value, used: &mut Consumed) {
    // So are gpuplan's own volumes (size, gp3 IOPS and throughput; image-cache snapshots aside). A hand-written
    // class's volumes and metadata options are its own: they go to its `raw` block, so the pools keep them.
    let ours = super::read::generated_by_gpuplan(c);
    let snapshot = c["spec"]["blockDeviceMappings"].as_array().into_iter().flatten().any(|m| m["ebs"].get("snapshotID").is_some());
    if ours && !snapshot && c["spec"]["blockDeviceMappings"].is_array() {
        used.take("spec.blockDeviceMappings");
    }
    // metadataOptions (IMDSv2 only, hop limit 1) is gpuplan's fixed hardening (the template's): another value is the
    // class's own.
    let hardening = serde_json::json!({"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"});
    if ours || c["spec"]["metadataOptions"] == hardening {
        used.take("spec.metadataOptions");
    }
}

/// The class's `karpenter.sh/discovery` tag (its subnet selector's; the selectors are consumed when they select by it
/// alone) and gpuplan's `gpuplan.dev/cluster` tag.
fn class_tags(c: &Value, used: &mut Consumed) -> (Option<String>, Option<String>) {
    let tag = |terms: &str| c["spec"][terms][0]["tags"]["karpenter.sh/discovery"].as_str().map(str::to_string);
    let discovery_tag = tag("subnetSelectorTerms");
    for terms in ["subnetSelectorTerms", "securityGroupSelectorTerms"] {
        let only_discovery = c["spec"][terms].as_array().is_some_and(|a| a.len() == 1 && a[0]["tags"].as_object().is_some_and(|t| t.len() == 1));
        if tag(terms).is_some() && tag(terms) == discovery_tag && only_discovery {
            used.take(format!("spec.{terms}"));
        }
    }
    let mut tags: BTreeMap<String, String> = BTreeMap::new();
    if let Some(t) = c["spec"]["tags"].as_object() {
        for (k, v) in t {
            tags.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
    }
    let cluster_tag = tags.get("gpuplan.dev/cluster").cloned();
    for k in tags.keys().filter(|k| k.starts_with("gpuplan.dev/")) {
        used.take(format!("spec.tags.{k}"));
    }
    (discovery_tag, cluster_tag)
}

/// `spec.kubelet`'s fields a `kubelet` block says (the others stay for `raw`).
fn class_kubelet(c: &Value, at: &str, used: &mut Consumed) -> Option<Value> {
    let mut kubelet_fields = Consumed::default();
    super::raw::kubelet_block(&c["spec"]["kubelet"], "spec.kubelet", at, &mut kubelet_fields).map(|_| {
        let known: serde_json::Map<String, Value> = c["spec"]["kubelet"].as_object().into_iter().flatten().filter(|(k, _)| kubelet_fields.covers(&format!("spec.kubelet.{k}"))).map(|(k, v)| (k.clone(), v.clone())).collect();
        known.keys().for_each(|k| used.take(format!("spec.kubelet.{k}")));
        Value::Object(known)
    })
}

/// A hand-written EC2NodeClass without `blockDeviceMappings` launches with Karpenter's default volumes (AL2023: a 20Gi
/// gp3 root volume; aws/karpenter-provider-aws v1.14.1 `pkg/providers/amifamily` `DefaultBlockDeviceMappings`), while
/// gpuplan's class template adds its own 200Gi volume: a bigger disk, more ephemeral storage, another EBS bill. The
/// class then carries `blockDeviceMappings: null` in its `raw` block, which deletes gpuplan's volume again when compile
/// merges it: the adopted nodes get the disk the original's get. gpuplan's own class without them is one whose profile
/// said that `null` (its template always writes volumes): the same line comes back, or the volumes and the cost bound
/// that prices them would change on the round trip.
fn default_volumes(doc: &Doc) -> Option<Doc> {
    let spec = doc.object.get("spec")?.as_object()?;
    if doc.kind != "EC2NodeClass" || spec.contains_key("blockDeviceMappings") {
        return None;
    }
    let mut with_null = doc.clone();
    with_null.object["spec"]["blockDeviceMappings"] = Value::Null;
    Some(with_null)
}

/// An EKS Auto Mode NodeClass without subnet or security-group selectors launches into the cluster's own (EKS User
/// Guide, Node Class Specification); gpuplan's NodeClass selects both by its discovery tag: named, for each.
fn default_selectors(doc: &Doc) -> Vec<Warning> {
    if doc.kind != "NodeClass" || doc.is_gpuplans() {
        return Vec::new();
    }
    ["subnetSelectorTerms", "securityGroupSelectorTerms"]
        .into_iter()
        .filter(|terms| doc.object["spec"][*terms].is_null())
        .map(|terms| Warning {
            file: doc.file.clone(),
            object: format!("{}/{}", doc.kind, doc.name),
            field: format!("spec.{terms}"),
            message: format!("absent: Auto Mode uses the cluster's own; gpuplan's NodeClass writes {terms} selecting the tag karpenter.sh/discovery: <the profile's discovery-tag>: tag those subnets or security groups so, or edit `discovery-tag`"),
        })
        .collect()
}

/// A hand-written EKS Auto Mode NodeClass launches with the ephemeral storage the EKS User Guide gives as defaults
/// ("Create a Node Class for Amazon EKS", Node Class Specification: 80Gi, 3000 IOPS, 125 MiB/s), where gpuplan's
/// NodeClass template writes its own (200Gi, 10000, 500): the fields the original leaves out are written in at those
/// defaults, so that `ephemeral-storage` and the class's `raw` block keep the original's disk.
fn auto_mode_storage_defaults(doc: &Doc) -> Option<(Doc, Vec<String>)> {
    let ours = doc.is_gpuplans();
    if ours || doc.kind != "NodeClass" || !doc.object["spec"].is_object() {
        return None;
    }
    let mut with = doc.clone();
    let mut defaulted = Vec::new();
    let storage = &mut with.object["spec"]["ephemeralStorage"];
    // Anything but a map (or absent) is the original's schema error, which validation reports as written.
    if !(storage.is_null() || storage.is_object()) {
        return None;
    }
    for (field, default) in [("size", serde_json::json!("80Gi")), ("iops", serde_json::json!(3000)), ("throughput", serde_json::json!(125))] {
        if storage.get(field).is_none_or(Value::is_null) {
            storage[field] = default;
            defaulted.push(format!("spec.ephemeralStorage.{field}"));
        }
    }
    Some((with, defaulted))
}

/// An Auto Mode NodeClass's `ephemeralStorage`: the size becomes `ephemeral-storage`; IOPS and throughput are consumed
/// only when they are gpuplan's own (10000, 500: the NodeClass template's), any other value stays a warning.
fn auto_mode_storage(c: &Value, used: &mut Consumed) -> Option<String> {
    let storage = &c["spec"]["ephemeralStorage"];
    for (field, ours) in [("iops", 10000), ("throughput", 500)] {
        if storage[field].as_u64() == Some(ours) {
            used.take(format!("spec.ephemeralStorage.{field}"));
        }
    }
    let size = storage["size"].as_str()?;
    used.take("spec.ephemeralStorage.size");
    Some(size.to_string())
}
