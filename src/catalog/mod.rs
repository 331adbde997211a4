//! The catalog: everything gpuplan knows about the instance types of one region, and where each number
//! came from.
//!
//! A catalog is a committed JSON snapshot (`catalogs/<region>.json`), written by `gpuplan catalog import`
//! (from DescribeInstanceTypes JSON, offerings and price tables on disk) or `gpuplan catalog refresh` (from the
//! EC2 and Pricing APIs). The us-east-1 snapshot is embedded in the binary, so `compile` works offline and
//! without credentials. The format is the same whichever way it was made; `format` is bumped on any
//! incompatible change.

pub mod auto_mode;
#[cfg(feature = "aws")]
pub mod aws;
pub mod changes;
pub mod cost;
pub mod ebs;
pub mod efa;
pub mod import;
pub mod plausible;
pub mod query;
#[cfg(feature = "aws")]
pub mod refresh;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Snapshot format version. Loading refuses any other value.
pub const FORMAT: u32 = 1;

/// The snapshot compiled into the binary (us-east-1), used when no catalogs/<region>.json is on disk.
pub const EMBEDDED_US_EAST_1: &str = include_str!("../../catalogs/us-east-1.json");

/// One region's catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub format: u32,
    pub region: String,
    /// Availability zones seen in the offerings, sorted.
    pub zones: Vec<String>,
    /// Where the numbers came from, keyed by a short id that prices and offerings refer to
    /// (e.g. "describe-instance-types", "karpenter-ondemand-2026-07-20", "spot-estimate").
    pub sources: BTreeMap<String, Source>,
    /// All instance types of the region (not only accelerated ones), sorted by name.
    pub instance_types: Vec<InstanceType>,
    /// The region's gp3 EBS prices from the Price List API (`catalog refresh`), provenance under
    /// `sources["ebs-gp3"]`. Absent: the cost bounds use the cited table in [`ebs`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebs: Option<ebs::EbsPrices>,
}

/// Provenance of one kind of number in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// What it is, in words ("EC2 DescribeInstanceTypes via moto 5.2.5 snapshot").
    pub description: String,
    /// When the data was produced or fetched (RFC 3339, UTC), if known. Never the wall clock of a
    /// compile: only import/refresh write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<String>,
    /// True when the numbers are estimates, not observations (e.g. spot prices derived from on-demand).
    #[serde(default)]
    pub estimate: bool,
}

/// CPU architecture, as Kubernetes labels it (`kubernetes.io/arch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    Amd64,
    Arm64,
}

impl Arch {
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }
}

/// Karpenter capacity type (`karpenter.sh/capacity-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityType {
    Spot,
    OnDemand,
    Reserved,
}

impl CapacityType {
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityType::Spot => "spot",
            CapacityType::OnDemand => "on-demand",
            CapacityType::Reserved => "reserved",
        }
    }
}

/// One EC2 instance type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceType {
    /// "g5.xlarge"
    pub name: String,
    /// "g" (karpenter.k8s.aws/instance-category)
    pub category: String,
    /// "g5" (karpenter.k8s.aws/instance-family)
    pub family: String,
    /// 5 (karpenter.k8s.aws/instance-generation)
    pub generation: u32,
    /// "xlarge" (karpenter.k8s.aws/instance-size)
    pub size: String,
    pub vcpu: u32,
    pub memory_mib: u64,
    pub arch: Vec<Arch>,
    pub current_generation: bool,
    pub bare_metal: bool,
    pub efa: bool,
    /// NVMe instance-store capacity in GB (EC2's `InstanceStorageInfo.TotalSizeInGB` when NVMe is supported;
    /// Karpenter's `karpenter.k8s.aws/instance-local-nvme`). None: no local NVMe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_nvme_gb: Option<u64>,
    /// GPUs, one entry per GPU model on the instance. Empty for non-GPU types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<Gpu>,
    /// AWS Neuron devices (Inferentia/Trainium), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neuron: Option<Neuron>,
    /// Usage classes EC2 supports for this type ("on-demand", "spot"), sorted.
    pub capacity_types: Vec<CapacityType>,
    /// Availability zones that offer the type, sorted.
    pub zones: Vec<String>,
    /// On-demand Linux price, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_demand: Option<Price>,
    /// Spot price per zone (only zones that offer the type), if known or estimated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spot: BTreeMap<String, Price>,
    /// The highest spot price per zone over the refresh's history window ([`SPOT_HISTORY_DAYS`]): observed
    /// prices only, so absent from offline snapshots. Read by `spot-ceiling "observed-max"`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spot_max: BTreeMap<String, Price>,
}

