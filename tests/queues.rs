//! Kueue queues (issue 20): the `queue` profile block → ResourceFlavor, ClusterQueue and LocalQueue; the checks
//! against the NodePools (E0210, E0211); located parse errors (E0200–E0209); the lint rules on edited objects
//! (GP020, GP021); `explain`; the kustomization's prerequisites. Kueue semantics are those of
//! kubernetes-sigs/kueue v0.19.2, the release whose CRDs `tests/fixtures/shared/schemas/kueue` holds.

mod common;

use common::*;
use gpuplan::compile::CompileError;
use gpuplan::diagnostic::ProfileDiagnostic;
use serde_json::json;

const AMI: &str = "al2023@v20251023";

/// One on-demand L4 pool of 8 GPUs (one NodePool `web`), and `queues` after it.
fn with_queues(queues: &str) -> String {
    profile("p", 10, AMI, &format!("budget usd-per-hour=100\npool \"web\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 8\n}}\n{queues}"))
}

const TWO_QUEUES: &str = "queue \"team-a\" namespace=\"team-a\" pool=\"web\" {\n    gpus nominal=4 borrowing-limit=2\n    cohort \"web\"\n    gang #true\n    preemption within-cluster-queue=\"LowerPriority\"\n}\nqueue \"team-b\" namespace=\"team-b\" pool=\"web\" {\n    gpus share=\"50%\" lending-limit=1\n    cohort \"web\"\n}\n";

fn errors(c: &Compiled) -> &[ProfileDiagnostic] {
    match &c.result {
        Err(CompileError::Profiles { diagnostics }) => diagnostics,
        Err(e) => panic!("not a profile error: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

#[track_caller]
fn assert_error<'d>(c: &'d Compiled, code: &str, message: &str, at: &str) -> &'d ProfileDiagnostic {
    let found = with_code(errors(c), code);
    assert_eq!(found.len(), 1, "expected one {code}:\n{}", gpuplan::diagnostic::render_plain(errors(c)));
    let d = found[0];
    assert!(d.message.contains(message), "{code}: `{}` lacks `{message}`", d.message);
    assert_eq!(d.location, c.loc("p.kdl", at), "{code}: {}", d.message);
    assert!(d.help.as_deref().is_some_and(|h| !h.is_empty()), "{code} says what to do");
    d
}

fn file(c: &Compiled, path: &str) -> String {
    let tree = c.ok().output_tree();
    tree.files.get(std::path::Path::new(path)).cloned().unwrap_or_else(|| panic!("no {path} in {:?}", tree.files.keys().collect::<Vec<_>>()))
}

/// The emitted objects, exactly: the flavor carries the NodePool's labels and tolerations of its taints; the
/// ClusterQueue one resource group over cpu, memory and nvidia.com/gpu with the quotas resolved against the
/// NodePool's limit (team-b's 50% of 8 is 4); the LocalQueue points at it from the queue's namespace.
#[test]
fn a_queue_compiles_to_a_flavor_a_cluster_queue_and_a_local_queue() {
    let c = compile_one(with_queues(TWO_QUEUES));
    insta::assert_snapshot!("resourceflavor_web", file(&c, "ml/resourceflavor-web.yaml"));
    insta::assert_snapshot!("clusterqueue_team_a", file(&c, "ml/clusterqueue-team-a.yaml"));
    insta::assert_snapshot!("clusterqueue_team_b", file(&c, "ml/clusterqueue-team-b.yaml"));
    insta::assert_snapshot!("localqueue_team_a", file(&c, "ml/localqueue-team-a-team-a.yaml"));
}

#[test]
fn a_share_resolves_against_each_flavors_nodepool_limit() {
    let c = compile_one(with_queues(TWO_QUEUES));
    let b = &c.ok().plan.clusters[0].queues.queues[1];
    assert_eq!((b.name.as_str(), b.flavors[0].limit, b.flavors[0].nominal, b.flavors[0].lending_limit), ("team-b", 8, 4, Some(1)));
}

/// Every Kueue object the examples emit passes the CRDs of `tests/fixtures/shared/schemas/kueue` read from disk (compile
/// validates against the embedded copies; `tests/validate.rs` proves they are the same bytes).
#[test]
fn every_kueue_object_of_the_examples_passes_the_shared_crd_schemas() {
    let dir = repo().join("tests/fixtures/shared/schemas/kueue");
    let crds: Vec<_> = ["clusterqueues", "localqueues", "resourceflavors"].iter().map(|k| dir.join(format!("kueue.x-k8s.io_{k}.yaml"))).collect();
    let validator = gpuplan::validate::Validator::from_crd_files(&crds).unwrap();
    let c = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).unwrap();
    let kueue: Vec<_> = c.manifests().into_iter().filter(|m| m.api_version() == "kueue.x-k8s.io/v1beta2").collect();
    let kinds: std::collections::BTreeSet<&str> = kueue.iter().map(|m| m.kind()).collect();
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["ClusterQueue", "LocalQueue", "ResourceFlavor"]);
    assert_eq!(kueue.len(), 11, "4 queues (2 objects each) and 3 flavors (the trainer fills training-reserved: no flavor)");
    for m in &kueue {
        let violations = validator.validate(&m.object);
        assert!(violations.is_empty(), "{}: {violations:?}", m.path.display());
    }
}

