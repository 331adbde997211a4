//! Step 1 of a tier's selection: its requirements on instance types ([`Constraint`]), in the order they are applied
//! and reported: the accelerator kind and names, a CPU pool's defaults, the MIG config, the node's shape, the names
//! the profile lists, `require` lines, EFA, capacity types and zones, a reservation's type.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::ErrorCode;
use crate::catalog::{AcceleratorKind, Arch, CapacityType, Catalog, InstanceType};
use crate::diagnostic::{ProfileDiagnostic, Sources, Span, Spanned};
use crate::profile::{Settings, Sharing, Tier};
use crate::simulate::instances::TypeLabels;

use super::mig::MigConfigs;

/// One requirement of a tier on instance types: its words (in removals and E0140), where the profile says it, and
/// the test. The words name every value the test reads: they are also the key under which `Selections` shares
/// the result between tiers.
pub struct Constraint<'a> {
    pub label: String,
    pub span: Span,
    pub keep: Box<dyn Fn(&InstanceType) -> bool + 'a>,
    /// What a removed type has that the test reads ("arch arm64"), recorded beside its name in the removal;
    /// without one, its accelerators ([`node_summary`]).
    figure: Option<Figure<'a>>,
    /// Its removals are recorded: all but the accelerator-kind filter, whose removals are every other kind's types.
    pub listed: bool,
}

/// What a removed type has that a constraint reads.
type Figure<'a> = Box<dyn Fn(&InstanceType) -> String + 'a>;

impl<'a> Constraint<'a> {
    pub fn new(label: impl Into<String>, span: Span, keep: impl Fn(&InstanceType) -> bool + 'a) -> Constraint<'a> {
        Constraint { label: label.into(), span, keep: Box::new(keep), figure: None, listed: true }
    }

    /// The same constraint, describing a removed type with `figure`.
    pub fn with_figure(mut self, figure: impl Fn(&InstanceType) -> String + 'a) -> Constraint<'a> {
        self.figure = Some(Box::new(figure));
        self
    }

    /// The same constraint, its removals not recorded (the accelerator-kind filter).
    pub fn unlisted(mut self) -> Constraint<'a> {
        self.listed = false;
        self
    }

    /// The removed type's figure for this constraint.
    pub fn figure(&self, t: &InstanceType) -> String {
        self.figure.as_ref().map_or_else(|| node_summary(t), |f| f(t))
    }
}

/// A type's accelerators as a reader compares them with a pool's ("1 × L4 24 GiB", "2 × Inferentia2 32 GiB"), or
/// its vCPUs and memory when it has none ("4 vCPU, 16 GiB").
pub fn node_summary(t: &InstanceType) -> String {
    let gib = |mib: u64| format!("{}", (mib as f64 / 1024.0 * 10.0).round() / 10.0);
    let mut parts: Vec<String> = t.gpus.iter().map(|g| match g.count {
        0 => format!("{} of one {}, {} GiB", g.partition_size, g.name, gib(g.memory_mib)),
        n => format!("{n} × {} {} GiB", g.name, gib(g.memory_mib)),
    }).collect();
    parts.extend(t.neuron.as_ref().map(|n| format!("{} × {} {} GiB", n.count, n.name, gib(n.memory_mib_per_device))));
    if parts.is_empty() {
        return format!("{} vCPU, {} GiB, no accelerator", t.vcpu, gib(t.memory_mib));
    }
    parts.join(" + ")
}

/// The type has accelerators of this kind (whole or fractional GPUs) and of no other kind; for `Cpu`, none at all
/// (a CPU pool never launches a GPU node, whose price is paid for devices its pods do not use).
pub fn has_only(kind: AcceleratorKind, t: &InstanceType) -> bool {
    if kind == AcceleratorKind::Cpu {
        return t.gpus.is_empty() && t.neuron.is_none();
    }
    let others = t.gpus.iter().any(|g| crate::catalog::manufacturer_kind(&g.manufacturer) != Some(kind))
        || (kind != AcceleratorKind::Neuron && t.neuron.is_some());
    !others && (t.accelerators(kind) > 0 || (t.has_partial_gpus() && kind != AcceleratorKind::Neuron))
}

/// The tier's constraints, in the order they are applied (and reported).
pub fn constraints<'a>(tier: &'a Tier, catalog: &'a Catalog, labels: &'a TypeLabels, zones: &[String], sources: &Sources) -> Result<Vec<Constraint<'a>>, ProfileDiagnostic> {
    let s = &tier.settings;
    let mut out = accelerator_constraints(s);
    // MIG: only GPUs that have the pool's MIG config (an A10G can never land in a MIG pool).
    out.extend(mig_constraint(s, catalog, sources)?);
    out.extend(shape_constraints(s));
    out.extend(name_constraints(s));
    out.extend(require_constraints(tier, catalog, labels));
    if let Some(efa) = &s.efa {
        let v = efa.value;
        out.push(Constraint::new(format!("EFA {}", if v { "supported" } else { "not required" }), efa.span, move |t| !v || t.efa).with_figure(|_| "no EFA".into()));
    }
    out.extend(capacity_and_zone_constraints(tier, catalog, zones));
    if let Some(reserved_type) = s.reserved.as_ref().and_then(|r| r.instance_type.clone()) {
        let label = format!("the reservation's instance type {}", reserved_type.value);
        out.push(Constraint::new(label, reserved_type.span, move |t| t.name == reserved_type.value).with_figure(|_| "another type".into()));
    }
    Ok(out)
}

