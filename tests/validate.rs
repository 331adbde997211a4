//! The validate stage against the real CRDs in tests/fixtures/shared/schemas and the vendored built-in schemas.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use gpuplan::validate::{EMBEDDED_CRDS, ValidateError, Validator, Violation};
use serde_json::{Value, json};

const SCHEMAS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shared/schemas");

const CRD_FILES: &[&str] = &[
    "karpenter/karpenter.sh_nodepools.yaml",
    "karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml",
    "karpenter/karpenter.sh_nodeoverlays.yaml",
    "gpu-operator/nvidia.com_clusterpolicies.yaml",
    "prometheus-operator/monitoring.coreos.com_prometheusrules.yaml",
    "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml",
    "prometheus-operator/monitoring.coreos.com_podmonitors.yaml",
    "argo-cd/application-crd.yaml",
    "flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    "flux/source.toolkit.fluxcd.io_gitrepositories.yaml",
    "kueue/kueue.x-k8s.io_clusterqueues.yaml",
    "kueue/kueue.x-k8s.io_localqueues.yaml",
    "kueue/kueue.x-k8s.io_resourceflavors.yaml",
    "keda/keda.sh_scaledobjects.yaml",
    "keda/keda.sh_triggerauthentications.yaml",
];

/// Schemas gpuplan writes itself from a vendor's documentation (no upstream CRD exists): see src/crds/README.md.
const DOC_WRITTEN_CRDS: &[&str] = &["eks/eks.amazonaws.com_nodeclasses.yaml"];

fn validator() -> &'static Validator {
    static V: OnceLock<Validator> = OnceLock::new();
    V.get_or_init(|| {
        let crds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/crds");
        let paths: Vec<PathBuf> = CRD_FILES
            .iter()
            .map(|f| PathBuf::from(SCHEMAS).join(f))
            .chain(DOC_WRITTEN_CRDS.iter().map(|f| crds.join(f)))
            .collect();
        Validator::from_crd_files(&paths).expect("real CRDs compile")
    })
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).expect("test YAML parses")
}

fn nodepool() -> Value {
    yaml(include_str!("validate/nodepool.yaml"))
}

fn ec2nodeclass() -> Value {
    yaml(include_str!("validate/ec2nodeclass.yaml"))
}

/// Sets the value at a JSON pointer (parents must exist).
fn set(v: &mut Value, pointer: &str, new: Value) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    let p = v
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    match p {
        Value::Object(o) => {
            o.insert(last, new);
        }
        Value::Array(a) => {
            let i = last.parse::<usize>().unwrap();
            if i == a.len() {
                a.push(new);
            } else {
                a[i] = new;
            }
        }
        _ => panic!("{parent} is a scalar"),
    }
}

fn remove(v: &mut Value, pointer: &str) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    v.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(last);
}

fn assert_valid(v: &Value) {
    let violations = validator().validate(v);
    assert!(
        violations.is_empty(),
        "{} {} should be valid, got:\n{}",
        v["kind"],
        v["metadata"]["name"],
        show(&violations)
    );
}

fn show(violations: &[Violation]) -> String {
    violations.iter().map(|v| format!("  {v}\n")).collect()
}

/// Exactly one violation, at `pointer`, whose message contains `message`.
fn assert_one(v: &Value, pointer: &str, message: &str) {
    let violations = validator().validate(v);
    assert!(
        violations.len() == 1
            && violations[0].pointer == pointer
            && violations[0].message.contains(message),
        "expected exactly one violation at {pointer:?} containing {message:?}, got:\n{}",
        show(&violations)
    );
}

// ---- valid objects ------------------------------------------------------------------------------

#[test]
fn valid_nodepool() {
    assert_valid(&nodepool());
}

#[test]
fn valid_ec2nodeclass() {
    assert_valid(&ec2nodeclass());
}

#[test]
fn valid_clusterpolicy() {
    assert_valid(&yaml(include_str!("validate/clusterpolicy.yaml")));
}

#[test]
fn valid_prometheusrule() {
    assert_valid(&yaml(include_str!("validate/prometheusrule.yaml")));
}

#[test]
fn valid_servicemonitor() {
    assert_valid(&yaml(include_str!("validate/servicemonitor.yaml")));
}

