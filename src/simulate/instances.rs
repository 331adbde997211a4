//! Instance types and offerings as the AWS provider presents them to the scheduler, from gpuplan's catalog.
//!
//! - Labels (requirements) per type: aws/karpenter-provider-aws `pkg/providers/instancetype/types.go`
//!   `computeRequirements` (GPU labels only for single-GPU-model types, names in lower-kebab case; absent labels are
//!   `DoesNotExist`).
//! - Capacity and allocatable: `types.go` `computeCapacity`, `memory` (VM overhead: `--vm-memory-overhead-percent`
//!   default 0.075, rounded up to MiB; arm64 loses 64 MiB more), `pods` (ENI-limited but on Windows: max ENIs of the
//!   default network card × (IPv4 per ENI − 1) + 2, else 110; `maxPods`, `podsPerCore`), `kubeReservedResources`
//!   (memory 11 MiB × ENI-limited pods + 255 MiB; cpu 6% of the first core, 1% of the second, 0.5% of the next two,
//!   0.25% above; ephemeral-storage 1Gi), `evictionThreshold` (memory 100Mi, ephemeral 10%, `evictionHard`
//!   overrides). ENI limits come from EC2 DescribeInstanceTypes (moto 5.2.5 data, `eni-limits.tsv`), because the
//!   catalog does not carry them. Ephemeral storage is the AL2023 default 20Gi root volume. `vpc.amazonaws.com/efa`
//!   is the type's maximum EFA interfaces (`types.go` `efas`, from `catalog::efa`).
//! - NodeOverlay (karpenter.sh/v1alpha1): the heaviest matching overlay sets capacity, and each offering's price
//!   (kubernetes-sigs/karpenter `pkg/controllers/nodeoverlay`); overlays in conflict are dropped before
//!   (`overlays`).
//! - Offerings: every catalog zone × usage class, priced from the catalog (spot estimates labelled). Reserved
//!   offerings only for a NodeClass with `capacityReservationSelectorTerms` (which reservation holds which type, and
//!   how many, is account state: such a class is assumed to hold one for every type the catalog lists as reservable,
//!   billed at the on-demand price).
//! - `--unavailable TYPE:ZONE:CAPACITY` marks offerings unavailable for the whole run, as the provider's
//!   unavailable-offerings cache does after an insufficient-capacity error (`pkg/cache/unavailableofferings.go`).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::catalog::{CapacityType, Catalog, InstanceType};

use super::manifests::{NodeClass, NodeOverlay};
use super::requirements::{Requirement, Requirements};
use super::yaml::{milli, Resources};

const MI: i128 = 1024 * 1024 * 1000;
const GI: i128 = 1024 * MI;

#[derive(Debug, Clone)]
pub struct Offering {
    pub zone: String,
    pub capacity_type: CapacityType,
    /// The price Karpenter orders offerings by (NodeOverlays applied). A reserved offering's is the on-demand price
    /// / 10,000,000 ([`RESERVED_PRICE_DIVISOR`]), so a reservation always ranks as nearly free.
    pub usd_per_hour: f64,
    /// What the node costs, as reports show it: the ordering price, except for a reservation, which is billed at
    /// the on-demand price whatever an overlay makes Karpenter think of it.
    pub billed_usd_per_hour: f64,
    pub estimate: bool,
    pub available: bool,
}

/// One instance type as one NodePool sees it (NodeOverlays are per pool).
#[derive(Debug, Clone)]
pub struct SimType {
    pub name: String,
    /// The type's labels, shared with every NodePool and run that sees the type ([`TypeLabels`]).
    pub requirements: Arc<Requirements>,
    pub capacity: Resources,
    pub allocatable: Resources,
    pub offerings: Vec<Offering>,
    /// GPU, accelerator or metal (filter.go `ExoticInstanceTypeFilter`).
    pub exotic: bool,
    /// The DaemonSets that run on this type in this NodePool (`daemons`); empty when the
    /// inputs hold no DaemonSet.
    pub daemons: Arc<super::daemons::DaemonOverhead>,
}