/// The type is named in the tier's `types` (which admits it past the whole-accelerator and per-node minimums).
fn named(s: &Settings) -> impl Fn(&InstanceType) -> bool + Copy + '_ {
    move |t: &InstanceType| s.types.iter().any(|n| n.value == t.name)
}

/// The values of a list setting, as written.
fn list(items: &[Spanned<String>]) -> Vec<String> {
    items.iter().map(|i| i.value.clone()).collect::<Vec<_>>()
}

/// The accelerator kind (only it, whole), the accelerator names, and a CPU pool's defaults.
fn accelerator_constraints(s: &Settings) -> Vec<Constraint<'_>> {
    // `admit "as-required"` keeps what Karpenter admits: a CPU pool every type its requirements admit, whatever its
    // devices; an accelerated pool only the types with its accelerator, since its limit counts accelerators and a type
    // without them would be unbounded (the adopt report names the types this leaves out). The accelerator names the
    // block lists still filter (they are the pool's `instance-gpu-name` requirement).
    let kind = s.accelerator.value;
    if s.admit.value == crate::profile::Admit::AsRequired {
        let first = (kind != AcceleratorKind::Cpu).then(|| Constraint::new(format!("has {} (and no other accelerator)", kind.resource()), s.accelerator.span, move |t| has_only(kind, t)).unlisted());
        return first.into_iter().chain(accelerator_name_constraint(s)).collect();
    }
    let named = named(s);
    let what = match kind {
        AcceleratorKind::Nvidia => "NVIDIA GPUs",
        AcceleratorKind::Amd => "AMD GPUs",
        AcceleratorKind::Neuron => "AWS Neuron devices",
        AcceleratorKind::Cpu => "",
    };
    let first = if kind == AcceleratorKind::Cpu { "has no GPU or Neuron device (a CPU pool)".to_string() } else { format!("has {what} (and no other accelerator)") };
    let mut out = vec![
        Constraint::new(first, s.accelerator.span, move |t| has_only(kind, t)).unlisted(),
        Constraint::new("whole accelerators (fractional-GPU types only when named in `types`)", s.accelerator.span, move |t| {
            (!t.has_partial_gpus() && t.accelerators(kind) > 0) || named(t)
        }),
    ];
    out.extend(accelerator_name_constraint(s));
    if kind == AcceleratorKind::Cpu {
        out.extend(cpu_pool_defaults(s));
    }
    out
}

/// The accelerator names the pool's block lists (`gpu { name … }`), if any.
fn accelerator_name_constraint(s: &Settings) -> Option<Constraint<'_>> {
    let kind = s.accelerator.value;
    let first = s.accelerator_names.first()?;
    let names: Vec<String> = s.accelerator_names.iter().map(|n| n.value.to_ascii_lowercase()).collect();
    let label = format!("accelerator name in [{}]", list(&s.accelerator_names).join(", "));
    Some(Constraint::new(label, first.span, move |t| {
        let model = match kind {
            AcceleratorKind::Neuron => t.neuron.as_ref().map(|n| n.name.to_ascii_lowercase()),
            _ => t.single_gpu_model().map(|g| g.name.to_ascii_lowercase()),
        };
        model.is_some_and(|m| names.contains(&m))
    }))
}

