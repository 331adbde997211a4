//! The node classes pools launch with ([`NodeClassPlan`]): an EC2NodeClass (or an EKS Auto Mode NodeClass) per
//! profile, with variants for local NVMe, Bottlerocket time-slicing, a pool's own kubelet or raw settings, and each
//! capacity reservation.

use crate::catalog::ebs::{size_gib, EbsVolume, GP3_BASELINE_IOPS, GP3_BASELINE_THROUGHPUT_MIBPS};
use crate::diagnostic::Spanned;
use crate::profile::{Profile, Reserved, Sharing, Tier};

#[derive(Debug, Clone, PartialEq)]
pub struct NodeClassPlan {
    pub name: String,
    pub profile: String,
    pub source: String,
    /// `spec.role`: the cluster's `node-role` (its default when the line is absent); not rendered with `instance_profile`.
    pub role: String,
    /// The cluster's `instance-profile`: `spec.instanceProfile`, rendered instead of `spec.role`.
    pub instance_profile: Option<String>,
    pub ami_alias: String,
    pub discovery_tag: String,
    pub reserved: Option<Reserved>,
    /// `instanceStorePolicy: RAID0`: the instance's NVMe disks striped for the kubelet and containers.
    pub instance_store_raid0: bool,
    /// An EBS snapshot with pre-pulled images for the Bottlerocket data volume.
    pub image_cache_snapshot: Option<String>,
    /// Bottlerocket NVIDIA variants run the device plugin on the host: time-slicing is a setting in their user data
    /// (`settings.kubelet-device-plugins.nvidia`), so each replicas count gets its own class.
    pub time_slicing: Option<u32>,
    /// The profile's `user-data`, verbatim.
    pub user_data: Option<String>,
    /// An EKS Auto Mode `eks.amazonaws.com/v1` NodeClass (no AMI, user data or volumes: `ephemeral_storage` sizes the
    /// node's disk) rather than an EC2NodeClass.
    pub auto_mode: bool,
    /// Auto Mode: `ephemeralStorage.size`.
    pub ephemeral_storage: String,
    /// `kubelet { … }` of the pools that use this class: `spec.kubelet`.
    pub kubelet: Option<serde_json::Map<String, serde_json::Value>>,
    /// `raw` class fragments, merged in order after rendering: the cluster block's, then the pool's.
    pub raws: Vec<Spanned<crate::profile::Raw>>,
    /// `placement-group "<name>"` of the pools that use this class: `spec.placementGroupSelector.name`.
    pub placement_group: Option<String>,
}

impl NodeClassPlan {
    /// The EBS volumes every node of this class gets, as the EC2NodeClass's `blockDeviceMappings` renders them (the
    /// template loops over these, so the cost bounds price exactly what is rendered). Setting blockDeviceMappings
    /// replaces Karpenter's defaults entirely, so Bottlerocket keeps its 4 GiB OS volume at gp3's baseline and images go
    /// to its data volume; AL2023 has one root volume. The image volume is 200 GiB gp3 at 10,000 IOPS and 500 MiB/s:
    /// multi-GB ML images pull and unpack faster above gp3's baseline (3,000 IOPS, 125 MiB/s). An Auto Mode NodeClass
    /// has one volume, `ephemeralStorage`, at Auto Mode's default performance (EKS user guide, "Create a Node Class
    /// for Amazon EKS": iops 3000, throughput 125).
    pub fn volumes(&self) -> Vec<EbsVolume> {
        // A raw fragment that writes `blockDeviceMappings` (adopt's `null` keeps Karpenter's default) decides them.
        if let Some(raw) = self.raws.iter().rev().find(|r| r.value.patch["spec"].get("blockDeviceMappings").is_some()) {
            let mut class = serde_json::json!({ "spec": raw.value.patch["spec"].clone() });
            class["spec"]["amiSelectorTerms"] = serde_json::json!([{ "alias": self.ami_alias }]);
            return crate::catalog::ebs::rendered_volumes(&class);
        }
        if self.auto_mode {
            let size_gib = size_gib(&self.ephemeral_storage).unwrap_or(200);
            return vec![EbsVolume::gp3("ephemeralStorage", size_gib, GP3_BASELINE_IOPS, GP3_BASELINE_THROUGHPUT_MIBPS)];
        }
        let images = |device: &str| EbsVolume::gp3(device, 200, 10_000, 500);
        if host_device_plugin(&self.ami_alias) {
            vec![crate::catalog::ebs::karpenter_default_volumes(true).remove(0), images("/dev/xvdb")]
        } else {
            vec![images("/dev/xvda")]
        }
    }
}