/// Σ nominal 12 + 4 in NodePool web (limit 8): E0210 at the first queue's quota, with both numbers and the queues.
#[test]
fn nominal_quotas_above_the_nodepool_limit_are_e0210_with_both_numbers() {
    let c = compile_one(with_queues("queue \"big\" namespace=\"a\" pool=\"web\" { gpus nominal=12; }\nqueue \"small\" namespace=\"b\" pool=\"web\" { gpus nominal=4; }\n"));
    let d = assert_error(&c, "E0210", "add up to 16 nvidia.com/gpu, above NodePool `web`'s limit of 8 (big 12, small 4)", "nominal=12");
    assert_eq!(d.label, "Σ nominal 16 > limit 8");
}

/// A budget of $20/h sizes the pool's limit; a queue holding 64 GPUs of it would cost more than the budget at the
/// pool's worst-case prices (the price basis of the budget check: on-demand ceilings): E0211 with both figures.
#[test]
fn queues_admitting_more_than_the_budget_are_e0211_with_both_numbers() {
    let text = profile("p", 10, AMI, "budget usd-per-hour=20\npool \"web\" preset=\"inference-on-demand\" {\n    gpu { name \"L4\"; per-node max=1; }\n}\nqueue \"big\" namespace=\"a\" pool=\"web\" { gpus nominal=64; }\n");
    let c = compile_one(text);
    let d = assert_error(&c, "E0211", "the queues of profile `p` can admit work costing $", "usd-per-hour=20");
    assert!(d.message.contains("(web 64), above its budget of $20.00/h"), "{}", d.message);
    let cost: f64 = d.message.split('$').nth(1).unwrap().split('/').next().unwrap().parse().unwrap();
    assert!(cost > 20.0, "{}", d.message);
    // The same quota is above the limit the budget sized.
    assert_eq!(with_code(errors(&c), "E0210").len(), 1);
}

#[test]
fn queues_within_the_limits_and_budget_compile() {
    let c = compile_one(with_queues(TWO_QUEUES));
    assert_eq!(c.ok().plan.clusters[0].queues.queues.len(), 2);
}

#[test]
fn a_queue_without_a_namespace_is_e0200_at_the_node() {
    assert_error(&compile_one(with_queues("queue \"q\" pool=\"web\" { gpus nominal=1; }\n")), "E0200", "`queue` needs namespace", "queue \"q\"");
}

#[test]
fn a_queue_on_an_unknown_pool_is_e0201_suggesting_the_pool() {
    let c = compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"wbe\" { gpus nominal=1; }\n"));
    let d = assert_error(&c, "E0201", "queue `q` admits to unknown pool `wbe`", "pool=\"wbe\"");
    assert!(d.help.as_deref().unwrap().contains("did you mean `web`?"), "{:?}", d.help);
}

#[test]
fn a_queue_without_a_quota_is_e0202() {
    assert_error(&compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { cohort \"c\"; }\n")), "E0202", "queue `q` has no quota", "queue \"q\"");
}