/// `TYPE:ZONE:CAPACITY`, each part a glob (`*`, `?`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub instance_type: String,
    pub zone: String,
    pub capacity_type: String,
}

impl std::str::FromStr for Unavailable {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let [t, z, c] = parts.as_slice() else { return Err(format!("--unavailable {s:?}: expected TYPE:ZONE:CAPACITY (each may be *)")) };
        if !matches!(*c, "*" | "spot" | "on-demand" | "reserved") {
            return Err(format!("--unavailable {s:?}: capacity must be spot, on-demand, reserved or *"));
        }
        Ok(Unavailable { instance_type: t.to_string(), zone: z.to_string(), capacity_type: c.to_string() })
    }
}

impl Unavailable {
    pub fn matches(&self, t: &str, zone: &str, ct: CapacityType) -> bool {
        glob(&self.instance_type, t) && glob(&self.zone, zone) && glob(&self.capacity_type, ct.as_str())
    }
}

/// A run's unavailable offerings by the instance types they name: exact names in a map, globs tried in turn. Lint
/// GP016 marks every type of the earlier tiers unavailable by name and asks about every offering of every NodePool.
pub struct UnavailableTypes<'a> {
    exact: BTreeMap<&'a str, Vec<&'a Unavailable>>,
    patterns: Vec<&'a Unavailable>,
}

impl<'a> UnavailableTypes<'a> {
    pub fn new(unavailable: &'a [Unavailable]) -> UnavailableTypes<'a> {
        let mut types = UnavailableTypes { exact: BTreeMap::new(), patterns: Vec::new() };
        for u in unavailable {
            if u.instance_type.contains(['*', '?']) {
                types.patterns.push(u);
            } else {
                types.exact.entry(u.instance_type.as_str()).or_default().push(u);
            }
        }
        types
    }

    /// True when some unavailable offering is of this instance type.
    pub fn names(&self, instance_type: &str) -> bool {
        self.exact.contains_key(instance_type) || self.patterns.iter().any(|u| glob(&u.instance_type, instance_type))
    }

    /// True when some unavailable offering matches this one. Only the entries of this exact name and the globs are
    /// asked: an entry without wildcards matches no other name.
    pub fn matches(&self, instance_type: &str, zone: &str, ct: CapacityType) -> bool {
        let named = self.exact.get(instance_type).into_iter().flatten();
        named.chain(&self.patterns).any(|u| u.matches(instance_type, zone, ct))
    }
}

/// Shell-style glob with `*` and `?`. A pattern without either is compared as a string: the fallback check of lint
/// GP016 marks every type of the earlier tiers unavailable by exact name and calls this for every type of every pool.
pub fn glob(pattern: &str, text: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if !pattern.contains(['*', '?']) {
        return pattern == text;
    }
    if pattern.is_ascii() && text.is_ascii() {
        return glob_units(pattern.as_bytes(), text.as_bytes(), b'*', b'?');
    }
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    glob_units(&p, &t, '*', '?')
}

/// The glob over characters (or bytes, when both sides are ASCII): `any` matches any run, `one` any single unit.
fn glob_units<T: PartialEq + Copy>(p: &[T], t: &[T], any: T, one: T) -> bool {
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == one || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == any {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == any)
}

fn eni_limits() -> &'static BTreeMap<&'static str, (i64, i64)> {
    static TABLE: OnceLock<BTreeMap<&'static str, (i64, i64)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("eni-limits.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split('\t');
                Some((f.next()?, (f.next()?.parse().ok()?, f.next()?.parse().ok()?)))
            })
            .collect()
    })
}

/// The ENIs of a type's default network card and the IPv4 addresses of each (EC2 DescribeInstanceTypes
/// `NetworkInfo`); None when unknown.
pub fn eni_limit(name: &str) -> Option<(i64, i64)> {
    eni_limits().get(name).copied()
}

/// types.go `ENILimitedPods` with no reserved ENIs; None when the ENI limits are unknown.
pub fn eni_limited_pods(name: &str) -> Option<i64> {
    eni_limit(name).map(|(enis, ips)| enis * (ips - 1) + 2)
}

