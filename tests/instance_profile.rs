//! `instance-profile "<name>"`: a cluster whose nodes launch with a pre-provisioned IAM instance profile (EC2NodeClass
//! `spec.instanceProfile`) rather than a role Karpenter makes an instance profile for (`spec.role`). The CRD takes
//! exactly one of the two (aws/karpenter-provider-aws v1.14.1 `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`,
//! spec rule "must specify exactly one of ['role', 'instanceProfile']"; docs `website/content/en/v1.14/concepts/
//! nodeclasses.md`, "spec.instanceProfile": Karpenter then manages no instance profile). Compile, errors and adopt.

mod common;
use common::{compile_one, gpuplan, repo, text};

use gpuplan::compile::CompileError;
use gpuplan::diagnostic::ProfileDiagnostic;
use serde_json::Value;

const CLUSTER: &str = "cluster \"ml\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\"\n    ami \"al2023@v20251023\"\n";
const L4: &str = "pool \"a\" preset=\"general\" {\n    gpu { name \"L4\"; per-node max=1; }\n    max-accelerators 8\n}\n";

/// A profile `p` in cluster `ml` with `cluster_extra` inside the cluster block and one L4 pool.
fn profile(cluster_extra: &str) -> String {
    format!("profile \"p\" priority=1\n{CLUSTER}{cluster_extra}}}\n{L4}")
}

