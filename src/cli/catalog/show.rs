//! `gpuplan catalog show TYPE`: everything the catalog knows about one instance type, and what Karpenter derives
//! from it (max pods, EFA interfaces); an unknown type is a usage error with a did-you-mean.

use std::fmt::Write as _;
use std::process::ExitCode;

use gpuplan::catalog::query::{self, Quote};
use gpuplan::catalog::{CapacityType, Catalog, InstanceType, efa};
use gpuplan::report::explain::write_table;
use gpuplan::simulate::instances::{eni_limit, eni_limited_pods};

use super::{CatalogSource, estimate_notes, gib, usd};
use crate::cli::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The instance type (g6.xlarge, p5.48xlarge, …).
    #[arg(value_name = "TYPE")]
    instance_type: String,
    #[command(flatten)]
    source: CatalogSource,
    /// text, or json (the catalog's record of the type, with its max pods, EFA interfaces and price sources).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let catalog = args.source.load()?;
    let Some(it) = catalog.get(&args.instance_type) else {
        let names = catalog.instance_types.iter().map(|t| t.name.as_str());
        let guess = gpuplan::diagnostic::did_you_mean(&args.instance_type, names).map(|g| format!("\n{g}")).unwrap_or_default();
        return Err(CliError::Message(format!(
            "the {} catalog has no instance type `{}`{guess}\n`gpuplan catalog list` lists its GPU and Neuron types",
            catalog.region, args.instance_type
        )));
    };
    print!("{}", match args.format {
        Format::Text => text(&catalog, it),
        Format::Json => json(&catalog, it),
    });
    Ok(ExitCode::SUCCESS)
}

/// "yes/no"-style facts in words.
fn flags(it: &InstanceType) -> String {
    let generation = if it.current_generation { "current generation" } else { "previous generation" };
    let metal = if it.bare_metal { "bare metal" } else { "virtualized" };
    format!("{} (category {}, generation {}, size {}); {generation}; {metal}", it.family, it.category, it.generation, it.size)
}

fn accelerators(it: &InstanceType) -> Vec<(&'static str, String)> {
    let mut lines: Vec<(&'static str, String)> = it
        .gpus
        .iter()
        .map(|g| {
            let count = if g.count == 0 { format!("{} of one", g.partition_size) } else { g.count.to_string() };
            ("GPU", format!("{count} × {} {}, {} ({} MiB) each", g.manufacturer, g.name, gib(g.memory_mib), g.memory_mib))
        })
        .collect();
    if let Some(n) = &it.neuron {
        let memory = gib(n.memory_mib_per_device);
        lines.push(("Neuron", format!("{} × {}, {} cores and {memory} each", n.count, n.name, n.cores_per_device)));
    }
    if lines.is_empty() {
        lines.push(("accelerators", "none".into()));
    }
    lines
}

fn text(catalog: &Catalog, it: &InstanceType) -> String {
    let mut facts: Vec<(&str, String)> = vec![("family", flags(it)), ("arch", it.arch.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "))];
    facts.extend(accelerators(it));
    facts.push(("vCPU", it.vcpu.to_string()));
    facts.push(("memory", format!("{} ({} MiB)", gib(it.memory_mib), it.memory_mib)));
    facts.push(("local NVMe", it.local_nvme_gb.map_or_else(|| "none".into(), |gb| format!("{gb} GB"))));
    facts.push(("EFA", match (it.efa, efa::interfaces(&it.name)) {
        (true, Some(n)) => format!("yes, up to {n} interface{} ({})", if n == 1 { "" } else { "s" }, efa::EFA_RESOURCE),
        (true, None) => "yes".into(),
        (false, _) => "no".into(),
    }));
    facts.push(("network", eni_limit(&it.name).map_or_else(|| "ENI limits unknown".into(), |(enis, ips)| format!("{enis} ENIs × {ips} IPv4 addresses (default network card)"))));
    facts.push(("max pods", eni_limited_pods(&it.name).map_or_else(|| "110 (ENI limits unknown: Karpenter's fallback)".into(), |n| format!("{n} (ENI-limited, Karpenter's default)"))));
    facts.push(("capacity", it.capacity_types.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")));
    let mut out = format!("{} (the {} catalog)\n", it.name, catalog.region);
    for (label, value) in &facts {
        let _ = writeln!(out, "  {label:<13}{value}");
    }
    let _ = writeln!(out, "  offerings, USD per hour:");
    let quotes = offerings(catalog, it, &mut out);
    for note in estimate_notes(catalog, &quotes) {
        let _ = writeln!(out, "  {note}");
    }
    out
}

/// The zone × capacity-type table (on-demand, spot, and the highest observed spot price when the catalog has it);
/// returns every quote shown, for the estimate notes.
fn offerings(catalog: &Catalog, it: &InstanceType, out: &mut String) -> Vec<Quote> {
    let quote = |p: &gpuplan::catalog::Price| Quote { usd_per_hour: p.usd_per_hour, estimate: catalog.is_estimate(p), source: p.source.clone() };
    let cell = |q: Option<&Quote>| q.map_or_else(|| "-".to_string(), |q| format!("{}{}", usd(q.usd_per_hour), if q.estimate { "*" } else { "" }));
    let observed_max = !it.spot_max.is_empty();
    let mut headers = vec!["zone", "on-demand", "spot"];
    if observed_max {
        headers.push("spot max (observed)");
    }
    let mut shown = Vec::new();
    let mut rows = Vec::new();
    for zone in &it.zones {
        let on_demand = it.on_demand.as_ref().filter(|_| it.capacity_types.contains(&CapacityType::OnDemand)).map(quote);
        let spot = it.spot.get(zone).map(quote);
        let max = it.spot_max.get(zone).map(quote);
        let mut row = vec![zone.clone(), cell(on_demand.as_ref()), cell(spot.as_ref())];
        if observed_max {
            row.push(cell(max.as_ref()));
        }
        rows.push(row);
        shown.extend([on_demand, spot, max].into_iter().flatten());
    }
    if rows.is_empty() {
        let _ = writeln!(out, "    no zone of {} offers it", catalog.region);
    } else {
        write_table(out, "    ", &headers, &[false, true, true, true], &rows);
    }
    shown
}

fn json(catalog: &Catalog, it: &InstanceType) -> String {
    let row = query::row(catalog, it, None);
    let value = serde_json::json!({
        "region": catalog.region,
        "instance_type": it,
        "per_accelerator_on_demand": row.and_then(|r| r.per_accelerator),
        "efa_interfaces": efa::interfaces(&it.name),
        "max_pods": eni_limited_pods(&it.name).unwrap_or(110),
        "enis": eni_limit(&it.name).map(|(enis, ipv4_per_eni)| serde_json::json!({"count": enis, "ipv4_per_eni": ipv4_per_eni})),
        "sources": catalog.sources,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("a type serializes");
    text.push('\n');
    text
}