/// The node's shape: memory per accelerator, accelerators per node, arch, generation.
fn shape_constraints(s: &Settings) -> Vec<Constraint<'_>> {
    let kind = s.accelerator.value;
    let named = named(s);
    let mut out = Vec::new();
    if let Some(min) = &s.memory_min_mib {
        let v = min.value;
        let per = if kind == AcceleratorKind::Cpu { "vCPU" } else { "accelerator" };
        out.push(Constraint::new(format!("memory per {per} ≥ {v} MiB"), min.span, move |t| accelerator_memory_mib(t, kind) >= v));
    }
    if let Some(min) = &s.per_node_min {
        let v = min.value;
        out.push(Constraint::new(format!("accelerators per node ≥ {v}"), min.span, move |t| t.accelerators(kind) >= v || named(t)));
    }
    if let Some(max) = &s.per_node_max {
        let v = max.value;
        out.push(Constraint::new(format!("accelerators per node ≤ {v}"), max.span, move |t| t.accelerators(kind) <= v));
    }
    if !s.arch.is_empty() {
        let arch: Vec<Arch> = s.arch.iter().map(|a| a.value).collect();
        let label = format!("arch in [{}]", arch.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "));
        let figure = |t: &InstanceType| format!("arch {}", t.arch.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "));
        out.push(Constraint::new(label, s.arch[0].span, move |t| t.arch.iter().any(|a| arch.contains(a))).with_figure(figure));
    }
    if let Some(g) = &s.generation_min {
        let v = g.value;
        out.push(Constraint::new(format!("instance generation ≥ {v}"), g.span, move |t| t.generation >= v).with_figure(|t| format!("generation {}", t.generation)));
    }
    out
}

/// The families and types the tier lists or excludes.
fn name_constraints(s: &Settings) -> Vec<Constraint<'_>> {
    let named = named(s);
    let family = |t: &InstanceType| format!("family {}", t.family);
    let mut out = Vec::new();
    if !s.families.is_empty() {
        let families = list(&s.families);
        out.push(Constraint::new(format!("family in [{}]", families.join(", ")), s.families[0].span, move |t| families.contains(&t.family)).with_figure(family));
    }
    if !s.exclude_families.is_empty() {
        let families = list(&s.exclude_families);
        out.push(Constraint::new(format!("family not in [{}]", families.join(", ")), s.exclude_families[0].span, move |t| !families.contains(&t.family)).with_figure(family));
    }
    if !s.types.is_empty() {
        out.push(Constraint::new(format!("type in [{}]", list(&s.types).join(", ")), s.types[0].span, named).with_figure(|_| "not listed".into()));
    }
    if !s.exclude_types.is_empty() {
        let types = list(&s.exclude_types);
        out.push(Constraint::new(format!("type not in [{}]", types.join(", ")), s.exclude_types[0].span, move |t| !types.contains(&t.name)).with_figure(|_| "listed".into()));
    }
    out
}

/// What a CPU pool leaves out unless told otherwise, because ranking by $/vCPU-hour alone would keep nothing else:
/// - burstable types (instance category `t`): their price buys a baseline share of each vCPU (5–40 %), and the rest
///   is billed as CPU credits, so their $/vCPU-hour is not comparable (t3a.nano is a sixteenth of c6a.large's); a
///   `families` or `types` entry naming them admits them;
/// - less than 2 GiB of memory per vCPU (the compute-optimized c types' ratio) unless `cpu { memory-min … }` says
///   otherwise or `types` names the type: a 0.5 GiB node holds little beside its DaemonSets.
fn cpu_pool_defaults<'a>(s: &'a Settings) -> Vec<Constraint<'a>> {
    let mut out = Vec::new();
    let asked = move |t: &InstanceType| s.families.iter().any(|f| f.value == t.family) || s.types.iter().any(|n| n.value == t.name);
    out.push(Constraint::new("not burstable (t types only when named in `families` or `types`)", s.accelerator.span, move |t| t.category != "t" || asked(t)).with_figure(|t| format!("category {}", t.category)));
    if s.memory_min_mib.is_none() {
        out.push(Constraint::new(
            format!("memory per vCPU ≥ {CPU_POOL_MEMORY_MIB_PER_VCPU} MiB (a CPU pool's default)"),
            s.accelerator.span,
            move |t| t.memory_mib / u64::from(t.vcpu.max(1)) >= CPU_POOL_MEMORY_MIB_PER_VCPU || s.types.iter().any(|n| n.value == t.name),
        ));
    }
    out
}

