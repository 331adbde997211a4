//! `gpuplan simulate` with Kueue: which queued Workloads a ClusterQueue admits before Karpenter provisions. One Kueue
//! rule per test, each naming the Kueue source (kubernetes-sigs/kueue v0.19.2, commit 8eab68778fc1, the version of the
//! CRDs in tests/fixtures/shared/schemas/kueue) or documentation page it follows.

use std::path::Path;

use gpuplan::catalog::Catalog;
use gpuplan::simulate::admission::WorkloadReport;
use gpuplan::simulate::{self, manifests, pods, report, yaml, Report};

const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";

/// A NodePool of g5 types labelled `example.com/tier: TIER`; `extra` is YAML for `spec.template.spec` (taints).
fn pool(tier: &str, weight: i64, extra: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {tier}\nspec:\n  weight: {weight}\n  template:\n    metadata:\n      labels:\n        example.com/tier: {tier}\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [g5.xlarge, g5.12xlarge, g5.48xlarge]\n{extra}"
    )
}

/// A ResourceFlavor whose nodeLabels select the pool of the same tier; `extra` is YAML for its spec.
fn flavor(tier: &str, extra: &str) -> String {
    format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: {tier}\nspec:\n  nodeLabels:\n    example.com/tier: {tier}\n{extra}")
}

/// A ClusterQueue for every namespace covering nvidia.com/gpu with the flavors `(name, quota fields)` in order; `spec`
/// is extra YAML for its spec (cohortName, queueingStrategy...).
fn cluster_queue(name: &str, spec: &str, flavors: &[(&str, &str)]) -> String {
    let mut s = format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: {name}\nspec:\n  namespaceSelector: {{}}\n{spec}  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n");
    for (f, quota) in flavors {
        s.push_str(&format!("    - name: {f}\n      resources:\n      - name: nvidia.com/gpu\n        {quota}\n"));
    }
    s
}

fn local_queue(namespace: &str, name: &str, cq: &str) -> String {
    format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  clusterQueue: {cq}\n")
}

/// A Job of `pods` pods of one GPU each in namespace `ml`, queued to `queue`; `labels` are more Job labels (indented
/// for metadata.labels), `spec` more pod spec.
fn job(name: &str, queue: &str, pods: u32, labels: &str, spec: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: ml\n  labels:\n    kueue.x-k8s.io/queue-name: {queue}\n{labels}spec:\n  parallelism: {pods}\n  completions: {pods}\n  template:\n    spec:\n      restartPolicy: Never\n{spec}      containers:\n      - name: c\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
    )
}

fn catalog() -> Catalog {
    Catalog::load(Path::new("catalogs"), "us-east-1").unwrap()
}

fn run(manifest_docs: &[String], pod_docs: &[String]) -> Report {
    let m = yaml::parse_docs(Path::new("manifests.yaml"), &[NODE_CLASS.to_string()].iter().chain(manifest_docs).cloned().collect::<Vec<_>>().join("---\n")).unwrap();
    let p = yaml::parse_docs(Path::new("pods.yaml"), &pod_docs.join("---\n")).unwrap();
    simulate::run(&catalog(), &manifests::manifests(&m).unwrap(), &pods::pods(&p).unwrap(), &[])
}

fn manifest_error(manifest_docs: &[String]) -> String {
    let m = yaml::parse_docs(Path::new("manifests.yaml"), &manifest_docs.join("---\n")).unwrap();
    manifests::manifests(&m).expect_err("an input error").to_string()
}

fn workload<'r>(r: &'r Report, name: &str) -> &'r WorkloadReport {
    r.admission.as_ref().expect("an admission section").workloads.iter().find(|w| w.name == name).unwrap_or_else(|| panic!("no workload {name}"))
}

/// The NodePools the workload's pods landed on.
fn pools(r: &Report, name: &str) -> Vec<String> {
    let mut p: Vec<String> = r.nodeclaims.iter().filter(|c| c.pods.iter().any(|p| p.starts_with(&format!("{name}-")))).map(|c| c.nodepool.clone()).collect();
    p.dedup();
    p
}

/// One a100 pool, flavor and queue `research` (ClusterQueue `research`, `quota` for nvidia.com/gpu).
fn single_queue(quota: &str, cq_spec: &str) -> Vec<String> {
    vec![pool("a100", 10, ""), flavor("a100", ""), cluster_queue("research", cq_spec, &[("a100", quota)]), local_queue("ml", "research", "research")]
}

