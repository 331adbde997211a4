//! Starter profiles for `gpuplan init`: one commented profile per [`Preset`], with a cluster block whose zones
//! come from the region's catalog, a budget, one pool and one workload. Every setting has a comment above it that
//! says what it means and what to change, and the profile compiles as written (`tests/init.rs` compiles and lints
//! every preset in every region with a committed catalog).
//!
//! The text is built here, not in the command line, so that what `init` writes is a library value ([`Starter`]:
//! the files and their contents) that the CLI only writes to disk; a later change can add files (a repository
//! config) to [`Starter::files`] without touching how they are written.

use std::path::PathBuf;

use super::pool::Preset;
use crate::catalog::Catalog;

/// The AMI alias the starter pins: the one the example profiles use, so a starter compiles to the same node
/// class as they do. Pinned, not `@latest` (lint GP002): a new AMI release would replace every GPU node.
pub const STARTER_AMI: &str = "al2023@v20251023";

/// How many zones a starter's cluster lists: enough for spot diversity and zone spread, few enough to match a
/// typical three-subnet EKS cluster.
const STARTER_ZONES: usize = 3;

/// What `gpuplan init` is asked for.
#[derive(Debug, Clone)]
pub struct StarterOptions {
    pub preset: Preset,
    /// The profile's name and file stem; None: the preset's ([`default_name`]).
    pub name: Option<String>,
    pub cluster: String,
}

/// One file of a starter: its path relative to the directory `init` writes in, and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct StarterFile {
    pub path: PathBuf,
    pub text: String,
}

/// What `gpuplan init` writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Starter {
    pub files: Vec<StarterFile>,
}

/// Why no starter can be made from these options.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StarterError {
    #[error("{what} `{name}` is not a valid name: use at most {max} lowercase letters, digits and '-', starting and ending with a letter or digit")]
    InvalidName { what: &'static str, name: String, max: usize },
    #[error("the {region} catalog lists no availability zone")]
    NoZones { region: String },
}

/// The preset's profile (and file) name when `--name` is not given: what the pool does, not the preset's name.
pub fn default_name(preset: Preset) -> &'static str {
    match preset {
        Preset::General => "gpu",
        Preset::InferenceSpot | Preset::InferenceOnDemand => "inference",
        Preset::TrainingOnDemand => "training",
        Preset::BatchSpot => "batch",
        Preset::Tiered => "tiered",
    }
}

/// One line per preset for `init --help`: what the preset makes.
pub fn preset_summary(preset: Preset) -> &'static str {
    match preset {
        Preset::General => "one NodePool allowing spot and on-demand (Karpenter prefers spot)",
        Preset::InferenceSpot => "spot NodePool first, an on-demand one when spot runs out; a served model",
        Preset::InferenceOnDemand => "one on-demand NodePool; a served model",
        Preset::TrainingOnDemand => "on-demand 8-GPU nodes with EFA, disrupted only in a maintenance window",
        Preset::BatchSpot => "one spot NodePool for work that tolerates interruption",
        Preset::Tiered => "your own fallback chain of tiers (here L4 on spot, then on demand)",
    }
}

/// The longest profile name a starter accepts: its NodePools append `-on-demand` (10 characters) and the parser
/// allows 50 for a tier's name.
const MAX_NAME: usize = 40;

/// The rule the parser applies to profile, pool and tier names (E0113), for a name of at most `max` characters.
fn check_name(what: &'static str, name: &str, max: usize) -> Result<(), StarterError> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok { Ok(()) } else { Err(StarterError::InvalidName { what, name: name.to_string(), max }) }
}

/// The zones a starter's cluster lists: the [`STARTER_ZONES`] zones of the region that offer the most GPU instance
/// types (ties by name), in name order. A zone few GPU types reach (us-east-1e) would only narrow the pools.
pub fn starter_zones(catalog: &Catalog) -> Vec<String> {
    let mut counted: Vec<(usize, &String)> = catalog
        .zones
        .iter()
        .map(|zone| (catalog.instance_types.iter().filter(|t| !t.gpus.is_empty() && t.zones.contains(zone)).count(), zone))
        .collect();
    counted.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let mut zones: Vec<String> = counted.into_iter().take(STARTER_ZONES).map(|(_, zone)| zone.clone()).collect();
    zones.sort();
    zones
}