/// `require` lines on a key the catalog's types are labelled with (`simulate::instances::requirements`, the labels
/// Karpenter's provider computes): a type stays when its label and the requirement intersect as Karpenter's
/// `Requirements.Intersects` has it (an absent label satisfies NotIn and DoesNotExist). Keys the catalog has no
/// label for (hypervisor, bandwidths, …) filter nothing here: [`unchecked_requires`] notes them. A type's labels are
/// the catalog's cached ones (`labels`, built once per catalog and kept by compile for its simulations): one lookup
/// per type and `require` line, instead of building the whole label set each time.
fn require_constraints<'a>(tier: &'a Tier, catalog: &'a Catalog, labels: &'a TypeLabels) -> Vec<Constraint<'a>> {
    use crate::simulate::requirements::{Requirement as Wanted, Requirements};
    let probe = (!catalog.instance_types.is_empty()).then(|| labels.get(catalog, 0));
    let labelled = |key: &str| probe.is_some_and(|p| p.get(key).is_some());
    let mut out = Vec::new();
    for r in tier.settings.requires.iter().filter(|r| labelled(&r.key)) {
        let Some(wanted) = Wanted::new(&r.operator, &r.values) else { continue };
        let mut incoming = Requirements::default();
        incoming.add(&r.key, wanted);
        let key = r.key.clone();
        let figure = move |t: &InstanceType| format!("{key} {}", labels.of(catalog, t).get(&key).map_or_else(|| "absent".to_string(), |v| v.describe()));
        out.push(Constraint::new(r.describe(), r.span, move |t| labels.of(catalog, t).intersects(&incoming).is_ok()).with_figure(figure));
    }
    out
}

/// The least memory per vCPU a CPU pool admits by default (see [`cpu_pool_defaults`]).
pub const CPU_POOL_MEMORY_MIB_PER_VCPU: u64 = 2048;

/// The `require` keys no catalog label lets gpuplan check: Karpenter applies them, so the NodePool may launch fewer
/// of the listed types (never others: the instance-type requirement still names them), and the cost bound, a
/// maximum over the listed types, stays an upper bound.
pub fn unchecked_requires(s: &Settings, catalog: &Catalog) -> Vec<String> {
    let Some(first) = catalog.instance_types.first() else { return Vec::new() };
    let labels = crate::simulate::instances::requirements(first, &catalog.region);
    s.requires.iter().filter(|r| crate::profile::requirements_is_well_known(&r.key) && labels.get(&r.key).is_none()).map(|r| r.key.clone()).collect()
}

/// The pool's capacity types must be offered, in its zones, with prices to bound them.
fn capacity_and_zone_constraints<'a>(tier: &'a Tier, catalog: &Catalog, zones: &[String]) -> Vec<Constraint<'a>> {
    let s = &tier.settings;
    let capacity = &s.capacity.value;
    let supports = move |t: &InstanceType| {
        capacity.iter().all(|c| match c {
            CapacityType::Reserved => t.capacity_types.contains(&CapacityType::OnDemand) || t.capacity_types.contains(&CapacityType::Reserved),
            other => t.capacity_types.contains(other),
        })
    };
    let offered_label = if zones.is_empty() { format!("offered in {}", catalog.region) } else { format!("offered in one of [{}]", zones.join(", ")) };
    let (offered_zones, priced_zones) = (zones.to_vec(), zones.to_vec());
    let capacity_types = |t: &InstanceType| format!("capacity types [{}]", t.capacity_types.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "));
    let offered_in = |t: &InstanceType| if t.zones.is_empty() { "offered in no zone".to_string() } else { format!("offered in [{}] only", t.zones.join(", ")) };
    let figure_zones = zones.to_vec();
    let prices = move |t: &InstanceType| {
        let missing: Vec<&str> = capacity.iter().filter(|c| t.price(**c, &figure_zones).is_none()).map(|c| c.as_str()).collect();
        format!("no {} price", if t.on_demand.is_none() { "on-demand".to_string() } else { missing.join(" or ") })
    };
    vec![
        Constraint::new(format!("supports capacity type {}", capacity.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(" and ")), s.capacity.span, supports).with_figure(capacity_types),
        Constraint::new(offered_label, tier.name.span, move |t| {
            if offered_zones.is_empty() { !t.zones.is_empty() } else { t.zones.iter().any(|z| offered_zones.contains(z)) }
        }).with_figure(offered_in),
        Constraint::new("has on-demand and capacity-type prices", s.capacity.span, move |t| {
            capacity.iter().all(|c| t.price(*c, &priced_zones).is_some()) && t.on_demand.is_some()
        }).with_figure(prices),
    ]
}

/// Memory per accelerator in MiB (per GPU, or per Neuron device; for a CPU pool, host memory per vCPU).
pub fn accelerator_memory_mib(t: &InstanceType, kind: AcceleratorKind) -> u64 {
    match kind {
        AcceleratorKind::Cpu => t.memory_mib / u64::from(t.vcpu.max(1)),
        AcceleratorKind::Neuron => t.neuron.as_ref().map_or(0, |n| n.memory_mib_per_device),
        _ => t.gpus.iter().map(|g| g.memory_mib).min().unwrap_or(0),
    }
}

