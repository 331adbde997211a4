//! `gpuplan catalog import`: turn EC2 API output saved on disk (DescribeInstanceTypes, DescribeInstanceTypeOfferings
//! by availability zone) and an on-demand price table into a catalog snapshot.
//!
//! The same conversion from `InstanceTypeInfo` JSON is used by the live refresh (src/catalog/aws.rs), which
//! serializes the SDK's answers into the same shape first, so both paths produce identical snapshots for
//! identical inputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::catalog::{Arch, CapacityType, Catalog, Gpu, InstanceType, Neuron, Price, Source, SpotPrices, FORMAT};

/// Spot prices are not in the offline data. Until a live refresh brings real ones, a snapshot carries
/// `on-demand × SPOT_ESTIMATE_FACTOR` per zone, under a source marked `estimate: true`, so that every
/// figure derived from it (explain, annotations, alerts) says it is an estimate. 0.40 is a round middle of
/// the 55–70 % discounts the EC2 Spot Instance Advisor shows for current GPU families.
pub const SPOT_ESTIMATE_FACTOR: f64 = 0.40;

pub const SOURCE_TYPES: &str = "describe-instance-types";
pub const SOURCE_OFFERINGS: &str = "describe-instance-type-offerings";
pub const SOURCE_ON_DEMAND: &str = "on-demand-price-table";
pub const SOURCE_SPOT_ESTIMATE: &str = "spot-estimate";
/// Observed spot prices (DescribeSpotPriceHistory), when `build_catalog` is given them.
pub const SOURCE_SPOT: &str = "spot-price-history";

/// What `catalog import` reads.
#[derive(Debug, Clone)]
pub struct ImportInputs {
    pub region: String,
    /// DescribeInstanceTypes output: an object keyed by type name, or `{"InstanceTypes": [...]}`, or an array.
    pub instance_types: PathBuf,
    /// DescribeInstanceTypeOfferings (location type availability-zone): an array of {InstanceType, Location},
    /// or `{"InstanceTypeOfferings": [...]}`.
    pub offerings: PathBuf,
    /// Price table: `{"regions": {"<region>": {"<type>": usd}}, "generated_at": {"<region>": "..."}}`
    /// (Karpenter's generated on-demand table converted to JSON), or a flat `{"<type>": usd}`.
    pub on_demand_prices: PathBuf,
    /// Take the prices of this region from the table instead of `region`'s own (for regions the offline table
    /// lacks); every such price is marked as an estimate.
    pub price_region: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not JSON: {source}")]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{path}: {message}")]
    Shape { path: PathBuf, message: String },
}

fn read_json(path: &Path) -> Result<Value, ImportError> {
    let text = crate::input::read_to_string(path)
        .map_err(|source| ImportError::Read { path: path.to_path_buf(), source })?;
    serde_json::from_str(&text).map_err(|source| ImportError::Json { path: path.to_path_buf(), source })
}

/// Reads the inputs and builds the snapshot.
pub fn import(inputs: &ImportInputs) -> Result<Catalog, ImportError> {
    let types_json = read_json(&inputs.instance_types)?;
    let infos = instance_type_infos(&types_json)
        .ok_or_else(|| shape(&inputs.instance_types, "expected DescribeInstanceTypes output"))?;

    let offerings_json = read_json(&inputs.offerings)?;
    let offerings = offerings_from_json(&offerings_json)
        .ok_or_else(|| shape(&inputs.offerings, "expected an array of {InstanceType, Location}"))?;

    let prices_json = read_json(&inputs.on_demand_prices)?;
    let price_region = inputs.price_region.as_deref().unwrap_or(&inputs.region);
    let (prices, generated_at) = on_demand_from_json(&prices_json, price_region).ok_or_else(|| {
        shape(
            &inputs.on_demand_prices,
            &format!("expected a price table with region {price_region} (USD per hour); for a region the table lacks, pass --price-region with one it has (prices are then marked as estimates)"),
        )
    })?;
    let borrowed = price_region != inputs.region;

    let mut sources = BTreeMap::new();
    sources.insert(
        SOURCE_TYPES.to_string(),
        Source {
            description: format!("EC2 DescribeInstanceTypes, imported from {}", file_name(&inputs.instance_types)),
            fetched_at: None,
            estimate: false,
        },
    );
    sources.insert(
        SOURCE_OFFERINGS.to_string(),
        Source {
            description: format!(
                "EC2 DescribeInstanceTypeOfferings by availability zone, imported from {}",
                file_name(&inputs.offerings)
            ),
            fetched_at: None,
            estimate: false,
        },
    );
    let on_demand_source = Source {
        description: if borrowed {
            format!(
                "ESTIMATE: on-demand Linux USD/hour of {price_region} used for {} (the table has none for it), imported from {}; run `gpuplan catalog refresh --region {}` for real prices",
                inputs.region,
                file_name(&inputs.on_demand_prices),
                inputs.region
            )
        } else {
            format!("on-demand Linux USD/hour for {}, imported from {}", inputs.region, file_name(&inputs.on_demand_prices))
        },
        fetched_at: generated_at,
        estimate: borrowed,
    };
    Ok(build_catalog(&inputs.region, &infos, &offerings, &prices, on_demand_source, None, sources))
}

