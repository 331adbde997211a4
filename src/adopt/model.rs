//! What adopt writes: profiles as lines of KDL, each with the original file and field it came from, and the
//! warnings for what the profile language cannot say.

use std::collections::BTreeMap;

/// One KDL node, its provenance (`file Kind/name field`), and its children.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub kdl: String,
    pub from: String,
    pub children: Vec<Line>,
}

impl Line {
    pub fn new(kdl: impl Into<String>, from: impl Into<String>) -> Line {
        Line { kdl: kdl.into(), from: from.into(), children: Vec::new() }
    }

    pub fn block(kdl: impl Into<String>, from: impl Into<String>, children: Vec<Line>) -> Line {
        Line { kdl: kdl.into(), from: from.into(), children }
    }
}

/// A field adopt could not express: named by file, object and field, and kept in the profile as a comment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Warning {
    pub file: String,
    pub object: String,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "warning: {}: {} {}: {}", self.file, self.object, self.field, self.message)
    }
}

#[derive(Debug, Clone)]
pub struct AdoptedPool {
    /// The NodePool's name (and the pool's: a single-tier pool compiles to a NodePool of its own name).
    pub name: String,
    /// gpuplan's `gpuplan.dev/pool` label when it names a pool this NodePool is a tier of (`<pool>-<tier>`).
    pub tier_of: Option<String>,
    pub preset: &'static str,
    pub from: String,
    pub lines: Vec<Line>,
    /// Fields kept only as comments.
    pub comments: Vec<String>,
    /// What the profile needs and the inputs do not say (`file NodePool/x: … add <field>`): adopt stops with these.
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ClusterBlock {
    pub name: String,
    pub region: String,
    pub zones: Vec<String>,
    pub discovery_tag: String,
    pub node_role: String,
    /// `instance-profile`: the primary class's `spec.instanceProfile`; then `node-role` is not written.
    pub instance_profile: Option<String>,
    pub ami: String,
    /// `auto-mode #true`: the NodePools reference EKS Auto Mode NodeClasses (then `ami` is not written).
    pub auto_mode: bool,
    /// `ephemeral-storage "…"`: the Auto Mode NodeClass's `ephemeralStorage.size`.
    pub ephemeral_storage: Option<String>,
    /// `gitops repo=… revision=… path=… argocd=… flux=…`, from gpuplan's own GitOps apps.
    pub gitops: Option<String>,
    /// `user-data`: the primary EC2NodeClass's userData, verbatim.
    pub user_data: Option<String>,
    /// `raw "EC2NodeClass"` (or `"NodeClass"`): the primary class's fields no setting says.
    pub raw: Option<Line>,
    /// `interruption-queue`: the queue gpuplan's kustomization header names (no object carries it).
    pub interruption_queue: Option<String>,
    /// Provenance per cluster field.
    pub from: BTreeMap<&'static str, String>,
}

#[derive(Debug, Clone)]
pub struct AdoptedProfile {
    pub name: String,
    pub priority: u32,
    pub cluster: ClusterBlock,
    pub budget: Option<(String, String)>,
    pub pools: Vec<AdoptedPool>,
    /// The cluster's `monitoring` block (in one profile of the cluster), with its provenance.
    pub monitoring: Option<Line>,
    /// `workload` blocks, sorted by namespace and name (the order gpuplan renders them in).
    pub workloads: Vec<Line>,
    /// `queue` blocks, sorted by name.
    pub queues: Vec<Line>,
    pub comments: Vec<String>,
}

/// KDL string literal: quoted, with `"` and `\` escaped.
/// A KDL string for any text: [`q`] with newlines, carriage returns and tabs escaped (a KDL v2 single-line string
/// holds none of them literally).
pub fn q_text(s: &str) -> String {
    q(s).replace('\n', "\\n").replace('\r', "\\r").replace('\t', "\\t")
}

pub fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