// kueue.sigs.k8s.io/docs/concepts/cluster_queue "nominalQuota"; flavorassigner.go `fitsResourceQuota`: a Workload whose
// requests are within the unused nominal quota is admitted (Fit, no borrowing), and its pods are provisioned.
#[test]
fn nominal_quota_admits_a_workload_that_fits() {
    let r = run(&single_queue("nominalQuota: 8", ""), &[job("train", "research", 8, "", "")]);
    let w = workload(&r, "ml/train");
    assert!(w.admitted && !w.borrowing, "{w:?}");
    assert_eq!(w.flavors["nvidia.com/gpu"], "a100");
    assert_eq!(r.nodeclaims.iter().map(|c| c.pods.len()).sum::<usize>(), 8);
    let cq = &r.admission.as_ref().unwrap().cluster_queues[0];
    assert_eq!((cq.quotas[0].used.as_str(), cq.quotas[0].nominal.as_str()), ("8", "8"));
}

// pkg/controller/jobs/job/job_controller.go `PodSets` (one PodSet of podsCount pods) and pkg/workload `TotalRequests`:
// a Job is one Workload whose quota is all its pods', admitted all together or not at all, so a gang that does not fit
// whole gets no pod started and launches no node, while the part that would fit stays free.
#[test]
fn gang_bigger_than_free_quota_is_not_admitted_whole() {
    let r = run(&single_queue("nominalQuota: 8", ""), &[job("first", "research", 6, "", ""), job("gang", "research", 4, "", "")]);
    assert!(workload(&r, "ml/first").admitted);
    let gang = workload(&r, "ml/gang");
    assert!(!gang.admitted);
    let reason = gang.reason.as_deref().unwrap();
    assert!(reason.contains("pending in queue ml/research (ClusterQueue research)") && reason.contains("needs 4 nvidia.com/gpu, 2 of 8 free (nominal 8, used 6, borrowed 0 (no cohort))"), "{reason}");
    assert!(pools(&r, "ml/gang").is_empty(), "no pod of the gang may launch a node: {:?}", r.nodeclaims);
    assert_eq!(r.pending.iter().filter(|p| p.pod.starts_with("ml/gang-")).count(), 4);
    assert!(r.pending.iter().all(|p| p.reason == reason));
}

// resource_node.go `available`: with a cohort, a ClusterQueue may use the cohort's unused quota beyond its nominal,
// up to its borrowingLimit (kueue.sigs.k8s.io/docs/concepts/cluster_queue "Borrowing limit").
#[test]
fn borrowing_from_cohort_up_to_borrowing_limit() {
    let mut m = single_queue("nominalQuota: 4\n        borrowingLimit: 2", "  cohortName: ml\n");
    m.push(cluster_queue("prod", "  cohortName: ml\n", &[("a100", "nominalQuota: 8")]));
    let r = run(&m, &[job("big", "research", 6, "", ""), job("more", "research", 1, "", "")]);
    let big = workload(&r, "ml/big");
    assert!(big.admitted && big.borrowing, "6 = nominal 4 + 2 borrowed: {big:?}");
    let more = workload(&r, "ml/more");
    assert!(!more.admitted);
    assert!(more.reason.as_deref().unwrap().contains("0 of 6 free (nominal 4, used 6, borrowed 2 of 2"), "{more:?}");
    let q = &r.admission.as_ref().unwrap().cluster_queues[0].quotas[0];
    assert_eq!((q.used.as_str(), q.borrowed.as_str(), q.borrowing_limit.as_deref()), ("6", "2", Some("2")));
}

// resource_node.go `accumulateFromChild` / `localQuota`: a member lends the cohort at most its lendingLimit, so what the
// others can borrow is capped by it (kueue.sigs.k8s.io/docs/concepts/cluster_queue "LendingLimit"), whatever their own
// borrowingLimit.
#[test]
fn lending_limit_caps_what_others_borrow() {
    let mut m = single_queue("nominalQuota: 4", "  cohortName: ml\n");
    m.push(cluster_queue("prod", "  cohortName: ml\n", &[("a100", "nominalQuota: 8\n        lendingLimit: 2")]));
    let r = run(&m, &[job("too-big", "research", 7, "", ""), job("fits", "research", 6, "", "")]);
    let too_big = workload(&r, "ml/too-big");
    assert!(!too_big.admitted);
    assert!(too_big.reason.as_deref().unwrap().contains("needs 7 nvidia.com/gpu, more than the 6 it can ever have"), "{too_big:?}");
    assert!(workload(&r, "ml/fits").admitted, "4 nominal + the 2 prod lends");
}

