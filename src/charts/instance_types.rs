//! The instance types the device plugins' charts admit: each chart's DaemonSet has a required node affinity on
//! `node.kubernetes.io/instance-type`, whose list the chart's values set (and gpuplan's values may override).

use serde_json::Value;

/// A chart's list of the instance types its device plugin runs on (a required node affinity on
/// `node.kubernetes.io/instance-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeList {
    /// aws-neuron/neuron-helm-charts `charts/neuron-helm-chart/values.yaml` `neuronInstances` (chart 1.0.0, commit
    /// 8172e5e; the Go module proxy refuses this repository, so it is not checked against a download).
    NeuronInstances,
    /// aws/eks-charts `stable/aws-efa-k8s-device-plugin/values.yaml` `supportedInstanceLabels.values`.
    EfaSupported,
}

pub(crate) const NEURON_INSTANCES: &[&str] = &[
    "trn1.2xlarge",
    "trn1.32xlarge",
    "trn1n.32xlarge",
    "inf1.xlarge",
    "inf1.2xlarge",
    "inf1.6xlarge",
    "inf1.24xlarge",
    "inf2.xlarge",
    "inf2.8xlarge",
    "inf2.24xlarge",
    "inf2.48xlarge",
    "inf2e.32xlarge",
];

impl TypeList {
    /// Where the chart's values override the list.
    pub fn values_path(self) -> &'static [&'static str] {
        match self {
            TypeList::NeuronInstances => &["neuronInstances"],
            TypeList::EfaSupported => &["supportedInstanceLabels", "values"],
        }
    }

    /// The chart's default list.
    pub fn chart_default(self) -> Vec<&'static str> {
        match self {
            TypeList::NeuronInstances => NEURON_INSTANCES.to_vec(),
            TypeList::EfaSupported => include_str!("efa-device-plugin-types.txt")
                .lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .collect(),
        }
    }

    /// The list in effect: the rendered values' (`values`), else the chart's.
    pub fn effective(self, values: Option<&Value>) -> Vec<String> {
        let rendered = values
            .and_then(|v| self.values_path().iter().try_fold(v, |v, k| v.get(*k)))
            .and_then(Value::as_array);
        match rendered {
            Some(list) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            None => self
                .chart_default()
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }
}