/// How far back `catalog refresh` reads the spot price history for [`InstanceType::spot_max`].
pub const SPOT_HISTORY_DAYS: u64 = 30;

/// Spot prices per instance type and zone, USD/hour: the newest, and the highest over the history window.
///
/// What the live refresh reads from DescribeSpotPriceHistory ([`aws`]), checks ([`plausible`]) and builds a
/// snapshot with ([`import::build_catalog`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpotPrices {
    pub newest: BTreeMap<String, BTreeMap<String, f64>>,
    pub highest: BTreeMap<String, BTreeMap<String, f64>>,
}

/// One GPU model on an instance type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// "A10G", "H100", "Radeon Pro V520"
    pub name: String,
    /// "NVIDIA", "AMD", ...
    pub manufacturer: String,
    /// Whole GPUs of this model. Zero for fractional-GPU types (g6f, gr6f).
    pub count: u32,
    /// Memory per GPU (or per GPU partition for fractional types), MiB.
    pub memory_mib: u64,
    /// Fraction of a physical GPU one logical GPU gets (1.0 for whole GPUs; 0.125 for g6f.large).
    pub partition_size: f64,
}

/// AWS Neuron devices on an instance type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Neuron {
    /// "Inferentia", "Inferentia2", "Trainium", "Trainium2"
    pub name: String,
    /// Devices (`aws.amazon.com/neuron`).
    pub count: u32,
    /// Neuron cores per device (`aws.amazon.com/neuroncore` is count × cores_per_device).
    pub cores_per_device: u32,
    pub memory_mib_per_device: u64,
}

/// A price in USD per instance-hour, with the id of its source in `Catalog::sources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub usd_per_hour: f64,
    pub source: String,
}

/// What kind of accelerator a pool schedules, and the Kubernetes extended resource that counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcceleratorKind {
    Nvidia,
    Amd,
    Neuron,
    /// No accelerator: a CPU (general-purpose) pool, sized in vCPUs (`cpu`), for the ordinary pods of a cluster.
    Cpu,
}

impl AcceleratorKind {
    /// The extended resource name used in limits, requests and taints.
    pub fn resource(self) -> &'static str {
        match self {
            AcceleratorKind::Nvidia => "nvidia.com/gpu",
            AcceleratorKind::Amd => "amd.com/gpu",
            AcceleratorKind::Neuron => "aws.amazon.com/neuron",
            AcceleratorKind::Cpu => "cpu",
        }
    }

    /// Every extended resource a pod may request for this kind of accelerator: a Neuron pod asks for whole
    /// devices (`aws.amazon.com/neuron`) or for cores only (`aws.amazon.com/neuroncore`), both advertised by the
    /// Neuron device plugin.
    pub fn pod_resources(self) -> &'static [&'static str] {
        match self {
            AcceleratorKind::Neuron => &["aws.amazon.com/neuron", "aws.amazon.com/neuroncore"],
            AcceleratorKind::Nvidia => &["nvidia.com/gpu"],
            AcceleratorKind::Amd => &["amd.com/gpu"],
            AcceleratorKind::Cpu => &["cpu"],
        }
    }

    /// Whether the kind is a device a plugin advertises (and a taint keeps ordinary pods off): every kind but `Cpu`.
    pub fn is_accelerator(self) -> bool {
        self != AcceleratorKind::Cpu
    }
}