/// Assembles a catalog from DescribeInstanceTypes entries, zone offerings and prices. `spot` holds real
/// spot prices per (type, zone) with their source; types without any get the estimate.
pub fn build_catalog(
    region: &str,
    infos: &[Value],
    offerings: &BTreeMap<String, BTreeSet<String>>,
    on_demand: &BTreeMap<String, f64>,
    on_demand_source: Source,
    spot: Option<(&SpotPrices, Source)>,
    mut sources: BTreeMap<String, Source>,
) -> Catalog {
    sources.insert(SOURCE_ON_DEMAND.to_string(), on_demand_source);
    let spot_source_id = SOURCE_SPOT;
    let has_real_spot = spot.is_some();
    if let Some((_, source)) = &spot {
        sources.insert(spot_source_id.to_string(), source.clone());
    }
    let mut estimated_any = false;

    let mut instance_types: Vec<InstanceType> = infos
        .iter()
        .filter_map(|info| {
            let name = info.get("InstanceType")?.as_str()?.to_string();
            let zones: Vec<String> = offerings.get(&name).map(|z| z.iter().cloned().collect()).unwrap_or_default();
            let mut it = instance_type_from_info(info, zones)?;
            it.on_demand = on_demand
                .get(&name)
                .map(|usd| Price { usd_per_hour: *usd, source: SOURCE_ON_DEMAND.to_string() });
            if it.capacity_types.contains(&CapacityType::Spot) {
                let observed = spot.as_ref().and_then(|(table, _)| table.newest.get(&name));
                let highest = spot.as_ref().and_then(|(table, _)| table.highest.get(&name));
                for zone in &it.zones {
                    if let Some(usd) = observed.and_then(|per_zone| per_zone.get(zone)) {
                        it.spot.insert(zone.clone(), Price { usd_per_hour: *usd, source: spot_source_id.to_string() });
                        let max = highest.and_then(|per_zone| per_zone.get(zone)).map_or(*usd, |m| m.max(*usd));
                        it.spot_max.insert(zone.clone(), Price { usd_per_hour: max, source: spot_source_id.to_string() });
                    } else if let Some(od) = &it.on_demand {
                        estimated_any = true;
                        it.spot.insert(
                            zone.clone(),
                            Price {
                                usd_per_hour: round_usd(od.usd_per_hour * SPOT_ESTIMATE_FACTOR),
                                source: SOURCE_SPOT_ESTIMATE.to_string(),
                            },
                        );
                    }
                }
            }
            Some(it)
        })
        .collect();
    instance_types.sort_by(|a, b| a.name.cmp(&b.name));
    instance_types.dedup_by(|a, b| a.name == b.name);

    if estimated_any {
        sources.insert(
            SOURCE_SPOT_ESTIMATE.to_string(),
            Source {
                description: format!(
                    "ESTIMATE: spot = on-demand × {SPOT_ESTIMATE_FACTOR:.2}{}; run `gpuplan catalog refresh` for observed spot prices",
                    if has_real_spot { " where the spot price history had no plausible entry" } else { " (no spot price data offline)" }
                ),
                fetched_at: None,
                estimate: true,
            },
        );
    }

    let zones: BTreeSet<String> = offerings.values().flatten().cloned().collect();
    Catalog {
        format: FORMAT,
        region: region.to_string(),
        zones: zones.into_iter().collect(),
        sources,
        instance_types,
        ebs: None,
    }
}