// jobframework/reconciler.go `ExtractPriority`: the `kueue.x-k8s.io/priority-class` label on the Job names a
// WorkloadPriorityClass, whose value is the Workload's priority; pkg/cache/queue orders a ClusterQueue's Workloads by
// priority before creation, so a later high-priority Job is admitted first.
#[test]
fn higher_priority_workload_admitted_first() {
    let mut m = single_queue("nominalQuota: 4", "");
    m.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: urgent\nvalue: 1000\n".into());
    let r = run(&m, &[job("early", "research", 4, "", ""), job("late", "research", 4, "    kueue.x-k8s.io/priority-class: urgent\n", "")]);
    assert_eq!(workload(&r, "ml/late").priority, 1000);
    assert!(workload(&r, "ml/late").admitted && !workload(&r, "ml/early").admitted);
}

// jobframework/reconciler.go `ExtractPriority` with no WorkloadPriorityClass label: the pods' priorityClassName is
// looked up as a PriorityClass; pkg/cache/queue orders by that priority first.
#[test]
fn pod_priority_class_orders_the_queue() {
    let mut m = single_queue("nominalQuota: 4", "");
    m.push("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\nvalue: 100\n".into());
    let r = run(&m, &[job("early", "research", 4, "", ""), job("late-high", "research", 4, "", "      priorityClassName: high\n")]);
    assert!(workload(&r, "ml/late-high").admitted);
    assert!(!workload(&r, "ml/early").admitted);
    assert_eq!(r.admission.as_ref().unwrap().workloads[0].name, "ml/late-high", "admitted first, listed first");
}

// A WorkloadPriorityClass label outranks the pods' priorityClassName (reconciler.go `ExtractPriority` reads it first),
// even when the PriorityClass value is higher.
#[test]
fn workload_priority_class_label_wins_over_pod_priority_class() {
    let mut m = single_queue("nominalQuota: 4", "");
    m.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: low\nvalue: 1\n".into());
    m.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: urgent\nvalue: 1000\n".into());
    m.push("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: pod-high\nvalue: 100000\n".into());
    let pod_high = "      priorityClassName: pod-high\n";
    let r = run(&m, &[job("a", "research", 4, "    kueue.x-k8s.io/priority-class: low\n", pod_high), job("b", "research", 4, "    kueue.x-k8s.io/priority-class: urgent\n", "")]);
    assert_eq!((workload(&r, "ml/a").priority, workload(&r, "ml/b").priority), (1, 1000));
    assert!(workload(&r, "ml/b").admitted && !workload(&r, "ml/a").admitted);
}

// scheduler.go `makeClassicalIterator` step 4 and pkg/cache/queue ordering: equal priority is first come, first served.
// Objects without a creationTimestamp are created in input order; a creationTimestamp (an object created earlier)
// comes first.
#[test]
fn creation_order_breaks_priority_ties() {
    let r = run(&single_queue("nominalQuota: 4", ""), &[job("first", "research", 4, "", ""), job("second", "research", 4, "", "")]);
    assert!(workload(&r, "ml/first").admitted && !workload(&r, "ml/second").admitted);
    let older = job("second", "research", 4, "", "").replace("  namespace: ml\n", "  namespace: ml\n  creationTimestamp: \"2026-01-02T15:04:05Z\"\n");
    let r = run(&single_queue("nominalQuota: 4", ""), &[job("first", "research", 4, "", ""), older]);
    assert!(workload(&r, "ml/second").admitted && !workload(&r, "ml/first").admitted);
}

// flavorassigner.go `findFlavorForPodSets`: flavors are tried in the resourceGroup's order and the first with room
// is taken (kueue.sigs.k8s.io/docs/concepts/cluster_queue "Flavors and Resources"); each Workload's pods then land on
// that flavor's pool.
#[test]
fn second_flavor_used_when_first_is_full() {
    let m = vec![
        pool("a100", 10, ""),
        pool("a10g", 10, ""),
        flavor("a100", ""),
        flavor("a10g", ""),
        cluster_queue("research", "", &[("a100", "nominalQuota: 4"), ("a10g", "nominalQuota: 8")]),
        local_queue("ml", "research", "research"),
    ];
    let r = run(&m, &[job("one", "research", 4, "", ""), job("two", "research", 4, "", "")]);
    assert_eq!(workload(&r, "ml/one").flavors["nvidia.com/gpu"], "a100");
    assert_eq!(workload(&r, "ml/two").flavors["nvidia.com/gpu"], "a10g");
    assert_eq!((pools(&r, "ml/one"), pools(&r, "ml/two")), (vec!["a100".to_string()], vec!["a10g".to_string()]));
}

