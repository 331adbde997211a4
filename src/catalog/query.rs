//! Browsing a catalog: which accelerated instance types match a few filters, and what they cost. `gpuplan catalog
//! list` prints [`CatalogQuery::run`]'s rows (cheapest first); `catalog show` prints one type's [`Row`] with the rest
//! of its [`InstanceType`].
//!
//! ```
//! use gpuplan::catalog::{Catalog, EMBEDDED_US_EAST_1};
//! use gpuplan::catalog::query::CatalogQuery;
//! let catalog = Catalog::from_json(EMBEDDED_US_EAST_1, "us-east-1".as_ref()).unwrap();
//! // Which GPUs have at least 40 GiB, and what do they cost?
//! let query = CatalogQuery { gpu_memory_min_mib: Some(40 * 1024), ..CatalogQuery::default() };
//! let rows = query.run(&catalog);
//! assert!(rows.iter().any(|r| r.accelerator.name == "L40S") && rows.iter().all(|r| r.accelerator.name != "L4"));
//! ```

use serde::Serialize;

use super::{manufacturer_kind, AcceleratorKind, Arch, CapacityType, Catalog, InstanceType};

/// The filters of `catalog list`; `None` (or empty) lets every type through. Only accelerated types (GPU or Neuron)
/// are ever listed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogQuery {
    /// A GPU or Neuron device name (`L4`, `h100`, `Inferentia2`), case-insensitive.
    pub gpu: Option<String>,
    /// The least memory per accelerator, MiB.
    pub gpu_memory_min_mib: Option<u64>,
    /// The least whole accelerators per instance.
    pub gpus_min: Option<u32>,
    /// An instance family (`g6`), case-insensitive.
    pub family: Option<String>,
    pub arch: Option<Arch>,
    /// Only types EC2 sells with this capacity type; the rows are then sorted by its price.
    pub capacity_type: Option<CapacityType>,
}

/// The accelerator of a row: a GPU model or a Neuron device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accelerator {
    pub name: String,
    /// Whole devices; 0 for a fractional GPU (g6f, gr6f).
    pub count: u32,
    /// The share of one GPU a fractional type gets (0.125 for g6f.large); 1 otherwise.
    pub fraction: f64,
    /// Memory per device (per partition for a fractional GPU), MiB.
    pub memory_mib: u64,
}

/// A price as the catalog records it: estimated or observed, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quote {
    pub usd_per_hour: f64,
    pub estimate: bool,
    /// The id of the price's source in the catalog's `sources`.
    pub source: String,
}

/// One instance type as `catalog list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row<'a> {
    #[serde(rename = "type")]
    pub name: &'a str,
    pub family: &'a str,
    pub accelerator: Accelerator,
    pub vcpu: u32,
    pub memory_mib: u64,
    pub arch: &'a [Arch],
    pub on_demand: Option<Quote>,
    /// The lowest spot price among the zones that offer the type: what a spot pool there pays at best.
    pub spot: Option<Quote>,
    /// The sorting price (the capacity type asked for, else on-demand) per whole accelerator: its `usd_per_hour` is
    /// USD per accelerator-hour. None for a fractional GPU.
    pub per_accelerator: Option<Quote>,
    pub zones: &'a [String],
}

impl CatalogQuery {
    /// The accelerated types that pass every filter, cheapest first by the price of [`CatalogQuery::capacity_type`]
    /// (on-demand when none), types without that price last, then by name.
    pub fn run<'a>(&self, catalog: &'a Catalog) -> Vec<Row<'a>> {
        let mut rows: Vec<Row<'a>> = catalog.instance_types.iter().filter_map(|t| row(catalog, t, self.capacity_type)).filter(|r| self.admits(r, catalog)).collect();
        rows.sort_by(|a, b| {
            let (pa, pb) = (self.price(a), self.price(b));
            pa.is_none().cmp(&pb.is_none()).then(pa.unwrap_or(0.0).total_cmp(&pb.unwrap_or(0.0))).then(a.name.cmp(b.name))
        });
        rows
    }

    /// The price rows are sorted by.
    fn price(&self, row: &Row) -> Option<f64> {
        sorting_quote(row, self.capacity_type).map(|q| q.usd_per_hour)
    }

    fn admits(&self, row: &Row, catalog: &Catalog) -> bool {
        let it = catalog.get(row.name).expect("a row is a type of the catalog");
        self.gpu.as_ref().is_none_or(|g| row.accelerator.name.eq_ignore_ascii_case(g))
            && self.gpu_memory_min_mib.is_none_or(|m| row.accelerator.memory_mib >= m)
            && self.gpus_min.is_none_or(|n| row.accelerator.count >= n)
            && self.family.as_ref().is_none_or(|f| it.family.eq_ignore_ascii_case(f))
            && self.arch.is_none_or(|a| it.arch.contains(&a))
            && self.capacity_type.is_none_or(|c| it.capacity_types.contains(&c))
    }
}