impl Starter {
    /// The starter for these options in the catalog's region.
    pub fn new(options: &StarterOptions, catalog: &Catalog) -> Result<Starter, StarterError> {
        let name = options.name.clone().unwrap_or_else(|| default_name(options.preset).to_string());
        check_name("the profile name", &name, MAX_NAME)?;
        check_name("the cluster name", &options.cluster, 63)?;
        let zones = starter_zones(catalog);
        if zones.is_empty() {
            return Err(StarterError::NoZones { region: catalog.region.clone() });
        }
        let text = profile_text(options.preset, &name, &options.cluster, &catalog.region, &zones);
        Ok(Starter { files: vec![StarterFile { path: PathBuf::from("profiles").join(format!("{name}.kdl")), text }] })
    }
}

/// The whole profile: header, cluster, budget, pool, workload.
fn profile_text(preset: Preset, name: &str, cluster: &str, region: &str, zones: &[String]) -> String {
    let shape = Shape::of(preset);
    let (preset_name, summary) = (preset.as_str(), preset_summary(preset));
    let mut text = lines(&[
        format!("// A starter profile from `gpuplan init --preset {preset_name}`:"),
        format!("// {summary}."),
        "// Each setting has a comment above it: what it means and what to change. `gpuplan schema` lists every".into(),
        format!("// setting; `gpuplan compile` writes the manifests to out/{cluster}/, `gpuplan explain` says why."),
        String::new(),
        "// The profile's name (it names the node class). Among the profiles of one cluster, a higher priority gets".into(),
        "// higher NodePool weights: Karpenter tries its pools first.".into(),
        format!("profile \"{name}\" priority=50"),
        String::new(),
    ]);
    text.push_str(&cluster_block(cluster, region, zones, shape.spot));
    text.push_str(&lines(&[
        String::new(),
        "// The most this profile's NodePools may cost together, in USD per hour: every node at the pool's limit, on".into(),
        "// its priciest allowed type, spot counted at the on-demand price. gpuplan sizes the NodePool limits from".into(),
        "// it; raise it for more GPUs, lower it to spend less. `gpuplan explain` shows the worst case against it.".into(),
        format!("budget usd-per-hour={}", shape.budget),
        String::new(),
    ]));
    text.push_str(&pool_block(preset, name));
    text.push('\n');
    text.push_str(&workload_block(preset, name));
    text
}

/// The lines, each ended by a newline: the starter's text written one profile line per source line.
fn lines<S: AsRef<str>>(lines: &[S]) -> String {
    lines.iter().map(|line| format!("{}\n", line.as_ref())).collect()
}

/// What differs between the presets' starters, besides the pool block.
struct Shape {
    budget: u32,
    /// Whether the pool can launch spot nodes (the cluster then names an interruption queue).
    spot: bool,
}

impl Shape {
    fn of(preset: Preset) -> Shape {
        match preset {
            Preset::General => Shape { budget: 30, spot: true },
            Preset::InferenceSpot | Preset::Tiered => Shape { budget: 40, spot: true },
            Preset::InferenceOnDemand => Shape { budget: 40, spot: false },
            Preset::TrainingOnDemand => Shape { budget: 200, spot: false },
            Preset::BatchSpot => Shape { budget: 30, spot: true },
        }
    }
}

fn cluster_block(cluster: &str, region: &str, zones: &[String], spot: bool) -> String {
    let zones = zones.iter().map(|z| format!("\"{z}\"")).collect::<Vec<_>>().join(" ");
    let mut block = vec![
        format!("// The EKS cluster the NodePools are for (its manifests go to out/{cluster}/): change the name to yours."),
        format!("cluster \"{cluster}\" {{"),
        "    // The AWS region: its catalog prices and filters the instance types (us-east-1 is built in; another".into(),
        "    // region needs catalogs/<region>.json, from `gpuplan catalog refresh --region <region>`).".into(),
        format!("    region \"{region}\""),
        "    // The zones Karpenter may launch nodes in: those of your cluster's subnets (these offer the most GPU types).".into(),
        format!("    zones {zones}"),
        "    // The value of the karpenter.sh/discovery tag on your cluster's subnets and security groups.".into(),
        format!("    discovery-tag \"{cluster}\""),
        "    // The IAM role your nodes run as (the role Karpenter's getting-started guide creates).".into(),
        format!("    node-role \"KarpenterNodeRole-{cluster}\""),
        "    // The node AMI, pinned: `al2023@latest` would replace every GPU node on each AMI release. Bump it on purpose.".into(),
        format!("    ami \"{STARTER_AMI}\""),
    ];
    if spot {
        block.push("    // Karpenter's SQS queue of spot interruption notices: a spot node is drained before EC2 takes it back.".into());
        block.push(format!("    interruption-queue \"Karpenter-{cluster}\""));
    }
    block.push("}".into());
    lines(&block)
}

