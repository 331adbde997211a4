//! What the EBS volumes gpuplan gives every node cost: a cited price table per region, and the $/h of a node's
//! volumes, which the cost bounds add to every node ([`crate::catalog::cost::NodeShape`]).
//!
//! Prices: the Amazon EBS pricing page (<https://aws.amazon.com/ebs/pricing/>, "General Purpose SSD (gp3)"), the
//! same figures as the Price List API's AmazonEC2 offer file
//! (`https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json`, products of
//! family "Storage" with `volumeApiName` gp3/gp2, "System Operation" `group` EBS IOPS and "Provisioned Throughput"
//! `group` EBS Throughput), read 2026-07-20 with the committed catalogs. gp3 includes 3,000 IOPS and 125 MiB/s;
//! provisioned IOPS and throughput above them are billed per IOPS-month and per MiB/s-month. gpuplan renders only
//! gp3 volumes; io1/io2 are not in the table because no template writes them.
//!
//! Volumes are billed per second, prorated over the seconds of the calendar month (the pricing page's examples), so
//! an hour costs most in February: the bound divides a month's price by 672 hours (28 days), not the 730-hour
//! average month, to stay an upper bound.

/// The hours of the shortest month: a month's price over them is the most an hour of it can cost.
pub const HOURS_IN_SHORTEST_MONTH: f64 = 28.0 * 24.0;

/// gp3's included performance (AWS EBS user guide, "General Purpose SSD volumes": 3,000 IOPS and 125 MiB/s at any
/// size, free).
pub const GP3_BASELINE_IOPS: u32 = 3_000;
pub const GP3_BASELINE_THROUGHPUT_MIBPS: u32 = 125;

/// One region's EBS list prices ($ per month). A catalog refreshed through the Price List API keeps them
/// ([`crate::catalog::Catalog::ebs`], provenance under [`SOURCE`]); the cost bounds use them there, else the table.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EbsPrices {
    pub gp3_per_gib_month: f64,
    pub gp3_per_iops_month: f64,
    pub gp3_per_mibps_month: f64,
}

/// The regions the committed catalogs cover (us-east-1, US East (N. Virginia); us-west-2, US West (Oregon)): the
/// same gp3 prices in both.
const PRICES: [(&str, EbsPrices); 2] = [
    ("us-east-1", EbsPrices { gp3_per_gib_month: 0.08, gp3_per_iops_month: 0.005, gp3_per_mibps_month: 0.04 }),
    ("us-west-2", EbsPrices { gp3_per_gib_month: 0.08, gp3_per_iops_month: 0.005, gp3_per_mibps_month: 0.04 }),
];

/// The catalog's `sources` key of its EBS prices.
pub const SOURCE: &str = "ebs-gp3";

/// Prefix of the EBS source description when a refresh kept the previous snapshot's prices.
pub const KEPT_PREFIX: &str = "gp3 EBS prices kept from previous snapshot";

/// Where the EBS prices of a bound came from, for the worst-case basis text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriceBasis {
    /// This module's table, for a region it lists.
    Table,
    /// The table's us-east-1 prices, for a region it does not list: an estimate.
    TableFallback { region: String },
    /// The catalog's, from the Price List API (its source's fetch date, if any; `kept`: an earlier refresh's,
    /// because the last one could not get them).
    Catalog { fetched_at: Option<String>, kept: bool },
}

impl PriceBasis {
    /// How the basis text names the prices. The table's words are unchanged, so a region the table lists reads as
    /// it did before catalogs could carry EBS prices.
    pub fn describe(&self) -> String {
        match self {
            PriceBasis::Table => "EBS list prices".to_string(),
            PriceBasis::TableFallback { region } => format!(
                "us-east-1's EBS list prices (an estimate: the table has none for {region}; `gpuplan catalog refresh` fetches them)"
            ),
            PriceBasis::Catalog { fetched_at, kept } => format!(
                "EBS list prices from the catalog's Price List refresh{}{}",
                fetched_at.as_deref().and_then(|d| d.get(..10)).map(|d| format!(" of {d}")).unwrap_or_default(),
                if *kept { " (kept: the last refresh could not get them)" } else { "" }
            ),
        }
    }
}

/// The EBS prices a catalog's bounds use: its own (from a Price List refresh) when it has them, else the table's.
pub fn catalog_prices(catalog: &crate::catalog::Catalog) -> (EbsPrices, PriceBasis) {
    if let Some(p) = catalog.ebs {
        let source = catalog.sources.get(SOURCE);
        let kept = source.is_some_and(|s| s.description.starts_with(KEPT_PREFIX));
        return (p, PriceBasis::Catalog { fetched_at: source.and_then(|s| s.fetched_at.clone()), kept });
    }
    match prices(&catalog.region) {
        (p, true) => (p, PriceBasis::Table),
        (p, false) => (p, PriceBasis::TableFallback { region: catalog.region.clone() }),
    }
}