#[test]
fn valid_pdb() {
    assert_valid(&yaml(include_str!("validate/pdb.yaml")));
}

#[test]
fn valid_hpa() {
    assert_valid(&yaml(include_str!("validate/hpa.yaml")));
}

#[test]
fn valid_configmap() {
    assert_valid(&yaml(include_str!("validate/configmap.yaml")));
}

#[test]
fn valid_kustomization() {
    assert_valid(&yaml(include_str!("validate/kustomization.yaml")));
}

#[test]
fn builtin_validator_accepts_the_same_objects() {
    let v = Validator::builtin();
    for text in all_fixtures() {
        let obj = yaml(text);
        let violations = v.validate(&obj);
        assert!(
            violations.is_empty(),
            "{}: {}",
            obj["kind"],
            show(&violations)
        );
    }
    assert_eq!(v.kinds(), validator().kinds());
}

fn all_fixtures() -> [&'static str; 10] {
    [
        include_str!("validate/nodepool.yaml"),
        include_str!("validate/nodeclass.yaml"),
        include_str!("validate/ec2nodeclass.yaml"),
        include_str!("validate/clusterpolicy.yaml"),
        include_str!("validate/prometheusrule.yaml"),
        include_str!("validate/servicemonitor.yaml"),
        include_str!("validate/pdb.yaml"),
        include_str!("validate/hpa.yaml"),
        include_str!("validate/configmap.yaml"),
        include_str!("validate/kustomization.yaml"),
    ]
}

// ---- structural schema --------------------------------------------------------------------------

#[test]
fn unknown_field_is_rejected() {
    let mut np = nodepool();
    set(&mut np, "/spec/template/spec/foo", json!("bar"));
    assert_one(&np, "/spec/template/spec/foo", "unknown field \"foo\"");
}

#[test]
fn wrong_type_is_rejected() {
    let mut np = nodepool();
    set(&mut np, "/spec/weight", json!("10"));
    assert_one(&np, "/spec/weight", "\"10\" is not of type \"integer\"");
}

#[test]
fn out_of_range_weight_is_rejected() {
    let mut np = nodepool();
    set(&mut np, "/spec/weight", json!(101));
    assert_one(
        &np,
        "/spec/weight",
        "101 is greater than the maximum of 100",
    );
}

#[test]
fn limits_accept_int_or_string() {
    let mut np = nodepool();
    set(&mut np, "/spec/limits/nvidia.com~1gpu", json!(8));
    assert_valid(&np);
    set(&mut np, "/spec/limits/nvidia.com~1gpu", json!(true));
    assert_one(
        &np,
        "/spec/limits/nvidia.com~1gpu",
        "true is not of types \"integer\", \"string\"",
    );
}

#[test]
fn enum_is_enforced() {
    let mut np = nodepool();
    set(
        &mut np,
        "/spec/disruption/consolidationPolicy",
        json!("Sometimes"),
    );
    assert_one(
        &np,
        "/spec/disruption/consolidationPolicy",
        "\"Sometimes\" is not one of",
    );
}

#[test]
fn required_field_is_enforced() {
    let mut np = nodepool();
    remove(&mut np, "/spec/template/spec/nodeClassRef");
    assert_one(
        &np,
        "/spec/template/spec",
        "\"nodeClassRef\" is a required property",
    );
}

#[test]
fn defaults_are_applied_before_validation() {
    // budgets[].nodes is required but defaults to 10%, so the API server accepts its absence.
    let mut np = nodepool();
    remove(&mut np, "/spec/disruption/budgets/2/nodes");
    assert_valid(&np);
}

#[test]
fn metadata_is_checked() {
    let mut np = nodepool();
    set(&mut np, "/metadata/name", json!("GPU_Pool"));
    assert_one(&np, "/metadata/name", "does not match");
    let mut np = nodepool();
    remove(&mut np, "/metadata/name");
    assert_one(&np, "/metadata", "\"name\" is a required property");
    let mut np = nodepool();
    set(&mut np, "/metadata/labels/team", json!(7));
    assert_one(&np, "/metadata/labels/team", "7 is not of type \"string\"");
    let mut np = nodepool();
    set(&mut np, "/metadata/nmae", json!("typo"));
    assert_one(&np, "/metadata/nmae", "unknown field \"nmae\"");
}

