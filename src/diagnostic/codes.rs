//! The error codes of gpuplan's diagnostics, one table: each code's one-line summary here, its explanation and a
//! failing example in `codes/<code>.md`. Diagnostics name a code of this table (`ErrorCode::E0107`), never a string;
//! `tests/error_codes.rs` keeps the table unique, used (every code raised somewhere in src/, every code raised here)
//! and explained, and runs every example to check that it fails with its code.
//!
//! The model is rustc's error index (rust-lang/rust `compiler/rustc_error_codes/src/lib.rs` and
//! `compiler/rustc_error_codes/src/error_codes/E0004.md`): one Markdown file per code, an explanation that says what
//! is wrong and how to fix it, and an erroneous example that the test suite compiles and expects to fail with that
//! code (`compile_fail,E0004`). Here an example is the input files (a profile, sometimes a catalog or a previous out/
//! file) and the gpuplan command that fails on them, so that the docs' error index and `explain-error` can show both.
//!
//! The format of `codes/<code>.md`: the explanation (Markdown), then a line `## Example`, then fenced blocks: one per
//! input file, its info string the language and the file's path relative to an empty directory (```` ```kdl
//! profiles/ml.kdl ````), and one ```` ```console ```` block with the command, `$ gpuplan …`, and under it what the
//! command prints (kept true by `tests/error_codes.rs`, which rewrites it with `GPUPLAN_BLESS=1`).

/// Declares the table: the enum (one variant per code, in code order) and its summaries and explanations.
macro_rules! error_codes {
    ($($code:ident: $summary:literal,)*) => {
        /// A gpuplan error code: what a diagnostic says is wrong, stable across releases (tests and users grep for
        /// it). The variants are the codes, in order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ErrorCode {
            $($code,)*
        }

        impl ErrorCode {
            /// Every code, in order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$code,)*];

            /// The code as diagnostics print it: `E0107`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => stringify!($code),)*
                }
            }

            /// What is wrong, in one line (lowercase, no trailing period, like the diagnostics' messages).
            pub fn summary(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => $summary,)*
                }
            }

            /// The whole `codes/<code>.md`: the explanation and the failing example, as `explain-error` prints it.
            pub fn markdown(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => include_str!(concat!("codes/", stringify!($code), ".md")),)*
                }
            }
        }
    };
}

