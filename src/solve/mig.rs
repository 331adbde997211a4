//! MIG configurations: which mig-parted config (`nvidia.com/mig.config` label value) exists for which GPU.
//!
//! The source of truth is the GPU Operator's own `default-mig-parted-config` (v26.7.0), embedded unchanged
//! (templates/default-mig-parted-config.yaml). It names no GPU model in its data, only in comments and PCI
//! device filters, so the mapping config → GPU models is derived from the file:
//!
//! - A config whose entries carry `device-filter`s applies to the models named by the comment right above
//!   each filtered entry (e.g. `# A100-40GB, A800-40GB` above `device-filter: ["0x20B010DE", …]`).
//! - A config for `devices: all` applies to the models of its *section*: the nearest `# Model, Model` comment
//!   above it at config level. The file's sections are not always accurate (configs sometimes follow a
//!   section of another GPU), so a section only counts for a GPU when every MIG profile of the config fits
//!   that GPU's memory (`<n>g.<m>gb` with m ≈ memory × k/8, k ∈ {1, 2, 4, 8}) and compute layout (GPUs whose
//!   first section has `3g`/`7g` profiles have 7 compute slices, the others 4); otherwise the search goes on
//!   to earlier sections. A config without profiles (`all-disabled`, `all-enabled`) applies to every
//!   MIG-capable model.
//!
//! A catalog GPU (EC2 name + MiB per GPU) is a model of the file when the names match (case, spaces and
//! dashes ignored; "RTX PRO Server 6000" is "RTX-PRO-6000") and, when the file gives a size, the memory is
//! within 6% of it. GPUs the file never names (A10G, L4, T4, L40S, V100, …) have no MIG.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Deserialize;

/// The GPU Operator's default mig-parted config, unchanged.
pub const DEFAULT_MIG_PARTED_CONFIG: &str = include_str!("../../templates/default-mig-parted-config.yaml");