// ---- CEL ----------------------------------------------------------------------------------------

#[test]
fn schedule_without_duration_is_rejected() {
    let mut np = nodepool();
    remove(&mut np, "/spec/disruption/budgets/1/duration");
    assert_one(
        &np,
        "/spec/disruption/budgets",
        "'schedule' must be set with 'duration'",
    );
}

#[test]
fn restricted_requirement_keys_are_rejected() {
    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/0/key",
        json!("karpenter.sh/nodepool"),
    );
    assert_one(
        &np,
        "/spec/template/spec/requirements/0/key",
        "label \"karpenter.sh/nodepool\" is restricted",
    );

    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/0/key",
        json!("karpenter.sh/custom"),
    );
    assert_one(
        &np,
        "/spec/template/spec/requirements/0/key",
        "label domain \"karpenter.sh\" is restricted",
    );

    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/0/key",
        json!("kubernetes.io/hostname"),
    );
    assert_one(
        &np,
        "/spec/template/spec/requirements/0/key",
        "label \"kubernetes.io/hostname\" is restricted",
    );

    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/0/key",
        json!("karpenter.k8s.aws/instance-foo"),
    );
    assert_one(
        &np,
        "/spec/template/spec/requirements/0/key",
        "label domain \"karpenter.k8s.aws\" is restricted",
    );

    // The same rules guard the template's labels (a map: evaluated once, on the whole map).
    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/metadata/labels/karpenter.sh~1nodepool",
        json!("x"),
    );
    assert_one(
        &np,
        "/spec/template/metadata/labels",
        "label \"karpenter.sh/nodepool\" is restricted",
    );
}

#[test]
fn kubernetes_io_keys_other_than_hostname_pass_the_crd() {
    // The v1.14.1 CRD only restricts kubernetes.io/hostname in that domain; Karpenter rejects other
    // kubernetes.io keys that are not well-known labels in its controller, not at admission.
    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/0/key",
        json!("kubernetes.io/foo"),
    );
    assert_valid(&np);
}

#[test]
fn requirement_operator_rules() {
    const GT: &str = "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value";
    // A non-integer value makes int() fail: the API server reports that as the rule failing.
    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/2/values",
        json!(["lots"]),
    );
    assert_one(&np, "/spec/template/spec/requirements", GT);

    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/2/values",
        json!(["1", "2"]),
    );
    assert_one(&np, "/spec/template/spec/requirements", GT);

    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/2/values",
        json!(["-1"]),
    );
    assert_one(&np, "/spec/template/spec/requirements", GT);

    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/0/values",
        json!([]),
    );
    assert_one(
        &np,
        "/spec/template/spec/requirements",
        "requirements with operator 'In' must have a value defined",
    );
}

#[test]
fn min_values_above_value_count_is_rejected() {
    let mut np = nodepool();
    set(
        &mut np,
        "/spec/template/spec/requirements/1/minValues",
        json!(4),
    );
    assert_one(
        &np,
        "/spec/template/spec/requirements",
        "requirements with 'minValues' must have at least that many values specified in the 'values' field",
    );
}

#[test]
fn static_nodepool_rules() {
    let mut np = nodepool();
    set(&mut np, "/spec/replicas", json!(3));
    let violations = validator().validate(&np);
    let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "only 'limits.nodes' is supported on static NodePools",
            "'weight' is not supported on static NodePools"
        ],
        "{}",
        show(&violations)
    );
    assert!(violations.iter().all(|v| v.pointer == "/spec"));
}

#[test]
fn ec2nodeclass_alias_rules() {
    let mut nc = ec2nodeclass();
    set(&mut nc, "/spec/amiSelectorTerms/0/alias", json!("al2023"));
    assert_one(
        &nc,
        "/spec/amiSelectorTerms/0/alias",
        "'alias' is improperly formatted, must match the format 'family@version'",
    );

    let mut nc = ec2nodeclass();
    set(
        &mut nc,
        "/spec/amiSelectorTerms/0/alias",
        json!("ubuntu@latest"),
    );
    assert_one(
        &nc,
        "/spec/amiSelectorTerms/0/alias",
        "family is not supported",
    );

    let mut nc = ec2nodeclass();
    set(
        &mut nc,
        "/spec/amiSelectorTerms/0/alias",
        json!("windows2022@v20240101"),
    );
    assert_one(
        &nc,
        "/spec/amiSelectorTerms/0/alias",
        "windows families may only specify version 'latest'",
    );
}

