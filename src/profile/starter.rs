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
    let mut text = format!(
        "// A starter profile from `gpuplan init --preset {preset}`:\n\
         // {summary}.\n\
         // Each setting has a comment above it: what it means and what to change. `gpuplan schema` lists every\n\
         // setting; `gpuplan compile` writes the manifests to out/{cluster}/, `gpuplan explain` says why.\n\
         \n\
         // The profile's name (it names the node class). Among the profiles of one cluster, a higher priority gets\n\
         // higher NodePool weights: Karpenter tries its pools first.\n\
         profile \"{name}\" priority=50\n\n",
        preset = preset.as_str(),
        summary = preset_summary(preset),
    );
    text.push_str(&cluster_block(cluster, region, zones, shape.spot));
    text.push_str(&format!(
        "\n// The most this profile's NodePools may cost together, in USD per hour: every node at the pool's limit, on\n\
         // its priciest allowed type, spot counted at the on-demand price. gpuplan sizes the NodePool limits from\n\
         // it; raise it for more GPUs, lower it to spend less. `gpuplan explain` shows the worst case against it.\n\
         budget usd-per-hour={}\n\n",
        shape.budget
    ));
    text.push_str(&pool_block(preset, name));
    text.push('\n');
    text.push_str(&workload_block(preset, name));
    text
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
    let mut text = format!(
        "// The EKS cluster the NodePools are for (its manifests go to out/{cluster}/): change the name to yours.\n\
         cluster \"{cluster}\" {{\n    \
             // The AWS region: its catalog prices and filters the instance types (us-east-1 is built in; another\n    \
             // region needs catalogs/<region>.json, from `gpuplan catalog refresh --region <region>`).\n    \
             region \"{region}\"\n    \
             // The zones Karpenter may launch nodes in: those of your cluster's subnets (these offer the most GPU types).\n    \
             zones {zones}\n    \
             // The value of the karpenter.sh/discovery tag on your cluster's subnets and security groups.\n    \
             discovery-tag \"{cluster}\"\n    \
             // The IAM role your nodes run as (the role Karpenter's getting-started guide creates).\n    \
             node-role \"KarpenterNodeRole-{cluster}\"\n    \
             // The node AMI, pinned: `al2023@latest` would replace every GPU node on each AMI release. Bump it on purpose.\n    \
             ami \"{STARTER_AMI}\"\n",
    );
    if spot {
        text.push_str(&format!(
            "    // Karpenter's SQS queue of spot interruption notices: a spot node is drained before EC2 takes it back.\n    \
                 interruption-queue \"Karpenter-{cluster}\"\n"
        ));
    }
    text.push_str("}\n");
    text
}

/// The `gpu { … }` block of the presets without their own: any NVIDIA GPU with at least `memory` per GPU, up to 8
/// per node.
fn gpu_block(memory: &str) -> String {
    let indent = "    ";
    format!(
        "{indent}// Which GPUs: any NVIDIA GPU with enough memory. `gpuplan catalog list --gpu-memory-min {memory}` lists them;\n\
         {indent}// add `name \"L4\" \"A10G\"` to allow only those models.\n\
         {indent}gpu {{\n\
         {indent}    // The least memory per GPU your model needs.\n\
         {indent}    memory-min \"{memory}\"\n\
         {indent}    // GPUs per node: up to 8, so larger nodes stay candidates for spot capacity and price.\n\
         {indent}    per-node max=8\n\
         {indent}}}\n"
    )
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
    format!(
        "{intro}\npool \"{name}\" preset=\"{preset}\" {{\n{body}    \
             // A node label your pods can select (nodeSelector workload: {name}); gpuplan also labels and taints the\n    \
             // nodes with the pool's name (`gpuplan explain` prints the toleration and selector pods need).\n    \
             label \"workload\" \"{name}\"\n}}\n",
        preset = preset.as_str(),
    )
}

