//! The AWS edge: every call to the AWS SDK lives here, and nothing above this module sees an SDK type.
//!
//! What goes out: plain data that `import` already understands. DescribeInstanceTypes answers are serialized
//! back into the JSON shape the EC2 API returns (the fields [`crate::catalog::import::instance_type_from_info`] reads), so
//! `catalog refresh` and `catalog import` share one conversion and produce identical snapshots for identical
//! inputs. Offerings, spot prices and on-demand prices come out as ordered maps.
//!
//! Clients use the standard credential chain (or explicit credentials), one region per client, an optional
//! endpoint override, standard-mode retries with exponential backoff (throttling, 5xx and connection errors are
//! retried) and an operation timeout, so a slow or dead server fails with a clear error instead of hanging.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::config::timeout::TimeoutConfig;
use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_ec2::primitives::{DateTime, DateTimeFormat};
use aws_sdk_ec2::types as ec2;
use serde_json::{Map, Value, json};

use crate::catalog::SpotPrices;

/// The Pricing API has endpoints in us-east-1 (and a few others); us-east-1 serves every region's prices.
pub const PRICING_REGION: &str = "us-east-1";

/// How the clients talk to AWS.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// EC2 endpoint override (moto, LocalStack, a VPC endpoint); the regional AWS endpoint when `None`.
    pub endpoint_url: Option<String>,
    /// Pricing endpoint override; `https://api.pricing.us-east-1.amazonaws.com` when `None`.
    pub pricing_endpoint_url: Option<String>,
    /// Explicit credentials; the standard chain (env, profile, SSO, IMDS, ...) when `None`.
    pub credentials: Option<StaticCredentials>,
    pub retry: RetrySettings,
}

/// An access key pair (plus session token), used instead of the standard credential chain.
#[derive(Clone)]
pub struct StaticCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticCredentials").field("access_key_id", &self.access_key_id).finish_non_exhaustive()
    }
}

