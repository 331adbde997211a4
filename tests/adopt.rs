//! `gpuplan adopt`: hand-written Karpenter YAML → profiles → compile, and gpuplan's own out/ round-tripping.
//! Karpenter semantics relied on (and cited per test): kubernetes-sigs/karpenter pkg/scheduling/requirement.go
//! (operators), pkg/apis/v1/nodepool.go (budgets: nodes/schedule/duration/reasons; limits; weight),
//! karpenter-provider-aws pkg/apis/v1/labels.go (instance-gpu-* / instance-accelerator-* labels).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{repo, gpuplan, text};

use gpuplan::adopt::requirements::operator;

/// Adopts `input` (relative to the repo) into <tmp>/profiles; returns the tempdir and the command's output.
fn adopt(input: &Path, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    let mut args = vec!["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = gpuplan(dir.path(), &args);
    (dir, out)
}

fn hand_written() -> (tempfile::TempDir, Output) {
    hand_written_with(&[])
}

/// [`hand_written`] with more arguments.
fn hand_written_with(extra: &[&str]) -> (tempfile::TempDir, Output) {
    // Copied so that the provenance comments name a short relative path.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("karpenter")).unwrap();
    for f in ["gpu-nodepool.yaml", "tiers.yaml", "neuron.yaml"] {
        std::fs::copy(repo().join("tests/fixtures/adopt").join(f), dir.path().join("karpenter").join(f)).unwrap();
    }
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &[&["adopt", "karpenter", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"], extra].concat());
    (dir, out)
}

/// Every line is somewhere in the text (an adopted profile); the failure shows the whole text.
fn assert_has_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// `out` (a compiled tree) and `again` (compiled from what adopt made of it) are the same files, byte for byte;
/// returns how many. File by file first, so that a failure names the file.
fn assert_same_tree(out: &Path, again: &Path) -> usize {
    let original = gpuplan::emit::read_tree(out).unwrap();
    let reproduced = gpuplan::emit::read_tree(again).unwrap();
    for (path, text) in &original.files {
        let actual = reproduced.files.get(path).unwrap_or_else(|| panic!("{} was not reproduced", out.join(path).display()));
        assert_eq!(actual, text, "{} differs after adopt → compile", out.join(path).display());
    }
    let extra: Vec<&PathBuf> = reproduced.files.keys().filter(|p| !original.files.contains_key(*p)).collect();
    assert!(extra.is_empty(), "adopt → compile wrote files {} did not have: {extra:?}", out.display());
    original.files.len()
}

/// Round-trip (issue 12): adopting gpuplan's own out/ and compiling the result reproduces the whole out/ tree of
/// every cluster byte for byte, digests included: NodePools, EC2NodeClasses, NodeOverlays, ConfigMaps, the
/// ClusterPolicy, PDBs, HPAs, the PrometheusRule, ServiceMonitors, GitOps apps and the kustomization.
#[test]
fn adopting_the_examples_out_reproduces_the_whole_out_tree_byte_for_byte() {
    let (dir, out) = adopt(&repo().join("out"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let catalogs = repo().join("catalogs");
    let compiled = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    // The whole tree, every cluster at once: nothing missing, nothing else appeared (a cluster adopt invented, say).
    let compared = assert_same_tree(&repo().join("out"), &dir.path().join("out"));
    let clusters: Vec<String> = std::fs::read_dir(dir.path().join("out")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(clusters.len(), 4, "{clusters:?}");
    // Every file of out/, counted by walking it (the adopt page's count is this number).
    fn files(dir: &Path) -> usize {
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).map(|p| if p.is_dir() { files(&p) } else { 1 }).sum()
    }
    assert_eq!(compared, files(&repo().join("out")), "files compared");
    // …and the book's adopt page says it.
    let page = read(&repo(), "docs/src/adopt.md");
    assert!(page.contains(&format!("(test `adopt`: all {compared} files)")), "docs/src/adopt.md should say `all {compared} files`");
    // Every gpuplan object of out/ is adopted or derived: only the kustomizations, NodeOverlays, the add-ons'
    // Helm values (ConfigMaps but the GPU Operator's, which says who owns the ClusterPolicy; their plain files and
    // namespace) and the queues' ResourceFlavors and LocalQueues are listed as skipped, each with its reason
    // (compile writes them again).
    let report = String::from_utf8_lossy(&out.stdout);
    let skipped = &report[report.find("skipped (").expect("a skipped section")..];
    assert_eq!(skipped.lines().filter(|l| l.starts_with("  ")).count(), 30, "{skipped}");
    assert!(skipped.contains("ml-prod/resourceflavor-training.yaml ResourceFlavor/training (gpuplan's own: compiled again from the adopted queues)"), "{skipped}");
    assert!(skipped.contains("ml-prod/values/configmap-gpuplan-neuron-values.yaml ConfigMap/gpuplan-neuron-values (gpuplan's own: compiled again from the adopted pools' taints)"), "{skipped}");
    assert!(skipped.contains("ml-prod/values/helm/gpuplan-neuron-values.yaml <no kind>/<no name> (gpuplan's own Helm values file"), "{skipped}");
    assert!(skipped.contains("ml-research/nodeoverlay-small-models-8gpu-x7.yaml NodeOverlay/small-models-8gpu-x7 (gpuplan's own: compiled again"), "{skipped}");

    assert!(read(dir.path(), "profiles/batch-west.kdl").contains("gitops repo=\"https://github.com/example/gpu-platform.git\" revision=\"main\" path=\"out\" argocd=#true flux=#false"));
    assert!(read(dir.path(), "profiles/tiered-fallback.kdl").contains("argocd=#false flux=#true { depends-on \"karpenter\" \"kube-prometheus-stack\"; }"));
    // Tiers of one gpuplan pool are regrouped (gpuplan.dev/pool names the pool, the NodePool `<pool>-<tier>`).
    let vision = read(dir.path(), "profiles/tiered-fallback.kdl");
    assert!(vision.contains("pool \"vision\" preset=\"tiered\"") && vision.contains("tier \"a10g-spot\""), "{vision}");
    // ml-vision's dcgm-exporter ServiceMonitor is written only when gpuplan does not manage the GPU Operator; the
    // labels come from the PrometheusRule's metadata.labels (Prometheus' ruleSelector).
    assert!(vision.contains("monitoring namespace=\"monitoring\" {") && vision.contains("label \"release\" \"kube-prometheus-stack\"") && vision.contains("gpu-operator manage=#false"), "{vision}");
    // The reservation comes back as a reserved block: ids from the EC2NodeClass, the count from the limit.
    let training = read(dir.path(), "profiles/training.kdl");
    assert!(training.contains("id \"cr-0a1b2c3d4e5f60718\"") && training.contains("instances 2"), "{training}");
    // Queues: the ClusterQueue's spec and gpuplan's annotations; a share stays a share (not the numbers it resolved to).
    assert_has_lines(&training, &[
        "queue \"research\" namespace=\"ml-research\" pool=\"training\" {",
        "    gpus share=\"50%\" borrowing-limit=\"50%\"",
        "    cohort \"ml\"",
        "    gang #true",
        "    preemption within-cluster-queue=\"LowerPriority\"",
    ]);

    // Workloads. llm-server: name and namespace from the PDB's and HPA's metadata, pool from their
    // gpuplan.dev/pool annotation (the pool as the profile wrote it: both tiers of llm-inference).
    let llm = read(dir.path(), "profiles/llm-inference.kdl");
    assert_has_lines(&llm, &[
        "workload \"llm-server\" namespace=\"inference\" pool=\"llm-inference\" {",
        // The PDB's spec.selector.matchLabels.
        "selector \"app.kubernetes.io/name\" \"llm-server\"",
        // The HPA's spec.minReplicas / spec.maxReplicas.
        "replicas min=2 max=12",
        // The PDB's spec.minAvailable.
        "disruption-budget min-available=1",
        // The HPA's gpuplan.dev/metric annotation (`target 70% = 70`); the metric is the pool's default, so unwritten.
        "autoscale gpu-utilization=70 //",
    ]);
    // trainer: kind from the PrometheusRule's workload alert summary (`of StatefulSet trainer`; no HPA to name
    // it), GPUs per pod from its description (`and 8 × nvidia.com/gpu`), the budget from the PDB's
    // spec.maxUnavailable, the replica count (no HPA to state it) from the alert's gpuplan_replicas annotation.
    let recorded = "prometheusrule-gpuplan-ml-prod.yaml PrometheusRule/gpuplan-ml-prod GpuplanWorkloadPodsUnschedulable annotations.gpuplan_replicas";
    assert_has_lines(&training, &[
        "workload \"trainer\" namespace=\"training\" pool=\"training\" kind=\"StatefulSet\" {",
        "selector \"app\" \"trainer\"",
        "gpus-per-replica 8",
        "disruption-budget max-unavailable=1",
        recorded,
    ]);
    let trainer_replicas = training.lines().find(|l| l.trim_start().starts_with("replicas ")).unwrap();
    assert!(trainer_replicas.trim_start().starts_with("replicas 4 // ") && trainer_replicas.ends_with(recorded), "{trainer_replicas}");
    // Nothing about a workload is left to edit: the replica counts and selectors are all recorded.
    let stderr = String::from_utf8_lossy(&out.stderr);
    for id in ["training/trainer", "notebooks/jupyter", "inference/llm-server", "inference/embeddings"] {
        assert!(!stderr.contains(&format!("workload {id}:")), "a warning about {id}:\n{stderr}");
    }
    assert!(!stderr.contains("edit it"), "{stderr}");
    let notebooks = read(dir.path(), "profiles/notebooks.kdl");
    // jupyter: no HPA, so its min=1 max=24 and selector come from the alert's gpuplan_replicas ("1-24") and, the
    // PDB being there, the PDB's spec.selector.matchLabels.
    assert_has_lines(&notebooks, &[
        "workload \"jupyter\" namespace=\"notebooks\" pool=\"notebooks-shared\" {",
        "selector \"app\" \"jupyter\" // ",
        "replicas min=1 max=24 // ",
        // A percentage budget stays a percentage (the PDB's spec.minAvailable "50%").
        "disruption-budget min-available=\"50%\"",
        "disruption-budget max-unavailable=\"20%\"",
        // The MIG pool's HPA targets DCGM_FI_PROF_GR_ENGINE_ACTIVE at 600m: 60% (the pool's default metric).
        "autoscale gpu-utilization=60 //",
        "replicas min=2 max=16",
        // Monitoring: the namespace from the PrometheusRule's metadata.namespace; near-limit from
        // GpuplanNodePoolNearLimit's `>= 0.85`, low-gpu-utilization from GpuplanGPUUtilizationLow's `< 15`,
        // pending-for from GpuplanAcceleratorPodsPending's `for: 10m`.
        "monitoring namespace=\"monitoring\" {",
        "alerts near-limit=85 low-gpu-utilization=15 pending-for=\"10m\"",
    ]);
    // ml-prod's monitoring settings are all defaults and no profile has a block: none in any of its profiles.
    for profile in ["general-gpu", "inferentia", "llm-inference", "training"] {
        assert!(!read(dir.path(), &format!("profiles/{profile}.kdl")).contains("\nmonitoring"), "{profile}");
    }
    // The PrometheusRule names the profile that held the block (none for ml-prod).
    let rule = |cluster: &str| read(&repo().join("out").join(cluster), &format!("prometheusrule-gpuplan-{cluster}.yaml"));
    assert!(rule("ml-research").contains("gpuplan.dev/monitoring-profile: notebooks"));
    assert!(rule("ml-vision").contains("gpuplan.dev/monitoring-profile: tiered-fallback"));
    assert!(!rule("ml-prod").contains("gpuplan.dev/monitoring-profile"));
}

/// Operations settings the examples leave at their defaults round-trip too: every `monitoring` setting (namespace,
/// labels and a removed default label, the Karpenter and dcgm-exporter ServiceMonitors' namespaces, the
/// prometheus-adapter and GPU Operator namespaces, an image override, alert thresholds, an unmanaged operator),
/// a workload on one tier's NodePool, a metric override, a training pool's HPA, workloads without PDB or HPA.
#[test]
fn adopting_compiled_operations_settings_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    std::fs::create_dir(dir.path().join("original")).unwrap();
    std::fs::create_dir(dir.path().join("original/profiles")).unwrap();
    for f in ["serving.kdl", "train.kdl", "unmanaged.kdl"] {
        std::fs::copy(repo().join("tests/fixtures/adopt/ops").join(f), dir.path().join("original/profiles").join(f)).unwrap();
    }
    let compiled = gpuplan(&dir.path().join("original"), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    // Adopted from original/out into profiles/, so that the recompiled gpuplan.dev/source is the same.
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let again = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    let mut compared = 0;
    for cluster in ["ops-a", "ops-b"] {
        compared += assert_same_tree(&dir.path().join("original/out").join(cluster), &dir.path().join("out").join(cluster));
    }
    assert!(compared >= 23, "only {compared} files compared");

    let serving = read(dir.path(), "profiles/serving.kdl");
    assert_has_lines(&serving, &[
        // The PrometheusRule's metadata.namespace and metadata.labels (release removed: `#null`).
        "monitoring namespace=\"observability\" {",
        "label \"prometheus\" \"platform\"",
        "label \"release\" #null",
        // ServiceMonitor/karpenter's and ConfigMap/gpuplan-prometheus-adapter's metadata.namespace.
        "karpenter namespace=\"karpenter\"",
        "prometheus-adapter namespace=\"custom-metrics\"",
        // The device-plugin ConfigMap's metadata.namespace; the ClusterPolicy's devicePlugin fields that differ
        // from the pinned release's.
        "gpu-operator namespace=\"nvidia\" {",
        "image \"devicePlugin\" repository=\"registry.example.com/nvidia\" version=\"v0.20.1\"",
        "alerts near-limit=80 low-gpu-utilization=20 pending-for=\"15m\"",
        // The HPA's gpuplan.dev/pool annotation names one tier's NodePool; scaleTargetRef.kind; a metric that is
        // not the pool's default (not MIG) is written.
        "workload \"chat-api\" namespace=\"serving\" pool=\"chat-spot\" kind=\"StatefulSet\" {",
        "selector \"tier\" \"api\"",
        "autoscale gpu-utilization=55 metric=\"DCGM_FI_PROF_GR_ENGINE_ACTIVE\"",
        // No PDB, no HPA: only the workload alerts show it, and their gpuplan_selector / gpuplan_replicas
        // annotations record its selector (not the `app "single"` placeholder) and its one replica.
        "workload \"single\" namespace=\"serving\" pool=\"shared\" {",
        "selector \"app.kubernetes.io/name\" \"single\" // original/out/ops-a/prometheusrule-gpuplan-ops-a.yaml PrometheusRule/gpuplan-ops-a GpuplanWorkloadPodsUnschedulable annotations.gpuplan_selector",
        "selector \"tier\" \"batch\" //",
        "replicas 1 // original/out/ops-a/prometheusrule-gpuplan-ops-a.yaml PrometheusRule/gpuplan-ops-a GpuplanWorkloadPodsUnschedulable annotations.gpuplan_replicas",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("edit it"), "{}", text(&out));
    // The HPA's behavior is the training one, which ops::plan gives only to training and batch presets.
    let train = read(dir.path(), "profiles/train.kdl");
    assert!(train.contains("pool \"trainers\" preset=\"training-on-demand\"") && train.contains("scratch \"ebs\""), "{train}");
    let unmanaged = read(dir.path(), "profiles/unmanaged.kdl");
    // `dcgm-exporter namespace="dcgm"` is not adopted: where the GPU Operator runs, its own ServiceMonitor (in its
    // namespace) scrapes dcgm-exporter, so that line changes nothing in the output.
    for line in ["gpu-operator manage=#false", "alerts near-limit=90 low-gpu-utilization=10 pending-for=\"30m\"", "gpus-per-replica 2"] {
        assert!(unmanaged.contains(line), "missing `{line}` in:\n{unmanaged}");
    }
    // A batch-spot pool is tainted, so adopt writes the tainting one-NodePool preset (inference-on-demand), which
    // would tell the etl pods to spread: its unschedulable alert says they were not told to, so `spread #false`.
    assert!(unmanaged.contains("spread #false // workload batch/etl: its placement annotation"), "{unmanaged}");
}

/// Issue 32 item 11: an inference pool's spread and a workload's `max-per-node` come back from the output: the
/// placement annotation (`gpuplan.dev/placement`, on the PDB) says what the pods were told, and compiling the adopted
/// profile writes the same objects.
#[test]
fn adopting_spread_and_max_per_node_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    std::fs::create_dir_all(dir.path().join("original/profiles")).unwrap();
    let profile = "profile \"srv\" priority=10\ncluster \"ops-s\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\"\n    ami \"al2023@v20251023\"\n}\n\
        pool \"packed\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; }\n    types \"g6.12xlarge\"\n    max-accelerators 16\n    spread #false\n}\n\
        workload \"w\" namespace=\"ns\" pool=\"packed\" {\n    selector \"app\" \"w\"\n    replicas 4\n    max-per-node 2\n    disruption-budget max-unavailable=1\n}\n\
        workload \"one\" namespace=\"ns\" pool=\"packed\" {\n    selector \"app\" \"one\"\n    replicas 2\n    max-per-node 1\n    disruption-budget max-unavailable=1\n}\n";
    std::fs::write(dir.path().join("original/profiles/srv.kdl"), profile).unwrap();
    let compiled = gpuplan(&dir.path().join("original"), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let pdb = read(dir.path(), "original/out/ops-s/poddisruptionbudget-ns-w.yaml");
    assert!(pdb.contains("maxSkew: 2, whenUnsatisfiable: DoNotSchedule") && !pdb.contains("ScheduleAnyway"), "{pdb}");
    let one = read(dir.path(), "original/out/ops-s/poddisruptionbudget-ns-one.yaml");
    assert!(one.contains("podAntiAffinity over the workload's pods {topologyKey: kubernetes.io/hostname, requiredDuringSchedulingIgnoredDuringExecution}"), "{one}");
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let adopted = read(dir.path(), "profiles/srv.kdl");
    assert!(adopted.contains("spread #false") && adopted.contains("max-per-node 2") && adopted.contains("max-per-node 1"), "{adopted}");
    let again = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(assert_same_tree(&dir.path().join("original/out/ops-s"), &dir.path().join("out/ops-s")) >= 4);
}

/// Compiles tests/fixtures/adopt/ops (each profile's text passed through `edit`) into <tmp>/original/out.
fn compile_ops_fixtures(edit: impl Fn(&str, String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("original/profiles")).unwrap();
    for f in ["serving.kdl", "train.kdl", "unmanaged.kdl"] {
        let text = std::fs::read_to_string(repo().join("tests/fixtures/adopt/ops").join(f)).unwrap();
        std::fs::write(dir.path().join("original/profiles").join(f), edit(f, text)).unwrap();
    }
    let catalogs = repo().join("catalogs");
    let compiled = gpuplan(&dir.path().join("original"), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    dir
}

/// The `monitoring` block goes back into the profile that held it, which the PrometheusRule's
/// gpuplan.dev/monitoring-profile names — here not the cluster's first profile — and a block that sets nothing
/// but the defaults is written too (the annotation is what it compiles to): the tree comes back byte for byte.
#[test]
fn the_monitoring_block_returns_to_the_profile_that_held_it() {
    let dir = compile_ops_fixtures(|file, text| match file {
        // ops-a: serving's block moves to train (serving comes first among the cluster's profiles).
        "serving.kdl" => text[..text.find("\nmonitoring ").unwrap() + 1].to_string(),
        "train.kdl" => {
            let serving = std::fs::read_to_string(repo().join("tests/fixtures/adopt/ops/serving.kdl")).unwrap();
            format!("{text}\n{}", &serving[serving.find("\nmonitoring ").unwrap() + 1..])
        }
        // ops-b: a block with nothing but defaults.
        _ => format!("{}monitoring {{\n}}\n", &text[..text.find("\nmonitoring ").unwrap() + 1]),
    });
    let rule = |cluster: &str| read(&dir.path().join("original/out").join(cluster), &format!("prometheusrule-gpuplan-{cluster}.yaml"));
    assert!(rule("ops-a").contains("gpuplan.dev/monitoring-profile: train"), "{}", rule("ops-a"));
    assert!(rule("ops-b").contains("gpuplan.dev/monitoring-profile: unmanaged"), "{}", rule("ops-b"));
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let again = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    for cluster in ["ops-a", "ops-b"] {
        assert_same_tree(&dir.path().join("original/out").join(cluster), &dir.path().join("out").join(cluster));
    }
    let train = read(dir.path(), "profiles/train.kdl");
    assert!(train.contains("monitoring namespace=\"observability\" { // original/out/ops-a/prometheusrule-gpuplan-ops-a.yaml PrometheusRule/gpuplan-ops-a metadata.namespace; profile from metadata.annotations.gpuplan.dev/monitoring-profile"), "{train}");
    assert!(!read(dir.path(), "profiles/serving.kdl").contains("\nmonitoring"));
    let unmanaged = read(dir.path(), "profiles/unmanaged.kdl");
    assert!(unmanaged.contains("\nmonitoring namespace=\"monitoring\" { //") && unmanaged.contains("    label \"release\" \"kube-prometheus-stack\" //"), "{unmanaged}");
}

/// The profile that held the monitoring block is recorded but not among the inputs (its NodePools left out): the
/// block goes into an adopted profile of the cluster, with a warning naming the owner to move it back to.
#[test]
fn a_monitoring_block_whose_profile_is_not_adopted_goes_elsewhere_with_a_warning() {
    let dir = compile_ops_fixtures(|file, text| match file {
        "serving.kdl" => text[..text.find("\nmonitoring ").unwrap() + 1].to_string(),
        "train.kdl" => {
            let serving = std::fs::read_to_string(repo().join("tests/fixtures/adopt/ops/serving.kdl")).unwrap();
            format!("{text}\n{}", &serving[serving.find("\nmonitoring ").unwrap() + 1..])
        }
        _ => text,
    });
    let out_a = dir.path().join("original/out/ops-a");
    std::fs::remove_file(out_a.join("nodepool-trainers.yaml")).unwrap();
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "original/out/ops-a", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("belongs to profile `train`, which has no NodePool among the inputs; it goes into `serving`"), "{stderr}");
    assert!(read(dir.path(), "profiles/serving.kdl").contains("\nmonitoring namespace=\"observability\""));
}

/// Output of a gpuplan that did not record them yet (no gpuplan_replicas / gpuplan_selector on the workload
/// alerts, no gpuplan.dev/monitoring-profile; digests intact): the replica count of a workload without an HPA
/// and the selector of one without a PDB are placeholders, each with a comment and a warning to edit it; the
/// monitoring block goes into the cluster's first profile (serving, which held it here).
#[test]
fn output_without_the_recorded_fields_gets_placeholders_and_warnings() {
    let dir = compile_ops_fixtures(|_, text| text);
    for cluster in ["ops-a", "ops-b"] {
        let path = dir.path().join("original/out").join(cluster).join(format!("prometheusrule-gpuplan-{cluster}.yaml"));
        let original = std::fs::read_to_string(&path).unwrap();
        let header = gpuplan::layout::parse_header(&original).unwrap();
        let recorded = ["gpuplan_replicas:", "gpuplan_selector:", "gpuplan.dev/monitoring-profile:"];
        let body: String = header.body.lines().filter(|l| !recorded.iter().any(|r| l.trim_start().starts_with(r))).map(|l| format!("{l}\n")).collect();
        assert!(body.len() < header.body.len(), "{cluster}: nothing stripped");
        std::fs::write(&path, gpuplan::layout::with_header(header.source, &body)).unwrap();
    }
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("edited after gpuplan generated it"), "{stderr}");
    let serving = read(dir.path(), "profiles/serving.kdl");
    // single: no PDB, no HPA, nothing recorded: the `app "<name>"` placeholder and one replica (no PDB: max < 2).
    assert_has_lines(&serving, &[
        "selector \"app\" \"single\" // original/out/ops-a/prometheusrule-gpuplan-ops-a.yaml PrometheusRule/gpuplan-ops-a: not recorded (no PodDisruptionBudget, no gpuplan_selector), a placeholder",
        "replicas 1 // original/out/ops-a/prometheusrule-gpuplan-ops-a.yaml PrometheusRule/gpuplan-ops-a: not recorded (no HorizontalPodAutoscaler, no gpuplan_replicas), the smallest consistent count",
        "monitoring namespace=\"observability\" { // original/out/ops-a/prometheusrule-gpuplan-ops-a.yaml PrometheusRule/gpuplan-ops-a metadata.namespace\n",
    ]);
    for field in ["workload serving/single: selector: gpuplan's output records", "workload serving/single: replicas: gpuplan's output records"] {
        assert!(stderr.contains(field) && stderr.contains("edit it"), "no `{field}` warning:\n{stderr}");
    }
    assert!(stderr.contains("workload batch/etl: selector") && stderr.contains("workload batch/etl: replicas"), "{stderr}");
    // chat-api's and elastic's HPA and PDB state both.
    assert!(!stderr.contains("workload serving/chat-api:") && !stderr.contains("workload training/elastic:"), "{stderr}");
    // The monitoring block's profile is not recorded either: a warning naming the profile it went into.
    for (cluster, profile) in [("ops-a", "serving"), ("ops-b", "unmanaged")] {
        let warning = format!("original/out/{cluster}/prometheusrule-gpuplan-{cluster}.yaml: PrometheusRule/gpuplan-{cluster} metadata.annotations.gpuplan.dev/monitoring-profile: ");
        let line = stderr.lines().find(|l| l.contains(&warning)).unwrap_or_else(|| panic!("no `{warning}` warning:\n{stderr}"));
        assert!(line.contains(&format!("the block goes into `{profile}`")) && line.contains("edit it"), "{line}");
    }
}

/// Hand-edited gpuplan_selector / gpuplan_replicas records: spaces are trimmed (`app = x` is the label `app`, not
/// `"app "`), and a record gpuplan cannot have written (`app=x,app=y`, `0-3`) gets the placeholder with a warning
/// that says what is wrong with it — not "there is neither", and not a selector the profile silently narrows.
#[test]
fn hand_edited_selector_and_replicas_records_are_trimmed_or_warned_as_malformed() {
    let dir = compile_ops_fixtures(|_, text| text);
    let edit = |cluster: &str, from: &str, to: &str| {
        let path = dir.path().join("original/out").join(cluster).join(format!("prometheusrule-gpuplan-{cluster}.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{from} not in {}", path.display());
        std::fs::write(&path, text.replace(from, to)).unwrap();
    };
    edit("ops-a", "gpuplan_selector: app.kubernetes.io/name=single,tier=batch", "gpuplan_selector: \" app.kubernetes.io/name = single , tier=batch\"");
    edit("ops-a", "gpuplan_replicas: \"1\"", "gpuplan_replicas: \" 1 \"");
    edit("ops-b", "gpuplan_selector: app=etl", "gpuplan_selector: app=x,app=y");
    edit("ops-b", "gpuplan_replicas: \"1\"", "gpuplan_replicas: 0-3");
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let serving = read(dir.path(), "profiles/serving.kdl");
    for line in ["selector \"app.kubernetes.io/name\" \"single\" // ", "selector \"tier\" \"batch\" // ", "workload \"single\" namespace=\"serving\" pool=\"shared\" {"] {
        assert!(serving.contains(line), "missing `{line}` in:\n{serving}");
    }
    assert!(!stderr.contains("workload serving/single:"), "{stderr}");
    let unmanaged = read(dir.path(), "profiles/unmanaged.kdl");
    let rule = "original/out/ops-b/prometheusrule-gpuplan-ops-b.yaml PrometheusRule/gpuplan-ops-b GpuplanWorkloadPodsUnschedulable annotations";
    for line in [format!("selector \"app\" \"etl\" // {rule}.gpuplan_selector: malformed, a placeholder"), format!("replicas 1 // {rule}.gpuplan_replicas: malformed, the smallest consistent count")] {
        assert!(unmanaged.contains(&line), "missing `{line}` in:\n{unmanaged}");
    }
    for warning in [
        "PrometheusRule/gpuplan-ops-b workload batch/etl: selector: malformed gpuplan_selector `app=x,app=y`: label key `app` is given twice; the profile says selector \"app\" \"etl\": edit it",
        "PrometheusRule/gpuplan-ops-b workload batch/etl: replicas: malformed gpuplan_replicas `0-3`: a workload has at least 1 replica; the profile says replicas 1, the smallest count without a PodDisruptionBudget: edit it",
    ] {
        assert!(stderr.contains(warning), "no `{warning}` in:\n{stderr}");
    }
    assert!(!stderr.contains("there is neither"), "{stderr}");
}

/// PodDisruptionBudgets, HPAs and PrometheusRules that gpuplan did not generate name no pool: each is listed
/// as skipped with its file and the reason, and no `workload` is guessed.
#[test]
fn hand_written_workload_objects_are_reported_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("k8s")).unwrap();
    for f in ["gpu-nodepool.yaml", "workload-objects.yaml"] {
        std::fs::copy(repo().join("tests/fixtures/adopt").join(f), dir.path().join("k8s").join(f)).unwrap();
    }
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "k8s", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped: Vec<&str> = report["skipped"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    for object in ["PodDisruptionBudget/api", "HorizontalPodAutoscaler/api"] {
        let entry = skipped.iter().find(|s| s.starts_with(&format!("k8s/workload-objects.yaml {object} ("))).unwrap_or_else(|| panic!("{object} not listed: {skipped:?}"));
        assert!(entry.contains("not generated by gpuplan: a `workload` needs the pool its pods run on"), "{entry}");
    }
    let rule = skipped.iter().find(|s| s.starts_with("k8s/workload-objects.yaml PrometheusRule/gpu-alerts (")).unwrap_or_else(|| panic!("{skipped:?}"));
    assert!(rule.contains("not generated by gpuplan"), "{rule}");
    let table = gpuplan(dir.path(), &["adopt", "k8s", "--into", "p2", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("k8s/workload-objects.yaml PodDisruptionBudget/api (not generated by gpuplan"), "{}", text(&table));
    assert!(!read(dir.path(), "profiles/gpu.kdl").contains("workload"));
}

/// A workload is its profile's: two clusters that both run `notebooks/jupyter` (profiles notebooks and nb2, with
/// different replica counts) keep their own PDB, alerts and replica count — grouping the traces by namespace and
/// name alone merged them into one profile and dropped the other's.
#[test]
fn the_same_workload_in_two_clusters_stays_in_each_profile() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    std::fs::create_dir_all(dir.path().join("original/profiles")).unwrap();
    let notebooks = read(&repo(), "profiles/notebooks.kdl");
    std::fs::write(dir.path().join("original/profiles/notebooks.kdl"), &notebooks).unwrap();
    let nb2 = notebooks
        .replace("profile \"notebooks\"", "profile \"nb2\"")
        .replace("ml-research", "ml-r2")
        .replace("replicas min=1 max=24", "replicas min=1 max=7");
    assert!(nb2.contains("cluster \"ml-r2\"") && nb2.contains("max=7"), "{nb2}");
    std::fs::write(dir.path().join("original/profiles/nb2.kdl"), nb2).unwrap();
    let compiled = gpuplan(&dir.path().join("original"), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let again = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    assert_same_tree(&dir.path().join("original/out"), &dir.path().join("out"));
    for (profile, cluster, replicas) in [("notebooks", "ml-research", "replicas min=1 max=24 // "), ("nb2", "ml-r2", "replicas min=1 max=7 // ")] {
        let adopted = read(dir.path(), &format!("profiles/{profile}.kdl"));
        for line in [
            "workload \"jupyter\" namespace=\"notebooks\" pool=\"notebooks-shared\" { // ".to_string(),
            format!("original/out/{cluster}/poddisruptionbudget-notebooks-jupyter.yaml PodDisruptionBudget/jupyter"),
            replicas.to_string(),
            "workload \"embeddings\" namespace=\"inference\" pool=\"small-models\" {".to_string(),
        ] {
            assert!(adopted.contains(&line), "missing `{line}` in {profile}.kdl:\n{adopted}");
        }
        assert_eq!(adopted.matches("workload \"jupyter\"").count(), 1, "{adopted}");
        assert!(!adopted.contains(if profile == "nb2" { "max=24" } else { "max=7" }), "{adopted}");
    }
}

/// A gpuplan-labelled ServiceMonitor adopt does not know (gpuplan writes `karpenter` and `nvidia-dcgm-exporter`
/// only) is listed as skipped with the reason — it used to land in the ClusterPolicy's slot, dropping the
/// ClusterPolicy's image overrides without a word.
#[test]
fn an_unknown_gpuplan_service_monitor_is_skipped_not_taken_for_the_cluster_policy() {
    let dir = compile_ops_fixtures(|_, text| text);
    let ops_a = dir.path().join("original/out/ops-a");
    let karpenter = read(&ops_a, "servicemonitor-karpenter.yaml");
    let extra: String = karpenter.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{}\n", l.replace("name: karpenter", "name: vllm"))).collect();
    assert!(extra.contains("name: vllm") && extra.contains("gpuplan.dev/profile:"), "{extra}");
    std::fs::write(ops_a.join("servicemonitor-vllm.yaml"), extra).unwrap();
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let serving = read(dir.path(), "profiles/serving.kdl");
    assert!(serving.contains("image \"devicePlugin\" repository=\"registry.example.com/nvidia\" version=\"v0.20.1\""), "{serving}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped: Vec<&str> = report["skipped"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let entry = skipped.iter().find(|s| s.starts_with("original/out/ops-a/servicemonitor-vllm.yaml ServiceMonitor/vllm (")).unwrap_or_else(|| panic!("not listed: {skipped:?}"));
    assert!(entry.contains("not one gpuplan writes"), "{entry}");
}

/// A cluster's monitoring objects whose profiles are none of the adopted ones (ml-prod's files, plus ml-vision's
/// PrometheusRule and dcgm-exporter ServiceMonitor) have nowhere to go: each is listed as skipped with the reason.
#[test]
fn monitoring_objects_of_a_cluster_without_adopted_profiles_are_listed_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for entry in std::fs::read_dir(repo().join("out/ml-prod")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, input.join(path.file_name().unwrap())).unwrap();
        }
    }
    for f in ["prometheusrule-gpuplan-ml-vision.yaml", "servicemonitor-karpenter.yaml"] {
        std::fs::copy(repo().join("out/ml-vision").join(f), input.join(format!("vision-{f}"))).unwrap();
    }
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir.path(), &["adopt", "in", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped: Vec<&str> = report["skipped"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    for object in ["in/vision-prometheusrule-gpuplan-ml-vision.yaml PrometheusRule/gpuplan-ml-vision", "in/vision-servicemonitor-karpenter.yaml ServiceMonitor/karpenter"] {
        let entry = skipped.iter().find(|s| s.starts_with(&format!("{object} ("))).unwrap_or_else(|| panic!("{object} not listed: {skipped:?}"));
        assert!(entry.contains("monitoring of profile tiered-fallback") && entry.contains("no NodePool of it among the inputs"), "{entry}");
    }
    // ml-prod's own monitoring objects are adopted (as defaults), not skipped.
    assert!(!skipped.iter().any(|s| s.contains("PrometheusRule/gpuplan-ml-prod")), "{skipped:?}");
    assert!(!std::fs::read_dir(dir.path().join("profiles")).unwrap().any(|e| std::fs::read_to_string(e.unwrap().path()).unwrap().contains("\nmonitoring")));
}

#[test]
fn hand_written_nodepools_compile_and_keep_their_intent() {
    let (dir, out) = hand_written();
    assert!(out.status.success(), "{}", text(&out));
    let inference = read(dir.path(), "profiles/inference.kdl");
    // requirement.go: Lt 2 on an integer label admits ≤ 1; Gte/Lte are inclusive (Karpenter's Gte/Lte RFC,
    // designs/ in kubernetes-sigs/karpenter); Gt 4 admits 5 and up.
    assert_has_lines(&inference, &[
        "per-node max=1",
        "memory-min \"16GiB\"",
        "per-node max=4",
        "generation-min 5",
        "exclude-families \"gr6\"",
        "exclude-types \"g6.16xlarge\"",
        "arch \"amd64\" \"arm64\"",
        "name \"A10G\" \"L4\"",
        "weight 100",
        "weight 10",
        "termination-grace-period \"1h\"",
        "expire-after \"168h\"",
        // nodepool.go Budget: nodes, schedule (cron), duration, reasons (Underutilized, Empty, Drifted).
        "budget nodes=\"0\" schedule=\"0 9 * * 1-5\" duration=\"8h\" reasons=\"Underutilized,Drifted\"",
        "budget nodes=\"10%\"",
        "taint \"workload\" value=\"inference\" effect=\"NoSchedule\"",
    ]);
    // Every line names the original file, object and field.
    assert!(inference.contains("max-accelerators 8 // karpenter/tiers.yaml NodePool/inference-spot spec.limits.nvidia.com/gpu"), "{inference}");
    let neuron = read(dir.path(), "profiles/neuron.kdl");
    assert!(neuron.contains("neuron {") && neuron.contains("name \"Inferentia2\"") && neuron.contains("max-accelerators 12"), "{neuron}");
    // Compiled, the spot pool keeps the original's five types, weight, limit, taint and budgets.
    let catalogs = repo().join("catalogs");
    let compiled = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let spot: serde_json::Value = serde_saphyr::from_str(&read(dir.path(), "out/demo/nodepool-inference-spot.yaml")).unwrap();
    let original: Vec<serde_json::Value> = serde_saphyr::from_multiple(&read(&repo(), "tests/fixtures/adopt/tiers.yaml")).unwrap();
    let original = &original[0];
    let types = |np: &serde_json::Value| {
        let mut t: Vec<String> = np["spec"]["template"]["spec"]["requirements"].as_array().unwrap().iter().find(|r| r["key"] == "node.kubernetes.io/instance-type").unwrap()["values"]
            .as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        t.sort();
        t
    };
    assert_eq!(types(&spot), types(original));
    assert_eq!(spot["spec"]["disruption"]["budgets"], original["spec"]["disruption"]["budgets"]);
    assert_eq!(spot["spec"]["weight"], original["spec"]["weight"]);
    assert_eq!(spot["spec"]["limits"]["nvidia.com/gpu"], original["spec"]["limits"]["nvidia.com/gpu"]);
}

#[test]
fn nothing_is_dropped_silently() {
    let (dir, out) = hand_written();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    for (object, field) in [
        ("NodePool/gpu", "spec.template.spec.kubelet.maxPods"),
        ("NodePool/gpu", "spec.limits.nvidia.com/gpu"),
    ] {
        assert!(stderr.contains(&format!("karpenter/{}", if object.contains("inference") { "tiers.yaml" } else { "gpu-nodepool.yaml" })) && stderr.contains(&format!("{object} {field}")), "no warning for {object} {field}:\n{stderr}");
    }
    // Kept in the profile as comments too.
    let gpu = read(dir.path(), "profiles/gpu.kdl");
    assert!(gpu.contains("// not adopted: spec.template.spec.kubelet.maxPods = 110"), "{gpu}");
    // The class's userData is the cluster's `user-data`, verbatim: no warning.
    assert!(gpu.contains("    user-data \"") && !stderr.contains("EC2NodeClass/gpu spec.userData"), "{gpu}");
    // The cpu limit is a `limits` line now; DoesNotExist on a custom label and minValues on a well-known one are `require` lines.
    assert!(!stderr.contains("NodePool/inference-on-demand spec.limits.cpu"), "{stderr}");
    for field in ["spec.template.spec.requirements[8]", "spec.template.spec.requirements[9]"] {
        assert!(!stderr.contains(&format!("NodePool/inference-on-demand {field}")), "{stderr}");
    }
    let profiles: String = std::fs::read_dir(dir.path().join("profiles")).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
    assert!(profiles.contains("limits cpu=256 //"), "{profiles}");
    assert!(profiles.contains("require \"example.com/rack\" \"DoesNotExist\""), "{profiles}");
    assert!(profiles.contains("require \"karpenter.k8s.aws/instance-size\" \"NotIn\" \"metal\" min-values=2"), "{profiles}");
    // Exists on the GPU count is implied (gpuplan only picks accelerated types): no warning.
    assert!(!stderr.contains("NodePool/gpu spec.template.spec.requirements[1]"), "{stderr}");
    // Other kinds are listed as skipped.
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["skipped"],
        serde_json::json!(["karpenter/gpu-nodepool.yaml ConfigMap/unrelated (not a kind adopt reads: NodePools, EC2NodeClasses, EKS Auto Mode NodeClasses and gpuplan's own workload, queue, monitoring and GitOps objects)"])
    );
}

fn pool<'r>(report: &'r serde_json::Value, name: &str) -> &'r serde_json::Value {
    report["pools"].as_array().unwrap().iter().find(|p| p["node_pool"] == name).unwrap_or_else(|| panic!("no {name} in report"))
}

fn codes(v: &serde_json::Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|f| f.as_str().unwrap().split(' ').next().unwrap().to_string()).collect()
}

#[test]
fn the_report_shows_the_originals_defects_and_what_compiling_changes() {
    let (_dir, out) = hand_written();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gpu = pool(&report, "gpu");
    // gpuplan's lint rules over the original objects: WhenEmptyOrUnderutilized (GP001), @latest (GP002), no
    // limit (GP013); an unbounded pool has no worst case.
    let before = codes(&gpu["findings_before"]);
    for code in ["GP001", "GP002", "GP013", "AD002"] {
        assert!(before.contains(&code.to_string()), "{code} not in {before:?}");
    }
    assert!(gpu["worst_case_before"].is_null() && gpu["worst_case_after"].as_f64().unwrap() > 0.0, "{gpu}");
    assert_eq!(gpu["limit_before"], serde_json::Value::Null);
    assert_eq!(gpu["limit_after"], "16");
    // The 1-GPU 16xlarge costs 4× a g5.xlarge per GPU (AD002); a spot pool of 5 types (GP006, AD003).
    let spot = pool(&report, "inference-spot");
    let before = codes(&spot["findings_before"]);
    for code in ["AD002", "AD003", "GP006"] {
        assert!(before.contains(&code.to_string()), "{code} not in {before:?}");
    }
    // Named types stay named: nothing added or removed, same worst case.
    assert_eq!(spot["types_added"], serde_json::json!([]));
    assert_eq!(spot["types_removed"], serde_json::json!([]));
    assert_eq!(spot["worst_case_before"], spot["worst_case_after"]);
    // The on-demand tier keeps every type its original admits (adopt keeps behaviour), so its worst case too.
    let od = pool(&report, "inference-on-demand");
    assert_eq!((&od["types_removed"], &od["worst_case_after"]), (&serde_json::json!([]), &od["worst_case_before"]), "{od}");
    assert_eq!((od["weight_before"].as_u64(), od["weight_after"].as_u64()), (Some(10), Some(10)));
    // With --optimize, price-ratio-max removes the dear large sizes, so the worst case falls, and the report says it.
    let (_dir, out) = hand_written_with(&["--optimize"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let od = pool(&report, "inference-on-demand");
    assert!(od["types_removed"].as_array().unwrap().iter().any(|t| t == "g5.16xlarge"), "{od}");
    assert!(od["worst_case_after"].as_f64().unwrap() < od["worst_case_before"].as_f64().unwrap(), "{od}");
}

#[test]
fn report_formats() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    let fixture = repo().join("tests/fixtures/adopt/tiers.yaml");
    let md = gpuplan(dir.path(), &["adopt", fixture.to_str().unwrap(), "--into", "p", "--catalogs", catalogs.to_str().unwrap(), "--format", "markdown"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("| NodePool | worst case $/h | at limit $/h | limit | weight | types | lint |\n|---|"), "{md}");
    let table = gpuplan(dir.path(), &["adopt", fixture.to_str().unwrap(), "--into", "p", "--catalogs", catalogs.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.lines().next().unwrap().starts_with("NodePool "), "{table}");
    assert!(table.contains("inference-spot") && table.contains("$32.77 → $32.77"), "{table}");
}

/// kubernetes-sigs/karpenter pkg/scheduling/requirement.go: NotIn and DoesNotExist match a node without the
/// label; Gt/Lt compare integers strictly and never match a missing label; Gte/Lte (Karpenter's Gte/Lte
/// operators RFC) are inclusive.
#[test]
fn requirement_operators_follow_karpenter() {
    let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(operator("In", Some("g5"), &v(&["g5", "g6"])));
    assert!(!operator("In", None, &v(&["g5"])));
    assert!(operator("NotIn", None, &v(&["g5"])));
    assert!(!operator("NotIn", Some("g5"), &v(&["g5"])));
    assert!(operator("Exists", Some("x"), &[]) && !operator("Exists", None, &[]));
    assert!(operator("DoesNotExist", None, &[]) && !operator("DoesNotExist", Some("x"), &[]));
    assert!(operator("Gt", Some("5"), &v(&["4"])) && !operator("Gt", Some("4"), &v(&["4"])) && !operator("Gt", None, &v(&["4"])));
    assert!(operator("Lt", Some("1"), &v(&["2"])) && !operator("Lt", Some("2"), &v(&["2"])));
    assert!(operator("Gte", Some("4"), &v(&["4"])) && !operator("Gte", Some("3"), &v(&["4"])));
    assert!(operator("Lte", Some("4"), &v(&["4"])) && !operator("Lte", Some("5"), &v(&["4"])));
    assert!(!operator("Gt", Some("abc"), &v(&["4"])), "non-integer labels never satisfy Gt");
}

/// AMD GPUs under the NVIDIA taint (AD001): a catalog with an AMD type (g4ad: Radeon Pro V520, as EC2
/// DescribeInstanceTypes reports it) and a NodePool admitting its family.
#[test]
fn amd_gpus_admitted_under_the_nvidia_taint_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut catalog: serde_json::Value = serde_json::from_str(&read(&repo(), "catalogs/us-east-1.json")).unwrap();
    let types = catalog["instance_types"].as_array_mut().unwrap();
    let mut amd = types.iter().find(|t| t["name"] == "g4dn.xlarge").unwrap().clone();
    amd["name"] = "g4ad.xlarge".into();
    amd["family"] = "g4ad".into();
    amd["gpus"][0]["manufacturer"] = "AMD".into();
    amd["gpus"][0]["name"] = "Radeon Pro V520".into();
    types.push(amd);
    std::fs::create_dir(dir.path().join("catalogs")).unwrap();
    std::fs::write(dir.path().join("catalogs/us-east-1.json"), serde_json::to_string(&catalog).unwrap()).unwrap();
    let yaml = read(&repo(), "tests/fixtures/adopt/gpu-nodepool.yaml").replace("values: [\"g4dn\", \"g5\", \"g6\"]", "values: [\"g4ad\", \"g4dn\"]");
    std::fs::write(dir.path().join("np.yaml"), yaml).unwrap();
    let out = gpuplan(dir.path(), &["adopt", "np.yaml", "--into", "profiles", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let findings = pool(&report, "gpu")["findings_before"].to_string();
    assert!(findings.contains("AD001") && findings.contains("g4ad.xlarge"), "{findings}");
}

#[test]
fn version_lists_the_catalog_digests_the_annotations_carry() {
    let out = gpuplan(&repo(), &["--version"]);
    let version = String::from_utf8_lossy(&out.stdout);
    let annotated = read(&repo(), "out/ml-prod/nodepool-training.yaml");
    let digest = annotated.lines().find_map(|l| l.trim().strip_prefix("gpuplan.dev/catalog: ")).unwrap();
    assert!(version.contains(&format!("catalog {digest} (built in)")) || version.contains(&format!("catalog {digest} (catalogs/us-east-1.json)")), "{version} lacks {digest}");
    assert!(version.contains("us-west-2@"), "{version}");
}

#[test]
fn completions_and_man_page_cover_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = gpuplan(&repo(), &["completions", shell]);
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && script.contains("adopt") && script.contains("compile"), "{shell}: {script}");
    }
    let man = gpuplan(&repo(), &["man"]);
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(page.contains(".TH gpuplan 1") && page.contains("adopt") && page.contains("completions"), "{page}");
}

/// https://no-color.org: NO_COLOR (non-empty) disables colour; an explicit --color=always overrides it.
#[test]
fn no_color_and_color_flag() {
    let run = |no_color: Option<&str>, flag: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gpuplan"));
        c.current_dir(repo()).env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        if let Some(f) = flag {
            c.arg(f);
        }
        let out = c.args(["explain", "no-such-profile"]).output().unwrap();
        String::from_utf8_lossy(&out.stderr).contains('\x1b')
    };
    assert!(!run(None, None), "a pipe is not coloured by default");
    assert!(run(None, Some("--color=always")));
    assert!(run(Some("1"), Some("--color=always")), "the flag overrides NO_COLOR");
    assert!(!run(Some("1"), None));
    assert!(!run(None, Some("--color=never")));
}

/// `gpuplan schema` is the parser's table: every documented node, with its documented properties, parses
/// where the table says it goes (no unknown-node/property/argument error: E0102, E0103, E0104).
#[test]
fn every_schema_example_parses() {
    use gpuplan::profile::schema::NODES;
    let cluster = "cluster \"c\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\n";
    for node in NODES {
        let body = match node.parent {
            "profile" if node.name == "profile" => format!("{}\n{cluster}", node.example),
            "profile" if node.name == "cluster" => format!("profile \"p\" priority=1\n{}\n", node.example),
            "profile" => format!("profile \"p\" priority=1\n{cluster}{}\n", node.example),
            "cluster" => format!("profile \"p\" priority=1\ncluster \"c\" {{\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n    {}\n}}\n", if ["region", "zones", "ami"].contains(&node.name) { String::new() } else { node.example.to_string() }),
            "pool" if node.name == "tier" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" preset=\"tiered\" {{\n    {}\n}}\n", node.example),
            "pool" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" {{\n    {}\n}}\n", node.example),
            "gpu" | "cpu" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" {{\n    {} {{\n        {}\n    }}\n}}\n", node.parent, node.example),
            "overlay" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" {{\n    overlay \"o\" {{\n        {}\n    }}\n}}\n", node.example),
            "disruption" | "reserved" | "kubelet" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" {{\n    {} {{\n        {}\n    }}\n}}\n", node.parent, node.example),
            "workload" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" {{ }}\nworkload \"w\" namespace=\"ns\" pool=\"x\" {{\n    selector \"app\" \"w\"\n    {}\n}}\n", if node.name == "selector" { "" } else { node.example }),
            "monitoring" => format!("profile \"p\" priority=1\n{cluster}monitoring {{\n    {}\n}}\n", node.example),
            "queue" => format!("profile \"p\" priority=1\n{cluster}pool \"x\" {{ }}\nqueue \"q\" namespace=\"ns\" pool=\"x\" {{\n    {}{}\n}}\n", if ["gpus", "neuron-devices"].contains(&node.name) { "" } else { "gpus nominal=1\n    " }, node.example),
            "gitops" => format!("profile \"p\" priority=1\ncluster \"c\" {{\n    region \"us-east-1\"\n    ami \"al2023@v20251023\"\n    gitops repo=\"https://example.com/r.git\" revision=\"main\" argocd=#false flux=#true {{\n        {}\n    }}\n}}\n", node.example),
            other => panic!("unknown parent {other}"),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.kdl");
        std::fs::write(&path, &body).unwrap();
        let mut sources = gpuplan::diagnostic::Sources::default();
        let (_, diagnostics) = gpuplan::profile::parse_files(&[path.as_path()], &mut sources);
        let unknown: Vec<String> = diagnostics.iter().filter(|d| ["E0102", "E0103", "E0104"].contains(&d.code.as_str())).map(|d| format!("{}: {}", d.code, d.message)).collect();
        assert!(unknown.is_empty(), "schema entry {} > {} does not parse: {unknown:?}\n{body}", node.parent, node.name);
    }
}