/// The region's EBS prices, and whether they are the region's own (false: us-east-1's, an estimate, as for a
/// catalog region the table does not list).
pub fn prices(region: &str) -> (EbsPrices, bool) {
    match PRICES.iter().find(|(r, _)| *r == region) {
        Some((_, p)) => (*p, true),
        None => (PRICES[0].1, false),
    }
}

/// The other volume types a hand-written or adopted class may give its nodes, at us-east-1 list prices
/// (<https://aws.amazon.com/ebs/pricing/>, read 2026-07-20): $ per GB-month and per provisioned IOPS-month. io2's
/// IOPS above 32,000 are billed less than this first tier, so the first tier's price bounds them. `standard`
/// (magnetic) also bills per million I/O requests, which nothing bounds: it is not in the table, and a volume of it
/// is named as not counted. gpuplan's own templates write gp3 only.
const OTHER_TYPES: [(&str, f64, f64); 5] = [("gp2", 0.10, 0.0), ("io1", 0.125, 0.065), ("io2", 0.125, 0.065), ("st1", 0.045, 0.0), ("sc1", 0.015, 0.0)];

/// One EBS volume a node gets (an EC2NodeClass `blockDeviceMappings[].ebs`, or Auto Mode's ephemeral storage).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EbsVolume {
    pub device: String,
    /// `volumeType` (Karpenter's default when absent: gp3).
    pub volume_type: String,
    pub size_gib: u32,
    /// False when the volume says no size (it takes its snapshot's): the bound cannot count it, and says so.
    pub size_known: bool,
    pub iops: u32,
    pub throughput_mibps: u32,
}

impl EbsVolume {
    /// A gp3 volume of `size_gib` at `iops` and `throughput_mibps`.
    pub fn gp3(device: &str, size_gib: u32, iops: u32, throughput_mibps: u32) -> EbsVolume {
        EbsVolume { device: device.into(), volume_type: "gp3".into(), size_gib, size_known: true, iops, throughput_mibps }
    }

    /// The most an hour of this volume costs at `prices`: size, plus gp3's IOPS and throughput above its baseline
    /// (or io1/io2's provisioned IOPS); 0 for what [`EbsVolume::uncounted`] names.
    pub fn usd_per_hour(&self, prices: &EbsPrices) -> f64 {
        if self.uncounted().is_some() {
            return 0.0;
        }
        let size = f64::from(self.size_gib);
        let month = match OTHER_TYPES.iter().find(|(t, _, _)| *t == self.volume_type) {
            Some((_, per_gib, per_iops)) => size * per_gib + f64::from(self.iops) * per_iops,
            None => {
                size * prices.gp3_per_gib_month
                    + f64::from(self.iops.saturating_sub(GP3_BASELINE_IOPS)) * prices.gp3_per_iops_month
                    + f64::from(self.throughput_mibps.saturating_sub(GP3_BASELINE_THROUGHPUT_MIBPS)) * prices.gp3_per_mibps_month
            }
        };
        month / HOURS_IN_SHORTEST_MONTH
    }

    /// Why the bound cannot count this volume: no size (its snapshot's), or a type whose charges nothing bounds.
    pub fn uncounted(&self) -> Option<&'static str> {
        if !self.size_known {
            Some("its snapshot's size is unknown offline")
        } else if self.volume_type != "gp3" && !OTHER_TYPES.iter().any(|(t, _, _)| *t == self.volume_type) {
            Some("its type's charges (per I/O request, or unknown) have no bound")
        } else {
            None
        }
    }

    /// "200 GiB gp3 at 10000 IOPS / 500 MiB/s"; what the bound leaves out, named.
    pub fn describe(&self) -> String {
        match (self.uncounted(), self.volume_type.as_str()) {
            (Some(why), t) => format!("{} {t} not counted: {why}", self.device),
            (None, "gp3") => format!("{} GiB gp3 at {} IOPS / {} MiB/s", self.size_gib, self.iops, self.throughput_mibps),
            (None, t) => format!("{} GiB {t} at {} IOPS", self.size_gib, self.iops),
        }
    }
}

