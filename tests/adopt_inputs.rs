//! `gpuplan adopt` on the texts users paste, one minimal input per kind (issue 31, items 7, 9 and 10): placeholders
//! of every templating tool (envsubst, Terraform, Helm, `<<NAME>>`), Kubernetes quantities in every form the API
//! server accepts (k8s.io/apimachinery `pkg/api/resource/quantity.go`), the v1alpha5 `limits.resources`, and keys
//! written twice. Each failing case also proves that a failed adopt writes nothing into `--into`.

use std::path::Path;
use std::process::Output;

mod common;
use common::{gpuplan, repo, text};

/// An EC2NodeClass named `default` with the given role and discovery tag (placeholders or values).
fn class(role: &str, discovery: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  role: {role}\n  amiSelectorTerms:\n    - alias: al2023@latest\n  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: {discovery}\n  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: {discovery}\n"
    )
}

/// A CPU NodePool (`c`/`m` types in two zones of us-east-1) with `limits` as given (indented under `spec.limits`).
fn cpu_pool(limits: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: cpu\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements:\n        - key: karpenter.k8s.aws/instance-category\n          operator: In\n          values: [\"c\", \"m\"]\n        - key: topology.kubernetes.io/zone\n          operator: In\n          values: [\"us-east-1a\", \"us-east-1b\"]\n  limits:\n{limits}"
    )
}

/// A g5 NodePool, tainted for GPUs, with `limits` as given.
fn gpu_pool(limits: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements:\n        - key: karpenter.k8s.aws/instance-family\n          operator: In\n          values: [\"g5\"]\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"on-demand\"]\n        - key: topology.kubernetes.io/zone\n          operator: In\n          values: [\"us-east-1a\", \"us-east-1b\"]\n      taints:\n        - key: nvidia.com/gpu\n          effect: NoSchedule\n  limits:\n{limits}"
    )
}

