//! A pool's node class beyond the cluster block (issue 19 item 2): `kubelet { … }`, several classes per cluster, and
//! the `raw "<Kind>" "<YAML>"` escape hatch (merge, refusal of owned fields, CRD validation at the raw line), in the
//! compile and through adopt.

mod common;
use common::{compile_one, gpuplan, repo, text};

use gpuplan::compile::CompileError;
use gpuplan::diagnostic::ProfileDiagnostic;
use serde_json::Value;

const CLUSTER: &str = "cluster \"ml\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\"\n    ami \"al2023@v20251023\"\n";

/// A profile `p` in cluster `ml`: `cluster_extra` inside the cluster block, then `body`.
fn profile(cluster_extra: &str, body: &str) -> String {
    format!("profile \"p\" priority=1\n{CLUSTER}{cluster_extra}\n}}\n{body}")
}

fn object(c: &common::Compiled, kind: &str, name: &str) -> Value {
    c.ok().manifests().into_iter().find(|m| m.kind() == kind && m.object["metadata"]["name"] == name).unwrap_or_else(|| panic!("no {kind} {name}")).object
}

fn errors(text: String) -> Vec<ProfileDiagnostic> {
    match compile_one(text).result {
        Err(CompileError::Profiles { diagnostics }) => diagnostics,
        Err(e) => panic!("not a profile error: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

const L4: &str = "pool \"a\" preset=\"general\" {\n    gpu { name \"L4\"; per-node max=1; }\n    max-accelerators 8\n";

mod kubelet {
    use super::*;

    #[test]
    fn kubelet_settings_render_into_the_pools_class() {
        let c = compile_one(profile("", &format!("{L4}    kubelet {{ max-pods 58; kube-reserved cpu=\"200m\" memory=\"1Gi\"; eviction-hard memory.available=\"5%\"; cpu-cfs-quota #false; cluster-dns \"10.100.0.10\"; }}\n}}\n")));
        let class = object(&c, "EC2NodeClass", "p");
        let want = serde_json::json!({"maxPods": 58, "kubeReserved": {"cpu": "200m", "memory": "1Gi"}, "evictionHard": {"memory.available": "5%"}, "cpuCFSQuota": false, "clusterDNS": ["10.100.0.10"]});
        assert_eq!(class["spec"]["kubelet"], want);
    }

    #[test]
    fn pools_with_different_kubelet_settings_get_their_own_classes_and_equal_ones_share_one() {
        let b = "pool \"b\" preset=\"general\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    max-accelerators 8\n    kubelet { max-pods 58; }\n}\n";
        let c2 = "pool \"c\" preset=\"general\" {\n    gpu { name \"T4\"; per-node max=1; }\n    max-accelerators 8\n    kubelet { max-pods 58; }\n}\n";
        let c = compile_one(profile("", &format!("{L4}}}\n{b}{c2}")));
        let class_of = |pool: &str| object(&c, "NodePool", pool)["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap().to_string();
        assert_eq!((class_of("a"), class_of("b"), class_of("c")), ("p".into(), "p-b".into(), "p-b".into()));
        assert!(object(&c, "EC2NodeClass", "p")["spec"]["kubelet"].is_null());
        assert_eq!(object(&c, "EC2NodeClass", "p-b")["spec"]["kubelet"]["maxPods"], 58);
    }

    /// Class names are derived (`<profile>`, `<profile>-<pool>` for a pool's own kubelet, `-nvme`): profile `p`'s pool
    /// `x` with its own kubelet and a profile named `p-x` both make class `p-x`. One file would be written and one
    /// profile's pools would launch with the other's settings (its role lost): E0158, naming both pools.
    #[test]
    fn two_classes_that_derive_one_name_with_different_settings_are_e0158() {
        let first = profile("", &format!("{L4}}}\npool \"x\" preset=\"general\" {{\n    gpu {{ name \"A10G\"; per-node max=1; }}\n    max-accelerators 8\n    kubelet {{ max-pods 50; }}\n}}\n"));
        let second = format!("profile \"p-x\" priority=2\n{CLUSTER}    node-role \"OtherRole\"\n}}\npool \"y\" preset=\"general\" {{\n    gpu {{ name \"T4\"; per-node max=1; }}\n    max-accelerators 8\n}}\n");
        let c = common::compile_profiles(&[("p.kdl", first), ("p-x.kdl", second)], &[]);
        let Err(CompileError::Profiles { diagnostics }) = &c.result else { panic!("compiled: the classes were merged") };
        let e = diagnostics.iter().find(|d| d.code == "E0158").unwrap_or_else(|| panic!("{diagnostics:?}"));
        assert!(e.message.contains("node class `p-x` would be written twice with different settings") && e.message.contains("pool x") && e.message.contains("pool y"), "{e:?}");
    }

    /// The same within one profile: pool `s`'s NVMe class `p-nvme` and pool `nvme`'s own kubelet class `p-nvme`.
    #[test]
    fn a_pools_own_class_named_like_the_nvme_class_is_e0158() {
        let a = "pool \"s\" preset=\"general\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    max-accelerators 8\n    scratch \"instance-store\"\n}\n";
        let nvme = "pool \"nvme\" preset=\"general\" {\n    gpu { name \"T4\"; per-node max=1; }\n    max-accelerators 8\n    kubelet { max-pods 50; }\n}\n";
        let d = errors(profile("", &format!("{L4}}}\n{a}{nvme}")));
        assert!(d.iter().any(|e| e.code == "E0158" && e.message.contains("node class `p-nvme`")), "{d:?}");
    }

    /// `max-pods 0` (the CRD allows it) leaves no pod slot on any node, and a kube-reserved above every admitted
    /// type's memory leaves no memory: the pool would launch nothing for its pods, with no workload to show it.
    /// A probe pod simulated on the generated objects pends, and compile says so at the kubelet block (E0160).
    #[test]
    fn kubelet_settings_that_leave_no_room_for_a_pod_are_e0160_at_the_kubelet_block() {
        for kubelet in ["max-pods 0", "kube-reserved memory=\"1000Gi\""] {
            let d = errors(profile("", &format!("{L4}    kubelet {{ {kubelet}; }}\n}}\n")));
            let e = d.iter().find(|d| d.code == "E0160").unwrap_or_else(|| panic!("{kubelet}: {d:?}"));
            assert!(e.message.contains("no node of NodePool `a` takes a pod of one nvidia.com/gpu"), "{e:?}");
        }
        // Room for pods: compiles.
        compile_one(profile("", &format!("{L4}    kubelet {{ max-pods 20; }}\n}}\n"))).ok();
    }

    /// The EC2NodeClass CRD's rule "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod": a
    /// kubelet block that breaks it is reported at the block (E0161), not only at the rendered file.
    #[test]
    fn a_kubelet_block_the_crd_refuses_is_e0161_at_the_block() {
        let text = profile("", &format!("{L4}    kubelet {{ eviction-soft memory.available=\"500Mi\"; }}\n}}\n"));
        let c = compile_one(text);
        let Err(CompileError::Profiles { diagnostics }) = &c.result else { panic!("compiled") };
        let e = diagnostics.iter().find(|d| d.code == "E0161").unwrap_or_else(|| panic!("{diagnostics:?}"));
        assert!(e.message.contains("/spec/kubelet") && e.help.as_deref().is_some_and(|h| h.contains("eviction-soft-grace-period")), "{e:?}");
        assert!(gpuplan::diagnostic::render_plain(diagnostics).contains(&c.loc("p.kdl", "kubelet {")), "{}", gpuplan::diagnostic::render_plain(diagnostics));
    }

    /// kube-reserved replaces Karpenter's memory reservation (aws/karpenter-provider-aws v1.14.1
    /// pkg/providers/instancetype/types.go `kubeReservedResources`: the class's values override the computed ones), so
    /// compile's fit check (`simulate::instances::allocatable`, read from the rendered class) sees less memory:
    /// a 12Gi replica fits g6.xlarge (16 GiB) with the defaults and not with 4Gi reserved, and lint GP018 says so.
    #[test]
    fn kube_reserved_memory_lowers_the_allocatable_compile_checks_replicas_against() {
        let workload = "workload \"w\" namespace=\"ns\" pool=\"a\" {\n    selector \"app\" \"w\"\n    replicas min=1 max=1\n    requests memory=\"12Gi\"\n}\n";
        let gp018 = |kubelet: &str| {
            let c = compile_one(profile("", &format!("{L4}    types \"g6.xlarge\" \"g6.2xlarge\"\n{kubelet}}}\n{workload}")));
            common::with_code(&c.lint(), "GP018").iter().map(|d| d.message.clone()).collect::<Vec<_>>()
        };
        assert_eq!(gp018(""), Vec::<String>::new());
        let with = gp018("    kubelet { kube-reserved memory=\"4Gi\"; }\n");
        assert!(with.len() == 1 && with[0].contains("g6.xlarge"), "{with:?}");
    }

    #[test]
    fn kubelet_in_an_auto_mode_cluster_is_e0313_at_the_kubelet_block() {
        let text = "profile \"p\" priority=1\ncluster \"ml\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    node-role \"AmazonEKSAutoNodeRole\"\n    auto-mode #true\n}\npool \"a\" preset=\"general\" {\n    gpu { name \"L4\"; per-node max=1; }\n    max-accelerators 8\n    kubelet { max-pods 58; }\n}\n";
        let d = errors(text.to_string());
        assert!(d.iter().any(|d| d.code == "E0313" && d.message.contains("no kubelet settings")), "{d:?}");
    }
}

mod raw {
    use super::*;

    #[test]
    fn a_raw_nodepool_fragment_is_merged_into_the_rendered_nodepool() {
        let c = compile_one(profile("", &format!("{L4}    raw \"NodePool\" #\"\"\"\n        metadata:\n          annotations:\n            example.com/owner: ml\n        \"\"\"#\n}}\n")));
        let np = object(&c, "NodePool", "a");
        assert_eq!(np["metadata"]["annotations"]["example.com/owner"], "ml");
        // gpuplan's own annotations stay beside it: maps merge.
        assert_eq!(np["metadata"]["annotations"]["gpuplan.dev/profile"], "p");
    }

    /// RFC 7386: the cluster's class fragment merges `tags` with gpuplan's and replaces the subnet selector list.
    #[test]
    fn a_cluster_class_fragment_merges_maps_and_replaces_lists() {
        let raw = "    raw \"EC2NodeClass\" \"spec: {tags: {team: ml}, subnetSelectorTerms: [{id: subnet-0123456789abcdef0}]}\"";
        let c = compile_one(profile(raw, &format!("{L4}}}\n")));
        let spec = &object(&c, "EC2NodeClass", "p")["spec"];
        assert_eq!((spec["tags"]["team"].as_str(), spec["tags"]["gpuplan.dev/profile"].as_str()), (Some("ml"), Some("p")));
        assert_eq!(spec["subnetSelectorTerms"], serde_json::json!([{"id": "subnet-0123456789abcdef0"}]));
    }

    #[test]
    fn a_raw_fragment_on_a_field_gpuplan_writes_is_e0312_naming_the_field_and_the_setting() {
        let d = errors(profile("", &format!("{L4}    raw \"NodePool\" \"spec: {{limits: {{cpu: 1000}}}}\"\n}}\n")));
        let e = d.iter().find(|d| d.code == "E0312").unwrap_or_else(|| panic!("{d:?}"));
        assert!(e.message.contains("`spec.limits.cpu`") && e.help.as_deref().is_some_and(|h| h.contains("max-accelerators")), "{e:?}");
    }

    /// A raw `spec.replicas` would make the pool static behind the cost bound's back (its nodes are billed whatever
    /// the pods): the `static` line says it.
    #[test]
    fn a_raw_fragment_that_makes_a_pool_static_is_e0312_pointing_at_the_static_line() {
        let d = errors(profile("", &format!("{L4}    raw \"NodePool\" \"spec: {{replicas: 3}}\"\n}}\n")));
        let e = d.iter().find(|d| d.code == "E0312").unwrap_or_else(|| panic!("{d:?}"));
        assert!(e.message.contains("`spec.replicas`") && e.help.as_deref().is_some_and(|h| h.contains("static replicas=")), "{e:?}");
    }

    /// gpuplan picks the device plugin, the volume's device and the time-slicing settings from the `ami` line: a
    /// fragment switching an AL2023 class to Bottlerocket would keep the GPU Operator's plugin and its 4-slice
    /// overlay while Bottlerocket's host plugin advertises whole GPUs. Refused at the raw line; `Custom` is allowed.
    #[test]
    fn a_raw_fragment_that_changes_the_ami_family_is_e0159_and_custom_is_allowed() {
        let raw = "    raw \"EC2NodeClass\" \"spec: {amiSelectorTerms: [{alias: bottlerocket@latest}]}\"";
        let d = errors(profile(raw, &format!("{L4}    time-slicing replicas=4\n}}\n")));
        let e = d.iter().find(|d| d.code == "E0159").unwrap_or_else(|| panic!("{d:?}"));
        assert!(e.message.contains("AMI family `bottlerocket`") && e.help.as_deref().is_some_and(|h| h.contains("ami \"bottlerocket@<version>\"")), "{e:?}");
        let family = "    raw \"EC2NodeClass\" \"spec: {amiFamily: Bottlerocket, amiSelectorTerms: [{id: ami-0123456789abcdef0}]}\"";
        assert!(errors(profile(family, &format!("{L4}}}\n"))).iter().any(|d| d.code == "E0159"));
        let custom = "    raw \"EC2NodeClass\" \"spec: {amiFamily: Custom, amiSelectorTerms: [{id: ami-0123456789abcdef0}]}\"";
        let c = compile_one(profile(custom, &format!("{L4}}}\n")));
        assert_eq!(object(&c, "EC2NodeClass", "p")["spec"]["amiFamily"], "Custom");
    }

    /// aws/karpenter-provider-aws v1.14.1 compatibility.go `IsCompatibleWithNodeClass`: with nested virtualization
    /// enabled Karpenter launches only types whose processor supports it (no g5 at all), which the catalog cannot
    /// tell: lint GP033 at the raw line; `allow "GP033"` silences it.
    #[test]
    fn a_raw_class_field_that_filters_instance_types_is_lint_gp033_and_allow_silences_it() {
        let raw = "    raw \"EC2NodeClass\" \"spec: {cpuOptions: {nestedVirtualization: enabled}}\"\n";
        let c = compile_one(profile("", &format!("{L4}{raw}}}\n")));
        let found: Vec<_> = c.ok().findings.iter().filter(|f| f.code == "GP033").collect();
        assert_eq!(found.len(), 1, "{:?}", c.ok().findings);
        assert!(found[0].diagnostic.message.contains("cpuOptions (the processor's nested-virtualization support)"), "{:?}", found[0]);
        let allowed = compile_one(profile("", &format!("{L4}{raw}    allow \"GP033\"\n}}\n")));
        assert!(allowed.ok().findings.iter().all(|f| f.code != "GP033"), "{:?}", allowed.ok().findings);
    }

    #[test]
    fn a_raw_fragment_that_breaks_the_crd_is_e0315_at_the_raw_line() {
        let text = profile("", &format!("{L4}    raw \"EC2NodeClass\" \"spec: {{blockDeviceMappings: [{{deviceName: /dev/xvda, ebs: {{volumeSize: 5}}}}]}}\"\n}}\n"));
        let c = compile_one(text.clone());
        let Err(CompileError::Profiles { diagnostics }) = &c.result else { panic!("compiled") };
        let e = diagnostics.iter().find(|d| d.code == "E0315").unwrap_or_else(|| panic!("{diagnostics:?}"));
        assert!(e.message.contains("/spec/blockDeviceMappings/0/ebs/volumeSize"), "{e:?}");
        assert!(gpuplan::diagnostic::render_plain(diagnostics).contains(&c.loc("p.kdl", "raw \"EC2NodeClass\"")), "{}", gpuplan::diagnostic::render_plain(diagnostics));
    }

    #[test]
    fn a_raw_fragment_that_is_not_a_mapping_is_e0311() {
        let d = errors(profile("", &format!("{L4}    raw \"NodePool\" \"- a\\n- b\"\n}}\n")));
        assert!(d.iter().any(|d| d.code == "E0311" && d.message.contains("found a list")), "{d:?}");
    }

    #[test]
    fn a_raw_fragment_for_a_kind_gpuplan_does_not_render_per_pool_is_e0310() {
        let d = errors(profile("", &format!("{L4}    raw \"ClusterPolicy\" \"spec: {{}}\"\n}}\n")));
        assert!(d.iter().any(|d| d.code == "E0310"), "{d:?}");
    }

    #[test]
    fn a_raw_ec2nodeclass_fragment_in_an_auto_mode_cluster_is_e0314() {
        let text = "profile \"p\" priority=1\ncluster \"ml\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    node-role \"AmazonEKSAutoNodeRole\"\n    auto-mode #true\n    raw \"EC2NodeClass\" \"spec: {tags: {team: ml}}\"\n}\npool \"a\" preset=\"general\" {\n    gpu { name \"L4\"; per-node max=1; }\n    max-accelerators 8\n}\n";
        let d = errors(text.to_string());
        assert!(d.iter().any(|d| d.code == "E0314"), "{d:?}");
    }
}

mod adopt {
    use super::*;

    /// Two NodePools on two EC2NodeClasses that differ in AMI family, role, selectors, tags, volumes and kubelet
    /// settings: adopt writes one profile per class, both in one cluster (the first class's discovery tag), and each
    /// compiled NodePool's class holds its original's settings; the verification sees no placement change.
    #[test]
    fn two_different_classes_adopt_into_one_cluster_with_each_pool_on_a_class_with_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let catalogs = repo().join("catalogs");
        let input = repo().join("tests/fixtures/adopt-classes");
        let out = gpuplan(dir.path(), &["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"]);
        assert!(out.status.success(), "{}", text(&out));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["verification"]["changed"], 0, "{:#}", report["verification"]);
        let compiled = gpuplan(dir.path(), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
        assert!(compiled.status.success(), "{}", text(&compiled));
        let read = |file: &str| -> Value { serde_saphyr::from_str(&std::fs::read_to_string(dir.path().join("out/ml").join(file)).unwrap()).unwrap() };
        let originals: Vec<Value> = serde_saphyr::from_multiple(&std::fs::read_to_string(input.join("two-classes.yaml")).unwrap()).unwrap();
        for (pool, class) in [("inference", "al2023"), ("batch", "bottlerocket")] {
            let np = read(&format!("nodepool-{pool}.yaml"));
            let name = np["spec"]["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap().to_string();
            let compiled = read(&format!("ec2nodeclass-{name}.yaml"));
            let original = originals.iter().find(|o| o["kind"] == "EC2NodeClass" && o["metadata"]["name"] == class).unwrap();
            for field in ["role", "amiSelectorTerms", "subnetSelectorTerms", "securityGroupSelectorTerms", "kubelet"] {
                assert_eq!(compiled["spec"][field], original["spec"][field], "{pool}: {field}");
            }
            assert_eq!(compiled["spec"]["tags"]["team"], original["spec"]["tags"]["team"], "{pool}");
            if !original["spec"]["blockDeviceMappings"].is_null() {
                assert_eq!(compiled["spec"]["blockDeviceMappings"], original["spec"]["blockDeviceMappings"], "{pool}");
            }
        }
    }

    /// A karpenter.sh/v1 NodePool has no kubelet field (the API server drops it; Karpenter v1 reads kubelet settings
    /// from the EC2NodeClass): adopt does not turn it into settings the original never had, and says so.
    #[test]
    fn a_v1_nodepools_kubelet_field_is_named_and_kept_as_a_comment_not_applied() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("in")).unwrap();
        std::fs::copy(repo().join("tests/fixtures/adopt/gpu-nodepool.yaml"), dir.path().join("in/gpu.yaml")).unwrap();
        let out = gpuplan(dir.path(), &["adopt", "in", "--into", "profiles", "--catalogs", repo().join("catalogs").to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
        assert!(profile.contains("// not adopted: spec.template.spec.kubelet.maxPods = 110") && !profile.contains("kubelet {"), "{profile}");
        assert!(text(&out).contains("karpenter.sh/v1 NodePools have no kubelet field"), "{}", text(&out));
    }
}

mod verification {
    use super::*;

    const CPU_POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: web\nspec:\n  limits:\n    cpu: \"64\"\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: small-disk}\n      requirements:\n        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6a]}\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: small-disk\nspec:\n  role: KarpenterNodeRole-ml\n  amiSelectorTerms: [{alias: al2023@v20251023}]\n  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: ml}}]\n  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: ml}}]\n  blockDeviceMappings:\n    - {deviceName: /dev/xvda, ebs: {volumeSize: 20Gi, volumeType: gp3}}\n";
    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: scratch\nspec:\n  containers:\n  - name: c\n    image: x\n    resources:\n      requests:\n        cpu: \"1\"\n        ephemeral-storage: 50Gi\n";

    /// The class's own 20Gi root volume is carried in its `raw` block (before, adopt dropped a hand-written class's
    /// volumes for gpuplan's 200Gi one): a pod asking 50Gi of ephemeral storage pends on both sides, as the
    /// verification simulates the compiled output with the raw fragment merged (types.go `ephemeralStorage`: the
    /// root volume less the 10% eviction threshold and 1Gi kube-reserved).
    #[test]
    fn the_verification_simulates_a_class_field_carried_in_raw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in.yaml"), CPU_POOL).unwrap();
        std::fs::write(dir.path().join("pods.yaml"), POD).unwrap();
        let out = gpuplan(dir.path(), &["adopt", "in.yaml", "--into", "profiles", "--catalogs", repo().join("catalogs").to_str().unwrap(), "--format", "json", "--verify", "pods.yaml"]);
        assert!(out.status.success(), "{}", text(&out));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let p = &report["verification"]["placements"][0];
        assert_eq!((p["change"].as_str(), p["before"].is_null(), p["after"].is_null()), (Some("same"), true, true), "{p:#}");
        let profile = std::fs::read_to_string(dir.path().join("profiles/small-disk.kdl")).unwrap();
        assert!(profile.contains("raw \"EC2NodeClass\"") && profile.contains("volumeSize: 20Gi"), "{profile}");
    }
}

mod round_trip {
    use super::*;

    /// gpuplan's own output with kubelet settings (a class of its own) and raw fragments (cluster, pool) adopts back
    /// into the same settings and compiles to the same files, byte for byte: the class's kubelet becomes the pool's
    /// `kubelet`, the fields no setting says become the same `raw` blocks.
    #[test]
    fn a_profile_with_kubelet_and_raw_blocks_round_trips_through_adopt_byte_for_byte() {
        let b = "pool \"b\" preset=\"general\" {\n    gpu { name \"A10G\"; per-node max=1; }\n    max-accelerators 8\n    kubelet { max-pods 58; eviction-hard memory.available=\"5%\"; }\n    raw \"NodePool\" \"spec: {template: {metadata: {annotations: {example.com/owner: ml}}}}\"\n}\n";
        let adopted = common::assert_round_trip(&profile("    raw \"EC2NodeClass\" \"spec: {tags: {team: ml}}\"", &format!("{L4}}}\n{b}")));
        assert!(adopted.contains("kubelet {") && adopted.matches("raw \"").count() == 2, "{adopted}");
    }
}
