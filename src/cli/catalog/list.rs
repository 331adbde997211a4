//! `gpuplan catalog list`: the accelerated instance types of a region's catalog that pass a few filters, cheapest
//! first, with their prices (the library's [`CatalogQuery`]); printed as a table, markdown or JSON.

use std::fmt::Write as _;
use std::process::ExitCode;

use gpuplan::catalog::query::{CatalogQuery, Quote, Row, accelerator_names, binary_size_mib};
use gpuplan::diagnostic::did_you_mean_among;
use gpuplan::solve::catalog_names::memory_suffix_hint;
use gpuplan::catalog::{Arch, CapacityType, Catalog};
use gpuplan::report::explain::write_table;

use super::{CatalogSource, estimate_notes, gib, usd};
use crate::cli::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// Only this GPU or Neuron device (L4, A10G, H100, Inferentia2, …), case-insensitive.
    #[arg(long, value_name = "NAME")]
    gpu: Option<String>,
    /// Only accelerators with at least this much memory each (binary units: 40GiB, 24576MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    gpu_memory_min: Option<u64>,
    /// Only types with at least this many accelerators.
    #[arg(long, visible_alias = "count", value_name = "N")]
    gpus_min: Option<u32>,
    /// Only this instance family (g6, p5, …).
    #[arg(long)]
    family: Option<String>,
    /// Only this CPU architecture.
    #[arg(long, value_enum)]
    arch: Option<ArchArg>,
    /// Only types EC2 sells as this capacity type; sorts by (and $/GPU-h is of) its price.
    #[arg(long, value_enum)]
    capacity_type: Option<CapacityArg>,
    #[command(flatten)]
    source: CatalogSource,
    /// table (aligned columns), markdown (a table for a pull request or an issue), json (every figure with its source).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

/// `--arch`: EC2's names (`x86_64`, `arm64`); Kubernetes' `amd64` is accepted too.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ArchArg {
    #[value(name = "x86_64", alias = "amd64")]
    X86_64,
    Arm64,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CapacityArg {
    Spot,
    OnDemand,
}

fn parse_size(text: &str) -> Result<u64, String> {
    binary_size_mib(text).map_err(|e| format!("{e}: write a whole number with GiB or MiB, e.g. 40GiB"))
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let catalog = args.source.load()?;
    let query = CatalogQuery {
        gpu: args.gpu.clone(),
        gpu_memory_min_mib: args.gpu_memory_min,
        gpus_min: args.gpus_min,
        family: args.family.clone(),
        arch: args.arch.map(|a| match a {
            ArchArg::X86_64 => Arch::Amd64,
            ArchArg::Arm64 => Arch::Arm64,
        }),
        capacity_type: args.capacity_type.map(|c| match c {
            CapacityArg::Spot => CapacityType::Spot,
            CapacityArg::OnDemand => CapacityType::OnDemand,
        }),
    };
    check_gpu_name(&catalog, query.gpu.as_deref())?;
    let rows = query.run(&catalog);
    print!("{}", match args.format {
        Format::Table => text(&catalog, &query, &rows, false),
        Format::Markdown => text(&catalog, &query, &rows, true),
        Format::Json => json(&catalog, &query, &rows),
    });
    Ok(ExitCode::SUCCESS)
}

/// An accelerator name the catalog does not have is a usage error naming the ones it has: an empty list would
/// read as "nothing fits".
fn check_gpu_name(catalog: &Catalog, gpu: Option<&str>) -> Result<(), CliError> {
    let Some(gpu) = gpu else { return Ok(()) };
    let names = accelerator_names(catalog, None);
    if names.iter().any(|n| n.eq_ignore_ascii_case(gpu)) {
        return Ok(());
    }
    // The profile's own hints: a model with its memory glued on (`A100-80GB`), else did-you-mean over the names.
    let set = format!("the names it has ({} catalog)", catalog.region);
    let help = memory_suffix_hint(gpu, &names, &set).map_or_else(|| did_you_mean_among(gpu, &names, &set), |hint| hint.replace("memory-min", "--gpu-memory-min"));
    Err(CliError::Message(format!("the {} catalog has no GPU or Neuron device named `{gpu}`\n{help}", catalog.region)))
}

