//! `cluster "name" { … }`: the cluster a profile's pools run in, what its node classes say (region, zones, AMI,
//! node identity, user data, an image cache, EKS Auto Mode) and its GitOps hand-off.
//!
//! ```kdl
//! cluster "ml-prod" {
//!     region "us-east-1"; zones "us-east-1a" "us-east-1b"; ami "al2023@v20251023"
//!     node-role "KarpenterNodeRole-ml-prod"      // or instance-profile "…"
//!     gitops repo="https://github.com/org/platform.git" revision="main" path="out" argocd=#true
//! }
//! ```
//!
//! The lines are read first ([`ClusterLines`]), then checked together: region and zones (E0114), node identity
//! (E0316, E0317), the AMI or Auto Mode's refusals (E0115, E0270–E0279), the image cache (E0156).

use kdl::KdlNode;

use super::parser::{args, prop, Parser};
use super::{schema, Raw};
use crate::diagnostic::ErrorCode;
use crate::diagnostic::{Span, Spanned};

#[derive(Debug, Clone)]
pub struct Cluster {
    pub name: Spanned<String>,
    pub region: Spanned<String>,
    pub zones: Vec<Spanned<String>>,
    /// Value of the `karpenter.sh/discovery` tag on subnets and security groups.
    pub discovery_tag: Spanned<String>,
    pub node_role: Spanned<String>,
    /// `instance-profile "<name>"`: a pre-provisioned IAM instance profile, rendered as the EC2NodeClass's
    /// `spec.instanceProfile` instead of `spec.role` (the CRD takes exactly one; `node-role` is then not written).
    pub instance_profile: Option<Spanned<String>>,
    /// EC2NodeClass AMI alias, e.g. `al2023@v20251023`.
    pub ami: Spanned<String>,
    /// True for EKS accelerated AMIs (NVIDIA driver and toolkit preinstalled).
    pub accelerated_ami: Spanned<bool>,
    /// Argo CD Application / Flux Kustomization pointing at out/<cluster>, when asked for.
    pub gitops: Option<Spanned<Gitops>>,
    /// `image-cache snapshot="snap-…"`: an EBS snapshot with the ML images pre-pulled, restored as the
    /// Bottlerocket data volume so new GPU nodes start without pulling multi-GB images.
    pub image_cache_snapshot: Option<Spanned<String>>,
    /// `user-data "…"`: the EC2NodeClass's userData, carried verbatim (before gpuplan's own Bottlerocket settings).
    pub user_data: Option<Spanned<String>>,
    /// `auto-mode #true`: the cluster runs EKS Auto Mode. Its NodePools reference an `eks.amazonaws.com/v1`
    /// NodeClass (emitted instead of an EC2NodeClass), select on `eks.amazonaws.com/instance-*` labels, and no GPU
    /// Operator or device-plugin add-on is installed (Auto Mode ships the NVIDIA and Neuron drivers and plugins).
    /// The span is the `auto-mode` line's (the cluster's name when absent).
    pub auto_mode: Spanned<bool>,
    /// `ephemeral-storage "200Gi"` (Auto Mode only): the NodeClass's `ephemeralStorage.size`.
    pub ephemeral_storage: Option<Spanned<String>>,
    /// `raw "EC2NodeClass" "<YAML>"` (or `"NodeClass"`): fragments merged into every node class of the profile.
    pub raws: Vec<Spanned<Raw>>,
    /// `interruption-queue "<SQS queue>"`: the queue Karpenter reads EC2's interruption events from (its Helm value
    /// `settings.interruptionQueue`); listed in the prerequisites, and its absence is lint GP050 on spot pools.
    pub interruption_queue: Option<Spanned<String>>,
    /// `node-daemons "aws-node" "kube-proxy" …`: the EKS node DaemonSets every node runs, whose requests the fit checks
    /// count (`charts::node_daemons`); None: the default (all four, none in Auto Mode); `"none"`: empty.
    pub node_daemons: Option<Vec<Spanned<String>>>,
    pub span: Span,
}