/// The gp3 volumes a rendered node class gives each node: an EC2NodeClass's `spec.blockDeviceMappings[].ebs`
/// (karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass.go `BlockDevice`: volumeSize, iops, throughput; a gp3
/// without them gets the baseline) or an Auto Mode NodeClass's `spec.ephemeralStorage` (size, iops, throughput).
/// lint prices what was rendered with these, independently of the plan.
pub fn rendered_volumes(node_class: &serde_json::Value) -> Vec<EbsVolume> {
    let spec = &node_class["spec"];
    let performance = |v: &serde_json::Value, device: String, size: &serde_json::Value| {
        let volume_type = v["volumeType"].as_str().unwrap_or("gp3").to_string();
        let gp3 = volume_type == "gp3";
        let size_gib = size.as_str().and_then(size_gib);
        EbsVolume {
            device,
            size_known: size_gib.is_some(),
            size_gib: size_gib.unwrap_or(0),
            iops: v["iops"].as_u64().map_or(if gp3 { GP3_BASELINE_IOPS } else { 0 }, |i| i as u32),
            throughput_mibps: v["throughput"].as_u64().map_or(GP3_BASELINE_THROUGHPUT_MIBPS, |t| t as u32),
            volume_type,
        }
    };
    if spec["ephemeralStorage"].is_object() {
        let e = &spec["ephemeralStorage"];
        return vec![performance(e, "ephemeralStorage".into(), &e["size"])];
    }
    match spec["blockDeviceMappings"].as_array() {
        Some(mappings) => mappings.iter().map(|m| performance(&m["ebs"], m["deviceName"].as_str().unwrap_or_default().to_string(), &m["ebs"]["volumeSize"])).collect(),
        None => {
            let alias = spec["amiSelectorTerms"][0]["alias"].as_str().unwrap_or_default();
            karpenter_default_volumes(alias.starts_with("bottlerocket"))
        }
    }
}

/// The volumes Karpenter gives a node whose EC2NodeClass sets no `blockDeviceMappings` (karpenter-provider-aws v1.14.1
/// pkg/providers/amifamily/al2023.go and bottlerocket.go `DefaultBlockDeviceMappings`, resolver.go `DefaultEBS`: a
/// 20 GiB gp3 root volume;
/// Bottlerocket a 4 GiB OS volume and a 20 GiB data volume), at gp3's baseline performance.
pub fn karpenter_default_volumes(bottlerocket: bool) -> Vec<EbsVolume> {
    let gp3 = |device: &str, size_gib| EbsVolume::gp3(device, size_gib, GP3_BASELINE_IOPS, GP3_BASELINE_THROUGHPUT_MIBPS);
    if bottlerocket { vec![gp3("/dev/xvda", 4), gp3("/dev/xvdb", 20)] } else { vec![gp3("/dev/xvda", 20)] }
}

/// GiB (rounded up) of a Kubernetes quantity as volume sizes take it: `Gi`, `G`, `Ti`, `T`.
pub fn size_gib(size: &str) -> Option<u32> {
    let split = size.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = size.split_at(split);
    let n: f64 = n.parse().ok()?;
    let gib = match unit {
        "Gi" => n,
        "G" => n * 1e9 / f64::from(1u32 << 30),
        "Ti" => n * 1024.0,
        "T" => n * 1e12 / f64::from(1u32 << 30),
        _ => return None,
    };
    Some(gib.ceil() as u32)
}

/// What a node's volumes cost per hour, at most, at `prices`.
pub fn node_usd_per_hour(volumes: &[EbsVolume], prices: &EbsPrices) -> f64 {
    volumes.iter().map(|v| v.usd_per_hour(prices)).sum()
}

/// What the cost bounds cover and leave out, for the worst-case basis and explain.
pub const COVERS: &str = "instances and the EBS volumes gpuplan gives each node; not data transfer, public IPv4 addresses, EKS or Auto Mode fees, load balancers, snapshots or anything the cluster adds";

#[cfg(test)]
mod tests {
    use super::*;

    /// The figure: 200 GiB gp3 at 10,000 IOPS / 500 MiB/s is $66 a month in us-east-1 ($16 + 7,000 × $0.005 +
    /// 375 × $0.04, <https://aws.amazon.com/ebs/pricing/>): $0.090/h over the 730-hour average month, $0.098/h over
    /// February's 672 hours, the bound.
    #[test]
    fn a_200_gib_gp3_volume_at_10000_iops_costs_66_dollars_a_month() {
        let v = EbsVolume::gp3("/dev/xvda", 200, 10_000, 500);
        let (p, own) = prices("us-east-1");
        assert!(own);
        assert!((v.usd_per_hour(&p) * HOURS_IN_SHORTEST_MONTH - 66.0).abs() < 1e-9);
        assert!((66.0_f64 / 730.0 - 0.0904).abs() < 1e-4 && (v.usd_per_hour(&p) - 0.0982).abs() < 1e-4);
        assert!((node_usd_per_hour(std::slice::from_ref(&v), &p) - 66.0 / 672.0).abs() < 1e-12);
    }