/// Retries and timeouts. Throttling (`RequestLimitExceeded`, `Throttling`, 429), 5xx and transient connection
/// errors are retried in standard mode with exponential backoff and jitter.
#[derive(Debug, Clone)]
pub struct RetrySettings {
    /// Attempts per call, the first one included.
    pub max_attempts: u32,
    /// Backoff before the first retry; doubles with each retry (with jitter), up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Limit for one HTTP attempt (connect + request + response).
    pub attempt_timeout: Duration,
    /// Limit for one call, all attempts and backoff included.
    pub operation_timeout: Duration,
    pub connect_timeout: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_attempts: 5,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
            attempt_timeout: Duration::from_secs(30),
            operation_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// A failed AWS call, classified so the message can say what to do.
#[derive(Debug, thiserror::Error)]
pub enum AwsError {
    #[error(
        "{operation} ({region}): cannot connect to {endpoint}: {detail}. Is the endpoint reachable? \
         Check the network or proxy, or pass --endpoint-url (EC2) / --pricing-endpoint-url (Pricing)"
    )]
    Unreachable { operation: &'static str, region: String, endpoint: String, detail: String },
    #[error(
        "{operation} ({region}): {endpoint} did not answer in time ({detail}). The server is slow or hanging; \
         retry later, or check the endpoint (--endpoint-url / --pricing-endpoint-url)"
    )]
    Timeout { operation: &'static str, region: String, endpoint: String, detail: String },
    #[error(
        "{operation} ({region}): no usable AWS credentials: {detail}. Set AWS_PROFILE or AWS_ACCESS_KEY_ID/\
         AWS_SECRET_ACCESS_KEY, or run `aws sso login`"
    )]
    Credentials { operation: &'static str, region: String, detail: String },
    #[error("{operation} ({region}): {endpoint} refused the request: HTTP {status} {code}: {message}{hint}")]
    Service {
        operation: &'static str,
        region: String,
        endpoint: String,
        status: u16,
        code: String,
        message: String,
        hint: &'static str,
    },
    #[error("{operation} ({region}): unexpected answer from {endpoint}: {detail}")]
    Response { operation: &'static str, region: String, endpoint: String, detail: String },
    #[error("{operation} ({region}): Price List entry is not a product of the expected shape: {detail}")]
    PriceList { operation: &'static str, region: String, detail: String },
}

impl AwsError {
    /// One line without the advice, for provenance notes in a snapshot ("Pricing API unreachable: …").
    pub fn summary(&self) -> String {
        match self {
            AwsError::Unreachable { endpoint, detail, .. } => format!("cannot connect to {endpoint}: {detail}"),
            AwsError::Timeout { endpoint, detail, .. } => format!("{endpoint} did not answer in time ({detail})"),
            AwsError::Credentials { detail, .. } => format!("no usable AWS credentials: {detail}"),
            AwsError::Service { status, code, message, .. } => format!("HTTP {status} {code}: {message}"),
            AwsError::Response { detail, .. } | AwsError::PriceList { detail, .. } => detail.clone(),
        }
    }
}

/// Formats a time as RFC 3339 UTC with whole seconds ("2026-08-21T10:00:00Z").
pub fn rfc3339(time: SystemTime) -> String {
    let secs = time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DateTime::from_secs(secs as i64).fmt(DateTimeFormat::DateTime).expect("a time after 1970 formats")
}

/// Shared SDK configuration (credentials, retries, timeouts); clients are made per region from it.
#[derive(Clone)]
pub struct Aws {
    sdk: aws_config::SdkConfig,
    settings: ClientSettings,
}

impl Aws {
    /// Loads the configuration. The region given here only seeds the loader (so it never asks IMDS for one);
    /// every client sets its own.
    pub async fn load(settings: ClientSettings) -> Aws {
        let retry = &settings.retry;
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .region(Region::new(PRICING_REGION))
            .retry_config(
                RetryConfig::standard()
                    .with_max_attempts(retry.max_attempts.max(1))
                    .with_initial_backoff(retry.initial_backoff)
                    .with_max_backoff(retry.max_backoff),
            )
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(retry.connect_timeout)
                    .operation_attempt_timeout(retry.attempt_timeout)
                    .operation_timeout(retry.operation_timeout)
                    .build(),
            );
        if let Some(creds) = &settings.credentials {
            loader = loader.credentials_provider(Credentials::new(
                creds.access_key_id.clone(),
                creds.secret_access_key.clone(),
                creds.session_token.clone(),
                None,
                "gpuplan-explicit",
            ));
        }
        Aws { sdk: loader.load().await, settings }
    }

    /// The EC2 client of one region.
    pub fn ec2(&self, region: &str) -> Ec2 {
        let mut config = aws_sdk_ec2::config::Builder::from(&self.sdk).region(Region::new(region.to_string()));
        if let Some(url) = &self.settings.endpoint_url {
            config = config.endpoint_url(url);
        }
        Ec2 {
            client: aws_sdk_ec2::Client::from_conf(config.build()),
            region: region.to_string(),
            endpoint: self.settings.endpoint_url.clone().unwrap_or_else(|| format!("the EC2 endpoint of {region}")),
        }
    }

    /// The Pricing client (us-east-1, which answers for every region).
    pub fn pricing(&self) -> Pricing {
        let mut config = aws_sdk_pricing::config::Builder::from(&self.sdk).region(Region::new(PRICING_REGION));
        if let Some(url) = &self.settings.pricing_endpoint_url {
            config = config.endpoint_url(url);
        }
        Pricing {
            client: aws_sdk_pricing::Client::from_conf(config.build()),
            endpoint: self
                .settings
                .pricing_endpoint_url
                .clone()
                .unwrap_or_else(|| "the AWS Pricing API (us-east-1)".to_string()),
        }
    }
}

/// EC2 in one region.
pub struct Ec2 {
    client: aws_sdk_ec2::Client,
    region: String,
    endpoint: String,
}

impl Ec2 {
    /// DescribeInstanceTypes, all pages, each entry as DescribeInstanceTypes JSON (`InstanceTypeInfo`).
    pub async fn instance_types(&self) -> Result<Vec<Value>, AwsError> {
        const OP: &str = "DescribeInstanceTypes";
        let mut pages = self.client.describe_instance_types().max_results(100).into_paginator().send();
        let mut infos = Vec::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify(OP, &self.region, &self.endpoint, e))?;
            infos.extend(page.instance_types().iter().map(instance_type_info_json));
        }
        Ok(infos)
    }

    /// DescribeInstanceTypeOfferings by availability zone, all pages: type → zones.
    pub async fn zone_offerings(&self) -> Result<BTreeMap<String, BTreeSet<String>>, AwsError> {
        const OP: &str = "DescribeInstanceTypeOfferings";
        let mut pages = self
            .client
            .describe_instance_type_offerings()
            .location_type(ec2::LocationType::AvailabilityZone)
            .max_results(1000)
            .into_paginator()
            .send();
        let mut offerings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify(OP, &self.region, &self.endpoint, e))?;
            for offering in page.instance_type_offerings() {
                if let (Some(name), Some(zone)) = (offering.instance_type(), offering.location()) {
                    offerings.entry(name.as_str().to_string()).or_default().insert(zone.to_string());
                }
            }
        }
        Ok(offerings)
    }

    /// DescribeSpotPriceHistory for Linux/UNIX over the last [`SPOT_HISTORY_DAYS`], all pages: the newest and
    /// the highest price per (type, zone), USD/hour.
    pub async fn spot_prices(&self, now: SystemTime) -> Result<SpotPrices, AwsError> {
        let window = std::time::Duration::from_secs(crate::catalog::SPOT_HISTORY_DAYS * 86_400);
        let start = now.checked_sub(window).unwrap_or(now);
        const OP: &str = "DescribeSpotPriceHistory";
        let mut pages = self
            .client
            .describe_spot_price_history()
            .product_descriptions("Linux/UNIX")
            .start_time(DateTime::from(start))
            .end_time(DateTime::from(now))
            .max_results(1000)
            .into_paginator()
            .send();
        // (type, zone) → (timestamp, price); the newest entry wins, ties keep the lower price (stable).
        let mut newest: BTreeMap<(String, String), (i64, u32, f64)> = BTreeMap::new();
        let mut highest: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify(OP, &self.region, &self.endpoint, e))?;
            for entry in page.spot_price_history() {
                // "Linux/UNIX" and the older "Linux/UNIX (Amazon VPC)" are both plain Linux.
                if !entry.product_description().is_some_and(|d| d.as_str().starts_with("Linux/UNIX")) {
                    continue;
                }
                let (Some(name), Some(zone), Some(price)) =
                    (entry.instance_type(), entry.availability_zone(), entry.spot_price())
                else {
                    continue;
                };
                let Ok(usd) = price.parse::<f64>() else {
                    return Err(AwsError::Response {
                        operation: OP,
                        region: self.region.clone(),
                        endpoint: self.endpoint.clone(),
                        detail: format!("spot price {price:?} for {} in {zone} is not a number", name.as_str()),
                    });
                };
                let stamp = entry.timestamp().map_or((i64::MIN, 0), |t| (t.secs(), t.subsec_nanos()));
                let key = (name.as_str().to_string(), zone.to_string());
                let max = highest.entry(key.0.clone()).or_default().entry(key.1.clone()).or_insert(usd);
                *max = max.max(usd);
                let replace = match newest.get(&key) {
                    None => true,
                    Some((secs, nanos, old)) => {
                        (stamp.0, stamp.1) > (*secs, *nanos) || ((stamp.0, stamp.1) == (*secs, *nanos) && usd < *old)
                    }
                };
                if replace {
                    newest.insert(key, (stamp.0, stamp.1, usd));
                }
            }
        }
        let mut prices: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        for ((name, zone), (_, _, usd)) in newest {
            prices.entry(name).or_default().insert(zone, usd);
        }
        Ok(SpotPrices { newest: prices, highest })
    }
}