// flavorassigner.go `shouldTryNextFlavor`: with `whenCanBorrow: TryNextFlavor` a flavor that would borrow is passed
// over for a later one with nominal room; the default (MayStopSearch) takes the first flavor that fits, borrowing.
#[test]
fn try_next_flavor_prefers_nominal_room_over_borrowing() {
    let docs = |fungibility: &str| {
        vec![
            pool("a100", 10, ""),
            pool("a10g", 10, ""),
            flavor("a100", ""),
            flavor("a10g", ""),
            cluster_queue("research", &format!("  cohortName: ml\n{fungibility}"), &[("a100", "nominalQuota: 0"), ("a10g", "nominalQuota: 4")]),
            cluster_queue("prod", "  cohortName: ml\n", &[("a100", "nominalQuota: 8"), ("a10g", "nominalQuota: 0")]),
            local_queue("ml", "research", "research"),
        ]
    };
    let r = run(&docs(""), &[job("j", "research", 4, "", "")]);
    assert_eq!(workload(&r, "ml/j").flavors["nvidia.com/gpu"], "a100");
    assert!(workload(&r, "ml/j").borrowing);
    let r = run(&docs("  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n"), &[job("j", "research", 4, "", "")]);
    assert_eq!(workload(&r, "ml/j").flavors["nvidia.com/gpu"], "a10g");
    assert!(!workload(&r, "ml/j").borrowing);
}

// pkg/podset/podset.go `FromAssignment` / `Merge`: at admission Kueue adds the flavor's nodeLabels to the pods'
// nodeSelector and its tolerations to theirs, so the pods go to the flavor's pool even when a heavier pool would take
// them and its taint would otherwise keep them out.
#[test]
fn admitted_pods_land_on_the_flavors_pool() {
    let taint = "      taints:\n      - key: example.com/reserved\n        value: research\n        effect: NoSchedule\n";
    let toleration = "  tolerations:\n  - key: example.com/reserved\n    operator: Equal\n    value: research\n    effect: NoSchedule\n  nodeTaints:\n  - key: example.com/reserved\n    value: research\n    effect: NoSchedule\n";
    let m = vec![pool("a100", 100, ""), pool("a10g", 10, taint), flavor("a10g", toleration), cluster_queue("research", "", &[("a10g", "nominalQuota: 8")]), local_queue("ml", "research", "research")];
    let r = run(&m, &[job("train", "research", 2, "", "")]);
    assert!(workload(&r, "ml/train").admitted);
    assert_eq!(pools(&r, "ml/train"), vec!["a10g".to_string()]);
}

// flavorassigner.go `checkFlavorForPodSets`: a flavor whose nodeTaints the pods do not tolerate (with the flavor's own
// tolerations) is skipped.
#[test]
fn flavor_with_untolerated_taint_is_skipped() {
    let tainted = "  nodeTaints:\n  - key: example.com/reserved\n    value: prod\n    effect: NoSchedule\n";
    let m = vec![pool("a100", 10, ""), pool("a10g", 10, ""), flavor("a100", tainted), flavor("a10g", ""), cluster_queue("research", "", &[("a100", "nominalQuota: 8"), ("a10g", "nominalQuota: 8")]), local_queue("ml", "research", "research")];
    let r = run(&m, &[job("train", "research", 2, "", "")]);
    assert_eq!(workload(&r, "ml/train").flavors["nvidia.com/gpu"], "a10g");
}

// Kueue only manages objects with the queue-name label (jobframework `QueueName`; manageJobsWithoutQueueName defaults
// to false): other pods are scheduled as without Kueue and use no quota.
#[test]
fn pods_without_queue_label_are_unaffected() {
    let plain = job("plain", "x", 3, "", "").replace("    kueue.x-k8s.io/queue-name: x\n", "    team: ml\n");
    let r = run(&single_queue("nominalQuota: 2", ""), &[plain, job("queued", "research", 2, "", "")]);
    assert!(r.admission.as_ref().unwrap().workloads.iter().all(|w| w.name != "ml/plain"));
    assert_eq!(r.nodeclaims.iter().flat_map(|c| &c.pods).filter(|p| p.starts_with("ml/plain-")).count(), 3);
    assert!(workload(&r, "ml/queued").admitted, "the unqueued pods take none of the 2 GPUs of quota");
}

