//! The generated profiles of the compile bench (10 per cluster, a mix of every preset, GPU model, budget and cap),
//! shared with the conformance tests (`tests/conformance/consumers.rs` compiles 1,000 of them).

#![allow(dead_code)]

/// Profiles per generated cluster.
pub const PROFILES_PER_CLUSTER: usize = 10;

pub fn profile_text(i: usize) -> String {
    let cluster = format!("bench-{:04}", i / PROFILES_PER_CLUSTER);
    let presets = ["inference-spot", "inference-on-demand", "training-on-demand", "batch-spot", "general", "tiered"];
    let preset = presets[i % presets.len()];
    let gpu = match preset {
        "training-on-demand" => ["name \"H100\" \"A100\"", "per-node min=8"].join("; "),
        _ => [
            ["name \"A10G\" \"L4\" \"L40S\"", "memory-min \"22GiB\""].join("; "),
            ["name \"T4\"", "per-node max=1"].join("; "),
            ["memory-min \"16GiB\"", "per-node max=4"].join("; "),
        ][i % 3]
            .to_string(),
    };
    let tiers = if preset == "tiered" {
        "    tier \"first\" capacity=\"spot\" { gpu { name \"A10G\"; } }\n    tier \"second\" capacity=\"spot\" { gpu { name \"T4\"; } }\n    tier \"last\" capacity=\"on-demand\" { gpu { name \"A10G\"; } }\n"
    } else {
        ""
    };
    let gpu_block = if preset == "tiered" { String::new() } else { format!("    gpu {{ {gpu}; }}\n") };
    format!(
        "profile \"p{i:05}\" priority={priority}\ncluster \"{cluster}\" {{\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\" \"us-east-1c\"\n    ami \"al2023@v20251023\"\n}}\nbudget usd-per-hour={budget}\npool \"pool-{i:05}\" preset=\"{preset}\" {{\n{gpu_block}    max-accelerators {cap}\n    allow \"GP014\"\n{tiers}}}\n",
        priority = i % 100,
        budget = 200 + (i % 7) * 150,
        cap = 8 * (1 + i % 6),
    )
}
