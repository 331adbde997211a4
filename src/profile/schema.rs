//! The profile language, node by node: the table the parser takes its valid node names from (unknown-node
//! errors and their "did you mean" list them), and that `gpuplan schema` prints. A node the parser accepts is
//! in this table, and every entry's example parses (tests/adopt.rs `every_schema_example_parses`), so the
//! reference cannot drift from the parser.

/// One node of the language. (`gitops` children: `depends-on`.)
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct NodeSpec {
    /// Where it may appear: `profile` (top level), `cluster`, `pool` (also valid in a `tier`), `gpu` (also in
    /// `neuron`), `cpu`, `disruption`, `reserved`, `kubelet`, `overlay`, `workload`, `queue`, `monitoring`.
    pub parent: &'static str,
    pub name: &'static str,
    /// Arguments, e.g. `<string>…`; empty: none.
    pub args: &'static str,
    /// Properties as `name=<type>`.
    pub props: &'static [&'static str],
    /// The default when the node is absent (presets set pool defaults: see the book's recipes/presets.md).
    pub default: &'static str,
    pub doc: &'static str,
    /// A minimal valid use, parsed by the tests.
    pub example: &'static str,
}

const fn n(
    parent: &'static str,
    name: &'static str,
    args: &'static str,
    props: &'static [&'static str],
    default: &'static str,
    doc: &'static str,
    example: &'static str,
) -> NodeSpec {
    NodeSpec { parent, name, args, props, default, doc, example }
}

