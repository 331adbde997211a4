//! Meeting users where they are: `gpuplan adopt` (existing Karpenter YAML → profiles, with a report of what
//! compiling them would change).
//!
//! The adopt pipeline: [`read`] (YAML files → NodePools, EC2NodeClasses, gpuplan's own GitOps and operations
//! objects, skipped objects with reasons) → [`map`] (each NodePool with its EC2NodeClass → a pool; profiles
//! grouped by gpuplan's `gpuplan.dev/profile` annotation, else by EC2NodeClass), [`workloads`] (gpuplan's
//! PDBs, HPAs and workload alerts → `workload` blocks), [`queues`] (its Kueue ClusterQueues → `queue` blocks) and [`monitoring`] (its PrometheusRule, ServiceMonitors,
//! ConfigMaps and ClusterPolicy → the cluster's `monitoring` block) → [`write`] (KDL with provenance comments)
//! → [`report`] (compile the result; compare with the originals: types, limits, weights, $/h, lint findings).

pub mod bottlerocket;
pub mod class;
pub mod map;
pub mod model;
pub mod monitoring;
pub mod overlays;
pub mod placeholders;
pub mod queues;
pub mod raw;
pub mod reservations;
pub mod read;
pub mod report;
pub mod requirements;
pub mod static_pool;
pub mod shared_limits;
pub mod verify;
pub mod weights;
pub mod workloads;
pub mod write;

pub mod consumed;
pub mod empty;
pub mod fields;
pub mod nodepool;
pub mod pool_report;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::catalog::Catalog;
use model::{AdoptedPool, AdoptedProfile, ClusterBlock, Warning};
use read::Doc;

#[derive(Debug, Clone)]
pub struct AdoptOptions {
    pub paths: Vec<PathBuf>,
    pub cluster: Option<String>,
    pub region: Option<String>,
    pub catalogs_dir: PathBuf,
    /// `--set NAME=value`: placeholders filled before the YAML is parsed.
    pub set: BTreeMap<String, String>,
    /// `--reservation NODEPOOL=INSTANCES` or `ID=TYPExCOUNT`: what the capacity reservation of a reserved NodePool
    /// holds, for reservations selected by id or tags (neither the YAML nor the catalog says), by NodePool or
    /// reservation id.
    pub reservations: BTreeMap<String, ReservationArg>,
    /// `--optimize`: gpuplan's `best-value` selection instead of `admit "as-required"` on every pool.
    pub optimize: bool,
    /// `--classes DIR…`: EC2NodeClasses (and Auto Mode NodeClasses) of NodePools given without theirs; only classes
    /// are read from them.
    pub classes: Vec<PathBuf>,
}