/// types.go `pods`.
fn max_pods(it: &InstanceType, class: &NodeClass) -> i64 {
    let count = match (class.max_pods, class.eni_limited_pods) {
        (Some(n), _) => n,
        (None, true) => eni_limited_pods(&it.name).unwrap_or(110),
        (None, false) => 110,
    };
    let count = match class.pods_per_core.filter(|p| *p > 0 && class.pods_per_core_enabled) {
        Some(ppc) => count.min(ppc * it.vcpu as i64),
        None => count,
    };
    // EKS Auto Mode caps every node at 110 pods, after the usual count (EKS User Guide, create-node-class).
    if class.auto_mode { count.min(110) } else { count }
}

/// types.go `kubeReservedResources` cpu share, in millicores.
fn kube_reserved_cpu(vcpu: u32) -> i128 {
    let cpu = vcpu as i64 * 1000;
    let mut total = 0;
    for (start, end, pct) in [(0_i64, 1000_i64, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025)] {
        if cpu >= start {
            let r = if cpu < end { cpu - start } else { end - start };
            total += (r as f64 * pct) as i128;
        }
    }
    total
}

/// Capacity (what limits count) of a type.
pub fn capacity(it: &InstanceType, class: &NodeClass) -> Resources {
    let mut c = Resources::new();
    c.insert("cpu".into(), it.vcpu as i128 * 1000);
    c.insert("memory".into(), crate::catalog::memory_mib(it) * MI);
    // types.go `ephemeralStorage`: the instance store under RAID0 (its size in GB), else the ephemeral volume.
    let instance_store = it.local_nvme_gb.filter(|_| class.instance_store_raid0).map(|gb| gb as i128 * 1_000_000_000 * 1000);
    c.insert("ephemeral-storage".into(), instance_store.or(class.root_volume).unwrap_or(20 * GI));
    c.insert("pods".into(), max_pods(it, class) as i128 * 1000);
    for kind in [crate::catalog::AcceleratorKind::Nvidia, crate::catalog::AcceleratorKind::Amd] {
        let n = it.accelerators(kind);
        if n > 0 {
            c.insert(kind.resource().into(), n as i128 * 1000);
        }
    }
    if let Some(n) = &it.neuron {
        c.insert("aws.amazon.com/neuron".into(), n.count as i128 * 1000);
        c.insert("aws.amazon.com/neuroncore".into(), (n.count * n.cores_per_device) as i128 * 1000);
    }
    // types.go `efas`: the type's maximum EFA interfaces (the NodeClass's networkInterfaces are not modelled).
    if let Some(n) = crate::catalog::efa::interfaces(&it.name) {
        c.insert(crate::catalog::efa::EFA_RESOURCE.into(), n as i128 * 1000);
    }
    c
}

/// Allocatable: capacity − kube-reserved − system-reserved − eviction threshold (types.go `NewInstanceType`).
pub fn allocatable(it: &InstanceType, class: &NodeClass, capacity: &Resources) -> Resources {
    let overhead_pods = if class.eni_limited_memory_overhead { eni_limited_pods(&it.name).unwrap_or(110) } else { capacity["pods"] as i64 / 1000 };
    let mut reserved = Resources::new();
    reserved.insert("memory".into(), (11 * overhead_pods as i128 + 255) * MI);
    reserved.insert("ephemeral-storage".into(), GI);
    reserved.insert("cpu".into(), kube_reserved_cpu(it.vcpu));
    reserved.extend(class.kube_reserved.clone());
    for (k, v) in &class.system_reserved {
        *reserved.entry(k.clone()).or_default() += v;
    }
    let eviction_memory = match class.eviction_memory.as_deref() {
        Some(p) if p.ends_with('%') => {
            // types.go `computeEvictionSignal`: ceil(bytes / 100 × p); 100% disables the threshold.
            let pct: f64 = p.trim_end_matches('%').parse().unwrap_or(0.0);
            let pct = if pct == 100.0 { 0.0 } else { pct };
            ((capacity["memory"] / 1000) as f64 / 100.0 * pct).ceil() as i128 * 1000
        }
        Some(q) => milli(q).unwrap_or(100 * MI),
        None => 100 * MI,
    };
    *reserved.entry("memory".into()).or_default() += eviction_memory;
    let storage = capacity["ephemeral-storage"];
    let eviction_nodefs = match class.eviction_nodefs.as_deref() {
        Some(p) if p.ends_with('%') => {
            let pct: f64 = p.trim_end_matches('%').parse().unwrap_or(0.0);
            let pct = if pct == 100.0 { 0.0 } else { pct };
            ((storage / 1000) as f64 / 100.0 * pct).ceil() as i128 * 1000
        }
        Some(q) => milli(q).unwrap_or(0),
        None => ((storage / 1000) as f64 / 100.0 * 10.0).ceil() as i128 * 1000,
    };
    *reserved.entry("ephemeral-storage".into()).or_default() += eviction_nodefs;
    capacity.iter().map(|(k, v)| (k.clone(), v - reserved.get(k).copied().unwrap_or(0))).collect()
}