#[test]
fn ec2nodeclass_cross_field_rules() {
    // alias is exclusive with other terms (list rule), and find() on the alias drives the
    // amiFamily rules.
    let mut nc = ec2nodeclass();
    set(
        &mut nc,
        "/spec/amiSelectorTerms/1",
        json!({"id": "ami-0123456789abcdef0"}),
    );
    assert_one(
        &nc,
        "/spec/amiSelectorTerms",
        "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
    );

    let mut nc = ec2nodeclass();
    set(&mut nc, "/spec/amiFamily", json!("Bottlerocket"));
    assert_one(
        &nc,
        "/spec",
        "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias",
    );

    let mut nc = ec2nodeclass();
    set(
        &mut nc,
        "/spec/instanceProfile",
        json!("KarpenterNodeInstanceProfile"),
    );
    assert_one(
        &nc,
        "/spec",
        "must specify exactly one of ['role', 'instanceProfile']",
    );

    let mut nc = ec2nodeclass();
    set(&mut nc, "/spec/tags/karpenter.sh~1nodepool", json!("x"));
    assert_one(
        &nc,
        "/spec/tags",
        "tag contains a restricted tag matching karpenter.sh/nodepool",
    );

    let mut nc = ec2nodeclass();
    set(&mut nc, "/spec/subnetSelectorTerms/0/tags/team", json!(""));
    assert_one(
        &nc,
        "/spec/subnetSelectorTerms/0/tags",
        "empty tag keys or values aren't supported",
    );
}

#[test]
fn every_karpenter_cel_rule_compiles_and_evaluates() {
    // Each non-transition rule is evaluated once on a value built from its schema with every field
    // present; "unsupported" = did not compile or did not evaluate. No exceptions are expected.
    const EXCEPTIONS: &[(&str, &str)] = &[];
    for (api_version, kind, expected_rules, expected_transition) in [
        ("karpenter.sh/v1", "NodePool", 17, 3),
        ("karpenter.k8s.aws/v1", "EC2NodeClass", 54, 0),
    ] {
        let (rules, transition) = validator().cel_rules(api_version, kind);
        assert_eq!(rules.len(), expected_rules, "{kind}: rule count");
        assert_eq!(
            transition, expected_transition,
            "{kind}: transition rules skipped"
        );
        let unsupported: Vec<String> = rules
            .iter()
            .filter(|r| r.unsupported.is_some())
            .filter(|r| {
                !EXCEPTIONS
                    .iter()
                    .any(|(k, rule)| *k == kind && *rule == r.rule)
            })
            .map(|r| {
                format!(
                    "{} {}: {} ({})",
                    kind,
                    r.location,
                    r.rule,
                    r.unsupported.as_deref().unwrap()
                )
            })
            .collect();
        assert!(
            unsupported.is_empty(),
            "unsupported rules:\n{}",
            unsupported.join("\n")
        );
    }
}

// ---- kinds and versions -------------------------------------------------------------------------

#[test]
fn unserved_version_is_rejected() {
    let mut np = nodepool();
    set(&mut np, "/apiVersion", json!("karpenter.sh/v1beta1"));
    assert_one(
        &np,
        "/apiVersion",
        "no schema for kind NodePool in group/version karpenter.sh/v1beta1 (served versions: v1)",
    );
}

#[test]
fn unknown_kind_is_rejected() {
    let mut np = nodepool();
    set(&mut np, "/kind", json!("NodeClaim"));
    assert_one(
        &np,
        "/kind",
        "no schema for kind NodeClaim in group/version karpenter.sh/v1",
    );
    let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}});
    assert_one(
        &obj,
        "/kind",
        "no schema for kind Deployment in group/version apps/v1",
    );
}