/// The header of the $/GPU-h column: of the price the rows are sorted by.
fn sorted_by(query: &CatalogQuery) -> &'static str {
    match query.capacity_type {
        Some(CapacityType::Spot) => "spot",
        _ => "on-demand",
    }
}

/// A quote as a cell: 4 decimals as the price tables have them, `*` when estimated.
fn quote_cell(quote: Option<&Quote>) -> String {
    quote.map_or_else(|| "-".to_string(), |q| format!("{}{}", usd(q.usd_per_hour), if q.estimate { "*" } else { "" }))
}

/// The accelerator count: whole devices, or the share of one GPU a fractional type gets ("1/8").
fn count_cell(row: &Row) -> String {
    if row.accelerator.count == 0 && row.accelerator.fraction > 0.0 {
        format!("1/{}", (1.0 / row.accelerator.fraction).round())
    } else {
        row.accelerator.count.to_string()
    }
}

fn cells(catalog: &Catalog, row: &Row) -> Vec<String> {
    let zone_letters: Vec<&str> = row.zones.iter().map(|z| z.strip_prefix(catalog.region.as_str()).unwrap_or(z)).collect();
    vec![
        row.name.to_string(),
        row.accelerator.name.clone(),
        count_cell(row),
        gib(row.accelerator.memory_mib),
        row.vcpu.to_string(),
        gib(row.memory_mib),
        quote_cell(row.on_demand.as_ref()),
        quote_cell(row.spot.as_ref()),
        quote_cell(row.per_accelerator.as_ref()),
        if zone_letters.is_empty() { "-".to_string() } else { zone_letters.join(",") },
    ]
}

fn text(catalog: &Catalog, query: &CatalogQuery, rows: &[Row], markdown: bool) -> String {
    let basis = sorted_by(query);
    let headers = ["type", "GPU", "count", "GPU memory", "vCPU", "memory", "on-demand $/h", "spot $/h", &format!("{basis} $/GPU-h")[..], "zones"];
    let right = [false, false, true, true, true, true, true, true, true, false];
    let body: Vec<Vec<String>> = rows.iter().map(|r| cells(catalog, r)).collect();
    let mut out = String::new();
    if markdown {
        let _ = writeln!(out, "| {} |", headers.join(" | "));
        let _ = writeln!(out, "|{}|", right.iter().map(|r| if *r { "---:" } else { "---" }).collect::<Vec<_>>().join("|"));
        for row in &body {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out.push('\n');
    } else {
        write_table(&mut out, "", &headers, &right, &body);
    }
    let _ = writeln!(
        out,
        "{} type{} in the {} catalog, cheapest {basis} first; spot $/h is the lowest zone's; zones are {}<letter>",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        catalog.region,
        catalog.region
    );
    for note in estimate_notes(catalog, rows.iter().flat_map(|r| [r.on_demand.as_ref(), r.spot.as_ref()]).flatten()) {
        let _ = writeln!(out, "{}{note}", if markdown { "\n" } else { "" });
    }
    out
}

fn json(catalog: &Catalog, query: &CatalogQuery, rows: &[Row]) -> String {
    let sources: serde_json::Map<String, serde_json::Value> = catalog
        .sources
        .iter()
        .map(|(id, s)| (id.clone(), serde_json::json!({"description": s.description, "estimate": s.estimate, "fetched_at": s.fetched_at})))
        .collect();
    let value = serde_json::json!({
        "region": catalog.region,
        "sorted_by": sorted_by(query),
        "sources": sources,
        "types": rows,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("rows serialize");
    text.push('\n');
    text
}