error_codes! {
    E0001: "a profile file cannot be read",
    E0101: "a profile is not valid KDL",
    E0102: "unknown node",
    E0103: "unknown property",
    E0104: "too many arguments",
    E0105: "a value has the wrong type",
    E0106: "a number is out of range",
    E0107: "a required value is missing",
    E0108: "a node takes no block",
    E0109: "a profile has two cluster blocks",
    E0110: "a profile has no cluster block",
    E0111: "a profile has no pool",
    E0112: "a NodePool name is used twice in a profile",
    E0113: "a name is not a valid Kubernetes name",
    E0114: "an invalid region or zone",
    E0115: "the cluster's AMI is missing or not an alias",
    E0116: "unknown preset",
    E0117: "a tier outside a tiered pool, or a tiered pool without tiers",
    E0118: "a value is not one the setting knows",
    E0119: "time-slicing replicas out of range",
    E0120: "a scheduled disruption budget needs schedule and duration",
    E0121: "a value is not a duration",
    E0122: "a value is not a memory size",
    E0130: "contradictory settings in one pool",
    E0131: "reserved capacity without a reservation to select",
    E0132: "a reservation without its instance type and count",
    E0133: "a reservation at the level of a tiered pool",
    E0140: "no instance type satisfies a pool",
    E0141: "a pool is unbounded",
    E0142: "a limit is too small for one node",
    E0143: "capacity reservations cost more than the budget",
    E0150: "one cluster in two regions",
    E0151: "no catalog for a cluster's region",
    E0152: "a zone the catalog does not know",
    E0153: "two NodePools with one weight, or no room for distinct weights",
    E0154: "a NodePool defined by two profiles of a cluster",
    E0155: "gitops asks for both Argo CD and Flux",
    E0156: "an image cache needs a Bottlerocket AMI",
    E0157: "Flux needs a revision",
    E0158: "two node classes of a cluster with one name and different settings",
    E0159: "a raw fragment changes the AMI family",
    E0160: "kubelet settings leave no room for a pod",
    E0161: "kubelet settings the EC2NodeClass CRD refuses",
    E0170: "a workload on an unknown pool",
    E0171: "replicas min above max",
    E0172: "a disruption budget that can never be satisfied",
    E0173: "a MIG config that does not exist for the pool's GPU",
    E0174: "unknown MIG config",
    E0175: "two monitoring blocks for one cluster",
    E0176: "a workload asks for more accelerators than its pool can provide",
    E0177: "a workload defined twice",
    E0178: "a MIG config that mixes MIG profiles",
    E0179: "unknown GPU Operator release",
    E0180: "a workload cannot schedule at max replicas",
    E0181: "a workload's replicas land on another NodePool",
    E0182: "a workload selector that is not a Kubernetes label",
    E0183: "a workload selector key given twice",
    E0184: "an accelerator pool's nodes would never get their devices",
    E0185: "MIG on Bottlerocket",
    E0186: "a reserved NodePool no workload can reach",
    E0187: "a profile nested too deep",
    E0188: "an invalid node label key or value",
    E0189: "an invalid taint key or value",
    E0190: "an invalid capacity reservation selector",
    E0191: "an invalid discovery tag, node role or instance profile",
    E0200: "a queue misses its name, namespace or pool",
    E0201: "a queue admits to an unknown pool",
    E0202: "a queue without a quota",
    E0203: "an invalid queue quota",
    E0204: "a queue quota on the wrong accelerator resource",
    E0205: "a queue defined twice",
    E0207: "unknown Kueue preemption policy",
    E0208: "a queue borrows without a cohort, or lends above its quota",
    E0209: "borrowing preemption while reclaiming is off",
    E0210: "queue quotas above a NodePool's limit",
    E0211: "queues can admit more than the budget",
    E0212: "a pool with more taints than a ResourceFlavor holds",
    E0220: "replicas min=0 without scale-to-zero",
    E0221: "scale-to-zero with replicas min above 0",
    E0222: "scale-to-zero with a min-available disruption budget",
    E0223: "scale-to-zero with nothing to wake the workload",
    E0225: "an invalid or repeated KEDA setting",
    E0226: "a scale-to-zero duration out of range",
    E0227: "an invalid Prometheus URL",
    E0260: "an accelerator selector in a cpu pool",
    E0261: "a pool says two kinds of node",
    E0262: "max-accelerators on a cpu pool",
    E0263: "max-cpu on an accelerated pool",
    E0264: "a pool with CPU and accelerated tiers",
    E0265: "a queue on a cpu pool",
    E0266: "limits cpu= on a cpu pool",
    E0267: "GPU-utilization autoscaling on a cpu pool",
    E0270: "an AMI in an EKS Auto Mode cluster",
    E0271: "an image cache in an EKS Auto Mode cluster",
    E0272: "accelerated-ami in an EKS Auto Mode cluster",
    E0273: "time-slicing in an EKS Auto Mode cluster",
    E0274: "MIG in an EKS Auto Mode cluster",
    E0275: "an ephemeral storage size outside Auto Mode's ranges",
    E0276: "ephemeral-storage outside EKS Auto Mode",
    E0277: "profiles of one cluster disagree on auto-mode",
    E0278: "an EKS Auto Mode profile named default",
    E0279: "user data in an EKS Auto Mode cluster",
    E0280: "a requirement key Karpenter refuses",
    E0281: "a requirement gpuplan writes itself",
    E0282: "unknown requirement operator",
    E0283: "requirement values that do not fit the operator",
    E0284: "min-values beyond an In list",
    E0285: "a resource limit that is not a quantity",
    E0286: "limits without cpu= or memory=",
    E0287: "user data that sets the device plugin of a time-sliced Bottlerocket pool",
    E0290: "an overlay that changes nothing",
    E0291: "an overlay with two prices",
    E0292: "an overlay price off the NodeOverlay CRD's pattern",
    E0293: "an overlay capacity Karpenter refuses",
    E0294: "an overlay requirement on a key NodeOverlays refuse",
    E0295: "an overlay name used twice",
    E0296: "a capacity overlay on a pool that shares its GPUs",
    E0297: "two overlays of one weight in conflict",
    E0300: "static without replicas",
    E0301: "a static pool's max-nodes below its replicas",
    E0302: "a static pool that is not one NodePool",
    E0303: "a weight on a static pool",
    E0304: "an accelerator or resource limit on a static pool",
    E0305: "consolidation settings on a static pool",
    E0306: "static pools cost more than the budget",
    E0307: "scale-to-zero on a static pool",
    E0308: "a pool switches between static and dynamic",
    E0309: "an update the API server refuses",
    E0310: "a raw fragment for a kind that cannot be patched there",
    E0311: "a raw fragment that is not a YAML mapping",
    E0312: "a raw fragment on a field gpuplan writes",
    E0313: "kubelet settings in an EKS Auto Mode cluster",
    E0314: "a raw fragment for the other kind of node class",
    E0315: "a raw fragment makes its object invalid",
    E0316: "both node-role and instance-profile",
    E0317: "an instance profile in an EKS Auto Mode cluster",
    E0330: "GPU-utilization autoscaling in EKS Auto Mode without a DCGM exporter",
    E0331: "a KEDA trigger on a DCGM metric in EKS Auto Mode without a DCGM exporter",
    E0332: "an overlay in an EKS Auto Mode cluster",
    E0340: "the cluster's declared demands do not fit at once",
    E0350: "a fallback tier cannot carry its pool's workloads alone",
    E0360: "a Flux depends-on that waits for gpuplan's own Kustomization of the cluster",
    E0380: "a Karpenter version whose CRDs gpuplan does not pin",
    E0381: "an invalid interruption queue name",
    E0382: "two interruption queues for one cluster",
    E0383: "a placement group on a pool that launches in more than one zone",
    E0384: "an invalid placement group name",
    E0385: "a placement group in an EKS Auto Mode cluster",
    E0400: "a profile defines a cluster that gpuplan.kdl also defines",
    E0401: "a profile names a cluster with no block that gpuplan.kdl does not define",
    E0402: "gpuplan.kdl defines one cluster twice",
    E0410: "a name the region's catalog does not have",
    E0420: "the demand file names a cluster the profiles do not define",
    E0421: "the demand file names a workload its cluster does not have",
    E0422: "the demand file names a queue its cluster does not have",
    E0423: "the demand file names a pool or NodePool its cluster does not have",
    E0424: "a duration or time in the demand file cannot be read",
    E0425: "a rate in the demand file cannot be read",
    E0426: "a demand series has two shapes, or a workload both replicas and a metric",
    E0427: "a CSV series of the demand file cannot be read",
    E0428: "a minimum above its maximum in the demand file",
    E0429: "a demand metric that no autoscaler of the workload reads",
    E0430: "the demand file names an instance type, family or zone the cluster's NodePools cannot launch",
    E0440: "a path in gpuplan.kdl or the demand file leads outside the repository",
    E0441: "a setting that takes one value is written twice",
    E0451: "an input asks for more work than one of gpuplan's limits allows",
}