pub const NODES: &[NodeSpec] = &[
    n("profile", "profile", "<string>", &["priority=<integer>"], "required", "The profile's name; higher priority profiles get higher NodePool weights within their cluster.", "profile \"p\" priority=10"),
    n("profile", "cluster", "<string>", &[], "required", "The cluster the profile's pools are compiled for (out/<cluster>/): a block, or the name alone for the cluster of that name in gpuplan.kdl (shared by profiles).", "cluster \"c\" { region \"us-east-1\"; zones \"us-east-1a\"; ami \"al2023@v20251023\" }"),
    n("profile", "budget", "", &["usd-per-hour=<number>"], "none", "Worst-case $/h the profile's pools may reach together at their limits; sizes limits left unset.", "budget usd-per-hour=100"),
    n("profile", "pool", "<string>", &["preset=<general|inference-spot|inference-on-demand|training-on-demand|batch-spot|tiered>"], "preset general", "A GPU capacity pool: one NodePool per tier.", "pool \"x\" preset=\"general\" { max-accelerators 8 }"),
    n("profile", "allow", "<string>…", &[], "none", "Lint codes silenced for the whole profile.", "allow \"GP006\""),
    n("profile", "workload", "<string>", &["namespace=<string>", "pool=<string>", "kind=<Deployment|StatefulSet>"], "none", "A workload on a pool: its PodDisruptionBudget and HorizontalPodAutoscaler (or KEDA ScaledObject).", "workload \"w\" namespace=\"ns\" pool=\"x\" { selector \"app\" \"w\" }"),
    n("profile", "queue", "<string>", &["namespace=<string>", "pool=<string>"], "none", "A Kueue queue on a pool (or one tier): a ClusterQueue with a quota in each of the pool's NodePools (one ResourceFlavor each, in fallback order) and a LocalQueue in the namespace.", "queue \"q\" namespace=\"ns\" pool=\"x\" { gpus nominal=4 }"),
    n("profile", "monitoring", "", &["namespace=<string>"], "namespace monitoring", "Prometheus rules, ServiceMonitors and GPU Operator settings for the cluster.", "monitoring namespace=\"monitoring\""),
    n("cluster", "region", "<string>", &[], "required", "AWS region; its catalog (catalogs/<region>.json) prices and filters the types.", "region \"us-east-1\""),
    n("cluster", "zones", "<string>…", &[], "required", "Availability zones the NodePools may launch in.", "zones \"us-east-1a\" \"us-east-1b\""),
    n("cluster", "discovery-tag", "<string>", &[], "the cluster name", "Value of the karpenter.sh/discovery tag on subnets and security groups.", "discovery-tag \"c\""),
    n("cluster", "node-role", "<string>", &[], "KarpenterNodeRole-<cluster>", "IAM role of the nodes (EC2NodeClass spec.role).", "node-role \"KarpenterNodeRole-c\""),
    n("cluster", "instance-profile", "<string>", &[], "none (node-role)", "A pre-provisioned IAM instance profile of the nodes (EC2NodeClass spec.instanceProfile, written instead of spec.role; Karpenter then manages no instance profile). Not with `node-role` (E0316), nor in EKS Auto Mode (E0317).", "instance-profile \"KarpenterNodeInstanceProfile-c\""),
    n("cluster", "ami", "<family@version>", &[], "required", "EC2NodeClass AMI alias, pinned (lint GP002 warns on @latest).", "ami \"al2023@v20251023\""),
    n("cluster", "accelerated-ami", "<bool>", &[], "#true", "Whether the AMI ships the NVIDIA driver and toolkit (EKS accelerated AMIs).", "accelerated-ami #true"),
    n("cluster", "gitops", "", &["repo=<string>", "revision=<string>", "path=<string>", "argocd=<bool>", "flux=<bool>"], "none", "An Argo CD Application, or a Flux GitRepository + Kustomization, for out/<cluster> (one of the two).", "gitops repo=\"https://example.com/r.git\" revision=\"main\" path=\"out\" argocd=#true flux=#false"),
    n("cluster", "auto-mode", "<bool>", &[], "#false", "EKS Auto Mode: NodePools reference an eks.amazonaws.com NodeClass (emitted instead of an EC2NodeClass) and select on eks.amazonaws.com/instance-* labels; no GPU Operator or device-plugin add-ons (Auto Mode ships them); no `ami`, `image-cache` or `accelerated-ami`.", "auto-mode #true"),
    n("cluster", "node-daemons", "<name>…", &[], "aws-node kube-proxy ebs-csi-node eks-pod-identity-agent (none in Auto Mode)", "The EKS node DaemonSets every node runs: the fit checks subtract their requests (aws-node 25m, kube-proxy 100m, ebs-csi-node 10m + 40Mi CPU/memory, eks-pod-identity-agent a pod slot) from each node. `node-daemons \"none\"` counts none.", "node-daemons \"aws-node\" \"kube-proxy\""),
    n("cluster", "ephemeral-storage", "<size>", &[], "200Gi", "Auto Mode only: the NodeClass's ephemeralStorage.size (1-59000Gi, 1-64000G, 1-58Ti or 1-64T).", "ephemeral-storage \"200Gi\""),
    n("cluster", "image-cache", "", &["snapshot=<snap-id>"], "none", "Bottlerocket only: restore the data volume from a snapshot with the ML images pre-pulled.", "image-cache snapshot=\"snap-0123456789abcdef0\""),
    n("cluster", "user-data", "<string>", &[], "none", "The EC2NodeClass userData, carried verbatim (AL2023 MIME/NodeConfig, Bottlerocket TOML): what the language does not say (kubelet settings, scripts). On Bottlerocket, gpuplan's time-slicing settings follow it.", "user-data \"[settings.kubernetes]\\nmax-pods = 110\\n\""),
    n("cluster", "raw", "<EC2NodeClass|NodeClass> <yaml>", &[], "none", "A YAML fragment merged (RFC 7386 merge patch: maps merge, lists and scalars replace, null deletes) into every node class of the profile, then validated with it: what the language cannot say (subnet or security-group selectors, block devices, tags, metadata options, a custom AMI). Fields gpuplan writes from a setting are refused (E0312).", "raw \"EC2NodeClass\" \"spec: {tags: {team: ml}}\""),
    n("cluster", "karpenter-version", "<string>", &[], "v1.14.1", "The Karpenter release the output targets: v1.14.1 only (its CRDs validate the output; another release is refused, E0380). The kustomization's prerequisites name it with the feature gates the cluster's objects need.", "karpenter-version \"v1.14.1\""),
    n("cluster", "interruption-queue", "<string>", &[], "none", "The SQS queue Karpenter reads EC2 interruption events from (Helm value settings.interruptionQueue): listed in the prerequisites; without it, lint GP050 warns on spot pools (nodes are not drained ahead of a spot interruption).", "interruption-queue \"Karpenter-c\""),
    n("gitops", "depends-on", "<string>…", &[], "none", "Flux: Kustomizations (in flux-system) that must be ready first, e.g. those installing Karpenter and the GPU Operator; never gpuplan-<cluster> or gpuplan-<cluster>-values, gpuplan's own (E0360).", "depends-on \"karpenter\" \"gpu-operator\""),
    n("pool", "gpu", "", &[], "any NVIDIA GPU", "NVIDIA (or manufacturer \"amd\") GPU constraints.", "gpu { name \"A10G\" }"),
    n("pool", "neuron", "", &[], "none", "AWS Inferentia / Trainium instead of GPUs (aws.amazon.com/neuron).", "neuron { name \"Inferentia2\" }"),
    n("pool", "cpu", "", &[], "none (a GPU pool)", "A CPU (general-purpose) pool instead of an accelerated one: types without GPU or Neuron devices, sized and priced in vCPUs (`max-cpu`), no accelerator taint, so ordinary pods land on it (see the book's recipes/cpu-pools.md).", "cpu { per-node min=2 max=16 }"),
    n("pool", "arch", "<amd64|arm64>…", &[], "amd64", "CPU architectures.", "arch \"amd64\" \"arm64\""),
    n("pool", "generation-min", "<integer>", &[], "none", "Lowest instance generation (karpenter.k8s.aws/instance-generation).", "generation-min 5"),
    n("pool", "families", "<string>…", &[], "any", "Only these instance families.", "families \"g5\" \"g6\""),
    n("pool", "exclude-families", "<string>…", &[], "none", "Never these instance families.", "exclude-families \"g4dn\""),
    n("pool", "types", "<string>…", &[], "any", "Only these instance types (named types also pass price-ratio-max).", "types \"g5.xlarge\""),
    n("pool", "exclude-types", "<string>…", &[], "none", "Never these instance types.", "exclude-types \"g5.48xlarge\""),
    n("pool", "efa", "<bool>", &["zone=<string>"], "either", "Require EFA networking; the pool's nodes then launch in one zone (EFA stays in a subnet), `zone` or the first of the cluster's zones that offers every type.", "efa #true zone=\"us-east-1a\""),
    n("pool", "capacity", "<spot|on-demand|reserved>…", &[], "from the preset", "Capacity types of the NodePool.", "capacity \"spot\" \"on-demand\""),
    n("pool", "max-accelerators", "<integer>", &[], "sized from the budget", "The NodePool limit on its accelerator resource, in physical accelerators.", "max-accelerators 16"),
    n("pool", "max-cpu", "<integer>", &[], "sized from the budget", "A CPU pool's NodePool limit, in vCPUs (limits.cpu); accelerated pools use max-accelerators.", "max-cpu 64"),
    n("pool", "weight", "<integer 1–100>", &[], "from priority and tier order", "Explicit NodePool weight.", "weight 50"),
    n("pool", "price-ratio-max", "<number|\"none\">", &[], "1.6", "Drop types whose $/accelerator-hour exceeds this multiple of the cheapest; \"none\" keeps every price.", "price-ratio-max 2.0"),
    n("pool", "admit", "<best-value|as-required>", &[], "best-value", "best-value: gpuplan's selection (only the pool's accelerator kind, whole accelerators, a CPU pool's defaults, price-ratio-max, minValues 2 on a spot pool's families). as-required: exactly the types the pool's requirements admit, as Karpenter reads them (what adopt writes, so an adopted pool behaves as its original).", "admit \"as-required\""),
    n("pool", "family-min-values", "<integer 1–50>", &[], "2 on a best-value spot pool of two families or more, else none", "minValues on the NodePool's instance-family requirement: Karpenter launches a node only when that many families could hold its pods.", "family-min-values 5"),
    n("pool", "type-min-values", "<integer 1–50>", &[], "none", "minValues on the NodePool's instance-type requirement.", "type-min-values 2"),
    n("pool", "node-class", "<name>", &[], "<profile>, -nvme, -ts<N>", "The name of the pool's EC2NodeClass (NodeClass in Auto Mode) instead of the derived one (adopt keeps the original's, so nodeClassRef does not change).", "node-class \"gpu\""),
    n("pool", "spot-ceiling", "<on-demand|observed-max>", &[], "on-demand", "What bounds a spot node's price in the worst case.", "spot-ceiling \"on-demand\""),
    n("pool", "scratch", "<instance-store|ebs>", &[], "instance-store for training-on-demand, else ebs", "Local NVMe striped (RAID0) for kubelet and containers, on types that have it.", "scratch \"instance-store\""),
    n("pool", "time-slicing", "", &["replicas=<integer>"], "none", "Device-plugin time-slicing: each GPU advertised `replicas` times.", "time-slicing replicas=4"),
    n("pool", "mig", "<string>", &[], "none", "A mig-parted configuration (nvidia.com/mig.config label).", "mig \"all-1g.10gb\""),
    n("pool", "reserved", "", &[], "none", "On-demand capacity reservations / capacity blocks the pool launches into.", "reserved { id \"cr-0123456789abcdef0\"; instance-type \"p5.48xlarge\"; instances 1 }"),
    n("pool", "disruption", "", &[], "from the preset", "Consolidation, expiry, termination grace and disruption budgets.", "disruption { consolidation \"WhenEmpty\" }"),
    n("pool", "label", "<key> <value>", &[], "none", "A node label (NodePool template).", "label \"team\" \"ml\""),
    n("pool", "taint", "<key>", &["value=<string>", "effect=<NoSchedule|PreferNoSchedule|NoExecute>"], "none", "A node taint besides the accelerator's and the pool's.", "taint \"workload\" value=\"x\" effect=\"NoSchedule\""),
    n("pool", "require", "<key> <In|NotIn|Exists|DoesNotExist|Gt|Lt|Gte|Lte> <value>…", &["min-values=<integer 1–50>"], "none", "A NodePool requirement on a well-known Karpenter/AWS label (instance category, size, cpu, memory, local NVMe, network bandwidth, …) or a label of yours: the solver keeps only the catalog types whose labels satisfy it (keys the catalog has no label for are passed to Karpenter unchecked), and the NodePool carries it. One per key; a tier's replaces its pool's.", "require \"karpenter.k8s.aws/instance-category\" \"In\" \"g\" \"p\""),
    n("pool", "limits", "", &["cpu=<quantity>", "memory=<quantity>"], "none", "The NodePool's cpu and memory limits, beside the accelerator limit: Karpenter launches no node that would exceed any of them, so the worst case is the least each allows (the accelerator limit is sized without them).", "limits cpu=100 memory=\"200Gi\""),
    n("pool", "kubelet", "", &[], "the AMI's defaults", "The pool's class's kubelet settings (EC2NodeClass spec.kubelet); they change allocatable, which compile checks workloads against. Pools with different settings get different classes; not in EKS Auto Mode (E0313). A tier's replaces its pool's.", "kubelet { max-pods 110 }"),
    n("pool", "raw", "<NodePool|EC2NodeClass|NodeClass> <yaml>", &[], "none", "A YAML fragment merged (RFC 7386 merge patch) into the pool's NodePool or its class, then validated with it: what the language cannot say. Fields gpuplan writes from a setting or computes (requirements, limits, taints, labels, nodeClassRef, weight, disruption, role, kubelet, userData, reservations) are refused (E0312). A pool with a class fragment gets a class of its own.", "raw \"NodePool\" \"spec: {template: {spec: {startupTaints: [{key: example.com/init, effect: NoSchedule}]}}}\""),
    n("pool", "static", "", &["replicas=<integer 0–10000>", "max-nodes=<integer>"], "none (dynamic)", "A static NodePool (spec.replicas, Karpenter's StaticCapacity gate): it keeps `replicas` nodes whatever the pods, billed always (replicas × the dearest admitted type); replicas=0 parks it (no node, no cost). max-nodes is its limits.nodes, the cap while replacements launch. One NodePool, no weight, no other limits. An existing NodePool cannot turn static or back (rename the pool).", "static replicas=2"),
    n("pool", "accelerator-taint", "<bool>", &[], "#true", "Whether the NodePool carries the `<accelerator resource>:NoSchedule` taint. #false keeps pods that need no accelerator able to land on (and keep alive) the nodes: lint GP007 warns; adopt writes it for an untainted original so that its pods keep scheduling.", "accelerator-taint #false"),
    n("pool", "spread", "<bool>", &[], "#true for inference-spot, inference-on-demand and tiered; #false otherwise", "Whether the pool's workloads are told (explain's \"pods need\", the placement annotation) and simulated to spread over zones and hosts: topologySpreadConstraints of maxSkew 1, ScheduleAnyway, so one node's or zone's interruption takes few replicas. `max-per-node` on a workload caps replicas per node regardless.", "spread #false"),
    n("pool", "placement-group", "<string>", &[], "none", "An EC2 cluster placement group (created beforehand, in the pool's zone) the pool's nodes launch into: its EC2NodeClass's placementGroupSelector, for low-latency multi-node jobs. A cluster placement group is in one zone: the pool must launch in one (efa #true pins one; E0383 otherwise); lint GP051 suggests it for EFA pools. A reservation the pool uses must be in the group. Not in EKS Auto Mode (E0385).", "placement-group \"training\""),
    n("pool", "allow", "<string>…", &[], "none", "Lint codes silenced for this pool.", "allow \"GP006\""),
    n("pool", "tier", "<string>", &["capacity=<spot|on-demand|reserved>"], "none", "In a tiered pool: one NodePool <pool>-<tier>, in fallback order; takes every pool setting.", "tier \"a\" capacity=\"spot\" { weight 50 }"),
    n("pool", "overlay", "<string>", &[], "none", "A Karpenter NodeOverlay (karpenter.sh/v1alpha1, feature gate NodeOverlay=true) on the pool's NodePools (in a tier: that tier's): a price (`price` or `price-adjustment`) Karpenter ranks the types by, and/or extended-resource `capacity`; gpuplan scopes it with karpenter.sh/nodepool. The worst case stays at list prices (see the book's recipes/overlays.md).", "overlay \"discount\" { price-adjustment \"-30%\" }"),
    n("kubelet", "max-pods", "<integer>", &[], "ENI-limited (110 without ENI data)", "maxPods: pods per node.", "max-pods 110"),
    n("kubelet", "pods-per-core", "<integer>", &[], "none", "podsPerCore: pods per vCPU (the lower of this and max-pods; ignored on Bottlerocket).", "pods-per-core 10"),
    n("kubelet", "system-reserved", "", &["<resource>=<quantity>"], "none", "systemReserved: resources kept for the OS (cpu, memory, ephemeral-storage, pid).", "system-reserved cpu=\"100m\" memory=\"100Mi\""),
    n("kubelet", "kube-reserved", "", &["<resource>=<quantity>"], "Karpenter's: cpu by vCPUs, memory 11Mi × pods + 255Mi", "kubeReserved: resources kept for the kubelet and runtime (replaces Karpenter's default per resource).", "kube-reserved cpu=\"200m\" memory=\"1Gi\""),
    n("kubelet", "eviction-hard", "", &["<signal>=<quantity|percent>"], "memory.available=100Mi, nodefs.available=10%", "evictionHard thresholds (memory.available, nodefs.available, nodefs.inodesFree, imagefs.*, pid.available).", "eviction-hard memory.available=\"5%\""),
    n("kubelet", "eviction-soft", "", &["<signal>=<quantity|percent>"], "none", "evictionSoft thresholds; each needs its grace period.", "eviction-soft memory.available=\"500Mi\""),
    n("kubelet", "eviction-soft-grace-period", "", &["<signal>=<duration>"], "none", "evictionSoftGracePeriod per evictionSoft signal.", "eviction-soft-grace-period memory.available=\"1m\""),
    n("kubelet", "eviction-max-pod-grace-period", "<integer>", &[], "none", "evictionMaxPodGracePeriod (seconds) on soft eviction.", "eviction-max-pod-grace-period 60"),
    n("kubelet", "image-gc-high-threshold-percent", "<integer>", &[], "85", "imageGCHighThresholdPercent (above the low threshold).", "image-gc-high-threshold-percent 85"),
    n("kubelet", "image-gc-low-threshold-percent", "<integer>", &[], "80", "imageGCLowThresholdPercent.", "image-gc-low-threshold-percent 80"),
    n("kubelet", "cpu-cfs-quota", "<bool>", &[], "#true", "cpuCFSQuota: enforce CPU limits.", "cpu-cfs-quota #false"),
    n("kubelet", "cluster-dns", "<string>…", &[], "the cluster's DNS service", "clusterDNS: nameserver IPs for pods.", "cluster-dns \"10.100.0.10\""),
    n("gpu", "name", "<string>…", &[], "any", "GPU or Neuron device names, case-insensitive.", "name \"L4\""),
    n("gpu", "manufacturer", "<nvidia|amd>", &[], "nvidia", "GPU manufacturer (in `gpu` only).", "manufacturer \"nvidia\""),
    n("gpu", "memory-min", "<size GiB|MiB>", &[], "none", "Least memory per GPU.", "memory-min \"16GiB\""),
    n("gpu", "per-node", "", &["min=<integer>", "max=<integer>"], "any", "Accelerators per node.", "per-node min=1 max=8"),
    n("cpu", "per-node", "", &["min=<integer>", "max=<integer>"], "any", "vCPUs per node.", "per-node min=2 max=16"),
    n("cpu", "memory-min", "<size GiB|MiB>", &[], "none", "Least memory per vCPU (2GiB: c, 4GiB: m, 8GiB: r types).", "memory-min \"4GiB\""),
    n("overlay", "price", "<$ per hour>", &[], "none", "The price Karpenter sees for the selected types' offerings (NodeOverlay spec.price); not with price-adjustment.", "price \"0.50\""),
    n("overlay", "price-adjustment", "<+N%|-N%|+$|-$>", &[], "none", "A change to the selected offerings' price (spec.priceAdjustment): -30%, +10%, -0.25; not with price.", "price-adjustment \"-30%\""),
    n("overlay", "capacity", "<resource> <quantity>", &[], "none", "An extended resource each selected node offers (spec.capacity; never cpu, memory, ephemeral-storage, pods). On the pool's accelerator resource it counts as the type's schedulable units, like time-slicing.", "capacity \"example.com/fpga\" \"2\""),
    n("overlay", "weight", "<integer 1–10000>", &[], "none (0)", "Which overlay wins where several select the same type (higher first).", "weight 20"),
    n("overlay", "require", "<key> <In|NotIn|Exists|DoesNotExist|Gt|Lt|Gte|Lte> <value>…", &[], "every type of the NodePools", "Which types (and offerings: karpenter.sh/capacity-type, zone) the overlay applies to, under the NodeOverlay CRD's key rules; karpenter.sh/nodepool is gpuplan's.", "require \"node.kubernetes.io/instance-type\" \"In\" \"g5.xlarge\""),
    n("disruption", "consolidation", "<WhenEmpty|WhenEmptyOrUnderutilized|Balanced>", &[], "WhenEmpty; Balanced on an on-demand tier after a spot tier (inference-spot, tiered)", "Karpenter consolidationPolicy. Balanced (Karpenter v1.14.1) moves pods only when the saving outweighs the disruption (BalancedK = 2): the way back to spot from an on-demand fallback.", "consolidation \"Balanced\""),
    n("disruption", "consolidate-after", "<duration>", &[], "from the preset", "Karpenter consolidateAfter.", "consolidate-after \"5m\""),
    n("disruption", "expire-after", "<duration|Never>", &[], "from the preset", "Karpenter expireAfter.", "expire-after \"720h\""),
    n("disruption", "termination-grace-period", "<duration>", &[], "from the preset", "Karpenter terminationGracePeriod; \"none\" for none (Karpenter's default: pods are waited for however long).", "termination-grace-period \"1h\""),
    n("disruption", "maintenance-window", "", &["day=<weekday>", "start=<HH:MM>", "duration=<duration>", "nodes=<count|percent>"], "training preset: sunday 02:00 4h", "Voluntary disruption only inside a weekly UTC window.", "maintenance-window day=\"sunday\" start=\"02:00\" duration=\"4h\" nodes=\"1\""),
    n("disruption", "budget", "", &["nodes=<count|percent>", "schedule=<cron>", "duration=<duration>", "reasons=<Underutilized,Empty,Drifted>"], "nodes 10%", "A Karpenter disruption budget; explicit budgets replace the preset's.", "budget nodes=\"10%\""),
    n("reserved", "id", "<string>…", &[], "none", "Capacity reservation ids.", "id \"cr-0123456789abcdef0\""),
    n("reserved", "tag", "<key> <value>", &[], "none", "Select reservations by tag.", "tag \"team\" \"ml\""),
    n("reserved", "capacity-block", "", &["price-usd=<number>", "start=<RFC 3339>", "end=<RFC 3339>"], "none (an on-demand capacity reservation)", "The reservation is a Capacity Block for ML: paid up front for the whole block (price-usd, EC2's UpfrontFee), from start to end, not at on-demand prices. The worst case counts price-usd ÷ the block's hours; without them it says it leaves the block out.", "capacity-block price-usd=31464 start=\"2026-12-01T11:30:00Z\" end=\"2026-12-08T11:30:00Z\""),
    n("reserved", "instance-type", "<string>", &[], "none", "The reserved instance type.", "instance-type \"p5.48xlarge\""),
    n("reserved", "instances", "<integer>", &[], "none", "How many instances the reservation holds (billed whether used or not).", "instances 1"),
    n("workload", "selector", "<key> <value>", &[], "required", "Pod label selector (the PDB's matchLabels): a Kubernetes label key and value, each key once (E0182, E0183).", "selector \"app\" \"w\""),
    n("workload", "replicas", "<integer>", &["min=<integer>", "max=<integer>"], "1", "Replica count or autoscaling range (min=0 only with `scale-to-zero`).", "replicas min=1 max=4"),
    n("workload", "gpus-per-replica", "<integer>", &[], "1", "The accelerators each replica requests: GPUs, Neuron devices, or vCPUs on a CPU pool (the pool's limited resource).", "gpus-per-replica 1"),
    n("workload", "max-per-node", "<integer>", &[], "none (inference pools spread over zones and hosts as a preference)", "Caps what one node's interruption takes. 1: a required podAntiAffinity on kubernetes.io/hostname over the workload's pods (a strict cap). N ≥ 2: a topologySpreadConstraint on kubernetes.io/hostname, maxSkew N, DoNotSchedule: Karpenter launches no node with more than N; kube-scheduler keeps the skew against the emptiest eligible node, not an absolute cap.", "max-per-node 1"),
    n("workload", "requests", "", &["cpu=<quantity>", "memory=<quantity>"], "none", "CPU and memory each replica requests (as in its pod spec): explain and lint GP018 say which of the pool's types hold one replica.", "requests cpu=\"4\" memory=\"16Gi\""),
    n("workload", "disruption-budget", "", &["min-available=<count|percent>", "max-unavailable=<count|percent>"], "none", "The workload's PodDisruptionBudget.", "disruption-budget max-unavailable=1"),
    n("workload", "autoscale", "", &["gpu-utilization=<percent>", "metric=<string>"], "none", "A HorizontalPodAutoscaler on GPU utilization (with `scale-to-zero` or a `trigger`: a KEDA prometheus trigger on the same query). Not for LLM servers: continuous batching keeps DCGM_FI_DEV_GPU_UTIL near 100% at any load; scale them on queue depth, `trigger \"prometheus\" query=\"sum(vllm:num_requests_waiting)\" threshold=8`.", "autoscale gpu-utilization=70"),
    n("workload", "scale-to-zero", "", &["cooldown=<duration>", "polling=<duration>"], "none (cooldown 5m, polling 30s)", "KEDA may scale the workload to 0 (needs replicas min=0 and a `trigger`): a ScaledObject instead of the HPA; cooldown: idle time before the last replica goes; polling: how often KEDA checks the triggers.", "scale-to-zero cooldown=\"15m\" polling=\"30s\""),
    n("workload", "trigger", "<prometheus|kueue-pending>", &["query=<PromQL>", "threshold=<number>", "activation=<number>", "cluster-queue=<string>", "per-replica=<integer>"], "none", "A KEDA trigger (a ScaledObject instead of the HPA): a Prometheus query (⌈value / threshold⌉ replicas, active above activation) or a Kueue ClusterQueue's pending workloads (per-replica of them per replica).", "trigger \"prometheus\" query=\"sum(queue_depth)\" threshold=10"),
    n("queue", "gpus", "", &["nominal=<integer>", "share=<percent>", "borrowing-limit=<integer|percent>", "lending-limit=<integer|percent>"], "required (or neuron-devices)", "The queue's quota in each flavor, in the resource pods request (time-slices or MIG devices on shared pools); a share or percentage is of what the non-queued workloads leave of the flavor's NodePool limit (their max replicas' requests, highest weight first). cpu and memory quotas follow (see the book's recipes/queues.md).", "gpus nominal=8 borrowing-limit=4"),
    n("queue", "neuron-devices", "", &["nominal=<integer>", "share=<percent>", "borrowing-limit=<integer|percent>", "lending-limit=<integer|percent>"], "required on Neuron pools", "As `gpus`, for a Neuron pool's aws.amazon.com/neuron.", "neuron-devices share=\"50%\""),
    n("queue", "cohort", "<string>", &[], "none", "The Kueue cohort: queues of one cohort borrow each other's unused quota (borrowing-limit needs one).", "cohort \"ml\""),
    n("queue", "gang", "<bool>", &[], "#false", "All-or-nothing admission of multi-pod jobs: needs Kueue's waitForPodsReady (listed in the kustomization's prerequisites).", "gang #true"),
    n("queue", "preemption", "", &["within-cluster-queue=<Never|LowerPriority|LowerOrNewerEqualPriority>", "reclaim-within-cohort=<Never|LowerPriority|Any>", "borrow-within-cohort=<Never|LowerPriority>"], "all Never", "The ClusterQueue's preemption policy.", "preemption within-cluster-queue=\"LowerPriority\""),
    n("monitoring", "label", "<key> <value|#null>", &[], "release kube-prometheus-stack", "A label on the PrometheusRule and ServiceMonitors.", "label \"release\" \"prom\""),
    n("monitoring", "karpenter", "", &["namespace=<string>"], "kube-system", "Where Karpenter's metrics are scraped.", "karpenter namespace=\"kube-system\""),
    n("monitoring", "dcgm-exporter", "", &["namespace=<string>"], "gpu-operator", "Where a dcgm-exporter you run yourself runs (EKS Auto Mode with `gpu-operator manage=#false`: gpuplan writes its ServiceMonitor there). Where the GPU Operator runs, it creates ServiceMonitor nvidia-dcgm-exporter in its own namespace, which gpuplan configures instead.", "dcgm-exporter namespace=\"gpu-operator\""),
    n("monitoring", "prometheus-adapter", "", &["namespace=<string>"], "monitoring", "Where prometheus-adapter runs (HPA metrics).", "prometheus-adapter namespace=\"monitoring\""),
    n("monitoring", "prometheus", "", &["url=<http(s) URL>"], "http://kube-prometheus-stack-prometheus.<namespace>.svc:9090", "The Prometheus KEDA's triggers query (their serverAddress).", "prometheus url=\"http://prometheus-operated.monitoring.svc:9090\""),
    n("monitoring", "gpu-operator", "", &["namespace=<string>", "manage=<bool>", "values=<bool>", "version=<string>"], "managed, values written", "`manage`: whether gpuplan emits the GPU Operator ClusterPolicy (false: the chart creates it). `values`: whether gpuplan writes the chart's Helm values (ConfigMap gpuplan-gpu-operator-values: NFD worker and operand tolerations for every pool taint); false: your install's values are unknown and checked as the chart's defaults.", "gpu-operator manage=#false"),
    n("monitoring", "alerts", "", &["near-limit=<percent>", "low-gpu-utilization=<percent>", "pending-for=<duration>"], "90, 10, 15m", "Alert thresholds.", "alerts near-limit=85"),
];

