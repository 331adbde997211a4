//! `gpuplan lint`: the misconfiguration checks, also run by `compile` (findings are warnings).
//!
//! Every rule has a stable code (`GP001`…), points at the profile text that caused the finding, says what to
//! do, and is silenced by `allow "GPxxx"` at the top level of the profile or in the pool/tier (the union is
//! [`PoolPlan::allow`]; profile-wide rules — the AMI and the budget — only honour the profile's top-level
//! `allow`).
//!
//! Rules about the *output* read each cluster's rendered objects as compile validated them, not the plan: a
//! user's `--templates` override that drops the GPU taint, hard-codes a limit or a weight is caught. Rules about
//! *intent* read the plan and the profile. Prices are always recomputed from the catalog, never taken from the
//! plan's own annotations, so drift between the two is visible (GP011, GP012).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::catalog::{AcceleratorKind, CapacityType, Catalog, InstanceType};
use crate::compile::Compilation;
use crate::render::Manifest;
use crate::simulate::manifests::Manifests;
use crate::diagnostic::{did_you_mean, ProfileDiagnostic, Span};
use crate::profile::{Pool, Profile, Tier};
use crate::catalog::cost::{self, Limits, NodeShape};
use crate::solve::{round_cents, ClusterPlan, PoolPlan, SPOT_MIN_TYPES};

/// GP020, GP021: the Kueue queue rules.
mod queues;
/// GP028: a static pool's replicas on types of very different price.
mod static_pools;
/// GP032: the EKS Auto Mode rule.
mod auto_mode;
/// GP033: raw class fields the provider filters instance types by.
mod raw_filters;

/// One lint rule, for `--help`, the README and `explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub code: &'static str,
    /// Short kebab-case name.
    pub name: &'static str,
    /// What it checks, one line.
    pub summary: &'static str,
    /// Whether it reads the rendered manifests (`true`) or the plan/profile (`false`).
    pub checks_output: bool,
}

/// All rules, in code order.
pub const RULES: &[Rule] = &[
    Rule { code: "GP000", name: "unknown-allow", summary: "`allow` names a code that is no lint rule (it silences nothing)", checks_output: false },
    Rule { code: "GP001", name: "gpu-underutilized-consolidation", summary: "GPU NodePool consolidates WhenEmptyOrUnderutilized (moves running GPU work — a model reload, a lost training step — for a small saving)", checks_output: true },
    Rule { code: "GP002", name: "ami-latest", summary: "EC2NodeClass AMI alias `@latest` (every node of its NodePools drifts on every AMI release)", checks_output: true },
    Rule { code: "GP003", name: "scheduled-budget-without-always-on", summary: "scheduled disruption budgets without an always-on budget (inactive schedule = unbounded disruption)", checks_output: true },
    Rule { code: "GP004", name: "limit-below-largest-node", summary: "NodePool accelerator limit below the accelerators of its largest instance type (that node never launches)", checks_output: true },
    Rule { code: "GP005", name: "equal-weights", summary: "overlapping NodePools of one cluster with equal weights (Karpenter breaks the tie by name, silently)", checks_output: true },
    Rule { code: "GP006", name: "narrow-spot-pool", summary: "spot NodePool with fewer than 15 instance types (more interruptions and insufficient-capacity failures; spot-to-spot consolidation needs 15)", checks_output: true },
    Rule { code: "GP007", name: "missing-gpu-taint", summary: "GPU NodePool without the accelerator NoSchedule taint (any pod can land on GPU nodes)", checks_output: true },
    Rule { code: "GP008", name: "fractional-gpu-type", summary: "fractional or zero-GPU instance type admitted (g6f, gr6f: EC2 reports a fraction of a GPU, Karpenter counts no nvidia.com/gpu)", checks_output: true },
    Rule { code: "GP009", name: "never-expire-without-drift-budget", summary: "`expireAfter: Never` without a `Drifted` disruption budget (drift, the only replacement path, rolls at the general budget's pace)", checks_output: true },
    Rule { code: "GP010", name: "reserved-without-selector", summary: "reserved capacity without capacityReservationSelectorTerms on its EC2NodeClass", checks_output: true },
    Rule { code: "GP011", name: "budget-exceeded-by-limits", summary: "the profile's NodePool limits allow a worst case above its $/h budget", checks_output: true },
    Rule { code: "GP012", name: "cost-annotation-drift", summary: "NodePool cost annotations disagree with what its limit and instance types can launch", checks_output: true },
    Rule { code: "GP013", name: "limit-missing-or-not-string", summary: "GPU NodePool without a limit on its accelerator resource, or with a non-string limit (GitOps skew)", checks_output: true },
    Rule { code: "GP014", name: "named-gpu-priced-out", summary: "a GPU named in the pool's `gpu { name … }` has no instance type left after price-ratio-max", checks_output: false },
    Rule { code: "GP015", name: "monitoring-without-selector-label", summary: "PrometheusRule without a label for Prometheus to select it by (kube-prometheus-stack selects release=<release>)", checks_output: true },
    Rule { code: "GP016", name: "tier-never-receives-pods", summary: "a tier of a tiered pool receives no pod even when every earlier tier is out of capacity (simulated)", checks_output: true },
    Rule { code: "GP017", name: "device-plugin-unreachable", summary: "an accelerator NodePool's taints keep an add-on its nodes need (NFD worker, NVIDIA operands, Neuron or EFA device plugin) off them: the devices never become schedulable", checks_output: true },
    Rule { code: "GP018", name: "replica-too-big-for-small-types", summary: "a workload's replica (its `requests` and accelerators) does not fit some of its pool's instance types: Karpenter silently launches larger, pricier ones", checks_output: false },
    Rule { code: "GP019", name: "efa-mixed-gpu-models", summary: "an EFA pool whose NodePools admit more than one GPU model: one multi-node job may get both and runs at the slower one's pace", checks_output: false },
    Rule { code: "GP020", name: "queue-flavor-without-pool", summary: "a Kueue ClusterQueue flavor whose ResourceFlavor is missing or whose nodeLabels match no NodePool (admitted pods wait for nodes that never come)", checks_output: true },
    Rule { code: "GP021", name: "queue-quota-above-limit", summary: "the Kueue ClusterQueues' nominal quotas in a flavor add up to more than its NodePool's limit (admitted jobs wait for nodes Karpenter will not launch)", checks_output: true },
    Rule { code: "GP024", name: "scaledobject-and-hpa-on-one-target", summary: "a workload scaled by a KEDA ScaledObject and by an HPA (or a second ScaledObject): KEDA's webhook refuses the ScaledObject, and two HPAs fight over the replica count", checks_output: true },
    Rule { code: "GP025", name: "scale-to-zero-with-min-available", summary: "a workload that scales to zero with a PodDisruptionBudget minAvailable ≥ 1: at one replica it allows no eviction, so every node drain blocks", checks_output: true },
    Rule { code: "GP026", name: "overlay-selects-no-type", summary: "an `overlay` block selects none of its NodePool's instance types (for the capacity types it launches): the NodeOverlay changes nothing there", checks_output: false },
    Rule { code: "GP028", name: "static-pool-price-spread", summary: "a static pool whose replicas can each launch on admitted types of very different price (each launch picks anew; the worst case counts the dearest)", checks_output: false },
    Rule { code: "GP032", name: "budget-alert-in-auto-mode", summary: "a `budget` in an EKS Auto Mode cluster: it bounds the NodePool limits, but no spend alert can be emitted (Auto Mode exposes no Karpenter metrics)", checks_output: false },
    Rule { code: "GP033", name: "raw-field-filters-types", summary: "a `raw \"EC2NodeClass\"` fragment sets cpuOptions, networkInterfaces, placementGroupSelector or connectionTracking: Karpenter drops the types the class cannot launch, which gpuplan's catalog cannot tell", checks_output: false },
];

