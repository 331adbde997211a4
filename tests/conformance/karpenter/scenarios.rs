//! Generated scenarios for the differential test: NodePools (weights with ties, taints of every effect and
//! startupTaints, requirements with every operator over well-known and AWS labels, minValues, limits), pods
//! (cpu/memory/GPU requests, init and sidecar containers, tolerations, nodeSelector, required and preferred node
//! affinity with several terms; about 15% of workloads with a topology spread constraint on hostname, zone, capacity
//! type or a NodePool's `capacity-spread` label, or pod (anti-)affinity, required or preferred), NodeOverlays (price;
//! a rival of the same weight in most cases with one, to exercise conflicts), unavailable offerings, and in about 8%
//! of cases a static NodePool (`spec.replicas`) — the features `gpuplan simulate` models.
//! Deterministic from a seed (splitmix64), so `conformance/run --seed S` reproduces any run.

use std::fmt::Write;

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    /// 1..=max distinct elements, in the list's order.
    pub fn subset<T: Clone>(&mut self, xs: &[T], max: usize) -> Vec<T> {
        let n = 1 + self.below(max.min(xs.len()));
        let mut idx: Vec<usize> = (0..xs.len()).collect();
        for i in 0..n {
            let j = i + self.below(xs.len() - i);
            idx.swap(i, j);
        }
        let mut chosen = idx[..n].to_vec();
        chosen.sort();
        chosen.into_iter().map(|i| xs[i].clone()).collect()
    }
}

/// One generated case: manifests and pods as YAML, and `--unavailable` offerings.
pub struct Scenario {
    pub manifests: String,
    pub pods: String,
    pub unavailable: Vec<String>,
}

pub const FAMILIES: &[&str] = &["m5", "c5", "r5", "t3", "m6i", "c6i", "m7g", "c7g", "g4dn", "g5", "g6", "p3", "m5d", "inf2", "trn1"];
pub const GPU_FAMILIES: &[&str] = &["g4dn", "g5", "g6", "g6e", "p3", "p4d", "p5"];
const SIZES: &[&str] = &["medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge", "metal"];
const ZONES: &[&str] = &["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"];
const CATEGORIES: &[&str] = &["c", "m", "r", "t", "g", "p", "inf"];
const GPU_NAMES: &[&str] = &["t4", "a10g", "l4", "v100", "l40s", "a100"];
const TEAMS: &[&str] = &["a", "b"];

struct Taint {
    key: &'static str,
    value: Option<&'static str>,
    effect: &'static str,
}

const TAINTS: &[Taint] = &[
    Taint { key: "nvidia.com/gpu", value: None, effect: "NoSchedule" },
    Taint { key: "dedicated", value: Some("ml"), effect: "NoSchedule" },
    Taint { key: "spot", value: Some("true"), effect: "PreferNoSchedule" },
    Taint { key: "drain", value: Some("x"), effect: "NoExecute" },
];

