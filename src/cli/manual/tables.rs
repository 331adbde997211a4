//! What clap does not know about a command: its exit codes, the environment it reads, and examples. One entry per
//! command, keyed by its words after `gpuplan` ("" is gpuplan itself, "catalog refresh" a nested one); the tests in
//! [`super`] fail for a command clap knows that has no entry here.

/// An environment variable gpuplan reads, and which commands read it.
pub struct EnvVar {
    pub name: &'static str,
    /// The commands (as keys) that read it; empty: every command.
    pub commands: &'static [&'static str],
    pub doc: &'static str,
}

/// Commands that read input files, bounded by GPUPLAN_MAX_INPUT_BYTES.
const READERS: &[&str] = &["compile", "diff", "commit", "lint", "explain", "simulate", "forecast", "catalog import", "catalog refresh", "adopt"];
/// Commands that compile and warn on an old catalog, reading the wall clock.
const COMPILERS: &[&str] = &["compile", "diff", "commit", "lint", "explain", "forecast", "catalog refresh"];
/// Commands that take the one-writer lock of out/.
const WRITERS: &[&str] = &["compile", "commit", "catalog refresh"];

/// Every environment variable gpuplan reads (tests/reference_docs.rs fails for one read in src/ and missing here).
pub const ENVIRONMENT: &[EnvVar] = &[
    EnvVar { name: "NO_COLOR", commands: &[], doc: "When set and not empty, no colour unless --color always (https://no-color.org)." },
    EnvVar { name: "GPUPLAN_LOCK_TIMEOUT", commands: WRITERS, doc: "Seconds a writer waits for another one writing the same out/ (default 60); --lock-timeout wins." },
    EnvVar { name: "GPUPLAN_MAX_INPUT_BYTES", commands: READERS, doc: "The largest input file read, in bytes (default 64 MiB); a bigger one is an error." },
    EnvVar { name: "GPUPLAN_MAX_PODS", commands: &["simulate", "diff"], doc: "The most pods one simulation takes (default 100000)." },
    EnvVar { name: "GPUPLAN_MAX_POOLS", commands: COMPILERS, doc: "The most pools one compile takes, over every profile (default 20000)." },
    EnvVar { name: "GPUPLAN_MAX_FORECAST_EVENTS", commands: &["compile", "forecast", "diff"], doc: "The most random events (Jobs, spot interruptions, shortages) one forecast draw of one cluster and seed is expected to produce, from the demand file's rates (default 20000)." },
    EnvVar { name: "GPUPLAN_MAX_SIMULATED_DAYS", commands: &["compile", "forecast", "diff"], doc: "The most simulated days one forecast replays: clusters × horizon days × seeds (default 1500)." },
    EnvVar { name: "GPUPLAN_MAX_CSV_BYTES", commands: &["compile", "forecast", "diff"], doc: "The most bytes of the distinct CSV files one demand file reads, together (default 64 MiB)." },
    EnvVar { name: "GPUPLAN_MAX_CSV_ROWS", commands: &["compile", "forecast", "diff"], doc: "The most rows of a demand file's CSV series, counted per series naming the file (default 2000000)." },
    EnvVar { name: "GPUPLAN_TEMPLATE_FUEL", commands: COMPILERS, doc: "The most template instructions (minijinja fuel) the renders of one compile run together (default 10000000)." },
    EnvVar { name: "GPUPLAN_MAX_RENDERED_BYTES", commands: COMPILERS, doc: "The most bytes the template renders of one compile write, together (default 256 MiB)." },
    EnvVar { name: "GPUPLAN_MAX_BASE_OUT_BYTES", commands: &["diff", "commit"], doc: "The most bytes of the base's out/ (and base profiles) read from git, together (default 256 MiB)." },
    EnvVar { name: "GPUPLAN_MAX_MEMORY_BYTES", commands: &[], doc: "The most bytes of memory the process holds at once, the backstop for growth no other limit counts: past it the run stops with exit 2 (default 4096 MiB)." },
    EnvVar { name: "GPUPLAN_NOW", commands: COMPILERS, doc: "The wall clock (RFC 3339, 2026-11-27T00:00:00Z) instead of the system's: the catalog-age warning, the review comment's catalog age (SOURCE_DATE_EPOCH wins there) and the date catalog refresh records. For tests and docs." },
    EnvVar { name: "SOURCE_DATE_EPOCH", commands: &["diff"], doc: "The clock (seconds since 1970) of the review comment's catalog-age footer (the reproducible-builds convention)." },
    EnvVar { name: "GIT_AUTHOR_NAME", commands: &["commit"], doc: "With GIT_AUTHOR_EMAIL: the commit's author, instead of the repository's user.name and user.email." },
    EnvVar { name: "GIT_AUTHOR_EMAIL", commands: &["commit"], doc: "See GIT_AUTHOR_NAME." },
    EnvVar { name: "GIT_COMMITTER_NAME", commands: &["commit"], doc: "With GIT_COMMITTER_EMAIL: the commit's committer (default: the author)." },
    EnvVar { name: "GIT_COMMITTER_EMAIL", commands: &["commit"], doc: "See GIT_COMMITTER_NAME." },
    EnvVar { name: "AWS_PROFILE", commands: &["catalog refresh"], doc: "The AWS credentials profile; refresh uses the standard AWS credential chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, web identity, SSO, instance roles)." },
    EnvVar { name: "AWS_ACCESS_KEY_ID", commands: &["catalog refresh"], doc: "With AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN): static credentials for the EC2 and Price List APIs." },
    EnvVar { name: "AWS_SECRET_ACCESS_KEY", commands: &["catalog refresh"], doc: "See AWS_ACCESS_KEY_ID." },
    EnvVar { name: "AWS_SESSION_TOKEN", commands: &["catalog refresh"], doc: "See AWS_ACCESS_KEY_ID." },
    EnvVar { name: "AWS_CONFIG_FILE", commands: &["catalog refresh"], doc: "Where the AWS config file is (default ~/.aws/config)." },
    EnvVar { name: "AWS_SHARED_CREDENTIALS_FILE", commands: &["catalog refresh"], doc: "Where the AWS credentials file is (default ~/.aws/credentials)." },
];