/// The rule for a code, if any.
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

/// One lint finding with what it is about, so `explain` can list it under its pool.
#[derive(Debug, Clone)]
pub struct Finding {
    pub code: &'static str,
    pub cluster: String,
    pub profile: String,
    /// The NodePool it is about; None for profile-wide findings (AMI, budget, allow).
    pub pool: Option<String>,
    pub span: Span,
    /// A warning, ready to print.
    pub diagnostic: ProfileDiagnostic,
}

/// The compile's lint findings as warnings, sorted by file and position.
pub fn lint(c: &Compilation) -> Vec<ProfileDiagnostic> {
    c.findings.iter().map(|f| f.diagnostic.clone()).collect()
}

/// The lint findings on other objects than the compile's own (say, as a `--templates` override would render
/// them), as warnings.
pub fn lint_on(c: &Compilation, manifests: &[Manifest]) -> Vec<ProfileDiagnostic> {
    findings_on(c, manifests).into_iter().map(|f| f.diagnostic).collect()
}

/// The lint findings of one cluster, on its rendered objects (`manifests`, and their simulator form for GP016).
pub fn cluster_findings(c: &Compilation, cluster: &ClusterPlan, manifests: &[Manifest], simulated: &Manifests) -> Vec<Finding> {
    let rendered = Rendered::new(manifests);
    let profiles: Vec<&Profile> = c.profiles_of(&cluster.name).collect();
    let mut lint = Lint { c, rendered: &rendered, out: Vec::new() };
    lint.cluster(cluster, &profiles);
    lint.device_plugins(cluster, manifests);
    lint.replica_fit(cluster, &profiles, simulated);
    lint.keda_targets(cluster, &profiles, manifests);
    lint.scale_to_zero_budgets(cluster, &profiles, manifests);
    lint.out.extend(crate::simulate::check::tier_findings(c, cluster, simulated));
    lint.out
}

/// The lint findings on other objects than the compile's own (adopt lints the NodePools it read), every cluster
/// on its own core, sorted.
pub fn findings_on(c: &Compilation, manifests: &[Manifest]) -> Vec<Finding> {
    use rayon::prelude::*;
    let mut by_cluster: BTreeMap<String, Vec<Manifest>> = BTreeMap::new();
    for m in manifests {
        if let Some(cluster) = crate::layout::cluster_of(&m.path) {
            by_cluster.entry(cluster).or_default().push(m.clone());
        }
    }
    let none = Vec::new();
    let mut out: Vec<Finding> = c
        .plan
        .clusters
        .par_iter()
        .flat_map_iter(|cluster| {
            let own = by_cluster.get(&cluster.name).unwrap_or(&none);
            cluster_findings(c, cluster, own, &crate::simulate::check::cluster_manifests(own))
        })
        .collect();
    sort(&mut out);
    out
}

/// Objects read from a running cluster (`kubectl get hpa,scaledobjects,pdb -A -o yaml`: the items of a `List` count
/// one by one) or any YAML files, as objects of `cluster`, for [`lint_on`]: the rules that read the output (GP024's
/// HPA beside a ScaledObject, GP025's PDB) then judge what is really there. An object with the kind, namespace and
/// name of one of `own` (the compile's) replaces it: the cluster's copy is the live one.
pub fn with_cluster_objects(cluster: &str, own: Vec<Manifest>, paths: &[std::path::PathBuf]) -> Result<Vec<Manifest>, String> {
    let mut read = Vec::new();
    for file in yaml_files(paths)? {
        let text = crate::input::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let docs = crate::simulate::yaml::parse_docs(&file, &text).map_err(|e| e.to_string())?;
        for doc in docs {
            let value = doc.value.into_owned();
            let items = match value["kind"].as_str() {
                Some(kind) if kind.ends_with("List") => value["items"].as_array().cloned().unwrap_or_default(),
                _ => vec![value],
            };
            for (i, object) in items.into_iter().enumerate() {
                // One path component under the cluster (what `emit::cluster_of` reads): the file's name and where.
                let name = format!("{}:{}#{i}", file.file_name().unwrap_or_default().to_string_lossy(), doc.line);
                read.push(Manifest { path: std::path::Path::new(cluster).join(name), source: file.display().to_string(), object });
            }
        }
    }
    let id = |o: &Value| (o["kind"].to_string(), o["metadata"]["namespace"].as_str().unwrap_or("default").to_string(), o["metadata"]["name"].to_string());
    let replaced: BTreeSet<_> = read.iter().map(|m| id(&m.object)).collect();
    let mut out: Vec<Manifest> = own.into_iter().filter(|m| crate::layout::cluster_of(&m.path).as_deref() != Some(cluster) || !replaced.contains(&id(&m.object))).collect();
    out.extend(read);
    Ok(out)
}

/// Every *.yaml / *.yml under `paths` (directories recursively), sorted per directory.
fn yaml_files(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, String> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            let entries: Vec<_> = entries.into_iter().filter(|e| e.is_dir() || e.extension().is_some_and(|x| x == "yaml" || x == "yml")).collect();
            out.extend(yaml_files(&entries)?);
        } else if path.exists() {
            out.push(path.clone());
        } else {
            return Err(format!("cannot read {}: no such file or directory", path.display()));
        }
    }
    Ok(out)
}

/// By file, position, code and message: the order never depends on the threads.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| (a.span.file, a.span.offset, a.code, &a.diagnostic.message).cmp(&(b.span.file, b.span.offset, b.code, &b.diagnostic.message)));
}

/// A rendered NodePool, read defensively: a template override may have changed anything.
#[derive(Clone, Copy)]
struct NodePool<'a>(&'a Value);

impl<'a> NodePool<'a> {
    fn spec(&self) -> &'a Value {
        &self.0["spec"]
    }

    fn name(&self) -> &'a str {
        self.0["metadata"]["name"].as_str().unwrap_or("")
    }

    fn annotation(&self, key: &str) -> Option<&'a str> {
        self.0["metadata"]["annotations"][key].as_str()
    }

    fn weight(&self) -> u64 {
        self.spec()["weight"].as_u64().unwrap_or(0)
    }

    /// Values of an `In` requirement, if present.
    fn requirement(&self, key: &str) -> Option<Vec<&'a str>> {
        self.spec()["template"]["spec"]["requirements"]
            .as_array()?
            .iter()
            .find(|r| r["key"] == key && r["operator"] == "In")
            .map(|r| r["values"].as_array().map(|v| v.iter().filter_map(Value::as_str).collect()).unwrap_or_default())
    }

    fn instance_types(&self) -> Option<Vec<&'a str>> {
        self.requirement("node.kubernetes.io/instance-type")
    }

    fn capacity_types(&self) -> Vec<CapacityType> {
        self.requirement("karpenter.sh/capacity-type")
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| match c {
                "spot" => Some(CapacityType::Spot),
                "on-demand" => Some(CapacityType::OnDemand),
                "reserved" => Some(CapacityType::Reserved),
                _ => None,
            })
            .collect()
    }

    fn zones(&self) -> Vec<String> {
        self.requirement("topology.kubernetes.io/zone").unwrap_or_default().into_iter().map(String::from).collect()
    }

    fn limit_value(&self, resource: &str) -> Option<&'a Value> {
        self.spec()["limits"].get(resource)
    }

    /// The accelerator limit as a count, whether written as a string or (wrongly) a number.
    fn limit(&self, resource: &str) -> Option<u64> {
        match self.limit_value(resource)? {
            Value::String(s) => s.parse().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    fn taints(&self) -> Vec<(&'a str, &'a str)> {
        self.spec()["template"]["spec"]["taints"]
            .as_array()
            .map(|t| t.iter().map(|t| (t["key"].as_str().unwrap_or(""), t["effect"].as_str().unwrap_or(""))).collect())
            .unwrap_or_default()
    }

    fn budgets(&self) -> Vec<&'a Value> {
        self.spec()["disruption"]["budgets"].as_array().map(|b| b.iter().collect()).unwrap_or_default()
    }
}

