//! Static pools (`static replicas=… max-nodes=…`, Karpenter's StaticCapacity NodePools, `spec.replicas`): what the
//! line compiles to, what it costs, what it refuses, and how simulate places pods on the replicas.
//!
//! Upstream (kubernetes-sigs/karpenter v1.14.1): `designs/static-capacity.md`; the NodePool CRD's rules
//! (`pkg/apis/crds/karpenter.sh_nodepools.yaml`: "only 'limits.nodes' is supported on static NodePools", "'weight' is
//! not supported on static NodePools"); `pkg/controllers/provisioning/provisioner.go` `NewScheduler` (static NodePools
//! are left out of dynamic provisioning); `pkg/controllers/static/provisioning/controller.go` `Reconcile` (the
//! replicas, capped by `limits.nodes`, created from the template alone).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::ML_PROD_CLUSTER as CLUSTER;

fn catalogs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogs")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir).env("NO_COLOR", "1").args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Writes profiles/p.kdl (the cluster block, then `pools`) in a fresh directory and compiles it into out/.
fn compile(pools: &str) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/p.kdl"), format!("profile \"p\"\n{CLUSTER}\n{pools}")).unwrap();
    let out = run(dir.path(), &["compile", "profiles", "--out", "out", "--catalogs", catalogs().to_str().unwrap()]);
    (dir, out)
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join("out/ml-prod").join(file)).unwrap()
}

/// The value of a `key: value` line of a YAML file (first match), quotes removed.
fn field<'a>(yaml: &'a str, key: &str) -> Option<&'a str> {
    yaml.lines().find_map(|l| l.trim().strip_prefix(key).and_then(|v| v.strip_prefix(": "))).map(|v| v.trim_matches('"'))
}

/// Asserts a compile failed with exit 2 on `code` at `location`, nothing written.
fn refused(pools: &str, code: &str, location: &str) -> String {
    let (dir, out) = compile(pools);
    let stderr = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(code) && stderr.contains(location), "expected {code} at {location}:\n{stderr}");
    assert!(!dir.path().join("out").exists(), "nothing is written on error");
    stderr
}

/// Two L4/A10G single-GPU replicas, on-demand, up to 3 nodes during replacements.
const WARM: &str = r#"pool "warm" preset="inference-on-demand" {
    gpu { name "L4" "A10G"; per-node max=1; }
    static replicas=2 max-nodes=3
}
"#;

#[test]
fn a_static_pool_compiles_to_a_nodepool_with_replicas_no_weight_and_only_a_node_limit() {
    let (dir, out) = compile(WARM);
    assert!(out.status.success(), "{}", text(&out));
    let np = read(dir.path(), "nodepool-warm.yaml");
    assert_eq!(field(&np, "replicas"), Some("2"), "{np}");
    assert_eq!(field(&np, "nodes"), Some("3"), "limits.nodes from max-nodes: {np}");
    assert!(!np.contains("weight:") && !np.contains("nvidia.com/gpu: "), "no weight, no accelerator limit: {np}");
    // The CRD requires consolidateAfter even where Karpenter ignores it: Never says what happens.
    assert_eq!(field(&np, "consolidateAfter"), Some("Never"), "{np}");
    let kustomization = read(dir.path(), "kustomization.yaml");
    assert!(kustomization.contains("StaticCapacity=true"), "the feature gate is a prerequisite: {kustomization}");
}