impl InstanceType {
    /// Whole accelerators of the given kind this type exposes to the scheduler. Fractional GPUs count 0. For `Cpu`,
    /// the vCPUs: a CPU pool's unit (its limit, $/unit-hour and per-node bounds count vCPUs).
    pub fn accelerators(&self, kind: AcceleratorKind) -> u32 {
        match kind {
            AcceleratorKind::Cpu => self.vcpu,
            AcceleratorKind::Neuron => self.neuron.as_ref().map_or(0, |n| n.count),
            AcceleratorKind::Nvidia | AcceleratorKind::Amd => self
                .gpus
                .iter()
                .filter(|g| manufacturer_kind(&g.manufacturer) == Some(kind))
                .map(|g| g.count)
                .sum(),
        }
    }

    /// True when EC2 reports a GPU that is not a whole device (g6f, gr6f) or a GPU entry with a zero
    /// count: such types must never enter a pool unless named explicitly.
    pub fn has_partial_gpus(&self) -> bool {
        self.gpus.iter().any(|g| g.count == 0 || g.partition_size < 1.0)
    }

    /// True when the type has exactly one GPU model: only then does Karpenter publish the
    /// `karpenter.k8s.aws/instance-gpu-*` labels for it.
    pub fn single_gpu_model(&self) -> Option<&Gpu> {
        match self.gpus.as_slice() {
            [gpu] => Some(gpu),
            _ => None,
        }
    }

    /// The price of one hour of this type for the capacity type: the on-demand price, or the highest spot
    /// price among the given zones (the worst the pool can pay). Reserved capacity is billed like
    /// on-demand here (a capacity reservation's price is the on-demand price of the type).
    pub fn price(&self, capacity: CapacityType, zones: &[String]) -> Option<&Price> {
        match capacity {
            CapacityType::OnDemand | CapacityType::Reserved => self.on_demand.as_ref(),
            CapacityType::Spot => self
                .spot
                .iter()
                .filter(|(zone, _)| zones.is_empty() || zones.contains(zone))
                .map(|(_, price)| price)
                .max_by(|a, b| a.usd_per_hour.total_cmp(&b.usd_per_hour)),
        }
    }
}

impl InstanceType {
    /// The highest observed (not estimated) spot price among the zones (all zones when `zones` is empty).
    pub fn observed_spot_max(&self, zones: &[String]) -> Option<&Price> {
        self.spot_max
            .iter()
            .filter(|(zone, _)| zones.is_empty() || zones.contains(zone))
            .map(|(_, price)| price)
            .max_by(|a, b| a.usd_per_hour.total_cmp(&b.usd_per_hour))
    }
}

/// Karpenter's `--vm-memory-overhead-percent` default: the share of a type's memory the hypervisor keeps.
const VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;