struct PoolCtx<'a> {
    cluster: &'a ClusterPlan,
    plan: &'a PoolPlan,
    profile: &'a Profile,
    pool: &'a Pool,
    tier: &'a Tier,
    np: NodePool<'a>,
    catalog: &'a Catalog,
}

impl PoolCtx<'_> {
    /// The instance types the rendered NodePool may launch (the plan's when the requirement is missing).
    fn types(&self) -> Vec<String> {
        match self.np.instance_types() {
            Some(types) => types.into_iter().map(String::from).collect(),
            None => self.plan.candidates.iter().map(|c| c.name.clone()).collect(),
        }
    }

    /// Where the pool's limit comes from in the profile: max-accelerators or the budget.
    fn limit_span(&self) -> Span {
        let s = &self.tier.settings;
        match (&s.max_accelerators, &self.profile.budget_usd_per_hour) {
            (Some(m), _) if self.plan.limit_reason.starts_with("max-accelerators") => m.span,
            (_, Some(b)) => b.span,
            (Some(m), None) => m.span,
            (None, None) => self.tier.name.span,
        }
    }

    fn weight_span(&self) -> Span {
        self.tier.settings.weight.as_ref().map_or(self.tier.name.span, |w| w.span)
    }
}

/// Schedulable accelerators of one type in a pool, and per physical accelerator (as the solver counts them: at
/// least 1, × time-slicing replicas or the MIG devices of this type's GPU model).
fn schedulable(t: &InstanceType, kind: AcceleratorKind, sharing: Option<&crate::profile::Sharing>) -> (u32, u32) {
    let per_accelerator = crate::solve::units_per_gpu(sharing, t);
    (t.accelerators(kind).max(1) * per_accelerator, per_accelerator)
}

/// What a rendered NodePool can cost, recomputed from the catalog with the same cost model as the solver
/// (`cost`): expected and worst-case $/h at its rendered limits, and a few words on how.
struct RenderedCost {
    expected: f64,
    worst_case: f64,
    how: String,
}

fn rendered_cost(ctx: &PoolCtx) -> Option<RenderedCost> {
    let capacity = ctx.np.capacity_types();
    let capacity = if capacity.is_empty() { ctx.plan.capacity_types.clone() } else { capacity };
    let zones = ctx.np.zones();
    let kind = ctx.plan.accelerator;
    let shapes: Vec<NodeShape> = ctx
        .types()
        .iter()
        .filter_map(|name| {
            let t = ctx.catalog.get(name)?;
            let q = cost::quote(t, ctx.catalog, &capacity, &zones, ctx.plan.spot_ceiling)?;
            let mut shape = NodeShape::of(t, kind, crate::solve::units_per_gpu(ctx.plan.sharing.as_ref(), t), &q);
            // A capacity overlay on the accelerator sets a candidate's units (solve's `overlaid_units`): the plan knows them.
            if let Some(c) = ctx.plan.candidates.iter().find(|c| c.name == *name) {
                shape.units = c.units;
            }
            Some(shape)
        })
        .collect();
    let accelerators = u32::try_from(ctx.np.limit(ctx.plan.resource())?).ok()?;
    let cpu = ctx.np.limit("cpu").and_then(|c| u32::try_from(c).ok());
    let memory_mib = ctx.np.limit_value("memory").and_then(|m| m.as_str()).and_then(crate::simulate::yaml::milli).map(|m| u64::try_from((m / 1000 / (1024 * 1024)).max(0)).unwrap_or(u64::MAX));
    let limits = Limits { accelerators, cpu, memory_mib };
    (!shapes.is_empty()).then(|| RenderedCost {
        expected: cost::expected(&shapes, limits),
        worst_case: cost::worst_case(&shapes, limits),
        how: format!(
            "{accelerators} {}{} on {} type(s)",
            ctx.plan.resource(),
            cpu.map(|c| format!(", cpu {c}")).unwrap_or_default(),
            shapes.len()
        ),
    })
}

fn find_tier<'p>(profile: &'p Profile, name: &str) -> Option<(&'p Pool, &'p Tier)> {
    profile.pools.iter().find_map(|p| p.tiers.iter().find(|t| t.name.value == name).map(|t| (p, t)))
}

/// A cluster's rendered objects by (kind, name), indexed once per lint run.
struct Rendered<'c> {
    index: BTreeMap<(&'c str, &'c str), &'c Value>,
}

impl<'c> Rendered<'c> {
    fn new(manifests: &'c [Manifest]) -> Rendered<'c> {
        let index = manifests.iter().filter_map(|m| Some(((m.kind(), m.object["metadata"]["name"].as_str()?), &m.object))).collect();
        Rendered { index }
    }

    /// The rendered object of a kind and name.
    fn get(&self, kind: &str, name: &str) -> Option<&'c Value> {
        self.index.get(&(kind, name)).copied()
    }

    /// Every rendered object of a kind, by name.
    fn all(&self, kind: &str) -> Vec<&'c Value> {
        self.index.range((kind, "")..).take_while(|((k, _), _)| *k == kind).map(|(_, v)| *v).collect()
    }

    /// The first rendered object of a kind.
    fn first(&self, kind: &str) -> Option<&'c Value> {
        self.index.range((kind, "")..).next().filter(|((k, _), _)| *k == kind).map(|(_, v)| *v)
    }
}

struct Lint<'c> {
    c: &'c Compilation,
    rendered: &'c Rendered<'c>,
    out: Vec<Finding>,
}

