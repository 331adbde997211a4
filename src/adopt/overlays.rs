//! NodeOverlays (karpenter.sh/v1alpha1) as input: each becomes `overlay` blocks on the adopted pools it applies to.
//!
//! Karpenter applies an overlay to the types of every NodePool whose name and template labels are compatible with
//! the overlay's requirements (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeoverlay/controller.go`,
//! `getOverlaidOfferings`: the NodePool's `karpenter.sh/nodepool` and labels, then the type's labels). A profile's
//! `overlay` block is scoped to the NodePool it is written in, so an overlay that applies to several NodePools
//! becomes one block per NodePool: named as the original when it applies to one (or to tiers of one gpuplan pool, whose
//! tiers then repeat the same block: one NodeOverlay), `<name>-<nodepool>` otherwise (NodeOverlay names are
//! cluster-wide). The block carries every requirement but `karpenter.sh/nodepool` (gpuplan
//! writes that one from where the block is), so the types it selects within the pool are the same.
//!
//! Capacity on a time-sliced or MIG pool's GPU resource is dropped: the pool's `time-slicing`/`mig` compiles to
//! gpuplan's own overlay with that capacity (the blueprints' `gpu-slices-*` overlays), and an overlay left with
//! nothing to set is skipped with that reason. gpuplan's own sharing overlays (`<nodepool>-<n>gpu…`) are skipped by
//! `read` for the same reason.

use serde_json::Value;

use super::model::{q, AdoptedProfile, Line};
use super::read::Doc;

/// The overlays Karpenter marks in conflict (`ValidationSucceeded=False`) and applies nowhere: of two at one weight
/// that both set the price of one offering, or one capacity resource, of a type of some NodePool's NodeClass, the
/// later by name descending (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeoverlay/controller.go`
/// `validateAndUpdateInstanceTypeOverrides`; the check is simulate's, [`crate::simulate::overlays::accepted`]).
/// Adopting one would write a block the profile refuses (E0297) for a NodeOverlay that changes nothing: it is skipped.
/// None of them when the objects do not read as simulate's input (their own errors are reported elsewhere).
pub fn in_conflict(overlays: &[Doc], node_pools: &[Doc], node_classes: &[Doc], catalog: &crate::catalog::Catalog) -> Vec<String> {
    if overlays.len() < 2 {
        return Vec::new();
    }
    let docs: Vec<crate::simulate::yaml::Doc> = node_pools
        .iter()
        .chain(node_classes)
        .chain(overlays)
        .map(|d| crate::simulate::yaml::Doc { path: d.file.clone().into(), line: 1, text: String::new(), value: std::borrow::Cow::Borrowed(&d.object) })
        .collect();
    let Ok(m) = crate::simulate::manifests::manifests(&docs) else { return Vec::new() };
    let labels = crate::simulate::instances::TypeLabels::new(catalog);
    let kept: std::collections::BTreeSet<String> = crate::simulate::overlays::accepted(catalog, &labels, &m).into_iter().map(|o| o.name).collect();
    m.overlays.into_iter().map(|o| o.name).filter(|name| !kept.contains(name)).collect()
}

/// One requirement as the overlay writes it.
struct Req {
    key: String,
    operator: String,
    values: Vec<String>,
}

fn requirements(o: &Value) -> Vec<Req> {
    let text = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    o["spec"]["requirements"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| Req {
            key: text(&r["key"]),
            operator: text(&r["operator"]),
            values: r["values"].as_array().into_iter().flatten().map(text).collect(),
        })
        .collect()
}

/// Whether `r`, on a key the NodePool itself defines (`karpenter.sh/nodepool`, a template label), admits `value`
/// (None: the NodePool does not define the key).
fn admits(r: &Req, value: Option<&str>) -> bool {
    match (r.operator.as_str(), value) {
        ("In", Some(v)) => r.values.iter().any(|x| x == v),
        ("NotIn", Some(v)) => !r.values.iter().any(|x| x == v),
        ("Exists", v) => v.is_some(),
        ("DoesNotExist", v) => v.is_none(),
        ("NotIn", None) => true,
        _ => false,
    }
}

/// Whether the overlay applies to the NodePool `np`: its nodepool requirement admits the NodePool's name, and each
/// requirement on a label that is not an instance label (a user label) is satisfied by the template's labels, as
/// Karpenter's `Compatible` has it (an undefined user label satisfies only NotIn and DoesNotExist).
fn applies(reqs: &[Req], np: &Doc) -> bool {
    let labels = &np.object["spec"]["template"]["metadata"]["labels"];
    reqs.iter().all(|r| {
        if r.key == "karpenter.sh/nodepool" {
            return admits(r, Some(&np.name));
        }
        match labels[&r.key].as_str() {
            Some(v) => admits(r, Some(v)),
            None if crate::profile::requirements_is_well_known(&r.key) || r.key.starts_with("karpenter.k8s.aws/") => true,
            None => admits(r, None),
        }
    })
}

/// The quantity as written (`4`, `"50Mi"`).
fn quantity(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
}