/// The AWS Price List query API.
#[derive(Clone)]
pub struct Pricing {
    client: aws_sdk_pricing::Client,
    endpoint: String,
}

impl Pricing {
    /// GetProducts on the AmazonEC2 offer in `region`, with `filters` (field, value) as TermMatch filters, to page through.
    fn ec2_products(&self, region: &str, filters: &[(&str, &str)]) -> aws_sdk_pricing::operation::get_products::paginator::GetProductsPaginator {
        use aws_sdk_pricing::types::{Filter, FilterType};
        let term = |field: &str, value: &str| Filter::builder().r#type(FilterType::TermMatch).field(field).value(value).build().expect("field, type and value are set");
        let mut request = self.client.get_products().service_code("AmazonEC2").format_version("aws_v1").filters(term("regionCode", region));
        for (field, value) in filters {
            request = request.filters(term(field, value));
        }
        request.max_results(100).into_paginator()
    }

    /// On-demand Linux (shared tenancy, no pre-installed software, capacity status Used) USD/hour per instance
    /// type of a region, from GetProducts (all pages).
    pub async fn on_demand_prices(&self, region: &str) -> Result<BTreeMap<String, f64>, AwsError> {
        const OP: &str = "Pricing GetProducts";
        let mut pages = self.ec2_products(region, &[("operatingSystem", "Linux"), ("tenancy", "Shared"), ("preInstalledSw", "NA"), ("capacitystatus", "Used")]).send();
        let mut prices = BTreeMap::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify(OP, region, &self.endpoint, e))?;
            for product in page.price_list() {
                let parsed = parse_price_list_product(product).map_err(|detail| AwsError::PriceList {
                    operation: OP,
                    region: region.to_string(),
                    detail,
                })?;
                if let Some((name, usd)) = parsed {
                    // Several products can name one type (e.g. other operations): keep the lowest non-zero price.
                    prices.entry(name).and_modify(|p: &mut f64| *p = p.min(usd)).or_insert(usd);
                }
            }
        }
        Ok(prices)
    }

    /// The region's gp3 EBS list prices, from GetProducts on the AmazonEC2 offer filtered to `volumeApiName` gp3
    /// (all pages): storage (productFamily "Storage", GB-Mo), IOPS above the free 3,000 ("System Operation", group
    /// "EBS IOPS", IOPS-Mo) and throughput above the free 125 MiB/s ("Provisioned Throughput", GiBps-mo). The
    /// attribute names and units are the Price List's (infracost internal/resources/aws/ebs_volume.go filters the
    /// same products: productFamily, volumeApiName, usagetype `EBS:VolumeP-IOPS.gp3` / `VolumeP-Throughput.gp3`,
    /// price unit `GiBps-mo`). An answer that lacks one of the three is an error: the caller keeps older prices.
    pub async fn ebs_prices(&self, region: &str) -> Result<crate::catalog::ebs::EbsPrices, AwsError> {
        const OP: &str = "Pricing GetProducts (EBS gp3)";
        let mut pages = self.ec2_products(region, &[("volumeApiName", "gp3")]).send();
        let mut found = GpThreePrices::default();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify(OP, region, &self.endpoint, e))?;
            for product in page.price_list() {
                parse_ebs_product(product, &mut found)
                    .map_err(|detail| AwsError::PriceList { operation: OP, region: region.to_string(), detail })?;
            }
        }
        found.complete().map_err(|detail| AwsError::PriceList { operation: OP, region: region.to_string(), detail })
    }
}