impl<'c> Lint<'c> {
    /// Every rule on one cluster's pools and profiles (its profiles in file order).
    fn cluster(&mut self, cluster: &'c ClusterPlan, profiles: &[&'c Profile]) {
        let Some(catalog) = self.c.catalogs.get(&cluster.region) else { return };
        let mut views = Vec::new();
        for plan in &cluster.pools {
            let Some(profile) = self.c.profile(&cluster.name, &plan.profile) else { continue };
            let Some((pool, tier)) = find_tier(profile, &plan.name) else { continue };
            let Some(object) = self.rendered.get("NodePool", &plan.name) else { continue };
            views.push(PoolCtx { cluster, plan, profile, pool, tier, np: NodePool(object), catalog });
        }
        for ctx in &views {
            // GP001 and GP007 are about accelerator nodes: a CPU pool's nodes are meant for ordinary pods (no
            // accelerator taint) and run work that consolidation may move like any other.
            let accelerated = ctx.plan.accelerator.is_accelerator();
            // A static NodePool is not consolidated (Karpenter ignores the policy) and carries no resource limit
            // (the CRD allows only `nodes`): its size is its replicas.
            let fixed_size = ctx.plan.static_pool.is_some();
            if accelerated && !fixed_size {
                self.consolidation(ctx);
            }
            self.scheduled_budgets(ctx);
            if !fixed_size {
                self.limit(ctx);
            }
            self.static_price_spread(ctx);
            self.narrow_spot(ctx);
            if accelerated {
                self.gpu_taint(ctx);
            }
            self.fractional(ctx);
            self.never_expire(ctx);
            self.reserved(ctx);
            self.cost_annotations(ctx);
            self.named_gpu_priced_out(ctx);
            self.efa_mixed_models(ctx);
            self.idle_overlays(ctx);
        }
        self.equal_weights(&views);
        self.monitoring_labels(cluster, profiles);
        self.queues(cluster, profiles);
        for profile in profiles {
            self.ami_latest(cluster, profile);
            let pools: Vec<&PoolCtx> = views.iter().filter(|v| v.profile.name.value == profile.name.value).collect();
            self.budget(cluster, profile, &pools);
            self.auto_mode_budget(cluster, profile);
            self.raw_filters(cluster, profile);
            self.unknown_allow(cluster, profile);
        }
    }

    /// GP017: an add-on DaemonSet a pool's nodes need would not tolerate them (`ops::addons`; compile refuses the
    /// same as E0184, so this fires on objects edited after compile or read by adopt). Not silenced by `allow`:
    /// such a node is never usable.
    fn device_plugins(&mut self, cluster: &ClusterPlan, manifests: &[Manifest]) {
        for u in crate::ops::addons::unreachable(&cluster.pools, manifests) {
            let Some(plan) = cluster.pools.iter().find(|p| p.name == u.nodepool) else { continue };
            let Some(profile) = self.c.profile(&cluster.name, &plan.profile) else { continue };
            let Some((_, tier)) = find_tier(profile, &plan.name) else { continue };
            let taint = format!("{}:{}", u.taint.key, u.taint.effect);
            let diagnostic = self
                .c
                .sources
                .error(tier.name.span, "GP017", format!("NodePool `{}`: {} not tolerate the node taint {taint}, so the node's devices never become schedulable and its NodeClaims never initialize", u.nodepool, u.subject()))
                .help(format!("its tolerations come from {}: add {{key: {}, operator: Exists, effect: {}}} there", u.from, u.taint.key, u.taint.effect))
                .warning();
            self.out.push(Finding { code: "GP017", cluster: cluster.name.clone(), profile: profile.name.value.clone(), pool: Some(plan.name.clone()), span: tier.name.span, diagnostic });
        }
    }

    /// GP026: an `overlay` block whose `require` lines select none of the NodePool's types (a family the pool does not
    /// admit, a capacity type it does not launch): Karpenter applies it nowhere on this NodePool.
    fn idle_overlays(&mut self, ctx: &PoolCtx) {
        let types: Vec<&crate::catalog::InstanceType> = ctx.plan.candidates.iter().filter_map(|c| ctx.catalog.get(&c.name)).collect();
        for o in crate::solve::idle_overlays(&ctx.tier.settings, &types, &ctx.catalog.region) {
            self.pool(
                ctx,
                "GP026",
                o.name.span,
                format!("overlay `{}` selects none of NodePool `{}`'s {} instance types: its NodeOverlay changes nothing there", o.name.value, ctx.plan.name, types.len()),
                "check its `require` lines against the pool's types (`gpuplan explain` lists them) and capacity types, or remove the block".into(),
            );
        }
    }

    /// Records a pool-level finding unless the pool (or its profile) allows the code.
    fn pool(&mut self, ctx: &PoolCtx, code: &'static str, span: Span, message: String, help: String) {
        if ctx.plan.allow.contains(code) {
            return;
        }
        let diagnostic = self.c.sources.error(span, code, message).help(silence_help(help, code)).warning();
        self.out.push(Finding {
            code,
            cluster: ctx.cluster.name.clone(),
            profile: ctx.profile.name.value.clone(),
            pool: Some(ctx.plan.name.clone()),
            span,
            diagnostic,
        });
    }

    /// Records a profile-wide finding unless the profile's top level allows the code.
    fn profile(&mut self, cluster: &ClusterPlan, profile: &Profile, code: &'static str, span: Span, message: String, help: String) {
        if profile.allow.iter().any(|a| a.value == code) {
            return;
        }
        let diagnostic = self.c.sources.error(span, code, message).help(silence_help(help, code)).warning();
        self.out.push(Finding { code, cluster: cluster.name.clone(), profile: profile.name.value.clone(), pool: None, span, diagnostic });
    }

    /// GP018: a workload's replica does not fit some of its pool's types. Karpenter launches the cheapest type the
    /// pending pods fit (kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/nodeclaim.go` `CanAdd`
    /// filters the types by the pods' requests), so the pool's cheapest $/accelerator-hour is never what it pays.
    fn replica_fit(&mut self, cluster: &ClusterPlan, profiles: &[&Profile], simulated: &Manifests) {
        let Some((catalog, _)) = self.c.simulation_catalog(&cluster.region) else { return };
        for w in &cluster.ops.workloads {
            let Some(profile) = profiles.iter().find(|p| p.name.value == w.profile) else { continue };
            let Some(spec) = profile.ops.workloads.iter().find(|x| x.name.value == w.name && x.namespace.value == w.namespace) else { continue };
            let allowed = cluster.pools.iter().filter(|p| w.nodepools.contains(&p.name)).any(|p| p.allow.contains("GP018"));
            let Some(fit) = crate::simulate::check::FitSummary::new(crate::simulate::check::replica_fits(cluster, simulated, catalog, w)) else { continue };
            if allowed || fit.too_small.is_empty() {
                continue;
            }
            let span = spec.requests.values().next().map_or(spec.name.span, |r| r.span);
            let message = format!("one replica of workload `{}/{}` does not fit on {} of pool `{}`: {}", w.namespace, w.name, fit.too_small_text(), w.pool, fit.price_text_per(unit_of(cluster, w)));
            let help = "lower the replica's requests to fit the small types, or exclude them from the pool (`exclude-types`) so its cost figures count what it launches (the add-on DaemonSets the cluster configures are counted; leave room for DaemonSets of your own)";
            self.profile(cluster, profile, "GP018", span, message, help.into());
        }
    }

    /// The profile and `workload` block of one of the cluster's workloads, by namespace and name.
    fn workload_spec(&self, profiles: &[&'c Profile], namespace: &str, name: &str) -> Option<(&'c Profile, &'c crate::ops::Workload)> {
        profiles.iter().find_map(|p| Some((*p, p.ops.workloads.iter().find(|w| w.namespace.value == namespace && w.name.value == name)?)))
    }

    /// GP024: one workload scaled by a ScaledObject and by an HPA or another ScaledObject, among the cluster's objects
    /// (gpuplan writes one or the other: this fires on objects edited or read from the cluster). KEDA's webhook refuses
    /// such a ScaledObject (kedacore/keda v2.20.2 `apis/keda/v1alpha1/scaledobject_webhook.go` `verifyHpas`,
    /// `verifyScaledObjects`), and if it got in anyway, KEDA's HPA and the other one would both set the replicas.
    fn keda_targets(&mut self, cluster: &ClusterPlan, profiles: &[&'c Profile], manifests: &[Manifest]) {
        for (so, other) in crate::ops::keda::clashes(manifests) {
            let Some((namespace, _, kind, name)) = crate::ops::keda::scale_target(&so.object) else { continue };
            let Some((profile, spec)) = self.workload_spec(profiles, &namespace, &name) else { continue };
            let other_name = other.object["metadata"]["name"].as_str().unwrap_or_default();
            let message = format!(
                "{kind} {namespace}/{name} is scaled by ScaledObject `{}` and by {} `{other_name}`: KEDA's admission webhook refuses the ScaledObject, and two HPAs would fight over its replicas",
                so.object["metadata"]["name"].as_str().unwrap_or_default(),
                other.kind()
            );
            let help = format!("delete {} `{other_name}`: KEDA creates and owns the HPA of its ScaledObject (`keda-hpa-<name>`); or drop `scale-to-zero` and `trigger` from the workload to keep an HPA only", other.kind());
            self.profile(cluster, profile, "GP024", spec.name.span, message, help);
        }
    }

    /// GP025: a workload whose ScaledObject may take it to 0 replicas, selected by a PodDisruptionBudget with a
    /// minAvailable of one pod or more (or any percentage: rounded up). KEDA wakes it to one replica; at one replica
    /// that budget allows no eviction, and Karpenter's drains wait on it (see `ops::workload::default_pdb`).
    fn scale_to_zero_budgets(&mut self, cluster: &ClusterPlan, profiles: &[&'c Profile], manifests: &[Manifest]) {
        for w in &cluster.ops.workloads {
            let Some(so) = manifests.iter().find(|m| m.kind() == crate::ops::keda::KIND && crate::ops::keda::scale_target(&m.object).is_some_and(|(ns, _, kind, name)| ns == w.namespace && kind == w.kind && name == w.name)) else { continue };
            if so.object["spec"]["minReplicaCount"].as_u64().unwrap_or(0) != 0 {
                continue;
            }
            let selects = |pdb: &Value| pdb["spec"]["selector"]["matchLabels"].as_object().is_some_and(|l| l.iter().all(|(k, v)| w.selector.get(k).is_some_and(|x| v == x)));
            let blocking = |pdb: &Value| match &pdb["spec"]["minAvailable"] {
                Value::Number(n) => n.as_u64().is_some_and(|n| n >= 1),
                Value::String(s) => s.strip_suffix('%').and_then(|p| p.parse::<u32>().ok()).map_or_else(|| s.parse::<u32>().is_ok_and(|n| n >= 1), |p| p > 0),
                _ => false,
            };
            let pdbs = manifests.iter().map(|m| &m.object).filter(|o| o["kind"] == "PodDisruptionBudget" && o["metadata"]["namespace"] == w.namespace.as_str());
            for pdb in pdbs.filter(|o| selects(o) && blocking(o)) {
                let Some((profile, spec)) = self.workload_spec(profiles, &w.namespace, &w.name) else { continue };
                let span = spec.disruption_budget.as_ref().map_or(spec.name.span, |b| b.span);
                let message = format!(
                    "workload `{}/{}` scales to zero, and PodDisruptionBudget `{}` keeps minAvailable {} of its pods: at one replica it allows no eviction, so every node drain blocks",
                    w.namespace,
                    w.name,
                    pdb["metadata"]["name"].as_str().unwrap_or_default(),
                    pdb["spec"]["minAvailable"]
                );
                self.profile(cluster, profile, "GP025", span, message, "give the budget maxUnavailable: 1 (what gpuplan writes): it keeps all but one pod up when there are several and lets the last one move".into());
            }
        }
    }

    /// GP019: an EFA pool whose NodePools (all its tiers) admit more than one GPU model. NCCL collectives run at the
    /// pace of the slowest rank, and nothing keeps one job's pods on one model. Reported on the pool's first tier.
    fn efa_mixed_models(&mut self, ctx: &PoolCtx) {
        if !ctx.plan.efa || ctx.plan.tier_index != 0 {
            return;
        }
        let tiers = ctx.cluster.pools.iter().filter(|p| p.profile == ctx.plan.profile && p.pool == ctx.plan.pool);
        let models: BTreeSet<&str> = tiers.flat_map(|p| p.candidates.iter().map(|c| c.accelerator_name.as_str())).collect();
        if models.len() < 2 {
            return;
        }
        let span = ctx.tier.settings.efa.as_ref().map_or(ctx.tier.name.span, |e| e.span);
        let list = models.into_iter().collect::<Vec<_>>().join(", ");
        self.pool(
            ctx,
            "GP019",
            span,
            format!("EFA pool `{}` admits GPU models {list}: one multi-node job may get several and runs at the slowest one's pace", ctx.plan.pool),
            "name one GPU model in the pool's `gpu { name … }`, or give each model its own pool".into(),
        );
    }

    /// GP001: WhenEmptyOrUnderutilized on a GPU pool.
    fn consolidation(&mut self, ctx: &PoolCtx) {
        let policy = ctx.np.spec()["disruption"]["consolidationPolicy"].as_str().unwrap_or("");
        if policy == "WhenEmptyOrUnderutilized" {
            self.pool(
                ctx,
                "GP001",
                ctx.tier.settings.disruption.consolidation_policy.span,
                format!(
                    "NodePool `{}` consolidates WhenEmptyOrUnderutilized: Karpenter may delete a node that runs GPU pods whenever their {} requests fit on other or cheaper nodes, restarting long-running GPU work (a model reload, a lost training step) for a small saving",
                    ctx.plan.name,
                    ctx.plan.resource()
                ),
                "use `consolidation \"WhenEmpty\"` in the pool's disruption block (the preset default): empty GPU nodes still go, busy ones stay".into(),
            );
        }
    }

    /// GP002: `@latest` AMI alias on any EC2NodeClass of the profile.
    fn ami_latest(&mut self, cluster: &ClusterPlan, profile: &Profile) {
        let classes = cluster.node_classes.iter().filter(|n| n.profile == profile.name.value);
        let mut latest = BTreeSet::new();
        for class in classes {
            let Some(object) = self.rendered.get("EC2NodeClass", &class.name) else { continue };
            for term in object["spec"]["amiSelectorTerms"].as_array().into_iter().flatten() {
                if let Some(alias) = term["alias"].as_str().filter(|a| a.ends_with("@latest")) {
                    latest.insert((class.name.clone(), alias.to_string()));
                }
            }
        }
        if latest.is_empty() {
            return;
        }
        let aliases: BTreeSet<&str> = latest.iter().map(|(_, a)| a.as_str()).collect();
        let classes: Vec<&str> = latest.iter().map(|(c, _)| c.as_str()).collect();
        let family = aliases.iter().next().and_then(|a| a.split('@').next()).unwrap_or("al2023");
        self.profile(
            cluster,
            profile,
            "GP002",
            profile.cluster.ami.span,
            format!(
                "AMI alias `{}` (EC2NodeClass {}) follows every AMI release: each release drifts and replaces every node of {}",
                aliases.into_iter().collect::<Vec<_>>().join("`, `"),
                classes.join(", "),
                fleet(cluster, profile)
            ),
            format!("pin a release, e.g. ami \"{family}@v20251023\", and bump it deliberately"),
        );
    }

    /// GP003: scheduled budgets with some disruption reason not covered by an always-on budget.
    fn scheduled_budgets(&mut self, ctx: &PoolCtx) {
        let budgets = ctx.np.budgets();
        if !budgets.iter().any(|b| b.get("schedule").is_some_and(|s| !s.is_null())) {
            return;
        }
        let always: Vec<&&Value> = budgets.iter().filter(|b| b.get("schedule").is_none_or(Value::is_null)).collect();
        let uncovered: Vec<&str> = ["Empty", "Underutilized", "Drifted"]
            .into_iter()
            .filter(|reason| {
                !always.iter().any(|b| match b.get("reasons").and_then(Value::as_array) {
                    None => true,
                    Some(r) => r.is_empty() || r.iter().any(|x| x == reason),
                })
            })
            .collect();
        if uncovered.is_empty() {
            return;
        }
        let d = &ctx.tier.settings.disruption;
        let span = d
            .budgets
            .iter()
            .find(|b| b.schedule.is_some())
            .map(|b| b.span)
            .or(d.maintenance_window.as_ref().map(|w| w.span))
            .unwrap_or(ctx.pool.preset.span);
        self.pool(
            ctx,
            "GP003",
            span,
            format!(
                "NodePool `{}` has scheduled disruption budgets but no always-on budget for {}: while the schedule is inactive, that disruption is unbounded",
                ctx.plan.name,
                uncovered.join(", ")
            ),
            "add an always-on budget next to the scheduled one, e.g. budget nodes=\"1\" (no schedule); Karpenter applies the most restrictive active budget".into(),
        );
    }

    /// GP004: rendered limit below the largest node; GP013: limit missing or not a string.
    fn limit(&mut self, ctx: &PoolCtx) {
        let resource = ctx.plan.resource();
        let Some(value) = ctx.np.limit_value(resource) else {
            self.pool(
                ctx,
                "GP013",
                ctx.limit_span(),
                format!("NodePool `{}` has no `{resource}` limit: the pool can grow without bound", ctx.plan.name),
                "gpuplan sizes the limit from max-accelerators or the budget; check the NodePool template override (--templates)".into(),
            );
            return;
        };
        if !value.is_string() {
            self.pool(
                ctx,
                "GP013",
                ctx.limit_span(),
                format!("NodePool `{}` writes its `{resource}` limit as {value}, not a string: the API server returns it as a string and GitOps tools report a permanent diff", ctx.plan.name),
                "quote the limit in the template (`{{ pool.limit | string }}`)".into(),
            );
        }
        let Some(limit) = ctx.np.limit(resource) else { return };
        let largest = ctx
            .types()
            .into_iter()
            .filter_map(|name| ctx.catalog.get(&name).map(|t| (schedulable(t, ctx.plan.accelerator, ctx.plan.sharing.as_ref()), name)))
            .map(|((units, per), name)| (u64::from(units), u64::from(per), name))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)));
        if let Some((accelerators, per, name)) = largest.filter(|(a, _, _)| *a > limit) {
            let sharing = match &ctx.plan.sharing {
                Some(crate::profile::Sharing::Mig { .. }) if per > 1 => format!(" ({} × {per} MIG devices per GPU)", accelerators / per),
                _ if per > 1 => format!(" ({} × time-slicing replicas {per})", accelerators / per),
                _ => String::new(),
            };
            self.pool(
                ctx,
                "GP004",
                ctx.limit_span(),
                format!(
                    "NodePool `{}` limits {resource} to {limit}, but its largest instance type {name} has {accelerators}{sharing}: that node can never launch",
                    ctx.plan.name
                ),
                format!("raise the limit to at least {accelerators}, or cap node size with `{} {{ per-node max=… }}`", if ctx.plan.accelerator.is_accelerator() { "gpu" } else { "cpu" }),
            );
        }
    }

    /// GP005: equal rendered weights among overlapping NodePools of one cluster.
    fn equal_weights(&mut self, views: &[PoolCtx]) {
        let mut sorted: Vec<&PoolCtx> = views.iter().collect();
        sorted.sort_by(|a, b| a.plan.name.cmp(&b.plan.name));
        for (i, later) in sorted.iter().enumerate() {
            let later_types: BTreeSet<String> = later.types().into_iter().collect();
            let tied: Vec<&str> = sorted[..i]
                .iter()
                .filter(|earlier| earlier.np.weight() == later.np.weight())
                .filter(|earlier| {
                    earlier.plan.resource() == later.plan.resource() || earlier.types().iter().any(|t| later_types.contains(t))
                })
                .map(|earlier| earlier.plan.name.as_str())
                .collect();
            if tied.is_empty() {
                continue;
            }
            self.pool(
                later,
                "GP005",
                later.weight_span(),
                format!(
                    "NodePool `{}` has weight {} like overlapping NodePool{} `{}` in cluster `{}`: Karpenter breaks the tie by name, silently",
                    later.plan.name,
                    later.np.weight(),
                    if tied.len() == 1 { "" } else { "s" },
                    tied.join("`, `"),
                    later.cluster.name
                ),
                "give every pool of a cluster a distinct weight (remove explicit `weight`s to let gpuplan assign them), and check --templates overrides of spec.weight".into(),
            );
        }
    }

    /// GP006: spot pool narrower than Karpenter's spot-to-spot minimum.
    fn narrow_spot(&mut self, ctx: &PoolCtx) {
        if !ctx.np.capacity_types().contains(&CapacityType::Spot) {
            return;
        }
        let types = ctx.types();
        if types.len() >= SPOT_MIN_TYPES {
            return;
        }
        // The constraint that removed the most types limited the pool the most.
        let mut removals: Vec<_> = ctx.plan.removed.iter().filter(|r| !r.constraint.starts_with("whole accelerators")).collect();
        removals.sort_by(|a, b| b.types.len().cmp(&a.types.len()).then(a.constraint.cmp(&b.constraint)));
        let (span, why) = match removals.first() {
            Some(top) => {
                let others: Vec<String> = removals[1..].iter().take(2).map(|r| format!("`{}` removed {}", r.constraint, r.types.len())).collect();
                (
                    constraint_span(ctx, &top.constraint),
                    format!(
                        "; `{}` removed the most ({}){}",
                        top.constraint,
                        top.types.len(),
                        if others.is_empty() { String::new() } else { format!(", then {}", others.join(", ")) }
                    ),
                )
            }
            None => (ctx.tier.name.span, String::new()),
        };
        self.pool(
            ctx,
            "GP006",
            span,
            format!(
                "spot NodePool `{}` has {} instance type{}: few spot pools mean more interruptions and insufficient-capacity launch failures (and spot-to-spot consolidation, which also needs the SpotToSpotConsolidation feature gate and WhenEmptyOrUnderutilized, needs at least {SPOT_MIN_TYPES}){why}",
                ctx.plan.name,
                types.len(),
                if types.len() == 1 { "" } else { "s" }
            ),
            format!("relax that constraint ({}) so the pool can find spot capacity; spot pools this narrow are interrupted and not replaced", relaxations(ctx)),
        );
    }

    /// GP007: GPU NodePool without the accelerator NoSchedule taint.
    fn gpu_taint(&mut self, ctx: &PoolCtx) {
        let resource = ctx.plan.resource();
        let tainted = ctx.np.taints().iter().any(|(key, effect)| {
            [AcceleratorKind::Nvidia, AcceleratorKind::Amd, AcceleratorKind::Neuron].iter().any(|k| k.resource() == *key)
                && matches!(*effect, "NoSchedule" | "NoExecute")
        });
        let switched_off = !ctx.tier.settings.accelerator_taint.value;
        if !tainted && switched_off {
            self.pool(
                ctx,
                "GP007",
                ctx.tier.settings.accelerator_taint.span,
                format!("NodePool `{}` has no `{resource}` NoSchedule taint (`accelerator-taint #false`): pods that need no accelerator can land on (and keep alive) its nodes", ctx.plan.name),
                format!("remove `accelerator-taint #false` once the pods meant for these nodes tolerate `{resource}:NoSchedule` (EKS adds the toleration to pods that request {resource}); until then `allow \"GP007\"` says the choice is deliberate"),
            );
        } else if !tainted {
            self.pool(
                ctx,
                "GP007",
                ctx.tier.settings.accelerator.span,
                format!("NodePool `{}` has no `{resource}` NoSchedule taint: pods that need no accelerator can land on (and keep alive) its nodes", ctx.plan.name),
                format!("keep the `{resource}:NoSchedule` taint gpuplan adds (check the NodePool template override); accelerator pods tolerate it automatically on EKS"),
            );
        }
    }

    /// GP008: fractional or zero-GPU types in the rendered NodePool.
    fn fractional(&mut self, ctx: &PoolCtx) {
        for name in ctx.types() {
            let Some(t) = ctx.catalog.get(&name).filter(|t| t.has_partial_gpus()) else { continue };
            let gpu = t.gpus.iter().find(|g| g.count == 0 || g.partition_size < 1.0).expect("has_partial_gpus");
            let named = ctx.tier.settings.types.iter().find(|n| n.value == name);
            let span = named.map_or(ctx.tier.settings.accelerator.span, |n| n.span);
            self.pool(
                ctx,
                "GP008",
                span,
                format!(
                    "NodePool `{}` admits {name}, which EC2 reports with a fraction of a GPU ({} of one {}, {} MiB){}: Karpenter derives no whole `{}` from it, so it never launches it for pods that request one",
                    ctx.plan.name,
                    fraction(gpu.partition_size),
                    gpu.name,
                    gpu.memory_mib,
                    if named.is_some() { ", named in `types`" } else { "" },
                    ctx.plan.resource()
                ),
                if named.is_some() {
                    "keep it only for workloads built for fractional GPUs; otherwise remove it from `types`".into()
                } else {
                    "remove it (gpuplan only admits fractional-GPU types named in `types`; check the NodePool template override)".into()
                },
            );
        }
    }

    /// GP009: expireAfter Never without a Drifted budget.
    fn never_expire(&mut self, ctx: &PoolCtx) {
        if ctx.np.spec()["template"]["spec"]["expireAfter"].as_str() != Some("Never") {
            return;
        }
        let drifted = ctx
            .np
            .budgets()
            .iter()
            .any(|b| b.get("reasons").and_then(Value::as_array).is_some_and(|r| r.iter().any(|x| x == "Drifted")));
        if !drifted {
            self.pool(
                ctx,
                "GP009",
                ctx.tier.settings.disruption.expire_after.span,
                format!(
                    "NodePool `{}` never expires its nodes (expireAfter: Never) but no disruption budget names `Drifted`: drift (a new AMI, a NodeClass change) is their only replacement path, and it then rolls at the general budget's pace, at any hour, restarting the {} on each node",
                    ctx.plan.name,
                    if ctx.plan.accelerator.is_accelerator() { "GPU work" } else { "work" }
                ),
                "add budget nodes=\"1\" reasons=\"Drifted\" (one at a time), or a maintenance-window (drift held back outside it) to the pool's disruption block".into(),
            );
        }
    }

    /// GP010: reserved capacity without capacityReservationSelectorTerms on its EC2NodeClass.
    fn reserved(&mut self, ctx: &PoolCtx) {
        if !ctx.np.capacity_types().contains(&CapacityType::Reserved) {
            return;
        }
        let class = ctx.np.spec()["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap_or("");
        let terms = self.rendered.get("EC2NodeClass", class).or_else(|| self.rendered.get("NodeClass", class))
            .and_then(|o| o["spec"]["capacityReservationSelectorTerms"].as_array())
            .is_some_and(|t| !t.is_empty());
        if !terms {
            let s = &ctx.tier.settings;
            let span = s.reserved.as_ref().map_or(s.capacity.span, |r| r.span);
            self.pool(
                ctx,
                "GP010",
                span,
                format!(
                    "NodePool `{}` launches reserved capacity, but its EC2NodeClass `{class}` has no capacityReservationSelectorTerms: Karpenter finds no reservation to launch into",
                    ctx.plan.name
                ),
                "name the reservations in the pool: reserved { id \"cr-…\" } or reserved { tag \"key\" \"value\" } (and check the EC2NodeClass template override)".into(),
            );
        }
    }

    /// GP011: Σ limit × priciest $/accelerator-hour over the profile's rendered NodePools above the budget.
    fn budget(&mut self, cluster: &ClusterPlan, profile: &Profile, pools: &[&PoolCtx]) {
        let Some(budget) = &profile.budget_usd_per_hour else { return };
        let mut total = 0.0;
        let mut parts = Vec::new();
        for ctx in pools {
            let Some(c) = rendered_cost(ctx) else { continue };
            total += c.worst_case;
            parts.push(format!("{} ({}) ${:.2}", ctx.plan.name, c.how, c.worst_case));
        }
        if total > budget.value + 0.005 {
            self.profile(
                cluster,
                profile,
                "GP011",
                budget.span,
                format!(
                    "the NodePool limits of profile `{}` allow a worst case of ${total:.2}/h, over its budget of ${:.2}/h: {}",
                    profile.name.value,
                    budget.value,
                    parts.join(" + ")
                ),
                "the rendered limits differ from what gpuplan sized within the budget: check --templates overrides of spec.limits, or raise the budget".into(),
            );
        }
    }

    /// GP012: cost annotations vs what the rendered limit and instance types can launch.
    /// GP014: the user named a GPU, and price-ratio-max removed every type that has it (training names H100;
    /// p5 is dropped for being > 1.6 × the cheapest A100 $/GPU-hour): the pool silently never gets that GPU.
    fn named_gpu_priced_out(&mut self, ctx: &PoolCtx) {
        let Some(priced_out) = ctx.plan.removed.iter().find(|r| r.constraint.contains("[price-ratio-max")) else { return };
        for name in &ctx.tier.settings.accelerator_names {
            let has = |t: &str| {
                ctx.catalog.get(t).is_some_and(|t| {
                    t.gpus.iter().any(|g| g.name.eq_ignore_ascii_case(&name.value))
                        || t.neuron.as_ref().is_some_and(|n| n.name.eq_ignore_ascii_case(&name.value))
                })
            };
            let kept = ctx.plan.candidates.iter().any(|c| has(&c.name));
            let dropped: Vec<&str> = priced_out.types.iter().filter(|t| has(t)).map(String::as_str).collect();
            if kept || dropped.is_empty() {
                continue;
            }
            self.pool(
                ctx,
                "GP014",
                name.span,
                format!(
                    "NodePool `{}` never gets {}: price-ratio-max {} removed every type that has it ({})",
                    ctx.plan.name,
                    name.value,
                    ctx.tier.settings.price_ratio_max.value,
                    dropped.join(", ")
                ),
                format!(
                    "raise `price-ratio-max` for this pool (e.g. price-ratio-max {:.1}), give {} its own pool or tier, or remove it from `name`",
                    ctx.tier.settings.price_ratio_max.value * 2.0,
                    name.value
                ),
            );
        }
    }

    fn cost_annotations(&mut self, ctx: &PoolCtx) {
        let Some(c) = rendered_cost(ctx) else { return };
        let mut wrong = Vec::new();
        for (key, what, actual) in [
            ("gpuplan.dev/expected-usd-per-hour", "expected", round_cents(c.expected)),
            ("gpuplan.dev/worst-case-usd-per-hour", "worst case", round_cents(c.worst_case)),
        ] {
            let Some(text) = ctx.np.annotation(key) else { continue };
            match text.parse::<f64>() {
                Ok(v) if (v - actual).abs() < 0.006 => {}
                _ => wrong.push(format!("{what} ${text}/h, but at {} it is ${actual:.2}/h", c.how)),
            }
        }
        if !wrong.is_empty() {
            self.pool(
                ctx,
                "GP012",
                ctx.tier.name.span,
                format!("NodePool `{}` cost annotations disagree with what it can launch: {}", ctx.np.name(), wrong.join("; ")),
                "the annotations, limit or instance types were changed after gpuplan priced them: check --templates overrides; recompile to refresh".into(),
            );
        }
    }

    /// GP015: the cluster's rendered PrometheusRule carries no label but gpuplan's own: kube-prometheus-stack's
    /// Prometheus selects rules and ServiceMonitors by `release: <release>` (ruleSelectorNilUsesHelmValues), so
    /// none of the alerts would load. Points at the `monitoring` block that removed the default label.
    fn monitoring_labels(&mut self, cluster: &ClusterPlan, profiles: &[&Profile]) {
        let Some(rule) = self.rendered.first("PrometheusRule") else { return };
        let labels = rule["metadata"]["labels"].as_object().map(|l| l.keys().filter(|k| *k != "app.kubernetes.io/managed-by").count()).unwrap_or(0);
        if labels > 0 {
            return;
        }
        let Some(profile) = profiles.iter().find(|p| p.ops.monitoring.is_some()).or_else(|| profiles.first()).copied() else { return };
        let span = profile.ops.monitoring.as_ref().map_or(profile.cluster.name.span, |m| m.span);
        self.profile(
            cluster,
            profile,
            "GP015",
            span,
            format!("the PrometheusRule and ServiceMonitors of cluster `{}` carry no label for Prometheus to select them by: kube-prometheus-stack loads only those labelled `release: <its release>`, so no gpuplan alert would fire", cluster.name),
            "keep the default label \"release\" \"kube-prometheus-stack\" in the `monitoring` block, or set your Prometheus' label (e.g. label \"release\" \"prom\")".into(),
        );
    }

    /// GP000: `allow` codes that name no rule.
    fn unknown_allow(&mut self, cluster: &ClusterPlan, profile: &Profile) {
        let mut seen = BTreeSet::new();
        let tiers = profile.pools.iter().flat_map(|p| &p.tiers);
        for allow in profile.allow.iter().chain(tiers.flat_map(|t| &t.settings.allow)) {
            if rule(&allow.value).is_some() || !seen.insert(allow.span) {
                continue;
            }
            let help = did_you_mean(&allow.value, RULES.iter().map(|r| r.code))
                .map(|d| format!("{d} "))
                .unwrap_or_default()
                + &format!("lint codes are {}…{} (see README, Lint)", RULES[1].code, RULES[RULES.len() - 1].code);
            let diagnostic = self
                .c
                .sources
                .error(allow.span, "GP000", format!("`allow \"{}\"` names no lint rule: it silences nothing", allow.value))
                .help(help)
                .warning();
            self.out.push(Finding { code: "GP000", cluster: cluster.name.clone(), profile: profile.name.value.clone(), pool: None, span: allow.span, diagnostic });
        }
    }
}