fn errors(c: &common::Compiled) -> &[ProfileDiagnostic] {
    match &c.result {
        Err(CompileError::Profiles { diagnostics }) => diagnostics,
        Err(e) => panic!("not a profile error: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

fn class(c: &common::Compiled, name: &str) -> Value {
    c.ok().manifests().into_iter().find(|m| m.kind() == "EC2NodeClass" && m.object["metadata"]["name"] == name).unwrap_or_else(|| panic!("no EC2NodeClass {name}")).object
}

#[test]
fn an_instance_profile_line_renders_as_the_classs_instance_profile_and_no_role() {
    let c = compile_one(profile("    instance-profile \"KarpenterNodeInstanceProfile-ml\"\n"));
    let spec = &class(&c, "p")["spec"];
    assert_eq!(spec["instanceProfile"], "KarpenterNodeInstanceProfile-ml", "{spec:#}");
    assert!(spec.get("role").is_none(), "the CRD takes exactly one of role and instanceProfile: {spec:#}");
}

#[test]
fn without_an_instance_profile_line_the_class_keeps_the_default_role() {
    let c = compile_one(profile(""));
    let spec = &class(&c, "p")["spec"];
    assert_eq!((spec["role"].as_str(), spec.get("instanceProfile")), (Some("KarpenterNodeRole-ml"), None), "{spec:#}");
}

#[test]
fn node_role_and_instance_profile_together_are_e0316_at_the_instance_profile_line_naming_the_node_role_line() {
    let c = compile_one(profile("    node-role \"KarpenterNodeRole-ml\"\n    instance-profile \"KarpenterNodeInstanceProfile-ml\"\n"));
    let d = errors(&c);
    let e = d.iter().find(|d| d.code == "E0316").unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(e.location, c.loc("p.kdl", "instance-profile"), "{e:?}");
    assert!(e.message.contains(&c.loc("p.kdl", "\"KarpenterNodeRole-ml\"")) && e.message.contains("`node-role`"), "{e:?}");
    assert_eq!(d.len(), 1, "{d:?}");
}

#[test]
fn instance_profile_in_an_auto_mode_cluster_is_e0317_at_the_line() {
    let text = format!("profile \"p\" priority=1\ncluster \"ml\" {{\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    auto-mode #true\n    instance-profile \"AutoNodeProfile\"\n}}\n{L4}");
    let c = compile_one(text);
    let d = errors(&c);
    let e = d.iter().find(|d| d.code == "E0317").unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(e.location, c.loc("p.kdl", "instance-profile"), "{e:?}");
    assert!(e.help.as_deref().is_some_and(|h| h.contains("node-role")), "{e:?}");
}

/// IAM names an instance profile with 1–128 of `[\w+=,.@-]` (IAM API reference, CreateInstanceProfile): an ARN is
/// refused at the value, not when the first node fails to launch. The CRD's own rule: not empty.
#[test]
fn an_instance_profile_iam_would_refuse_is_e0191_at_the_value() {
    for bad in ["arn:aws:iam::123456789012:instance-profile/x", ""] {
        let c = compile_one(profile(&format!("    instance-profile \"{bad}\"\n")));
        let d = errors(&c);
        let e = d.iter().find(|d| d.code == "E0191").unwrap_or_else(|| panic!("{bad}: {d:?}"));
        assert!(e.message.contains("instance profile"), "{e:?}");
        assert_eq!(e.location, c.loc("p.kdl", &format!("\"{bad}\"")), "{e:?}");
    }
}

/// `spec.instanceProfile` is the setting's: a raw fragment that sets it (which would also need `spec.role` deleted)
/// is refused, naming the line to write instead.
#[test]
fn a_raw_fragment_setting_the_instance_profile_is_e0312_naming_the_setting() {
    let c = compile_one(profile("    raw \"EC2NodeClass\" \"spec: {instanceProfile: x}\"\n"));
    let d = errors(&c);
    let e = d.iter().find(|d| d.code == "E0312").unwrap_or_else(|| panic!("{d:?}"));
    assert!(e.message.contains("`spec.instanceProfile`") && e.help.as_deref().is_some_and(|h| h.contains("`instance-profile`")), "{e:?}");
}

/// A hand-written class with `instanceProfile` and no `role` (tests/fixtures/adopt-instance-profile) adopts as an
/// `instance-profile` line and no `node-role` (before: a default `node-role` plus a raw instanceProfile, which compile
/// refused with E0315), compiles back to the same identity, and the verification sees no placement change.
#[test]
fn a_class_with_an_instance_profile_adopts_compiles_and_verifies_with_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs = repo().join("catalogs");
    let catalogs = catalogs.to_str().unwrap();
    let input = repo().join("tests/fixtures/adopt-instance-profile");
    let out = gpuplan(dir.path(), &["adopt", input.to_str().unwrap(), "--into", "profiles", "--catalogs", catalogs, "--format", "json", "--accept-changes"]);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &report["verification"];
    assert_eq!((v["changed"].as_u64(), v["unexplained"].as_u64()), (Some(0), Some(0)), "{v:#}");
    let adopted = std::fs::read_to_string(dir.path().join("profiles/private.kdl")).unwrap();
    assert!(adopted.contains("    instance-profile \"KarpenterNodeInstanceProfile-ml\" // ") && adopted.contains("EC2NodeClass/private spec.instanceProfile"), "{adopted}");
    assert!(!adopted.contains("node-role") && !adopted.contains("instanceProfile:"), "{adopted}");
    let compiled = gpuplan(dir.path(), &["compile", "--catalogs", catalogs]);
    assert!(compiled.status.success(), "{}", text(&compiled));
    let class: Value = serde_saphyr::from_str(&std::fs::read_to_string(dir.path().join("out/ml/ec2nodeclass-private.yaml")).unwrap()).unwrap();
    assert_eq!(class["spec"]["instanceProfile"], "KarpenterNodeInstanceProfile-ml", "{class:#}");
    assert!(class["spec"].get("role").is_none(), "{class:#}");
}

/// gpuplan's own output with an instance profile adopts back into the same line, and compiles to the same files.
#[test]
fn a_profile_with_an_instance_profile_round_trips_through_adopt_byte_for_byte() {
    let adopted = common::assert_round_trip(&profile("    instance-profile \"KarpenterNodeInstanceProfile-ml\"\n"));
    assert!(adopted.contains("instance-profile \"KarpenterNodeInstanceProfile-ml\"") && !adopted.contains("node-role"), "{adopted}");
}