/// `docs` joined as one file `input.yaml` in a fresh tempdir; `gpuplan adopt input.yaml --into profiles <extra>`.
fn adopt(docs: &[&str], extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.yaml"), docs.join("---\n")).unwrap();
    let catalogs = repo().join("catalogs");
    let mut args = vec!["adopt", "input.yaml", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = gpuplan(dir.path(), &args);
    (dir, out)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Adopt failed as bad input (exit 2) and wrote nothing: no `profiles` directory.
fn assert_refused(dir: &Path, out: &Output) {
    assert_eq!(out.status.code(), Some(2), "{}", text(out));
    assert!(!dir.join("profiles").exists(), "a failed adopt wrote into --into:\n{}", text(out));
}

/// Adopt succeeded; the text of the one profile it wrote.
fn adopted(dir: &Path, out: &Output) -> String {
    assert!(out.status.success(), "{}", text(out));
    let files: Vec<_> = std::fs::read_dir(dir.join("profiles")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).unwrap()
}

/// `gpuplan compile` of the adopted profiles succeeds; the NodePool `name` it wrote, parsed.
fn compiled_node_pool(dir: &Path, name: &str) -> serde_json::Value {
    let catalogs = repo().join("catalogs");
    let out = gpuplan(dir, &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let path = dir.join("out/demo/nodepool-".to_string() + name + ".yaml");
    let yaml = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&yaml).unwrap()
}

mod placeholders {
    use super::*;

    #[test]
    fn terraform_interpolations_are_reported_where_they_are_and_nothing_is_written() {
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &class("${module.eks.node_iam_role_name}", "\"${module.eks.cluster_name}\"")], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(e.contains("2 placeholder(s) without a value"), "{e}");
        assert!(e.contains("  input.yaml:29:34: ${module.eks.cluster_name} (and 1 more place)\n"), "{e}");
        assert!(e.contains("  input.yaml:24:9: ${module.eks.node_iam_role_name}\n"), "{e}");
        assert!(e.contains("--set 'module.eks.cluster_name=…'"), "{e}");
    }

    #[test]
    fn set_fills_a_terraform_reference_by_its_expression() {
        let input = class("${module.eks.node_iam_role_name}", "\"${var.cluster_name}\"");
        let set = ["--set", "module.eks.node_iam_role_name=KarpenterNodeRole-demo", "--set", "var.cluster_name=demo"];
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &input], &set);
        let profile = adopted(dir.path(), &out);
        assert!(profile.contains("cluster \"demo\" {") && profile.contains("node-role \"KarpenterNodeRole-demo\""), "{profile}");
    }

    #[test]
    fn set_fills_a_terraform_function_call_by_its_expression() {
        let pool = cpu_pool("    cpu: 100\n").replace("[\"us-east-1a\", \"us-east-1b\"]", "[\"${element(var.azs, 0)}\", \"${join(\",\", [var.az_b])}\"]");
        let set = ["--set", "element(var.azs, 0)=us-east-1a", "--set", "join(\",\", [var.az_b])=us-east-1b"];
        let (dir, out) = adopt(&[&pool, &class("KarpenterNodeRole-demo", "demo")], &set);
        let profile = adopted(dir.path(), &out);
        assert!(profile.contains("zones \"us-east-1a\" \"us-east-1b\""), "{profile}");
    }

    #[test]
    fn an_unquoted_helm_value_is_reported_as_a_placeholder_not_as_a_yaml_error() {
        // `{{ .Values.clusterName }}` as a mapping value begins a YAML flow mapping: the text does not parse.
        let input = [cpu_pool("    cpu: 100\n"), class("{{ .Values.nodeRole }}", "{{ .Values.clusterName }}")];
        let (dir, out) = adopt(&[&input[0], &input[1]], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(!e.contains("invalid YAML"), "{e}");
        assert!(e.contains("  input.yaml:29:33: {{ .Values.clusterName }} (and 1 more place)\n") && e.contains("  input.yaml:24:9: {{ .Values.nodeRole }}"), "{e}");
        let set = ["--set", ".Values.clusterName=demo", "--set", "{{ .Values.nodeRole }}=KarpenterNodeRole-demo"];
        let (dir, out) = adopt(&[&input[0], &input[1]], &set);
        assert!(adopted(dir.path(), &out).contains("discovery-tag \"demo\""));
    }

    #[test]
    fn helm_include_and_release_name_are_filled_by_what_is_written() {
        let input = class("'{{ include \"karpenter.nodeRole\" . }}'", "'{{- .Release.Name -}}'");
        let set = ["--set", "include \"karpenter.nodeRole\" .=KarpenterNodeRole-demo", "--set", ".Release.Name=demo"];
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &input], &set);
        let profile = adopted(dir.path(), &out);
        assert!(profile.contains("node-role \"KarpenterNodeRole-demo\"") && profile.contains("cluster \"demo\""), "{profile}");
    }

    #[test]
    fn a_helm_control_structure_stops_adopt_asking_to_render_the_chart() {
        let chart = format!("{{{{- if .Values.gpu.enabled }}}}\n{}{{{{- end }}}}\n", cpu_pool("    cpu: 100\n"));
        let (dir, out) = adopt(&[&chart, &class("KarpenterNodeRole-demo", "demo")], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(e.contains("input.yaml:1:1: `{{- if .Values.gpu.enabled }}` is a Helm control structure") && e.contains("helm template"), "{e}");
    }

    #[test]
    fn a_template_in_a_kind_adopt_does_not_read_is_that_kinds_own() {
        // Prometheus's alert templates, not Helm's: the rule is skipped, as any kind adopt does not read.
        let rule = "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: r\nspec:\n  groups:\n    - name: g\n      rules:\n        - alert: A\n          expr: up == 0\n          annotations:\n            summary: '{{ if $labels.pool }}{{ $labels.pool }}{{ end }} ${NOT_OURS}'\n";
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &class("KarpenterNodeRole-demo", "demo"), rule], &[]);
        adopted(dir.path(), &out);
    }

    #[test]
    fn a_terraform_directive_stops_adopt_asking_to_render_the_template() {
        let pool = cpu_pool("    cpu: 100\n").replace("values: [\"c\", \"m\"]", "values: [%{ for c in var.categories }\"${c}\",%{ endfor }]");
        let (dir, out) = adopt(&[&pool, &class("KarpenterNodeRole-demo", "demo")], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(e.contains("input.yaml:12:20: `%{ for c in var.categories }` is a Terraform template directive") && e.contains("render the template first"), "{e}");
    }

    #[test]
    fn user_data_keeps_its_shell_variables_but_terraform_and_helm_there_are_placeholders() {
        let user_data = "  userData: |\n    #!/bin/bash\n    echo \"$HOME ${NODE_NAME}\" ${HOSTNAME:-x}\n    /etc/eks/bootstrap.sh ${var.cluster_name} --b64 {{ .Values.ca }} $${ESCAPED}\n";
        let input = class("KarpenterNodeRole-demo", "demo") + user_data;
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &input], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(e.contains("2 placeholder(s)") && e.contains("${var.cluster_name}") && e.contains("{{ .Values.ca }}"), "{e}");
        assert!(!e.contains("HOME") && !e.contains("NODE_NAME") && !e.contains("ESCAPED"), "{e}");
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &input], &["--set", "var.cluster_name=demo", "--set", ".Values.ca=Q0E=", "--set", "NODE_NAME=no"]);
        let profile = adopted(dir.path(), &out);
        // As written (the profile's KDL string escapes the quotes); `$${ESCAPED}` is Terraform's escape, left as text.
        assert!(profile.contains(r#"echo \"$HOME ${NODE_NAME}\" ${HOSTNAME:-x}\n/etc/eks/bootstrap.sh demo --b64 Q0E= $${ESCAPED}\n"#), "{profile}");
    }

    #[test]
    fn envsubst_and_angle_placeholders_are_filled_and_comments_need_no_value() {
        let input = class("KarpenterNodeRole-$CLUSTER", "\"<<CLUSTER>>\" # or ${SOMETHING_ELSE}");
        let (dir, out) = adopt(&[&format!("# replace ${{CLUSTER}} first\n{}", cpu_pool("    cpu: 100\n")), &input], &["--set", "CLUSTER=demo"]);
        let profile = adopted(dir.path(), &out);
        assert!(profile.contains("node-role \"KarpenterNodeRole-demo\"") && profile.contains("discovery-tag \"demo\""), "{profile}");
    }
}