fn training_pool_body() -> String {
    "    // Which GPUs: H100, eight per node (p5.48xlarge): a distributed job runs on whole nodes of one GPU model.\n    \
         gpu {\n        \
             name \"H100\"\n        \
             // Only 8-GPU nodes.\n        \
             per-node min=8\n    \
         }\n    \
         // EFA networking for NCCL between nodes; the nodes then launch in one zone (EFA traffic stays in a subnet).\n    \
         efa #true\n    \
         // The EC2 cluster placement group the nodes launch into, so a job's nodes sit close together: create it\n    \
         // first (`aws ec2 create-placement-group --strategy cluster`), or delete this line.\n    \
         placement-group \"training\"\n    \
         // When Karpenter may replace nodes for drift or consolidation: Sundays 02:00-06:00 UTC, one node at a time.\n    \
         disruption {\n        \
             maintenance-window day=\"sunday\" start=\"02:00\" duration=\"4h\" nodes=\"1\"\n    \
         }\n"
        .to_string()
}

fn tiered_pool_body() -> String {
    let tier = |name: &str, capacity: &str, comment: &str| {
        format!(
            "    // {comment}\n    \
                 tier \"{name}\" capacity=\"{capacity}\" {{\n        \
                     // Each tier is one GPU model on one capacity type: the chain as a whole is the diversity.\n        \
                     gpu {{\n            \
                         name \"L4\"\n            \
                         per-node max=8\n        \
                     }}\n    \
                 }}\n"
        )
    };
    format!(
        "    // A spot tier of one model is narrower than the 15 types spot-to-spot consolidation wants (lint GP006):\n    \
             // expected in a tiered chain, so it is silenced for this pool.\n    \
             allow \"GP006\"\n{}{}",
        tier("l4-spot", "spot", "First: L4 GPUs on spot."),
        tier("l4-on-demand", "on-demand", "Then: L4 GPUs on demand, when spot has none.")
    )
}

fn workload_block(preset: Preset, pool: &str) -> String {
    if preset == Preset::TrainingOnDemand {
        return format!(
            "// Your training job's workers: gpuplan writes their PodDisruptionBudget (no autoscaler: a job sizes itself).\n\
             workload \"trainer\" namespace=\"{pool}\" pool=\"{pool}\" kind=\"StatefulSet\" {{\n    \
                 // The label of the workers' pods (the PDB's selector): set it to your pods' label.\n    \
                 selector \"app.kubernetes.io/name\" \"trainer\"\n    \
                 // Two workers of eight GPUs each.\n    \
                 replicas 2\n    \
                 gpus-per-replica 8\n    \
                 // The maintenance window may take one worker at a time.\n    \
                 disruption-budget max-unavailable=1\n\
             }}\n"
        );
    }
    let (workload, what, replicas, budget) = match preset {
        Preset::BatchSpot => ("batch-worker", "batch worker", "min=1 max=6", "max-unavailable=2"),
        _ => ("model-server", "model server", "min=2 max=6", "min-available=1"),
    };
    // A preset that does not spread its pods (`Preset::spreads`) could put every replica on one 8-GPU node.
    let max_per_node = if preset.spreads() {
        ""
    } else {
        "    // At most 2 replicas on one node, so losing a node (a spot interruption) takes few of them.\n    max-per-node 2\n"
    };
    format!(
        "// Your {what} (a Deployment in namespace {pool}): gpuplan writes its PodDisruptionBudget and autoscaler.\n\
         workload \"{workload}\" namespace=\"{pool}\" pool=\"{pool}\" {{\n    \
             // The label of its pods (the PDB's and the autoscaler's selector): set it to your pods' label.\n    \
             selector \"app.kubernetes.io/name\" \"{workload}\"\n    \
             // How many replicas the autoscaler keeps, each requesting one GPU.\n    \
             replicas {replicas}\n    \
             // How many replicas a node drain or consolidation may take at once.\n    \
             disruption-budget {budget}\n{max_per_node}    \
             // Add replicas when the average GPU utilization passes 70%.\n    \
             autoscale gpu-utilization=70\n\
         }}\n"
    )
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