/// Names valid under `parent`, in table order (what unknown-node errors list).
pub fn names(parent: &str) -> Vec<&'static str> {
    NODES.iter().filter(|n| n.parent == parent).map(|n| n.name).collect()
}

/// The reference as text: one block per parent, one line per node.
pub fn render_text() -> String {
    let mut out = String::from("# gpuplan profile language (generated from the parser's table: gpuplan schema)\n");
    render_nodes(&mut out, NODES);
    out
}

/// One block per parent of `nodes`, one line per node (the profile language's, or the repository config's).
pub fn render_nodes(out: &mut String, nodes: &[NodeSpec]) {
    let mut parent = "";
    for node in nodes {
        if node.parent != parent {
            parent = node.parent;
            let heading = match parent {
                "profile" => "a profile file (top level)".to_string(),
                "config" => "gpuplan.kdl, the repository config (top level)".to_string(),
                _ => format!("`{parent}`"),
            };
            out.push_str(&format!("\n## in {heading}\n"));
        }
        let mut signature = node.name.to_string();
        if !node.args.is_empty() {
            signature.push(' ');
            signature.push_str(node.args);
        }
        for p in node.props {
            signature.push(' ');
            signature.push_str(p);
        }
        out.push_str(&format!("{signature}\n    {} Default: {}.\n    e.g. {}\n", node.doc, node.default, node.example));
    }
}