fn list(values: &[String]) -> String {
    format!("[{}]", values.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", "))
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A node selector requirement as YAML flow (`{key: …, operator: …, values: […]}`), over the labels a NodePool or a
/// pod constrains.
fn requirement(r: &mut Rng, for_pod: bool, gpu_pool: bool) -> String {
    let e = |key: &str, op: &str, values: Vec<String>| {
        if values.is_empty() {
            format!("{{key: \"{key}\", operator: {op}}}")
        } else {
            format!("{{key: \"{key}\", operator: {op}, values: {}}}", list(&values))
        }
    };
    let n = |x: u64| vec![x.to_string()];
    match r.below(if for_pod { 17 } else { 15 }) {
        0 => e("karpenter.k8s.aws/instance-family", if r.chance(80) { "In" } else { "NotIn" }, r.subset(&strs(if gpu_pool { GPU_FAMILIES } else { FAMILIES }), 3)),
        1 => e("karpenter.k8s.aws/instance-category", if r.chance(70) { "In" } else { "NotIn" }, r.subset(&strs(CATEGORIES), 3)),
        2 => e("karpenter.k8s.aws/instance-generation", if r.chance(50) { "Gt" } else { "Lt" }, n(2 + r.below(6) as u64)),
        3 => e("karpenter.k8s.aws/instance-cpu", if r.chance(50) { "Gt" } else { "Lt" }, n(r.pick(&[1, 2, 4, 8, 16, 32, 64, 96]))),
        4 => e("karpenter.k8s.aws/instance-memory", if r.chance(50) { "Gt" } else { "Lt" }, n(r.pick(&[2048, 8192, 16384, 32768, 65536, 262144]))),
        5 => e("karpenter.k8s.aws/instance-size", if r.chance(70) { "In" } else { "NotIn" }, r.subset(&strs(SIZES), 4)),
        6 => e("karpenter.k8s.aws/instance-gpu-name", if r.chance(80) { "In" } else { "NotIn" }, r.subset(&strs(GPU_NAMES), 3)),
        7 => e("karpenter.k8s.aws/instance-gpu-count", r.pick(&["In", "Gt", "Lt"]), n(r.pick(&[0, 1, 2, 4, 8]))),
        8 => e("karpenter.k8s.aws/instance-gpu-memory", if r.chance(50) { "Gt" } else { "Lt" }, n(r.pick(&[16000, 22000, 24000, 45000, 80000]))),
        9 => e("karpenter.k8s.aws/instance-gpu-manufacturer", r.pick(&["In", "NotIn", "Exists", "DoesNotExist"]), if r.chance(50) { strs(&["nvidia"]) } else { Vec::new() }).replace("Exists, values: [\"nvidia\"]", "Exists").replace("DoesNotExist, values: [\"nvidia\"]", "DoesNotExist"),
        10 => e("karpenter.sh/capacity-type", "In", r.subset(&strs(&["spot", "on-demand", "reserved"]), 2)),
        11 => e("topology.kubernetes.io/zone", if r.chance(80) { "In" } else { "NotIn" }, r.subset(&strs(ZONES), 3)),
        12 => e("kubernetes.io/arch", "In", vec![r.pick(&["amd64", "arm64"]).to_string()]),
        13 => {
            let fam = r.pick(if gpu_pool { GPU_FAMILIES } else { FAMILIES });
            let sizes = r.subset(&strs(SIZES), 4);
            e("node.kubernetes.io/instance-type", "In", sizes.iter().map(|s| format!("{fam}.{s}")).collect())
        }
        14 => e(r.pick(&["karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-accelerator-name", "karpenter.k8s.aws/instance-local-nvme"]), r.pick(&["Exists", "DoesNotExist"]), Vec::new()),
        15 => e("team", r.pick(&["In", "NotIn", "Exists", "DoesNotExist"]), vec![r.pick(TEAMS).to_string()]).replace("Exists, values: [\"a\"]", "Exists").replace("Exists, values: [\"b\"]", "Exists"),
        _ => e("example.com/undefined", r.pick(&["In", "NotIn", "Exists", "DoesNotExist"]), vec!["x".into()]).replace("Exists, values: [\"x\"]", "Exists"),
    }
}

fn quantity_cpu(r: &mut Rng) -> &'static str {
    r.pick(&["100m", "250m", "500m", "1", "2", "3", "4", "7", "15", "31", "63"])
}

fn quantity_memory(r: &mut Rng) -> &'static str {
    r.pick(&["128Mi", "512Mi", "1Gi", "4Gi", "8Gi", "15Gi", "30Gi", "60Gi", "120Gi", "500Gi"])
}

/// The accelerator a pod limits: mostly NVIDIA GPUs, sometimes Neuron devices, sometimes EFA interfaces beside GPUs.
fn accelerator_limit(r: &mut Rng, n: i32) -> String {
    match r.below(10) {
        0 => format!("aws.amazon.com/neuron: {n}"),
        1 => format!("nvidia.com/gpu: {n}\n            vpc.amazonaws.com/efa: {}", r.pick(&[1, 4, 32])),
        _ => format!("nvidia.com/gpu: {n}"),
    }
}

