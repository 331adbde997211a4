//! What scales a workload, read from the compiled objects themselves (the HorizontalPodAutoscaler or KEDA
//! ScaledObject in the `Compilation`, as the API server would hold them), with autoscaling/v2's defaults where a
//! field is absent (k8s.io/kubernetes `pkg/apis/autoscaling/v2/defaults.go`: `GenerateHPAScaleUpRules`,
//! `GenerateHPAScaleDownRules`).

use serde_json::Value;

use crate::compile::Compilation;
use crate::solve::ops::workload::WorkloadPlan;

#[derive(Debug, Clone, PartialEq)]
pub enum Scaler {
    /// No autoscaler: the replicas the demand gives, or the workload's own.
    Fixed,
    Hpa(Hpa),
    Keda(Keda),
}

/// An HPA's spec as the controller reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hpa {
    pub min: u32,
    pub max: u32,
    /// Per metric (in `spec.metrics` order), the target average value in milli-units (`AverageValue`, or for a
    /// `Utilization` target its percentage × 1000).
    pub targets_milli: Vec<i64>,
    pub behavior: Behavior,
}

/// A ScaledObject: KEDA's own activation and cooldown around the HPA it creates for 1..max.
#[derive(Debug, Clone, PartialEq)]
pub struct Keda {
    pub min: u32,
    pub max: u32,
    pub polling_seconds: u64,
    pub cooldown_seconds: u64,
    pub triggers: Vec<Trigger>,
    pub behavior: Behavior,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trigger {
    pub name: String,
    /// `metadata.threshold`: the HPA's AverageValue target for this trigger's External metric.
    pub threshold: f64,
    /// `metadata.activationThreshold` (default 0): the scaler is active above it.
    pub activation: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Behavior {
    pub scale_up: Rules,
    pub scale_down: Rules,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub stabilization_seconds: u32,
    pub select: Select,
    pub policies: Vec<Policy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    Max,
    Min,
    Disabled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// `Pods` (true) or `Percent`.
    pub pods: bool,
    pub value: i32,
    pub period_seconds: u32,
}

/// KEDA's defaults (`apis/keda/v1alpha1/scaledobject_types.go`): pollingInterval 30 s, cooldownPeriod 300 s.
pub const KEDA_DEFAULT_POLLING_SECONDS: u64 = 30;
pub const KEDA_DEFAULT_COOLDOWN_SECONDS: u64 = 300;

impl Behavior {
    /// autoscaling/v2's defaults: scale up by max(100%, 4 pods) per 15 s with no window, scale down by 100% per
    /// 15 s after the controller's 300 s window (`--horizontal-pod-autoscaler-downscale-stabilization`).
    pub fn defaults() -> Behavior {
        Behavior {
            scale_up: Rules { stabilization_seconds: 0, select: Select::Max, policies: vec![Policy { pods: false, value: 100, period_seconds: 15 }, Policy { pods: true, value: 4, period_seconds: 15 }] },
            scale_down: Rules { stabilization_seconds: 300, select: Select::Max, policies: vec![Policy { pods: false, value: 100, period_seconds: 15 }] },
        }
    }

    fn read(v: &Value) -> Behavior {
        let d = Behavior::defaults();
        Behavior { scale_up: Rules::read(&v["scaleUp"], d.scale_up), scale_down: Rules::read(&v["scaleDown"], d.scale_down) }
    }
}

impl Rules {
    fn read(v: &Value, default: Rules) -> Rules {
        if v.is_null() {
            return default;
        }
        let select = match v["selectPolicy"].as_str() {
            Some("Min") => Select::Min,
            Some("Disabled") => Select::Disabled,
            _ => Select::Max,
        };
        let policies = v["policies"].as_array().map_or(default.policies, |ps| {
            ps.iter().map(|p| Policy { pods: p["type"] == "Pods", value: p["value"].as_i64().unwrap_or(0) as i32, period_seconds: p["periodSeconds"].as_u64().unwrap_or(15) as u32 }).collect()
        });
        let stabilization_seconds = v["stabilizationWindowSeconds"].as_u64().map_or(default.stabilization_seconds, |s| s as u32);
        Rules { stabilization_seconds, select, policies }
    }
}

impl Scaler {
    /// The workload's autoscaler, from the cluster's compiled HorizontalPodAutoscaler or ScaledObject.
    pub fn of(c: &Compilation, cluster: &str, w: &WorkloadPlan) -> Scaler {
        let object = |kind: &str| {
            c.generated
                .iter()
                .filter(|g| g.kind == kind && g.namespace.as_deref() == Some(w.namespace.as_str()) && g.path.starts_with(cluster))
                .map(|g| g.manifest().object)
                .find(|o| o["metadata"]["name"] == w.name.as_str())
        };
        if let Some(so) = object("ScaledObject") {
            return Scaler::Keda(keda(&so["spec"]));
        }
        match object("HorizontalPodAutoscaler") {
            Some(hpa) => Scaler::Hpa(self::hpa(&hpa["spec"])),
            None => Scaler::Fixed,
        }
    }
}

fn hpa(spec: &Value) -> Hpa {
    let targets_milli = spec["metrics"].as_array().into_iter().flatten().map(|m| target_milli(m)).collect();
    let behavior = if spec["behavior"].is_null() { Behavior::defaults() } else { Behavior::read(&spec["behavior"]) };
    Hpa { min: spec["minReplicas"].as_u64().unwrap_or(1) as u32, max: spec["maxReplicas"].as_u64().unwrap_or(1) as u32, targets_milli, behavior }
}

/// A metric's target in milli-units, as the replica calculator compares it (`target.AverageValue.MilliValue()`).
fn target_milli(metric: &Value) -> i64 {
    let kind = metric["type"].as_str().unwrap_or("Pods");
    let source = &metric[&kind.chars().next().map_or(String::new(), |c| c.to_lowercase().collect::<String>() + &kind[1..])];
    let target = &source["target"];
    if let Some(u) = target["averageUtilization"].as_u64() {
        return u as i64 * 1000;
    }
    let quantity = target["averageValue"].as_str().map(str::to_string).or_else(|| target["averageValue"].as_f64().map(|f| f.to_string())).unwrap_or_default();
    crate::simulate::yaml::milli(&quantity).map_or(1000, |m| m as i64)
}

fn keda(spec: &Value) -> Keda {
    let number = |v: &Value| v.as_str().and_then(|s| s.parse::<f64>().ok()).or_else(|| v.as_f64());
    let triggers = spec["triggers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| Trigger {
            name: t["name"].as_str().map_or_else(|| format!("trigger-{i}"), str::to_string),
            threshold: number(&t["metadata"]["threshold"]).unwrap_or(1.0),
            activation: number(&t["metadata"]["activationThreshold"]).unwrap_or(0.0),
        })
        .collect();
    let behavior = &spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"];
    Keda {
        min: spec["minReplicaCount"].as_u64().unwrap_or(0) as u32,
        max: spec["maxReplicaCount"].as_u64().unwrap_or(100) as u32,
        polling_seconds: spec["pollingInterval"].as_u64().unwrap_or(KEDA_DEFAULT_POLLING_SECONDS),
        cooldown_seconds: spec["cooldownPeriod"].as_u64().unwrap_or(KEDA_DEFAULT_COOLDOWN_SECONDS),
        triggers,
        behavior: if behavior.is_null() { Behavior::defaults() } else { Behavior::read(behavior) },
    }
}