#[test]
fn a_share_above_100_percent_is_e0203_at_the_value() {
    assert_error(&compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus share=\"150%\"; }\n")), "E0203", "share must be a quoted percentage", "share=");
}

#[test]
fn nominal_and_share_together_are_e0203() {
    assert_error(&compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus nominal=2 share=\"50%\"; }\n")), "E0203", "nominal= or share=, not both", "share=");
}

#[test]
fn gpus_on_a_neuron_pool_is_e0204_naming_the_resource() {
    let text = profile("p", 10, AMI, "pool \"inf\" preset=\"inference-on-demand\" {\n    neuron { name \"Inferentia2\"; }\n    max-accelerators 12\n}\nqueue \"q\" namespace=\"a\" pool=\"inf\" { gpus nominal=2; }\n");
    assert_error(&compile_one(text), "E0204", "`gpus` on a pool whose accelerators are aws.amazon.com/neuron", "gpus nominal");
}

#[test]
fn a_neuron_queue_covers_the_neuron_resource() {
    let text = profile("p", 10, AMI, "pool \"inf\" preset=\"inference-on-demand\" {\n    neuron { name \"Inferentia2\"; }\n    max-accelerators 12\n}\nqueue \"q\" namespace=\"a\" pool=\"inf\" { neuron-devices share=\"50%\"; }\n");
    let c = compile_one(text);
    let cq = file(&c, "ml/clusterqueue-q.yaml");
    assert!(cq.contains("    - aws.amazon.com/neuron\n") && cq.contains("      - name: aws.amazon.com/neuron\n        nominalQuota: \"6\""), "{cq}");
}

#[test]
fn a_queue_name_twice_is_e0205() {
    let text = with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus nominal=1; }\nqueue \"q\" namespace=\"b\" pool=\"web\" { gpus nominal=1; }\n");
    let c = compile_one(text.clone());
    let second = text.rfind("\"q\"").unwrap();
    let d = with_code(errors(&c), "E0205");
    assert_eq!(d.len(), 1);
    assert!(d[0].message.contains("queue `q` is defined twice (first at "), "{}", d[0].message);
    assert!(d[0].location.ends_with(&format!(":{}:7", text[..second].matches('\n').count() + 1)), "{}", d[0].location);
}

#[test]
fn an_unknown_preemption_policy_is_e0207_suggesting_kueues() {
    let c = compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus nominal=1; preemption within-cluster-queue=\"LowerPriorty\"; }\n"));
    let d = assert_error(&c, "E0207", "`LowerPriorty` is not a Kueue within-cluster-queue policy", "within-cluster-queue=");
    assert!(d.help.as_deref().unwrap().contains("LowerPriority"), "{:?}", d.help);
}

/// The ClusterQueue CRD's rule "borrowingLimit must be nil when cohort is empty", said at the profile line.
#[test]
fn borrowing_without_a_cohort_is_e0208() {
    assert_error(&compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus nominal=2 borrowing-limit=2; }\n")), "E0208", "borrowing-limit on a queue without a cohort", "borrowing-limit=");
}

/// Kueue's webhook (`pkg/webhooks/clusterqueue_webhook.go` `validateLendingLimit`: "must be less than or equal to
/// the nominalQuota"), checked once the share resolves (50% of 8 = 4 < 6).
#[test]
fn lending_more_than_the_resolved_share_is_e0208() {
    assert_error(&compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus share=\"50%\" lending-limit=6; cohort \"c\"; }\n")), "E0208", "lends 6 nvidia.com/gpu in flavor `web`, more than its nominal quota of 4", "lending-limit=");
}

/// The ClusterQueue CRD's rule "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never".
#[test]
fn borrow_preemption_without_reclaim_is_e0209() {
    assert_error(&compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus nominal=1; cohort \"c\"; preemption borrow-within-cohort=\"LowerPriority\"; }\n")), "E0209", "borrow-within-cohort preempts while reclaim-within-cohort is Never", "borrow-within-cohort=");
}