#[derive(Debug)]
pub struct Adoption {
    /// File name (`<profile>.kdl`) → text.
    pub files: BTreeMap<String, String>,
    pub profiles: Vec<AdoptedProfile>,
    pub warnings: Vec<Warning>,
    pub skipped: Vec<String>,
    /// The originals, for the report.
    pub node_pools: Vec<Doc>,
    pub node_classes: Vec<Doc>,
    /// By region: each profile is priced in its own region's catalog.
    pub catalogs: BTreeMap<String, Catalog>,
    /// The input files' texts, placeholders filled (the originals the verification simulates).
    pub texts: Vec<(PathBuf, String)>,
    /// The `--classes` files' texts: only their node classes are simulated.
    pub class_texts: Vec<(PathBuf, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    #[error(transparent)]
    Read(#[from] read::ReadError),
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error("no NodePool found in {0}")]
    Nothing(String),
    /// Facts a profile needs that the inputs do not hold (a reservation's type and count): named, with the flag or
    /// field that gives them, before anything is written.
    #[error("the inputs do not say what the profiles need (nothing was written):\n  {}", .0.join("\n  "))]
    Missing(Vec<String>),
    /// NodePools whose requirements admit no instance type of the catalog: a profile written from them would not
    /// compile (E0140). Each named, with why.
    #[error("{} NodePool(s) cannot be adopted: gpuplan could compile no node for them (nothing was written):\n  {}", .0.len(), .0.join("\n  "))]
    AdmitsNothing(Vec<String>),
    #[error("two NodePools named `{0}` ({1} and {2}): NodePool names are cluster-wide, so the API server keeps one object and the later apply replaces the earlier; adopt the files of one cluster, or rename one (nothing was written)")]
    DuplicateNodePool(String, String, String),
    #[error("--reservation {0}=…: no NodePool or capacity reservation id {0} in the inputs (their NodePools and the ids their classes select: {1}); nothing was written")]
    UnknownReservation(String, String),
    /// More NodePools in one cluster than Karpenter has weights (1 to 100): gpuplan gives each its own (E0153), so the
    /// profiles could not compile.
    #[error("cluster `{cluster}` has {count} NodePools, but Karpenter's weights run from 1 to 100 and gpuplan gives every NodePool of a cluster its own (equal weights are E0153), so at most {max} fit (nothing was written)\n  help: adopt the cluster's NodePools in parts of at most {max} (as separate clusters, e.g. by passing fewer files), or merge NodePools that differ only in what their pods could share", max = weights::MAX_NODEPOOLS)]
    TooManyNodePools { cluster: String, count: usize },
}

/// The profile a NodePool belongs to: gpuplan's own annotation, else its EC2NodeClass's name (profiles are
/// grouped by node class: gpuplan gives every profile one EC2NodeClass of the profile's name).
fn profile_of(np: &Doc) -> String {
    // Auto Mode's built-in NodeClass `default` cannot be a profile's own (E0278): such pools go to a profile named
    // `auto-mode`, whose NodeClass is then gpuplan's.
    let class = np.object["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().map(|c| if c == "default" && auto_mode(np) { "auto-mode" } else { c });
    np.object["metadata"]["annotations"]["gpuplan.dev/profile"]
        .as_str()
        .or(class)
        .map(str::to_string)
        .unwrap_or_else(|| std::path::Path::new(&np.file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

fn class_of<'d>(np: &Doc, classes: &'d [Doc]) -> Option<&'d Doc> {
    let name = np.object["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str()?;
    let kind = if auto_mode(np) { "NodeClass" } else { "EC2NodeClass" };
    classes.iter().find(|c| c.name == name && c.kind == kind)
}

/// Whether a NodePool's nodeClassRef names an EKS Auto Mode NodeClass (group `eks.amazonaws.com`).
fn auto_mode(np: &Doc) -> bool {
    np.object["spec"]["template"]["spec"]["nodeClassRef"]["group"] == crate::catalog::auto_mode::GROUP
}

/// The region: the flag, else the catalog gpuplan annotated, else the zones' region, else us-east-1.
fn region(options: &AdoptOptions, pools: &[&Doc]) -> String {
    if let Some(r) = &options.region {
        return r.clone();
    }
    for np in pools {
        if let Some(r) = np.object["metadata"]["annotations"]["gpuplan.dev/catalog"].as_str().and_then(|c| c.split('@').next()) {
            return r.to_string();
        }
        let reqs = requirements::requirements(&np.object);
        if let Some(zone) = requirements::zones(&reqs).first() {
            return zone.trim_end_matches(|c: char| c.is_ascii_lowercase()).to_string();
        }
    }
    "us-east-1".to_string()
}

/// The cluster's `gitops` line from gpuplan's Argo CD Application (`gpuplan-<cluster>`: repo, revision, path
/// `<path>/<cluster>`) or its Flux GitRepository + Kustomization (url and ref; path `./<path>/<cluster>`,
/// `dependsOn` → `depends-on`).
fn gitops(cluster: &str, docs: &[Doc]) -> Option<(String, String)> {
    let name = format!("gpuplan-{cluster}");
    let find = |kind: &str| docs.iter().find(|d| d.kind == kind && d.name == name);
    let (argo, flux, source) = (find("Application"), find("Kustomization"), find("GitRepository"));
    let strip = |path: &str| path.trim_start_matches("./").strip_suffix(&format!("/{cluster}")).map(str::to_string);
    let (repo, revision, path) = match (argo, flux, source) {
        (Some(app), _, _) => {
            let s = &app.object["spec"]["source"];
            (s["repoURL"].as_str()?.to_string(), s["targetRevision"].as_str()?.to_string(), strip(s["path"].as_str()?)?)
        }
        (None, Some(k), Some(repo)) => {
            let reference = repo.object["spec"]["ref"].as_object()?;
            let revision = ["branch", "tag", "commit"].iter().find_map(|f| reference.get(*f).and_then(|v| v.as_str()))?;
            (repo.object["spec"]["url"].as_str()?.to_string(), revision.to_string(), strip(k.object["spec"]["path"].as_str()?)?)
        }
        _ => return None,
    };
    let mut line = format!(
        "gitops repo={} revision={} path={} argocd={} flux={}",
        model::q(&repo),
        model::q(&revision),
        model::q(&path),
        if argo.is_some() { "#true" } else { "#false" },
        if argo.is_none() && flux.is_some() { "#true" } else { "#false" }
    );
    let depends: Vec<String> = flux
        .and_then(|k| k.object["spec"]["dependsOn"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|d| d["name"].as_str().map(model::q))
        .collect();
    if argo.is_none() && !depends.is_empty() {
        line.push_str(&format!(" {{ depends-on {}; }}", depends.join(" ")));
    }
    let origin = [argo, flux, source].into_iter().flatten().map(Doc::at).collect::<Vec<_>>().join(" + ");
    Some((line, origin))
}

/// What `--reservation` says a reservation holds: its instance type when given, and how many instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservationArg {
    pub instance_type: Option<String>,
    pub instances: u32,
    /// As written (`--reservation …`), for provenance comments.
    pub given: String,
}

/// `--reservation NODEPOOL=INSTANCES` or `NODEPOOL|ID=TYPExCOUNT` (`×` or `x`, as EC2 writes `p5.48xlarge × 2`).
pub fn parse_reservation(arg: &str) -> Result<(String, ReservationArg), String> {
    let form = "NODEPOOL=INSTANCES or ID=TYPExCOUNT (e.g. odcr-priority=2, cr-0123456789abcdef0=p5.48xlarge×2)";
    let (target, held) = arg.split_once('=').ok_or_else(|| format!("`{arg}` is not {form}"))?;
    let held = held.trim();
    // The count follows the last `x` or `×`: instance sizes contain an `x` of their own (`48xlarge`).
    let (instance_type, count) = match held.rsplit_once(['x', '×']).filter(|(t, c)| t.contains('.') && c.trim().parse::<u32>().is_ok()) {
        Some((t, c)) => (Some(t.trim().to_string()), c.trim()),
        None => (None, held),
    };
    let instances = count.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| format!("`{count}` in `{arg}` is not a number of instances (1 or more): write {form}"))?;
    Ok((target.trim().to_string(), ReservationArg { instance_type, instances, given: format!("--reservation {arg}") }))
}

pub fn adopt(options: &AdoptOptions) -> Result<Adoption, AdoptError> {
    adopt_read(read::read(&options.paths, &options.set)?, options, &|region| Catalog::load(&options.catalogs_dir, region))
}

/// [`adopt`] of inputs already read ([`read::read_texts`]), each region's catalog from `load`: the fuzz targets
/// (fuzz/) give it text in memory and the built-in catalog parsed once.
pub fn adopt_read(mut read: read::Read, options: &AdoptOptions, load: &dyn Fn(&str) -> Result<Catalog, crate::catalog::CatalogError>) -> Result<Adoption, AdoptError> {
    let class_texts = with_classes(&mut read, options)?;
    check_inputs(&read, options)?;
    let mut catalogs = BTreeMap::new();
    let mut warnings = Vec::new();
    let mut groups: BTreeMap<String, Vec<&Doc>> = BTreeMap::new();
    for np in &read.node_pools {
        groups.entry(profile_of(np)).or_default().push(np);
    }
    let mut class_facts = BTreeMap::new();
    for class in &read.node_classes {
        class_facts.insert(class.name.clone(), class::map_class(class, &mut warnings));
    }
    let mut skipped = read.skipped.clone();
    for class in &read.node_classes {
        if !read.node_pools.iter().any(|np| class_of(np, &read.node_classes).is_some_and(|c| c.name == class.name)) {
            skipped.push(format!("{} (no NodePool refers to it)", class.at()));
        }
    }
    let workloads = adopt_workloads(&read, &groups, &mut warnings, &mut skipped);
    let queues = adopt_queues(&read, &groups, &mut warnings, &mut skipped);
    let mut monitoring = adopt_monitoring(&read, &groups, &mut warnings, &mut skipped);
    let mut profiles = Vec::new();
    let mut files = BTreeMap::new();
    let mut admits_nothing = Vec::new();
    let options = &AdoptOptions { cluster: shared_cluster(options, &read, &class_facts), ..options.clone() };
    for (name, pools) in groups {
        let region = region(options, &pools);
        if !catalogs.contains_key(&region) {
            catalogs.insert(region.clone(), load(&region)?);
        }
        admits_nothing.extend(pools.iter().filter_map(|np| empty::why(np, &catalogs[&region], &read.overlays)));
        let input = ProfileInput::new(&name, &pools, &read.node_classes, &class_facts, &catalogs[&region], options);
        let mut profile = adopt_profile(&input, &read.gitops, &mut warnings);
        if let Some((queue, origin)) = interruption_queue(&profile.cluster.name, &read.texts) {
            profile.cluster.interruption_queue = Some(queue);
            profile.cluster.from.insert("interruption-queue", origin);
        }
        profile.monitoring = monitoring.remove(&name);
        let own: Vec<&workloads::AdoptedWorkload> = workloads.iter().filter(|w| w.profile == name).collect();
        training_presets(&mut profile, &own, &mut warnings);
        spread_settings(&mut profile, &own);
        profile.workloads = own.into_iter().map(|w| w.line.clone()).collect();
        profile.queues = queues.iter().filter(|q| q.profile == name).map(|q| q.line.clone()).collect();
        let mut sources: Vec<String> = pools.iter().map(|p| p.file.clone()).collect();
        sources.sort();
        sources.dedup();
        profiles.push((profile, sources));
    }
    if !admits_nothing.is_empty() {
        return Err(AdoptError::AdmitsNothing(admits_nothing));
    }
    resolve_weights(&mut profiles, &read.node_pools)?;
    // NodeOverlays are cluster-wide; conflicts are checked on the first region's catalog (one cluster, one region).
    let conflicting = catalogs.values().next().map(|c| overlays::in_conflict(&read.overlays, &read.node_pools, &read.node_classes, c)).unwrap_or_default();
    skipped.extend(overlays::attach(&read.overlays, &read.node_pools, &conflicting, &mut profiles));
    let profiles: Vec<AdoptedProfile> = profiles
        .into_iter()
        .map(|(profile, sources)| {
            files.insert(format!("{}.kdl", profile.name), write::profile_text(&profile, &sources));
            profile
        })
        .collect();
    let missing: Vec<String> = profiles.iter().flat_map(|p| &p.pools).flat_map(|p| p.missing.iter().cloned()).collect();
    if !missing.is_empty() {
        return Err(AdoptError::Missing(missing));
    }
    Ok(Adoption { files, profiles, warnings, skipped, node_pools: read.node_pools, node_classes: read.node_classes, catalogs, texts: read.texts, class_texts })
}

/// The node classes of `--classes`, added to the inputs' (a class of the same name among the inputs wins); the
/// texts they came from.
fn with_classes(read: &mut read::Read, options: &AdoptOptions) -> Result<Vec<(PathBuf, String)>, AdoptError> {
    if options.classes.is_empty() {
        return Ok(Vec::new());
    }
    let given = read::read(&options.classes, &options.set)?;
    for class in given.node_classes {
        if !read.node_classes.iter().any(|c| c.name == class.name && c.kind == class.kind) {
            read.node_classes.push(class);
        }
    }
    Ok(given.texts)
}

/// Refuses inputs with no NodePool, and a `--reservation` for a NodePool that is not among them.
fn check_inputs(read: &read::Read, options: &AdoptOptions) -> Result<(), AdoptError> {
    if read.node_pools.is_empty() {
        return Err(AdoptError::Nothing(options.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    // NodePool names are cluster-wide: two of one name in one cluster are one object to the API server (the later
    // apply wins). gpuplan's own output says each NodePool's cluster (its class's `gpuplan.dev/cluster` tag).
    let cluster_of = |np: &Doc| class_of(np, &read.node_classes).and_then(|c| c.object["spec"]["tags"]["gpuplan.dev/cluster"].as_str().map(str::to_string));
    let mut seen: BTreeMap<(Option<String>, &str), &Doc> = BTreeMap::new();
    for np in &read.node_pools {
        if let Some(first) = seen.insert((cluster_of(np), np.name.as_str()), np) {
            return Err(AdoptError::DuplicateNodePool(np.name.clone(), first.file.clone(), np.file.clone()));
        }
    }
    let ids: Vec<&str> = read.node_classes.iter().flat_map(|c| reservation_ids(&c.object)).collect();
    if let Some(unknown) = options.reservations.keys().find(|name| !read.node_pools.iter().any(|np| &np.name == *name) && !ids.contains(&name.as_str())) {
        let known = read.node_pools.iter().map(|np| np.name.as_str()).chain(ids.iter().copied()).collect::<Vec<_>>().join(", ");
        return Err(AdoptError::UnknownReservation(unknown.clone(), known));
    }
    Ok(())
}

/// The capacity reservation ids a node class selects (`capacityReservationSelectorTerms[].id`).
fn reservation_ids(class: &serde_json::Value) -> Vec<&str> {
    class["spec"]["capacityReservationSelectorTerms"].as_array().into_iter().flatten().filter_map(|t| t["id"].as_str()).collect()
}

/// gpuplan's workloads ([`workloads`]) of the adopted profiles; one whose profile has no NodePool among the inputs is
/// skipped.
fn adopt_workloads(read: &read::Read, groups: &BTreeMap<String, Vec<&Doc>>, warnings: &mut Vec<Warning>, skipped: &mut Vec<String>) -> Vec<workloads::AdoptedWorkload> {
    let (mut workloads, unadopted) = workloads::adopt(&read.ops, &read.node_pools, warnings);
    skipped.extend(unadopted);
    workloads.retain(|w| {
        let known = groups.contains_key(&w.profile);
        if !known {
            skipped.push(format!("{} {} (workload {}/{}: its profile `{}` has no NodePool among the inputs, and a workload runs on a pool of its own profile)", w.file, w.object, w.namespace, w.name, w.profile));
        }
        known
    });
    workloads
}

/// gpuplan's Kueue queues ([`queues`]) of the adopted profiles; one whose profile has no NodePool among the inputs is
/// skipped.
fn adopt_queues(read: &read::Read, groups: &BTreeMap<String, Vec<&Doc>>, warnings: &mut Vec<Warning>, skipped: &mut Vec<String>) -> Vec<queues::AdoptedQueue> {
    let (mut queues, unadopted) = queues::adopt(&read.queues, warnings);
    skipped.extend(unadopted);
    queues.retain(|q| {
        let known = groups.contains_key(&q.profile);
        if !known {
            skipped.push(format!("{} (queue {}: its profile `{}` has no NodePool among the inputs, and a queue admits to a pool of its own profile)", q.at, q.name, q.profile));
        }
        known
    });
    queues
}

/// Each cluster's `monitoring` block ([`monitoring`]), by the profile it goes into.
fn adopt_monitoring(read: &read::Read, groups: &BTreeMap<String, Vec<&Doc>>, warnings: &mut Vec<Warning>, skipped: &mut Vec<String>) -> BTreeMap<String, model::Line> {
    // One block per cluster, in the profile that held it if that is recorded and adopted, else in the first of
    // its profiles that is adopted.
    let mut monitoring: BTreeMap<String, model::Line> = BTreeMap::new();
    let (clusters, unadopted) = monitoring::adopt(&read.ops, warnings);
    skipped.extend(unadopted);
    for m in clusters {
        let Some(host) = m.owner.iter().chain(&m.profiles).find(|p| groups.contains_key(*p)) else {
            let profiles = m.profiles.join(", ");
            let (s, them) = if m.profiles.len() == 1 { ("", "it") } else { ("s", "them") };
            let reason = format!("monitoring of profile{s} {profiles}: no NodePool of {them} among the inputs, and a cluster's `monitoring` block goes into one of its profiles");
            skipped.extend(m.objects.iter().map(|o| format!("{o} ({reason})")));
            continue;
        };
        let Some(block) = m.block else { continue };
        // Where the block lands differs from where it was: the recorded owner is not adopted, or nothing is recorded.
        let misplaced = match &m.owner {
            Some(owner) if owner != host => Some(format!(
                "the cluster's `monitoring` block belongs to profile `{owner}`, which has no NodePool among the inputs; it goes into `{host}` for now: move it to `{owner}` when you adopt that profile (edit it)"
            )),
            Some(_) => None,
            None => Some(format!(
                "gpuplan's output records here which profile holds the cluster's `monitoring` block, and it does not (output of an older gpuplan?); the block goes into `{host}`, the first of the cluster's adopted profiles: if another profile held it, move it there (edit it)"
            )),
        };
        if let Some(message) = misplaced {
            let (file, object) = m.objects.first().and_then(|o| o.split_once(' ')).unwrap_or_default();
            let field = format!("metadata.annotations.{}", crate::ops::render::MONITORING_PROFILE_ANNOTATION);
            warnings.push(Warning { file: file.to_string(), object: object.to_string(), field, message });
        }
        monitoring.insert(host.clone(), block);
    }
    monitoring
}

/// The cluster every profile names: `--cluster`, else for hand-written classes (none records gpuplan's cluster tag)
/// one shared name; `None` when the classes record gpuplan's cluster tags (each profile takes its class's).
fn shared_cluster(options: &AdoptOptions, read: &read::Read, class_facts: &BTreeMap<String, class::ClassFacts>) -> Option<String> {
    // Hand-written classes of one cluster (none records gpuplan's cluster tag) name one cluster: the first discovery
    // tag among the referenced classes, else `adopted`. Otherwise each profile would take its own class's tag, and
    // a class selecting subnets by id would put its pools in another cluster.
    options.cluster.clone().or_else(|| {
        let referenced: Vec<&class::ClassFacts> = read.node_classes.iter().filter(|c| read.node_pools.iter().any(|np| class_of(np, &read.node_classes).is_some_and(|r| r.name == c.name))).filter_map(|c| class_facts.get(&c.name)).collect();
        let tagged = referenced.iter().any(|f| f.cluster_tag.is_some());
        (!tagged).then(|| referenced.iter().find_map(|f| f.discovery_tag.clone()).unwrap_or_else(|| "adopted".into()))
    })
}

/// Every adopted pool's weight, per cluster ([`weights`]): a `weight` line kept, written or replaced.
fn resolve_weights(profiles: &mut [(AdoptedProfile, Vec<String>)], originals: &[Doc]) -> Result<(), AdoptError> {
    let clusters: std::collections::BTreeSet<String> = profiles.iter().map(|(p, _)| p.cluster.name.clone()).collect();
    for cluster in clusters {
        let entries: Vec<weights::Entry> = profiles
            .iter()
            .filter(|(p, _)| p.cluster.name == cluster)
            .flat_map(|(p, _)| &p.pools)
            .filter_map(|pool| originals.iter().find(|np| np.name == pool.name))
            // A static NodePool has no weight and takes no part in the order (static_pool.rs).
            .filter(|np| np.object["spec"]["replicas"].is_null())
            .map(|np| weights::Entry { name: np.name.clone(), weight: np.object["spec"]["weight"].as_u64() })
            .collect();
        let resolved = weights::resolve(&entries).map_err(|t| AdoptError::TooManyNodePools { cluster: cluster.clone(), count: t.count })?;
        for pool in profiles.iter_mut().filter(|(p, _)| p.cluster.name == cluster).flat_map(|(p, _)| p.pools.iter_mut()) {
            let Some(r) = resolved.get(&pool.name) else { continue };
            let line = model::Line::new(format!("weight {}", r.weight), format!("{} {}", pool.from.trim_end(), r.why));
            match pool.lines.iter().position(|l| l.kdl.starts_with("weight ")) {
                Some(i) => pool.lines[i] = line,
                None => {
                    let at = pool.lines.iter().position(|l| l.kdl == "disruption").unwrap_or(pool.lines.len());
                    pool.lines.insert(at, line);
                }
            }
        }
    }
    Ok(())
}

/// One profile to adopt: its NodePools and what of the inputs they need.
struct ProfileInput<'a> {
    name: &'a str,
    pools: &'a [&'a Doc],
    /// The NodePools, those whose class has the profile's name first: the cluster block comes from the node class of
    /// the profile's name if there is one (gpuplan's default class; reserved pools have their own), else from the
    /// first pool's.
    ordered: Vec<&'a Doc>,
    classes: &'a [Doc],
    facts: &'a BTreeMap<String, class::ClassFacts>,
    catalog: &'a Catalog,
    options: &'a AdoptOptions,
}

impl<'a> ProfileInput<'a> {
    fn new(
        name: &'a str,
        pools: &'a [&'a Doc],
        classes: &'a [Doc],
        facts: &'a BTreeMap<String, class::ClassFacts>,
        catalog: &'a Catalog,
        options: &'a AdoptOptions,
    ) -> ProfileInput<'a> {
        let mut ordered: Vec<&Doc> = pools.to_vec();
        ordered.sort_by_key(|np| class_of(np, classes).is_none_or(|c| c.name != name));
        ProfileInput { name, pools, ordered, classes, facts, catalog, options }
    }

    /// The class the cluster block comes from.
    fn primary(&self) -> Option<&Doc> {
        self.ordered.iter().find_map(|np| class_of(np, self.classes))
    }
}

/// The adopted pools of a profile, the zones their requirements name, and those requirements.
struct MappedPools {
    pools: Vec<AdoptedPool>,
    zones: Vec<String>,
    zone_fields: Vec<String>,
}

fn adopt_profile(input: &ProfileInput, gitops_docs: &[Doc], warnings: &mut Vec<Warning>) -> AdoptedProfile {
    let ProfileInput { name, pools, catalog, options, .. } = *input;
    let mapped = map_pools(input, warnings);
    let mut comments = Vec::new();
    let mut cluster = cluster_block(input, warnings, &mut comments);
    let mut zones = mapped.zones;
    // Zone requirements are the cluster's `zones` (`Exists` and `NotIn`-free ones: every zone of the catalog).
    let named = if mapped.zone_fields.is_empty() { String::new() } else { format!(" ({})", mapped.zone_fields.join(", ")) };
    if zones.is_empty() {
        zones = catalog.zones.clone();
        cluster.from.insert("zones", format!("no topology.kubernetes.io/zone In requirement: every zone of the catalog{named}"));
    } else {
        cluster.from.insert("zones", format!("requirements topology.kubernetes.io/zone{named}"));
    }
    cluster.zones = zones;
    if let Some((line, origin)) = gitops(&cluster.name, gitops_docs) {
        cluster.gitops = Some(line);
        cluster.from.insert("gitops", origin);
    }
    cluster.from.insert("region", if options.region.is_some() { "--region".into() } else { "the NodePools' catalog annotation or zones".into() });
    let budget = pools.iter().find_map(|np| {
        np.object["metadata"]["annotations"]["gpuplan.dev/budget-usd-per-hour"]
            .as_str()
            .map(|b| (b.to_string(), format!("{} NodePool/{} metadata.annotations.gpuplan.dev/budget-usd-per-hour", np.file, np.name)))
    });
    // Priority orders the profiles of a cluster when gpuplan assigns weights to pools without one: a NodePool
    // without a weight ranks below every weighted one in Karpenter, so such profiles come last.
    let priority = pools.iter().filter_map(|np| np.object["spec"]["weight"].as_u64()).max().unwrap_or(1) as u32;
    AdoptedProfile { name: name.to_string(), priority, cluster, budget, pools: mapped.pools, monitoring: None, workloads: Vec::new(), queues: Vec::new(), comments }
}

/// Maps each NodePool of the profile with what its class says ([`map::map_pool`]).
fn map_pools(input: &ProfileInput, warnings: &mut Vec<Warning>) -> MappedPools {
    let mut mapped = MappedPools { pools: Vec::new(), zones: Vec::new(), zone_fields: Vec::new() };
    for np in input.pools {
        let class = class_of(np, input.classes);
        let ctx = pool_context(input, np, class);
        let (pool, pool_zones, fields) = map::map_pool(&ctx, warnings);
        let ami = class.and_then(|c| input.facts.get(&c.name)).and_then(class::ClassFacts::ami_alias);
        let accelerated = nodepool::kind(&np.object, input.catalog) != crate::catalog::AcceleratorKind::Cpu;
        if accelerated && !np.is_gpuplans() && ami.as_deref().is_some_and(crate::solve::host_device_plugin) {
            warnings.push(map::host_plugin_labels_warning(np));
        }
        mapped.zone_fields.extend(fields);
        for z in pool_zones {
            if !mapped.zones.contains(&z) {
                mapped.zones.push(z);
            }
        }
        mapped.pools.push(pool);
        let reference = &np.object["spec"]["template"]["spec"]["nodeClassRef"];
        if reference["name"].is_string() && (reference["group"].is_null() || reference["kind"].is_null()) {
            // The v1 NodePool CRD requires all three (karpenter.sh_nodepools.yaml nodeClassRef: group, kind, name).
            warnings.push(Warning {
                file: np.file.clone(),
                object: format!("NodePool/{}", np.name),
                field: "spec.template.spec.nodeClassRef".into(),
                message: "names its class without group and kind, which the karpenter.sh/v1 NodePool CRD requires: gpuplan writes them (karpenter.k8s.aws EC2NodeClass, or eks.amazonaws.com NodeClass in Auto Mode)".into(),
            });
        }
        if np.object["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().is_some() && class.is_none() {
            let ref_name = np.object["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap_or_default();
            warnings.push(Warning {
                file: np.file.clone(),
                object: format!("NodePool/{}", np.name),
                field: "spec.template.spec.nodeClassRef.name".into(),
                message: format!("{} `{ref_name}` is not among the inputs: the cluster block uses placeholders (edit them)", if auto_mode(np) { "NodeClass" } else { "EC2NodeClass" }),
            });
        }
    }
    mapped
}

/// The interruption queue of a cluster, as the header of gpuplan's `<cluster>/kustomization.yaml` lists it (Karpenter's
/// queue is a setting of its install, which no object records), with where it was read.
fn interruption_queue(cluster: &str, texts: &[(PathBuf, String)]) -> Option<(String, String)> {
    let prefix = format!("# {}", crate::solve::prerequisites::INTERRUPTION_QUEUE_LINE);
    texts
        .iter()
        .filter(|(path, _)| path.file_name().is_some_and(|f| f == crate::layout::KUSTOMIZATION_FILE) && path.parent().and_then(|d| d.file_name()).is_some_and(|d| d == cluster))
        .find_map(|(path, text)| {
            let queue = text.lines().find_map(|l| l.strip_prefix(&prefix)?.split(' ').next())?;
            Some((queue.to_string(), format!("{}: its prerequisites' interruption queue", path.display())))
        })
}

/// What [`map::map_pool`] needs of a NodePool's class: its reservation, storage, time-slicing, kubelet and, for a
/// class other than the profile's primary one, its raw fields.
fn pool_context<'a>(input: &ProfileInput<'a>, np: &'a Doc, class: Option<&'a Doc>) -> map::PoolContext<'a> {
    let facts = input.facts;
    let reservation = class.and_then(|c| facts.get(&c.name).map(|f| (c, f.reservation.clone()))).filter(|(_, r)| !r.is_empty());
    let instance_store_raid0 = class.and_then(|c| facts.get(&c.name)).is_some_and(|f| f.instance_store_raid0);
    let placement_group = class.and_then(|c| facts.get(&c.name)).and_then(|f| f.placement_group.clone());
    let class_time_slicing = class.and_then(|c| facts.get(&c.name)).and_then(|f| f.time_slicing);
    let class_kubelet = class.and_then(|c| facts.get(&c.name).and_then(|f| f.kubelet.clone()).map(|k| (k, format!("{} {}/{}", c.file, c.kind, c.name))));
    // The primary class's raw fields go to the cluster block (every class of the profile), another class's to its pools.
    let primary_class = input.primary().map(|c| c.name.clone());
    let primary_fragment = primary_class.as_ref().and_then(|p| facts.get(p)).and_then(|f| f.raw_fragment.as_ref());
    let class_raw = class.filter(|c| Some(&c.name) != primary_class.as_ref()).and_then(|c| {
        let f = facts.get(&c.name)?;
        let mut rest = f.raw_fragment.as_ref().and_then(|v| raw::without(v, primary_fragment)).unwrap_or(serde_json::Value::Null);
        if let Some(d) = primary_fragment.and_then(|p| raw::deletions(p, &c.object)) {
            rest = merge_keep_nulls(rest, d);
        }
        let from = f.raw.as_ref().map_or_else(|| format!("{} {}/{}: the profile's cluster raw sets fields this class does not have", c.file, c.kind, c.name), |r| r.from.clone());
        (!rest.is_null()).then(|| raw::raw_line(&c.kind, &rest, from))
    });
    let class_at = class.map(|c| format!("{} {}/{}", c.file, c.kind, c.name));
    // By NodePool, else by an id the class selects.
    let reservation_arg = input.options.reservations.get(&np.name).or_else(|| class.and_then(|c| reservation_ids(&c.object).into_iter().find_map(|id| input.options.reservations.get(id)))).cloned();
    // The original class's name where gpuplan would derive another (local NVMe `-nvme`, time-slicing `-ts<N>`, or a
    // profile grouped by annotation): `node-class` keeps it. A reserved pool's class stays gpuplan's (its fallback tier
    // launches with the profile's class).
    // A reserved-only pool's class is named after its NodePool (gpuplan gives a reservation a class of its own).
    let capacity = requirements::capacity_types(&requirements::requirements(&np.object));
    let reserved_only = !capacity.is_empty() && capacity.iter().all(|c| *c == crate::catalog::CapacityType::Reserved);
    let derived = match &reservation {
        Some(_) if reserved_only => Some(np.name.clone()),
        Some(_) => None,
        None => Some(crate::solve::default_class_name(input.name, instance_store_raid0, class_time_slicing)),
    };
    let class_name = class.filter(|c| !(auto_mode(np) && c.name == "default")).map(|c| c.name.clone()).filter(|n| derived.as_ref().is_some_and(|d| d != n));
    map::PoolContext { doc: np, catalog: input.catalog, reservation, reservation_arg, instance_store_raid0, class_at, placement_group, class_time_slicing, class_kubelet, class_raw, optimize: input.options.optimize, class_name }
}

/// The profile's cluster block, from its primary class (names, role, AMI, storage, user data, raw fields), with
/// the class's comments; another class's user data is kept as a comment.
fn cluster_block(input: &ProfileInput, warnings: &mut Vec<Warning>, comments: &mut Vec<String>) -> ClusterBlock {
    let ProfileInput { pools, classes, facts, options, .. } = input;
    let mut cluster = ClusterBlock { region: input.catalog.region.clone(), ..Default::default() };
    let primary = input.primary();
    let f = primary.and_then(|c| facts.get(&c.name));
    let at = primary.map(|c| format!("{} {}/{}", c.file, c.kind, c.name)).unwrap_or_default();
    cluster.name = options.cluster.clone().or_else(|| f.and_then(|f| f.cluster_tag.clone())).or_else(|| f.and_then(|f| f.discovery_tag.clone())).unwrap_or_else(|| "adopted".into());
    cluster.discovery_tag = f.and_then(|f| f.discovery_tag.clone()).unwrap_or_else(|| cluster.name.clone());
    cluster.node_role = f.and_then(|f| f.role.clone()).unwrap_or_else(|| format!("KarpenterNodeRole-{}", cluster.name));
    cluster.instance_profile = f.and_then(|f| f.instance_profile.clone());
    cluster.ami = f.and_then(class::ClassFacts::ami_alias).unwrap_or_else(|| "al2023@latest".into());
    cluster.auto_mode = pools.iter().any(|np| auto_mode(np));
    cluster.ephemeral_storage = f.and_then(|f| f.ephemeral_storage.clone());
    if cluster.auto_mode {
        let np = pools.iter().find(|np| auto_mode(np)).expect("one is");
        cluster.from.insert("auto-mode", format!("{} NodePool/{} spec.template.spec.nodeClassRef.group {}", np.file, np.name, crate::catalog::auto_mode::GROUP));
    }
    if f.and_then(|f| f.ami.as_ref()).is_none() && !cluster.auto_mode {
        warnings.push(no_ami_alias(input, primary, f, &cluster.ami));
    }
    if let Some(f) = f {
        comments.extend(f.comments.iter().cloned());
        class_provenance(&mut cluster, f, &at);
        cluster.raw = f.raw.clone();
        if let Some(user_data) = &f.user_data {
            cluster.user_data = Some(user_data.clone());
            cluster.from.insert("user-data", format!("{at} spec.userData, verbatim"));
        }
        if f.ephemeral_storage.is_some() {
            let said = primary.is_some_and(|c| !c.object["spec"]["ephemeralStorage"]["size"].is_null());
            let from = if said { format!("{at} spec.ephemeralStorage.size") } else { format!("absent from {at} (no spec.ephemeralStorage.size): EKS Auto Mode's default") };
            cluster.from.insert("ephemeral-storage", from);
        }
        if f.cluster_tag.is_some() && options.cluster.is_none() {
            cluster.from.insert("name", format!("{at} spec.tags.gpuplan.dev/cluster"));
        }
    }
    for (class_name, f) in facts.iter().filter(|(n, _)| pools.iter().any(|np| class_of(np, classes).is_some_and(|c| &c.name == *n)) && primary.is_none_or(|p| &p.name != *n)) {
        comments.extend(f.comments.iter().cloned());
        if let Some(user_data) = &f.user_data {
            // A profile has one cluster block, hence one `user-data`: a second class's is kept, not merged.
            let file = classes.iter().find(|c| &c.name == class_name).map(|c| c.file.clone()).unwrap_or_default();
            let message = format!("not expressible in a profile (the profile's cluster carries its primary class's userData only; value {:?}); kept as a comment", user_data);
            warnings.push(Warning { file: file.clone(), object: format!("EC2NodeClass/{class_name}"), field: "spec.userData".into(), message });
            comments.push(format!("not adopted: spec.userData = {:?} ({file} EC2NodeClass/{class_name})", user_data));
        }
    }
    cluster
}

/// The warning for a profile without an AMI alias (it says `al2023@latest`).
fn no_ami_alias(input: &ProfileInput, primary: Option<&Doc>, f: Option<&class::ClassFacts>, ami: &str) -> Warning {
    let name = input.name;
    // Named by the EC2NodeClass that has no alias, else (no EC2NodeClass among the inputs) by the first NodePool.
    let (file, object) = match primary {
        Some(c) => (c.file.clone(), format!("EC2NodeClass/{}", c.name)),
        None => (input.ordered[0].file.clone(), format!("NodePool/{}", input.ordered[0].name)),
    };
    let carried = f.and_then(|f| f.raw_fragment.as_ref()).is_some_and(|raw| !raw["spec"]["amiSelectorTerms"].is_null());
    let message = if carried {
        format!("no AMI alias: the class's amiSelectorTerms are carried in its `raw` block and replace the alias in the output; profile `{name}` says `{ami}` for what gpuplan derives from the AMI family (root volume, Bottlerocket settings): check it is the AMIs' family")
    } else {
        format!("no AMI alias: profile `{name}` says `{ami}`; pin a version")
    };
    Warning { file, object, field: "spec.amiSelectorTerms".into(), message }
}

/// `a` with `b`'s fields added, `null`s kept (a merge patch would drop them: here they are the patch).
fn merge_keep_nulls(a: serde_json::Value, b: serde_json::Value) -> serde_json::Value {
    match (a, b) {
        (serde_json::Value::Object(mut a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                let merged = match a.remove(&k) {
                    Some(x) => merge_keep_nulls(x, v),
                    None => v,
                };
                a.insert(k, merged);
            }
            serde_json::Value::Object(a)
        }
        (serde_json::Value::Null, b) => b,
        (a, _) => a,
    }
}

/// `spread` where a pool's adopted preset would advise otherwise than its workloads' placement annotations say (the
/// inference presets spread; adopt picks a preset for its taint, not for this).
fn spread_settings(profile: &mut AdoptedProfile, workloads: &[&workloads::AdoptedWorkload]) {
    for w in workloads {
        let Some(spread) = w.spread else { continue };
        let tiered = profile.pools.iter().any(|p| p.tier_of.as_deref() == Some(w.pool.as_str()));
        for pool in profile.pools.iter_mut().filter(|p| p.name == w.pool || p.tier_of.as_deref() == Some(w.pool.as_str())) {
            let preset_spreads = tiered || crate::profile::Preset::parse(pool.preset).is_some_and(crate::profile::Preset::spreads);
            let kdl = format!("spread #{spread}");
            if preset_spreads != spread && !pool.lines.iter().any(|l| l.kdl == kdl) {
                pool.lines.push(model::Line::new(kdl, format!("workload {}/{}: its placement annotation", w.namespace, w.name)));
            }
        }
    }
}

/// A workload's HPA scales like a training pool's only when its pool's preset is `training-on-demand` or
/// `batch-spot` (ops::plan), so such a pool is adopted with the training preset. Its other defaults are then
/// the training ones: scratch on instance storage is written out as `ebs` unless the class stripes NVMe (the
/// rest, disruption and capacity, adopt writes out anyway).
fn training_presets(profile: &mut AdoptedProfile, workloads: &[&workloads::AdoptedWorkload], warnings: &mut Vec<Warning>) {
    for w in workloads.iter().filter(|w| w.training) {
        let Some(pool) = profile.pools.iter_mut().find(|p| p.name == w.pool && p.tier_of.is_none()) else {
            warnings.push(Warning {
                file: w.file.clone(),
                object: w.object.clone(),
                field: format!("workload {}/{}: HorizontalPodAutoscaler spec.behavior", w.namespace, w.name),
                message: format!("scales like a training pool's, but `{}` is adopted as a tiered pool (whose HPAs scale like inference): compiling changes the behavior", w.pool),
            });
            continue;
        };
        pool.preset = "training-on-demand";
        if !pool.lines.iter().any(|l| l.kdl.starts_with("scratch ")) {
            let from = format!("{}: no instanceStorePolicy (the training preset's default is instance-store)", pool.from.trim_end());
            pool.lines.push(model::Line::new("scratch \"ebs\"", from));
        }
    }
}

/// The provenance comments of the cluster lines the primary class says: the field each came from, and only a field the
/// class has; a line the class does not say is gpuplan's default, and its comment says so (a comment naming
/// `spec.role` for a class with none would send the reader to a field that is not there).
fn class_provenance(cluster: &mut model::ClusterBlock, f: &class::ClassFacts, at: &str) {
    let absent = |what: &str, default: &str| format!("absent from {at} (no {what}): gpuplan's default, {default}");
    let discovery = match &f.discovery_tag {
        Some(_) => format!("{at} spec.subnetSelectorTerms[0].tags.karpenter.sh/discovery"),
        None => absent("karpenter.sh/discovery selector tag", "the cluster name"),
    };
    cluster.from.insert("discovery-tag", discovery);
    if f.instance_profile.is_some() {
        cluster.from.insert("instance-profile", format!("{at} spec.instanceProfile"));
    }
    let role = match &f.role {
        Some(_) => format!("{at} spec.role"),
        None => absent("spec.role", "KarpenterNodeRole-<cluster>"),
    };
    cluster.from.insert("node-role", role);
    let ami = match (&f.ami, f.ami_alias()) {
        (Some(_), _) => format!("{at} spec.amiSelectorTerms[0].alias"),
        (None, Some(_)) => format!("{at} spec.amiFamily (its AMIs, selected by id, are carried in `raw`)"),
        (None, None) => absent("AMI alias", "al2023@latest"),
    };
    cluster.from.insert("ami", ami);
}