/// The `gpu { … }` block of the presets without their own: any NVIDIA GPU with at least `memory` per GPU, up to 8
/// per node.
fn gpu_block(memory: &str) -> String {
    lines(&[
        format!("    // Which GPUs: any NVIDIA GPU with enough memory. `gpuplan catalog list --gpu-memory-min {memory}` lists them;"),
        "    // add `name \"L4\" \"A10G\"` to allow only those models.".into(),
        "    gpu {".into(),
        "        // The least memory per GPU your model needs.".into(),
        format!("        memory-min \"{memory}\""),
        "        // GPUs per node: up to 8, so larger nodes stay candidates for spot capacity and price.".into(),
        "        per-node max=8".into(),
        "    }".into(),
    ])
}

fn pool_block(preset: Preset, name: &str) -> String {
    let intro = match preset {
        Preset::InferenceSpot => format!("// One pool, two NodePools: {name}-spot is tried first, {name}-on-demand when spot capacity runs out."),
        Preset::InferenceOnDemand => format!("// One pool, one on-demand NodePool `{name}`: no spot interruptions for the served model."),
        Preset::General => format!("// One pool, one NodePool `{name}` allowing spot and on-demand: Karpenter prefers spot."),
        Preset::BatchSpot => format!("// One pool, one spot NodePool `{name}`: work that is retried when a node is taken back."),
        Preset::TrainingOnDemand => format!("// One pool, one on-demand NodePool `{name}`: nodes never expire and are disrupted only in the maintenance window."),
        Preset::Tiered => format!("// One pool, one NodePool per `tier`, tried in the order written: {name}-l4-spot, then {name}-l4-on-demand."),
    };
    let body = match preset {
        Preset::TrainingOnDemand => training_pool_body(),
        Preset::Tiered => tiered_pool_body(),
        _ => gpu_block("22GiB"),
    };
    let preset = preset.as_str();
    let head = lines(&[intro, format!("pool \"{name}\" preset=\"{preset}\" {{")]);
    let tail = lines(&[
        format!("    // A node label your pods can select (nodeSelector workload: {name}); gpuplan also labels and taints the"),
        "    // nodes with the pool's name (`gpuplan explain` prints the toleration and selector pods need).".into(),
        format!("    label \"workload\" \"{name}\""),
        "}".into(),
    ]);
    format!("{head}{body}{tail}")
}

fn training_pool_body() -> String {
    lines(&[
        "    // Which GPUs: H100, eight per node (p5.48xlarge): a distributed job runs on whole nodes of one GPU model.",
        "    gpu {",
        "        name \"H100\"",
        "        // Only 8-GPU nodes.",
        "        per-node min=8",
        "    }",
        "    // EFA networking for NCCL between nodes; the nodes then launch in one zone (EFA traffic stays in a subnet).",
        "    efa #true",
        "    // The EC2 cluster placement group the nodes launch into, so a job's nodes sit close together: create it",
        "    // first (`aws ec2 create-placement-group --strategy cluster`), or delete this line.",
        "    placement-group \"training\"",
        "    // When Karpenter may replace nodes for drift or consolidation: Sundays 02:00-06:00 UTC, one node at a time.",
        "    disruption {",
        "        maintenance-window day=\"sunday\" start=\"02:00\" duration=\"4h\" nodes=\"1\"",
        "    }",
    ])
}

fn tiered_pool_body() -> String {
    let tier = |name: &str, capacity: &str, comment: &str| {
        lines(&[
            format!("    // {comment}"),
            format!("    tier \"{name}\" capacity=\"{capacity}\" {{"),
            "        // Each tier is one GPU model on one capacity type: the chain as a whole is the diversity.".into(),
            "        gpu {".into(),
            "            name \"L4\"".into(),
            "            per-node max=8".into(),
            "        }".into(),
            "    }".into(),
        ])
    };
    let allow = lines(&[
        "    // A spot tier of one model is narrower than the 15 types spot-to-spot consolidation wants (lint GP006):",
        "    // expected in a tiered chain, so it is silenced for this pool.",
        "    allow \"GP006\"",
    ]);
    format!("{allow}{}{}", tier("l4-spot", "spot", "First: L4 GPUs on spot."), tier("l4-on-demand", "on-demand", "Then: L4 GPUs on demand, when spot has none."))
}