#[test]
fn gp020_a_flavor_naming_no_resourceflavor_is_reported_at_the_queue() {
    let mut c = compile_one(with_queues(TWO_QUEUES));
    object_mut(&mut c, "ClusterQueue", "team-a")["spec"]["resourceGroups"][0]["flavors"][0]["name"] = json!("gone");
    let d = c.lint();
    let found = with_code(&d, "GP020");
    assert_eq!(found.len(), 1, "{}", gpuplan::diagnostic::render_plain(&d));
    assert!(found[0].message.contains("ClusterQueue `team-a` admits to flavor `gone`, which stands for no NodePool"), "{}", found[0].message);
    assert_eq!(found[0].location, c.loc("p.kdl", "nominal=4"));
}

#[test]
fn gp020_a_flavor_whose_node_labels_match_no_nodepool_is_reported() {
    let mut c = compile_one(with_queues(TWO_QUEUES));
    object_mut(&mut c, "ResourceFlavor", "web")["spec"]["nodeLabels"]["karpenter.sh/nodepool"] = json!("web-old");
    assert_eq!(with_code(&c.lint(), "GP020").len(), 2, "both queues use the flavor");
}

#[test]
fn gp021_hand_edited_quotas_above_the_limit_are_reported_with_both_numbers() {
    let mut c = compile_one(with_queues(TWO_QUEUES));
    object_mut(&mut c, "ClusterQueue", "team-a")["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = json!("20");
    let d = c.lint();
    let found = with_code(&d, "GP021");
    assert_eq!(found.len(), 1, "{}", gpuplan::diagnostic::render_plain(&d));
    assert!(found[0].message.contains("add up to 24 nvidia.com/gpu, above NodePool `web`'s limit of 8 (team-a 20, team-b 4)"), "{}", found[0].message);
}

#[test]
fn gp021_is_silenced_by_allow_in_the_profile() {
    let mut c = compile_one(with_queues(&format!("allow \"GP021\"\n{TWO_QUEUES}")));
    object_mut(&mut c, "ClusterQueue", "team-a")["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = json!("20");
    assert!(with_code(&c.lint(), "GP021").is_empty());
}

#[test]
fn the_compilers_own_queues_raise_no_queue_lint() {
    let c = compile_one(with_queues(TWO_QUEUES));
    let d = c.lint();
    assert!(with_code(&d, "GP020").is_empty() && with_code(&d, "GP021").is_empty(), "{}", gpuplan::diagnostic::render_plain(&d));
}

#[test]
fn explain_shows_queue_flavor_nodepool_and_price() {
    let c = compile_one(with_queues(TWO_QUEUES));
    let table = gpuplan::report::explain::explain(c.ok(), None, gpuplan::report::explain::ExplainFormat::Table).unwrap();
    assert!(table.contains("    queue team-a (namespace team-a, cohort web, gang: gpus nominal=4 borrowing-limit=2)\n"), "{table}");
    let line = table.lines().find(|l| l.starts_with("      → flavor web → NodePool web (limit 8 nvidia.com/gpu): nominal 4 → $")).expect(&table);
    assert!(line.contains("; + borrowing 2 → $"), "{line}");
    let json = gpuplan::report::explain::explanation(c.ok(), None).unwrap();
    let b = &json.clusters[0].queues[1];
    assert_eq!((b.flavors[0].nominal, b.flavors[0].lending_limit), (4, Some(1)));
    assert!(b.flavors[0].nominal_usd_per_hour > 0.0);
}

/// Gang admission is Kueue's Configuration (`waitForPodsReady`), not a ClusterQueue field: the kustomization lists it.
#[test]
fn a_gang_queue_puts_wait_for_pods_ready_into_the_prerequisites() {
    let c = compile_one(with_queues(TWO_QUEUES));
    let k = file(&c, "ml/kustomization.yaml");
    assert!(k.contains("#   Kueue Configuration (config.kueue.x-k8s.io/v1beta2, ConfigMap kueue-system/kueue-manager-config): waitForPodsReady: {timeout: 20m, blockAdmission: true} (gang admission for queues team-a:"), "{k}");
    assert!(k.contains("#   CRD: ClusterQueue kueue.x-k8s.io/v1beta2 (from Kueue"), "{k}");
    let c = compile_one(with_queues("queue \"q\" namespace=\"a\" pool=\"web\" { gpus nominal=1; }\n"));
    assert!(!file(&c, "ml/kustomization.yaml").contains("waitForPodsReady"));
}

/// The ResourceFlavor CRD allows 8 tolerations (`spec.tolerations` maxItems 8): a pool with more taints is refused at
/// the queue's pool, not as a schema error on a generated object.
#[test]
fn a_pool_with_more_taints_than_a_flavor_holds_is_e0212() {
    let taints: String = (0..7).map(|i| format!("    taint \"t{i}\" value=\"x\" effect=\"NoSchedule\"\n")).collect();
    let text = profile("p", 10, AMI, &format!("budget usd-per-hour=100\npool \"web\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 8\n{taints}}}\nqueue \"q\" namespace=\"a\" pool=\"web\" {{ gpus nominal=1; }}\n"));
    assert_error(&compile_one(text), "E0212", "NodePool `web` has 9 NoSchedule/NoExecute taints, more than the 8 tolerations", "pool=\"web\"");
}

/// The ResourceFlavor CRD allows 8 nodeLabels (`spec.nodeLabels` maxProperties 8): `karpenter.sh/nodepool` (which
/// alone picks the NodePool's nodes) and the pool's label come first, then the others in key order.
#[test]
fn a_flavors_node_labels_stay_within_the_crds_eight() {
    let labels: String = (0..9).map(|i| format!("    label \"l{i}\" \"x\"\n")).collect();
    let text = profile("p", 10, AMI, &format!("budget usd-per-hour=100\npool \"web\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 8\n{labels}}}\nqueue \"q\" namespace=\"a\" pool=\"web\" {{ gpus nominal=1; }}\n"));
    let c = compile_one(text);
    let flavor = &c.ok().plan.clusters[0].queues.flavors[0];
    let keys: Vec<&str> = flavor.node_labels.keys().map(String::as_str).collect();
    assert_eq!(keys, ["gpuplan.dev/pool", "karpenter.sh/nodepool", "l0", "l1", "l2", "l3", "l4", "l5"]);
}

// Issue 32, item 1: queues and non-queued workloads share one pool.

/// The reproduction, kept: `gpuplan simulate --manifests out/ml-prod` with the `trainer` StatefulSet
/// (4 × 8 GPUs, no queue) and one 2 × 8-GPU Job per ClusterQueue. When both queues shared out all 64 GPUs, the
/// production Job borrowed the reservation's flavor, which the trainer fills, and its pods pended there (Kueue's
/// flavor pins them to `karpenter.sh/nodepool: training-reserved`) while `training` had room. Now every pod runs.
#[test]
fn the_trainer_and_a_job_per_queue_all_run_on_the_examples_out() {
    let opts = gpuplan::simulate::Options {
        manifests: vec![repo().join("out/ml-prod")],
        pods: vec![repo().join("tests/fixtures/queues/trainer-and-a-job-per-queue.yaml")],
        region: None,
        catalogs_dir: repo().join("catalogs"),
        unavailable: Vec::new(),
        daemonsets: Vec::new(),
        add_on_daemonsets: true,
        node_daemons: None,
    };
    let report = gpuplan::simulate::simulate(&opts).unwrap();
    assert!(report.pending.is_empty(), "pending: {:?}", report.pending);
    let admitted: Vec<_> = report.admission.as_ref().unwrap().workloads.iter().map(|w| (w.name.as_str(), w.admitted)).collect();
    assert_eq!(admitted, [("training/prod-job", true), ("ml-research/research-job", true)]);
    let placed: usize = report.nodeclaims.iter().map(|n| n.pods.len()).sum();
    assert_eq!(placed, 8, "4 trainer replicas and 2 pods per Job");
}

/// training.kdl: the trainer (4 × 8 GPUs) fills the reservation's 16 GPUs (weight 80, tried first) and 16 of the
/// on-demand 48, so each 50% share is 16 of the 32 left, in flavor `training` only; the reservation is no flavor.
#[test]
fn a_share_divides_what_the_non_queued_workloads_leave() {
    let c = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).unwrap();
    let ml_prod = c.plan.clusters.iter().find(|c| c.name == "ml-prod").unwrap();
    for q in &ml_prod.queues.queues {
        let flavors: Vec<_> = q.flavors.iter().map(|f| (f.flavor.as_str(), f.limit, f.non_queued, f.nominal)).collect();
        assert_eq!(flavors, [("training", 48, 16, 16)], "queue {}", q.name);
        assert_eq!(q.full, ["training-reserved"], "queue {}", q.name);
    }
    let explain = gpuplan::report::explain::explain(&c, Some("training"), gpuplan::report::explain::ExplainFormat::Table).unwrap();
    assert!(explain.contains("(limit 48 nvidia.com/gpu, 16 held by non-queued workloads at max replicas): nominal 16"), "{explain}");
    assert!(explain.contains("→ NodePool training-reserved: no flavor, non-queued workloads at max replicas hold its whole limit"), "{explain}");
}

/// The web pool (8 L4) with a 6-replica workload beside `queue`.
fn beside_six_replicas(queue: &str, admit: &str) -> String {
    profile("p", 10, AMI, &format!("pool \"web\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 8\n{admit}}}\nworkload \"server\" namespace=\"web\" pool=\"web\" {{\n    selector \"app\" \"server\"\n    replicas 6\n}}\n{queue}"))
}

/// Compile simulates every declared demand at once (Kueue admission, then Karpenter's scheduler): the workload at 6
/// replicas and the queue's nominal 4 in use by whole-node gang jobs need 10 of the NodePool's 8 GPUs. E0340 at the
/// quota, naming the pending pods and the limit; each alone fits (no E0180, no E0210). Upstream: a Job is admitted
/// whole (kueue v0.19.2 `pkg/workload/workload.go` `Info.TotalRequests`), its pods pinned to the flavor's NodePool
/// (`pkg/podset/podset.go` `FromAssignment`), and Karpenter launches nothing past the limit (karpenter v1.14.1
/// `pkg/controllers/provisioning/scheduling/scheduler.go`: "all available instance types exceed limits for nodepool").
#[test]
fn a_quota_that_does_not_fit_beside_a_workload_is_e0340_at_the_quota() {
    let c = compile_one(beside_six_replicas("queue \"batch\" namespace=\"batch\" pool=\"web\" { gpus nominal=4; }\n", ""));
    let d = assert_error(&c, "E0340", "queue `batch`'s nominal quota does not fit beside the cluster's other declared demands: 2 of the 4 pods", "nominal=4");
    assert!(d.help.as_deref().unwrap().contains("exceed limits for nodepool (limits: nvidia.com/gpu 8)"), "{:?}", d.help);
    assert_eq!(errors(&c).len(), 1, "one diagnostic for the one cause");
}

/// A share divides what the workload leaves: 100% of 8 − 6 is 2, and everything fits.
#[test]
fn a_share_beside_a_workload_fits_in_what_it_leaves() {
    let c = compile_one(beside_six_replicas("queue \"batch\" namespace=\"batch\" pool=\"web\" { gpus share=\"100%\"; }\n", ""));
    let q = &c.ok().plan.clusters[0].queues.queues[0];
    assert_eq!((q.flavors[0].limit, q.flavors[0].non_queued, q.flavors[0].nominal), (8, 6, 2));
    assert!(c.ok().warnings.iter().all(|w| w.code != "E0340"));
}

/// Issue 32's severity rule: on a pool `adopt` wrote (`admit "as-required"`), the original YAML already had the
/// problem, so E0340 is a warning and compile writes the output.
#[test]
fn e0340_is_a_warning_on_an_adopted_pool() {
    let c = compile_one(beside_six_replicas("queue \"batch\" namespace=\"batch\" pool=\"web\" { gpus nominal=4; }\n", "    admit \"as-required\"\n"));
    let found: Vec<_> = c.ok().warnings.iter().filter(|w| w.code == "E0340").collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(!found[0].is_error());
    assert_eq!(found[0].location, c.loc("p.kdl", "nominal=4"));
}

// Issue 32, item 3: quotas in node units, the gang timeout, ephemeral-storage.

/// Issue 32's split: 60/40 of 2 × 8 H100 on an on-demand training pool, in one cohort.
fn sixty_forty(allow: &str) -> String {
    profile("p", 10, AMI, &format!("{allow}pool \"train\" preset=\"training-on-demand\" {{\n    gpu {{\n        name \"H100\"\n        per-node min=8\n    }}\n    max-accelerators 16\n}}\nqueue \"big\" namespace=\"big\" pool=\"train\" {{\n    gpus share=\"60%\"\n    cohort \"ml\"\n}}\nqueue \"small\" namespace=\"small\" pool=\"train\" {{\n    gpus share=\"40%\"\n    cohort \"ml\"\n}}\n"))
}

fn lint_codes<'d>(diagnostics: &'d [ProfileDiagnostic], code: &str) -> Vec<&'d ProfileDiagnostic> {
    diagnostics.iter().filter(|d| d.code == code).collect()
}

