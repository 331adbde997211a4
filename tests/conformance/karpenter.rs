//! Karpenter v1.14.1's scheduler against `gpuplan simulate` (issue 22). `conformance/karpenter/cmd/oracle` is a drop-in
//! for `gpuplan simulate --format json` built on sigs.k8s.io/karpenter and aws/karpenter-provider-aws (imported as
//! pinned Go modules); each test runs both on the same files and compares, per pod, scheduled vs pending and the
//! NodePool, the grouping of pods into NodeClaims, each NodeClaim's candidate types, and the launch choice where it is
//! deterministic (on-demand and reserved: type, capacity type and zone; spot: the capacity type, since EC2's
//! price-capacity-optimized pick depends on live capacity). Pending reasons are Karpenter's words in both, but
//! formatted differently: only "pending" is compared.
//!
//! Inputs: the simulate fixtures under tests/fixtures/simulate on the examples' out/, every example profile's
//! workloads at max replicas on its own generated manifests, and generated scenarios (seed and count from
//! `GPUPLAN_CONFORMANCE_SEED` and `GPUPLAN_CONFORMANCE_CASES`). Known differences (conformance/KNOWN_DIFFERENCES.md)
//! are the `known_difference_*` tests below.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::simulate;
use serde_json::Value;

use super::go;

pub mod scenarios;

/// One comparison: files for both simulators.
#[derive(Clone)]
pub struct Case {
    pub name: String,
    /// Written into the case's directory before running: (file name, contents).
    pub files: Vec<(String, String)>,
    /// Paths as given to `--manifests` / `--pods`: relative ones are in the case's directory.
    pub manifests: Vec<PathBuf>,
    pub pods: Vec<PathBuf>,
    /// `--daemonsets` of both.
    pub daemonsets: Vec<PathBuf>,
    pub unavailable: Vec<String>,
    /// The catalogs directory both read (`--catalogs`).
    pub catalogs: PathBuf,
    /// gpuplan's `--node-daemons` (None: its default, the four EKS node DaemonSets), given to the oracle as DaemonSets.
    pub node_daemons: Option<Vec<String>>,
}

impl Case {
    fn from_yaml(name: &str, manifests: &str, pods: &str, unavailable: Vec<String>, catalogs: &Path) -> Case {
        Case {
            catalogs: catalogs.to_path_buf(),
            name: name.into(),
            files: vec![("manifests.yaml".into(), manifests.into()), ("pods.yaml".into(), pods.into())],
            manifests: vec!["manifests.yaml".into()],
            pods: vec!["pods.yaml".into()],
            daemonsets: Vec::new(),
            unavailable,
            node_daemons: None,
        }
    }
}

/// Both outputs of a case.
pub struct Outcome {
    pub gpuplan: Result<Value, String>,
    pub oracle: Result<Value, String>,
}

fn oracle() -> Option<PathBuf> {
    go::program("karpenter", "oracle")
}

fn resolve(dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// What `gpuplan simulate` reads for a case in `dir` (its default: the configured add-ons' DaemonSets counted).
fn read_case(dir: &Path, case: &Case) -> Result<simulate::Inputs, String> {
    let resolved = |paths: &[PathBuf]| paths.iter().map(|p| resolve(dir, p)).collect::<Vec<_>>();
    let options = simulate::Options {
        manifests: resolved(&case.manifests),
        pods: resolved(&case.pods),
        daemonsets: resolved(&case.daemonsets),
        add_on_daemonsets: true,
        node_daemons: case.node_daemons.clone(),
        region: None,
        catalogs_dir: case.catalogs.clone(),
        unavailable: Vec::new(),
    };
    simulate::read_inputs(&options).map_err(|e| e.to_string())
}

/// The add-ons' DaemonSets gpuplan counts for a case, written into its directory for the oracle (which knows no
/// add-ons of its own: they are gpuplan's model of the charts, see conformance/KNOWN_DIFFERENCES.md); the file's
/// name, or None when there are none.
fn add_on_daemon_sets_file(dir: &Path, inputs: &Result<simulate::Inputs, String>) -> Option<PathBuf> {
    let objects = &inputs.as_ref().ok()?.add_on_daemon_sets;
    if objects.is_empty() {
        return None;
    }
    // JSON is YAML: one document per DaemonSet.
    let text: String = objects.iter().map(|o| format!("---\n{o}\n")).collect();
    std::fs::write(dir.join("add-on-daemonsets.yaml"), text).unwrap();
    Some(PathBuf::from("add-on-daemonsets.yaml"))
}

/// gpuplan's side, in process: what `gpuplan simulate` does (simulate::simulate), with each catalog loaded once.
fn run_gpuplan(case: &Case, inputs: Result<simulate::Inputs, String>, catalogs: &mut BTreeMap<PathBuf, gpuplan::catalog::Catalog>) -> Result<Value, String> {
    let unavailable = case.unavailable.iter().map(|u| u.parse::<simulate::Unavailable>()).collect::<Result<Vec<_>, _>>()?;
    let inputs = inputs?;
    let path = case.catalogs.join(format!("{}.json", inputs.region));
    if !catalogs.contains_key(&path) {
        let catalog = gpuplan::catalog::Catalog::load(&case.catalogs, &inputs.region).map_err(|e| e.to_string())?;
        catalogs.insert(path.clone(), catalog);
    }
    let report = simulate::run(&catalogs[&path], &inputs.manifests, &inputs.pods, &unavailable);
    serde_json::from_str(&simulate::report::render(&report, simulate::Format::Json)).map_err(|e| e.to_string())
}

/// Runs every case through both: the oracle in `workers` batch processes (one process for many cases: a Go process
/// start and the catalog load are most of a small case's time), gpuplan in this process meanwhile.
pub fn run(oracle: &Path, root: &Path, cases: &[Case]) -> Vec<Outcome> {
    let _ = std::fs::remove_dir_all(root);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let mut dirs = Vec::new();
    let mut inputs = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let dir = root.join(format!("batch-{}", i % workers)).join(&case.name);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &case.files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let read = read_case(&dir, case);
        let daemonsets: Vec<PathBuf> = case.daemonsets.iter().cloned().chain(add_on_daemon_sets_file(&dir, &read)).collect();
        let args = serde_json::json!({
            "manifests": case.manifests, "pods": case.pods, "daemonsets": daemonsets, "unavailable": case.unavailable,
            "catalogs": case.catalogs, "eni_limits": go::root().join("src/simulate/eni-limits.tsv"),
        });
        std::fs::write(dir.join("args.json"), args.to_string()).unwrap();
        dirs.push(dir);
        inputs.push(read);
    }
    let children: Vec<_> = (0..workers.min(cases.len()))
        .map(|w| Command::new(oracle).arg("batch").arg(root.join(format!("batch-{w}"))).spawn().expect("start the oracle"))
        .collect();
    let mut catalogs = BTreeMap::new();
    let ours: Vec<Result<Value, String>> = cases.iter().zip(inputs).map(|(c, i)| run_gpuplan(c, i, &mut catalogs)).collect();
    for mut c in children {
        let status = c.wait().unwrap();
        assert!(status.success(), "oracle batch failed: {status}");
    }
    ours.into_iter()
        .zip(&dirs)
        .map(|(g, d)| {
            let oracle = match std::fs::read_to_string(d.join("oracle.json")) {
                Ok(t) => serde_json::from_str(&t).map_err(|e| e.to_string()),
                Err(_) => Err(std::fs::read_to_string(d.join("oracle.err")).unwrap_or_else(|_| "no output".into())),
            };
            Outcome { gpuplan: g, oracle }
        })
        .collect()
}

/// What is compared of a report: per pod its NodePool or pending; per NodeClaim (keyed by its pods) the NodePool,
/// candidates, capacity type, and for on-demand/reserved the type and zone; whether it is a static NodePool's replica.
/// A replica that holds no pod is keyed by its NodePool and its rank among that pool's empty replicas (a pool's
/// replicas are launched alike), so how many stay empty is compared too.
#[derive(Debug, PartialEq, Eq)]
pub struct Comparable {
    pub placement: BTreeMap<String, String>,
    pub claims: BTreeMap<Vec<String>, String>,
}

const PENDING: &str = "(pending)";