// flavorassigner.go `assignFlavors`: a requested resource no resourceGroup covers makes the Workload inadmissible
// ("resource cpu unavailable in ClusterQueue").
#[test]
fn resource_not_covered_by_the_cluster_queue_is_not_admitted() {
    let cpu = job("train", "research", 1, "", "").replace("            nvidia.com/gpu: 1\n", "            nvidia.com/gpu: 1\n            cpu: 2\n");
    let r = run(&single_queue("nominalQuota: 8", ""), &[cpu]);
    let w = workload(&r, "ml/train");
    assert!(!w.admitted);
    assert!(w.reason.as_deref().unwrap().contains("resource cpu unavailable in ClusterQueue research"), "{w:?}");
}

// kueue.sigs.k8s.io/docs/concepts/cluster_queue "Queueing strategy": under StrictFIFO a head that does not fit blocks
// the Workloads behind it; under BestEffortFIFO (the default) they are tried (pkg/cache/queue/cluster_queue.go
// `RequeueIfNotPresent`: StrictFIFO requeues a head that did not fit immediately, at the head; BestEffortFIFO puts it
// among the inadmissible Workloads until quota frees).
#[test]
fn strict_fifo_blocks_where_best_effort_fifo_skips() {
    let jobs = [job("big", "research", 6, "", ""), job("small", "research", 2, "", "")];
    let r = run(&single_queue("nominalQuota: 4", ""), &jobs);
    assert!(!workload(&r, "ml/big").admitted && workload(&r, "ml/small").admitted);
    let r = run(&single_queue("nominalQuota: 4", "  queueingStrategy: StrictFIFO\n"), &jobs);
    let small = workload(&r, "ml/small");
    assert!(!small.admitted);
    assert!(small.reason.as_deref().unwrap().contains("behind ml/big in StrictFIFO order"), "{small:?}");
}

// A Job runs min(parallelism, completions) pods at once, and Kueue's Workload counts the same
// (job_controller.go `podsCount`).
#[test]
fn job_pod_count_is_parallelism_capped_by_completions() {
    let j = job("train", "research", 4, "", "").replace("  completions: 4\n", "  completions: 2\n");
    let r = run(&single_queue("nominalQuota: 8", ""), &[j]);
    assert_eq!(workload(&r, "ml/train").pods, 2);
    assert_eq!(r.admission.as_ref().unwrap().cluster_queues[0].quotas[0].used, "2");
}

// A queued pod whose LocalQueue does not exist stays pending (Kueue: "LocalQueue ... doesn't exist"), and never
// launches a node.
#[test]
fn missing_local_queue_keeps_the_workload_pending() {
    let r = run(&single_queue("nominalQuota: 8", ""), &[job("train", "nowhere", 1, "", "")]);
    let w = workload(&r, "ml/train");
    assert!(!w.admitted && w.reason.as_deref().unwrap().contains("LocalQueue ml/nowhere is not in the manifests"), "{w:?}");
    assert!(r.nodeclaims.is_empty());
}

// Bad Kueue YAML is a located error, with the typed readers' messages; the CRDs' enums and Kueue's API version are
// checked (a v1beta1 ClusterQueue read as nothing would leave every queued pod pending for the wrong reason).
#[test]
fn bad_kueue_yaml_gives_a_located_error() {
    let bad = cluster_queue("research", "", &[("a100", "nominalQuota: 4")]).replace("  resourceGroups:\n  - coveredResources", "  resourceGroups: 3\n  x:\n  - coveredResources");
    let e = manifest_error(&[bad]);
    assert!(e.starts_with("manifests.yaml:7: spec.resourceGroups must be a list"), "{e}");
    let e = manifest_error(&[cluster_queue("research", "", &[("a100", "nominalQuota: lots")])]);
    assert!(e.starts_with("manifests.yaml:") && e.contains("nominalQuota must be a non-negative Kubernetes quantity"), "{e}");
    let e = manifest_error(&[cluster_queue("research", "  queueingStrategy: Fifo\n", &[("a100", "nominalQuota: 4")])]);
    assert!(e.starts_with("manifests.yaml:7: spec.queueingStrategy must be BestEffortFIFO or StrictFIFO"), "{e}");
    let e = manifest_error(&[flavor("a100", "").replace("v1beta2", "v1beta1")]);
    assert!(e.starts_with("manifests.yaml:1: kueue.x-k8s.io/v1beta1 ResourceFlavor: simulate reads Kueue's v1beta2 API"), "{e}");
    let e = manifest_error(&[local_queue("ml", "research", "x").replace("  clusterQueue: x\n", "  clusterQueue: [x]\n")]);
    assert!(e.starts_with("manifests.yaml:7: spec.clusterQueue must be a string"), "{e}");
}