/// 40% of 16 is 6 GPUs: below one 8-GPU node, so the team runs an 8-GPU job only by borrowing (Kueue admits a pod
/// set whole within quota + borrowing: kueue v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner.go`
/// `fitsResourceQuota`). GP034 at that queue's quota, not at the 60% queue's (9 ≥ 8).
#[test]
fn gp034_a_quota_below_one_node_is_reported_at_the_queue() {
    let c = compile_one(sixty_forty(""));
    let found = lint_codes(&c.ok().warnings, "GP034");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("queue `small`'s nominal quota in flavor `train` is 6 nvidia.com/gpu, below one node of NodePool `train` (8 nvidia.com/gpu)"), "{}", found[0].message);
    assert_eq!(found[0].location, c.loc("p.kdl", "share=\"40%\""));
}

/// 60% + 40% = 100%, but 9 + 6 = 15 of 16: one GPU in no queue (a cohort lends only its members' nominal quotas:
/// kueue v0.19.2 `pkg/cache/scheduler/resource_node.go` `SubtreeQuota`). GP035 at the first queue, with the numbers.
#[test]
fn gp035_shares_that_round_down_leave_accelerators_in_no_queue() {
    let c = compile_one(sixty_forty(""));
    let found = lint_codes(&c.ok().warnings, "GP035");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("add up to 100% of its 16 accelerators, but round down to 15 (big 9, small 6): 1 in no queue"), "{}", found[0].message);
    assert_eq!(found[0].location, c.loc("p.kdl", "share=\"60%\""));
}