/// The Auto Mode NodeClass's disk when the cluster names none: the size of the EC2NodeClass's gp3 volume, so that
/// multi-GB ML images fit either way (Auto Mode's own default is 80Gi).
pub const AUTO_MODE_EPHEMERAL_STORAGE: &str = "200Gi";

/// Whether nodes of this AMI alias run the NVIDIA device plugin themselves: the Bottlerocket NVIDIA variants do
/// (bottlerocket-os/bottlerocket QUICKSTART-EKS.md, "aws-k8s-*-nvidia" variants: no device-plugin DaemonSet needed).
pub fn host_device_plugin(ami_alias: &str) -> bool {
    ami_alias.starts_with("bottlerocket@")
}

/// The profile's class as its cluster block says it, named after the profile: what every pool of the profile uses
/// unless it needs a variant.
pub fn default_class(profile: &Profile, source: &str) -> NodeClassPlan {
    NodeClassPlan {
        name: profile.name.value.clone(),
        profile: profile.name.value.clone(),
        source: source.to_string(),
        role: profile.cluster.node_role.value.clone(),
        instance_profile: profile.cluster.instance_profile.as_ref().map(|p| p.value.clone()),
        ami_alias: profile.cluster.ami.value.clone(),
        discovery_tag: profile.cluster.discovery_tag.value.clone(),
        reserved: None,
        instance_store_raid0: false,
        image_cache_snapshot: profile.cluster.image_cache_snapshot.as_ref().map(|s| s.value.clone()),
        time_slicing: None,
        user_data: profile.cluster.user_data.as_ref().map(|u| u.value.clone()),
        auto_mode: profile.cluster.auto_mode.value,
        ephemeral_storage: profile.cluster.ephemeral_storage.as_ref().map_or(AUTO_MODE_EPHEMERAL_STORAGE, |s| s.value.as_str()).to_string(),
        kubelet: None,
        raws: profile.cluster.raws.clone(),
        placement_group: None,
    }
}

/// A profile's node class: `<profile>`, or `<profile>-nvme` for its pools that use local NVMe as scratch (the
/// instance-store policy is per EC2NodeClass).
pub fn default_class_name(profile: &str, raid0: bool, time_slicing: Option<u32>) -> String {
    let nvme = if raid0 { "-nvme" } else { "" };
    let shared = time_slicing.map(|r| format!("-ts{r}")).unwrap_or_default();
    format!("{profile}{nvme}{shared}")
}

/// The time-slicing a pool's node class must carry: Some only where the OS runs the device plugin (Bottlerocket).
pub fn class_time_slicing(tier: &Tier, host_plugin: bool) -> Option<u32> {
    match tier.settings.sharing.as_ref().map(|s| &s.value) {
        Some(Sharing::TimeSlicing { replicas }) if host_plugin => Some(*replicas),
        _ => None,
    }
}

/// What a node class renders from, leaving out where it was written (the pools of one class each record it, with
/// their own `raw` lines' spans).
pub fn class_settings(c: &NodeClassPlan) -> impl PartialEq + '_ {
    let raws: Vec<(&String, &serde_json::Value)> = c.raws.iter().map(|r| (&r.value.kind, &r.value.patch)).collect();
    ((&c.profile, &c.role, &c.ami_alias, &c.discovery_tag, &c.reserved, c.instance_store_raid0), (&c.image_cache_snapshot, c.time_slicing, &c.user_data, c.auto_mode, &c.ephemeral_storage, &c.kubelet, raws, &c.placement_group))
}