    #[test]
    fn baseline_iops_and_throughput_are_free() {
        let v = EbsVolume::gp3("/dev/xvda", 4, 3_000, 125);
        assert!((v.usd_per_hour(&prices("us-west-2").0) * HOURS_IN_SHORTEST_MONTH - 0.32).abs() < 1e-9);
    }

    #[test]
    fn a_region_the_table_lacks_gets_us_east_1_prices_marked_as_not_its_own() {
        assert_eq!(prices("eu-west-1"), (prices("us-east-1").0, false));
    }

    fn catalog(region: &str) -> crate::catalog::Catalog {
        let mut catalog = crate::catalog::Catalog::from_json(crate::catalog::EMBEDDED_US_EAST_1, std::path::Path::new("embedded")).unwrap();
        catalog.region = region.into();
        catalog
    }

    /// The bundled catalogs have no `ebs` section (their data has no EBS prices): the table prices their bounds, in
    /// the words the basis text always used; a region the table lacks says its prices are us-east-1's.
    #[test]
    fn a_catalog_without_ebs_prices_uses_the_table_and_says_whose() {
        assert_eq!(catalog_prices(&catalog("us-east-1")), (prices("us-east-1").0, PriceBasis::Table));
        assert_eq!(PriceBasis::Table.describe(), "EBS list prices");
        let (p, basis) = catalog_prices(&catalog("eu-west-1"));
        assert_eq!(p, prices("us-east-1").0);
        assert!(basis.describe().starts_with("us-east-1's EBS list prices (an estimate: the table has none for eu-west-1"), "{}", basis.describe());
    }

    /// A catalog with Price List prices: those, not the table's, with the refresh's date in the words.
    #[test]
    fn a_catalog_with_ebs_prices_uses_them_and_says_so() {
        let mut c = catalog("eu-west-1");
        let own = EbsPrices { gp3_per_gib_month: 0.088, gp3_per_iops_month: 0.0055, gp3_per_mibps_month: 0.044 };
        c.ebs = Some(own);
        c.sources.insert(SOURCE.into(), crate::catalog::Source { description: "AWS Price List GetProducts".into(), fetched_at: Some("2026-08-20T10:13:20Z".into()), estimate: false });
        let (p, basis) = catalog_prices(&c);
        assert_eq!(p, own);
        assert_eq!(basis.describe(), "EBS list prices from the catalog's Price List refresh of 2026-08-20");
        let v = EbsVolume::gp3("/dev/xvda", 200, 10_000, 500);
        assert!((node_usd_per_hour(&[v], &p) * HOURS_IN_SHORTEST_MONTH - (17.6 + 38.5 + 16.5)).abs() < 1e-9);
    }

    /// A hand-written class's volumes (kept by adopt) are priced by their `volumeType` at the EBS pricing page's
    /// us-east-1 list prices (<https://aws.amazon.com/ebs/pricing/>): gp2 $0.10/GB-month, io1 $0.125/GB-month plus
    /// $0.065 per provisioned IOPS-month. A volume the bound cannot price says so instead of counting $0 silently:
    /// a snapshot's volume without `volumeSize` (karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass.go
    /// `BlockDevice`: volumeSize optional with snapshotID) and `standard`, billed per I/O request.
    #[test]
    fn other_volume_types_are_priced_by_type_and_what_cannot_be_is_named() {
        let class = serde_json::json!({"spec": {"blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi", "volumeType": "gp2"}},
            {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "50Gi", "volumeType": "io1", "iops": 1000}},
            {"deviceName": "/dev/xvdc", "ebs": {"snapshotID": "snap-0123456789abcdef0"}},
            {"deviceName": "/dev/xvdd", "ebs": {"volumeSize": "10Gi", "volumeType": "standard"}},
        ]}});
        let volumes = rendered_volumes(&class);
        let (p, _) = prices("us-east-1");
        let month = |v: &EbsVolume| v.usd_per_hour(&p) * HOURS_IN_SHORTEST_MONTH;
        assert!((month(&volumes[0]) - 10.0).abs() < 1e-9);
        assert!((month(&volumes[1]) - (50.0 * 0.125 + 1000.0 * 0.065)).abs() < 1e-9);
        assert_eq!(volumes[2].usd_per_hour(&p), 0.0);
        assert_eq!(volumes[2].describe(), "/dev/xvdc gp3 not counted: its snapshot's size is unknown offline");
        assert_eq!(volumes[3].describe(), "/dev/xvdd standard not counted: its type's charges (per I/O request, or unknown) have no bound");
        assert_eq!(volumes[1].describe(), "50 GiB io1 at 1000 IOPS");
    }
}