#[test]
fn gp034_and_gp035_are_silenced_by_allow_in_the_profile() {
    let c = compile_one(sixty_forty("allow \"GP034\" \"GP035\"\n"));
    assert!(c.ok().warnings.iter().all(|w| w.code != "GP034" && w.code != "GP035"), "{:?}", c.ok().warnings);
}

/// The examples raise no queue rule of issue 32 and no E0340: ml-prod's shares are whole nodes of what the trainer
/// leaves, and ml-research's `evaluation` (12 MIG devices, below a 56-device p4d) is on a shared pool, whose jobs take
/// slices, not nodes (GP034 leaves those out).
#[test]
fn the_examples_raise_no_gp034_gp035_gp036_or_e0340() {
    let c = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).unwrap();
    let codes = ["GP034", "GP035", "GP036", "E0340"];
    let found: Vec<_> = c.warnings.iter().filter(|w| codes.contains(&w.code.as_str())).collect();
    assert!(found.is_empty(), "{found:?}");
    let evaluation = c.plan.clusters.iter().flat_map(|c| &c.queues.queues).find(|q| q.name == "evaluation").unwrap();
    assert_eq!((evaluation.flavors[0].nominal, evaluation.flavors[0].node), (12, 56));
}

/// 50/50 of the same pool is a node each: neither rule fires.
#[test]
fn whole_node_shares_raise_neither_gp034_nor_gp035() {
    let c = compile_one(sixty_forty("").replace("60%", "50%").replace("40%", "50%"));
    assert!(c.ok().warnings.iter().all(|w| w.code != "GP034" && w.code != "GP035"), "{:?}", c.ok().warnings);
}