/// The block for one pool: None when nothing is left to set (a sharing pool's GPU capacity dropped).
fn block(doc: &Doc, name: &str, reqs: &[Req], shared_resource: Option<&str>) -> Option<Line> {
    let spec = &doc.object["spec"];
    let from = |field: &str| format!("{} spec.{field}", doc.at());
    let mut children = Vec::new();
    if let Some(w) = spec["weight"].as_u64() {
        children.push(Line::new(format!("weight {w}"), from("weight")));
    }
    if let Some(p) = spec["price"].as_str() {
        children.push(Line::new(format!("price {}", q(p)), from("price")));
    }
    if let Some(a) = spec["priceAdjustment"].as_str() {
        children.push(Line::new(format!("price-adjustment {}", q(a)), from("priceAdjustment")));
    }
    let priced = !children.iter().all(|l| l.kdl.starts_with("weight "));
    let mut capacity = 0;
    let mut left_to_sharing = None;
    for (resource, value) in spec["capacity"].as_object().into_iter().flatten() {
        if Some(resource.as_str()) == shared_resource {
            left_to_sharing = Some(format!("{resource}={}", quantity(value)));
            continue;
        }
        capacity += 1;
        children.push(Line::new(format!("capacity {} {}", q(resource), q(&quantity(value))), from(&format!("capacity.{resource}"))));
    }
    if !priced && capacity == 0 {
        return None;
    }
    for r in reqs.iter().filter(|r| r.key != "karpenter.sh/nodepool") {
        let values: String = r.values.iter().map(|v| format!(" {}", q(v))).collect();
        children.push(Line::new(format!("require {} {}{values}", q(&r.key), q(&r.operator)), from("requirements")));
    }
    // The dropped capacity is named where the block says where it came from: the pool's sharing line declares it now.
    let from = match left_to_sharing {
        Some(c) => format!("{} (its capacity {c} is the pool's time-slicing/mig now: check they agree)", doc.at()),
        None => doc.at(),
    };
    Some(Line::block(format!("overlay {}", q(name)), from, children))
}

/// gpuplan names its own sharing overlays `<nodepool>-<n>gpu` (and `-x<units>`): a hand-written overlay of that name
/// on a sharing pool (the blueprints' `gpu-slices-1gpu` with a price added) would collide with it (E0295), so the
/// adopted block takes `<name>-adopted`.
fn unshadowed(name: String, pool: &str, shares: bool) -> String {
    let own = name.strip_prefix(&format!("{pool}-")).is_some_and(|rest| rest.split("-x").next().is_some_and(|n| n.strip_suffix("gpu").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))));
    if shares && own { format!("{name}-adopted") } else { name }
}

/// The GPU resource a pool's sharing (`time-slicing`, `mig`) already declares capacity for, if it shares.
fn shared_resource(lines: &[Line]) -> Option<&'static str> {
    let shares = lines.iter().any(|l| l.kdl.starts_with("time-slicing ") || l.kdl.starts_with("mig "));
    shares.then_some("nvidia.com/gpu")
}

/// Adds each overlay's blocks to the adopted pools it applies to; returns what was skipped, with why.
pub fn attach(overlays: &[Doc], node_pools: &[Doc], conflicting: &[String], profiles: &mut [(AdoptedProfile, Vec<String>)]) -> Vec<String> {
    let mut skipped = Vec::new();
    for doc in overlays {
        if conflicting.contains(&doc.name) {
            let reason = "Karpenter's nodeoverlay controller finds it in conflict with an overlay of the same weight that sets the same price or capacity first (name descending), marks it ValidationSucceeded=False and applies it nowhere";
            skipped.push(format!("{} ({reason})", doc.at()));
            continue;
        }
        let reqs = requirements(&doc.object);
        let targets: Vec<&str> = node_pools.iter().filter(|np| applies(&reqs, np)).map(|np| np.name.as_str()).collect();
        let mut placed = 0;
        let mut emptied = Vec::new();
        // Tiers of one gpuplan pool take the block as it is (the profile reads it as one NodeOverlay over them).
        let parents: std::collections::BTreeSet<Option<String>> =
            profiles.iter().flat_map(|(p, _)| &p.pools).filter(|p| targets.contains(&p.name.as_str())).map(|p| p.tier_of.clone()).collect();
        let one_pool = targets.len() == 1 || (parents.len() == 1 && parents.iter().all(Option::is_some));
        for (profile, sources) in profiles.iter_mut() {
            for pool in profile.pools.iter_mut().filter(|p| targets.contains(&p.name.as_str())) {
                let name = if one_pool { doc.name.clone() } else { format!("{}-{}", doc.name, pool.name) };
                let name = unshadowed(name, &pool.name, shared_resource(&pool.lines).is_some());
                match block(doc, &name, &reqs, shared_resource(&pool.lines)) {
                    Some(line) => {
                        pool.lines.push(line);
                        placed += 1;
                        // The profile's header names the files it was adopted from.
                        if !sources.contains(&doc.file) {
                            sources.push(doc.file.clone());
                            sources.sort();
                        }
                    }
                    None => emptied.push(pool.name.clone()),
                }
            }
        }
        if placed == 0 {
            let reason = if emptied.is_empty() {
                "it applies to none of the adopted NodePools (its karpenter.sh/nodepool or label requirements admit none of them)".to_string()
            } else {
                format!("it only declares the GPU capacity that the `time-slicing`/`mig` of {} compiles to in gpuplan's own NodeOverlay", emptied.join(", "))
            };
            skipped.push(format!("{} ({reason})", doc.at()));
        }
    }
    skipped
}
