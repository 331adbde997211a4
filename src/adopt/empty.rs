//! NodePools that admit no instance type of the catalog: adopt stops on them, naming each and why, rather than
//! write a profile that fails E0140 at compile. The kinds of why: instance types the catalog does not have (retired
//! types such as p3, or another region's), fractional-GPU types (g6f) that a GPU pod fits only with a NodeOverlay
//! declaring their GPU capacity, or requirements that together leave nothing.

use super::nodepool::{admitted, kind, matching};
use super::read::Doc;
use super::requirements::{matches, requirements};
use crate::catalog::Catalog;

/// Why `np` admits nothing in `catalog`, as one line (`file NodePool/name: …`); None when it admits a type.
pub fn why(np: &Doc, catalog: &Catalog, overlays: &[Doc]) -> Option<String> {
    if let Some(os) = not_linux(np) {
        return Some(format!("{} NodePool/{}: it asks for kubernetes.io/os In [{os}], and gpuplan compiles Linux nodes only (its AMIs, device plugins and kubelet settings are Linux's): keep this NodePool out of the adopted files", np.file, np.name));
    }
    // Fractional-GPU types alone (g6f) launch for a GPU pod only where a NodeOverlay declares whole GPUs on them.
    let fractional = fractional_only(np, catalog) && !overlays.iter().any(declares_gpus);
    if !fractional && !admitted(&np.object, catalog).is_empty() {
        return None;
    }
    let reqs = requirements(&np.object);
    let named: Vec<&str> = reqs.iter().filter(|r| r.key == "node.kubernetes.io/instance-type" && r.operator == "In").flat_map(|r| r.values.iter().map(String::as_str)).collect();
    let unknown: Vec<&str> = named.iter().copied().filter(|n| catalog.get(n).is_none()).collect();
    let region = &catalog.region;
    let reason = if !named.is_empty() && unknown.len() == named.len() {
        format!(
            "its instance types {} are not in the {region} catalog (retired types such as p3 and p2 are no longer offered; a type of another region: pass --region): name types the catalog has (catalogs/{region}.json lists them)",
            unknown.join(", ")
        )
    } else if fractional {
        let overlay = if overlays.is_empty() { "no NodeOverlay is among the inputs" } else { "the NodeOverlays among the inputs do not declare it" };
        format!(
            "it admits only fractional-GPU types ({}), which give a pod no whole {} unless a NodeOverlay declares their GPU capacity, and {overlay}: add the NodeOverlay to the inputs, or adopt the pool with `types` naming them",
            matching(&np.object, catalog).iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            kind(&np.object, catalog).resource()
        )
    } else if let Some(unoffered) = unoffered(np, catalog) {
        format!("the types its requirements admit ({unoffered}) are offered in none of its zones of {region} in the catalog: pass --region for a region that offers them, or name types offered here")
    } else {
        format!("its requirements together admit none of the {} types of the {region} catalog (in its zones and capacity types): check them against catalogs/{region}.json", catalog.instance_types.len())
    };
    Some(format!("{} NodePool/{}: {reason}", np.file, np.name))
}

/// Every type the requirements admit has only a fraction of a GPU, and the pool is a GPU pool.
fn fractional_only(np: &Doc, catalog: &Catalog) -> bool {
    let types = matching(&np.object, catalog);
    kind(&np.object, catalog) == crate::catalog::AcceleratorKind::Nvidia && !types.is_empty() && types.iter().all(|t| t.has_partial_gpus())
}

/// A NodeOverlay that declares GPU capacity (`spec.capacity.nvidia.com/gpu`), as the g6f examples write one.
fn declares_gpus(overlay: &Doc) -> bool {
    !overlay.object["spec"]["capacity"]["nvidia.com/gpu"].is_null()
}

/// The types the requirements admit when none of them is offered in a zone of the catalog (`matching` leaves such
/// types out): listed.
fn unoffered(np: &Doc, catalog: &Catalog) -> Option<String> {
    let reqs = requirements(&np.object);
    let types: Vec<&crate::catalog::InstanceType> = catalog.instance_types.iter().filter(|t| reqs.iter().all(|r| matches(t, r).unwrap_or(true))).collect();
    (!types.is_empty() && types.len() <= 16 && types.iter().all(|t| t.zones.is_empty())).then(|| types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "))
}

/// The operating systems a NodePool asks for when Linux is not among them (a Windows pool).
fn not_linux(np: &Doc) -> Option<String> {
    let reqs = requirements(&np.object);
    let os = reqs.iter().find(|r| r.key == "kubernetes.io/os" && r.operator == "In")?;
    (!os.values.iter().any(|v| v == "linux")).then(|| os.values.join(", "))
}
