//! Bottlerocket user data adopt understands: NVIDIA time-slicing of the host's device plugin
//! (bottlerocket.dev API settings "kubelet-device-plugins": `device-sharing-strategy = "time-slicing"`,
//! `time-slicing.replicas`, `rename-by-default`), the settings gpuplan writes for `time-slicing` on a Bottlerocket
//! AMI (`render::bottlerocket_time_slicing`). Anything else in the user data leaves it for the warning.

use std::collections::BTreeMap;

const PREFIX: &str = "settings.kubelet-device-plugins.nvidia.";

/// The replicas when the user data holds only time-slicing settings gpuplan can write again: the strategy
/// `time-slicing`, 2–64 replicas, `rename-by-default = false` (the resource stays `nvidia.com/gpu`; true would rename
/// it `nvidia.com/gpu.shared`, which the pool's pods and limits do not name) and optionally
/// `fail-requests-greater-than-one` (gpuplan sets it true).
pub fn time_slicing(user_data: &str) -> Option<u32> {
    let settings = settings(user_data)?;
    let known = ["device-sharing-strategy", "time-slicing.replicas", "time-slicing.rename-by-default", "time-slicing.fail-requests-greater-than-one"];
    if !settings.keys().all(|k| k.strip_prefix(PREFIX).is_some_and(|rest| known.contains(&rest))) {
        return None;
    }
    let get = |k: &str| settings.get(&format!("{PREFIX}{k}")).map(String::as_str);
    if get("device-sharing-strategy") != Some("\"time-slicing\"") || get("time-slicing.rename-by-default") != Some("false") {
        return None;
    }
    get("time-slicing.replicas")?.parse::<u32>().ok().filter(|r| (2..=64).contains(r))
}

/// `[table]` headers and `key = value` lines as dotted paths → raw values; None for any other line (TOML beyond
/// this subset is not read, so it stays verbatim in the warning).
fn settings(text: &str) -> Option<BTreeMap<String, String>> {
    let mut table = String::new();
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.trim().to_string();
            continue;
        }
        let (key, value) = line.split_once('=')?;
        let path = if table.is_empty() { key.trim().to_string() } else { format!("{table}.{}", key.trim()) };
        out.insert(path, value.trim().to_string());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blueprints_time_slicing_user_data_reads_as_four_replicas() {
        let blueprint = "[settings.kubelet-device-plugins.nvidia]\ndevice-sharing-strategy = \"time-slicing\"\n[settings.kubelet-device-plugins.nvidia.time-slicing]\nreplicas = 4\nrename-by-default = false\n";
        assert_eq!(time_slicing(blueprint), Some(4));
        // gpuplan's own, with fail-requests-greater-than-one.
        assert_eq!(time_slicing(&format!("{blueprint}fail-requests-greater-than-one = true\n")), Some(4));
    }

    #[test]
    fn other_settings_or_a_renamed_resource_are_not_taken() {
        let renamed = "[settings.kubelet-device-plugins.nvidia]\ndevice-sharing-strategy = \"time-slicing\"\n[settings.kubelet-device-plugins.nvidia.time-slicing]\nreplicas = 4\nrename-by-default = true\n";
        assert_eq!(time_slicing(renamed), None);
        let more = "[settings.kubernetes]\nmax-pods = 110\n[settings.kubelet-device-plugins.nvidia]\ndevice-sharing-strategy = \"time-slicing\"\n[settings.kubelet-device-plugins.nvidia.time-slicing]\nreplicas = 4\nrename-by-default = false\n";
        assert_eq!(time_slicing(more), None);
        assert_eq!(time_slicing("#!/bin/bash\necho hi\n"), None);
    }
}