/// `gitops repo="…" revision="main" path="out" argocd=#true flux=#false` in a cluster block.
#[derive(Debug, Clone, PartialEq)]
pub struct Gitops {
    pub repo: String,
    pub revision: String,
    pub path: String,
    pub argocd: bool,
    pub flux: bool,
    /// Flux Kustomizations (in flux-system) that install what the output needs first — Karpenter's and the GPU
    /// Operator's CRDs: the Flux Kustomization's `dependsOn`.
    pub depends_on: Vec<String>,
}

/// A `cluster` block's lines as read, before the checks that relate them. Booleans not written are `#true` for
/// `accelerated-ami` and `#false` for `auto-mode`, spanned at the cluster's name.
struct ClusterLines {
    region: Option<Spanned<String>>,
    zones: Vec<Spanned<String>>,
    discovery_tag: Option<Spanned<String>>,
    node_role: Option<Spanned<String>>,
    instance_profile: Option<Spanned<String>>,
    ami: Option<Spanned<String>>,
    accelerated_ami: Spanned<bool>,
    accelerated_ami_written: bool,
    auto_mode: Spanned<bool>,
    ephemeral_storage: Option<Spanned<String>>,
    gitops: Option<Spanned<Gitops>>,
    image_cache_snapshot: Option<Spanned<String>>,
    user_data: Option<Spanned<String>>,
    raws: Vec<Spanned<Raw>>,
    interruption_queue: Option<Spanned<String>>,
    node_daemons: Option<Vec<Spanned<String>>>,
}

impl ClusterLines {
    fn new(node_span: Span) -> ClusterLines {
        ClusterLines {
            region: None,
            zones: Vec::new(),
            node_daemons: None,
            discovery_tag: None,
            node_role: None,
            instance_profile: None,
            ami: None,
            accelerated_ami: Spanned::new(true, node_span),
            accelerated_ami_written: false,
            auto_mode: Spanned::new(false, node_span),
            ephemeral_storage: None,
            gitops: None,
            image_cache_snapshot: None,
            user_data: None,
            raws: Vec::new(),
            interruption_queue: None,
        }
    }
}

