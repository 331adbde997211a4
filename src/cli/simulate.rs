//! `gpuplan simulate`: Karpenter's provisioning of pods on the manifests, and what it costs.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::simulate::{self, Unavailable};

use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// Manifest files or directories (NodePool, EC2NodeClass, EKS Auto Mode NodeClass, NodeOverlay; Kueue v1beta2
    /// ResourceFlavor, ClusterQueue, LocalQueue, WorkloadPriorityClass, PriorityClass and Namespace for queued pods;
    /// other kinds are ignored).
    #[arg(long, num_args = 1.., default_value = "out")]
    manifests: Vec<PathBuf>,
    /// Pod, Deployment, StatefulSet, ReplicaSet or Job YAML files or directories (DaemonSets there count as
    /// --daemonsets). Objects labelled kueue.x-k8s.io/queue-name run only if Kueue admits them.
    #[arg(long, num_args = 1.., required = true)]
    pods: Vec<PathBuf>,
    /// DaemonSet YAML files or directories: the requests of those that would run on a node are taken from it
    /// before pods fit, as Karpenter does. The DaemonSets of the add-ons the manifests configure (GPU Operator,
    /// Neuron and EFA device plugins, as their charts create them) are counted too unless given here.
    #[arg(long, num_args = 1..)]
    daemonsets: Vec<PathBuf>,
    /// Do not count the add-ons' DaemonSets that are not given as input.
    #[arg(long)]
    no_add_on_daemonsets: bool,
    /// The EKS node DaemonSets every node runs (aws-node, kube-proxy, ebs-csi-node, eks-pod-identity-agent; `none`
    /// for none), as a cluster's `node-daemons` line; default: all four, none on EKS Auto Mode manifests.
    #[arg(long, num_args = 1..)]
    node_daemons: Option<Vec<String>>,
    /// Catalog region (default: the manifests' gpuplan.dev/catalog annotation, else us-east-1).
    #[arg(long)]
    region: Option<String>,
    /// TYPE:ZONE:CAPACITY with no capacity for the whole run (each part may be * or a glob such as g5.*).
    #[arg(long)]
    unavailable: Vec<Unavailable>,
    /// Directory of catalog snapshots (<region>.json); us-east-1 is built in.
    #[arg(long, default_value = "catalogs")]
    catalogs: PathBuf,
    /// table, json or markdown.
    #[arg(long, value_enum, default_value_t)]
    format: simulate::Format,
    /// Exit 1 when any pod stays pending.
    #[arg(long)]
    exit_code: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { manifests, pods, daemonsets, no_add_on_daemonsets, node_daemons, region, unavailable, catalogs, format, exit_code } = args;
    let node_daemons = node_daemons.map(|names| names.into_iter().filter(|n| n != "none").collect());
    let options = simulate::Options { manifests, pods, region, catalogs_dir: catalogs, unavailable, daemonsets, add_on_daemonsets: !no_add_on_daemonsets, node_daemons };
    let report = simulate::simulate(&options).map_err(CliError::msg)?;
    print!("{}", simulate::report::render(&report, format));
    Ok(if exit_code && !report.pending.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