mod quantities {
    use super::*;

    // k8s.io/apimachinery pkg/api/resource/quantity.go: each form reads as 1000.
    #[test]
    fn a_cpu_limit_in_every_form_adopts_as_the_same_whole_number_and_compiles_back_to_it() {
        for form in ["1k", "1000", "\"1000\"", "1e3", "1E3", "1000000m", "+1000", "1.0k", "0.001M", "1000000000u"] {
            let (dir, out) = adopt(&[&cpu_pool(&format!("    cpu: {form}\n")), &class("KarpenterNodeRole-demo", "demo")], &[]);
            let profile = adopted(dir.path(), &out);
            assert!(profile.contains("    max-cpu 1000 // input.yaml NodePool/cpu spec.limits.cpu\n"), "{form}: {profile}");
            assert_eq!(compiled_node_pool(dir.path(), "cpu")["spec"]["limits"]["cpu"], "1000", "{form}");
        }
    }

    #[test]
    fn a_gpu_limit_in_every_form_adopts_as_the_same_count() {
        for form in ["8", "8000m", "8e0", "0.008k", "\"8\""] {
            let (dir, out) = adopt(&[&gpu_pool(&format!("    nvidia.com/gpu: {form}\n")), &class("KarpenterNodeRole-demo", "demo")], &[]);
            let profile = adopted(dir.path(), &out);
            assert!(profile.contains("    max-accelerators 8 // input.yaml NodePool/gpu spec.limits.nvidia.com/gpu\n"), "{form}: {profile}");
            assert_eq!(compiled_node_pool(dir.path(), "gpu")["spec"]["limits"]["nvidia.com/gpu"], "8", "{form}");
        }
    }