fn workload_block(preset: Preset, pool: &str) -> String {
    if preset == Preset::TrainingOnDemand {
        return lines(&[
            "// Your training job's workers: gpuplan writes their PodDisruptionBudget (no autoscaler: a job sizes itself).".into(),
            format!("workload \"trainer\" namespace=\"{pool}\" pool=\"{pool}\" kind=\"StatefulSet\" {{"),
            "    // The label of the workers' pods (the PDB's selector): set it to your pods' label.".into(),
            "    selector \"app.kubernetes.io/name\" \"trainer\"".into(),
            "    // Two workers of eight GPUs each.".into(),
            "    replicas 2".into(),
            "    gpus-per-replica 8".into(),
            "    // The maintenance window may take one worker at a time.".into(),
            "    disruption-budget max-unavailable=1".into(),
            "}".into(),
        ]);
    }
    let (workload, what, replicas, budget) = match preset {
        Preset::BatchSpot => ("batch-worker", "batch worker", "min=1 max=6", "max-unavailable=2"),
        _ => ("model-server", "model server", "min=2 max=6", "min-available=1"),
    };
    let mut block = vec![
        format!("// Your {what} (a Deployment in namespace {pool}): gpuplan writes its PodDisruptionBudget and autoscaler."),
        format!("workload \"{workload}\" namespace=\"{pool}\" pool=\"{pool}\" {{"),
        "    // The label of its pods (the PDB's and the autoscaler's selector): set it to your pods' label.".into(),
        format!("    selector \"app.kubernetes.io/name\" \"{workload}\""),
        "    // How many replicas the autoscaler keeps, each requesting one GPU.".into(),
        format!("    replicas {replicas}"),
        "    // How many replicas a node drain or consolidation may take at once.".into(),
        format!("    disruption-budget {budget}"),
    ];
    // A preset that does not spread its pods (`Preset::spreads`) could put every replica on one 8-GPU node.
    if !preset.spreads() {
        block.push("    // At most 2 replicas on one node, so losing a node (a spot interruption) takes few of them.".into());
        block.push("    max-per-node 2".into());
    }
    block.extend(["    // Add replicas when the average GPU utilization passes 70%.".into(), "    autoscale gpu-utilization=70".into(), "}".into()]);
    lines(&block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> Catalog {
        Catalog::from_json(crate::catalog::EMBEDDED_US_EAST_1, std::path::Path::new("us-east-1")).unwrap()
    }

    #[test]
    fn starter_zones_are_the_three_zones_with_the_most_gpu_types() {
        // us-east-1c offers 64 GPU types, 1a 61, 1b and 1d 54 (b first by name), 1f 25, 1e 2.
        assert_eq!(starter_zones(&builtin()), ["us-east-1a", "us-east-1b", "us-east-1c"]);
    }

    #[test]
    fn a_name_the_parser_refuses_is_refused_before_anything_is_written() {
        for bad in ["Inference", "-x", "x-", "a_b", "", &"x".repeat(41)] {
            let options = StarterOptions { preset: Preset::InferenceSpot, name: Some(bad.to_string()), cluster: "c".into() };
            assert!(matches!(Starter::new(&options, &builtin()), Err(StarterError::InvalidName { .. })), "{bad:?}");
        }
    }

    #[test]
    fn every_setting_is_under_a_comment() {
        for preset in Preset::NAMES.iter().map(|n| Preset::parse(n).unwrap()) {
            let options = StarterOptions { preset, name: None, cluster: "my-cluster".into() };
            let starter = Starter::new(&options, &builtin()).unwrap();
            let lines: Vec<&str> = starter.files[0].text.lines().map(str::trim).collect();
            for (i, line) in lines.iter().enumerate() {
                let setting = !line.is_empty() && !line.starts_with("//") && *line != "}";
                let commented = lines[..i].iter().rev().take_while(|l| !l.is_empty() && !l.starts_with('}')).any(|l| l.starts_with("//"));
                assert!(!setting || commented, "{preset:?}: line {} `{line}` has no comment above it", i + 1);
            }
        }
    }
}