/// The replicas run whatever the pods, and any admitted type can hold one (a spot interruption or a replacement
/// launches again): the bound is replicas × the dearest admitted type (g5.2xlarge, $1.212/h on-demand here) with its
/// EBS volume ($66/month: 200 GiB gp3 at 10,000 IOPS / 500 MiB/s, https://aws.amazon.com/ebs/pricing/, over a 28-day
/// month: $0.0982/h), the at-limit cost replicas × the cheapest (g6.xlarge, $0.8048/h) with its volume.
#[test]
fn a_static_pool_costs_its_replicas_at_the_dearest_admitted_type_even_with_no_pods() {
    let (dir, out) = compile(WARM);
    assert!(out.status.success(), "{}", text(&out));
    let np = read(dir.path(), "nodepool-warm.yaml");
    assert_eq!(field(&np, "gpuplan.dev/worst-case-usd-per-hour"), Some("2.62"), "{np}");
    assert_eq!(field(&np, "gpuplan.dev/fixed-usd-per-hour"), Some("2.62"), "{np}");
    assert_eq!(field(&np, "gpuplan.dev/at-limit-usd-per-hour"), Some("1.81"), "{np}");
    assert!(field(&np, "gpuplan.dev/worst-case-basis").is_some_and(|b| b.contains("2 nodes billed whether pods run or not") && b.contains("g5.2xlarge")), "{np}");
    // With no pod at all, simulate launches (and bills) both replicas.
    let pods = dir.path().join("none.yaml");
    std::fs::write(&pods, "").unwrap();
    let sim = run(dir.path(), &["simulate", "--manifests", "out/ml-prod", "--pods", pods.to_str().unwrap(), "--catalogs", catalogs().to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_slice(&sim.stdout).unwrap_or_else(|_| panic!("{}", text(&sim)));
    let claims = report["nodeclaims"].as_array().unwrap();
    assert_eq!(claims.len(), 2, "{report:#}");
    assert!(claims.iter().all(|c| c["static"] == true && c["instance_type"] == "g6.xlarge" && c["pods"].as_array().unwrap().is_empty()), "{report:#}");
    assert_eq!(report["usd_per_hour"], 1.6096, "{report:#}");
}

#[test]
fn explain_says_a_static_pool_has_replicas_and_no_weight() {
    let (dir, out) = compile(WARM);
    assert!(out.status.success(), "{}", text(&out));
    let explained = run(dir.path(), &["explain", "--profiles", "profiles", "--catalogs", catalogs().to_str().unwrap()]);
    let t = text(&explained);
    assert!(t.contains("NodePool warm (pool warm, tier 1 of 1; on-demand; static, 2 replicas)"), "{t}");
    assert!(t.contains("static     2 replicas (spec.replicas); weight none"), "{t}");
    assert!(t.contains("at most $2.62/h (2 × the dearest admitted type, g5.2xlarge at $1.31/h with its volumes)"), "{t}");
}

#[test]
fn a_static_pool_counts_its_replicas_against_the_budget_before_the_other_pools() {
    let pools = format!("budget usd-per-hour=20\n{WARM}pool \"burst\" preset=\"inference-spot\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n}}\n");
    let (dir, out) = compile(&pools);
    assert!(out.status.success(), "{}", text(&out));
    let spot = read(dir.path(), "nodepool-burst-spot.yaml");
    let worst: f64 = field(&spot, "gpuplan.dev/worst-case-usd-per-hour").unwrap().parse().unwrap();
    let on_demand: f64 = field(&read(dir.path(), "nodepool-burst-on-demand.yaml"), "gpuplan.dev/worst-case-usd-per-hour").unwrap().parse().unwrap();
    assert!(2.62 + worst + on_demand <= 20.0 + 1e-9, "the static pool's $2.62/h leaves {} for the rest: {worst} + {on_demand}", 20.0 - 2.62);
}

#[test]
fn static_pools_that_cost_more_than_the_budget_are_refused_at_the_static_line() {
    let stderr = refused(&format!("budget usd-per-hour=2\n{WARM}"), "E0306", "p.kdl:12:5");
    assert!(stderr.contains("cost up to $2.62/h") && stderr.contains("billed whether pods run or not"), "{stderr}");
}

#[test]
fn a_static_pool_with_a_weight_is_refused_where_it_is_written() {
    let stderr = refused(&WARM.replace("    static replicas=2", "    weight 50\n    static replicas=2"), "E0303", "p.kdl:11:12");
    assert!(stderr.contains("'weight' is not supported on static NodePools"), "{stderr}");
}

#[test]
fn a_static_pool_with_an_accelerator_or_resource_limit_is_refused() {
    refused(&WARM.replace("    static replicas=2", "    max-accelerators 4\n    static replicas=2"), "E0304", "p.kdl:11:22");
    refused(&WARM.replace("    static replicas=2", "    limits cpu=64\n    static replicas=2"), "E0304", "p.kdl:11:5");
}

/// inference-spot falls back to an on-demand NodePool by weight; a static NodePool has none.
#[test]
fn a_static_pool_whose_preset_adds_a_fallback_nodepool_is_refused() {
    let stderr = refused(&WARM.replace("inference-on-demand", "inference-spot"), "E0302", "p.kdl:11:5");
    assert!(stderr.contains("preset \"inference-spot\" adds an on-demand NodePool"), "{stderr}");
}

#[test]
fn consolidation_written_in_a_static_pool_is_refused_as_ignored_by_karpenter() {
    refused(&WARM.replace("    static replicas=2", "    disruption { consolidate-after \"1h\"; }\n    static replicas=2"), "E0305", "p.kdl:11:36");
}

#[test]
fn a_node_limit_below_the_replicas_is_refused() {
    refused(&WARM.replace("max-nodes=3", "max-nodes=1"), "E0301", "p.kdl:11:23");
}

#[test]
fn static_without_replicas_is_refused() {
    refused(&WARM.replace("static replicas=2 max-nodes=3", "static max-nodes=3"), "E0300", "p.kdl:11:5");
}

/// A Deployment of `n` one-GPU pods that tolerate the GPU taint; with `pool`, they select that pool and tolerate its
/// taint, as `explain` tells a workload to.
fn gpu_pods(dir: &Path, n: u32, pool: Option<&str>) -> PathBuf {
    let path = dir.join("pods.yaml");
    let (selector, toleration) = match pool {
        Some(p) => (format!("      nodeSelector: {{gpuplan.dev/pool: {p}}}\n"), format!("      - {{key: gpuplan.dev/pool, operator: Equal, value: {p}, effect: NoSchedule}}\n")),
        None => (String::new(), String::new()),
    };
    let yaml = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: llm, namespace: default}}\nspec:\n  replicas: {n}\n  selector: {{matchLabels: {{app: llm}}}}\n  template:\n    metadata: {{labels: {{app: llm}}}}\n    spec:\n{selector}      tolerations:\n{toleration}      - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n      containers:\n      - name: c\n        image: x\n        resources: {{requests: {{cpu: \"1\", nvidia.com/gpu: \"1\"}}, limits: {{nvidia.com/gpu: \"1\"}}}}\n"
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

fn simulate(dir: &Path, pods: &Path) -> Value {
    let sim = run(dir, &["simulate", "--manifests", "out/ml-prod", "--pods", pods.to_str().unwrap(), "--catalogs", catalogs().to_str().unwrap(), "--format", "json"]);
    serde_json::from_slice(&sim.stdout).unwrap_or_else(|_| panic!("{}", text(&sim)))
}

/// provisioner.go leaves the static NodePool out: once its replicas are full, a pod that selects only it pends.
#[test]
fn pods_fill_the_static_replicas_and_the_rest_pend_when_no_dynamic_pool_takes_them() {
    let (dir, out) = compile(WARM);
    assert!(out.status.success(), "{}", text(&out));
    let pods = gpu_pods(dir.path(), 3, Some("warm"));
    let report = simulate(dir.path(), &pods);
    let placed: usize = report["nodeclaims"].as_array().unwrap().iter().filter(|c| c["static"] == true).map(|c| c["pods"].as_array().unwrap().len()).sum();
    assert_eq!(placed, 2, "{report:#}");
    let pending = report["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{report:#}");
    assert!(pending[0]["reason"].as_str().unwrap().contains("NodePool warm: a static NodePool (replicas 2): the provisioner plans no NodeClaims for it"), "{report:#}");
    let pool = report["nodepools"].as_array().unwrap().iter().find(|p| p["name"] == "warm").unwrap();
    assert_eq!((pool["replicas"].as_i64(), pool.get("dropped")), (Some(2), None), "{pool:#}");
}

/// Two untainted-by-pool (general) pools: the static replica takes the first pod, a dynamic NodeClaim the second.
#[test]
fn a_pod_that_does_not_fit_the_static_replicas_goes_to_a_dynamic_pool() {
    let pools = r#"pool "warm" preset="general" {
    gpu { name "L4"; per-node max=1; }
    capacity "on-demand"
    static replicas=1
}
pool "more" preset="general" {
    gpu { name "L4"; per-node max=1; }
    capacity "on-demand"
    max-accelerators 4
}
"#;
    let (dir, out) = compile(pools);
    assert!(out.status.success(), "{}", text(&out));
    let report = simulate(dir.path(), &gpu_pods(dir.path(), 2, None));
    let claims = report["nodeclaims"].as_array().unwrap();
    let by_pool = |pool: &str| claims.iter().filter(|c| c["nodepool"] == pool).map(|c| c["pods"].as_array().unwrap().len()).sum::<usize>();
    assert_eq!((by_pool("warm"), by_pool("more")), (1, 1), "{report:#}");
    assert!(report["pending"].as_array().unwrap().is_empty(), "{report:#}");
}

#[test]
fn lint_asks_no_accelerator_limit_or_consolidation_policy_of_a_static_pool() {
    let (_, out) = compile(WARM);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(!t.contains("GP013") && !t.contains("GP001"), "{t}");
}

/// Every launch of a replica picks anew among the admitted types: a static pool admitting 1- to 8-GPU L4 nodes
/// costs anything from one g6.xlarge to one g6.48xlarge per replica, and lint says to pin the node.
#[test]
fn gp028_warns_when_a_static_pool_admits_nodes_of_very_different_price() {
    let (_, out) = compile("pool \"any-l4\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; }\n    static replicas=2\n}\n");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("GP028") && t.contains("static NodePool `any-l4` keeps 2 replicas that can each launch on any of its") && t.contains("pin the node"), "{t}");
    let (_, out) = compile(WARM);
    assert!(!text(&out).contains("GP028"), "g6.xlarge to g5.2xlarge is within 2×: {}", text(&out));
}

/// Adopt reads `spec.replicas` and `limits.nodes` back into `static replicas=2 max-nodes=3`: adopting the compiled
/// NodePool and compiling again gives the same NodePool (provenance aside), with no warning about the consolidation
/// fields gpuplan writes itself.
#[test]
fn a_compiled_static_pool_adopts_back_into_the_same_nodepool() {
    let (dir, out) = compile(WARM);
    assert!(out.status.success(), "{}", text(&out));
    let cat = catalogs();
    let adopted = run(dir.path(), &["adopt", "out/ml-prod", "--into", "again", "--catalogs", cat.to_str().unwrap()]);
    assert!(adopted.status.success() && !text(&adopted).contains("ignored by Karpenter"), "{}", text(&adopted));
    assert!(std::fs::read_to_string(dir.path().join("again/p.kdl")).unwrap().contains("    static replicas=2 max-nodes=3 //"));
    let again = run(dir.path(), &["compile", "again", "--out", "out2", "--catalogs", cat.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    let strip = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap().lines().filter(|l| !l.contains("gpuplan.dev/source") && !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    assert_eq!(strip("out/ml-prod/nodepool-warm.yaml"), strip("out2/ml-prod/nodepool-warm.yaml"));
}

/// A workload's max replicas are checked against what the replicas hold at least (2 single-GPU nodes), and the help
/// says to raise the replicas, not a limit the pool cannot carry.
#[test]
fn a_workload_larger_than_the_static_replicas_is_refused_with_the_replicas_to_raise() {
    let workload = "workload \"llm\" namespace=\"inference\" pool=\"warm\" {\n    selector \"app\" \"llm\"\n    replicas min=1 max=4\n}\n";
    let stderr = refused(&format!("{WARM}{workload}"), "E0176", "p.kdl:15:20");
    assert!(stderr.contains("can provision at most 2") && stderr.contains("lower replicas max to 2 or raise the static pool's replicas"), "{stderr}");
}

/// Scaling to zero exists to let nodes go; a static pool keeps them.
#[test]
fn scale_to_zero_on_a_static_pool_is_refused() {
    let workload = "workload \"llm\" namespace=\"inference\" pool=\"warm\" {\n    selector \"app\" \"llm\"\n    replicas min=0 max=2\n    scale-to-zero\n    trigger \"prometheus\" query=\"sum(rate(x[1m]))\" threshold=1\n}\n";
    let stderr = refused(&format!("{WARM}{workload}"), "E0307", "p.kdl:16:5");
    assert!(stderr.contains("frees nothing"), "{stderr}");
}

/// A reservation is sized and billed by its instances, a static pool by its replicas: one NodePool cannot be both.
#[test]
fn a_static_pool_that_is_also_a_capacity_reservation_is_refused() {
    let reserved = WARM.replace("    static replicas=2", "    capacity \"reserved\"\n    reserved { id \"cr-0123456789abcdef0\"; instance-type \"g6.xlarge\"; instances 2; }\n    static replicas=2");
    let stderr = refused(&reserved, "E0302", "p.kdl:12:5");
    assert!(stderr.contains("cannot also be a capacity reservation"), "{stderr}");
}

/// WARM without its `static` line: a dynamic NodePool of the same name.
const WARM_DYNAMIC: &str = r#"pool "warm" preset="inference-on-demand" {
    gpu { name "L4" "A10G"; per-node max=1; }
    max-accelerators 4
}
"#;

/// Rewrites profiles/p.kdl with `pools` and runs gpuplan with `args` (then the profiles, out/ and catalogs).
fn rerun(dir: &Path, pools: &str, args: &[&str]) -> Output {
    std::fs::write(dir.join("profiles/p.kdl"), format!("profile \"p\"\n{CLUSTER}\n{pools}")).unwrap();
    let cat = catalogs();
    let mut all = args.to_vec();
    all.extend(["profiles", "--out", "out", "--catalogs", cat.to_str().unwrap()]);
    Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .args(&all)
        .output()
        .unwrap()
}

/// Every file of out/, to prove an error left it as it was.
fn out_files(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    common::tree_bytes(&dir.join("out"))
}

/// Compiles `before`, then each of compile, `compile --check` and `diff` with `after`: all exit 2 on E0308 at
/// `location`, saying what changed, that the API server refuses it and what to do; out/ stays as `before` left it.
fn transition_refused(before: &str, after: &str, location: &str, change: &str) {
    let (dir, out) = compile(before);
    assert!(out.status.success(), "{}", text(&out));
    let files = out_files(dir.path());
    for args in [&["compile"][..], &["compile", "--check"], &["diff"]] {
        let out = rerun(dir.path(), after, args);
        // The report wraps long messages (`│` continuation lines): compared as words.
        let t = text(&out).split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains("E0308") && t.contains(location), "{args:?}: E0308 at {location}: {t}");
        assert!(t.contains(change), "{args:?}: says what changed ({change}): {t}");
        // kubernetes-sigs/karpenter v1.14.1 pkg/apis/crds/karpenter.sh_nodepools.yaml, NodePool spec rule.
        assert!(t.contains("has(self.replicas) == has(oldSelf.replicas)") && t.contains("Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"), "{t}");
        assert!(t.contains("the API server refuses the update") && t.contains("rename the pool (a new NodePool), or delete NodePool warm from the cluster and"), "{t}");
        assert_eq!(out_files(dir.path()), files, "{args:?}: out/ untouched");
    }
}

#[test]
fn turning_a_compiled_pool_static_is_refused_because_the_api_server_refuses_the_transition() {
    // Line 11 of p.kdl is the `static` line (profile, the cluster block between blank lines, blank line, pool, gpu, static).
    transition_refused(WARM_DYNAMIC, WARM, "p.kdl:11:5", "pool `warm` turns NodePool warm static (replicas=2), but out/ml-prod/nodepool-warm.yaml holds it dynamic");
}

#[test]
fn turning_a_compiled_static_pool_dynamic_is_refused_at_the_pools_line_because_the_api_server_refuses_the_transition() {
    transition_refused(WARM, WARM_DYNAMIC, "p.kdl:9:6", "pool `warm` is no longer static, but out/ml-prod/nodepool-warm.yaml holds NodePool warm static (spec.replicas=2)");
}

/// The way out the error names: a new name is a new NodePool (the old one is removed, a change compile allows).
#[test]
fn a_renamed_pool_may_turn_static_because_it_is_a_new_nodepool() {
    let (dir, out) = compile(WARM_DYNAMIC);
    assert!(out.status.success(), "{}", text(&out));
    let out = rerun(dir.path(), &WARM.replace("pool \"warm\"", "pool \"warm-static\""), &["compile"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(field(&read(dir.path(), "nodepool-warm-static.yaml"), "replicas"), Some("2"));
    assert!(!dir.path().join("out/ml-prod/nodepool-warm.yaml").exists());
}

/// commit compares with the out/ of the commit it goes on (what the GitOps tool syncs), and commits nothing.
#[test]
fn commit_refuses_turning_a_committed_pool_static() {
    let (dir, out) = compile(WARM_DYNAMIC);
    assert!(out.status.success(), "{}", text(&out));
    let repo = git2::Repository::init(dir.path()).unwrap();
    let mut index = repo.index().unwrap();
    index.add_all(["."], git2::IndexAddOption::DEFAULT, None).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("Test", "test@example.com").unwrap();
    let head = repo.commit(Some("HEAD"), &sig, &sig, "initial", &tree, &[]).unwrap();
    let files = out_files(dir.path());
    let out = rerun(dir.path(), WARM, &["commit"]);
    let t = text(&out).split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ");
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("E0308") && t.contains("p.kdl:11:5") && t.contains("turns NodePool warm static"), "{t}");
    assert_eq!(repo.head().unwrap().target(), Some(head), "nothing committed");
    assert_eq!(out_files(dir.path()), files, "out/ untouched");
}

/// `replicas=0` parks a static pool (the CRD's `replicas` has `minimum: 0`): it stays static (no transition), keeps
/// no node and costs nothing; explain says parked, simulate launches nothing.
const PARKED: &str = r#"pool "warm" preset="inference-on-demand" {
    gpu { name "L4" "A10G"; per-node max=1; }
    static replicas=0 max-nodes=3
}
"#;

#[test]
fn a_static_pool_parked_at_zero_replicas_compiles_costs_nothing_and_launches_no_node() {
    let (dir, out) = compile(WARM);
    assert!(out.status.success(), "{}", text(&out));
    // From 2 replicas to 0: still static, so the API server accepts the update.
    let out = rerun(dir.path(), PARKED, &["compile"]);
    assert!(out.status.success(), "{}", text(&out));
    let np = read(dir.path(), "nodepool-warm.yaml");
    assert_eq!(field(&np, "replicas"), Some("0"), "{np}");
    for cost in ["gpuplan.dev/worst-case-usd-per-hour", "gpuplan.dev/fixed-usd-per-hour", "gpuplan.dev/at-limit-usd-per-hour"] {
        assert_eq!(field(&np, cost).map(|v| v.parse::<f64>().unwrap()), Some(0.0), "{cost}: {np}");
    }
    let pods = dir.path().join("none.yaml");
    std::fs::write(&pods, "").unwrap();
    let report = simulate(dir.path(), &pods);
    assert!(report["nodeclaims"].as_array().unwrap().is_empty(), "{report:#}");
    assert_eq!(report["usd_per_hour"], 0.0, "{report:#}");
    let explained = run(dir.path(), &["explain", "--profiles", "profiles", "--catalogs", catalogs().to_str().unwrap()]);
    let t = text(&explained);
    assert!(t.contains("static, parked (0 replicas)") && t.contains("parked: 0 replicas (spec.replicas 0), no node launched, no cost"), "{t}");
}

#[test]
fn a_parked_static_nodepool_adopts_into_static_replicas_0_and_compiles() {
    let (dir, out) = compile(PARKED);
    assert!(out.status.success(), "{}", text(&out));
    let cat = catalogs();
    let adopted = run(dir.path(), &["adopt", "out/ml-prod", "--into", "again", "--catalogs", cat.to_str().unwrap()]);
    assert!(adopted.status.success(), "{}", text(&adopted));
    assert!(std::fs::read_to_string(dir.path().join("again/p.kdl")).unwrap().contains("    static replicas=0 max-nodes=3 //"));
    let again = run(dir.path(), &["compile", "again", "--out", "out2", "--catalogs", cat.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(std::fs::read_to_string(dir.path().join("out2/ml-prod/nodepool-warm.yaml")).unwrap().lines().find(|l| l.trim() == "replicas: 0"), Some("  replicas: 0"));
}

// Static replicas are existing nodes to Karpenter's scheduler (sigs.k8s.io/karpenter v1.14.1
// pkg/controllers/provisioning/scheduling/scheduler.go `add`: `addToExistingNode` before `addToInflightNode`, the
// first existing node that takes the pod in `sortExistingNodes` order), not in-flight NodeClaims tried fewest pods
// first. Both cases are checked against Karpenter itself in tests/conformance/karpenter.rs.

const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n  role: R\n  subnetSelectorTerms:\n  - tags: {k: v}\n  securityGroupSelectorTerms:\n  - tags: {k: v}\n";

/// A NodePool on the default class: static with `replicas`, else dynamic; on-demand, of `types`.
fn node_pool(name: &str, replicas: Option<u32>, types: &str) -> String {
    let replicas = replicas.map_or(String::new(), |n| format!("  replicas: {n}\n"));
    format!("---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n{replicas}  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements:\n      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}\n      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}\n")
}

fn deployment(name: &str, n: u32, cpu: &str) -> String {
    format!("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  replicas: {n}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - {{name: c, image: x, resources: {{requests: {{cpu: \"{cpu}\", memory: 256Mi}}}}}}\n")
}

/// `gpuplan simulate` on hand-written manifests and pods, without the add-ons' DaemonSets.
fn simulate_yaml(manifests: &str, pods: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), manifests).unwrap();
    std::fs::write(dir.path().join("p.yaml"), pods).unwrap();
    let sim = run(dir.path(), &["simulate", "--manifests", "m.yaml", "--pods", "p.yaml", "--no-add-on-daemonsets", "--catalogs", catalogs().to_str().unwrap(), "--format", "json"]);
    serde_json::from_slice(&sim.stdout).unwrap_or_else(|_| panic!("{}", text(&sim)))
}

/// The pods of each NodeClaim of `pool`, in report order.
fn pods_of(report: &Value, pool: &str) -> Vec<Vec<String>> {
    let claims = report["nodeclaims"].as_array().unwrap().iter().filter(|c| c["nodepool"] == pool);
    claims.map(|c| c["pods"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect()).collect()
}

#[test]
fn pods_fill_the_first_static_replica_before_the_next() {
    let manifests = format!("{NODE_CLASS}{}", node_pool("fixed", Some(2), "m5.2xlarge"));
    let report = simulate_yaml(&manifests, &deployment("web", 3, "1"));
    let mut fixed = pods_of(&report, "fixed");
    fixed.sort_by_key(Vec::len);
    assert_eq!(fixed, [vec![], vec!["default/web-0".to_string(), "default/web-1".into(), "default/web-2".into()]], "{report:#}");
}

#[test]
fn a_pod_that_fits_a_static_replica_lands_there_before_an_in_flight_nodeclaim_with_fewer_pods() {
    // `big` (5 cpu) fits no m5.xlarge replica and gets a NodeClaim of `general`; the three 500m pods then all go to the
    // replica, though after two of them it holds more pods than that NodeClaim.
    let manifests = format!("{NODE_CLASS}{}{}", node_pool("fixed", Some(1), "m5.xlarge"), node_pool("general", None, "m5.2xlarge"));
    let report = simulate_yaml(&manifests, &(deployment("big", 1, "5") + &deployment("small", 3, "500m")));
    assert_eq!(pods_of(&report, "fixed"), [vec!["default/small-0".to_string(), "default/small-1".into(), "default/small-2".into()]], "{report:#}");
    assert_eq!(pods_of(&report, "general"), [vec!["default/big-0".to_string()]], "{report:#}");
}

/// A replica is launched before any pod, over every type its NodePool admits (aws/karpenter-provider-aws v1.14.1
/// `pkg/cloudprovider/cloudprovider.go` `Create` lists them all for a static NodeClaim): the report's candidates are
/// those types, not only the one it runs.
#[test]
fn a_static_replica_reports_every_admitted_type_as_a_candidate() {
    let manifests = format!("{NODE_CLASS}{}", node_pool("fixed", Some(1), "m5.large, c5.large"));
    let report = simulate_yaml(&manifests, "");
    let claim = &report["nodeclaims"][0];
    assert_eq!((claim["instance_type"].as_str(), claim["candidates"].clone()), (Some("c5.large"), serde_json::json!(["c5.large", "m5.large"])), "{report:#}");
}

/// A replica is launched requesting nothing, so the provider attaches no EFA interface to it (aws/karpenter-provider-aws
/// v1.14.1 `pkg/providers/instance/instance.go` `getEFACountForInstance`): a pod asking for EFA gets a dynamic
/// NodeClaim of the same type instead.
#[test]
fn a_pod_requesting_efa_does_not_land_on_a_static_replica() {
    let manifests = format!("{NODE_CLASS}{}{}", node_pool("fixed", Some(1), "g6.8xlarge"), node_pool("general", None, "g6.8xlarge"));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: efa, namespace: default}\nspec:\n  containers:\n  - {name: c, image: x, resources: {requests: {cpu: \"1\"}, limits: {nvidia.com/gpu: 1, vpc.amazonaws.com/efa: 1}}}\n";
    let report = simulate_yaml(&manifests, pod);
    assert_eq!((pods_of(&report, "fixed"), pods_of(&report, "general")), (vec![vec![]], vec![vec!["default/efa".to_string()]]), "{report:#}");
}

/// A replica's launch sends at most 60 types, and with minValues (policy Strict) they must meet it, or the Create
/// fails (sigs.k8s.io/karpenter v1.14.1 `pkg/cloudprovider/types.go` `Truncate`): three admitted families meet
/// minValues 3 and the replica launches; minValues 4 cannot be met and no replica exists (as in seed 22 case 447 of
/// tests/conformance/karpenter.rs, where p3 is not in the catalog and g5, g6e are left).
#[test]
fn a_static_replica_whose_launch_misses_min_values_is_not_launched() {
    let pool = node_pool("fixed", Some(1), "g5.4xlarge, g6e.4xlarge, c5.4xlarge").replace(
        "      - {key: node.kubernetes.io/instance-type",
        "      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6e, c5], minValues: 3}\n      - {key: node.kubernetes.io/instance-type",
    );
    let report = simulate_yaml(&format!("{NODE_CLASS}{pool}"), "");
    assert_eq!(report["nodeclaims"].as_array().unwrap().len(), 1, "three families: launched {report:#}");
    let report = simulate_yaml(&format!("{NODE_CLASS}{}", pool.replace("minValues: 3", "minValues: 4")), "");
    assert!(report["nodeclaims"].as_array().unwrap().is_empty(), "{report:#}");
}
