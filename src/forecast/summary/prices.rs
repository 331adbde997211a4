//! What a node costs per hour: the price `simulate` bills its launch at.

use crate::catalog::{CapacityType, Catalog};
use crate::compile::Compilation;
use crate::forecast::timeline::NodeLife;
use crate::simulate::Prepared;

/// A node's price per hour and whether it is an estimate (a spot price the catalog estimated, not observed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodePrice {
    pub usd_per_hour: f64,
    pub estimate: bool,
}

/// The cluster's NodePools resolved against its region's catalog, as `simulate` resolves them.
pub struct Prices<'c> {
    catalog: Option<&'c Catalog>,
    prepared: Option<Prepared<'c>>,
}

impl<'c> Prices<'c> {
    /// The prices of `cluster`'s NodePools in `c` (none when `c` has no such cluster: every node is then unpriced).
    pub fn new(c: &'c Compilation, cluster: &str) -> Prices<'c> {
        let Some(plan) = c.plan.clusters.iter().find(|p| p.name == cluster) else { return Prices { catalog: None, prepared: None } };
        let Some((catalog, labels)) = c.simulation_catalog(&plan.region) else { return Prices { catalog: None, prepared: None } };
        let manifests = crate::check::simulated::cluster_manifests(&c.manifests_of(cluster), &plan.node_daemons);
        let prepared = crate::simulate::prepare(catalog, labels, &manifests, &manifests.node_pools);
        Prices { catalog: Some(catalog), prepared: Some(prepared) }
    }

    /// The prices of a cluster given as objects (NodePools and node classes), as [`Prices::new`] resolves a compiled
    /// one's (with no EKS node DaemonSets, as `engine::replay_objects` replays such a cluster).
    pub fn of_objects(catalog: &'c Catalog, labels: &crate::simulate::instances::TypeLabels, objects: &[serde_json::Value]) -> Prices<'c> {
        let manifests = crate::simulate::manifests::of_objects(objects).unwrap_or_default();
        let prepared = crate::simulate::prepare(catalog, labels, &manifests, &manifests.node_pools);
        Prices { catalog: Some(catalog), prepared: Some(prepared) }
    }

    /// The node's offering's billed price (NodeOverlays applied, a reservation at the on-demand price); for an
    /// offering its NodePool does not list (a timeline from another simulator), the catalog's price of that
    /// type, zone and capacity type as `simulate::instances::offerings` reads it. Zero for a type the catalog lacks.
    pub fn of(&self, node: &NodeLife) -> NodePrice {
        if let Some(o) = self.prepared.as_ref().and_then(|p| p.offering(&node.nodepool, &node.instance_type, &node.zone, &node.capacity_type)) {
            return NodePrice { usd_per_hour: o.billed_usd_per_hour, estimate: o.estimate };
        }
        let Some((catalog, it)) = self.catalog.and_then(|c| Some((c, c.get(&node.instance_type)?))) else { return NodePrice { usd_per_hour: 0.0, estimate: false } };
        let price = match node.capacity_type.as_str() {
            s if s == CapacityType::Spot.as_str() => it.spot.get(&node.zone).or(it.on_demand.as_ref()),
            _ => it.on_demand.as_ref(),
        };
        price.map_or(NodePrice { usd_per_hour: 0.0, estimate: false }, |p| NodePrice { usd_per_hour: p.usd_per_hour, estimate: catalog.is_estimate(p) })
    }
}
