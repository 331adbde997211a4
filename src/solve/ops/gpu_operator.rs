//! The NVIDIA GPU Operator's ClusterPolicy as the solver decides it ([`GpuOperatorPlan`]): which components run, the
//! time-slicing and MIG configs in use, and the image of each component (the reasons are in `ops::gpu_operator`,
//! which renders it).

use std::collections::{BTreeMap, BTreeSet};

use crate::profile::gpu_operator_releases::{release, Release, RELEASES};
use crate::profile::monitoring::{ImageOverride, Monitoring};

#[derive(Debug, Clone, PartialEq)]
pub struct GpuOperatorPlan {
    pub namespace: String,
    /// The GPU Operator release the images come from.
    pub release: String,
    /// Driver and toolkit containers (false on EKS accelerated AMIs).
    pub driver_enabled: bool,
    pub toolkit_enabled: bool,
    /// Time-slicing replicas in use, one device-plugin config each.
    pub time_slicing: BTreeSet<u32>,
    /// MIG configs in use (`nvidia.com/mig.config` values) and the strategy.
    pub mig_configs: BTreeSet<String>,
    pub mig_strategy: &'static str,
    /// Labels for the operator-managed dcgm-exporter ServiceMonitor (Prometheus' selector).
    pub service_monitor_labels: BTreeMap<String, String>,
    /// Image of every enabled component, by ClusterPolicy spec path.
    pub images: BTreeMap<String, Image>,
}

impl GpuOperatorPlan {
    pub fn new(monitoring: &Monitoring, accelerated_ami: bool, time_slicing: BTreeSet<u32>, mig_configs: BTreeSet<String>) -> GpuOperatorPlan {
        // Configs that mix profiles are refused by the solver (E0178), so MIG always means `single`.
        let mig_strategy = if mig_configs.is_empty() { "none" } else { "single" };
        let driver_enabled = !accelerated_ami;
        let mut enabled = vec!["devicePlugin", "dcgmExporter", "gfd", "nodeStatusExporter", "validator"];
        if driver_enabled {
            enabled.extend(["driver", "driver.manager"]);
        }
        if !accelerated_ami {
            enabled.push("toolkit");
        }
        if !mig_configs.is_empty() {
            enabled.push("migManager");
        }
        // The parser accepts only releases of the table.
        let release = release(&monitoring.gpu_operator_release).unwrap_or(&RELEASES[0]);
        GpuOperatorPlan {
            namespace: monitoring.gpu_operator_namespace.clone(),
            release: release.version.to_string(),
            driver_enabled,
            toolkit_enabled: !accelerated_ami,
            time_slicing,
            images: images(release, &enabled, &monitoring.gpu_operator_images),
            mig_configs,
            mig_strategy,
            service_monitor_labels: monitoring.labels.clone(),
        }
    }
}

/// A container image as the ClusterPolicy spells it (`<repository>/<image>:<version>`, or `@<version>` for a
/// `sha256:` digest).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Image {
    pub repository: String,
    pub image: String,
    pub version: String,
}

/// The images of `release` for the given components, with the profile's overrides applied field by field.
pub fn images(release: &Release, enabled: &[&str], overrides: &BTreeMap<String, ImageOverride>) -> BTreeMap<String, Image> {
    let mut out = BTreeMap::new();
    for (component, repository, image, version) in release.images {
        if !enabled.contains(component) {
            continue;
        }
        let o = overrides.get(*component).cloned().unwrap_or_default();
        out.insert(
            component.to_string(),
            Image {
                repository: o.repository.unwrap_or_else(|| repository.to_string()),
                image: o.image.unwrap_or_else(|| image.to_string()),
                version: o.version.unwrap_or_else(|| version.to_string()),
            },
        );
    }
    out
}