fn lower_kebab(s: &str) -> String {
    s.to_lowercase().replace(' ', "-")
}

/// A cheap necessary condition for `requirements(it).intersects(reqs)`: the name, family and category labels.
pub fn may_match(it: &InstanceType, reqs: &Requirements) -> bool {
    let ok = |key: &str, value: &str| reqs.get(key).is_none_or(|r| r.has(value));
    ok("node.kubernetes.io/instance-type", &it.name)
        && ok("karpenter.k8s.aws/instance-family", &it.family)
        && ok("karpenter.k8s.aws/instance-category", &it.category)
        && ok("eks.amazonaws.com/instance-family", &it.family)
        && ok("eks.amazonaws.com/instance-category", &it.category)
}

/// Every type's labels ([`requirements`]) of one catalog, each built on first use and then shared by every NodePool,
/// run and thread that resolves the catalog's types: they depend only on the type and the region. Lint GP016 resolves
/// a few NodePools per tiered pool, and rebuilding the label sets each time was a third of its work.
#[derive(Debug)]
pub struct TypeLabels(Vec<OnceLock<Arc<Requirements>>>);

impl TypeLabels {
    pub fn new(catalog: &Catalog) -> TypeLabels {
        TypeLabels(catalog.instance_types.iter().map(|_| OnceLock::new()).collect())
    }

    /// The labels of the catalog's `i`th type; `catalog` must be the one these labels were made for.
    pub fn get(&self, catalog: &Catalog, i: usize) -> &Arc<Requirements> {
        debug_assert_eq!(self.0.len(), catalog.instance_types.len(), "labels of another catalog");
        self.0[i].get_or_init(|| Arc::new(requirements(&catalog.instance_types[i], &catalog.region)))
    }

    /// The labels of `it`, a type of `catalog` (found by its place in the catalog's list, not by name: a lookup, no
    /// search); a type from elsewhere gets its labels built.
    pub fn of(&self, catalog: &Catalog, it: &InstanceType) -> std::borrow::Cow<'_, Requirements> {
        let base = catalog.instance_types.as_ptr() as usize;
        let at = (it as *const InstanceType as usize).wrapping_sub(base) / std::mem::size_of::<InstanceType>().max(1);
        match catalog.instance_types.get(at) {
            Some(t) if std::ptr::eq(t, it) => std::borrow::Cow::Borrowed(self.get(catalog, at).as_ref()),
            _ => std::borrow::Cow::Owned(requirements(it, &catalog.region)),
        }
    }
}