#[test]
fn missing_api_version_and_kind() {
    let v = validator().validate(&json!({"metadata": {"name": "x"}}));
    assert_eq!(
        v,
        [
            Violation {
                pointer: "/apiVersion".into(),
                message: "apiVersion must be set (a string)".into()
            },
            Violation {
                pointer: "/kind".into(),
                message: "kind must be set (a string)".into()
            },
        ]
    );
    assert_eq!(
        v[0].to_string(),
        "/apiVersion: apiVersion must be set (a string)"
    );
}

// ---- built-in kinds -----------------------------------------------------------------------------

#[test]
fn pdb_rules() {
    let mut pdb = yaml(include_str!("validate/pdb.yaml"));
    set(&mut pdb, "/spec/maxUnavailable", json!(1));
    assert_one(
        &pdb,
        "/spec",
        "minAvailable and maxUnavailable cannot be both set",
    );
    let mut pdb = yaml(include_str!("validate/pdb.yaml"));
    set(&mut pdb, "/spec/minAvailable", json!("150%"));
    assert_one(&pdb, "/spec/minAvailable", "must not be greater than 100%");
    let mut pdb = yaml(include_str!("validate/pdb.yaml"));
    set(&mut pdb, "/spec/minAvailble", json!(1));
    assert_one(&pdb, "/spec/minAvailble", "unknown field \"minAvailble\"");
}

#[test]
fn hpa_rules() {
    let mut hpa = yaml(include_str!("validate/hpa.yaml"));
    set(&mut hpa, "/spec/minReplicas", json!(20));
    assert_one(
        &hpa,
        "/spec/maxReplicas",
        "must be greater than or equal to `minReplicas`",
    );
    let mut hpa = yaml(include_str!("validate/hpa.yaml"));
    set(&mut hpa, "/spec/metrics/0/type", json!("Resource"));
    let violations = validator().validate(&hpa);
    assert!(
        violations
            .iter()
            .any(|v| v.pointer == "/spec/metrics/0/resource"
                && v.message == "must populate information for the given metric source"),
        "{}",
        show(&violations)
    );
    let mut hpa = yaml(include_str!("validate/hpa.yaml"));
    remove(&mut hpa, "/spec/maxReplicas");
    assert_one(&hpa, "/spec", "\"maxReplicas\" is a required property");
}

#[test]
fn configmap_rules() {
    let mut cm = yaml(include_str!("validate/configmap.yaml"));
    set(&mut cm, "/data/bad key", json!("x"));
    assert_one(
        &cm,
        "/data/bad key",
        "a valid config key must consist of alphanumeric characters",
    );
    let mut cm = yaml(include_str!("validate/configmap.yaml"));
    set(&mut cm, "/metadata/namespace", json!("GPU Operator"));
    assert_one(&cm, "/metadata/namespace", "does not match");
}

#[test]
fn kustomization_rejects_unknown_fields() {
    let mut k = yaml(include_str!("validate/kustomization.yaml"));
    set(&mut k, "/resource", json!(["a.yaml"]));
    assert_one(&k, "/resource", "unknown field \"resource\"");
}

// ---- embedding and speed ------------------------------------------------------------------------

/// src/crds/ holds byte-for-byte copies of tests/fixtures/shared/schemas, and what the binary embeds (build.rs's JSON) is exactly
/// what those YAML files parse to.
#[test]
fn embedded_crds_equal_shared_schemas() {
    assert_eq!(EMBEDDED_CRDS.len(), CRD_FILES.len() + DOC_WRITTEN_CRDS.len());
    for crd in EMBEDDED_CRDS.iter().filter(|c| !DOC_WRITTEN_CRDS.contains(&c.path)) {
        let path = crd.path;
        let shared = std::fs::read_to_string(PathBuf::from(SCHEMAS).join(path)).unwrap();
        let on_disk = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/crds").join(path)).unwrap();
        assert!(on_disk == shared, "src/crds/{path} differs from tests/fixtures/shared/schemas/{path}");
        let parsed: Vec<serde_json::Value> = serde_saphyr::from_multiple(&shared).unwrap();
        let embedded: serde_json::Value = serde_json::from_str(crd.json).unwrap();
        assert_eq!(parsed.into_iter().filter(|d| !d.is_null()).collect::<Vec<_>>(), vec![embedded], "the embedded JSON of {path} is not its YAML");
    }
}