/// Rounds to 1e-6 USD so that derived prices serialize the same everywhere.
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e6).round() / 1e6
}

fn shape(path: &Path, message: &str) -> ImportError {
    ImportError::Shape { path: path.to_path_buf(), message: message.to_string() }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Accepts the shapes DescribeInstanceTypes output is commonly saved in.
pub fn instance_type_infos(json: &Value) -> Option<Vec<Value>> {
    match json {
        Value::Array(items) => Some(items.clone()),
        Value::Object(map) => match map.get("InstanceTypes") {
            Some(Value::Array(items)) => Some(items.clone()),
            _ => Some(map.values().cloned().collect()),
        },
        _ => None,
    }
}

/// Offerings as type → zones.
pub fn offerings_from_json(json: &Value) -> Option<BTreeMap<String, BTreeSet<String>>> {
    let items = match json {
        Value::Array(items) => items,
        Value::Object(map) => map.get("InstanceTypeOfferings")?.as_array()?,
        _ => return None,
    };
    let mut offerings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for item in items {
        let name = item.get("InstanceType")?.as_str()?;
        let zone = item.get("Location")?.as_str()?;
        offerings.entry(name.to_string()).or_default().insert(zone.to_string());
    }
    Some(offerings)
}

/// The region's USD prices and, when the table says, when they were generated.
fn on_demand_from_json(json: &Value, region: &str) -> Option<(BTreeMap<String, f64>, Option<String>)> {
    #[derive(Deserialize)]
    struct Table {
        regions: BTreeMap<String, BTreeMap<String, f64>>,
        #[serde(default)]
        generated_at: BTreeMap<String, String>,
    }
    if let Ok(table) = serde_json::from_value::<Table>(json.clone()) {
        let prices = table.regions.get(region)?.clone();
        return Some((prices, table.generated_at.get(region).cloned()));
    }
    serde_json::from_value::<BTreeMap<String, f64>>(json.clone()).ok().map(|p| (p, None))
}

/// Splits "g5.xlarge" the way Karpenter labels it: category "g", family "g5", generation 5, size "xlarge";
/// "p6-b200.48xlarge" → "p", "p6-b200", 6; "u7i-12tb.224xlarge" → "u", "u7i-12tb", 7; "u-6tb1.56xlarge" → "u", 1.
pub fn split_name(name: &str) -> Option<(String, String, u32, String)> {
    let (family, size) = name.split_once('.')?;
    // Karpenter's scheme: `^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.` → category, (memory of u- types), generation.
    let category: String = family.chars().take_while(|c| c.is_ascii_lowercase()).collect();
    let mut rest = &family[category.len()..];
    if let Some(after_dash) = rest.strip_prefix('-') {
        let digits = after_dash.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && after_dash[digits..].starts_with("tb") {
            rest = &after_dash[digits + 2..];
        }
    }
    // Names outside the scheme (mac-m4.metal) have no generation label in Karpenter: 0 here.
    let generation = rest.chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap_or(0);
    Some((category, family.to_string(), generation, size.to_string()))
}

/// NVMe instance storage as Karpenter labels it (`instance-local-nvme`): the total size when NVMe is supported.
fn local_nvme_gb(info: &Value) -> Option<u64> {
    let storage = info.get("InstanceStorageInfo")?;
    let nvme = storage.get("NvmeSupport").and_then(Value::as_str).is_some_and(|s| s == "required" || s == "supported");
    storage.get("TotalSizeInGB").and_then(Value::as_u64).filter(|gb| nvme && *gb > 0)
}

/// The unsigned integer at `path` (object keys) under `v`.
fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    path.iter().try_fold(v, |v, key| v.get(key))?.as_u64()
}