/// The line that ends the explanation and starts the failing example in `codes/<code>.md`.
const EXAMPLE_HEADING: &str = "\n## Example\n";

/// A failing example: the files to write into an empty directory and the command that fails there with the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// (path relative to the directory, the file's text), in the order written.
    pub files: Vec<(&'static str, &'static str)>,
    /// The command as words, `gpuplan` first: `["gpuplan", "compile"]`.
    pub command: Vec<&'static str>,
}

impl ErrorCode {
    /// The code a string names (`"E0107"`), if it is one of the table.
    pub fn parse(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == code)
    }

    /// What is wrong, why gpuplan refuses it and how to fix it (Markdown, without the example).
    pub fn explanation(self) -> &'static str {
        let text = self.markdown();
        text.split_once(EXAMPLE_HEADING).map_or(text, |(explanation, _)| explanation).trim()
    }

    /// The failing example as Markdown: what follows the `## Example` line of `codes/<code>.md`.
    pub fn example_markdown(self) -> &'static str {
        let text = self.markdown();
        text.split_once(EXAMPLE_HEADING).map_or("", |(_, example)| example).trim()
    }

    /// The failing example of `codes/<code>.md` (see the module doc for its format).
    pub fn example(self) -> Example {
        let text = self.markdown();
        let start = text.find(EXAMPLE_HEADING).map_or(text.len(), |at| at + EXAMPLE_HEADING.len());
        let mut example = Example { files: Vec::new(), command: Vec::new() };
        let mut block: Option<(&str, usize)> = None;
        let mut offset = start;
        for line in text[start..].split_inclusive('\n') {
            let at = offset;
            offset += line.len();
            let Some(info) = line.strip_prefix("```") else { continue };
            match block.take() {
                None => block = Some((info.trim(), offset)),
                Some(("console", body)) => {
                    let words = text[body..at].lines().filter_map(|l| l.strip_prefix("$ ")).flat_map(str::split_whitespace);
                    example.command.extend(words);
                }
                Some((info, body)) => {
                    let path = info.split_whitespace().nth(1).unwrap_or_default();
                    example.files.push((path, &text[body..at]));
                }
            }
        }
        example
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The code a diagnostic carries: an error of the table, or a lint rule's (`report::lint::RULES`, a stage above this
/// one, hands its codes over as strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiagnosticCode {
    Error(ErrorCode),
    Lint(&'static str),
}

impl DiagnosticCode {
    /// The code as printed: `E0107`, `GP001`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::Error(code) => code.as_str(),
            DiagnosticCode::Lint(code) => code,
        }
    }

    /// The error of the table, for an error's code.
    pub fn error(self) -> Option<ErrorCode> {
        match self {
            DiagnosticCode::Error(code) => Some(code),
            DiagnosticCode::Lint(_) => None,
        }
    }
}

impl From<ErrorCode> for DiagnosticCode {
    fn from(code: ErrorCode) -> DiagnosticCode {
        DiagnosticCode::Error(code)
    }
}

/// A lint rule's code; a string that spells an error of the table is that error (so a call site not yet written
/// with `ErrorCode` still carries the table's code).
impl From<&'static str> for DiagnosticCode {
    fn from(code: &'static str) -> DiagnosticCode {
        ErrorCode::parse(code).map_or(DiagnosticCode::Lint(code), DiagnosticCode::Error)
    }
}

/// By the printed code, as diagnostics were sorted when codes were strings.
impl Ord for DiagnosticCode {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for DiagnosticCode {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for DiagnosticCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for DiagnosticCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