// The admission section in the three formats: per ClusterQueue usage against nominal per flavor, and each Workload
// admitted or pending with its reason; without Kueue objects or queued pods the reports are unchanged.
#[test]
fn reports_carry_the_admission_section() {
    let r = run(&single_queue("nominalQuota: 4", ""), &[job("one", "research", 4, "", ""), job("two", "research", 2, "", "")]);
    let table = report::render(&r, report::Format::Table);
    assert!(table.contains("ClusterQueue research (BestEffortFIFO): a100 nvidia.com/gpu 4/4"), "{table}");
    assert!(table.contains("admitted ml/one (4 pods, priority 0): a100") && table.contains("pending  ml/two (2 pods, priority 0): pending in queue ml/research"), "{table}");
    let json: serde_json::Value = serde_json::from_str(&report::render(&r, report::Format::Json)).unwrap();
    assert_eq!(json["admission"]["cluster_queues"][0]["quotas"][0]["used"], "4");
    assert_eq!(json["admission"]["workloads"][1]["admitted"], false);
    assert!(report::render(&r, report::Format::Markdown).contains("| ml/two | ml/research | 2 | 0 | pending in queue"));
    let plain = run(&[pool("a100", 10, "")], &[job("one", "x", 1, "", "").replace("    kueue.x-k8s.io/queue-name: x\n", "    a: b\n")]);
    assert!(plain.admission.is_none() && !report::render(&plain, report::Format::Json).contains("admission"));
}

// scheduler.go `makeClassicalIterator` step 2: in a scheduling cycle the heads that fit within nominal quota go before
// those that borrow, whatever their priority; then resource_node.go `available`: what prod used past the 6 it keeps
// (nominal 8 − lendingLimit 2) is gone from the cohort, so research's urgent 6-GPU Job finds 4 and waits.
#[test]
fn heads_within_nominal_quota_go_before_borrowing_ones() {
    let mut m = single_queue("nominalQuota: 4", "  cohortName: ml\n");
    m.push(cluster_queue("prod", "  cohortName: ml\n", &[("a100", "nominalQuota: 8\n        lendingLimit: 2")]));
    m.push(local_queue("ml", "prod", "prod"));
    m.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: urgent\nvalue: 1000\n".into());
    let r = run(&m, &[job("borrower", "research", 6, "    kueue.x-k8s.io/priority-class: urgent\n", ""), job("lender", "prod", 8, "", "")]);
    assert!(workload(&r, "ml/lender").admitted && !workload(&r, "ml/lender").borrowing);
    let borrower = workload(&r, "ml/borrower");
    assert!(!borrower.admitted && borrower.reason.as_deref().unwrap().contains("needs 6 nvidia.com/gpu, 4 of 6 free"), "{borrower:?}");
}

// Kueue's pod integration (pkg/controller/jobs/pod) makes each pod of a Deployment a Workload of its own, so unlike a
// Job's gang, a Deployment is admitted pod by pod as far as the quota goes.
#[test]
fn deployment_pods_are_admitted_one_by_one() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: serve\n  namespace: ml\n  labels:\n    kueue.x-k8s.io/queue-name: research\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: c\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n";
    let r = run(&single_queue("nominalQuota: 2", ""), &[deployment.to_string()]);
    let admitted: Vec<&str> = r.admission.as_ref().unwrap().workloads.iter().filter(|w| w.admitted).map(|w| w.name.as_str()).collect();
    assert_eq!(admitted, ["ml/serve-0", "ml/serve-1"]);
    assert!(!workload(&r, "ml/serve-2").admitted);
    assert_eq!(r.nodeclaims.iter().map(|c| c.pods.len()).sum::<usize>(), 2);
}