pub fn comparable(r: &Value) -> Comparable {
    let mut placement = BTreeMap::new();
    let mut claims = BTreeMap::new();
    for (pods, c) in keyed_claims(r) {
        let pool = c["nodepool"].as_str().unwrap_or("").to_string();
        let replica = if c["static"] == true { "static replica, " } else { "" };
        for p in c["pods"].as_array().into_iter().flatten() {
            placement.insert(p.as_str().unwrap_or("").to_string(), pool.clone());
        }
        let ct = c["capacity_type"].as_str().unwrap_or("");
        let candidates: Vec<&str> = c["candidates"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let launch = if ct == "spot" { "spot, one of the candidates".to_string() } else { format!("{ct} {} in {}", c["instance_type"].as_str().unwrap_or(""), c["zone"].as_str().unwrap_or("")) };
        claims.insert(pods, format!("NodePool {pool}: {replica}{launch}; candidates [{}]", candidates.join(" ")));
    }
    for p in r["pending"].as_array().into_iter().flatten() {
        placement.insert(p["pod"].as_str().unwrap_or("").to_string(), PENDING.into());
    }
    Comparable { placement, claims }
}

/// Each NodeClaim of a report with its key: its pods, or for one with none (a static replica) its NodePool and rank
/// among that pool's empty NodeClaims.
fn keyed_claims(r: &Value) -> Vec<(Vec<String>, &Value)> {
    let mut empty: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for c in r["nodeclaims"].as_array().into_iter().flatten() {
        let mut pods: Vec<String> = c["pods"].as_array().into_iter().flatten().map(|p| p.as_str().unwrap_or("").to_string()).collect();
        if pods.is_empty() {
            let pool = c["nodepool"].as_str().unwrap_or("");
            let rank = empty.entry(pool).or_default();
            *rank += 1;
            pods = vec![format!("(empty NodeClaim {rank} of NodePool {pool})")];
        }
        out.push((pods, c));
    }
    out
}

/// The differences, readable; empty when both agree.
pub fn differences(o: &Outcome) -> Vec<String> {
    let (g, k) = match (&o.gpuplan, &o.oracle) {
        (Ok(g), Ok(k)) => (g, k),
        (g, k) => {
            return match (g, k) {
                (Err(a), Err(_)) => vec![format!("both failed (gpuplan: {a})")],
                (Err(a), _) => vec![format!("gpuplan failed: {a}")],
                (_, Err(b)) => vec![format!("oracle failed: {b}")],
                _ => unreachable!(),
            }
        }
    };
    let (g, k) = (comparable(g), comparable(k));
    let mut out = Vec::new();
    let pods: BTreeSet<&String> = g.placement.keys().chain(k.placement.keys()).collect();
    for p in pods {
        let (a, b) = (g.placement.get(p).map_or("(absent)", String::as_str), k.placement.get(p).map_or("(absent)", String::as_str));
        if a != b {
            out.push(format!("pod {p}: gpuplan {a}, karpenter {b}"));
        }
    }
    let groups: BTreeSet<&Vec<String>> = g.claims.keys().chain(k.claims.keys()).collect();
    for pods in groups {
        match (g.claims.get(pods), k.claims.get(pods)) {
            (Some(a), Some(b)) if a != b => out.push(format!("NodeClaim of [{}]:\n    gpuplan   {a}\n    karpenter {b}", pods.join(" "))),
            (Some(a), None) => out.push(format!("NodeClaim of [{}] only in gpuplan: {a}", pods.join(" "))),
            (None, Some(b)) => out.push(format!("NodeClaim of [{}] only in karpenter: {b}", pods.join(" "))),
            _ => {}
        }
    }
    out
}

fn report_of(cases: &[Case], outcomes: &[Outcome]) -> String {
    let mut text = String::new();
    for (c, o) in cases.iter().zip(outcomes) {
        let d = differences(o);
        if !d.is_empty() {
            let _ = writeln!(text, "case {}:\n  {}", c.name, d.join("\n  "));
        }
    }
    text
}

fn fixture_cases() -> Vec<Case> {
    let root = go::root();
    let mut cases = Vec::new();
    for e in std::fs::read_dir(root.join("tests/fixtures/simulate")).unwrap() {
        let path = e.unwrap().path();
        let cluster = path.file_stem().unwrap().to_string_lossy().to_string();
        let manifests = vec![root.join("out").join(&cluster)];
        cases.push(Case { name: format!("fixture-{cluster}"), files: Vec::new(), manifests, pods: vec![path], daemonsets: Vec::new(), unavailable: Vec::new(), catalogs: root.join("catalogs"), node_daemons: None });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

// The fixtures `gpuplan simulate` is documented with (tests/fixtures/simulate/<cluster>.yaml on out/<cluster>):
// one workload per pool, tolerating its taints, and a pod without tolerations that stays pending.
#[test]
fn fixture_pods_on_the_examples_out_schedule_as_karpenter_schedules_them() {
    let Some(oracle) = oracle() else { return };
    let cases = fixture_cases();
    assert!(cases.len() >= 4, "the simulate fixtures are there");
    let outcomes = run(&oracle, &go::root().join("target/conformance/karpenter-fixtures"), &cases);
    let report = report_of(&cases, &outcomes);
    assert!(report.is_empty(), "gpuplan simulate and Karpenter disagree:\n{report}");
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// The generated cases of a seed: case `i` depends only on the seed and `i`, so a range reproduces alone.
pub fn generated_cases(seed: u64, count: u64) -> Vec<Case> {
    let catalogs: Vec<PathBuf> = (0..CATALOG_SLICES).map(scenario_catalogs).collect();
    (0..count)
        .map(|i| {
            let mut r = scenarios::Rng::new(seed ^ i.wrapping_mul(0xA24B_AED4_963E_E407));
            let s = scenarios::scenario(&mut r);
            Case::from_yaml(&format!("seed-{seed}-case-{i:06}"), &s.manifests, &s.pods, s.unavailable, &catalogs[i as usize % CATALOG_SLICES])
        })
        .collect()
}

/// Generated case `i` runs on catalog slice `i % CATALOG_SLICES`, so every `CATALOG_SLICES` consecutive cases cover
/// the whole catalog.
const CATALOG_SLICES: usize = 5;

/// The catalog of one slice: us-east-1's types of the families the generator names, and every fifth other type,
/// starting at the `slice`th (Karpenter's scheduler spends most of a small case building topology domains and
/// filtering over every type, so one case does not get them all). Written once under target/conformance/catalogs-N/.
fn scenario_catalogs(slice: usize) -> PathBuf {
    let dir = go::root().join(format!("target/conformance/catalogs-{slice}"));
    let mut catalog: Value = serde_json::from_str(&std::fs::read_to_string(go::root().join("catalogs/us-east-1.json")).unwrap()).unwrap();
    let types = catalog["instance_types"].as_array_mut().unwrap();
    let mut i = 0;
    types.retain(|t| {
        i += 1;
        let family = t["family"].as_str().unwrap_or("");
        scenarios::FAMILIES.contains(&family) || scenarios::GPU_FAMILIES.contains(&family) || i % CATALOG_SLICES == slice
    });
    let text = serde_json::to_string_pretty(&catalog).unwrap();
    let path = dir.join("us-east-1.json");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!("us-east-1.json.{}", std::process::id()));
        std::fs::write(&tmp, &text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    }
    dir
}

/// Writes a disagreement's reproducer: its inputs, both outputs, the differences, and the command lines.
fn write_reproducer(dir: &Path, case: &Case, outcome: &Outcome, diffs: &[String]) {
    let d = dir.join(&case.name);
    std::fs::create_dir_all(&d).unwrap();
    for (name, text) in &case.files {
        std::fs::write(d.join(name), text).unwrap();
    }
    let show = |r: &Result<Value, String>| match r {
        Ok(v) => serde_json::to_string_pretty(v).unwrap(),
        Err(e) => format!("error: {e}"),
    };
    std::fs::write(d.join("gpuplan.json"), show(&outcome.gpuplan)).unwrap();
    std::fs::write(d.join("oracle.json"), show(&outcome.oracle)).unwrap();
    let unavailable: String = case.unavailable.iter().map(|u| format!(" --unavailable {u}")).collect();
    let mut text = diffs.join("\n") + "\n\nreproduce (from the repository root):\n";
    let catalogs = case.catalogs.display();
    let _ = writeln!(text, "  gpuplan simulate --manifests {0}/manifests.yaml --pods {0}/pods.yaml --catalogs {catalogs}{unavailable} --format json", d.display());
    let _ = writeln!(text, "  $(conformance/run --print-oracle) simulate --manifests {0}/manifests.yaml --pods {0}/pods.yaml --catalogs {catalogs} --eni-limits src/simulate/eni-limits.tsv{unavailable} --format json", d.display());
    std::fs::write(d.join("differences.txt"), text).unwrap();
}

/// At most this many runs of both sides go into minimizing one disagreement.
const MINIMIZE_RUNS: usize = 60;

/// A smaller case that still disagrees: documents of the pods and manifests files dropped one at a time, and each
/// workload's replicas cut to one, kept whenever both sides still run and still differ (delta debugging, one document
/// at a time); at most [`MINIMIZE_RUNS`] runs of both.
fn minimize(oracle: &Path, case: &Case, outcome: Outcome) -> (Case, Outcome) {
    let mut best = (case.clone(), outcome);
    let mut runs = 0;
    let scratch = go::root().join(format!("target/conformance/karpenter-minimize/{}", case.name));
    'shrink: while runs < MINIMIZE_RUNS {
        for (f, (name, text)) in best.0.files.iter().enumerate() {
            let docs: Vec<&str> = text.split("---\n").filter(|d| !d.trim().is_empty()).collect();
            for i in 0..docs.len() {
                let cut_replicas = docs[i].contains("replicas: ") && !docs[i].contains("replicas: 1\n");
                let smaller_doc = cut_replicas.then(|| one_replica(docs[i]));
                let variants = [Some(None), smaller_doc.map(Some)];
                for variant in variants.into_iter().flatten() {
                    if runs >= MINIMIZE_RUNS {
                        break 'shrink;
                    }
                    runs += 1;
                    let new_docs: Vec<&str> = docs.iter().enumerate().filter_map(|(j, d)| if j == i { variant.as_deref() } else { Some(*d) }).collect();
                    let mut candidate = best.0.clone();
                    candidate.files[f] = (name.clone(), new_docs.iter().map(|d| format!("---\n{d}")).collect());
                    let o = run(oracle, &scratch, std::slice::from_ref(&candidate)).pop().unwrap();
                    if o.gpuplan.is_ok() && o.oracle.is_ok() && !differences(&o).is_empty() {
                        best = (candidate, o);
                        continue 'shrink;
                    }
                }
            }
        }
        break;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    best
}

/// A workload document with `replicas: 1`.
fn one_replica(doc: &str) -> String {
    doc.lines().map(|l| if l.trim_start().starts_with("replicas: ") { format!("{}replicas: 1", &l[..l.len() - l.trim_start().len()]) } else { l.to_string() }).collect::<Vec<_>>().join("\n") + "\n"
}

// Generated scenarios (scenarios.rs) from a fixed seed: `GPUPLAN_CONFORMANCE_CASES` (default 1200, a regression guard within CI's 30 minutes; `conformance/run` runs 2,000 by default and 5,000 at length) cases from
// `GPUPLAN_CONFORMANCE_SEED` (default 22). Every disagreement must be a listed known difference; each one's reproducer
// is written under target/conformance/karpenter-disagreements/seed-<seed>/. The last line printed is
// `agreement: A/N cases` (what conformance/run reports).
#[test]
fn generated_scenarios_schedule_as_karpenter_schedules_them() {
    let Some(oracle) = oracle() else { return };
    let seed = env_number("GPUPLAN_CONFORMANCE_SEED", 22);
    let count = env_number("GPUPLAN_CONFORMANCE_CASES", 1200);
    let cases = generated_cases(seed, count);
    let outcomes = run(&oracle, &go::root().join(format!("target/conformance/karpenter-seed-{seed}")), &cases);
    let out_dir = go::root().join(format!("target/conformance/karpenter-disagreements/seed-{seed}"));
    let _ = std::fs::remove_dir_all(&out_dir);
    let mut agree = 0;
    let mut known: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    let mut unexplained_cases = Vec::new();
    let mut varying = Vec::new();
    for (i, (case, outcome)) in cases.iter().zip(&outcomes).enumerate() {
        let diffs = differences(outcome);
        if diffs.is_empty() {
            agree += 1;
            continue;
        }
        if topology_varies(case) {
            varying.push(i);
            continue;
        }
        write_reproducer(&out_dir, case, outcome, &diffs);
        match known_difference(case, outcome) {
            Some(k) => *known.entry(k).or_default() += 1,
            None => {
                unexplained.push(format!("case {} ({}):\n  {}", case.name, out_dir.join(&case.name).display(), diffs.join("\n  ")));
                unexplained_cases.push(i);
            }
        }
    }
    let (rerun_agree, topology_known, topology_unexplained) = judge_varying_topology(&oracle, seed, &cases, &outcomes, &varying, &out_dir);
    agree += rerun_agree;
    if topology_known > 0 {
        known.insert("topology_domain_choice", topology_known);
    }
    if rerun_agree > 0 {
        eprintln!("topology cases that matched one of Karpenter's reruns: {rerun_agree}");
    }
    // A case that may vary can still differ for a reason of its own (an equal price at the 60-type cut).
    for (i, text) in topology_unexplained {
        match known_difference(&cases[i], &outcomes[i]) {
            Some(k) => *known.entry(k).or_default() += 1,
            None => {
                unexplained.push(text);
                unexplained_cases.push(i);
            }
        }
    }
    // The first few unexplained disagreements also get a minimized reproducer beside the full one.
    for i in unexplained_cases.iter().copied().take(3) {
        let (small, o) = minimize(&oracle, &cases[i], Outcome { gpuplan: outcomes[i].gpuplan.clone(), oracle: outcomes[i].oracle.clone() });
        write_reproducer(&out_dir.join("minimized"), &small, &o, &differences(&o));
        eprintln!("minimized reproducer of {}: {}", cases[i].name, out_dir.join("minimized").join(&cases[i].name).display());
    }
    for (k, n) in &known {
        eprintln!("known difference {k}: {n} case(s)");
    }
    if !unexplained.is_empty() {
        eprintln!("{} disagreement(s) not explained by a known difference; reproducers in {}", unexplained.len(), out_dir.display());
    }
    eprintln!("agreement: {agree}/{count} cases");
    let shown: Vec<&String> = unexplained.iter().take(10).collect();
    assert!(unexplained.is_empty(), "{} of {count} generated cases disagree (seed {seed}); the first:\n{}", unexplained.len(), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
}

/// The pods of a case as gpuplan reads them.
fn case_pods(case: &Case) -> Vec<simulate::pods::Pod> {
    let Some((_, text)) = case.files.iter().find(|(n, _)| n == "pods.yaml") else { return Vec::new() };
    simulate::yaml::parse_docs(Path::new("pods.yaml"), text).ok().and_then(|d| simulate::pods::pods(&d).ok()).unwrap_or_default()
}

/// Whether Karpenter's result may vary between its own runs: some pod has a spread constraint or a pod
/// (anti-)affinity term on a key other than the hostname, where topologygroup.go picks among tied domains in Go map
/// order; or the case has DaemonSets, whose overhead groups nodeclaim.go `addDaemonRequests` visits in map order
/// (see `simulate::instances::claim_requests`).
fn topology_varies(case: &Case) -> bool {
    let daemon_sets = case.files.iter().any(|(_, text)| text.contains("kind: DaemonSet"));
    daemon_sets || topology_draws_domains(case)
}

/// Whether some pod's spread or pod (anti-)affinity makes Karpenter draw among tied domains (a key other than the
/// hostname): only then may a disagreement be the topology domain choice. A case that varies only through its
/// DaemonSets must match one of Karpenter's runs.
fn topology_draws_domains(case: &Case) -> bool {
    case_pods(case).iter().filter_map(|p| p.topology.as_deref()).any(|t| {
        let terms = [&t.affinity, &t.anti_affinity, &t.preferred_affinity, &t.preferred_anti_affinity];
        t.spread.iter().map(|s| &s.key).chain(terms.into_iter().flatten().map(|a| &a.key)).any(|k| k != "kubernetes.io/hostname")
    })
}

/// Reruns of a case that draws among tied domains before its disagreement is judged: a draw Karpenter makes once in
/// eight runs is missed by all of them with probability 0.875^40 ≈ 0.5%.
const RERUNS_FOR_A_RARE_DRAW: usize = 40;

/// Generated cases whose Karpenter result varies with its map order (`topology_varies`) and that disagree: the oracle
/// runs again, up to eight times (up to [`RERUNS_FOR_A_RARE_DRAW`] for a case that draws among tied domains and whose
/// runs all agreed). A case agrees when gpuplan's report equals one of Karpenter's; else, when Karpenter's
/// own runs differed or only the domains of NodeClaims differ (`only_domains_differ`), and gpuplan's report keeps every
/// DoNotSchedule zone and capacity-type spread within maxSkew, it counts as the known difference "topology domain
/// choice"; else it is unexplained. Returns (agreed, known, unexplained as (case index, description)).
fn judge_varying_topology(oracle: &Path, seed: u64, cases: &[Case], outcomes: &[Outcome], varying: &[usize], out_dir: &Path) -> (usize, usize, Vec<(usize, String)>) {
    let mut pending: Vec<usize> = varying.to_vec();
    let mut varied = vec![false; cases.len()];
    for round in 0..RERUNS_FOR_A_RARE_DRAW {
        // Eight reruns for every case; past them only a case that draws among tied domains and never varied goes on:
        // the domain Go's map order puts second comes first once in eight runs (`only_domains_differ`), and gpuplan may
        // have taken that one. Seed 20296 case 582: 3 of 24 Karpenter runs put the pod where gpuplan does.
        let rerun: Vec<usize> = pending.iter().copied().filter(|&i| round < 8 || (topology_draws_domains(&cases[i]) && !varied[i])).collect();
        if rerun.is_empty() {
            break;
        }
        let subset: Vec<Case> = rerun.iter().map(|&i| cases[i].clone()).collect();
        let again = run(oracle, &go::root().join(format!("target/conformance/karpenter-seed-{seed}-rerun-{round}")), &subset);
        for (&i, o) in rerun.iter().zip(again) {
            let first = outcomes[i].oracle.as_ref().ok().map(comparable);
            varied[i] |= o.oracle.as_ref().ok().map(comparable) != first;
            if differences(&Outcome { gpuplan: outcomes[i].gpuplan.clone(), oracle: o.oracle }).is_empty() {
                pending.retain(|&p| p != i);
            }
        }
    }
    let agreed = varying.len() - pending.len();
    let mut known = 0;
    let mut unexplained = Vec::new();
    for i in pending {
        let diffs = differences(&outcomes[i]);
        write_reproducer(out_dir, &cases[i], &outcomes[i], &diffs);
        let within = outcomes[i].gpuplan.as_ref().is_ok_and(|g| spreads_within_max_skew(&cases[i], g));
        if topology_draws_domains(&cases[i]) && (varied[i] || only_domains_differ(&outcomes[i])) && within {
            known += 1;
        } else {
            let why = if varied[i] { "gpuplan breaks a spread's maxSkew" } else { "Karpenter gave the same result on every run" };
            unexplained.push((i, format!("case {} ({why}; {}):\n  {}", cases[i].name, out_dir.join(&cases[i].name).display(), diffs.join("\n  "))));
        }
    }
    (agreed, known, unexplained)
}

/// Whether both reports put every pod on the same NodePool and group them into the same NodeClaims with the same
/// candidates, and differ only in a NodeClaim's capacity type or zone: the tied domain Karpenter drew. Go's small-map
/// iteration starts at a random one of eight slots, so the value inserted first comes first seven times in eight
/// (go1.26 src/internal/runtime/maps/table.go `Iter.Init`, `entryOffset`); nine equal Karpenter runs are then likely (0.875^9 ≈ 0.3)
/// and say nothing about which domain gpuplan should pick.
fn only_domains_differ(o: &Outcome) -> bool {
    let (Ok(g), Ok(k)) = (&o.gpuplan, &o.oracle) else { return false };
    let (g, k) = (comparable(g), comparable(k));
    let without_launch = |claim: &String| claim.split_once(": ").zip(claim.split_once("; candidates")).map(|((pool, _), (_, candidates))| format!("{pool} {candidates}"));
    g.placement == k.placement && g.claims.len() == k.claims.len() && g.claims.iter().all(|(pods, c)| k.claims.get(pods).is_some_and(|d| without_launch(c) == without_launch(d)))
}

/// Every DoNotSchedule spread on zone or capacity type of a scheduled pod holds in the report: among the domains the
/// selected pods landed in, the counts differ by at most maxSkew (a weaker check than Karpenter's, whose minimum also
/// counts empty domains, so a valid report always passes).
fn spreads_within_max_skew(case: &Case, report: &Value) -> bool {
    let pods = case_pods(case);
    let mut domain_of: BTreeMap<String, (String, String)> = BTreeMap::new();
    for c in report["nodeclaims"].as_array().into_iter().flatten() {
        for p in c["pods"].as_array().into_iter().flatten() {
            domain_of.insert(p.as_str().unwrap_or("").to_string(), (c["zone"].as_str().unwrap_or("").to_string(), c["capacity_type"].as_str().unwrap_or("").to_string()));
        }
    }
    pods.iter().filter(|p| domain_of.contains_key(&p.key)).filter_map(|p| p.topology.as_deref()).all(|t| {
        t.spread.iter().filter(|s| !s.schedule_anyway && (s.key == "topology.kubernetes.io/zone" || s.key == "karpenter.sh/capacity-type")).all(|s| {
            let mut counts: BTreeMap<&String, i32> = BTreeMap::new();
            for q in &pods {
                let (ns, labels) = q.topology.as_deref().map_or((q.key.split('/').next().unwrap_or(""), None), |u| (u.namespace.as_str(), Some(&u.labels)));
                let selected = ns == t.namespace && s.selector.as_ref().is_some_and(|sel| sel.matches(labels.unwrap_or(&BTreeMap::new())));
                if let (true, Some((zone, ct))) = (selected, domain_of.get(&q.key)) {
                    *counts.entry(if s.key.ends_with("zone") { zone } else { ct }).or_default() += 1;
                }
            }
            counts.values().max().zip(counts.values().min()).is_none_or(|(max, min)| max - min <= s.max_skew)
        })
    })
}

/// Which known difference (conformance/KNOWN_DIFFERENCES.md) explains a disagreement, if any.
fn known_difference(case: &Case, outcome: &Outcome) -> Option<&'static str> {
    let (Ok(g), Ok(k)) = (&outcome.gpuplan, &outcome.oracle) else { return None };
    if equal_prices_at_the_cut(case, g, k) {
        return Some("equal_prices_at_the_60_type_cut");
    }
    if reserved_capacity_scheduling(case, g, k) {
        return Some("reserved_capacity_with_min_values");
    }
    None
}

/// The cheapest price of each catalog type (its on-demand or any spot price), for classifying truncation ties.
fn cheapest_prices(catalogs: &Path) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(catalogs.join("us-east-1.json")).unwrap_or_default();
    let catalog: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let mut out = BTreeMap::new();
    for t in catalog["instance_types"].as_array().into_iter().flatten() {
        let prices = t["on_demand"]["usd_per_hour"].as_f64().into_iter().chain(t["spot"].as_object().into_iter().flatten().filter_map(|(_, p)| p["usd_per_hour"].as_f64()));
        out.insert(t["name"].as_str().unwrap_or("").to_string(), prices.fold(f64::MAX, f64::min));
    }
    out
}

/// "Equal prices at the 60-type cut": same pods and NodeClaims, and every claim whose candidates differ has 60 on
/// both sides, the types in only one of them all at one price (Karpenter's unstable sort picks among them).
fn equal_prices_at_the_cut(case: &Case, g: &Value, k: &Value) -> bool {
    let (a, b) = (comparable(g), comparable(k));
    if a.placement != b.placement || a.claims.keys().ne(b.claims.keys()) {
        return false;
    }
    let candidates = |r: &Value, pods: &Vec<String>| -> BTreeSet<String> {
        let (_, c) = keyed_claims(r).into_iter().find(|(p, _)| p == pods).unwrap();
        c["candidates"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
    };
    let prices = cheapest_prices(&case.catalogs);
    a.claims.iter().filter(|(pods, c)| b.claims[*pods] != **c).all(|(pods, _)| {
        let (x, y) = (candidates(g, pods), candidates(k, pods));
        let only: Vec<f64> = x.symmetric_difference(&y).map(|t| prices.get(t).copied().unwrap_or(f64::NAN)).collect();
        x.len() == 60 && y.len() == 60 && !only.is_empty() && only.iter().all(|p| *p == only[0])
    })
}

/// "Reserved capacity and minValues": the case has an EC2NodeClass that selects capacity reservations, a Karpenter
/// launch failed on minValues, and every pod placed differently is on (or pending from) a NodePool of that class.
fn reserved_capacity_scheduling(case: &Case, g: &Value, k: &Value) -> bool {
    let Some((_, manifests)) = case.files.iter().find(|(n, _)| n == "manifests.yaml") else { return false };
    let Ok(docs) = simulate::yaml::parse_docs(Path::new("manifests.yaml"), manifests) else { return false };
    let Ok(m) = simulate::manifests::manifests(&docs) else { return false };
    let reserved_pools: BTreeSet<&str> = m.node_pools.iter().filter(|p| m.node_classes.iter().any(|c| c.name == p.node_class && c.capacity_reservations)).map(|p| p.name.as_str()).collect();
    // Karpenter's launch failed after ReservedOfferingFilter left too few types for minValues (filter.go; the oracle
    // reports such pods pending with "launch: …").
    let launched_reserved = k["pending"].as_array().into_iter().flatten().any(|p| p["reason"].as_str().is_some_and(|r| r.starts_with("launch: ") && r.contains("minValues")));
    if reserved_pools.is_empty() || !launched_reserved {
        return false;
    }
    let (a, b) = (comparable(g), comparable(k));
    let pods: BTreeSet<&String> = a.placement.keys().chain(b.placement.keys()).collect();
    let involved = |p: Option<&String>| p.is_none_or(|pool| pool == PENDING || reserved_pools.contains(pool.as_str()));
    pods.into_iter().all(|p| a.placement.get(p) == b.placement.get(p) || (involved(a.placement.get(p)) && involved(b.placement.get(p))))
        && a.claims.iter().chain(&b.claims).all(|(pods, c)| (a.claims.get(pods) == b.claims.get(pods)) || reserved_pools.iter().any(|p| c.starts_with(&format!("NodePool {p}:"))))
}

/// A simulated pod as YAML (a Pod with one container), for the oracle: requests, nodeSelector, tolerations.
fn pod_yaml(p: &simulate::pods::Pod) -> String {
    // As the Pod object gpuplan hands on (the forecast's trace holds the same), without the workload's topology:
    // this comparison is of placement by requirements and resources (JSON is YAML).
    let object = simulate::pods::Pod { topology: None, ..p.clone() }.to_object();
    format!("---\n{}\n", serde_json::to_string(&object).unwrap())
}

// Every example profile's workloads at max replicas (what compile's E0180/E0181 and explain simulate) on the cluster's
// own out/.
#[test]
fn example_workloads_on_their_own_out_schedule_as_karpenter_schedules_them() {
    let Some(oracle) = oracle() else { return };
    let compiled = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).expect("the examples compile");
    let mut cases = Vec::new();
    for cluster in &compiled.plan.clusters {
        let pods = gpuplan::check::workload_pods(cluster);
        if pods.is_empty() {
            continue;
        }
        let yaml: String = pods.iter().map(pod_yaml).collect();
        cases.push(Case {
            name: format!("examples-{}", cluster.name),
            files: vec![("pods.yaml".into(), yaml)],
            manifests: vec![go::root().join("out").join(&cluster.name)],
            pods: vec!["pods.yaml".into()],
            daemonsets: Vec::new(),
            unavailable: Vec::new(),
            catalogs: go::root().join("catalogs"),
            // The cluster's own: what compile's fit checks counted.
            node_daemons: Some(cluster.node_daemons.clone()),
        });
    }
    assert!(cases.len() >= 2, "the examples declare workloads in several clusters");
    let outcomes = run(&oracle, &go::root().join("target/conformance/karpenter-examples"), &cases);
    for (c, o) in cases.iter().zip(&outcomes) {
        let r = o.gpuplan.as_ref().expect("gpuplan simulates the examples");
        assert!(!r["nodeclaims"].as_array().unwrap().is_empty(), "{}: the workloads launch nodes", c.name);
    }
    let report = report_of(&cases, &outcomes);
    assert!(report.is_empty(), "gpuplan simulate and Karpenter disagree on the examples' workloads:\n{report}");
}

// ---------------------------------------------------------------------------------------------------------------
// Known differences (conformance/KNOWN_DIFFERENCES.md): each test pins today's divergent result on both sides and
// fails once gpuplan models the behaviour, which prompts removing the entry.

const ONE_POOL: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n  role: R\n  subnetSelectorTerms:\n  - tags: {k: v}\n  securityGroupSelectorTerms:\n  - tags: {k: v}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: general\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, m5.2xlarge]}\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n";