/// DaemonSets (in 30% of the cases): requests from tiny to node-filling, tolerating nothing, everything or some
/// pool's taints, some selecting a label or instance types by affinity, some binding a host port.
fn daemon_sets(r: &mut Rng, pool_taints: &[Vec<usize>]) -> String {
    let mut out = String::new();
    if !r.chance(30) {
        return out;
    }
    for d in 0..1 + r.below(3) {
        let mut spec = String::new();
        match r.below(3) {
            0 => spec.push_str("      tolerations:\n      - {operator: Exists}\n"),
            1 => {
                let ts = &pool_taints[r.below(pool_taints.len())];
                if !ts.is_empty() {
                    spec.push_str("      tolerations:\n");
                    for &t in ts {
                        let _ = writeln!(spec, "      - {{key: \"{}\", operator: Exists}}", TAINTS[t].key);
                    }
                }
            }
            _ => {}
        }
        match r.below(5) {
            0 => {
                let _ = writeln!(spec, "      nodeSelector:\n        team: \"{}\"", r.pick(TEAMS));
            }
            1 => {
                let gpu = r.chance(50);
                let _ = write!(spec, "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n              - {}\n", requirement(r, true, gpu));
            }
            _ => {}
        }
        let ports = if r.chance(20) { "\n        ports:\n        - {containerPort: 9100, hostPort: 9100}" } else { "" };
        let cpu = r.pick(&["10m", "100m", "500m", "1500m", "3"]);
        let memory = r.pick(&["20Mi", "256Mi", "1Gi", "6Gi"]);
        let _ = write!(out, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: d{d}\n  namespace: kube-system\nspec:\n  selector:\n    matchLabels: {{app: d{d}}}\n  template:\n    metadata:\n      labels: {{app: d{d}}}\n    spec:\n{spec}      containers:\n      - name: agent\n        image: agent:1{ports}\n        resources:\n          requests: {{cpu: {cpu}, memory: {memory}}}\n");
    }
    out
}

/// A topology spread constraint or a pod (anti-)affinity term for workload `w` (pod spec fields, indented for a
/// Deployment template), selecting its own pods (`app: w<w>`) or another workload's. `in_affinity`: the spec already
/// has an `affinity:` block (node affinity) to add the term to.
fn topology(r: &mut Rng, w: usize, workloads: usize, in_affinity: bool) -> String {
    let app = if r.chance(70) { w } else { r.below(workloads) };
    let spread = |r: &mut Rng, key: &str| {
        let when = if r.chance(75) { "DoNotSchedule" } else { "ScheduleAnyway" };
        let min_domains = if key.ends_with("zone") && when == "DoNotSchedule" && r.chance(15) { format!("\n        minDomains: {}", 2 + r.below(3)) } else { String::new() };
        format!("      topologySpreadConstraints:\n      - maxSkew: {}\n        topologyKey: {key}\n        whenUnsatisfiable: {when}{min_domains}\n        labelSelector:\n          matchLabels: {{app: w{app}}}\n", 1 + r.below(2))
    };
    let term = |kind: &str, required: bool, key: &str| {
        let head = if in_affinity { String::new() } else { "      affinity:\n".to_string() };
        if required {
            format!("{head}        {kind}:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - labelSelector:\n              matchLabels: {{app: w{app}}}\n            topologyKey: {key}\n")
        } else {
            format!("{head}        {kind}:\n          preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 50\n            podAffinityTerm:\n              labelSelector:\n                matchLabels: {{app: w{app}}}\n              topologyKey: {key}\n")
        }
    };
    match r.below(9) {
        0 => spread(r, "kubernetes.io/hostname"),
        1 => spread(r, "topology.kubernetes.io/zone"),
        2 => spread(r, "karpenter.sh/capacity-type"),
        3 => spread(r, "capacity-spread"),
        4 => term("podAntiAffinity", true, "kubernetes.io/hostname"),
        5 => term("podAffinity", true, "kubernetes.io/hostname"),
        6 => term("podAntiAffinity", false, r.pick(&["kubernetes.io/hostname", "topology.kubernetes.io/zone"])),
        7 => term("podAntiAffinity", true, "topology.kubernetes.io/zone"),
        _ => term("podAffinity", false, "kubernetes.io/hostname"),
    }
}

pub fn scenario(r: &mut Rng) -> Scenario {
    let mut m = String::new();
    // EC2NodeClasses: the default (AL2023, ENI-limited pods) and one with kubelet settings and a root volume.
    m.push_str("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n  role: KarpenterNodeRole\n  subnetSelectorTerms:\n  - tags: {karpenter.sh/discovery: c}\n  securityGroupSelectorTerms:\n  - tags: {karpenter.sh/discovery: c}\n");
    let kubelet_class = r.chance(35);
    if kubelet_class {
        let mut kubelet = if r.chance(50) { format!("    maxPods: {}\n", r.pick(&[8, 20, 58, 110])) } else { String::new() };
        if r.chance(40) {
            let _ = writeln!(kubelet, "    podsPerCore: {}", r.pick(&[1, 2, 4]));
        }
        let nodefs = if r.chance(30) { format!(", nodefs.available: \"{}\"", r.pick(&["5%", "15%", "2Gi"])) } else { String::new() };
        let device = r.pick(&["/dev/xvda", "/dev/xvdb", "/dev/sdz"]);
        let root = if r.chance(25) { "\n    rootVolume: true" } else { "" };
        let raid0 = if r.chance(25) { "  instanceStorePolicy: RAID0\n" } else { "" };
        let _ = write!(m, "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: tuned\nspec:\n  amiSelectorTerms:\n  - alias: {}\n  role: KarpenterNodeRole\n  subnetSelectorTerms:\n  - tags: {{karpenter.sh/discovery: c}}\n  securityGroupSelectorTerms:\n  - tags: {{karpenter.sh/discovery: c}}\n{raid0}  kubelet:\n{kubelet}    systemReserved: {{cpu: 100m, memory: 200Mi}}\n    kubeReserved: {{cpu: 200m}}\n    evictionHard: {{memory.available: \"{}\"{nodefs}}}\n  blockDeviceMappings:\n  - deviceName: {device}{root}\n    ebs: {{volumeSize: {}, volumeType: gp3}}\n", r.pick(&["al2023@latest", "bottlerocket@latest", "al2@latest"]), r.pick(&["5%", "200Mi"]), r.pick(&["50Gi", "200Gi"]));
    }
    // Capacity reservations (gpuplan assumes one per reservable type and zone for a class that selects any).
    let reserved_class = r.chance(10);
    if reserved_class {
        m.push_str("---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: reserved\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n  role: KarpenterNodeRole\n  subnetSelectorTerms:\n  - tags: {karpenter.sh/discovery: c}\n  securityGroupSelectorTerms:\n  - tags: {karpenter.sh/discovery: c}\n  capacityReservationSelectorTerms:\n  - id: cr-0123456789abcdef0\n");
    }
    let pools = 1 + r.below(4);
    let mut pool_taints: Vec<Vec<usize>> = Vec::new();
    let mut gpu_pools = Vec::new();
    // Where each NodePool's document starts in `m`, for a static NodePool that copies one.
    let mut pool_starts = Vec::new();
    for i in 0..pools {
        pool_starts.push(m.len());
        let name = ["alpha", "bravo", "charlie", "delta"][i];
        let gpu_pool = r.chance(50);
        gpu_pools.push(gpu_pool);
        let _ = write!(m, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n");
        if r.chance(75) {
            // Few distinct weights, so ties (broken by name, descending) are common.
            let _ = writeln!(m, "  weight: {}", r.pick(&[1, 10, 10, 50, 100]));
        }
        match r.below(6) {
            0 => {
                let _ = writeln!(m, "  limits:\n    cpu: \"{}\"", r.pick(&[4, 16, 64, 200]));
            }
            1 => {
                let _ = writeln!(m, "  limits:\n    memory: {}", r.pick(&["16Gi", "64Gi", "512Gi"]));
            }
            2 => {
                let _ = writeln!(m, "  limits:\n    nvidia.com/gpu: \"{}\"", r.pick(&[1, 2, 4, 8, 16]));
            }
            3 => {
                let _ = writeln!(m, "  limits:\n    nodes: \"{}\"", r.pick(&[1, 2, 3]));
            }
            _ => {}
        }
        m.push_str("  template:\n");
        if r.chance(30) {
            let _ = writeln!(m, "    metadata:\n      labels:\n        team: {}", r.pick(TEAMS));
        }
        let class = if reserved_class && gpu_pool && r.chance(70) {
            "reserved"
        } else if kubelet_class && r.chance(60) {
            "tuned"
        } else {
            "default"
        };
        let _ = writeln!(m, "    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: {class}\n      requirements:");
        // Most pools name families (as real ones do); some leave the whole catalog.
        if r.chance(85) {
            let fams = r.subset(&strs(if gpu_pool { GPU_FAMILIES } else { FAMILIES }), 3);
            let min = if r.chance(10) { format!(", minValues: {}", 1 + r.below(3)) } else { String::new() };
            let _ = writeln!(m, "      - {{key: \"karpenter.k8s.aws/instance-family\", operator: In, values: {}{min}}}", list(&fams));
        }
        for _ in 0..r.below(4) {
            let _ = writeln!(m, "      - {}", requirement(r, false, gpu_pool));
        }
        let taints: Vec<usize> = if r.chance(50) { r.subset(&(0..TAINTS.len()).collect::<Vec<_>>(), 2) } else { Vec::new() };
        if !taints.is_empty() {
            m.push_str("      taints:\n");
            for &t in &taints {
                let t = &TAINTS[t];
                let _ = writeln!(m, "      - {{key: \"{}\", {}effect: {}}}", t.key, t.value.map(|v| format!("value: \"{v}\", ")).unwrap_or_default(), t.effect);
            }
        }
        // A custom label a spread may split on (as gpuplan's NodePools split on-demand and spot).
        if r.chance(15) {
            m.push_str("      - {key: \"capacity-spread\", operator: In, values: [\"1\", \"2\"]}\n");
        }
        if r.chance(20) {
            m.push_str("      startupTaints:\n      - {key: \"node.example.com/agent-not-ready\", effect: NoSchedule}\n");
        }
        pool_taints.push(taints);
    }
    pool_starts.push(m.len());
    if r.chance(10) {
        let fam = r.pick(GPU_FAMILIES);
        let body = if r.chance(50) { format!("  price: \"{}\"\n", r.pick(&["0.01", "5.5"])) } else { "  priceAdjustment: \"-50%\"\n".to_string() };
        let _ = write!(m, "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: cheaper\nspec:\n  weight: 10\n  requirements:\n  - {{key: \"karpenter.k8s.aws/instance-family\", operator: In, values: [\"{fam}\"]}}\n{body}");
        // A rival overlay, mostly at the same weight: `rival` orders before `cheaper` (name descending), so where both
        // price one offering Karpenter's nodeoverlay controller drops `cheaper` everywhere (controller.go
        // `validateAndUpdateInstanceTypeOverrides`); narrowed to a zone or to spot it overlaps on some offerings only.
        if r.chance(60) {
            let weight = if r.chance(70) { 10 } else { r.pick(&[5, 20]) };
            let family = if r.chance(75) { fam } else { r.pick(GPU_FAMILIES) };
            let narrower = match r.below(3) {
                0 => String::new(),
                1 => format!("  - {{key: \"topology.kubernetes.io/zone\", operator: In, values: [\"{}\"]}}\n", r.pick(&["us-east-1a", "us-east-1b"])),
                _ => "  - {key: \"karpenter.sh/capacity-type\", operator: In, values: [\"spot\"]}\n".to_string(),
            };
            let body = r.pick(&["  price: \"0.02\"\n", "  priceAdjustment: \"+30%\"\n", "  priceAdjustment: \"-90%\"\n"]);
            let _ = write!(m, "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: rival\nspec:\n  weight: {weight}\n  requirements:\n  - {{key: \"karpenter.k8s.aws/instance-family\", operator: In, values: [\"{family}\"]}}\n{narrower}{body}");
        }
    }

    let mut p = String::new();
    let workloads = 1 + r.below(4);
    for w in 0..workloads {
        let gpus = if r.chance(45) { r.pick(&[1, 1, 2, 4, 8]) } else { 0 };
        let mut spec = String::new();
        // Tolerations: of some pool's taints, all of them (Exists), or none.
        match r.below(4) {
            0 => spec.push_str("      tolerations:\n      - {operator: Exists}\n"),
            1 | 2 => {
                let pool = r.below(pools);
                let mut ts: Vec<usize> = pool_taints[pool].clone();
                if r.chance(30) {
                    ts.push(r.below(TAINTS.len()));
                }
                ts.sort();
                ts.dedup();
                if !ts.is_empty() {
                    spec.push_str("      tolerations:\n");
                    for t in ts {
                        let t = &TAINTS[t];
                        match t.value {
                            Some(v) if r.chance(70) => {
                                let _ = writeln!(spec, "      - {{key: \"{}\", operator: Equal, value: \"{v}\", effect: {}}}", t.key, t.effect);
                            }
                            _ => {
                                let effect = if r.chance(70) { format!(", effect: {}", t.effect) } else { String::new() };
                                let _ = writeln!(spec, "      - {{key: \"{}\", operator: Exists{effect}}}", t.key);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        if r.chance(35) {
            let (k, v) = match r.below(5) {
                0 => ("team", r.pick(TEAMS).to_string()),
                1 => ("karpenter.sh/capacity-type", r.pick(&["spot", "on-demand"]).to_string()),
                2 => ("topology.kubernetes.io/zone", r.pick(ZONES).to_string()),
                3 => ("karpenter.sh/nodepool", r.pick(&["alpha", "bravo", "charlie", "delta"]).to_string()),
                _ => ("kubernetes.io/arch", r.pick(&["amd64", "arm64"]).to_string()),
            };
            let _ = writeln!(spec, "      nodeSelector:\n        {k}: \"{v}\"");
        }
        let required = if r.chance(30) { 1 + r.below(2) } else { 0 };
        let preferred = if r.chance(25) { 1 + r.below(2) } else { 0 };
        if required + preferred > 0 {
            spec.push_str("      affinity:\n        nodeAffinity:\n");
            if required > 0 {
                spec.push_str("          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n");
                for _ in 0..required {
                    spec.push_str("            - matchExpressions:\n");
                    for _ in 0..1 + r.below(2) {
                        let _ = writeln!(spec, "              - {}", requirement(r, true, gpus > 0));
                    }
                }
            }
            if preferred > 0 {
                spec.push_str("          preferredDuringSchedulingIgnoredDuringExecution:\n");
                for _ in 0..preferred {
                    let _ = writeln!(spec, "            - weight: {}\n              preference:\n                matchExpressions:\n                - {}", 1 + r.below(100), requirement(r, true, gpus > 0));
                }
            }
        }
        if r.chance(15) {
            spec.push_str(&topology(r, w, workloads, spec.contains("      affinity:\n")));
        }
        if r.chance(15) {
            let sidecar = if r.chance(50) { "\n        restartPolicy: Always" } else { "" };
            let _ = write!(spec, "      initContainers:\n      - name: init\n        image: init:1{sidecar}\n        resources:\n          requests: {{cpu: \"{}\", memory: {}}}\n", quantity_cpu(r), quantity_memory(r));
        }
        let gpu = if gpus > 0 { format!("\n          limits:\n            {}", accelerator_limit(r, gpus)) } else { String::new() };
        let storage = if r.chance(15) { format!("\n            ephemeral-storage: {}", r.pick(&["1Gi", "15Gi", "40Gi", "100Gi", "500Gi"])) } else { String::new() };
        let ports = if r.chance(8) { format!("\n        ports:\n        - {{containerPort: {0}, hostPort: {0}}}", r.pick(&[8080, 9100])) } else { String::new() };
        let _ = write!(spec, "      containers:\n      - name: app\n        image: app:1{ports}\n        resources:\n          requests:\n            cpu: \"{}\"\n            memory: {}{storage}{gpu}\n", quantity_cpu(r), quantity_memory(r));
        let name = format!("w{w}");
        if r.chance(25) {
            let body = spec.lines().map(|l| &l[4..]).collect::<Vec<_>>().join("\n");
            let _ = write!(p, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  labels: {{app: {name}}}\nspec:\n{body}\n");
        } else {
            let _ = write!(p, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  replicas: {}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n{spec}", 1 + r.below(5));
        }
    }
    p.push_str(&daemon_sets(r, &pool_taints));
    let mut unavailable = Vec::new();
    if r.chance(20) {
        for _ in 0..1 + r.below(2) {
            let t = match r.below(3) {
                0 => format!("{}.*", r.pick(GPU_FAMILIES)),
                1 => format!("{}.*", r.pick(FAMILIES)),
                _ => "*".to_string(),
            };
            let z = if r.chance(50) { r.pick(ZONES).to_string() } else { "*".into() };
            let c = r.pick(&["spot", "on-demand", "*"]).to_string();
            if t == "*" && z == "*" && c == "*" {
                continue;
            }
            unavailable.push(format!("{t}:{z}:{c}"));
        }
    }
    // Drawn last, so a case without one is the case this generator made before static NodePools.
    if r.chance(8) {
        let static_pool = if r.chance(50) {
            let i = r.below(pools);
            let floor = if r.chance(60) { Some(r.pick(&[7, 15, 31])) } else { None };
            static_copy(&m[pool_starts[i]..pool_starts[i + 1]], ["alpha", "bravo", "charlie", "delta"][i], 1 + r.below(3), floor)
        } else {
            static_node_pool(r, kubelet_class)
        };
        m.push_str(&static_pool);
    }
    Scenario { manifests: m, pods: p, unavailable }
}

/// A static NodePool `echo` of `replicas` that copies a generated NodePool's template (so the pods written for that
/// pool, its taints and requirements, may land on the replicas), without its weight and limits, and with a cpu floor
/// when `floor` is given (a replica runs the cheapest admitted type, often too small for the generated pods).
fn static_copy(pool: &str, name: &str, replicas: usize, floor: Option<u32>) -> String {
    let mut out = String::new();
    let mut in_limits = false;
    for line in pool.lines() {
        if in_limits && line.starts_with("    ") {
            continue;
        }
        in_limits = line == "  limits:";
        if in_limits || line.starts_with("  weight: ") {
            continue;
        }
        let _ = writeln!(out, "{}", if line == format!("  name: {name}") { "  name: echo" } else { line });
        if line == "spec:" {
            let _ = writeln!(out, "  replicas: {replicas}");
        }
        if let (Some(cpu), "      requirements:") = (floor, line) {
            let _ = writeln!(out, "      - {{key: \"karpenter.k8s.aws/instance-cpu\", operator: Gt, values: [\"{cpu}\"]}}");
        }
    }
    out
}

/// A static NodePool (`spec.replicas` 1 to 3; no weight, only a `nodes` limit, as the CRD allows): families as a
/// dynamic pool's, sometimes a cpu floor, another requirement, a taint or a team label.
fn static_node_pool(r: &mut Rng, kubelet_class: bool) -> String {
    let gpu_pool = r.chance(40);
    let mut m = format!("---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: echo\nspec:\n  replicas: {}\n", 1 + r.below(3));
    if r.chance(20) {
        let _ = writeln!(m, "  limits:\n    nodes: \"{}\"", 1 + r.below(2));
    }
    m.push_str("  template:\n");
    if r.chance(30) {
        let _ = writeln!(m, "    metadata:\n      labels:\n        team: {}", r.pick(TEAMS));
    }
    let class = if kubelet_class && r.chance(50) { "tuned" } else { "default" };
    let _ = writeln!(m, "    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: {class}\n      requirements:");
    let fams = r.subset(&strs(if gpu_pool { GPU_FAMILIES } else { FAMILIES }), 3);
    let _ = writeln!(m, "      - {{key: \"karpenter.k8s.aws/instance-family\", operator: In, values: {}}}", list(&fams));
    // Sometimes a size floor, so that the replica (the cheapest admitted type: no pod asks for anything at launch)
    // holds some pods; seldom another requirement (most of the generated ones contradict a 3-family list).
    if r.chance(50) {
        let _ = writeln!(m, "      - {{key: \"karpenter.k8s.aws/instance-cpu\", operator: Gt, values: [\"{}\"]}}", r.pick(&[3, 7, 15]));
    }
    if r.chance(35) {
        let _ = writeln!(m, "      - {}", requirement(r, false, gpu_pool));
    }
    if r.chance(30) {
        let t = &TAINTS[r.below(TAINTS.len())];
        let _ = writeln!(m, "      taints:\n      - {{key: \"{}\", {}effect: {}}}", t.key, t.value.map(|v| format!("value: \"{v}\", ")).unwrap_or_default(), t.effect);
    }
    m
}
