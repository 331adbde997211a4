//! What EKS Auto Mode does with an instance type: which types it launches and which `eks.amazonaws.com/instance-*`
//! labels it gives a node. Written from the Amazon EKS User Guide (read 2026-11-24; the guide's source is
//! awsdocs/amazon-eks-user-guide, `latest/ug/automode/`):
//! - "Create a Node Pool for EKS Auto Mode", section "EKS Auto Mode Supported" (labels), [`NODE_POOL_DOC`];
//! - "Learn about Amazon EKS Auto Mode managed instances", section "EKS Auto Mode supported instance reference"
//!   (families, more than 1 CPU, no nano/micro/small size), [`INSTANCES_DOC`];
//! - "Deploy an accelerated workload": Auto Mode ships the NVIDIA and Neuron drivers and device plugins (the NVIDIA
//!   device plugin "is not visible as a daemon set within your cluster"), [`ACCELERATED_DOC`].
//!
//! Auto Mode runs Karpenter with its own label domain: each `karpenter.k8s.aws/instance-*` label of self-managed
//! Karpenter has an `eks.amazonaws.com/instance-*` twin with the same values (the guide's table gives the same
//! examples: `g4dn`, `8xlarge`, `131072` MiB, GPU memory in MiB per GPU, local NVMe in GiB). `kubernetes.io/os`
//! and `node.kubernetes.io/windows-build` are "not supported" (Linux only).

use super::InstanceType;

pub const NODE_POOL_DOC: &str = "https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html#auto-supported-labels";
pub const NODE_CLASS_DOC: &str = "https://docs.aws.amazon.com/eks/latest/userguide/create-node-class.html";
pub const INSTANCES_DOC: &str = "https://docs.aws.amazon.com/eks/latest/userguide/automode-learn-instances.html#auto-supported-instances";
pub const ACCELERATED_DOC: &str = "https://docs.aws.amazon.com/eks/latest/userguide/auto-accelerated.html";

/// The API group of Auto Mode's NodeClass (`eks.amazonaws.com/v1`, kind `NodeClass`).
pub const GROUP: &str = "eks.amazonaws.com";
/// The label Auto Mode sets on its nodes (`eks.amazonaws.com/compute-type: auto`).
pub const COMPUTE_TYPE_LABEL: &str = "eks.amazonaws.com/compute-type";
/// The label a NodeClaim gets naming its NodeClass (the tag key the guide reserves: `eks.amazonaws.com/nodeclass`).
pub const NODE_CLASS_LABEL: &str = "eks.amazonaws.com/nodeclass";

/// The `instance-*` labels the guide's table lists, without their domain.
const LABELS: &[&str] = &[
    "instance-hypervisor",
    "instance-encryption-in-transit-supported",
    "instance-category",
    "instance-generation",
    "instance-family",
    "instance-size",
    "instance-cpu",
    "instance-cpu-manufacturer",
    "instance-memory",
    "instance-ebs-bandwidth",
    "instance-network-bandwidth",
    "instance-gpu-name",
    "instance-gpu-manufacturer",
    "instance-gpu-count",
    "instance-gpu-memory",
    "instance-local-nvme",
];

/// The families of the guide's "supported instance reference" table, every row.
pub const SUPPORTED_FAMILIES: &[&str] = &[
    // Compute optimized
    "c8id", "c8i", "c8i-flex", "c8gd", "c8gn", "c8g", "c8a", "c8gb", "c7a", "c7g", "c7gn", "c7gd", "c7i", "c7i-flex", "c6a", "c6g", "c6i", "c6gn",
    "c6id", "c6in", "c6gd", "c5", "c5a", "c5d", "c5ad", "c5n", "c4",
    // General purpose
    "m8id", "m8i", "m8i-flex", "m8a", "m8azn", "m8gn", "m8gb", "m8gd", "m8g", "m7i", "m7a", "m7g", "m7gd", "m7i-flex", "m6a", "m6i", "m6in", "m6g",
    "m6idn", "m6id", "m6gd", "m5", "m5a", "m5ad", "m5n", "m5dn", "m5d", "m5zn", "m4",
    // Memory optimized
    "r8id", "r8i", "r8i-flex", "r8gn", "r8gb", "r8gd", "r8g", "r8a", "r7a", "r7iz", "r7gd", "r7i", "r7g", "r6a", "r6i", "r6id", "r6in", "r6idn",
    "r6g", "r6gd", "r5", "r5n", "r5a", "r5dn", "r5b", "r5ad", "r5d", "r4",
    // Burstable, high memory, storage optimized
    "t4g", "t3", "t3a", "t2", "z1d", "x8aedz", "x8g", "x8i", "x2gd", "i8ge", "i7i", "i8g", "i7ie", "i4g", "i4i", "i3", "i3en", "is4gen", "d3",
    "d3en", "im4gn",
    // Accelerated computing
    "p6-b200", "p6-b300", "p5", "p5e", "p5en", "p4d", "p4de", "p3dn", "g7e", "g6", "gr6", "g6e", "g5g", "g5", "g4dn", "g4ad", "inf2", "inf1",
    "trn1", "trn1n", "trn2",
    // High performance computing
    "hpc8a", "x2iezn", "x2iedn", "x2idn",
];

/// Whether Auto Mode launches the type: a supported family, more than 1 vCPU, and a size other than nano, micro
/// or small.
pub fn supports(t: &InstanceType) -> bool {
    SUPPORTED_FAMILIES.contains(&t.family.as_str()) && t.vcpu > 1 && !matches!(t.size.as_str(), "nano" | "micro" | "small")
}

/// The Auto Mode twin of a self-managed Karpenter label (`karpenter.k8s.aws/instance-gpu-name` →
/// `eks.amazonaws.com/instance-gpu-name`), for the labels the guide lists.
pub fn auto_label(karpenter_key: &str) -> Option<String> {
    let short = karpenter_key.strip_prefix("karpenter.k8s.aws/")?;
    LABELS.contains(&short).then(|| format!("{GROUP}/{short}"))
}

/// The self-managed Karpenter label an Auto Mode label stands for (the reverse of [`auto_label`]).
pub fn karpenter_label(auto_key: &str) -> Option<String> {
    let short = auto_key.strip_prefix("eks.amazonaws.com/")?;
    LABELS.contains(&short).then(|| format!("karpenter.k8s.aws/{short}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_label_has_a_twin_both_ways() {
        for short in LABELS {
            let k = format!("karpenter.k8s.aws/{short}");
            assert_eq!(karpenter_label(&auto_label(&k).unwrap()), Some(k));
        }
        assert_eq!(auto_label("karpenter.k8s.aws/instance-accelerator-name"), None, "the guide lists no accelerator labels");
    }
}