fn replicas(n: u32, extra_spec: &str) -> String {
    format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\nspec:\n  replicas: {n}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n{extra_spec}      containers:\n      - name: app\n        image: app:1\n        resources:\n          requests: {{cpu: \"1\", memory: 1Gi}}\n")
}

/// Runs one hand-written case through both; None (with the reason printed) without Go.
fn run_one(name: &str, manifests: &str, pods: &str) -> Option<Outcome> {
    let oracle = oracle()?;
    // One behaviour per case: only the DaemonSets the case names (no EKS node DaemonSets, `--node-daemons none`).
    let case = Case { node_daemons: Some(Vec::new()), ..Case::from_yaml(name, manifests, pods, Vec::new(), &go::root().join("catalogs")) };
    let root = go::root().join(format!("target/conformance/karpenter-known/{name}"));
    Some(run(&oracle, &root, &[case]).pop().unwrap())
}

fn claims(r: &Result<Value, String>) -> Vec<Value> {
    r.as_ref().expect("a report")["nodeclaims"].as_array().unwrap().clone()
}

// ---------------------------------------------------------------------------------------------------------------
// DaemonSet overhead, one behaviour per case, each asserting agreement and the outcome it proves: Karpenter takes the
// requests of the DaemonSets that would run on a node from what pods get (sigs.k8s.io/karpenter v1.14.1
// pkg/controllers/provisioning/scheduling/scheduler.go `buildDaemonOverheadGroups`, `isDaemonPodCompatible`;
// nodeclaim.go `filterInstanceTypesByRequirements`; pkg/scheduling/hostportusage.go).

fn daemon_set(name: &str, cpu: &str, extra_spec: &str) -> String {
    format!("---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: {name}\n  namespace: kube-system\nspec:\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n{extra_spec}      containers:\n      - name: agent\n        image: agent:1\n        resources:\n          requests: {{cpu: {cpu}, memory: 128Mi}}\n")
}

fn type_affinity(types: &str) -> String {
    format!("      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n              - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}\n")
}

/// Runs a hand-written case through both and asserts they agree; the outcome for what the case proves.
fn agreeing(name: &str, manifests: &str, pods: &str) -> Option<Outcome> {
    let o = run_one(name, manifests, pods)?;
    let d = differences(&o);
    assert!(d.is_empty(), "{name}: gpuplan simulate and Karpenter disagree:\n  {}", d.join("\n  "));
    Some(o)
}

fn candidates(r: &Result<Value, String>) -> Vec<Vec<String>> {
    claims(r).iter().map(|c| c["candidates"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()).collect()
}

#[test]
fn a_daemonset_overhead_leaves_a_type_too_small_for_the_pod() {
    let Some(o) = agreeing("daemonset-overhead", ONE_POOL, &(replicas(1, "") + &daemon_set("agent", "1500m", ""))) else { return };
    assert_eq!(candidates(&o.gpuplan), [["m5.2xlarge", "m5.xlarge"]], "1.5 cpu of daemons leave m5.large (1.93 cpu allocatable) too small for 1 cpu");
}

#[test]
fn a_daemonset_that_does_not_tolerate_the_pool_taint_takes_nothing() {
    let tainted = format!("{ONE_POOL}      taints:\n      - {{key: dedicated, value: web, effect: NoSchedule}}\n");
    let tolerate = "      tolerations:\n      - {key: dedicated, operator: Exists}\n";
    let Some(o) = agreeing("daemonset-kept-off-by-taint", &tainted, &(replicas(1, tolerate) + &daemon_set("agent", "1500m", ""))) else { return };
    assert_eq!(candidates(&o.gpuplan), [["m5.2xlarge", "m5.large", "m5.xlarge"]]);
}

#[test]
fn a_daemonset_with_instance_type_affinity_is_overhead_only_on_those_types() {
    let ds = daemon_set("agent", "3", &type_affinity("m5.large, m5.xlarge"));
    let Some(o) = agreeing("daemonset-type-affinity", ONE_POOL, &(replicas(1, "") + &ds)) else { return };
    assert_eq!(candidates(&o.gpuplan), [["m5.2xlarge"]], "3 cpu of daemons on m5.large and m5.xlarge only");
}

fn with_host_port(yaml: &str, image: &str, port: u16) -> String {
    yaml.replace(&format!("        image: {image}\n"), &format!("        image: {image}\n        ports:\n        - {{containerPort: {port}, hostPort: {port}}}\n"))
}

#[test]
fn two_pods_binding_one_host_port_never_share_a_node() {
    let Some(o) = agreeing("host-port-pods", ONE_POOL, &with_host_port(&replicas(2, ""), "app:1", 8080)) else { return };
    assert_eq!(claims(&o.gpuplan).len(), 2);
}

#[test]
fn a_pod_cannot_use_the_types_where_a_daemon_binds_its_host_port() {
    let ds = with_host_port(&daemon_set("exporter", "10m", &type_affinity("m5.large")), "agent:1", 9100);
    let Some(o) = agreeing("host-port-daemon", ONE_POOL, &(with_host_port(&replicas(1, ""), "app:1", 9100) + &ds)) else { return };
    assert_eq!(candidates(&o.gpuplan), [["m5.2xlarge", "m5.xlarge"]]);
}

// nodeclaim.go `addDaemonRequests`: the NodeClaim's final requests take the daemon overhead of the type groups in map
// order, so with groups [no daemons (m5.2xlarge, m5.large), agent (m5.xlarge)] the 1.5 cpu of `agent` are asked of
// every type at launch and m5.large (1.93 cpu) is not launched, though the daemon never runs there. Karpenter takes
// that order seven times in eight (Go map iteration), so its run is repeated until it does (at most five times).
#[test]
fn the_launch_asks_every_type_for_the_overhead_of_the_first_daemon_group() {
    let pods = replicas(1, "") + &daemon_set("agent", "1500m", &type_affinity("m5.xlarge"));
    let mut o = None;
    for attempt in 0..5 {
        let Some(run) = run_one(&format!("daemon-launch-requests-{attempt}"), ONE_POOL, &pods) else { return };
        let agree = differences(&run).is_empty();
        o = Some(run);
        if agree {
            break;
        }
    }
    let o = o.unwrap();
    assert!(differences(&o).is_empty(), "five Karpenter runs all differ from gpuplan: {:?}", differences(&o));
    assert_eq!(candidates(&o.gpuplan), [["m5.2xlarge", "m5.xlarge"]], "m5.large holds the pod but not the pod plus agent's 1.5 cpu");
}

#[test]
fn each_daemon_takes_a_pod_slot_of_max_pods() {
    let max_pods = ONE_POOL.replace("  role: R\n", "  role: R\n  kubelet: {maxPods: 3}\n");
    let small = |name: &str| daemon_set(name, "10m", "");
    let pods = replicas(2, "").replace("cpu: \"1\"", "cpu: 100m");
    let Some(o) = agreeing("daemonset-pod-slots", &max_pods, &(pods + &small("a") + &small("b"))) else { return };
    assert_eq!(claims(&o.gpuplan).len(), 2, "maxPods 3 less two daemons leaves one pod per node");
}

// ---------------------------------------------------------------------------------------------------------------
// Topology spread and pod (anti-)affinity (src/simulate/topology.rs), one behaviour per case, after
// sigs.k8s.io/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/topology_test.go. On hostnames Karpenter is
// deterministic (a NodeClaim is its own domain) and both reports must agree exactly. On zones and other keys Karpenter
// picks among equally used domains in Go map order (random), so those cases either make every tied domain equivalent
// (same candidate types) and compare the reports without the zone, or assert the invariants both sides must keep.

const WEB_SELECTOR: &str = "labelSelector:\n              matchLabels: {app: web}\n";

fn spread(key: &str, max_skew: u32, when: &str, selector_app: &str) -> String {
    format!("      topologySpreadConstraints:\n      - maxSkew: {max_skew}\n        topologyKey: {key}\n        whenUnsatisfiable: {when}\n        labelSelector:\n          matchLabels: {{app: {selector_app}}}\n")
}

fn pod_affinity(kind: &str, required: bool, key: &str) -> String {
    let term = format!("- {}\n            topologyKey: {key}\n", WEB_SELECTOR.trim_end());
    if required {
        format!("      affinity:\n        {kind}:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          {term}")
    } else {
        let term = term.replace("- labelSelector", "- weight: 50\n            podAffinityTerm:\n              labelSelector").replace("\n              matchLabels", "\n                matchLabels").replace("\n            topologyKey", "\n              topologyKey");
        format!("      affinity:\n        {kind}:\n          preferredDuringSchedulingIgnoredDuringExecution:\n          {term}")
    }
}

/// ONE_POOL with another requirement line.
fn pool_with(requirement: &str) -> String {
    ONE_POOL.replace("      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n", &format!("      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}\n      - {requirement}\n"))
}

/// The report with every NodeClaim's zone blanked: for cases where Karpenter's zone is a random pick among
/// equivalent ones.
fn without_zones(r: &Result<Value, String>) -> Result<Value, String> {
    r.clone().map(|mut v| {
        for c in v["nodeclaims"].as_array_mut().into_iter().flatten() {
            c["zone"] = Value::from("");
        }
        v
    })
}

fn assert_agree(name: &str, o: &Outcome) {
    let report = report_of(&[Case::from_yaml(name, "", "", Vec::new(), Path::new(""))], std::slice::from_ref(o));
    assert!(report.is_empty(), "gpuplan simulate and Karpenter disagree:\n{report}");
}

fn assert_agree_but_zones(name: &str, o: &Outcome) {
    assert_agree(name, &Outcome { gpuplan: without_zones(&o.gpuplan), oracle: without_zones(&o.oracle) });
}

fn pods_per_claim(r: &Result<Value, String>) -> Vec<usize> {
    let mut n: Vec<usize> = claims(r).iter().map(|c| c["pods"].as_array().unwrap().len()).collect();
    n.sort();
    n
}

// topology_test.go "should separate nodes using simple pod anti-affinity on hostname".
#[test]
fn pod_anti_affinity_on_hostname_puts_each_replica_on_its_own_nodeclaim() {
    let Some(o) = run_one("anti-affinity-hostname", ONE_POOL, &replicas(3, &pod_affinity("podAntiAffinity", true, "kubernetes.io/hostname"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [1, 1, 1]);
    assert_agree("anti-affinity-hostname", &o);
}

// topology_test.go "should respect self pod affinity (hostname)".
#[test]
fn pod_affinity_on_hostname_co_locates_the_replicas() {
    let Some(o) = run_one("affinity-hostname", ONE_POOL, &replicas(3, &pod_affinity("podAffinity", true, "kubernetes.io/hostname"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [3]);
    assert_agree("affinity-hostname", &o);
}

// topology_test.go "should balance pods across nodes" (hostname, maxSkew 1).
#[test]
fn hostname_spread_with_max_skew_1_puts_one_replica_per_nodeclaim() {
    let Some(o) = run_one("spread-hostname-1", ONE_POOL, &replicas(4, &spread("kubernetes.io/hostname", 1, "DoNotSchedule", "web"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [1, 1, 1, 1]);
    assert_agree("spread-hostname-1", &o);
}

// topology_test.go "should balance pods on the same hostname up to maxskew".
#[test]
fn hostname_spread_with_max_skew_2_puts_two_replicas_per_nodeclaim() {
    let Some(o) = run_one("spread-hostname-2", ONE_POOL, &replicas(4, &spread("kubernetes.io/hostname", 2, "DoNotSchedule", "web"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [2, 2]);
    assert_agree("spread-hostname-2", &o);
}

// topology_test.go "should respect NodePool zonal constraints": four replicas over the NodePool's two zones, two per
// zone; which zone gets the first pair is Karpenter's random pick (both offer the same types).
#[test]
fn zone_spread_on_a_nodepool_with_two_zones_puts_two_replicas_in_each() {
    let pool = pool_with("{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}");
    let Some(o) = run_one("spread-zone-two-zones", &pool, &replicas(4, &spread("topology.kubernetes.io/zone", 1, "DoNotSchedule", "web"))) else { return };
    let zones = |r| claims(r).iter().map(|c| c["zone"].as_str().unwrap().to_string()).collect::<BTreeSet<_>>();
    assert_eq!(zones(&o.gpuplan), zones(&o.oracle), "both use both zones");
    assert_eq!(pods_per_claim(&o.gpuplan), [2, 2]);
    assert_agree_but_zones("spread-zone-two-zones", &o);
}

// topology_test.go "should balance pods across zones (match labels)" with every zone of the catalog: Karpenter's
// domains include us-east-1e, where no m5 type is offered, and a replica that draws it stays pending, so how many
// replicas land varies between its runs. Both must keep the replicas within maxSkew: one per zone here.
#[test]
fn zone_spread_keeps_the_replicas_within_max_skew() {
    let Some(o) = run_one("spread-zone", ONE_POOL, &replicas(3, &spread("topology.kubernetes.io/zone", 1, "DoNotSchedule", "web"))) else { return };
    for (side, r) in [("gpuplan", &o.gpuplan), ("karpenter", &o.oracle)] {
        let zones: Vec<String> = claims(r).iter().map(|c| c["zone"].as_str().unwrap().to_string()).collect();
        let distinct: BTreeSet<&String> = zones.iter().collect();
        // Karpenter may land as few as one (every other replica drew us-east-1e and pends): only the skew is its
        // invariant. gpuplan must land all three (below).
        assert!(!zones.is_empty() && distinct.len() == zones.len(), "{side}: one replica per zone: {zones:?}");
        assert!(pods_per_claim(r).iter().all(|n| *n == 1), "{side}: one replica per NodeClaim");
    }
    assert_eq!(claims(&o.gpuplan).len(), 3, "gpuplan picks zones the NodeClaim can launch in");
}

// topology_test.go "should balance pods across capacity types": one replica on spot, one on on-demand.
#[test]
fn capacity_type_spread_puts_one_replica_on_spot_and_one_on_on_demand() {
    let pool = ONE_POOL.replace("values: [on-demand]", "values: [spot, on-demand]");
    let Some(o) = run_one("spread-capacity-type", &pool, &replicas(2, &spread("karpenter.sh/capacity-type", 1, "DoNotSchedule", "web"))) else { return };
    let types = |r| claims(r).iter().map(|c| c["capacity_type"].as_str().unwrap().to_string()).collect::<BTreeSet<_>>();
    assert_eq!(types(&o.gpuplan), BTreeSet::from(["on-demand".to_string(), "spot".to_string()]));
    assert_eq!(types(&o.oracle), types(&o.gpuplan));
    assert_eq!(pods_per_claim(&o.oracle), [1, 1]);
    assert_eq!(pods_per_claim(&o.gpuplan), [1, 1]);
}

// topology_test.go "should balance pods across a label when discovered from the nodepool": a custom label with its
// values in a NodePool requirement (a capacity-spread label splitting on-demand and spot, as gpuplan's pools do) is a
// topology domain; four replicas, two per value.
#[test]
fn spread_over_a_custom_nodepool_label_splits_the_replicas_between_its_values() {
    let pool = pool_with("{key: capacity-spread, operator: In, values: [\"1\", \"2\"]}");
    let Some(o) = run_one("spread-custom-label", &pool, &replicas(4, &spread("capacity-spread", 1, "DoNotSchedule", "web"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [2, 2]);
    assert_agree("spread-custom-label", &o);
}

// topology_test.go "should not violate pod anti-affinity on zone (Schrödinger)": the first replica may land in any
// zone, so it blocks them all, and the others stay pending.
#[test]
fn required_anti_affinity_on_zone_leaves_all_but_one_replica_pending() {
    let Some(o) = run_one("anti-affinity-zone", ONE_POOL, &replicas(3, &pod_affinity("podAntiAffinity", true, "topology.kubernetes.io/zone"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [1]);
    assert_eq!(o.gpuplan.as_ref().unwrap()["pending"].as_array().unwrap().len(), 2);
    assert_agree("anti-affinity-zone", &o);
}

// topology_test.go "should allow violation of preferred pod anti-affinity": the preference is dropped (preferences.go
// removePreferredPodAntiAffinityTerm) and the replicas share the first NodeClaim.
#[test]
fn preferred_anti_affinity_is_relaxed_when_it_cannot_be_met() {
    let Some(o) = run_one("preferred-anti-affinity-zone", ONE_POOL, &replicas(3, &pod_affinity("podAntiAffinity", false, "topology.kubernetes.io/zone"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [3]);
    assert_agree("preferred-anti-affinity-zone", &o);
}

// topology_test.go "should violate max-skew when unsat = schedule anyway (capacity type)": a ScheduleAnyway spread the
// NodePool cannot meet (one capacity type, hostname spread with a node limit) is removed and the replicas pack.
#[test]
fn schedule_anyway_spread_is_relaxed_when_it_cannot_be_met() {
    let pool = ONE_POOL.replace("spec:\n  template:\n    spec:\n      nodeClassRef", "spec:\n  limits:\n    cpu: \"2\"\n  template:\n    spec:\n      nodeClassRef");
    let Some(o) = run_one("schedule-anyway", &pool, &replicas(2, &spread("kubernetes.io/hostname", 1, "ScheduleAnyway", "web")).replace("cpu: \"1\"", "cpu: 500m")) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [2]);
    assert_agree("schedule-anyway", &o);
}

// topology_test.go "should balance pods across zones" with a selector that does not match the pods: nothing is
// counted, so the spread never narrows past the first zone picked and the replicas share a NodeClaim.
#[test]
fn spread_whose_selector_does_not_match_the_pod_does_not_separate_the_replicas() {
    let pool = pool_with("{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}");
    let Some(o) = run_one("spread-foreign-selector", &pool, &replicas(3, &spread("topology.kubernetes.io/zone", 1, "DoNotSchedule", "other"))) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [3]);
    assert_agree_but_zones("spread-foreign-selector", &o);
}

// topologynodefilter.go `Matches` (sigs.k8s.io/karpenter v1.14.1, line 71) checks the spreading pod's nodeSelector
// against a NodeClaim's requirements without the `AllowUndefinedWellKnownLabels` option its caller passes: a
// NodeClaim that leaves `kubernetes.io/arch` open does not match `nodeSelector: {kubernetes.io/arch: amd64}`, so the
// pods on it are not counted, and a pod spreading over other pods by hostname joins their NodeClaim. (Found by
// `conformance/run --seed 61 --cases 5000`, case 4987.)
#[test]
fn a_spread_whose_node_filter_names_an_undefined_well_known_label_counts_no_pod_on_the_nodeclaim() {
    let others = replicas(3, "").replace("name: web", "name: others").replace("app: web", "app: others");
    let constraint = format!("      nodeSelector: {{kubernetes.io/arch: amd64}}\n{}", spread("kubernetes.io/hostname", 1, "DoNotSchedule", "others"));
    let spreading = replicas(1, &constraint).replace("name: web", "name: spreading").replace("app: web", "app: spreading");
    let Some(o) = run_one("spread-node-filter-undefined-arch", ONE_POOL, &format!("{others}---\n{spreading}")) else { return };
    assert_eq!(pods_per_claim(&o.gpuplan), [4], "the spreading pod joins the three others: none of them is counted");
    assert_agree("spread-node-filter-undefined-arch", &o);
}

// KNOWN_DIFFERENCES.md "NodeOverlay feature gate": gpuplan always applies NodeOverlays; in Karpenter v1.14.1 they
// apply only with the NodeOverlay feature gate on (off by default: pkg/operator/options/options.go FEATURE_GATES;
// pkg/cloudprovider/overlay). The harness runs Karpenter with the gate on when the manifests have overlays; with the
// default (off) the time-sliced notebooks of the ml-research example pack differently.
#[test]
fn known_difference_node_overlays_need_the_feature_gate() {
    let Some(oracle) = oracle() else { return };
    let root = go::root();
    let case = &fixture_cases().into_iter().find(|c| c.name == "fixture-ml-research").unwrap();
    let dir = root.join("target/conformance/karpenter-known/node-overlay-gate");
    std::fs::create_dir_all(&dir).unwrap();
    let inputs = read_case(&dir, case);
    let add_ons = dir.join(add_on_daemon_sets_file(&dir, &inputs).expect("ml-research configures the GPU Operator"));
    let run_oracle = |gate: &str| -> Value {
        let out = Command::new(&oracle)
            .current_dir(&root)
            .args(["simulate", "--manifests", "out/ml-research", "--pods", "tests/fixtures/simulate/ml-research.yaml", "--format", "json", "--node-overlay-gate", gate, "--daemonsets"])
            .arg(&add_ons)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let ours = run_gpuplan(case, inputs, &mut BTreeMap::new()).unwrap();
    assert_eq!(comparable(&ours), comparable(&run_oracle("true")), "with the gate on, both apply the overlays");
    assert_ne!(comparable(&ours), comparable(&run_oracle("false")), "with Karpenter's default (gate off) the overlays do not apply; gpuplan applies them");
}

// KNOWN_DIFFERENCES.md "Spot launch choice": for spot, EC2 Fleet picks among the candidates with
// price-capacity-optimized (aws/karpenter-provider-aws pkg/providers/instance/instance.go `launchInstance`), which
// depends on live capacity. gpuplan reports the cheapest offering and the candidate set; only the set is compared.
#[test]
fn known_difference_spot_launch_choice() {
    let Some(o) = run_one("spot-launch-choice", &ONE_POOL.replace("values: [on-demand]", "values: [spot]"), &replicas(1, "")) else { return };
    let (g, k) = (&claims(&o.gpuplan)[0], &claims(&o.oracle)[0]);
    assert_eq!((g["capacity_type"].as_str(), k["capacity_type"].as_str()), (Some("spot"), Some("spot")));
    assert_eq!(g["candidates"], k["candidates"], "the candidate set sent to EC2 Fleet is the same");
    let cheapest = g["candidates"].as_array().unwrap().iter().any(|c| c == &g["instance_type"]);
    assert!(cheapest && g["instance_type"] == "m5.large", "gpuplan names the cheapest spot offering as its estimate: {g}");
    assert!(comparable(o.gpuplan.as_ref().unwrap()).claims.values().all(|c| c.contains("spot, one of the candidates")), "the spot type is not compared");
}

fn reserved_pool(types: &str, extra_requirement: &str) -> String {
    ONE_POOL
        .replace("  securityGroupSelectorTerms:\n  - tags: {k: v}\n", "  securityGroupSelectorTerms:\n  - tags: {k: v}\n  capacityReservationSelectorTerms:\n  - id: cr-0123456789abcdef0\n")
        .replace("values: [m5.large, m5.xlarge, m5.2xlarge]}", &format!("values: [{types}]}}\n{extra_requirement}"))
        .replace("values: [on-demand]", "values: [reserved, on-demand]")
}

// topologygroup.go `nextDomainTopologySpread` (sigs.k8s.io/karpenter v1.14.1) narrows a spread over
// `karpenter.sh/capacity-type` to the first tied domain in Go map order, which puts the value inserted first ahead seven
// times in eight (`only_domains_differ`): a pod that may go spot or on-demand mostly draws spot and starts a NodeClaim
// of its own, and once in eight runs draws on-demand and joins the on-demand NodeClaim already planned, which is what
// gpuplan does. The harness's reruns (`RERUNS_FOR_A_RARE_DRAW`) find that run. (Found by `conformance/run --seed 20296
// --cases 5000`, case 582: Karpenter put the pod on spot in 21 of 24 runs.)
#[test]
fn a_capacity_type_spread_draw_of_gpuplan_is_one_karpenter_makes() {
    let Some(oracle) = oracle() else { return };
    let pool = ONE_POOL
        .replace("values: [m5.large, m5.xlarge, m5.2xlarge]}", "values: [g6.16xlarge, g6.48xlarge]}")
        .replace("values: [on-demand]}", "values: [spot, on-demand]}\n      - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}");
    let big = replicas(1, "      nodeSelector: {karpenter.sh/capacity-type: on-demand}\n").replace("cpu: \"1\", memory: 1Gi", "cpu: \"15\", memory: 120Gi, nvidia.com/gpu: 8");
    let spreading = replicas(1, &spread("karpenter.sh/capacity-type", 2, "DoNotSchedule", "spreading")).replace("name: web", "name: spreading").replace("app: web", "app: spreading").replace("cpu: \"1\", memory: 1Gi", "cpu: \"63\", memory: 60Gi");
    let case = Case::from_yaml("capacity-type-draw", &pool, &format!("{big}---\n{spreading}"), Vec::new(), &go::root().join("catalogs"));
    let root = go::root().join("target/conformance/karpenter-known/capacity-type-draw");
    let first = run(&oracle, &root, std::slice::from_ref(&case)).pop().unwrap();
    assert_eq!(pods_per_claim(&first.gpuplan), [2], "gpuplan draws on-demand: the spreading pod joins the on-demand NodeClaim");
    let agreeing = (0..100).find(|_| differences(&run(&oracle, &root, std::slice::from_ref(&case)).pop().unwrap()).is_empty());
    assert!(agreeing.is_some(), "one of 100 Karpenter runs makes gpuplan's draw (each does with probability 1/8)");
}

// A reserved offering is priced at on-demand / 10,000,000 (aws/karpenter-provider-aws v1.14.1
// pkg/providers/instancetype/offering/reserved_capacity_resolver.go), and a NodeOverlay's `price` replaces that price
// too: sigs.k8s.io/karpenter v1.14.1 pkg/controllers/nodeoverlay/controller.go `getOverlaidOfferings` selects every
// compatible offering, reserved ones included, and pkg/cloudprovider/types.go `ApplyPriceOverlay` sets it. An overlay
// of $5.50 on p4d so makes its reservation dearer than p5's near-free one, and the launch takes the reserved p5.
// (Found by `conformance/run --seed 20296 --cases 5000`, case 381.) The bill stays the on-demand price.
#[test]
fn an_overlay_price_on_a_reserved_offering_replaces_its_near_zero_price_and_the_other_reservation_launches() {
    let overlay = "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: cheaper\nspec:\n  weight: 10\n  requirements:\n  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d]}\n  price: \"5.5\"\n";
    let manifests = reserved_pool("p4d.24xlarge, p5.48xlarge", "").replace("values: [reserved, on-demand]", "values: [reserved]") + overlay;
    let Some(o) = run_one("reserved-overlay-price", &manifests, &replicas(1, "")) else { return };
    let g = claims(&o.gpuplan);
    assert_eq!((g[0]["instance_type"].as_str(), g[0]["capacity_type"].as_str()), (Some("p5.48xlarge"), Some("reserved")), "{g:?}");
    assert!(g[0]["usd_per_hour"].as_f64().unwrap() > 50.0, "a reservation is billed at the on-demand price: {g:?}");
    assert_agree("reserved-overlay-price", &o);
}

// sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling/nodeclaim.go `offeringsToReserve` (strict mode, as the
// provisioner runs it): a NodeClaim holding a reserved offering takes a pod only if a reserved offering stays
// compatible. Three 7-cpu pods: the reserved p5.4xlarge (16 vCPU) takes two, the third starts another NodeClaim.
#[test]
fn reserved_capacity_holds_a_nodeclaim_to_its_reserved_type() {
    let pods = replicas(3, "").replace("cpu: \"1\", memory: 1Gi", "cpu: \"7\", memory: 30Gi");
    let Some(o) = run_one("reserved-capacity", &reserved_pool("p5.4xlarge, g6e.12xlarge", ""), &pods) else { return };
    let shape = |r| claims(r).iter().map(|c| (c["capacity_type"].as_str().unwrap().to_string(), c["pods"].as_array().unwrap().len())).collect::<Vec<_>>();
    assert_eq!(shape(&o.oracle), [("reserved".to_string(), 2), ("reserved".to_string(), 1)], "Karpenter");
    let report = report_of(&[Case::from_yaml("reserved-capacity", "", "", Vec::new(), Path::new(""))], std::slice::from_ref(&o));
    assert!(report.is_empty(), "{report}");
}

// KNOWN_DIFFERENCES.md "Reserved capacity and minValues": at launch `ReservedOfferingFilter` keeps only the types
// with a reserved offering, and then `Truncate` finds too few for a minValues requirement, so the launch fails
// (aws/karpenter-provider-aws pkg/providers/instance/filter/filter.go, instance.go `filterInstanceTypes`; the oracle
// reports the pods pending with "launch: …"); gpuplan launches the reserved type.
#[test]
fn known_difference_reserved_capacity_with_min_values_fails_to_launch() {
    let manifests = reserved_pool("p5.48xlarge, g6e.48xlarge", "      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5, g6e], minValues: 2}\n");
    let Some(o) = run_one("reserved-min-values", &manifests, &replicas(1, "")) else { return };
    let pending = o.oracle.as_ref().unwrap()["pending"].as_array().unwrap().clone();
    assert!(pending.len() == 1 && pending[0]["reason"].as_str().unwrap().contains("minValues"), "Karpenter: the launch fails on minValues: {pending:?}");
    let g = claims(&o.gpuplan);
    assert_eq!((g.len(), g[0]["capacity_type"].as_str()), (1, Some("reserved")), "gpuplan launches the reserved type (remove this pin once it follows the launch failure)");
}

// The minimizer of generated disagreements (`minimize`): on the reserved-capacity-and-minValues difference padded with
// an unrelated NodePool, Deployment and Pod, it drops all three and cuts the replicas, and the case still disagrees.
#[test]
fn a_minimized_reproducer_keeps_the_disagreement_and_drops_the_rest() {
    let Some(oracle) = oracle() else { return };
    let padding_pool = ONE_POOL.split("---\n").nth(1).unwrap().replace("name: general", "name: also-spare");
    let manifests = reserved_pool("p5.48xlarge, g6e.48xlarge", "      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5, g6e], minValues: 2}\n") + "---\n" + &padding_pool;
    let other = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: other\n  namespace: default\nspec:\n  containers:\n  - name: app\n    image: app:1\n    resources:\n      requests: {cpu: 100m}\n";
    let pods = replicas(3, "") + other + "---\n" + &replicas(2, "").replace("name: web", "name: api");
    let case = Case::from_yaml("minimize", &manifests, &pods, Vec::new(), &go::root().join("catalogs"));
    let o = run(&oracle, &go::root().join("target/conformance/karpenter-known/minimize"), std::slice::from_ref(&case)).pop().unwrap();
    assert!(o.gpuplan.is_ok() && o.oracle.is_ok() && !differences(&o).is_empty(), "the padded case disagrees: {:?}", differences(&o));
    let (small, o) = minimize(&oracle, &case, o);
    assert!(!differences(&o).is_empty(), "the minimized case still disagrees");
    let text = |name: &str| small.files.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert!(!text("manifests.yaml").contains("name: also-spare"), "the unrelated NodePool is gone:\n{}", text("manifests.yaml"));
    assert_eq!(text("pods.yaml").matches("kind:").count(), 1, "one workload is left:\n{}", text("pods.yaml"));
    assert!(text("pods.yaml").contains("replicas: 1"), "with one replica:\n{}", text("pods.yaml"));
}

// KNOWN_DIFFERENCES.md "Equal prices at the 60-type cut": the launch sends the 60 cheapest types
// (aws/karpenter-provider-aws pkg/providers/instance/instance.go `Truncate`, cloudprovider/types.go `OrderByPrice`,
// an unstable sort.Slice); between types of equal price at the cut Go's sort order decides, gpuplan takes names in
// order. c5d.18xlarge and r5d.12xlarge cost the same; Karpenter keeps r5d.12xlarge, gpuplan c5d.18xlarge.
#[test]
fn known_difference_equal_prices_at_the_60_type_cut() {
    let manifests = ONE_POOL.replace(
        "      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, m5.2xlarge]}\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n",
        "      - {key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [\"4\"]}\n      - {key: karpenter.k8s.aws/instance-memory, operator: Gt, values: [\"65536\"]}\n",
    );
    let pods = replicas(1, "      nodeSelector: {karpenter.sh/capacity-type: spot}\n").replace("cpu: \"1\", memory: 1Gi", "cpu: \"15\", memory: 128Mi, ephemeral-storage: 15Gi");
    let Some(oracle) = oracle() else { return };
    let case = Case::from_yaml("equal-prices-at-the-cut", &manifests, &pods, Vec::new(), &scenario_catalogs(0));
    let o = run(&oracle, &go::root().join("target/conformance/karpenter-known/equal-prices-at-the-cut"), &[case]).pop().unwrap();
    let candidates = |r| claims(r)[0]["candidates"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect::<BTreeSet<_>>();
    let (g, k) = (candidates(&o.gpuplan), candidates(&o.oracle));
    assert_eq!((g.len(), k.len()), (60, 60));
    let only: Vec<&String> = g.symmetric_difference(&k).collect();
    assert_eq!(only, ["c5d.18xlarge", "r5d.12xlarge"], "the tie at the cut");
    assert!(g.contains("c5d.18xlarge") && k.contains("r5d.12xlarge"));
}

// ---------------------------------------------------------------------------------------------------------------
// A profile's `overlay` block (issue 19): the compiled output, read by Karpenter's own nodeoverlay controller and
// store (sigs.k8s.io/karpenter v1.14.1 pkg/controllers/nodeoverlay) and its scheduler, which orders types by the
// overlaid price (pkg/cloudprovider/types.go `OrderByPrice`, `AdjustedPrice`).

/// An on-demand A10G/L4 pool whose overlay takes 40% off the g5 family: g5.xlarge ($1.006 × 0.6 = $0.6036) ranks
/// before g6.xlarge ($0.8048), in Karpenter as in gpuplan simulate, and the NodeOverlay stays on its pool.
#[test]
fn a_compiled_price_overlay_launches_the_discounted_type_in_karpenter_as_in_simulate() {
    let dir = tempfile::tempdir().unwrap();
    let profile = "cluster \"c\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\npool \"infer\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\" \"L4\"; per-node max=1; }\n    max-accelerators 4\n    overlay \"g5-discount\" {\n        price-adjustment \"-40%\"\n        require \"karpenter.k8s.aws/instance-family\" \"In\" \"g5\"\n    }\n}\n";
    std::fs::write(dir.path().join("p.kdl"), profile).unwrap();
    let options = gpuplan::compile::CompileOptions { profiles: vec![dir.path().to_path_buf()], catalogs_dir: go::root().join("catalogs"), templates_dir: None };
    let compiled = gpuplan::compile::compile(&options).unwrap_or_else(|e| panic!("{e}"));
    let manifests: String = compiled.generated.iter().filter(|g| matches!(g.kind.as_str(), "NodePool" | "EC2NodeClass" | "NodeOverlay")).map(|g| format!("---\n{}", g.text)).collect();
    assert!(manifests.contains("kind: NodeOverlay"), "{manifests}");
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n  nodeSelector: {gpuplan.dev/pool: infer}\n  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  - {key: gpuplan.dev/pool, operator: Equal, value: infer, effect: NoSchedule}\n  containers:\n  - {name: c, image: x, resources: {requests: {nvidia.com/gpu: 1, cpu: \"1\"}, limits: {nvidia.com/gpu: 1}}}\n";
    let Some(o) = agreeing("compiled-price-overlay", &manifests, pod) else { return };
    let launched = claims(&o.oracle);
    assert_eq!((launched[0]["instance_type"].as_str(), launched[0]["nodepool"].as_str()), (Some("g5.xlarge"), Some("infer")), "{launched:?}");
}

/// Two overlays at the same weight price m5.large: Karpenter orders overlays by weight, then name *descending*
/// (pkg/apis/v1alpha1/nodeoverlay.go `OrderByWeight`), so `b` (-50%, $0.048) sets the price and `a` (-10%) is the
/// conflicting one; m5.large then beats c5.large ($0.085). gpuplan simulate took `a` first before (c5.large).
#[test]
fn equal_weight_overlays_apply_in_karpenters_order_name_descending() {
    let manifests = ONE_POOL.replace("values: [m5.large, m5.xlarge, m5.2xlarge]", "values: [m5.large, c5.large]")
        + "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: a}\nspec:\n  weight: 1\n  requirements:\n  - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}\n  priceAdjustment: \"-10%\"\n---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: b}\nspec:\n  weight: 1\n  requirements:\n  - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}\n  priceAdjustment: \"-50%\"\n";
    let Some(o) = agreeing("equal-weight-overlays", &manifests, &replicas(1, "")) else { return };
    assert_eq!(claims(&o.gpuplan)[0]["instance_type"], "m5.large", "{:?}", claims(&o.gpuplan));
}

// Static NodePools (`spec.replicas`; sigs.k8s.io/karpenter v1.14.1). provisioner.go `NewScheduler` leaves them out of
// dynamic provisioning (`if nodepoolutils.IsStatic(np) { return false }`); their replicas come from
// static/provisioning/controller.go `Reconcile` (`ReserveNodeCount` against `limits.nodes`, `NewNodeClaimTemplate`,
// no instance-type requirement in `ToNodeClaim`, the provider's `Create` over every type), which the oracle runs too
// (conformance/karpenter/cmd/oracle/static.go), registering each replica as an initialized Node in `state.Cluster`;
// the scheduler tries them before anything else (scheduler.go `add` → `addToExistingNode`, existingnode.go `CanAdd`)
// and reports them in `Results.ExistingNodes`.

/// A static NodePool `fixed` of `n` replicas of `types`, on-demand, with `extra` spec lines, beside ONE_POOL's
/// `general` (no weight on either: a static NodePool may carry none).
fn static_pool_of(n: u32, types: &str, extra: &str) -> String {
    format!("---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: fixed\nspec:\n  replicas: {n}\n{extra}  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements:\n      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}\n      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}\n")
}

fn static_pool(n: u32) -> String {
    static_pool_of(n, "m5.large", "")
}

/// The pods of each NodeClaim of `pool` in a report, sorted by how many they hold.
fn pods_by_claim(r: &Result<Value, String>, pool: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = claims(r).iter().filter(|c| c["nodepool"] == pool).map(|c| c["pods"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect()).collect();
    out.sort_by_key(Vec::len);
    out
}

/// Every NodeClaim of `pool` is a static replica, on both sides.
fn all_static(o: &Outcome, pool: &str) -> bool {
    [&o.gpuplan, &o.oracle].iter().all(|r| claims(r).iter().filter(|c| c["nodepool"] == pool).all(|c| c["static"] == true))
}

// provisioning/suite_test.go "should not create NodeClaims for StaticNodePool": with no replica launched, the pod
// goes to the dynamic NodePool on both sides (`fixed` sorts before `general` by name, and is still skipped).
#[test]
fn a_static_node_pool_takes_no_pod_through_provisioning() {
    let Some(o) = agreeing("static-no-replicas", &format!("{ONE_POOL}{}", static_pool(0)), &replicas(1, "")) else { return };
    assert!(claims(&o.gpuplan).iter().all(|c| c["nodepool"] == "general"), "{:?}", o.gpuplan);
}

/// Two m5.large replicas and one pod: the pod runs on a replica, the other stays empty (and is still launched and
/// billed); `general` launches nothing.
#[test]
fn a_pod_lands_on_a_static_replica_in_karpenter_as_in_simulate() {
    let Some(o) = agreeing("static-replicas", &format!("{ONE_POOL}{}", static_pool(2)), &replicas(1, "")) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed"), [vec![], vec!["default/web-0".to_string()]], "{:?}", o.oracle);
    assert!(pods_by_claim(&o.oracle, "general").is_empty(), "{:?}", o.oracle);
    assert!(all_static(&o, "fixed"), "{:?}", o.oracle);
}

/// Two m5.large replicas (1.93 cpu allocatable: one 1-cpu pod each) and three pods: the third gets a NodeClaim of
/// `general`, the only dynamic NodePool.
#[test]
fn pods_beyond_the_static_replicas_go_to_the_dynamic_pool_in_both() {
    let Some(o) = agreeing("static-overflow", &format!("{ONE_POOL}{}", static_pool(2)), &replicas(3, "")) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed").iter().map(Vec::len).collect::<Vec<_>>(), [1, 1], "{:?}", o.oracle);
    assert_eq!(pods_by_claim(&o.oracle, "general").len(), 1, "{:?}", o.oracle);
}

/// With no dynamic NodePool, the replicas take what fits and the rest pends (Karpenter's provisioner stops at "no
/// dynamic nodepools found"; the scheduler's existing-node pass stands in for kube-scheduler binding to the replicas).
#[test]
fn with_only_a_static_pool_the_pods_beyond_its_replicas_pend_in_both() {
    let only_static = ONE_POOL.split("---\n").next().unwrap().to_string() + &static_pool(2);
    let Some(o) = agreeing("static-only", &only_static, &replicas(3, "")) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed").iter().map(Vec::len).collect::<Vec<_>>(), [1, 1], "{:?}", o.oracle);
    assert_eq!(o.oracle.as_ref().unwrap()["pending"].as_array().unwrap().len(), 1, "{:?}", o.oracle);
}

/// The replicas launch on the provider's choice over every type the NodePool admits, as any NodeClaim with no pod
/// requests would: c5.large ($0.085) before m5.large and m6i.large ($0.096) and m5.xlarge; candidates are all four.
#[test]
fn a_static_pools_replicas_launch_on_the_cheapest_admitted_offering_in_both() {
    let manifests = format!("{ONE_POOL}{}", static_pool_of(2, "m5.large, m5.xlarge, c5.large, m6i.large", ""));
    let Some(o) = agreeing("static-launch", &manifests, "") else { return };
    let launched = claims(&o.oracle);
    assert_eq!(launched.len(), 2, "{launched:?}");
    assert!(launched.iter().all(|c| c["instance_type"] == "c5.large" && c["candidates"].as_array().unwrap().len() == 4), "{launched:?}");
    assert!(all_static(&o, "fixed"));
}

/// `limits.nodes` caps the replicas (controller.go `ReserveNodeCount`): 3 asked, 2 launched.
#[test]
fn a_static_pools_node_limit_caps_its_replicas_in_both() {
    let Some(o) = agreeing("static-node-limit", &format!("{ONE_POOL}{}", static_pool_of(3, "m5.large", "  limits: {nodes: 2}\n")), "") else { return };
    assert_eq!(claims(&o.oracle).len(), 2, "{:?}", o.oracle);
}

/// Existing nodes are tried in name order and the first that takes the pod keeps it (scheduler.go
/// `addToExistingNode`, `sortExistingNodes`), not the one with the fewest pods: three 1-cpu pods all on the first
/// m5.2xlarge replica.
#[test]
fn pods_fill_the_first_static_replica_before_the_next_in_both() {
    let Some(o) = agreeing("static-fill-order", &format!("{ONE_POOL}{}", static_pool_of(2, "m5.2xlarge", "")), &replicas(3, "")) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed").iter().map(Vec::len).collect::<Vec<_>>(), [0, 3], "{:?}", o.oracle);
}

/// A pod goes to a replica that fits it before any in-flight NodeClaim (scheduler.go `add`: `addToExistingNode` before
/// `addToInflightNode`), even one holding fewer pods: a 5-cpu pod takes a NodeClaim of `general`, then all three
/// 500m pods go to the m5.xlarge replica.
#[test]
fn a_pod_goes_to_a_static_replica_before_an_in_flight_nodeclaim_in_both() {
    let big = replicas(1, "").replace("name: web\n", "name: big\n").replace("cpu: \"1\"", "cpu: \"5\"");
    let small = replicas(3, "").replace("cpu: \"1\"", "cpu: 500m");
    let Some(o) = agreeing("static-before-inflight", &format!("{ONE_POOL}{}", static_pool_of(1, "m5.xlarge", "")), &format!("{big}---\n{small}")) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed"), [vec!["default/web-0".to_string(), "default/web-1".into(), "default/web-2".into()]], "{:?}", o.oracle);
    assert_eq!(pods_by_claim(&o.oracle, "general"), [vec!["default/big-0".to_string()]], "{:?}", o.oracle);
}

/// A replica carries its NodePool's taints (the Node gets the NodeClaim's, registration.go): a pod that does not
/// tolerate them goes to `general`, one that does lands on the replica.
#[test]
fn a_static_replicas_taint_keeps_off_the_pods_that_do_not_tolerate_it_in_both() {
    let tainted = static_pool(1) + "      taints:\n      - {key: dedicated, value: fixed, effect: NoSchedule}\n";
    let tolerating = replicas(1, "      tolerations:\n      - {key: dedicated, operator: Exists}\n").replace("name: web\n", "name: tolerant\n");
    let Some(o) = agreeing("static-taint", &format!("{ONE_POOL}{tainted}"), &format!("{}---\n{tolerating}", replicas(1, ""))) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed"), [vec!["default/tolerant-0".to_string()]], "{:?}", o.oracle);
    assert_eq!(pods_by_claim(&o.oracle, "general"), [vec!["default/web-0".to_string()]], "{:?}", o.oracle);
}

/// scheduler.go `NewScheduler` turns on relaxation's PreferNoSchedule toleration only when a NodePool it is given
/// (a dynamic one: provisioner.go leaves static NodePools out) has such a taint. A static pool's PreferNoSchedule taint
/// therefore keeps a pod that does not tolerate it off the replica, and it pends (found by the generator: seed 22, case
/// 756, where gpuplan had relaxed and put the pods on the replica). With the taint on the dynamic pool too, relaxation
/// tolerates it and the replica takes the pod.
#[test]
fn a_static_pools_prefer_no_schedule_taint_is_relaxed_only_when_a_dynamic_pool_has_one_in_both() {
    let soft = "      taints:\n      - {key: spot, value: \"true\", effect: PreferNoSchedule}\n";
    // The pod selects the replica's label: `general` cannot take it, so only relaxation could put it on the replica.
    let tainted = static_pool(1).replace("  template:\n    spec:\n", "  template:\n    metadata:\n      labels: {pool: fixed}\n    spec:\n") + soft;
    let pod = replicas(1, "      nodeSelector: {pool: fixed}\n");
    let Some(o) = agreeing("static-prefer-no-schedule", &format!("{ONE_POOL}{tainted}"), &pod) else { return };
    assert!(pods_by_claim(&o.oracle, "fixed").iter().all(Vec::is_empty), "the pod stays off the replica: {:?}", o.oracle);
    let both = ONE_POOL.replace("      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n", &format!("      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}\n{soft}"));
    let Some(o) = agreeing("static-prefer-no-schedule-relaxed", &format!("{both}{tainted}"), &pod) else { return };
    assert_eq!(pods_by_claim(&o.oracle, "fixed"), [vec!["default/web-0".to_string()]], "{:?}", o.oracle);
}

/// A replica is launched requesting nothing, so without EFA interfaces (aws instance.go `getEFACountForInstance`;
/// cloudprovider.go `instanceToNodeClaim` advertises `vpc.amazonaws.com/efa` only when some are attached): a pod asking
/// for one gets a NodeClaim of `general`, of the very type the replica runs.
#[test]
fn a_pod_requesting_efa_does_not_land_on_a_static_replica_in_both() {
    let manifests = format!("{}{}", ONE_POOL.replace("values: [m5.large, m5.xlarge, m5.2xlarge]", "values: [g6.8xlarge]"), static_pool_of(1, "g6.8xlarge", ""));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: efa, namespace: default}\nspec:\n  containers:\n  - {name: c, image: x, resources: {requests: {cpu: \"1\"}, limits: {nvidia.com/gpu: 1, vpc.amazonaws.com/efa: 1}}}\n";
    let Some(o) = agreeing("static-efa", &manifests, pod) else { return };
    assert_eq!((pods_by_claim(&o.oracle, "fixed"), pods_by_claim(&o.oracle, "general")), (vec![vec![]], vec![vec!["default/efa".to_string()]]), "{:?}", o.oracle);
}

/// A type whose allocatable memory is negative fits nothing, not even a replica that requests nothing
/// (pkg/utils/resources `Fits`: "If any of the total resource values are negative then the resource will never
/// fit"; aws filter.go `CompatibleAvailableFilter`): with 200Mi system-reserved and a 200Mi eviction threshold,
/// t3.nano (0.5 GiB) is no candidate and the replica runs t3.micro (seed 4321 case 137).
#[test]
fn a_type_with_negative_allocatable_is_no_candidate_for_a_static_replica_in_both() {
    let tuned = ONE_POOL.replace("  role: R\n", "  role: R\n  kubelet:\n    systemReserved: {memory: 200Mi}\n    evictionHard: {memory.available: \"200Mi\"}\n");
    let Some(o) = agreeing("static-negative-allocatable", &format!("{tuned}{}", static_pool_of(1, "t3.nano, t3.micro", "")), "") else { return };
    let launched = claims(&o.oracle);
    assert_eq!((launched[0]["instance_type"].as_str(), launched[0]["candidates"].clone()), (Some("t3.micro"), serde_json::json!(["t3.micro"])), "{launched:?}");
}

/// An existing node's labels are domains of the topology groups whose node filter matches it (topology.go
/// `countDomains`): a replica in us-east-1a, too small for the pods, makes 1a a zone domain with no pod, so with
/// `general` limited to us-east-1b a zone spread of maxSkew 1 takes one pod there and leaves the second pending.
#[test]
fn a_static_replicas_zone_is_a_spread_domain_in_both() {
    let zone = |z: &str| format!("      - {{key: topology.kubernetes.io/zone, operator: In, values: [{z}]}}\n");
    let manifests = format!("{}{}{}", ONE_POOL, zone("us-east-1b"), static_pool(1) + &zone("us-east-1a"));
    let pods = replicas(2, &spread("topology.kubernetes.io/zone", 1, "DoNotSchedule", "web")).replace("cpu: \"1\"", "cpu: \"3\"");
    let Some(o) = agreeing("static-zone-domain", &manifests, &pods) else { return };
    assert_eq!(o.oracle.as_ref().unwrap()["pending"].as_array().unwrap().len(), 1, "{:?}", o.oracle);
    assert_eq!(pods_by_claim(&o.oracle, "general").len(), 1, "{:?}", o.oracle);
}

/// With minValues (policy Strict), the types a replica's Create sends must meet it or the launch fails
/// (pkg/cloudprovider/types.go `Truncate`): four families asked of three admitted types, so no replica exists on
/// either side, and the pod gets a NodeClaim of `general` (seed 22 case 447).
#[test]
fn a_static_replica_whose_launch_misses_min_values_exists_in_neither() {
    let pool = static_pool_of(1, "m5.large, c5.large, r5.large", "").replace(
        "      - {key: node.kubernetes.io/instance-type",
        "      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5, r5], minValues: 4}\n      - {key: node.kubernetes.io/instance-type",
    );
    let Some(o) = agreeing("static-min-values", &format!("{ONE_POOL}{pool}"), &replicas(1, "")) else { return };
    assert!(pods_by_claim(&o.oracle, "fixed").is_empty(), "{:?}", o.oracle);
    assert_eq!(pods_by_claim(&o.oracle, "general").len(), 1, "{:?}", o.oracle);
}

// NodeOverlay conflicts (sigs.k8s.io/karpenter v1.14.1 pkg/controllers/nodeoverlay/controller.go `Reconcile`,
// `validateAndUpdateInstanceTypeOverrides`, `getOverlaidOfferings`; store.go `isOfferingUpdateConflicting`,
// `isCapacityUpdateConflicting`): the controller takes the overlays by weight, then name descending, and checks each on
// every NodePool and every instance type of its NodeClass. One that sets the price of an offering, or a capacity
// resource of a type, that an accepted overlay of the same weight already set is marked `ValidationSucceeded=False`
// ("conflict with another overlay") and applied nowhere. gpuplan simulate: src/simulate/overlays.rs `accepted`.

/// A NodeOverlay `name` of `weight` with `requirements` (flow mappings) and `body` (spec lines, two spaces in).
fn node_overlay(name: &str, weight: u32, requirements: &[&str], body: &str) -> String {
    let reqs: String = requirements.iter().map(|r| format!("  - {r}\n")).collect();
    format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  requirements:\n{reqs}{body}")
}

fn types_in(types: &str) -> String {
    format!("{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}")
}

/// ONE_POOL with `types` instead of its three m5 types.
fn pool_of(types: &str) -> String {
    ONE_POOL.replace("values: [m5.large, m5.xlarge, m5.2xlarge]", &format!("values: [{types}]"))
}

/// One pod asking for one `example.com/widget`, a resource only a capacity overlay gives a type.
fn widget_pod() -> String {
    replicas(1, "").replace("requests: {cpu: \"1\", memory: 1Gi}", "requests: {cpu: \"1\", memory: 1Gi, example.com/widget: \"1\"}\n          limits: {example.com/widget: \"1\"}")
}

fn launched(r: &Result<Value, String>) -> (String, String) {
    let c = &claims(r)[0];
    (c["instance_type"].as_str().unwrap().to_string(), c["zone"].as_str().unwrap().to_string())
}

/// `b` (-50% on m5.large) comes first; `a` ($0.01 on m5.large and c5.large) conflicts with it on m5.large and is
/// dropped, also on c5.large where it was alone: m5.large ($0.048) launches, not c5.large at $0.01.
#[test]
fn a_price_overlay_in_conflict_is_dropped_even_on_the_types_where_it_is_alone() {
    let manifests = pool_of("m5.large, c5.large") + &node_overlay("a", 1, &[&types_in("m5.large, c5.large")], "  price: \"0.01\"\n") + &node_overlay("b", 1, &[&types_in("m5.large")], "  priceAdjustment: \"-50%\"\n");
    let Some(o) = agreeing("overlay-conflict-price", &manifests, &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan).0, "m5.large", "{:?}", o.gpuplan);
}

/// The conflict is on NodePool `batch` (where `b`, scoped to it, and `a` both price m5.large); `a` is dropped on
/// `general` too, where it was alone: the pod, in the heavier `general`, gets c5.large ($0.085), not m5.large at -50%.
#[test]
fn a_conflict_on_one_node_pool_drops_the_overlay_on_every_node_pool() {
    let general = pool_of("m5.large, c5.large").replace("  name: general\nspec:\n", "  name: general\nspec:\n  weight: 10\n");
    let batch = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: batch\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}\n";
    let only_batch = "{key: karpenter.sh/nodepool, operator: In, values: [batch]}";
    let manifests = general + batch + &node_overlay("a", 1, &[&types_in("m5.large")], "  priceAdjustment: \"-50%\"\n") + &node_overlay("b", 1, &[only_batch, &types_in("m5.large")], "  price: \"0.5\"\n");
    let Some(o) = agreeing("overlay-conflict-other-pool", &manifests, &replicas(1, "")) else { return };
    assert_eq!(claims(&o.gpuplan)[0]["nodepool"], "general", "{:?}", o.gpuplan);
    assert_eq!(launched(&o.gpuplan).0, "c5.large", "{:?}", o.gpuplan);
}

/// The controller checks every type of the NodeClass (`GetInstanceTypes`), not only those the NodePool's requirements
/// admit: `a` and `b` conflict on m5.large, which the pool leaves out, and `a`'s -60% on m5.xlarge ($0.0768, less than
/// c5.large's $0.085) is gone with it.
#[test]
fn a_conflict_on_a_type_the_node_pool_does_not_admit_still_drops_the_overlay() {
    let manifests = pool_of("c5.large, m5.xlarge") + &node_overlay("a", 1, &[&types_in("m5.large, m5.xlarge")], "  priceAdjustment: \"-60%\"\n") + &node_overlay("b", 1, &[&types_in("m5.large")], "  price: \"1\"\n");
    let Some(o) = agreeing("overlay-conflict-unadmitted-type", &manifests, &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan).0, "c5.large", "{:?}", o.gpuplan);
}

/// A static NodePool (`spec.replicas`) takes no pod through provisioning, but the controller lists it like any other:
/// the conflict of `a` and `b` (scoped to `fixed`) on its m5.large drops `a` on `general` as well.
#[test]
fn a_conflict_on_a_static_node_pool_drops_the_overlay_on_the_dynamic_ones() {
    let only_fixed = "{key: karpenter.sh/nodepool, operator: In, values: [fixed]}";
    let manifests = pool_of("m5.large, c5.large") + &static_pool(0) + &node_overlay("a", 1, &[&types_in("m5.large")], "  priceAdjustment: \"-50%\"\n") + &node_overlay("b", 1, &[only_fixed, &types_in("m5.large")], "  price: \"0.5\"\n");
    let Some(o) = agreeing("overlay-conflict-static-pool", &manifests, &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan).0, "c5.large", "{:?}", o.gpuplan);
}

/// Capacity alike: `b` gives m5.large one widget, `a` (two, on m5.large and c5.large) conflicts on m5.large and
/// gives c5.large none either, so the widget pod can only have m5.large.
#[test]
fn equal_weight_capacity_overlays_on_one_resource_conflict_and_the_later_one_sets_nothing() {
    let manifests = pool_of("m5.large, c5.large") + &node_overlay("a", 1, &[&types_in("m5.large, c5.large")], "  capacity: {example.com/widget: \"2\"}\n") + &node_overlay("b", 1, &[&types_in("m5.large")], "  capacity: {example.com/widget: \"1\"}\n");
    let Some(o) = agreeing("overlay-conflict-capacity", &manifests, &widget_pod()) else { return };
    assert_eq!(launched(&o.gpuplan).0, "m5.large", "{:?}", o.gpuplan);
    assert_eq!(candidates(&o.gpuplan), [["m5.large"]], "{:?}", o.gpuplan);
}

/// store.go keeps, per type, only the resources of the *last* accepted capacity overlay of the lowest weight
/// (`updateInstanceTypeCapacity` replaces `lowestWeightCapacityResources`): after `c` (widget) and `b` (gadget) on
/// m5.large, `a` (two widgets, on m5.large and c5.large) is checked against the gadget only, is accepted, and gives
/// c5.large its widgets (m5.large keeps `c`'s one): the widget pod launches c5.large.
#[test]
fn a_capacity_overlay_is_checked_against_the_last_accepted_capacity_overlay_of_its_weight_only() {
    let manifests = pool_of("m5.large, c5.large")
        + &node_overlay("a", 1, &[&types_in("m5.large, c5.large")], "  capacity: {example.com/widget: \"2\"}\n")
        + &node_overlay("b", 1, &[&types_in("m5.large")], "  capacity: {example.com/gadget: \"1\"}\n")
        + &node_overlay("c", 1, &[&types_in("m5.large")], "  capacity: {example.com/widget: \"1\"}\n");
    let Some(o) = agreeing("overlay-capacity-last-accepted", &manifests, &widget_pod()) else { return };
    assert_eq!(launched(&o.gpuplan).0, "c5.large", "{:?}", o.gpuplan);
}

/// A price and a capacity are checked apart: `b` (widgets on both types) and `a` ($0.01 on m5.large) at one weight
/// both apply, and the widget pod launches the discounted m5.large.
#[test]
fn a_price_overlay_and_a_capacity_overlay_of_one_weight_do_not_conflict() {
    let manifests = pool_of("m5.large, c5.large") + &node_overlay("a", 1, &[&types_in("m5.large")], "  price: \"0.01\"\n") + &node_overlay("b", 1, &[&types_in("m5.large, c5.large")], "  capacity: {example.com/widget: \"1\"}\n");
    let Some(o) = agreeing("overlay-no-conflict-price-capacity", &manifests, &widget_pod()) else { return };
    assert_eq!(launched(&o.gpuplan).0, "m5.large", "{:?}", o.gpuplan);
}

/// Price conflicts are per offering (store.go keys them by the offering's requirements): `b` prices m5.large in
/// us-east-1a, `a` takes 90% off m5.large and c5.large in us-east-1b; no offering has both, so both apply and c5.large
/// launches in us-east-1b ($0.0085).
#[test]
fn price_overlays_of_one_weight_on_different_zones_do_not_conflict() {
    let zone = |z: &str| format!("{{key: topology.kubernetes.io/zone, operator: In, values: [{z}]}}");
    let manifests = pool_of("m5.large, c5.large") + &node_overlay("a", 1, &[&types_in("m5.large, c5.large"), &zone("us-east-1b")], "  priceAdjustment: \"-90%\"\n") + &node_overlay("b", 1, &[&types_in("m5.large"), &zone("us-east-1a")], "  price: \"0.05\"\n");
    let Some(o) = agreeing("overlay-no-conflict-zones", &manifests, &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan), ("c5.large".to_string(), "us-east-1b".to_string()), "{:?}", o.gpuplan);
}

// Spot offerings and price overlays: an overlay adjusts each offering it selects (controller.go
// `getOverlaidOfferings`, store.go `applyPriceOverlays`, pkg/cloudprovider/types.go `ApplyPriceOverlay`), and the
// scheduler orders types by their cheapest compatible available offering (types.go `OrderByPrice`). The harness's
// spot launch takes the cheapest offering (EC2's price-capacity-optimized choice is live state), so these compare
// the type and zone explicitly on top of the agreement (which, for spot, covers the candidate set).

/// A spot pool over us-east-1a and us-east-1b (m5.large $0.0384, c5.large $0.034 in both).
fn spot_pool_over_two_zones() -> String {
    pool_of("m5.large, c5.large").replace("values: [on-demand]}", "values: [spot]}\n      - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}")
}

/// $0.02 on m5.large in us-east-1b only: m5.large ranks by that offering and launches there.
#[test]
fn a_spot_price_overlay_on_one_zone_makes_that_zones_offering_the_cheapest() {
    let manifests = spot_pool_over_two_zones() + &node_overlay("m5-b", 1, &[&types_in("m5.large"), "{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1b]}"], "  price: \"0.02\"\n");
    let Some(o) = agreeing("spot-overlay-one-zone", &manifests, &replicas(1, "")) else { return };
    let want = ("m5.large".to_string(), "us-east-1b".to_string());
    assert_eq!((launched(&o.gpuplan), launched(&o.oracle)), (want.clone(), want), "{:?}\n{:?}", o.gpuplan, o.oracle);
}

/// +100% on c5.large in us-east-1a only: its us-east-1b offering is still $0.034, so c5.large still ranks before
/// m5.large and launches in us-east-1b (an overlay applied to the type's highest spot price would rank it at $0.068).
#[test]
fn a_spot_price_overlay_raising_one_zone_leaves_the_type_ranked_by_its_other_zone() {
    let manifests = spot_pool_over_two_zones() + &node_overlay("c5-a", 1, &[&types_in("c5.large"), "{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}"], "  priceAdjustment: \"+100%\"\n");
    let Some(o) = agreeing("spot-overlay-raise-one-zone", &manifests, &replicas(1, "")) else { return };
    let want = ("c5.large".to_string(), "us-east-1b".to_string());
    assert_eq!((launched(&o.gpuplan), launched(&o.oracle)), (want.clone(), want), "{:?}\n{:?}", o.gpuplan, o.oracle);
}

// Which NodePools an overlay selects: controller.go `getOverlaidOfferings` checks its requirements with `Compatible`
// against `karpenter.sh/nodepool`, the NodePool's template labels and the type's labels, so a requirement on a custom
// label selects by the template's value, and one on a label the NodePool does not define selects nothing (an undefined
// key admits only NotIn and DoesNotExist). gpuplan simulate: src/simulate/overlays.rs `selects`.

/// `pool_of("m5.large, c5.large")` with template labels `labels` (flow mapping), and an overlay taking 50% off
/// m5.large ($0.048, under c5.large's $0.085) for `team In [ml]`.
fn team_overlay_on(labels: &str) -> String {
    let pool = pool_of("m5.large, c5.large").replace("  template:\n    spec:\n", &format!("  template:\n    metadata:\n      labels: {labels}\n    spec:\n"));
    pool + &node_overlay("ml", 1, &["{key: team, operator: In, values: [ml]}", &types_in("m5.large")], "  priceAdjustment: \"-50%\"\n")
}

#[test]
fn an_overlay_on_a_template_label_applies_to_the_node_pool_carrying_that_value() {
    let Some(o) = agreeing("overlay-template-label", &team_overlay_on("{team: ml}"), &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan).0, "m5.large", "{:?}", o.gpuplan);
}

#[test]
fn an_overlay_on_a_template_label_skips_a_node_pool_with_another_value() {
    let Some(o) = agreeing("overlay-template-label-other", &team_overlay_on("{team: web}"), &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan).0, "c5.large", "{:?}", o.gpuplan);
}

#[test]
fn an_overlay_on_a_label_the_node_pool_does_not_define_selects_none_of_its_types() {
    let Some(o) = agreeing("overlay-undefined-label", &team_overlay_on("{tier: gold}"), &replicas(1, "")) else { return };
    assert_eq!(launched(&o.gpuplan).0, "c5.large", "{:?}", o.gpuplan);
}
