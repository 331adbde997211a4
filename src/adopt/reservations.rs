//! Reserved pools: the `reserved` block of a NodePool whose capacity type is `reserved` (on-demand capacity
//! reservations and Capacity Blocks for ML), from its EC2NodeClass's `capacityReservationSelectorTerms`, the NodePool's
//! requirements and limits, and `--reservation` where neither says what the reservation holds.

use serde_json::Value;

use super::consumed::Consumed;
use super::nodepool::limit;
use super::read::Doc;
use super::ReservationArg;
use crate::catalog::Catalog;
use super::model::{q, Line, Warning};
use super::requirements::Requirement;

/// `reserved { id …; instance-type …; instances N }`: ids and tags from the EC2NodeClass; the instance type from
/// `--reservation …=TYPExCOUNT`, else the NodePool's single instance type (a NodePool selecting the reservation by
/// family, as ODCR and Capacity Block examples do, needs the flag); the count from the flag, else the NodePool's limit
/// divided by what one instance holds (a reservation's capacity is what gpuplan sizes the limit to). The catalog holds
/// no reservations, so when neither says, the second value is what to add, named (adopt stops there rather than let
/// compile fail with E0132).
pub(super) fn reserved_block(mut lines: Vec<Line>, reqs: &[Requirement], resource: &str, doc: &Doc, catalog: &Catalog, arg: Option<&ReservationArg>) -> (Vec<Line>, Option<String>) {
    let np = &doc.object;
    let types: Vec<&String> = reqs.iter().filter(|r| r.key == "node.kubernetes.io/instance-type" && r.operator == "In").flat_map(|r| &r.values).collect();
    let flag = format!("--reservation {}", doc.name);
    let only = match (arg.and_then(|a| a.instance_type.as_ref()), types.as_slice()) {
        (Some(t), _) => {
            lines.push(Line::new(format!("instance-type {}", q(t)), arg.map_or_else(String::new, |a| a.given.clone())));
            t.clone()
        }
        (None, [only]) => {
            lines.push(Line::new(format!("instance-type {}", q(only)), "requirements node.kubernetes.io/instance-type"));
            (*only).clone()
        }
        (None, _) => {
            let found = if types.is_empty() { "none".to_string() } else { types.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ") };
            return (lines, Some(format!("pass {flag}=TYPExCOUNT (or ID=TYPExCOUNT by reservation id: the type and how many it holds; the NodePool's instance types: {found})")));
        }
    };
    if let Some(arg) = arg {
        lines.push(Line::new(format!("instances {}", arg.instances), arg.given.clone()));
        return (lines, None);
    }
    let t = catalog.get(&only);
    let accelerators = t.map_or(0, |t| if resource == "aws.amazon.com/neuron" { t.neuron.as_ref().map_or(0, |n| n.count) } else { t.gpus.iter().map(|g| g.count).sum() });
    let (limited, per_node) = if accelerators > 0 { (resource, accelerators) } else { ("cpu", t.map_or(0, |t| t.vcpu)) };
    match limit(np, limited).and_then(|l| crate::simulate::yaml::milli(&l)).and_then(|m| u32::try_from(m / 1000).ok()) {
        Some(l) if per_node > 0 => {
            lines.push(Line::new(format!("instances {}", l / per_node), format!("spec.limits.{limited} ÷ {per_node} per {only}")));
            (lines, None)
        }
        _ if per_node == 0 => (lines, Some(format!("pass {flag}=INSTANCES ({only} is not in the catalog, so the count cannot be derived from a limit)"))),
        _ => (lines, Some(format!("pass {flag}=INSTANCES (how many {only} it holds), or add spec.limits.{limited} = {per_node} × those instances ({only} has {per_node} {})", if limited == "cpu" { "vCPUs" } else { limited }))),
    }
}

/// `capacity-block` for a NodePool that asks for Capacity Blocks (`karpenter.k8s.aws/capacity-reservation-type In
/// [capacity-block]`, the label Karpenter v1.3+ puts on reserved offerings): priced per block, not by the on-demand
/// table. The YAML has no price or dates, so a warning asks for them; until then the worst case says it leaves the
/// block out.
pub(super) fn capacity_block(reqs: &[Requirement], doc: &Doc, warnings: &mut Vec<Warning>) -> Option<Line> {
    let i = reqs.iter().position(|r| r.key == "karpenter.k8s.aws/capacity-reservation-type" && r.operator == "In" && r.values.iter().all(|v| v == "capacity-block"))?;
    warnings.push(Warning {
        file: doc.file.clone(),
        object: format!("NodePool/{}", doc.name),
        field: format!("spec.template.spec.requirements[{i}]"),
        message: "a Capacity Block is paid up front, not at on-demand prices, and the YAML does not say its price or dates: add `price-usd=… start=… end=…` to the profile's `capacity-block` line (EC2 describe-capacity-block-offerings: UpfrontFee, StartDate, EndDate); until then the worst case leaves the block out".into(),
    });
    Some(Line::new("capacity-block", format!("{} NodePool/{} spec.template.spec.requirements[{i}] (capacity-reservation-type capacity-block)", doc.file, doc.name)))
}

/// The `reserved` block's `id` and `tag` lines, from the class's capacityReservationSelectorTerms.
pub(super) fn reservation_terms(c: &Value, at: &str, used: &mut Consumed) -> Vec<Line> {
    let mut reservation = Vec::new();
    for (i, term) in c["spec"]["capacityReservationSelectorTerms"].as_array().into_iter().flatten().enumerate() {
        let field = format!("spec.capacityReservationSelectorTerms[{i}]");
        if let Some(id) = term["id"].as_str() {
            reservation.push(Line::new(format!("id {}", q(id)), format!("{at} {field}.id")));
            used.take(format!("{field}.id"));
        }
        for (k, v) in term["tags"].as_object().into_iter().flatten() {
            reservation.push(Line::new(format!("tag {} {}", q(k), q(v.as_str().unwrap_or_default())), format!("{at} {field}.tags")));
            used.take(format!("{field}.tags.{k}"));
        }
    }
    reservation
}

