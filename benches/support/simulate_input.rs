//! Generated `gpuplan simulate` inputs shared by the simulate benches: NodePools over general and GPU families with
//! taints, weights and limits, and pods that select them, against the full catalog.

#![allow(dead_code)]

/// The EC2NodeClass every generated NodePool names.
pub const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";

/// NodePool `pool-<i>`: one family (general or GPU), a team label and taint, the GPU taint on GPU families.
pub fn pool(i: usize) -> String {
    let families = [("m5", false), ("c6i", false), ("r6i", false), ("g5", true), ("g6", true), ("g4dn", true), ("m7g", false), ("p4d", true)];
    let (family, gpu) = families[i % families.len()];
    let taint = if gpu { "      - key: nvidia.com/gpu\n        effect: NoSchedule\n" } else { "" };
    let limits = if gpu { format!("    nvidia.com/gpu: \"{}\"\n", 16 + i % 5 * 8) } else { format!("    cpu: \"{}\"\n", 200 + i % 7 * 100) };
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: pool-{i:03}\nspec:\n  weight: {w}\n  limits:\n{limits}  template:\n    metadata:\n      labels:\n        team: t{team}\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [{family}]\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [spot, on-demand]\n      taints:\n      - key: team\n        value: t{team}\n        effect: NoSchedule\n{taint}",
        w = i % 10 * 10,
        team = i / 2,
    )
}

/// Pod `pod-<i>` of one of `pools / 2` teams; a third of the GPU teams' pods request a GPU.
pub fn pod(i: usize, pools: usize) -> String {
    let team = (i * 7) % (pools / 2);
    let gpu = [3, 4, 5, 7].contains(&((team * 2) % 8)) && i % 3 == 0;
    let limits = if gpu { "      limits:\n        nvidia.com/gpu: 1\n" } else { "" };
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{i:05}\n  namespace: bench\nspec:\n  nodeSelector:\n    team: t{team}\n  tolerations:\n  - key: team\n    value: t{team}\n  - key: nvidia.com/gpu\n    operator: Exists\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: \"{cpu}m\"\n        memory: {mem}Mi\n{limits}",
        cpu = 250 + (i % 13) * 250,
        mem = 512 + (i % 11) * 1024,
    )
}

/// The manifests file: the node class and `pools` NodePools.
pub fn manifests(pools: usize) -> String {
    std::iter::once(NODE_CLASS.to_string()).chain((0..pools).map(pool)).collect::<Vec<_>>().join("---\n")
}

/// The pods file: `pods` pods over `pools / 2` teams.
pub fn pods(pods: usize, pools: usize) -> String {
    (0..pods).map(|i| pod(i, pools)).collect::<Vec<_>>().join("---\n")
}