/// Exit codes of a run that fails (usage errors included) and of one that does what it was asked.
const OK: (u8, &str) = (0, "Success.");
const ERROR: (u8, &str) = (2, "An error (a usage error, a diagnostic in the profiles, an input that cannot be read); nothing is written.");

/// Each command's exit codes and what they mean, as its `run` returns them.
pub const EXIT_STATUS: &[(&str, &[(u8, &str)])] = &[
    ("", &[OK, (1, "Differences or findings: compile --check (out/ stale), diff --exit-code, lint --deny-warnings, simulate --exit-code (pods pending), adopt (placement changes not accepted)."), ERROR, (3, "diff --fail-on: a policy denies the change.")]),
    ("compile", &[(0, "out/ written, or already current."), (1, "With --check: out/ is stale (the diff is on stdout)."), ERROR]),
    ("diff", &[(0, "Printed the diff (with --exit-code: out/ is current)."), (1, "With --exit-code: out/ would change."), ERROR, (3, "A --fail-on policy denies the change.")]),
    ("commit", &[(0, "Committed, or nothing to commit."), ERROR]),
    ("lint", &[(0, "Linted (findings are warnings)."), (1, "With --deny-warnings: there are findings."), ERROR]),
    ("explain", &[OK, ERROR]),
    ("simulate", &[(0, "Simulated (pending pods are reported)."), (1, "With --exit-code: a pod stays pending."), ERROR]),
    ("forecast", &[(0, "Forecast printed (and the picture written with --svg)."), (2, "An error: no demand file (it says which file to write), a diagnostic in it or in the profiles, an unknown --cluster; nothing is written.")]),
    ("catalog", &[OK, ERROR]),
    ("catalog import", &[(0, "The snapshot is written."), (2, "An error, or an input that looks truncated (refused; see --accept-shrink).")]),
    ("catalog refresh", &[(0, "The snapshots are written."), (2, "An error: AWS unreachable or refused, or an answer that looks truncated (see --accept-shrink).")]),
    ("completions", &[OK, ERROR]),
    ("man", &[OK, (2, "An unknown command, or a page that cannot be written.")]),
    ("schema", &[OK, ERROR]),
    ("adopt", &[(0, "Adopted; compiling the profiles places pods as the originals do."), (1, "The verification found changes (not accepted with --accept-changes)."), ERROR]),
    ("explain-error", &[OK, (2, "An unknown code (the nearest codes are named).")]),
    ("init", &[(0, "The starter profile is written."), (2, "The file exists (see --force), or an unknown preset, region or name; nothing is written.")]),
    ("catalog list", &[OK, (2, "An unknown GPU name, region or filter value (the region's names are listed).")]),
    ("catalog show", &[OK, (2, "An unknown instance type (the nearest names are given).")]),
];

