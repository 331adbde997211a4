//! The GPU Operator releases gpuplan knows: the images each release's Helm chart pins for the ClusterPolicy
//! components gpuplan enables. A profile's `gpu-operator version="…"` must name one of them (E0179) and
//! `image "<component>"` one of their components; the ops stage renders the ClusterPolicy from the same table.

/// One GPU Operator release and the images its Helm chart pins for the ClusterPolicy components gpuplan enables:
/// `deployments/gpu-operator/values.yaml` at the release tag (the operator, validator and node-status-exporter
/// images default to the chart's appVersion, which the release workflow sets to the tag).
pub struct Release {
    pub version: &'static str,
    /// (component, repository, image, version); components are ClusterPolicy spec paths.
    pub images: &'static [(&'static str, &'static str, &'static str, &'static str)],
}

/// The release gpuplan validates against: its ClusterPolicy CRD is `src/crds/gpu-operator/`.
pub const DEFAULT_RELEASE: &str = "v26.7.0";

/// The one place image versions live. Add a release here (with its CRD) to let `gpu-operator version="…"` pick it.
pub const RELEASES: &[Release] = &[Release {
    version: "v26.7.0",
    images: &[
        ("dcgmExporter", "nvcr.io/nvidia/k8s", "dcgm-exporter", "4.6.0-4.8.3-distroless"),
        ("devicePlugin", "nvcr.io/nvidia", "k8s-device-plugin", "v0.20.0"),
        ("driver", "nvcr.io/nvidia", "driver", "595.91.07"),
        ("driver.manager", "nvcr.io/nvidia/cloud-native", "k8s-driver-manager", "v0.12.0"),
        ("gfd", "nvcr.io/nvidia", "k8s-device-plugin", "v0.20.0"),
        ("migManager", "nvcr.io/nvidia/cloud-native", "k8s-mig-manager", "v0.15.0"),
        ("nodeStatusExporter", "nvcr.io/nvidia", "gpu-operator", "v26.7.0"),
        ("toolkit", "nvcr.io/nvidia/k8s", "container-toolkit", "v1.20.0"),
        ("validator", "nvcr.io/nvidia", "gpu-operator", "v26.7.0"),
    ],
}];

/// Components whose image a profile may override (`gpu-operator { image "<component>" … }`).
pub fn components() -> Vec<&'static str> {
    RELEASES[0].images.iter().map(|i| i.0).collect()
}

pub fn release(version: &str) -> Option<&'static Release> {
    RELEASES.iter().find(|r| r.version == version)
}