/// A config that gives one GPU several MIG profiles needs the device plugin's `mixed` strategy, which advertises
/// `nvidia.com/mig-<profile>` resources (k8s-device-plugin README, MIG_STRATEGY; internal/rm/rm.go). Karpenter
/// knows an instance type's resources from EC2 (physical `nvidia.com/gpu` only), so a pod requesting
/// `nvidia.com/mig-1g.10gb` fits no instance type and Karpenter never launches a node for it; the NodePool's
/// `nvidia.com/gpu` limit and the pending alerts would not see those resources either.
fn mixed_strategy_error(config: &str, span: Span, sources: &Sources) -> ProfileDiagnostic {
    let configs = MigConfigs::builtin();
    let single: Vec<&str> = ["all-1g.10gb", "all-2g.20gb", "all-3g.40gb"].into_iter().filter(|c| configs.exists(c) && configs.homogeneous(c)).collect();
    sources
        .error(span, ErrorCode::E0178, format!("MIG config `{config}` mixes MIG profiles on a GPU, which Karpenter cannot provision"))
        .label("needs the `mixed` MIG strategy")
        .help(format!(
            "with several profiles per GPU the device plugin advertises nvidia.com/mig-<profile> resources that no instance type advertises to Karpenter, so pods requesting them never get a node; use a single-profile config (e.g. {}): the `single` strategy then advertises each MIG device as nvidia.com/gpu, the resource the NodePool limits",
            single.join(", ")
        ))
}

/// A solver filter for a MIG pool: only types whose GPU has the pool's MIG config. Errors when the config
/// does not exist at all (E0174), mixes profiles (E0178), or does not exist for a GPU the pool names (E0173).
fn mig_constraint(settings: &Settings, catalog: &Catalog, sources: &Sources) -> Result<Option<Constraint<'static>>, ProfileDiagnostic> {
    let Some(sharing) = &settings.sharing else { return Ok(None) };
    let Sharing::Mig { config } = &sharing.value else { return Ok(None) };
    let configs = MigConfigs::builtin();
    if !configs.exists(config) {
        let mut help = crate::diagnostic::did_you_mean(config, configs.names()).unwrap_or_default();
        if !help.is_empty() {
            help.push(' ');
        }
        help.push_str("MIG configs are the keys of the GPU Operator's default-mig-parted-config, e.g. all-1g.10gb, all-2g.20gb, all-3g.40gb, all-balanced");
        return Err(sources.error(sharing.span, ErrorCode::E0174, format!("unknown MIG config `{config}`")).help(help));
    }
    if !configs.homogeneous(config) {
        return Err(mixed_strategy_error(config, sharing.span, sources));
    }
    // Distinct GPU models (name, MiB) of the catalog, by lower-case name.
    let mut models: BTreeMap<String, BTreeSet<(String, u64)>> = BTreeMap::new();
    for t in &catalog.instance_types {
        if let Some(g) = t.single_gpu_model()
            && g.count > 0 && g.partition_size >= 1.0 {
                models.entry(g.name.to_ascii_lowercase()).or_default().insert((g.name.clone(), g.memory_mib));
            }
    }
    for name in &settings.accelerator_names {
        let Some(variants) = models.get(&name.value.to_ascii_lowercase()) else { continue };
        if variants.iter().any(|(n, m)| configs.applies(config, n, *m)) {
            continue;
        }
        let per_variant: Vec<String> = variants
            .iter()
            .map(|(n, m)| {
                let list = configs.configs_for(n, *m);
                if list.is_empty() {
                    format!("{n} ({} GiB) has no MIG", m / 1024)
                } else {
                    format!("MIG configs for {n} ({} GiB): {}", m / 1024, list.join(", "))
                }
            })
            .collect();
        let mig_gpus: BTreeSet<&str> = models.values().flatten().filter(|(n, m)| configs.mig_capable(n, *m)).map(|(n, _)| n.as_str()).collect();
        return Err(sources
            .error(sharing.span, ErrorCode::E0173, format!("MIG config `{config}` does not exist for {}", name.value))
            .label(format!("not a MIG config of {}", name.value))
            .help(format!(
                "{}; MIG-capable GPUs in the catalog: {}",
                per_variant.join("; "),
                mig_gpus.into_iter().collect::<Vec<_>>().join(", ")
            )));
    }
    let config = config.clone();
    Ok(Some(Constraint::new(format!("MIG config {config} exists for the GPU"), sharing.span, move |t| {
        t.single_gpu_model().is_some_and(|g| MigConfigs::builtin().applies(&config, &g.name, g.memory_mib))
    })))
}