/// The parser's unknown-node help lists exactly the table's names (so a node missing from the table is a node
/// the parser rejects).
#[test]
fn unknown_nodes_are_checked_against_the_schema_table() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.kdl"), "profile \"p\" priority=1\ncluster \"c\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\npool \"x\" {\n    max-acelerators 8\n}\n").unwrap();
    let out = gpuplan(dir.path(), &["lint", "p.kdl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("did you mean `max-accelerators`?"), "{stderr}");
    let help = &stderr[stderr.find("valid here:").expect("lists valid names")..];
    for name in gpuplan::profile::schema::names("pool") {
        assert!(help.contains(&format!(" {name},")) || help.contains(&format!(" {name}\n")) || help.ends_with(name), "{name} not listed: {help}");
    }
    let schema = gpuplan(&repo(), &["schema"]);
    let text = String::from_utf8_lossy(&schema.stdout);
    assert!(text.contains("max-accelerators <integer>") && text.contains("Default: sized from the budget."), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&gpuplan(&repo(), &["schema", "--format", "json"]).stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), gpuplan::profile::schema::NODES.len());
}

/// A ClusterQueue edited after gpuplan wrote it: its quota comes from the spec (the `gpuplan.dev/quota` annotation
/// may be stale), with a warning that the file was edited; the rest of the block from the spec as usual.
#[test]
fn a_hand_edited_cluster_queue_is_adopted_from_its_spec() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    let profile = "profile \"p\" priority=10\ncluster \"ml\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\nbudget usd-per-hour=100\npool \"web\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; per-node max=1; }\n    max-accelerators 8\n}\nqueue \"team-a\" namespace=\"team-a\" pool=\"web\" {\n    gpus share=\"50%\" borrowing-limit=2\n    cohort \"web\"\n}\n";
    std::fs::write(dir.path().join("profiles/p.kdl"), profile).unwrap();
    let catalogs = repo().join("catalogs");
    let compiled = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let path = dir.path().join("out/ml/clusterqueue-team-a.yaml");
    let cq = std::fs::read_to_string(&path).unwrap();
    assert!(cq.contains("        name: nvidia.com/gpu\n        nominalQuota: \"4\""), "{cq}");
    std::fs::write(&path, cq.replace("        name: nvidia.com/gpu\n        nominalQuota: \"4\"", "        name: nvidia.com/gpu\n        nominalQuota: \"6\"")).unwrap();
    let out = gpuplan(dir.path(), &["adopt", "out", "--into", "adopted", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let adopted = read(dir.path(), "adopted/p.kdl");
    assert_has_lines(&adopted, &["queue \"team-a\" namespace=\"team-a\" pool=\"web\" {", "    gpus nominal=6 borrowing-limit=2 // ", "    cohort \"web\""]);
    assert!(text(&out).contains("ClusterQueue/team-a (file): edited after gpuplan generated it"), "{}", text(&out));
}

/// Issue 20: KEDA workloads survive adopt → compile byte for byte: scale-to-zero with its cooldown and polling, a
/// Kueue trigger, a prometheus trigger with an activation threshold, `autoscale` read back from the gpu-utilization
/// trigger, a trigger-only workload on a training pool (its slow HPA behaviour makes the pool a training one), and a
/// Prometheus url that is not the default (read back from the triggers' serverAddress into `monitoring`).
#[test]
fn adopting_keda_scaled_objects_reproduces_them() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir(src.path().join("profiles")).unwrap();
    let profile = r#"profile "k" priority=10
cluster "kc" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "al2023@v20251023"
}
budget usd-per-hour=200
pool "serve" preset="inference-on-demand" {
    gpu { name "L4"; per-node max=1; }
}
pool "train" preset="training-on-demand" {
    gpu { name "A10G"; per-node max=1; }
    max-accelerators 8
}
monitoring namespace="obs" {
    prometheus url="https://thanos-query.obs.svc:10902"
}
workload "batch" namespace="inference" pool="serve" {
    selector "app" "batch"
    replicas min=0 max=6
    scale-to-zero cooldown="1h30m" polling="45s"
    trigger "kueue-pending" cluster-queue="serving" per-replica=2
    trigger "prometheus" query="sum(queue_depth{queue=\"batch\"})" threshold=12.5 activation=3
    autoscale gpu-utilization=60
}
workload "etl" namespace="ml" pool="train" {
    selector "app" "etl"
    replicas min=1 max=4
    trigger "kueue-pending" cluster-queue="etl"
}
"#;
    std::fs::write(src.path().join("profiles/k.kdl"), profile).unwrap();
    let catalogs = repo().join("catalogs");
    let compiled = gpuplan(src.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let (dir, out) = adopt(&src.path().join("out"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let adopted = read(dir.path(), "profiles/k.kdl");
    assert_has_lines(&adopted, &[
        "scale-to-zero cooldown=\"1h30m\" polling=\"45s\"",
        "trigger \"kueue-pending\" cluster-queue=\"serving\" per-replica=2",
        "trigger \"prometheus\" query=\"sum(queue_depth{queue=\\\"batch\\\"})\" threshold=12.5 activation=3",
        "autoscale gpu-utilization=60",
        "prometheus url=\"https://thanos-query.obs.svc:10902\"",
    ]);
    let again = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    assert_same_tree(&src.path().join("out"), &dir.path().join("out"));
}

/// Karpenter's NodePool weights run from 1 to 100 (sigs.k8s.io/karpenter pkg/apis/v1/nodepool.go `Weight`, minimum 1,
/// maximum 100) and gpuplan gives every NodePool of a cluster its own (E0153 for ties). 101 NodePools of one cluster have
/// no distinct weights to keep Karpenter's order with: adopt refuses at once, saying so, and writes nothing (the
/// renumbering used to give the last ones weight 1 each, and the compile then said E0153).
#[test]
fn adopting_more_nodepools_than_karpenter_has_weights_is_refused_before_anything_is_written() {
    let fixture = std::fs::read_to_string(repo().join("tests/fixtures/adopt/gpu-nodepool.yaml")).unwrap();
    let (pool, class) = fixture.split_once("\n---\n").unwrap();
    let pools: Vec<String> = (0..101).map(|i| pool.replace("  name: gpu\nspec:", &format!("  name: gpu-{i:03}\nspec:\n  weight: 50"))).collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("many.yaml"), format!("{}\n---\n{class}", pools.join("\n---\n"))).unwrap();
    let out = gpuplan(dir.path(), &["adopt", "many.yaml", "--into", "profiles", "--catalogs", repo().join("catalogs").to_str().unwrap()]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("has 101 NodePools") && text(&out).contains("at most 100"), "{}", text(&out));
    assert!(!dir.path().join("profiles").exists(), "nothing is written");
}
