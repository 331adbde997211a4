//! The cluster's rendered objects as the rules read them: indexed by kind and name, and a NodePool read defensively
//! (a `--templates` override may have changed anything).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalog::CapacityType;
use crate::render::Manifest;

/// A cluster's rendered objects by (kind, name), indexed once per lint run.
pub struct Rendered<'c> {
    index: BTreeMap<(&'c str, &'c str), &'c Value>,
}

impl<'c> Rendered<'c> {
    pub fn new(manifests: &'c [Manifest]) -> Rendered<'c> {
        let index = manifests.iter().filter_map(|m| Some(((m.kind(), m.object["metadata"]["name"].as_str()?), &m.object))).collect();
        Rendered { index }
    }

    /// The rendered object of a kind and name.
    pub fn get(&self, kind: &str, name: &str) -> Option<&'c Value> {
        self.index.get(&(kind, name)).copied()
    }

    /// Every rendered object of a kind, by name.
    pub fn all(&self, kind: &str) -> Vec<&'c Value> {
        self.index.range((kind, "")..).take_while(|((k, _), _)| *k == kind).map(|(_, v)| *v).collect()
    }

    /// The first rendered object of a kind.
    pub fn first(&self, kind: &str) -> Option<&'c Value> {
        self.index.range((kind, "")..).next().filter(|((k, _), _)| *k == kind).map(|(_, v)| *v)
    }
}

/// A rendered NodePool, read defensively: a template override may have changed anything.
#[derive(Clone, Copy)]
pub struct NodePool<'a>(pub &'a Value);

impl<'a> NodePool<'a> {
    pub fn spec(&self) -> &'a Value {
        &self.0["spec"]
    }

    pub fn name(&self) -> &'a str {
        self.0["metadata"]["name"].as_str().unwrap_or("")
    }

    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.0["metadata"]["annotations"][key].as_str()
    }

    pub fn weight(&self) -> u64 {
        self.spec()["weight"].as_u64().unwrap_or(0)
    }

    /// Values of an `In` requirement, if present.
    pub fn requirement(&self, key: &str) -> Option<Vec<&'a str>> {
        self.spec()["template"]["spec"]["requirements"]
            .as_array()?
            .iter()
            .find(|r| r["key"] == key && r["operator"] == "In")
            .map(|r| r["values"].as_array().map(|v| v.iter().filter_map(Value::as_str).collect()).unwrap_or_default())
    }

    pub fn instance_types(&self) -> Option<Vec<&'a str>> {
        self.requirement("node.kubernetes.io/instance-type")
    }

    pub fn capacity_types(&self) -> Vec<CapacityType> {
        self.requirement("karpenter.sh/capacity-type")
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| match c {
                "spot" => Some(CapacityType::Spot),
                "on-demand" => Some(CapacityType::OnDemand),
                "reserved" => Some(CapacityType::Reserved),
                _ => None,
            })
            .collect()
    }

    pub fn zones(&self) -> Vec<String> {
        self.requirement("topology.kubernetes.io/zone").unwrap_or_default().into_iter().map(String::from).collect()
    }

    pub fn limit_value(&self, resource: &str) -> Option<&'a Value> {
        self.spec()["limits"].get(resource)
    }

    /// The accelerator limit as a count, whether written as a string or (wrongly) a number.
    pub fn limit(&self, resource: &str) -> Option<u64> {
        match self.limit_value(resource)? {
            Value::String(s) => s.parse().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn taints(&self) -> Vec<(&'a str, &'a str)> {
        self.spec()["template"]["spec"]["taints"]
            .as_array()
            .map(|t| t.iter().map(|t| (t["key"].as_str().unwrap_or(""), t["effect"].as_str().unwrap_or(""))).collect())
            .unwrap_or_default()
    }

    pub fn budgets(&self) -> Vec<&'a Value> {
        self.spec()["disruption"]["budgets"].as_array().map(|b| b.iter().collect()).unwrap_or_default()
    }
}