impl Parser<'_> {
    pub(super) fn parse_cluster(&mut self, node: &KdlNode) -> Option<Cluster> {
        self.check_entries(node, &[], 1);
        let name = args(node).next().and_then(|e| self.expect_string(e, "the cluster name"));
        let Some(name) = name else {
            self.error(self.span(node.span()), ErrorCode::E0107, "`cluster` needs a name", "write cluster \"ml-prod\" { … }");
            return None;
        };
        self.check_name(&name, "cluster");
        let node_span = self.span(node.name().span());
        let mut lines = ClusterLines::new(node_span);
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            if child.name().value() != "gitops" {
                self.no_children(child);
            }
            self.cluster_line(child, &mut lines);
            if child.name().value() == "gitops" {
                self.check_depends_on(child, &name.value);
            }
        }
        let Some(region) = lines.region.take() else {
            self.error(node_span, ErrorCode::E0107, "the cluster has no `region`", "add region \"us-east-1\" to the cluster block");
            return None;
        };
        self.check_region(&region, &lines.zones);
        self.check_node_identity(lines.node_role.as_ref(), lines.instance_profile.as_ref(), lines.auto_mode.value);
        let ami = lines.ami.take().unwrap_or_else(|| Spanned::new(String::new(), node_span));
        self.check_node_image(&lines, &ami, node_span);
        Some(Cluster {
            image_cache_snapshot: lines.image_cache_snapshot,
            user_data: lines.user_data,
            raws: lines.raws,
            interruption_queue: lines.interruption_queue,
            node_daemons: lines.node_daemons,
            auto_mode: lines.auto_mode,
            ephemeral_storage: lines.ephemeral_storage,
            discovery_tag: lines.discovery_tag.unwrap_or_else(|| name.clone()),
            node_role: lines.node_role.unwrap_or_else(|| Spanned::new(format!("KarpenterNodeRole-{}", name.value), name.span)),
            instance_profile: lines.instance_profile,
            name,
            region,
            zones: lines.zones,
            ami,
            accelerated_ami: lines.accelerated_ami,
            gitops: lines.gitops,
            span: node_span,
        })
    }

    /// One line of a `cluster` block into `lines`.
    fn cluster_line(&mut self, child: &KdlNode, lines: &mut ClusterLines) {
        match child.name().value() {
            "region" => lines.region = self.single_string(child),
            "image-cache" => {
                if let Some(snap) = self.parse_image_cache(child) {
                    lines.image_cache_snapshot = Some(snap);
                }
            }
            "zones" => lines.zones = self.strings(child),
            "node-daemons" => {
                let mut names = self.strings(child);
                let mut choices: Vec<(&str, ())> = crate::charts::node_daemons::EKS_NODE_DAEMONS.iter().map(|d| (d.name, ())).collect();
                choices.push(("none", ()));
                let help = "name the EKS node DaemonSets the cluster runs: aws-node, kube-proxy, ebs-csi-node, eks-pod-identity-agent (or \"none\")";
                for n in &names {
                    self.keyword(n, "node DaemonSet", &choices, help);
                }
                names.retain(|n| n.value != "none");
                lines.node_daemons = Some(names);
            }
            "discovery-tag" => {
                lines.discovery_tag = self.single_string(child);
                if let Some(tag) = &lines.discovery_tag {
                    let non_empty = |t: &str| if t.is_empty() { Err("it is empty, and Karpenter refuses an empty tag value in a selector term".to_string()) } else { Ok(()) };
                    self.check_value(tag, non_empty, ErrorCode::E0191, "discovery tag", "write the karpenter.sh/discovery tag value of the cluster's subnets, or leave the line out (the cluster name)");
                }
            }
            "node-role" => {
                lines.node_role = self.single_string(child);
                if let Some(role) = &lines.node_role {
                    self.check_value(role, crate::names::check_role_name, ErrorCode::E0191, "node role", "write the IAM role name of the nodes, or leave the line out (KarpenterNodeRole-<cluster>)");
                }
            }
            "instance-profile" => {
                // Spanned at the line's name: E0316 and E0317 are about the line, not its value.
                if let Some(profile) = self.single_string(child) {
                    self.check_value(&profile, crate::names::check_instance_profile_name, ErrorCode::E0191, "instance profile", "write the name of the IAM instance profile the nodes launch with (already created, with the node role in it)");
                    lines.instance_profile = Some(Spanned::new(profile.value, self.span(child.name().span())));
                }
            }
            "ami" => lines.ami = self.single_string(child),
            "user-data" => lines.user_data = self.single_string(child),
            "raw" => lines.raws.extend(self.parse_raw(child, &["EC2NodeClass", "NodeClass"])),
            "accelerated-ami" => {
                self.check_entries(child, &[], 1);
                if let Some(b) = args(child).next().and_then(|e| self.expect_bool(e, "accelerated-ami")) {
                    lines.accelerated_ami = b;
                    lines.accelerated_ami_written = true;
                }
            }
            "auto-mode" => {
                self.check_entries(child, &[], 1);
                if let Some(b) = args(child).next().and_then(|e| self.expect_bool(e, "auto-mode")) {
                    lines.auto_mode = Spanned::new(b.value, self.span(child.span()));
                }
            }
            "ephemeral-storage" => {
                lines.ephemeral_storage = self.single_string(child);
                if let Some(size) = &lines.ephemeral_storage {
                    self.check_value(size, check_ephemeral_storage, ErrorCode::E0275, "ephemeral storage size", "write a size in Auto Mode's ranges: 1-59000Gi, 1-64000G, 1-58Ti or 1-64T, e.g. ephemeral-storage \"200Gi\"");
                }
            }
            "gitops" => lines.gitops = Some(self.parse_gitops(child)),
            "karpenter-version" => self.parse_karpenter_version(child),
            "interruption-queue" => lines.interruption_queue = self.parse_interruption_queue(child),
            _ => self.unknown_node(child, &schema::names("cluster"), "`cluster`"),
        }
    }

    /// `image-cache snapshot="snap-…"`: the snapshot id, when it is one.
    fn parse_image_cache(&mut self, child: &KdlNode) -> Option<Spanned<String>> {
        self.check_entries(child, &["snapshot"], 0);
        match prop(child, "snapshot").and_then(|e| self.expect_string(e, "snapshot")) {
            Some(snap) if snap.starts_with("snap-") && snap.len() > 5 => return Some(snap),
            Some(snap) => self.error(snap.span, ErrorCode::E0105, format!("`{}` is not an EBS snapshot id", snap.value), "write image-cache snapshot=\"snap-0123456789abcdef0\""),
            None => self.error(self.span(child.span()), ErrorCode::E0107, "`image-cache` needs snapshot", "write image-cache snapshot=\"snap-0123456789abcdef0\""),
        }
        None
    }

    /// E0360: a `depends-on` naming the Kustomization gpuplan writes for this cluster (`gpuplan-<cluster>`, which
    /// would wait for itself) or for its add-on values (`gpuplan-<cluster>-values`, which the charts the main one
    /// waits for read: the operator's Kustomization depends on it, so the edge points the other way). Flux reconciles
    /// a Kustomization only once every `dependsOn` is Ready (fluxcd/kustomize-controller v1.9.4
    /// `checkDependencies`): either never syncs.
    fn check_depends_on(&mut self, gitops: &KdlNode, cluster: &str) {
        let own = [crate::layout::flux_kustomization(cluster), crate::layout::flux_values_kustomization(cluster)];
        for grandchild in gitops.children().map(|c| c.nodes()).unwrap_or_default().iter().filter(|n| n.name().value() == "depends-on") {
            for d in args(grandchild).filter_map(|e| e.value().as_string().map(|v| (v.to_string(), e.span()))) {
                if own.contains(&d.0) {
                    let span = self.span(d.1);
                    self.error(
                        span,
                        ErrorCode::E0360,
                        format!("`depends-on \"{}\"` names a Kustomization gpuplan writes for cluster `{cluster}`: it would wait for itself, and Flux never syncs either", d.0),
                        format!("list only the Kustomizations that install what the output needs (Karpenter, the GPU Operator, kube-prometheus-stack); the GPU Operator's depends on {} instead", own[1]),
                    );
                }
            }
        }
    }

    /// `gitops repo="…" revision="main" path="out" argocd=#true flux=#false { depends-on "…" }`: E0157 for Flux
    /// without a revision, E0155 for both controllers on one path.
    fn parse_gitops(&mut self, child: &KdlNode) -> Spanned<Gitops> {
        self.check_entries(child, &["repo", "revision", "path", "argocd", "flux"], 0);
        let span = self.span(child.span());
        let text = |p: &mut Self, key: &str, default: &str| {
            prop(child, key).and_then(|e| p.expect_string(e, key)).map_or_else(|| default.to_string(), |v| v.value)
        };
        let flag = |p: &mut Self, key: &str, default: bool| {
            prop(child, key).and_then(|e| p.expect_bool(e, key)).map_or(default, |v| v.value)
        };
        let repo = text(self, "repo", "");
        if repo.is_empty() {
            self.error(span, ErrorCode::E0107, "`gitops` needs repo", "write gitops repo=\"https://github.com/org/platform.git\" revision=\"main\"");
        }
        let mut depends_on = Vec::new();
        for grandchild in child.children().map(|c| c.nodes()).unwrap_or_default() {
            self.no_children(grandchild);
            match grandchild.name().value() {
                "depends-on" => depends_on.extend(self.strings(grandchild).into_iter().map(|d| d.value)),
                _ => self.unknown_node(grandchild, &schema::names("gitops"), "`gitops`"),
            }
        }
        let settings = Gitops {
            repo,
            revision: text(self, "revision", "HEAD"),
            path: text(self, "path", "out"),
            argocd: flag(self, "argocd", true),
            flux: flag(self, "flux", false),
            depends_on,
        };
        if settings.flux && settings.revision == "HEAD" {
            self.error(
                span,
                ErrorCode::E0157,
                "Flux needs the revision to follow: `gitops` has none (HEAD)",
                "a GitRepository without a ref follows `master`, not the default branch: write revision=\"main\" (a branch, a v1.2.3 tag or a commit)",
            );
        }
        if settings.argocd && settings.flux {
            self.error(
                span,
                ErrorCode::E0155,
                "`gitops` asks for both Argo CD and Flux on the same path",
                "two pruning controllers fight over the same objects (each reverts the other's applies and prunes what its own source lacks): keep one, argocd=#true flux=#false or argocd=#false flux=#true",
            );
        }
        Spanned::new(settings, span)
    }

    /// E0114: a region name, and zones of that region.
    fn check_region(&mut self, region: &Spanned<String>, zones: &[Spanned<String>]) {
        if !region.value.split('-').count().eq(&3) || !region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            self.error(region.span, ErrorCode::E0114, format!("`{}` is not an AWS region name", region.value), "e.g. us-east-1");
        }
        for zone in zones {
            let suffix_ok = zone.strip_prefix(region.as_str()).is_some_and(|s| s.len() == 1 && s.chars().all(|c| c.is_ascii_lowercase()));
            if !suffix_ok {
                self.error(
                    zone.span,
                    ErrorCode::E0114,
                    format!("zone `{}` is not an availability zone of {}", zone.value, region.value),
                    format!("zones of {0} look like {0}a, {0}b, …", region.value),
                );
            }
        }
    }

    /// The node image: in Auto Mode, what it refuses (E0270–E0279); otherwise `ephemeral-storage` is refused
    /// (E0276) and a pinned AMI alias is needed (E0115). An image cache needs Bottlerocket (E0156).
    fn check_node_image(&mut self, lines: &ClusterLines, ami: &Spanned<String>, node_span: Span) {
        if lines.auto_mode.value {
            let written = AutoModeWritten {
                ami,
                image_cache: lines.image_cache_snapshot.as_ref(),
                accelerated_ami: lines.accelerated_ami_written.then_some(lines.accelerated_ami.span),
                user_data: lines.user_data.as_ref(),
            };
            self.check_auto_mode_cluster(written);
        } else if let Some(size) = &lines.ephemeral_storage {
            self.error(size.span, ErrorCode::E0276, "`ephemeral-storage` is an EKS Auto Mode NodeClass setting, and the cluster is not in Auto Mode", "add `auto-mode #true` to the cluster block, or leave the line out (EC2NodeClasses get a 200Gi gp3 volume)");
        } else if ami.is_empty() {
            self.error(
                node_span,
                ErrorCode::E0115,
                "the cluster has no `ami`",
                "pin an EC2NodeClass AMI alias, e.g. ami \"al2023@v20251023\" (the book's introduction: why not @latest)",
            );
        } else if !valid_ami_alias(ami) {
            self.error(
                ami.span,
                ErrorCode::E0115,
                format!("`{}` is not an AMI alias", ami.value),
                "write family@version, e.g. al2023@v20251023 or bottlerocket@v1.50.0",
            );
        }
        if let Some(snap) = &lines.image_cache_snapshot
            && !lines.auto_mode.value
            && !ami.value.starts_with("bottlerocket@")
        {
            self.error(
                snap.span,
                ErrorCode::E0156,
                format!("`image-cache` needs a Bottlerocket AMI, but the cluster uses `{}`", ami.value),
                "AL2023 has one root volume and no separate data volume to restore the snapshot into: use ami \"bottlerocket@…\" (images live on /dev/xvdb) or remove image-cache",
            );
        }
    }

    /// E0316: `node-role` and `instance-profile` both written (the EC2NodeClass CRD takes exactly one of `role` and
    /// `instanceProfile`: karpenter.k8s.aws_ec2nodeclasses.yaml v1.14.1, "must specify exactly one of ['role',
    /// 'instanceProfile']"). E0317: `instance-profile` in EKS Auto Mode, whose NodeClass names its nodes' identity by
    /// role: the EKS User Guide's Node Class Specification ("Create a Node Class for Amazon EKS") documents `role` as
    /// required and no instance profile, and Auto Mode's access entries are per role.
    fn check_node_identity(&mut self, node_role: Option<&Spanned<String>>, instance_profile: Option<&Spanned<String>>, auto_mode: bool) {
        let Some(profile) = instance_profile else { return };
        if let Some(role) = node_role {
            let message = format!("`instance-profile` and `node-role` (at {}) are both written: a node class takes exactly one", self.sources.location(role.span));
            self.error(profile.span, ErrorCode::E0316, message, "keep `instance-profile` for a pre-provisioned instance profile (Karpenter then manages none), or `node-role` for Karpenter to create one for the role; remove the other line");
        } else if auto_mode {
            self.error(
                profile.span,
                ErrorCode::E0317,
                "an EKS Auto Mode NodeClass names its nodes' IAM identity by role, not by instance profile",
                "write node-role \"<the role in the instance profile>\" (it needs an EKS access entry), or leave out `auto-mode #true` to emit an EC2NodeClass, which takes an instanceProfile",
            );
        }
    }

    /// E0270–E0272: cluster settings EKS Auto Mode cannot honour (it picks and manages the node image itself: EKS User
    /// Guide, "Learn about Amazon EKS Auto Mode managed instances", AMI support; a NodeClass has no AMI, user-data or
    /// block-device fields: "Create a Node Class for Amazon EKS").
    fn check_auto_mode_cluster(&mut self, written: AutoModeWritten) {
        if !written.ami.is_empty() {
            self.error_labelled(
                written.ami.span,
                ErrorCode::E0270,
                format!("EKS Auto Mode chooses the node image itself: the cluster cannot pin AMI `{}`", written.ami.value),
                "an AMI alias",
                "leave out `ami` (Auto Mode updates its Bottlerocket-based image weekly and replaces nodes within 21 days), or leave out `auto-mode #true` to emit an EC2NodeClass for self-managed Karpenter",
            );
        }
        if let Some(snap) = written.image_cache {
            self.error_labelled(
                snap.span,
                ErrorCode::E0271,
                "EKS Auto Mode cannot restore an image cache: its NodeClass has no block device mappings or snapshots",
                "an EBS snapshot",
                "leave out `image-cache` (size the node's disk with `ephemeral-storage \"…Gi\"`), or leave out `auto-mode #true`",
            );
        }
        if let Some(span) = written.accelerated_ami {
            self.error_labelled(
                span,
                ErrorCode::E0272,
                "`accelerated-ami` has no meaning in EKS Auto Mode: Auto Mode ships and manages the NVIDIA and Neuron drivers",
                "a driver setting",
                "leave out `accelerated-ami` (no GPU Operator is installed in an Auto Mode cluster)",
            );
        }
        if let Some(user_data) = written.user_data {
            self.error_labelled(
                user_data.span,
                ErrorCode::E0279,
                "EKS Auto Mode nodes take no user data: its NodeClass has no userData field, so this would be dropped",
                "user data",
                "leave out `user-data` (Auto Mode configures its nodes itself), or leave out `auto-mode #true` to emit an EC2NodeClass that carries it",
            );
        }
    }
}