/// types.go `computeRequirements` for the labels the catalog knows.
pub fn requirements(it: &InstanceType, region: &str) -> Requirements {
    let mut r = Requirements::default();
    // EKS Auto Mode gives a node the same instance labels under its own domain (`catalog::auto_mode`, the EKS User
    // Guide's "EKS Auto Mode Supported" labels): a NodePool or pod may use either.
    let mut set = |k: &str, v: Vec<String>| {
        if let Some(twin) = crate::catalog::auto_mode::auto_label(k) {
            r.add(&twin, Requirement::is_in(v.clone()));
        }
        r.add(k, Requirement::is_in(v));
    };
    set("node.kubernetes.io/instance-type", vec![it.name.clone()]);
    set("kubernetes.io/arch", it.arch.iter().map(|a| a.as_str().to_string()).collect());
    set("kubernetes.io/os", vec!["linux".into()]);
    set("topology.kubernetes.io/region", vec![region.to_string()]);
    set("topology.kubernetes.io/zone", it.zones.clone());
    set("karpenter.sh/capacity-type", it.capacity_types.iter().map(|c| c.as_str().to_string()).collect());
    set("karpenter.k8s.aws/instance-category", vec![it.category.clone()]);
    set("karpenter.k8s.aws/instance-family", vec![it.family.clone()]);
    set("karpenter.k8s.aws/instance-generation", vec![it.generation.to_string()]);
    set("karpenter.k8s.aws/instance-size", vec![it.size.clone()]);
    set("karpenter.k8s.aws/instance-cpu", vec![it.vcpu.to_string()]);
    set("karpenter.k8s.aws/instance-memory", vec![it.memory_mib.to_string()]);
    // types.go: the NVMe instance-store size when there is one (else DoesNotExist), and whether the family is a
    // "-flex" one.
    set("karpenter.k8s.aws/instance-local-nvme", it.local_nvme_gb.map(|gb| gb.to_string()).into_iter().collect());
    set("karpenter.k8s.aws/instance-capability-flex", vec![it.family.contains("-flex").to_string()]);
    let gpu = it.single_gpu_model();
    let neuron = it.neuron.as_ref();
    let gpu_labels: [(&str, Option<String>); 4] = [
        ("karpenter.k8s.aws/instance-gpu-name", gpu.map(|g| lower_kebab(&g.name))),
        ("karpenter.k8s.aws/instance-gpu-manufacturer", gpu.map(|g| lower_kebab(&g.manufacturer))),
        ("karpenter.k8s.aws/instance-gpu-count", gpu.map(|g| g.count.to_string())),
        ("karpenter.k8s.aws/instance-gpu-memory", gpu.map(|g| g.memory_mib.to_string())),
    ];
    let accel_labels: [(&str, Option<String>); 3] = [
        ("karpenter.k8s.aws/instance-accelerator-name", neuron.map(|n| lower_kebab(&n.name))),
        ("karpenter.k8s.aws/instance-accelerator-manufacturer", neuron.map(|_| "aws".to_string())),
        ("karpenter.k8s.aws/instance-accelerator-count", neuron.map(|n| n.count.to_string())),
    ];
    for (k, v) in gpu_labels.into_iter().chain(accel_labels) {
        set(k, v.into_iter().collect());
    }
    r
}

/// aws/karpenter-provider-aws v1.14.1 `pkg/providers/instancetype/offering/reserved_capacity_resolver.go`: a reserved
/// offering's price is the on-demand price divided by this ("free", the relative order kept). NodeOverlays then apply
/// to that price like any other (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeoverlay/controller.go`
/// `getOverlaidOfferings` selects reserved offerings too; `pkg/cloudprovider/types.go` `ApplyPriceOverlay`).
pub const RESERVED_PRICE_DIVISOR: f64 = 10_000_000.0;

/// Offerings of a type: catalog zones × usage classes, all available (a run's `--unavailable` offerings are marked
/// per run, by `simulate::with_availability`, on types shared between runs).
pub fn offerings(catalog: &Catalog, it: &InstanceType, class: &NodeClass) -> Vec<Offering> {
    let mut out = Vec::new();
    for zone in &it.zones {
        for &ct in &it.capacity_types {
            // Reserved offerings come from the reservations a NodeClass selects; which types and how many is account
            // state: a selecting class is assumed to hold one for every type the catalog lists as reservable.
            if ct == CapacityType::Reserved && !class.capacity_reservations {
                continue;
            }
            let price = match ct {
                CapacityType::Spot => it.spot.get(zone).or(it.on_demand.as_ref()),
                _ => it.on_demand.as_ref(),
            };
            let Some(price) = price else { continue };
            let ranked = if ct == CapacityType::Reserved { price.usd_per_hour / RESERVED_PRICE_DIVISOR } else { price.usd_per_hour };
            out.push(Offering { zone: zone.clone(), capacity_type: ct, usd_per_hour: ranked, billed_usd_per_hour: price.usd_per_hour, estimate: catalog.is_estimate(price), available: true });
        }
    }
    out
}

