//! The add-on charts' own files against what gpuplan encodes of them (`src/charts/`),
//! read from the Go module cache at the version conformance/consumers/go.mod pins. Only charts the module proxy serves
//! are checked here: aws/eks-charts (the EFA device plugin). The NVIDIA GPU Operator and aws-neuron/neuron-helm-charts
//! are refused by the proxy (403), so their values stay cited by file and version in the source.

use std::path::PathBuf;
use std::process::Command;

use gpuplan::charts::instance_types::TypeList;
use gpuplan::charts::add_ons::ADD_ONS;
use serde_json::Value;

use super::go;

/// The directory of a module pinned by conformance/consumers/go.mod in the module cache, or None (with the reason
/// printed) without Go.
fn module_dir(module: &str) -> Option<PathBuf> {
    if Command::new("go").arg("version").output().is_err() {
        assert!(
            !go::required(),
            "GPUPLAN_CONFORMANCE_REQUIRED=1 but `go` is not on PATH"
        );
        eprintln!(
            "skipped: no Go toolchain on PATH, so {module} cannot be read from the module cache"
        );
        return None;
    }
    let out = Command::new("go")
        .current_dir(go::root().join("conformance/consumers"))
        .args(["mod", "download", "-json", module])
        .output()
        .expect("run go mod download");
    assert!(
        out.status.success(),
        "go mod download {module}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(PathBuf::from(
        info["Dir"].as_str().expect("the module's directory"),
    ))
}

fn efa_chart_values() -> Option<Value> {
    let dir = module_dir("github.com/aws/eks-charts")?;
    let text =
        std::fs::read_to_string(dir.join("stable/aws-efa-k8s-device-plugin/values.yaml")).unwrap();
    Some(serde_saphyr::from_str(&text).unwrap())
}

#[test]
fn the_efa_device_plugins_instance_types_are_the_charts() {
    let Some(values) = efa_chart_values() else {
        return;
    };
    let chart: Vec<&str> = values["supportedInstanceLabels"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut ours = TypeList::EfaSupported.chart_default();
    let mut theirs = chart.clone();
    ours.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(
        ours, theirs,
        "src/charts/efa-device-plugin-types.txt differs from the pinned chart's supportedInstanceLabels.values"
    );
    assert_eq!(
        values["supportedInstanceLabels"]["keys"],
        serde_json::json!(["node.kubernetes.io/instance-type"]),
        "the affinity is on the instance type"
    );
}

#[test]
fn the_efa_device_plugins_requests_and_tolerations_are_the_charts() {
    let Some(values) = efa_chart_values() else {
        return;
    };
    let efa = ADD_ONS
        .iter()
        .find(|a| a.daemonset == "aws-efa-k8s-device-plugin")
        .unwrap();
    let requests: Vec<(String, String)> = values["resources"]["requests"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let ours: Vec<(String, String)> = efa
        .requests
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(ours, requests);
    assert_eq!(values["tolerations"], serde_json::json!([]));
    assert!(efa.defaults.is_empty());
    assert_eq!(
        values["nodeSelector"],
        serde_json::json!({}),
        "no nodeSelector beside the affinity"
    );
}