fn silence_help(help: String, code: &str) -> String {
    format!("{help}; or silence with `allow \"{code}\"`")
}

fn fraction(partition: f64) -> String {
    if partition > 0.0 && partition < 1.0 {
        format!("1/{}", (1.0 / partition).round())
    } else {
        format!("{partition}")
    }
}

/// The profile text behind a solver constraint (as worded in [`crate::solve::Removal::constraint`]).
fn constraint_span(ctx: &PoolCtx, constraint: &str) -> Span {
    let s = &ctx.tier.settings;
    let first = |v: &[crate::diagnostic::Spanned<String>]| v.first().map(|x| x.span);
    let span = if constraint.starts_with("accelerator name in") {
        first(&s.accelerator_names)
    } else if constraint.starts_with("memory per accelerator") {
        s.memory_min_mib.as_ref().map(|m| m.span)
    } else if constraint.starts_with("accelerators per node ≥") {
        s.per_node_min.as_ref().map(|m| m.span)
    } else if constraint.starts_with("accelerators per node ≤") {
        s.per_node_max.as_ref().map(|m| m.span)
    } else if constraint.starts_with("arch in") {
        s.arch.first().map(|a| a.span)
    } else if constraint.starts_with("instance generation") {
        s.generation_min.as_ref().map(|g| g.span)
    } else if constraint.starts_with("family in") {
        first(&s.families)
    } else if constraint.starts_with("family not in") {
        first(&s.exclude_families)
    } else if constraint.starts_with("type in") {
        first(&s.types)
    } else if constraint.starts_with("type not in") {
        first(&s.exclude_types)
    } else if constraint.starts_with("EFA") {
        s.efa.as_ref().map(|e| e.span)
    } else if constraint.starts_with("supports capacity") || constraint.starts_with("has a price") {
        Some(s.capacity.span)
    } else if constraint.starts_with("$/accelerator-hour") {
        Some(s.price_ratio_max.span)
    } else if constraint.starts_with("node accelerators ≤ limit") {
        Some(ctx.limit_span())
    } else {
        None
    };
    span.unwrap_or(ctx.tier.name.span)
}