/// Converts one DescribeInstanceTypes `InstanceTypeInfo` into the catalog's typed form.
pub fn instance_type_from_info(info: &Value, zones: Vec<String>) -> Option<InstanceType> {
    let name = info.get("InstanceType")?.as_str()?.to_string();
    let (category, family, generation, size) = split_name(&name)?;
    Some(InstanceType {
        name,
        category,
        family,
        generation,
        size,
        vcpu: u64_at(info, &["VCpuInfo", "DefaultVCpus"]).unwrap_or(0) as u32,
        memory_mib: u64_at(info, &["MemoryInfo", "SizeInMiB"]).unwrap_or(0),
        arch: architectures(info),
        current_generation: info.get("CurrentGeneration").and_then(Value::as_bool).unwrap_or(false),
        bare_metal: info.get("BareMetal").and_then(Value::as_bool).unwrap_or(false),
        efa: info.pointer("/NetworkInfo/EfaSupported").and_then(Value::as_bool).unwrap_or(false),
        local_nvme_gb: local_nvme_gb(info),
        gpus: gpus(info),
        neuron: neuron(info),
        capacity_types: capacity_types(info),
        zones,
        on_demand: None,
        spot: BTreeMap::new(),
        spot_max: BTreeMap::new(),
    })
}

/// `ProcessorInfo.SupportedArchitectures` that Karpenter schedules (x86_64, arm64), sorted.
fn architectures(info: &Value) -> Vec<Arch> {
    let mut arch: Vec<Arch> = info
        .pointer("/ProcessorInfo/SupportedArchitectures")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| match v.as_str()? {
                    "x86_64" => Some(Arch::Amd64),
                    "arm64" => Some(Arch::Arm64),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    arch.sort();
    arch.dedup();
    arch
}

/// `GpuInfo.Gpus`, one entry per GPU model; entries without a name, manufacturer or count are skipped.
fn gpus(info: &Value) -> Vec<Gpu> {
    info.pointer("/GpuInfo/Gpus")
        .and_then(Value::as_array)
        .map(|gpus| {
            gpus.iter()
                .filter_map(|g| {
                    Some(Gpu {
                        name: g.get("Name")?.as_str()?.to_string(),
                        manufacturer: g.get("Manufacturer")?.as_str()?.to_string(),
                        count: g.get("Count")?.as_u64()? as u32,
                        memory_mib: u64_at(g, &["MemoryInfo", "SizeInMiB"]).unwrap_or(0),
                        partition_size: g.get("GpuPartitionSize").and_then(Value::as_f64).unwrap_or(1.0),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The first `NeuronInfo.NeuronDevices` entry (Inferentia/Trainium), if any.
fn neuron(info: &Value) -> Option<Neuron> {
    info.pointer("/NeuronInfo/NeuronDevices/0").and_then(|d| {
        Some(Neuron {
            name: d.get("Name")?.as_str()?.to_string(),
            count: d.get("Count")?.as_u64()? as u32,
            cores_per_device: u64_at(d, &["CoreInfo", "Count"]).unwrap_or(0) as u32,
            memory_mib_per_device: u64_at(d, &["MemoryInfo", "SizeInMiB"]).unwrap_or(0),
        })
    })
}

/// `SupportedUsageClasses` as capacity types (a capacity block is reserved capacity), sorted.
fn capacity_types(info: &Value) -> Vec<CapacityType> {
    let mut capacity_types: Vec<CapacityType> = info
        .get("SupportedUsageClasses")
        .and_then(Value::as_array)
        .map(|classes| {
            classes
                .iter()
                .filter_map(|c| match c.as_str()? {
                    "on-demand" => Some(CapacityType::OnDemand),
                    "spot" => Some(CapacityType::Spot),
                    "capacity-block" => Some(CapacityType::Reserved),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    capacity_types.sort();
    capacity_types.dedup();
    capacity_types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names_like_karpenter_labels_them() {
        assert_eq!(split_name("g5.xlarge"), Some(("g".into(), "g5".into(), 5, "xlarge".into())));
        assert_eq!(split_name("p6-b200.48xlarge"), Some(("p".into(), "p6-b200".into(), 6, "48xlarge".into())));
        assert_eq!(split_name("u-6tb1.56xlarge"), Some(("u".into(), "u-6tb1".into(), 1, "56xlarge".into())));
        assert_eq!(split_name("c7i-flex.large"), Some(("c".into(), "c7i-flex".into(), 7, "large".into())));
        assert_eq!(split_name("mac-m4.metal"), Some(("mac".into(), "mac-m4".into(), 0, "metal".into())));
        assert_eq!(split_name("inf2.xlarge"), Some(("inf".into(), "inf2".into(), 2, "xlarge".into())));
    }
}