/// Builds a type as `pool` sees it, NodeOverlays applied (heaviest matching overlay wins, per resource and for price;
/// `overlays` are those Karpenter accepts, `overlays::accepted`).
pub fn sim_type(catalog: &Catalog, it: &InstanceType, requirements: &Arc<Requirements>, pool: &super::manifests::NodePool, class: &NodeClass, overlays: &[NodeOverlay]) -> SimType {
    let requirements = Arc::clone(requirements);
    let mut capacity = capacity(it, class);
    let mut allocatable = allocatable(it, class, &capacity);
    let mut offerings = offerings(catalog, it, class);
    // Karpenter's order (v1.14.1 pkg/apis/v1alpha1/nodeoverlay.go `OrderByWeight`): weight descending, then name
    // descending; the first to set a price or a resource keeps it. `overlays` are those Karpenter accepted: of two
    // equal-weight overlays that both set one, it drops the later one everywhere (`overlays::accepted`).
    let mut matching: Vec<&NodeOverlay> = overlays.iter().filter(|o| super::manifests::selects(&requirements, pool, o)).collect();
    matching.sort_by(|a, b| b.weight.cmp(&a.weight).then(b.name.cmp(&a.name)));
    let mut set: Vec<&str> = Vec::new();
    for o in &matching {
        for (k, v) in &o.capacity {
            if !set.contains(&k.as_str()) {
                set.push(k);
                capacity.insert(k.clone(), *v);
                allocatable.insert(k.clone(), *v);
            }
        }
    }
    // Price overlays apply per offering: the heaviest one whose capacity-type and zone requirements admit it.
    for of in &mut offerings {
        let admits = |o: &&&NodeOverlay| super::requirements::offering_compatible(&o.requirements, &of.zone, of.capacity_type.as_str());
        if let Some(o) = matching.iter().filter(|o| super::manifests::prices(o)).find(admits) {
            of.usd_per_hour = adjusted(of.usd_per_hour, o);
            // A reservation's bill does not change with what Karpenter is told it costs.
            if of.capacity_type != CapacityType::Reserved {
                of.billed_usd_per_hour = of.usd_per_hour;
            }
        }
    }
    let exotic = it.size.contains("metal") || ["nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"].iter().any(|r| capacity.get(*r).is_some_and(|v| *v > 0));
    SimType { name: it.name.clone(), requirements, capacity, allocatable, offerings, exotic, daemons: Arc::default() }
}

fn adjusted(price: f64, o: &NodeOverlay) -> f64 {
    if let Some(p) = o.price {
        return p;
    }
    let adj = o.price_adjustment.as_deref().unwrap_or("0");
    let value = if let Some(pct) = adj.strip_suffix('%') { price * pct.parse::<f64>().unwrap_or(0.0) / 100.0 } else { adj.parse::<f64>().unwrap_or(0.0) };
    (price + value).max(0.0)
}