/// Kueue's own Configuration, as `lint --manifests` reads it, with a 10m `waitForPodsReady.timeout`: shorter than a
/// gang pool's cold start (Karpenter allows a node 15m to register: karpenter v1.14.1
/// `pkg/controllers/nodeclaim/lifecycle/liveness.go` `registrationTimeout`; + 5m to advertise its GPUs). GP036; the
/// prerequisites' own 20m raises nothing.
#[test]
fn gp036_a_wait_for_pods_ready_timeout_below_the_cold_start_is_reported() {
    let config = |timeout: &str| {
        let text = format!("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady:\n  timeout: {timeout}\n  blockAdmission: true\n");
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"}, "data": {"controller_manager_config.yaml": text}})
    };
    let mut c = compile_one(with_queues(TWO_QUEUES));
    let mut manifests = c.ok().manifests();
    manifests.push(gpuplan::render::Manifest { path: "ml/configmap-kueue-manager-config.yaml".into(), source: "cluster".into(), object: config("10m") });
    c.edited = Some(manifests.clone());
    let found: Vec<_> = c.lint().into_iter().filter(|d| d.code == "GP036").collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("waitForPodsReady timeout (10m, ConfigMap kueue-manager-config) is shorter than the 20m a node of gang queue `team-a`'s pool may take to start"), "{}", found[0].message);
    manifests.last_mut().unwrap().object = config("20m");
    c.edited = Some(manifests);
    assert!(c.lint().iter().all(|d| d.code != "GP036"));
}