#[derive(Debug, Deserialize)]
struct MigParted {
    #[allow(dead_code)]
    version: String,
    #[serde(rename = "mig-configs")]
    mig_configs: BTreeMap<String, Vec<Entry>>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    #[serde(rename = "device-filter", default)]
    device_filter: Option<OneOrMany>,
    #[serde(rename = "mig-devices", default)]
    mig_devices: BTreeMap<String, u32>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn ids(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A GPU model as the file names it ("A100-40GB" → name A100, 40 GB).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Model {
    pub text: String,
    key: String,
    gb: Option<u32>,
}

impl Model {
    fn parse(text: &str) -> Model {
        let text = text.trim().to_string();
        let upper = text.to_ascii_uppercase();
        // "<name>[ -]<n>GB" or "<name> <n>G HBM3e"
        let words: Vec<&str> = upper.split([' ', '-']).filter(|w| !w.is_empty()).collect();
        let mut gb = None;
        let mut name_words = Vec::new();
        for w in &words {
            let digits: String = w.chars().take_while(|c| c.is_ascii_digit()).collect();
            let rest = &w[digits.len()..];
            if !digits.is_empty() && (rest == "GB" || rest == "G") && gb.is_none() {
                gb = digits.parse().ok();
            } else if gb.is_none() {
                name_words.push(*w);
            }
        }
        Model { text, key: name_words.concat(), gb }
    }

    /// Does an EC2 GPU (name, MiB per GPU) match this model?
    fn matches(&self, gpu_name: &str, memory_mib: u64) -> bool {
        if normalize(gpu_name) != self.key {
            return false;
        }
        match self.gb {
            None => true,
            Some(gb) => {
                let gib = memory_mib as f64 / 1024.0;
                (gib - f64::from(gb)).abs() <= 0.06 * f64::from(gb)
            }
        }
    }
}

fn normalize(name: &str) -> String {
    name.to_ascii_uppercase().split([' ', '-']).filter(|w| !w.is_empty() && *w != "SERVER").collect()
}

/// One config of the file with the models it applies to (by GPU, decided lazily: see module docs).
#[derive(Debug)]
struct Config {
    /// Profiles of the config: ("1g.10gb", compute slices 1, memory GB 10).
    profiles: Vec<(u32, u32)>,
    /// MIG devices each entry makes of one GPU (0 for an entry that leaves MIG off).
    devices_per_gpu: Vec<u32>,
    /// The models of each device-filtered entry's comment with the devices that entry makes of one GPU: the same
    /// config partitions GPU models differently (`all-1g.10gb`: 7 devices on an A100-80GB, 4 on an A100-40GB).
    devices_by_model: Vec<(Vec<Model>, u32)>,
    /// Models of the comments above device-filtered entries; None when the config has no filters.
    filtered_models: Option<Vec<Model>>,
    /// Sections above the config, nearest first.
    sections: Vec<Vec<Model>>,
}

#[derive(Debug)]
pub struct MigConfigs {
    configs: BTreeMap<String, Config>,
    /// Every model the file names, with whether it has 7 compute slices.
    models: Vec<(Model, bool)>,
}

/// "1g.10gb", "1g.10gb+me", "2g.48gb-me", "1g.24gb+gfx" → (1, 10)
fn parse_profile(p: &str) -> Option<(u32, u32)> {
    let (compute, rest) = p.split_once("g.")?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((compute.parse().ok()?, digits.parse().ok()?))
}

fn models_of_comment(line: &str) -> Vec<Model> {
    line.trim().trim_start_matches('#').split(',').map(Model::parse).filter(|m| !m.key.is_empty()).collect()
}

impl MigConfigs {
    /// The built-in (GPU Operator default) configs.
    pub fn builtin() -> &'static MigConfigs {
        static CONFIGS: OnceLock<MigConfigs> = OnceLock::new();
        CONFIGS.get_or_init(|| MigConfigs::parse(DEFAULT_MIG_PARTED_CONFIG).expect("the embedded mig-parted config parses"))
    }

    /// The file's configs (serde) with the models its comments name (see the module docs): the comments are read,
    /// sizes derived for models named without one, then each config gets its models.
    pub fn parse(text: &str) -> Result<MigConfigs, String> {
        let parsed: MigParted = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        let comments = Comments::read(text);
        let derived = derived_sizes(&parsed, &comments.entry_order);
        let sized = |m: &Model| -> Model {
            let mut m = m.clone();
            if m.gb.is_none() {
                m.gb = derived.get(&m.key).copied();
            }
            m
        };
        let config_sections: BTreeMap<String, Vec<Vec<Model>>> =
            comments.config_sections.into_iter().map(|(k, v)| (k, v.iter().map(|s| s.iter().map(sized).collect()).collect())).collect();
        let entry_models: BTreeMap<String, Vec<Model>> =
            comments.entry_models.into_iter().map(|(k, v)| (k, v.iter().map(sized).collect())).collect();
        let devices_by_model = devices_by_model(&parsed, &comments.entry_order, &sized);
        let mut configs = BTreeMap::new();
        for (name, entries) in parsed.mig_configs {
            let filtered = entries.iter().any(|e| e.device_filter.as_ref().is_some_and(|f| !f.ids().is_empty()));
            let mut profiles: Vec<(u32, u32)> = entries.iter().flat_map(|e| e.mig_devices.keys()).filter_map(|p| parse_profile(p)).collect();
            profiles.sort();
            profiles.dedup();
            configs.insert(
                name.clone(),
                Config {
                    profiles,
                    devices_per_gpu: entries.iter().map(|e| e.mig_devices.values().sum()).collect(),
                    devices_by_model: devices_by_model.get(&name).cloned().unwrap_or_default(),
                    filtered_models: filtered.then(|| entry_models.get(&name).cloned().unwrap_or_default()),
                    sections: config_sections.get(&name).cloned().unwrap_or_default(),
                },
            );
        }
        let models = models_with_layout(&configs);
        Ok(MigConfigs { configs, models })
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.configs.keys().map(String::as_str)
    }

    pub fn exists(&self, config: &str) -> bool {
        self.configs.contains_key(config)
    }

    /// True when the file names the GPU at all (it supports MIG).
    pub fn mig_capable(&self, gpu_name: &str, memory_mib: u64) -> bool {
        self.models.iter().any(|(m, _)| m.matches(gpu_name, memory_mib))
    }

    fn seven_slices(&self, gpu_name: &str, memory_mib: u64) -> bool {
        self.models.iter().any(|(m, seven)| *seven && m.matches(gpu_name, memory_mib))
    }

    /// Whether every profile of a config fits a GPU of this memory and compute layout.
    fn fits(&self, config: &Config, memory_mib: u64, seven: bool) -> bool {
        let gib = memory_mib as f64 / 1024.0;
        config.profiles.iter().all(|&(compute, gb)| {
            let eighths: &[u32] = match (seven, compute) {
                (true, 1) => &[1, 2],
                (true, 2) => &[2],
                (true, 3) | (true, 4) => &[4],
                (true, 7) => &[8],
                (false, 1) => &[2],
                (false, 2) => &[4],
                (false, 4) => &[8],
                _ => &[],
            };
            eighths.iter().any(|&k| {
                let expected = gib * f64::from(k) / 8.0;
                (f64::from(gb) - expected).abs() <= 0.03 * expected + 0.5
            })
        })
    }

    /// Does the config exist for this GPU (EC2 GPU name and MiB per GPU)?
    pub fn applies(&self, config: &str, gpu_name: &str, memory_mib: u64) -> bool {
        let Some(c) = self.configs.get(config) else { return false };
        if !self.mig_capable(gpu_name, memory_mib) {
            return false;
        }
        if let Some(models) = &c.filtered_models {
            return models.iter().any(|m| m.matches(gpu_name, memory_mib));
        }
        if c.profiles.is_empty() {
            return true;
        }
        let seven = self.seven_slices(gpu_name, memory_mib);
        // The nearest section that claims the config decides: one with a model whose size fits every profile
        // (the asking GPU's own memory stands in for a model named without a size). Sections that claim
        // nothing are stale ones the file's layout left above the config.
        for section in &c.sections {
            let claims = section.iter().any(|m| {
                if m.matches(gpu_name, memory_mib) {
                    self.fits(c, memory_mib, seven)
                } else {
                    m.gb.is_some_and(|gb| self.fits(c, u64::from(gb) * 1024, self.models.iter().any(|(x, s)| x == m && *s)))
                }
            });
            if claims {
                return section.iter().any(|m| m.matches(gpu_name, memory_mib)) && self.fits(c, memory_mib, seven);
            }
        }
        false
    }

    /// All configs that exist for the GPU, sorted by name.
    pub fn configs_for(&self, gpu_name: &str, memory_mib: u64) -> Vec<&str> {
        self.names().filter(|c| self.applies(c, gpu_name, memory_mib)).collect()
    }

    /// Schedulable devices one GPU becomes under the config: the fewest any of its entries makes (so limits sized
    /// from it never allow more physical GPUs than intended); 1 when the config leaves MIG off.
    pub fn devices_per_gpu(&self, config: &str) -> u32 {
        self.configs
            .get(config)
            .and_then(|c| c.devices_per_gpu.iter().copied().filter(|d| *d > 0).min())
            .unwrap_or(1)
    }

    /// Schedulable devices one GPU of this model (EC2 name, MiB per GPU) becomes under the config: the devices of
    /// the entry whose device filter names the model, or [`MigConfigs::devices_per_gpu`] for a config without
    /// filters (one entry for every GPU).
    pub fn devices_for(&self, config: &str, gpu_name: &str, memory_mib: u64) -> u32 {
        let Some(c) = self.configs.get(config) else { return 1 };
        c.devices_by_model
            .iter()
            .find(|(models, _)| models.iter().any(|m| m.matches(gpu_name, memory_mib)))
            .map_or_else(|| self.devices_per_gpu(config), |(_, devices)| (*devices).max(1))
    }

    /// True when every device of the config gets one kind of MIG profile (the `single` strategy can serve it).
    pub fn homogeneous(&self, config: &str) -> bool {
        self.configs.get(config).is_some_and(|c| c.profiles.len() <= 1)
    }
}

/// Per config, the models of each device-filtered entry's comment (in file order, as `entry_order` lists them)
/// with the MIG devices that entry makes of one GPU.
fn devices_by_model(parsed: &MigParted, entry_order: &[(String, Vec<Model>)], sized: &dyn Fn(&Model) -> Model) -> BTreeMap<String, Vec<(Vec<Model>, u32)>> {
    let mut out: BTreeMap<String, Vec<(Vec<Model>, u32)>> = BTreeMap::new();
    for (config, models) in entry_order {
        let filtered = parsed.mig_configs[config].iter().filter(|e| e.device_filter.is_some());
        let seen = out.get(config).map_or(0, Vec::len);
        if let Some(entry) = filtered.clone().nth(seen) {
            out.entry(config.clone()).or_default().push((models.iter().map(sized).collect(), entry.mig_devices.values().sum()));
        }
    }
    out
}

/// What the file's comments say, which serde drops: section comments (indent 2) and entry comments (indent 4, right
/// above `- device-filter`).
struct Comments {
    /// Per config, the sections above it, nearest first.
    config_sections: BTreeMap<String, Vec<Vec<Model>>>,
    /// Per config, the models of the comments above its device-filtered entries.
    entry_models: BTreeMap<String, Vec<Model>>,
    /// (config, models of the comment) for each device-filtered entry, in file order.
    entry_order: Vec<(String, Vec<Model>)>,
}

impl Comments {
    fn read(text: &str) -> Comments {
        let mut sections: Vec<Vec<Model>> = Vec::new();
        let mut config_sections: BTreeMap<String, Vec<Vec<Model>>> = BTreeMap::new();
        let mut entry_models: BTreeMap<String, Vec<Model>> = BTreeMap::new();
        let mut current: Option<String> = None;
        let mut last_entry_comment: Option<String> = None;
        let mut entry_order: Vec<(String, Vec<Model>)> = Vec::new();
        let configs = text.lines().skip_while(|line| !line.starts_with("mig-configs:")).skip(1);
        for line in configs {
            let indent = line.len() - line.trim_start().len();
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if indent == 2 && trimmed.starts_with('#') {
                sections.push(models_of_comment(trimmed));
            } else if indent == 2 && trimmed.ends_with(':') {
                let name = trimmed.trim_end_matches(':').to_string();
                config_sections.insert(name.clone(), sections.iter().rev().cloned().collect());
                current = Some(name);
                last_entry_comment = None;
            } else if indent == 4 && trimmed.starts_with('#') {
                last_entry_comment = Some(trimmed.to_string());
            } else if indent == 4 && trimmed.starts_with("- device-filter") {
                if let (Some(config), Some(comment)) = (&current, last_entry_comment.take()) {
                    let models = models_of_comment(&comment);
                    entry_models.entry(config.clone()).or_default().extend(models.clone());
                    entry_order.push((config.clone(), models));
                }
            } else if indent == 4 && trimmed.starts_with('-') {
                last_entry_comment = None;
            }
        }
        Comments { config_sections, entry_models, entry_order }
    }
}

/// Sizes for models the comments name without one ("B200"): from a filtered entry's largest 3g/4g/7g
/// profile (a 3g or 4g instance has 4/8 of the memory, a 7g all of it).
fn derived_sizes(parsed: &MigParted, entry_order: &[(String, Vec<Model>)]) -> BTreeMap<String, u32> {
    let mut derived: BTreeMap<String, u32> = BTreeMap::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (config, models) in entry_order {
        let index = seen.entry(config.as_str()).or_insert(0);
        let filtered: Vec<&Entry> = parsed.mig_configs[config].iter().filter(|e| e.device_filter.is_some()).collect();
        if let Some(entry) = filtered.get(*index) {
            let size = entry
                .mig_devices
                .keys()
                .filter_map(|p| parse_profile(p))
                .filter_map(|(c, gb)| match c {
                    3 | 4 => Some(gb * 2),
                    7 => Some(gb),
                    _ => None,
                })
                .max();
            if let Some(size) = size {
                for m in models.iter().filter(|m| m.gb.is_none()) {
                    derived.entry(m.key.clone()).or_insert(size);
                }
            }
        }
        *index += 1;
    }
    derived
}

/// Every model named anywhere; 7 compute slices when its first section has a 3g or 7g profile.
fn models_with_layout(configs: &BTreeMap<String, Config>) -> Vec<(Model, bool)> {
    let mut models: Vec<(Model, bool)> = Vec::new();
    let all_models: BTreeSet<Model> = configs
        .values()
        .flat_map(|c| c.sections.iter().flatten().chain(c.filtered_models.iter().flatten()))
        .cloned()
        .collect();
    for model in all_models {
        // Configs whose own (nearest) section names the model, in file order does not matter here.
        let seven = configs.values().any(|c| {
            c.sections.first().is_some_and(|s| s.contains(&model)) && c.profiles.iter().any(|(g, _)| *g == 3 || *g == 7)
        });
        models.push((model, seven));
    }
    models
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_parse() {
        assert_eq!(Model::parse("A100-40GB").key, "A100");
        assert_eq!(Model::parse("A100-40GB").gb, Some(40));
        assert_eq!(Model::parse("H200 141GB").gb, Some(141));
        assert_eq!(Model::parse("GH200 144G HBM3e").key, "GH200");
        assert_eq!(Model::parse("RTX-PRO-6000-96GB").key, "RTXPRO6000");
        assert!(Model::parse("RTX-PRO-6000-96GB").matches("RTX PRO Server 6000", 98304));
        assert!(!Model::parse("A100-80GB").matches("A100", 40960));
    }

    #[test]
    fn configs_per_catalog_gpu() {
        let m = MigConfigs::builtin();
        assert_eq!(m.configs.len(), 81);
        let a100_40 = m.configs_for("A100", 40960);
        for c in ["all-1g.5gb", "all-2g.10gb", "all-3g.20gb", "all-4g.20gb", "all-7g.40gb", "all-1g.10gb", "all-balanced", "all-disabled"] {
            assert!(a100_40.contains(&c), "A100-40GB lacks {c}: {a100_40:?}");
        }
        assert!(!a100_40.contains(&"all-2g.20gb") && !a100_40.contains(&"all-7g.80gb"), "{a100_40:?}");
        for gpu in [("A100", 81920), ("H100", 81920)] {
            let got = m.configs_for(gpu.0, gpu.1);
            for c in ["all-1g.10gb", "all-1g.20gb", "all-2g.20gb", "all-3g.40gb", "all-4g.40gb", "all-7g.80gb", "all-balanced"] {
                assert!(got.contains(&c), "{gpu:?} lacks {c}: {got:?}");
            }
            assert!(!got.contains(&"all-1g.5gb") && !got.contains(&"all-1g.23gb"), "{gpu:?}: {got:?}");
        }
        let h200 = m.configs_for("H200", 144384);
        for c in ["all-1g.18gb", "all-1g.35gb", "all-2g.35gb", "all-3g.71gb", "all-7g.141gb", "all-balanced"] {
            assert!(h200.contains(&c), "H200 lacks {c}: {h200:?}");
        }
        assert!(!h200.contains(&"all-1g.10gb"), "{h200:?}");
        let b200 = m.configs_for("B200", 183359);
        assert!(b200.contains(&"all-1g.23gb") && b200.contains(&"all-7g.180gb") && !b200.contains(&"all-1g.10gb"), "{b200:?}");
        for gpu in [("A10G", 22888), ("L4", 22888), ("T4", 16384), ("L40S", 45776), ("V100", 32768)] {
            assert!(m.configs_for(gpu.0, gpu.1).is_empty(), "{gpu:?} has no MIG");
        }
        assert!(m.homogeneous("all-1g.10gb") && !m.homogeneous("all-balanced"));
    }

    #[test]
    fn devices_per_gpu_follow_the_model() {
        let m = MigConfigs::builtin();
        assert_eq!(m.devices_for("all-1g.10gb", "A100", 81920), 7);
        assert_eq!(m.devices_for("all-1g.10gb", "A100", 40960), 4);
        assert_eq!(m.devices_for("all-1g.10gb", "H100", 81920), 7);
        assert_eq!(m.devices_per_gpu("all-1g.10gb"), 4, "the fewest of any model");
        assert_eq!(m.devices_for("all-1g.20gb", "A100", 81920), 4, "no device filter: one entry for every GPU");
    }
}