/// What the NodeClaim asks of its instance type for daemons once scheduling is done: nodeclaim.go `addDaemonRequests`
/// (called by `FinalizeScheduling`), whose result the launch then requires every type to fit beside the pods
/// (aws/karpenter-provider-aws `pkg/providers/instance/filter/filter.go` `CompatibleAvailableFilter`).
///
/// Meant as the smallest overhead among the claim's types, it is not: the groups (types with the same daemons) are
/// visited in map order, an empty overhead counts as "none yet", and `resources.MinResources` drops a resource one
/// group lacks. So with groups [no daemons, daemons A] the claim asks for A's overhead everywhere (and a type without
/// A's daemons that cannot hold the pods plus A is not launched), while [A, no daemons] asks for nothing. Go's
/// small-map iteration starts at a random one of eight slots (src/internal/runtime/maps/table.go `Iter.Init`), so the
/// first-inserted group comes first most of the time (seven times in eight with two groups); groups are inserted in
/// the NodePool's type order, so gpuplan visits them in that order.
pub fn claim_requests(types: &[Arc<SimType>], candidates: &[usize]) -> Resources {
    let mut groups: Vec<&super::daemons::DaemonOverhead> = Vec::new();
    for t in types {
        if !groups.iter().any(|g| g.daemon_sets == t.daemons.daemon_sets) {
            groups.push(&t.daemons);
        }
    }
    let mut min = Resources::new();
    for g in groups.into_iter().filter(|g| candidates.iter().any(|&i| types[i].daemons.daemon_sets == g.daemon_sets)) {
        if min.is_empty() {
            min = g.requests.clone();
        } else {
            min = min.into_iter().filter_map(|(k, v)| g.requests.get(&k).map(|w| (k, v.min(*w)))).collect();
        }
    }
    min
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The fast paths (`*`, an exact name, bytes for ASCII) agree with the glob over characters.
        #[test]
        fn glob_fast_paths_agree_with_the_character_glob(pattern in "[ab.*?]{0,6}", text in "[ab.]{0,6}") {
            let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
            proptest::prop_assert_eq!(glob(&pattern, &text), glob_units(&p, &t, '*', '?'));
        }
    }

    /// `require` lines read a type's labels through [`TypeLabels::of`] (review fix, stop 20: they used to build the whole
    /// label set per type and per line): a catalog type's come from the cache, the very set `get` returns; a type that
    /// is not the catalog's (a copy) gets the same labels built.
    #[test]
    fn a_catalog_types_labels_are_looked_up_in_the_cache_and_a_copys_are_built_alike() {
        let catalog = Catalog::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs"), "us-east-1").unwrap();
        let labels = TypeLabels::new(&catalog);
        let i = catalog.instance_types.len() / 2;
        let cached = labels.of(&catalog, &catalog.instance_types[i]);
        assert!(matches!(cached, std::borrow::Cow::Borrowed(_)));
        assert!(std::ptr::eq(cached.as_ref(), labels.get(&catalog, i).as_ref()));
        let copy = catalog.instance_types[i].clone();
        let built = labels.of(&catalog, &copy);
        assert!(matches!(built, std::borrow::Cow::Owned(_)));
        assert_eq!(format!("{:?}", built.as_ref()), format!("{:?}", cached.as_ref()));
    }

    #[test]
    fn unavailable_types_match_exact_names_and_patterns() {
        let unavailable: Vec<Unavailable> = ["g5.xlarge:*:spot", "p4*:us-east-1a:*"].iter().map(|u| u.parse().unwrap()).collect();
        let types = UnavailableTypes::new(&unavailable);
        assert!(types.names("g5.xlarge") && types.names("p4d.24xlarge"));
        assert!(!types.names("g5.2xlarge") && !types.names("g6.xlarge"));
    }

    #[test]
    fn globs() {
        assert!(glob("g5.*", "g5.xlarge"));
        assert!(!glob("g5.*", "g6.xlarge"));
        assert!(glob("*", "anything"));
        assert!(glob("us-east-1?", "us-east-1a"));
    }

    // aws/karpenter-provider-aws pkg/providers/instancetype/types.go kubeReservedResources: 4 vCPUs reserve
    // 60 + 10 + 10 = 80m (the reference allocatable of g5.xlarge is 3920m).
    #[test]
    fn kube_reserved_cpu_ranges() {
        assert_eq!(kube_reserved_cpu(4), 80);
        assert_eq!(kube_reserved_cpu(2), 70);
        assert_eq!(kube_reserved_cpu(192), 60 + 10 + 10 + 470);
    }
}