/// The quote rows are sorted by and their $/accelerator-hour is of: spot when asked for, else on-demand.
fn sorting_quote<'r>(row: &'r Row, capacity: Option<CapacityType>) -> Option<&'r Quote> {
    match capacity {
        Some(CapacityType::Spot) => row.spot.as_ref(),
        _ => row.on_demand.as_ref(),
    }
}

/// The names of the accelerators the catalog has, sorted: of one kind (NVIDIA GPUs, Neuron devices: what a pool's
/// `gpu { name }`/`neuron { name }` may name), or with None every GPU model and Neuron device (what `--gpu` accepts).
pub fn accelerator_names(catalog: &Catalog, kind: Option<AcceleratorKind>) -> Vec<&str> {
    let gpus = catalog.instance_types.iter().flat_map(|t| t.gpus.iter()).filter(|g| kind.is_none_or(|k| manufacturer_kind(&g.manufacturer) == Some(k)));
    let neuron = catalog.instance_types.iter().filter_map(|t| t.neuron.as_ref()).filter(|_| kind.is_none_or(|k| k == AcceleratorKind::Neuron));
    let mut names: Vec<&str> = gpus.map(|g| g.name.as_str()).chain(neuron.map(|n| n.name.as_str())).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// A type's row, or None when it has no accelerator. A type with several GPU models (none in EC2 today) shows its
/// first; `catalog show` lists them all.
pub fn row<'a>(catalog: &'a Catalog, it: &'a InstanceType, capacity: Option<CapacityType>) -> Option<Row<'a>> {
    let accelerator = match (it.gpus.first(), &it.neuron) {
        (Some(g), _) => Accelerator { name: g.name.clone(), count: g.count, fraction: g.partition_size, memory_mib: g.memory_mib },
        (None, Some(n)) => Accelerator { name: n.name.clone(), count: n.count, fraction: 1.0, memory_mib: n.memory_mib_per_device },
        (None, None) => return None,
    };
    let quote = |p: &super::Price| Quote { usd_per_hour: p.usd_per_hour, estimate: catalog.is_estimate(p), source: p.source.clone() };
    let spot = it.spot.values().min_by(|a, b| a.usd_per_hour.total_cmp(&b.usd_per_hour)).map(quote);
    let mut row = Row {
        name: &it.name,
        family: &it.family,
        accelerator,
        vcpu: it.vcpu,
        memory_mib: it.memory_mib,
        arch: &it.arch,
        on_demand: it.on_demand.as_ref().map(quote),
        spot,
        per_accelerator: None,
        zones: &it.zones,
    };
    let count = row.accelerator.count;
    row.per_accelerator = sorting_quote(&row, capacity).filter(|_| count > 0).map(|q| Quote { usd_per_hour: q.usd_per_hour / f64::from(count), ..q.clone() });
    Some(row)
}

/// Why a memory size does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizeError {
    #[error("unknown memory unit `{0}`")]
    UnknownUnit(String),
    #[error("not a memory size")]
    NotASize,
}

/// "24GiB", "22888MiB" (or Gi, Mi) → MiB: binary units only, as EC2 reports GPU memory in MiB and "GB" is
/// ambiguous. The profile's `memory-min` and `catalog list --gpu-memory-min` read sizes with it.
pub fn binary_size_mib(text: &str) -> Result<u64, SizeError> {
    let text = text.trim();
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
    let unit = text[digits.len()..].trim();
    let factor = match unit {
        "GiB" | "Gi" => 1024,
        "MiB" | "Mi" => 1,
        _ if digits.parse::<u64>().is_ok() => return Err(SizeError::UnknownUnit(unit.to_string())),
        _ => return Err(SizeError::NotASize),
    };
    match digits.parse::<u64>() {
        Ok(n) if n > 0 => n.checked_mul(factor).ok_or(SizeError::NotASize),
        _ => Err(SizeError::NotASize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_sizes_parse_to_mib_and_decimal_units_are_refused() {
        assert_eq!(binary_size_mib("40GiB"), Ok(40 * 1024));
        assert_eq!(binary_size_mib(" 22888MiB "), Ok(22888));
        assert_eq!(binary_size_mib("16Gi"), Ok(16 * 1024));
        assert_eq!(binary_size_mib("24GB"), Err(SizeError::UnknownUnit("GB".into())));
        assert_eq!(binary_size_mib("24"), Err(SizeError::UnknownUnit(String::new())));
        assert_eq!(binary_size_mib("GiB"), Err(SizeError::NotASize));
        assert_eq!(binary_size_mib("0GiB"), Err(SizeError::NotASize));
        assert_eq!(binary_size_mib("99999999999999999999GiB"), Err(SizeError::NotASize));
    }
}