/// Kueue refuses a Workload requesting a resource its ClusterQueue does not cover (kueue v0.19.2
/// `pkg/scheduler/flavorassigner/flavorassigner.go` `findFlavorForPodSets`: "resource ephemeral-storage unavailable
/// in ClusterQueue"), as simulate's admission models it on the examples' out/; so every cluster with queues lists
/// `resources.excludeResourcePrefixes: [ephemeral-storage]` in its prerequisites, which makes Kueue drop the
/// request (`pkg/workload/workload.go` `dropExcludedResources`).
#[test]
fn a_pod_requesting_ephemeral_storage_needs_the_excluded_prefix_in_the_prerequisites() {
    let dir = tempfile::tempdir().unwrap();
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: scratch\n  namespace: training\n  labels:\n    kueue.x-k8s.io/queue-name: production\nspec:\n  parallelism: 1\n  completions: 1\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        resources:\n          limits:\n            nvidia.com/gpu: 8\n            ephemeral-storage: 100Gi\n";
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let opts = gpuplan::simulate::Options {
        manifests: vec![repo().join("out/ml-prod")],
        pods: vec![dir.path().join("job.yaml")],
        region: None,
        catalogs_dir: repo().join("catalogs"),
        unavailable: Vec::new(),
        daemonsets: Vec::new(),
        add_on_daemonsets: true,
        node_daemons: None,
    };
    let report = gpuplan::simulate::simulate(&opts).unwrap();
    assert!(report.pending.iter().any(|p| p.reason.contains("resource ephemeral-storage unavailable in ClusterQueue")), "{:?}", report.pending);
    for cluster in ["ml-prod", "ml-research"] {
        let k = std::fs::read_to_string(repo().join("out").join(cluster).join("kustomization.yaml")).unwrap();
        assert!(k.contains("ConfigMap kueue-system/kueue-manager-config): resources: {excludeResourcePrefixes: [ephemeral-storage]}"), "{cluster}: {k}");
    }
}

/// `gpuplan lint` compiles first, so it reports E0340 too (exit 2, as compile).
#[test]
fn lint_reports_e0340_as_compile_does() {
    let c = compile_one(beside_six_replicas("queue \"batch\" namespace=\"batch\" pool=\"web\" { gpus nominal=4; }\n", ""));
    let catalogs = repo().join("catalogs");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .current_dir(c.dir.path())
        .args(["lint", "--catalogs", catalogs.to_str().unwrap(), "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("E0340") && text.contains("queue `batch`'s nominal quota does not fit"), "{text}");
}