// The README's example, through the command line, on out/ml-prod's own queues (the `queue` blocks of
// profiles/training.kdl): research's only flavor is on-demand `training` (the trainer, no queue, fills the reservation),
// nominal 16; finetune goes first (priority), pretrain and eval borrow production's idle quota (resource_node.go
// `available`), and the 40-worker sweep, above the 32 research can ever have, waits whole and launches nothing.
#[test]
fn readme_example_admits_by_priority_then_borrows() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(["simulate", "--manifests", "out/ml-prod", "--manifests", "tests/fixtures/kueue/priorities.yaml", "--pods", "tests/fixtures/kueue/jobs.yaml", "--pods", "tests/fixtures/kueue/sweep.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "training nvidia.com/gpu 24/16 (borrowed 8, borrowing limit 16)",
        "  admitted ml-research/finetune (8 pods, priority 1000): training\n",
        "  admitted ml-research/pretrain (12 pods, priority 0): training, borrowing\n",
        "  admitted ml-research/eval (4 pods, priority 0): training, borrowing\n",
        "  pending  ml-research/sweep (40 pods, priority 0): pending in queue ml-research/research (ClusterQueue research): flavor training: needs 40 nvidia.com/gpu, more than the 32 it can ever have (nominal 16, borrowed 8 of 16)",
        "  training-reserved (weight 80): 0 nodeclaims; nvidia.com/gpu 0/16",
        "  training (weight 70): 3 nodeclaims; nvidia.com/gpu 24/48",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(!text.lines().any(|l| l.starts_with("training") && l.contains("sweep-")), "the sweep launches nothing: {text}");
}

// The API server holds one object per name: a hand-written ClusterQueue (or ResourceFlavor, LocalQueue) beside
// out/'s own is an error naming both places, not a silent replacement of gpuplan's queue.
#[test]
fn a_kueue_object_given_twice_is_an_error_naming_both_places() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(["simulate", "--manifests", "out/ml-prod", "--manifests", "tests/fixtures/kueue/queues.yaml", "--pods", "tests/fixtures/kueue/jobs.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("tests/fixtures/kueue/queues.yaml:7: ResourceFlavor/training is given twice (first at out/ml-prod/resourceflavor-training.yaml:4)"), "{stderr}");
}

// Every one-line change of the README's Kueue objects (a line removed, a value swapped for a list, a negative number,
// a word) is read or rejected at a line of the file, and admission never panics on what is read.
#[test]
fn mutated_kueue_objects_are_read_or_located_never_a_panic() {
    let queues = std::fs::read_to_string("tests/fixtures/kueue/queues.yaml").unwrap();
    let jobs = yaml::parse_docs(Path::new("jobs.yaml"), &std::fs::read_to_string("tests/fixtures/kueue/jobs.yaml").unwrap()).unwrap();
    let pods = pods::pods(&jobs).unwrap();
    let catalog = catalog();
    let lines: Vec<&str> = queues.lines().collect();
    let mut variants = Vec::new();
    for i in 0..lines.len() {
        variants.push(lines.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, l)| *l).collect::<Vec<_>>().join("\n"));
        if let Some((key, _)) = lines[i].split_once(": ") {
            for value in ["[1]", "-1", "x", "{}"] {
                let mut changed = lines.clone();
                let line = format!("{key}: {value}");
                changed[i] = &line;
                variants.push(changed.join("\n"));
            }
        }
    }
    let (mut read, mut rejected) = (0, 0);
    for text in &variants {
        let Ok(docs) = yaml::parse_docs(Path::new("queues.yaml"), &format!("{NODE_CLASS}---\n{}---\n{text}", pool("training", 10, ""))) else { continue };
        match manifests::manifests(&docs) {
            Ok(m) => {
                simulate::run(&catalog, &m, &pods, &[]);
                read += 1;
            }
            Err(e) => {
                let line: usize = e.location.strip_prefix("queues.yaml:").and_then(|l| l.parse().ok()).unwrap_or_else(|| panic!("not located in the file: {e}"));
                assert!(line >= 1 && line <= lines.len() + 40, "{e}");
                rejected += 1;
            }
        }
    }
    assert!(read > 10 && rejected > 10, "read {read}, rejected {rejected}");
}