/// Lint findings grouped by (cluster, NodePool) for `explain`; profile-wide ones under (cluster, profile) with
/// an empty pool name.
pub fn by_pool(findings: &[Finding]) -> BTreeMap<(String, String, String), Vec<&Finding>> {
    let mut map: BTreeMap<(String, String, String), Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        map.entry((f.cluster.clone(), f.profile.clone(), f.pool.clone().unwrap_or_default())).or_default().push(f);
    }
    map
}

/// What GP002 says an AMI release replaces: the profile's GPU (or Neuron) fleet when its pools are accelerated, its
/// nodes otherwise (a CPU pool's nodes are no GPU fleet).
fn fleet(cluster: &ClusterPlan, profile: &Profile) -> String {
    let accelerated = cluster.pools.iter().filter(|p| p.profile == profile.name.value).any(|p| p.accelerator.is_accelerator());
    if accelerated { format!("profile `{}`'s NodePools (its whole accelerator fleet)", profile.name.value) } else { format!("profile `{}`'s NodePools", profile.name.value) }
}

/// GP006's help: the settings that narrow this kind of pool.
fn relaxations(ctx: &PoolCtx) -> &'static str {
    if ctx.plan.accelerator.is_accelerator() {
        "more GPU names, a lower memory-min, a wider per-node range, a higher price-ratio-max"
    } else {
        "more `types`, a wider `require` range, a higher price-ratio-max"
    }
}

/// The unit a workload's pool is priced in: accelerator-hours, or vCPU-hours on a CPU pool.
fn unit_of(cluster: &ClusterPlan, w: &crate::ops::workload::WorkloadPlan) -> &'static str {
    let cpu = cluster.pools.iter().any(|p| w.nodepools.contains(&p.name) && !p.accelerator.is_accelerator());
    if cpu { "vCPU" } else { "accelerator" }
}