/// The gp3 prices found so far in a GetProducts answer ($ per month).
#[derive(Debug, Default)]
pub struct GpThreePrices {
    pub per_gib_month: Option<f64>,
    pub per_iops_month: Option<f64>,
    pub per_mibps_month: Option<f64>,
}

impl GpThreePrices {
    /// All three, or what is missing.
    pub fn complete(self) -> Result<crate::catalog::ebs::EbsPrices, String> {
        match (self.per_gib_month, self.per_iops_month, self.per_mibps_month) {
            (Some(gp3_per_gib_month), Some(gp3_per_iops_month), Some(gp3_per_mibps_month)) => {
                Ok(crate::catalog::ebs::EbsPrices { gp3_per_gib_month, gp3_per_iops_month, gp3_per_mibps_month })
            }
            (gib, iops, mibps) => Err(format!(
                "the answer has no gp3 {} price",
                [("storage", gib), ("IOPS", iops), ("throughput", mibps)]
                    .iter()
                    .filter(|(_, p)| p.is_none())
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// One AmazonEC2 Price List product of `volumeApiName` gp3 → into `found` by its productFamily. Other families
/// (snapshots, I/O requests) are skipped. Throughput is priced per GiBps-month (`unit` "GiBps-mo"): divided by
/// 1,024 to the MiB/s-month the volumes are sized in (a MiB/s unit is taken as it is; another unit is refused).
pub fn parse_ebs_product(text: &str, found: &mut GpThreePrices) -> Result<(), String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let attributes = doc.pointer("/product/attributes").ok_or("no product.attributes")?;
    if attributes.get("volumeApiName").and_then(Value::as_str) != Some("gp3") {
        return Ok(());
    }
    let family = doc.pointer("/product/productFamily").and_then(Value::as_str).unwrap_or_default();
    let group = attributes.get("group").and_then(Value::as_str).unwrap_or_default();
    let slot = match family {
        "Storage" => &mut found.per_gib_month,
        "System Operation" if group == "EBS IOPS" => &mut found.per_iops_month,
        "Provisioned Throughput" => &mut found.per_mibps_month,
        _ => return Ok(()),
    };
    let Some(terms) = doc.pointer("/terms/OnDemand").and_then(Value::as_object) else { return Ok(()) };
    for dimension in terms.values().filter_map(|t| t.get("priceDimensions").and_then(Value::as_object)).flat_map(|d| d.values()) {
        let Some(usd) = dimension.pointer("/pricePerUnit/USD").and_then(Value::as_str) else { continue };
        let usd: f64 = usd.parse().map_err(|_| format!("gp3 {family}: pricePerUnit.USD {usd:?} is not a number"))?;
        let unit = dimension.get("unit").and_then(Value::as_str).unwrap_or_default();
        let monthly = match (family, unit.to_ascii_lowercase().as_str()) {
            ("Provisioned Throughput", "gibps-mo") => usd / 1024.0,
            ("Provisioned Throughput", "mibps-mo") => usd,
            ("Provisioned Throughput", _) => return Err(format!("gp3 throughput priced per {unit:?}, not GiBps-mo or MiBps-mo")),
            _ => usd,
        };
        if usd > 0.0 {
            *slot = Some(slot.map_or(monthly, |p: f64| p.max(monthly)));
        }
    }
    Ok(())
}

/// One Price List product (a JSON document in a string) → (instance type, on-demand USD/hour). `Ok(None)` for
/// products that are not a plain Linux instance-hour (other operations, zero prices, no OnDemand term).
pub fn parse_price_list_product(text: &str) -> Result<Option<(String, f64)>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let attributes = doc.pointer("/product/attributes").ok_or("no product.attributes")?;
    let Some(name) = attributes.get("instanceType").and_then(Value::as_str) else {
        return Ok(None);
    };
    if attributes.get("operation").and_then(Value::as_str).is_some_and(|op| op != "RunInstances") {
        return Ok(None);
    }
    let Some(terms) = doc.pointer("/terms/OnDemand").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut best: Option<f64> = None;
    for term in terms.values() {
        let Some(dimensions) = term.get("priceDimensions").and_then(Value::as_object) else { continue };
        for dimension in dimensions.values() {
            let Some(usd) = dimension.pointer("/pricePerUnit/USD").and_then(Value::as_str) else { continue };
            let usd: f64 = usd.parse().map_err(|_| format!("{name}: pricePerUnit.USD {usd:?} is not a number"))?;
            if usd > 0.0 {
                best = Some(best.map_or(usd, |b: f64| b.min(usd)));
            }
        }
    }
    Ok(best.map(|usd| (name.to_string(), usd)))
}

/// Serializes the SDK's `InstanceTypeInfo` into the JSON shape of the DescribeInstanceTypes API (the fields the
/// catalog reads), so [`crate::catalog::import::instance_type_from_info`] converts it exactly as it converts saved output.
pub fn instance_type_info_json(info: &ec2::InstanceTypeInfo) -> Value {
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            out.insert(key.to_string(), value);
        }
    };
    put("InstanceType", info.instance_type().map(|t| json!(t.as_str())));
    put("CurrentGeneration", info.current_generation().map(Value::from));
    put("BareMetal", info.bare_metal().map(Value::from));
    put("SupportedUsageClasses", Some(info.supported_usage_classes().iter().map(|c| json!(c.as_str())).collect()));
    put(
        "ProcessorInfo",
        info.processor_info().map(|p| {
            json!({"SupportedArchitectures": p.supported_architectures().iter().map(|a| a.as_str()).collect::<Vec<_>>()})
        }),
    );
    put("VCpuInfo", info.v_cpu_info().map(|v| object([("DefaultVCpus", v.default_v_cpus().map(Value::from))])));
    put("MemoryInfo", info.memory_info().map(|m| object([("SizeInMiB", m.size_in_mib().map(Value::from))])));
    put("NetworkInfo", info.network_info().map(|n| object([("EfaSupported", n.efa_supported().map(Value::from))])));
    put(
        "InstanceStorageInfo",
        info.instance_storage_info().map(|s| {
            object([
                ("TotalSizeInGB", s.total_size_in_gb().map(Value::from)),
                ("NvmeSupport", s.nvme_support().map(|n| Value::from(n.as_str()))),
            ])
        }),
    );
    put("GpuInfo", info.gpu_info().map(gpu_info_json));
    put("NeuronInfo", info.neuron_info().map(neuron_info_json));
    Value::Object(out)
}

/// `GpuInfo` as DescribeInstanceTypes returns it: each GPU model, and the total GPU memory.
fn gpu_info_json(g: &ec2::GpuInfo) -> Value {
    let gpus: Vec<Value> = g
        .gpus()
        .iter()
        .map(|d| {
            object([
                ("Name", d.name().map(Value::from)),
                ("Manufacturer", d.manufacturer().map(Value::from)),
                ("Count", d.count().map(Value::from)),
                ("LogicalGpuCount", d.logical_gpu_count().map(Value::from)),
                ("GpuPartitionSize", d.gpu_partition_size().map(Value::from)),
                (
                    "MemoryInfo",
                    d.memory_info().map(|m| object([("SizeInMiB", m.size_in_mib().map(Value::from))])),
                ),
            ])
        })
        .collect();
    object([
        ("Gpus", Some(Value::Array(gpus))),
        ("TotalGpuMemoryInMiB", g.total_gpu_memory_in_mib().map(Value::from)),
    ])
}

/// `NeuronInfo` as DescribeInstanceTypes returns it: each Neuron device, and the total device memory.
fn neuron_info_json(n: &ec2::NeuronInfo) -> Value {
    let devices: Vec<Value> = n
        .neuron_devices()
        .iter()
        .map(|d| {
            object([
                ("Name", d.name().map(Value::from)),
                ("Count", d.count().map(Value::from)),
                (
                    "CoreInfo",
                    d.core_info().map(|c| {
                        object([
                            ("Count", c.count().map(Value::from)),
                            ("Version", c.version().map(Value::from)),
                        ])
                    }),
                ),
                (
                    "MemoryInfo",
                    d.memory_info().map(|m| object([("SizeInMiB", m.size_in_mib().map(Value::from))])),
                ),
            ])
        })
        .collect();
    object([
        ("NeuronDevices", Some(Value::Array(devices))),
        ("TotalNeuronDeviceMemoryInMiB", n.total_neuron_device_memory_in_mib().map(Value::from)),
    ])
}

/// A JSON object of the fields that are present.
fn object<const N: usize>(fields: [(&str, Option<Value>); N]) -> Value {
    Value::Object(fields.into_iter().filter_map(|(k, v)| Some((k.to_string(), v?))).collect())
}

/// The messages of an error and its sources, joined with ": " (repeats dropped): "dispatch failure: io error:
/// client error (Connect): tcp connect error: Connection refused (os error 111)".
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(err);
    while let Some(err) = next {
        let text = err.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// Turns an SDK error into an [`AwsError`] that says what happened and what to do.
fn classify<E>(operation: &'static str, region: &str, endpoint: &str, err: SdkError<E>) -> AwsError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let region = region.to_string();
    let endpoint = endpoint.to_string();
    let detail = error_chain(&err);
    match &err {
        SdkError::TimeoutError(_) => AwsError::Timeout { operation, region, endpoint, detail },
        SdkError::DispatchFailure(failure) if failure.is_timeout() => {
            AwsError::Timeout { operation, region, endpoint, detail }
        }
        SdkError::DispatchFailure(failure) if failure.is_io() => {
            AwsError::Unreachable { operation, region, endpoint, detail }
        }
        SdkError::DispatchFailure(_) if detail.contains("credential") => {
            AwsError::Credentials { operation, region, detail }
        }
        SdkError::DispatchFailure(_) => AwsError::Unreachable { operation, region, endpoint, detail },
        SdkError::ConstructionFailure(_) if detail.contains("credential") || detail.contains("identity") => {
            AwsError::Credentials { operation, region, detail }
        }
        SdkError::ServiceError(service) => {
            let status = service.raw().status().as_u16();
            let code = service.err().code().unwrap_or("Unknown").to_string();
            let message = service.err().message().unwrap_or("(no message)").to_string();
            let hint = match code.as_str() {
                "AuthFailure"
                | "UnrecognizedClientException"
                | "InvalidClientTokenId"
                | "SignatureDoesNotMatch"
                | "ExpiredToken"
                | "ExpiredTokenException" => "; check the credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID) and the clock",
                "UnauthorizedOperation" | "AccessDeniedException" | "AccessDenied" => {
                    "; the identity needs ec2:DescribeInstanceTypes, ec2:DescribeInstanceTypeOfferings, \
                     ec2:DescribeSpotPriceHistory and pricing:GetProducts"
                }
                "RequestLimitExceeded" | "Throttling" | "ThrottlingException" => {
                    "; still throttled after all retries, try again in a few minutes"
                }
                _ if status >= 500 => "; the service failed after all retries, try again later",
                _ => "",
            };
            AwsError::Service { operation, region, endpoint, status, code, message, hint }
        }
        _ => AwsError::Response { operation, region, endpoint, detail },
    }
}