// With every queued Workload pending nothing launches, and the total is $0.00/h (an empty f64 sum is -0.0 in Rust,
// which printed `$-0.00/h`).
#[test]
fn nothing_admitted_costs_zero() {
    let r = run(&single_queue("nominalQuota: 1", ""), &[job("gang", "research", 4, "", "")]);
    assert!(r.nodeclaims.is_empty());
    assert!(report::render(&r, report::Format::Table).contains("total: $0.00/h"), "{}", report::render(&r, report::Format::Table));
}

// apis/kueue/v1beta2 ClusterQueueSpec.namespaceSelector: "Defaults to null which is a nothing selector (no namespaces
// eligible)"; pkg/workload `ValidateAdmissibility` keeps a Workload of another namespace out. A selector matches the
// Namespace's labels, and every namespace has `kubernetes.io/metadata.name`.
#[test]
fn namespace_selector_decides_which_namespaces_may_queue() {
    let cq = |selector: &str| cluster_queue("research", "", &[("a100", "nominalQuota: 8")]).replace("  namespaceSelector: {}\n", selector);
    let docs = |selector: &str| vec![pool("a100", 10, ""), flavor("a100", ""), cq(selector), local_queue("ml", "research", "research")];
    let r = run(&docs(""), &[job("train", "research", 1, "", "")]);
    let reason = workload(&r, "ml/train").reason.clone().unwrap_or_default();
    assert!(reason.contains("namespace ml is not eligible: ClusterQueue research has no namespaceSelector, which selects no namespace"), "{reason}");
    let by_name = "  namespaceSelector:\n    matchLabels:\n      kubernetes.io/metadata.name: ml\n";
    assert!(workload(&run(&docs(by_name), &[job("train", "research", 1, "", "")]), "ml/train").admitted);
    let by_team = "  namespaceSelector:\n    matchLabels:\n      team: research\n";
    assert!(!workload(&run(&docs(by_team), &[job("train", "research", 1, "", "")]), "ml/train").admitted);
    let mut labelled = docs(by_team);
    labelled.push("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  labels:\n    team: research\n".into());
    assert!(workload(&run(&labelled, &[job("train", "research", 1, "", "")]), "ml/train").admitted);
}

// scheduler.go `reserveCapacityForUnreclaimablePreempt`: a head that fits its nominal quota only once a running
// Workload is preempted (no candidate here) holds that quota back for the rest of the scheduling cycle, unless its
// ClusterQueue reclaims within the cohort (`CanAlwaysReclaim`). Under StrictFIFO it is the head every cycle, so a
// borrower of another ClusterQueue never gets the quota; under BestEffortFIFO it is set aside and the borrower gets it
// a cycle later. (Found by conformance/kueue against Kueue's scheduler, seed 7 case 108.)
#[test]
fn head_waiting_for_preemption_holds_back_its_nominal_quota() {
    let docs = |strategy: &str| {
        vec![
            pool("a100", 10, ""),
            flavor("a100", ""),
            cluster_queue("owner", &format!("  cohortName: ml\n{strategy}"), &[("a100", "nominalQuota: 16")]),
            cluster_queue("borrower", "  cohortName: ml\n", &[("a100", "nominalQuota: 0")]),
            local_queue("ml", "owner", "owner"),
            local_queue("ml", "borrower", "borrower"),
        ]
    };
    // The borrower's first Job asks for cpu, which it does not cover: set aside, so `late` is its head from cycle 2,
    // when `whole` (16, 8 in use) is the owner's head.
    let cpu = job("uncovered", "borrower", 1, "", "").replace("            nvidia.com/gpu: 1\n", "            nvidia.com/gpu: 1\n            cpu: 1\n");
    let jobs = [job("half", "owner", 8, "", ""), job("whole", "owner", 16, "", ""), cpu, job("late", "borrower", 8, "", "")];
    let r = run(&docs("  queueingStrategy: StrictFIFO\n"), &jobs);
    assert!(workload(&r, "ml/half").admitted && !workload(&r, "ml/whole").admitted);
    assert!(!workload(&r, "ml/late").admitted, "{:?}", workload(&r, "ml/late"));
    let r = run(&docs(""), &jobs);
    assert!(workload(&r, "ml/late").admitted && workload(&r, "ml/late").borrowing);
    let reclaim = docs("  queueingStrategy: StrictFIFO\n  preemption:\n    reclaimWithinCohort: Any\n");
    assert!(workload(&run(&reclaim, &jobs), "ml/late").admitted, "a ClusterQueue that can always reclaim holds nothing back");
}