    #[test]
    fn a_memory_limit_is_carried_as_written_and_compiled_back_to_the_same_quantity() {
        for (form, written) in [("1.5Ti", "1.5Ti"), ("500Gi", "500Gi"), ("2e12", "2000000000000"), ("100M", "100M")] {
            let (dir, out) = adopt(&[&cpu_pool(&format!("    cpu: 1k\n    memory: {form}\n")), &class("KarpenterNodeRole-demo", "demo")], &[]);
            let profile = adopted(dir.path(), &out);
            assert!(profile.contains(&format!("limits memory=\"{written}\"")), "{form}: {profile}");
            let compiled = compiled_node_pool(dir.path(), "cpu")["spec"]["limits"]["memory"].clone();
            let compiled = compiled.as_str().map_or_else(|| compiled.to_string(), str::to_string);
            assert_eq!(gpuplan::simulate::yaml::nano(&compiled), gpuplan::simulate::yaml::nano(form), "{form} → {compiled}");
        }
    }

    #[test]
    fn a_cpu_limit_that_is_not_whole_stops_adopt_at_its_line() {
        for (form, exact) in [("1500m", "1.5"), ("0.5", "0.5"), ("1.5", "1.5")] {
            let (dir, out) = adopt(&[&cpu_pool(&format!("    cpu: {form}\n")), &class("KarpenterNodeRole-demo", "demo")], &[]);
            assert_refused(dir.path(), &out);
            let e = stderr(&out);
            assert!(e.contains(&format!("input.yaml:17:5: spec.limits.cpu `{form}` is {exact} vCPUs, not a whole number")), "{e}");
        }
    }

    #[test]
    fn a_gpu_limit_that_is_no_quantity_is_refused_as_the_api_server_refuses_it() {
        let (dir, out) = adopt(&[&gpu_pool("    nvidia.com/gpu: 8 GPUs\n"), &class("KarpenterNodeRole-demo", "demo")], &[]);
        assert_refused(dir.path(), &out);
        assert!(stderr(&out).contains("input.yaml:23:5: spec.limits.nvidia.com/gpu `8 GPUs` is not a Kubernetes quantity"), "{}", text(&out));
    }
}

mod pasted {
    use super::*;

    #[test]
    fn v1alpha5_limits_resources_says_to_move_the_limit_up_one_level() {
        let (dir, out) = adopt(&[&gpu_pool("    resources:\n      nvidia.com/gpu: 8\n"), &class("KarpenterNodeRole-demo", "demo")], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(e.contains("input.yaml:23:5: spec.limits.resources is the v1alpha5 Provisioner's field; a NodePool's limits are spec.limits.<resource>"), "{e}");
        assert!(e.contains("move `nvidia.com/gpu: 8` up one level"), "{e}");
    }

    // k8s.io/apimachinery pkg/apis/meta/v1/types.go CreateOptions.FieldValidation: Strict refuses a duplicate field,
    // Warn and Ignore keep the last one.
    #[test]
    fn a_key_written_twice_names_both_lines_and_the_one_the_api_server_keeps() {
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n  limits:\n    cpu: 1k\n"), &class("KarpenterNodeRole-demo", "demo")], &[]);
        assert_refused(dir.path(), &out);
        let e = stderr(&out);
        assert!(e.contains("input.yaml:18: `limits` is written twice in one mapping (input.yaml:16 and input.yaml:18)"), "{e}");
        assert!(e.contains("--validate=strict") && e.contains("keeps only the last one (input.yaml:18)"), "{e}");
    }

    #[test]
    fn a_deployment_with_two_resources_among_the_inputs_is_named_too() {
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n        - name: t\n          resources:\n            requests: {cpu: 1}\n          resources:\n            limits: {nvidia.com/gpu: 1}\n";
        let (dir, out) = adopt(&[&cpu_pool("    cpu: 100\n"), &class("KarpenterNodeRole-demo", "demo"), deployment], &[]);
        assert_refused(dir.path(), &out);
        assert!(stderr(&out).contains("`resources` is written twice in one mapping (input.yaml:43 and input.yaml:45)"), "{}", text(&out));
    }
}