/// The cluster settings an Auto Mode cluster must not write, where they are written.
struct AutoModeWritten<'a> {
    ami: &'a Spanned<String>,
    image_cache: Option<&'a Spanned<String>>,
    accelerated_ami: Option<Span>,
    user_data: Option<&'a Spanned<String>>,
}

/// Auto Mode's `ephemeralStorage.size` ranges (EKS User Guide, "Create a Node Class for Amazon EKS", Node Class
/// Specification: "Range: 1-59000Gi or 1-64000G or 1-58Ti or 1-64T").
pub fn check_ephemeral_storage(size: &str) -> Result<(), String> {
    let (number, max) = [("Gi", 59000), ("G", 64000), ("Ti", 58), ("T", 64)]
        .into_iter()
        .find_map(|(unit, max)| size.strip_suffix(unit).filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).map(|n| (n, max)))
        .ok_or_else(|| "not a whole number of Gi, G, Ti or T".to_string())?;
    match number.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(()),
        _ => Err(format!("out of range (1 to {max} in this unit)")),
    }
}

fn valid_ami_alias(alias: &str) -> bool {
    alias.split_once('@').is_some_and(|(family, version)| {
        ["al2023", "al2", "bottlerocket", "windows2019", "windows2022", "windows2025"].contains(&family)
            && !version.is_empty()
            && version.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    })
}