/// Each command's examples: what it does, the command line.
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    ("", &[("Compile the profiles under profiles/ into out/", "gpuplan compile"), ("Fail in CI when out/ is stale", "gpuplan compile --check"), ("Explain why the plan is what it is", "gpuplan explain")]),
    ("compile", &[("Compile every profile under profiles/ into out/", "gpuplan compile"), ("Exit 1 with a diff when out/ is stale, changing nothing", "gpuplan compile --check"), ("Compile one profile, printing only errors", "gpuplan compile --quiet profiles/inference.kdl")]),
    ("diff", &[("Show what compile would change in out/", "gpuplan diff"), ("A pull-request comment against main, failing on a removed NodePool", "gpuplan diff --base main --format markdown --fail-on nodepool-removed")]),
    ("commit", &[("Compile and commit the changed files under out/", "gpuplan commit -m \"GPU capacity: raise the inference budget\"")]),
    ("lint", &[("Run the misconfiguration checks, failing on any finding", "gpuplan lint --deny-warnings")]),
    ("explain", &[("Explain every profile", "gpuplan explain"), ("Explain one profile as JSON", "gpuplan explain inference --format json")]),
    ("simulate", &[("Where would these pods go on the compiled NodePools, at what cost", "gpuplan simulate --pods deploy/")]),
    ("forecast", &[("What each cluster will cost over 30 days under gpuplan.demand.kdl", "gpuplan forecast"), ("One cluster over a week, ten seeds, with its picture", "gpuplan forecast --cluster ml-prod --horizon 7d --seeds 10 --svg forecast.svg"), ("As markdown, for a wiki page", "gpuplan forecast --format markdown")]),
    ("catalog", &[("Refresh the us-east-1 snapshot from AWS", "gpuplan catalog refresh --region us-east-1")]),
    ("catalog import", &[("A snapshot from exported EC2 JSON", "gpuplan catalog import --region us-west-2 --instance-types types.json --offerings offerings.json --prices prices.json")]),
    ("catalog refresh", &[("Refresh two regions with the AWS credentials of a profile", "AWS_PROFILE=pricing gpuplan catalog refresh --region us-east-1 --region us-west-2")]),
    ("completions", &[("Bash completion for this shell", "source <(gpuplan completions bash)")]),
    ("man", &[("Read gpuplan-compile(1)", "gpuplan man compile | man -l -"), ("Install every page", "gpuplan man --out-dir /usr/local/share/man/man1")]),
    ("schema", &[("The profile language reference", "gpuplan schema"), ("As JSON, for an editor", "gpuplan schema --format json")]),
    ("adopt", &[("Profiles for the NodePools of a running cluster", "kubectl get nodepools,ec2nodeclasses -o yaml > live.yaml && gpuplan adopt live.yaml")]),
    ("explain-error", &[("What E0142 means and how to fix it", "gpuplan explain-error E0142"), ("The whole error index", "gpuplan explain-error --all")]),
    ("init", &[("A starter inference profile in this repository", "gpuplan init"), ("A training profile for another cluster and region", "gpuplan init --preset training-on-demand --cluster ml-prod --region us-west-2")]),
    ("catalog list", &[("Which GPUs have at least 40 GiB, and what they cost", "gpuplan catalog list --gpu-memory-min 40GiB"), ("Every L4 type as markdown", "gpuplan catalog list --gpu L4 --format markdown")]),
    ("catalog show", &[("Everything the catalog knows about one type", "gpuplan catalog show p5.48xlarge")]),
];