#[test]
fn from_crd_files_reports_bad_inputs() {
    let missing = PathBuf::from(SCHEMAS).join("karpenter/nope.yaml");
    let err = Validator::from_crd_files(&[missing])
        .err()
        .expect("missing file is an error");
    assert!(matches!(err, ValidateError::Io { .. }), "{err}");
    let not_crd = PathBuf::from(SCHEMAS).join("gpu-operator/default-mig-parted-config.yaml");
    let err = Validator::from_crd_files(&[not_crd])
        .err()
        .expect("not a CRD is an error");
    assert!(
        err.to_string().ends_with("not a CustomResourceDefinition"),
        "{err}"
    );
}

#[test]
fn validating_100_objects_takes_milliseconds() {
    let objects: Vec<Value> = all_fixtures()
        .iter()
        .cycle()
        .take(100)
        .map(|t| yaml(t))
        .collect();
    let start = Instant::now();
    let crds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/crds");
    let paths: Vec<PathBuf> = CRD_FILES
        .iter()
        .map(|f| PathBuf::from(SCHEMAS).join(f))
        .chain(DOC_WRITTEN_CRDS.iter().map(|f| crds.join(f)))
        .collect();
    let v = &Validator::from_crd_files(&paths).unwrap();
    eprintln!(
        "built the validator (6 CRDs + 4 built-in kinds) in {:?}",
        start.elapsed()
    );
    let start = Instant::now();
    for o in &objects {
        assert!(v.validate(o).is_empty());
    }
    let took = start.elapsed();
    eprintln!("validated 100 objects in {took:?}");
    // Generous for an unoptimised debug build on a shared 2-core machine.
    assert!(
        took.as_millis() < 2000,
        "validating 100 objects took {took:?}"
    );
}

// EKS Auto Mode NodeClass: the schema gpuplan writes from the EKS User Guide ("Create a Node Class for Amazon EKS",
// Node Class Specification; "Control deployment of workloads into Capacity Reservations"), src/crds/eks/.

fn auto_mode_nodeclass() -> Value {
    yaml(include_str!("validate/nodeclass.yaml"))
}

#[test]
fn the_guides_auto_mode_nodeclass_example_is_valid() {
    assert_valid(&auto_mode_nodeclass());
}

#[test]
fn auto_mode_nodeclass_iops_above_the_guides_16000_is_rejected() {
    let mut nc = auto_mode_nodeclass();
    nc["spec"]["ephemeralStorage"]["iops"] = json!(20000);
    let v = validator().validate(&nc);
    assert!(v.iter().any(|v| v.pointer == "/spec/ephemeralStorage/iops" && v.message.contains("16000")), "{}", show(&v));
}

#[test]
fn auto_mode_nodeclass_size_beyond_58ti_is_rejected_by_its_cel_rule() {
    let mut nc = auto_mode_nodeclass();
    nc["spec"]["ephemeralStorage"]["size"] = json!("59Ti");
    let v = validator().validate(&nc);
    assert!(v.iter().any(|v| v.message.contains("1-58Ti")), "{}", show(&v));
}

#[test]
fn auto_mode_nodeclass_with_a_reserved_tag_is_rejected() {
    let mut nc = auto_mode_nodeclass();
    nc["spec"]["tags"]["kubernetes.io/cluster/demo"] = json!("owned");
    let v = validator().validate(&nc);
    assert!(v.iter().any(|v| v.pointer == "/spec/tags" && v.message.contains("reserved")), "{}", show(&v));
}

#[test]
fn auto_mode_nodeclass_needs_exactly_one_of_role_and_instance_profile() {
    let mut nc = auto_mode_nodeclass();
    nc["spec"]["instanceProfile"] = json!("MyProfile");
    let v = validator().validate(&nc);
    assert!(v.iter().any(|v| v.message.contains("exactly one of role")), "{}", show(&v));
}

#[test]
fn auto_mode_nodeclass_field_the_guide_does_not_describe_is_rejected() {
    let mut nc = auto_mode_nodeclass();
    nc["spec"]["amiSelectorTerms"] = json!([{ "alias": "al2023@latest" }]);
    assert!(!validator().validate(&nc).is_empty(), "an Auto Mode NodeClass has no AMI field");
}