/// types.go `memory`: MiB after VM overhead.
///
/// Memory as Karpenter's AWS provider reports a type's capacity (aws/karpenter-provider-aws
/// `pkg/providers/instancetype/types.go`): the simulator's node capacity and the cost model's memory bound both
/// read it, so it lives with the catalog they share.
pub fn memory_mib(it: &InstanceType) -> i128 {
    let mut mib = it.memory_mib as i128;
    if it.arch.first() == Some(&Arch::Arm64) {
        mib -= 64;
    }
    mib - (mib as f64 * VM_MEMORY_OVERHEAD_PERCENT).ceil() as i128
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Maps an EC2 GPU manufacturer string to the accelerator kind that schedules it.
pub fn manufacturer_kind(manufacturer: &str) -> Option<AcceleratorKind> {
    // Compared in place: this runs for every GPU of every type a pool filters, and a lowercased copy per call was
    // an allocation each time.
    if manufacturer.eq_ignore_ascii_case("nvidia") {
        Some(AcceleratorKind::Nvidia)
    } else if manufacturer.eq_ignore_ascii_case("amd") {
        Some(AcceleratorKind::Amd)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    /// The digest as first written: every line looked at on its own.
    fn digest_line_by_line(text: &str) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        for line in text.split_inclusive('\n') {
            if !line.trim_start().starts_with("\"fetched_at\":") {
                hash.update(line.as_bytes());
            }
        }
        hash.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn snapshot_digest_drops_exactly_the_fetched_at_lines() {
        let snapshot = super::EMBEDDED_US_EAST_1;
        assert!(snapshot.contains("\"fetched_at\":"));
        for text in [
            snapshot,
            "",
            "\"fetched_at\": 1",
            "\"fetched_at\": 1\n",
            "a\n  \"fetched_at\": \"x\",\nb",
            "a\n\t\"fetched_at\": 1\n\"fetched_at\": 2\n\"fetched_at\": 3",
            "\"x\": \"\\\"fetched_at\\\": 1\", \"fetched_at\": 2\n  \"fetched_at\":\nz",
            "no newline at the end \"fetched_at\":",
            "\u{a0}\"fetched_at\": unicode blank\n\u{2028}x \"fetched_at\":\n",
        ] {
            assert_eq!(super::snapshot_digest(text), digest_line_by_line(text), "{text:?}");
        }
        // Changing a fetch time leaves the digest; changing anything else changes it.
        let refetched = snapshot.replacen("2026-07-20T13:44:30Z", "2027-01-01T00:00:00Z", 1);
        assert_ne!(refetched, snapshot);
        assert_eq!(super::snapshot_digest(&refetched), super::snapshot_digest(snapshot));
        assert_ne!(super::snapshot_digest(&snapshot.replacen("0.204", "0.205", 1)), super::snapshot_digest(snapshot));
    }

    #[test]
    fn civil_days() {
        assert_eq!(super::days_from_civil(1970, 1, 1), 0);
        assert_eq!(super::days_from_civil(2026, 7, 20), 20_654);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot read catalog {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("catalog {path} is not a gpuplan catalog snapshot: {source}")]
    Parse { path: PathBuf, source: serde_json::Error },
    #[error("catalog {path} has format {found}, this gpuplan reads format {FORMAT}; run `gpuplan catalog import` or `gpuplan catalog refresh` to rewrite it")]
    Format { path: PathBuf, found: u32 },
    #[error("no catalog for region {region}: looked for {looked_in}/{region}.json, and only us-east-1 is built in; run `gpuplan catalog refresh --region {region}`")]
    Missing { region: String, looked_in: String },
}

impl Catalog {
    /// Parses a snapshot; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &Path) -> Result<Catalog, CatalogError> {
        let catalog: Catalog = serde_json::from_str(text)
            .map_err(|source| CatalogError::Parse { path: origin.to_path_buf(), source })?;
        if catalog.format != FORMAT {
            return Err(CatalogError::Format { path: origin.to_path_buf(), found: catalog.format });
        }
        Ok(catalog)
    }

    /// Serializes a snapshot: pretty JSON, one stable byte sequence for the same catalog.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a catalog always serializes");
        text.push('\n');
        text
    }

    /// Loads `<dir>/<region>.json`, or the embedded snapshot for us-east-1 when the file is absent.
    pub fn load(dir: &Path, region: &str) -> Result<Catalog, CatalogError> {
        let (text, origin) = read_snapshot(dir, region)?;
        Catalog::from_json(&text, &origin)
    }

    /// A short content digest (sha256 of the canonical JSON, first 12 hex digits) for provenance
    /// annotations: the same catalog always gives the same digest. Fetch times are left out, so a refresh that
    /// observes the same types, offerings and prices does not touch every manifest's annotation.
    pub fn digest(&self) -> String {
        snapshot_digest(&self.to_json())
    }

    /// Loads like [`Catalog::load`] and returns the digest of the snapshot as read: for a snapshot gpuplan wrote
    /// (canonical JSON) it equals [`Catalog::digest`], without serializing the catalog again (which costs more than
    /// the rest of a small compile).
    pub fn load_with_digest(dir: &Path, region: &str) -> Result<(Catalog, String), CatalogError> {
        let (text, origin) = read_snapshot(dir, region)?;
        let catalog = Catalog::from_json(&text, &origin)?;
        Ok((catalog, snapshot_digest(&text)))
    }

    pub fn get(&self, name: &str) -> Option<&InstanceType> {
        self.index_of(name).map(|i| &self.instance_types[i])
    }

    /// The position of a type in `instance_types` (sorted by name).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.instance_types.binary_search_by(|t| t.name.as_str().cmp(name)).ok()
    }

    /// True when the price's source is an estimate.
    pub fn is_estimate(&self, price: &Price) -> bool {
        self.sources.get(&price.source).is_some_and(|s| s.estimate)
    }

    /// Whole days between the newest `fetched_at` and `now` (None when no source has a date).
    pub fn age_days(&self, now: std::time::SystemTime) -> Option<u64> {
        let date = self.newest_fetch()?;
        let (y, m, d) = (date.get(0..4)?.parse::<i64>().ok()?, date.get(5..7)?.parse::<i64>().ok()?, date.get(8..10)?.parse::<i64>().ok()?);
        let now_days = now.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs() / 86_400;
        Some(now_days.saturating_sub(days_from_civil(y, m, d).max(0) as u64))
    }

    /// The date of the newest `fetched_at` among the sources, for the staleness warning.
    pub fn newest_fetch(&self) -> Option<&str> {
        self.sources.values().filter_map(|s| s.fetched_at.as_deref()).max()
    }
}