pub fn render_json() -> String {
    serde_json::to_string_pretty(NODES).expect("the table serializes") + "\n"
}

/// The reference as Markdown (the book's reference/profile.md): a section per parent, a heading per node with its
/// signature, doc, default and example.
pub fn render_markdown() -> String {
    let mut out = String::from(
        "# Profile language\n\nEvery node a profile may use, where it may appear, its arguments and properties, its default \
         and a minimal example. This is the parser's own table: a node that is not here is an error (E0102).\n",
    );
    let mut parent = "";
    for node in NODES {
        if node.parent != parent {
            parent = node.parent;
            let title = if parent == "profile" { "At the top level of a profile".to_string() } else { format!("In `{parent}`") };
            out.push_str(&format!("\n## {title}\n"));
        }
        let mut signature = vec![node.name];
        signature.extend((!node.args.is_empty()).then_some(node.args));
        signature.extend(node.props.iter().copied());
        out.push_str(&format!(
            "\n### {}\n\n`{}`\n\n{}\n\n- Default: {}\n- Example: `{}`\n",
            node.name,
            signature.join(" "),
            markdown_text(node.doc),
            markdown_text(node.default),
            node.example
        ));
    }
    out
}

/// Prose for a Markdown page, as written but with `<`, `>`, `*` and `_` escaped outside backtick spans, where
/// Markdown would read `<string>` as an HTML tag and `*.kdl … *.json` as emphasis.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        for c in part.chars() {
            match c {
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '*' | '_' => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }
    out
}