/// The text of `<dir>/<region>.json` and where it came from; the embedded snapshot for us-east-1 when the file is
/// absent.
fn read_snapshot(dir: &Path, region: &str) -> Result<(std::borrow::Cow<'static, str>, PathBuf), CatalogError> {
    let path = dir.join(format!("{region}.json"));
    match crate::input::read_to_string(&path) {
        Ok(text) => Ok((std::borrow::Cow::Owned(text), path)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            if region == "us-east-1" {
                Ok((std::borrow::Cow::Borrowed(EMBEDDED_US_EAST_1), PathBuf::from("<built-in us-east-1 catalog>")))
            } else {
                Err(CatalogError::Missing { region: region.to_string(), looked_in: dir.display().to_string() })
            }
        }
        Err(source) => Err(CatalogError::Read { path, source }),
    }
}

/// The digest of a snapshot's text: sha256 of its lines without the `"fetched_at": …` ones, first 12 hex digits.
/// On [`Catalog::to_json`]'s output this is the digest of the catalog with every fetch time removed (`fetched_at`
/// is never the last field of a source, so dropping its line leaves exactly that serialization).
///
/// The text between two dropped lines is hashed in one piece: looking at each of a 1.5 MB snapshot's 70,000
/// lines cost more than hashing them.
pub fn snapshot_digest(text: &str) -> String {
    const FIELD: &str = "\"fetched_at\":";
    let mut hash = Sha256::new();
    let mut rest = text;
    while let Some(at) = rest.find(FIELD) {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = rest[at..].find('\n').map_or(rest.len(), |i| at + i + 1);
        if rest[line_start..at].trim_start().is_empty() {
            // The field starts its line: drop the whole line.
            hash.update(&rest[..line_start]);
        } else {
            hash.update(&rest[..line_end]);
        }
        rest = &rest[line_end..];
    }
    hash.update(rest);
    hash.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Writes a snapshot so that readers see the old file or the new one, never a mix: a temporary file in the same
/// directory, fsync, rename over the target, fsync the directory. Used by `catalog import` and `catalog refresh`.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    crate::confine::check_write(path)?;
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().map_or_else(|| "catalog".into(), |n| n.to_string_lossy().into_owned());
    let mut file = tempfile::Builder::new().prefix(&format!(".{name}.")).suffix(".tmp").tempfile_in(dir)?;
    file.write_all(text.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}
