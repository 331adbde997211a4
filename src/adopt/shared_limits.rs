//! The cpu limit of a shared (time-sliced or MIG) NodePool in gpuplan's own output.
//!
//! gpuplan writes such a pool's `spec.limits.cpu` itself: a backstop derived from its types (Karpenter counts physical
//! GPUs until a node registers its slices), lowered to the profile's `limits cpu=` when that is lower. So the number
//! in the spec is not what the profile wrote, and adopting it as `limits cpu=` would pin the backstop as user intent
//! (and lose a user cap above it). The worst-case-basis annotation says which it is: "capped by the cpu limit N" marks
//! the backstop, and "at most what the limits cpu C, memory M allow" records the profile's own `limits` as written.

use serde_json::Value;

/// The worst-case-basis annotation gpuplan writes on every NodePool (`render::worst_case_basis`).
const BASIS: &str = "gpuplan.dev/worst-case-basis";

/// Whether `spec.limits.cpu` is gpuplan's derived backstop (a shared pool of gpuplan's output).
pub fn cpu_is_backstop(np: &Value) -> bool {
    np["metadata"]["annotations"][BASIS].as_str().is_some_and(|b| b.contains("capped by the cpu limit"))
}

/// The profile's own `limits` value for `resource` as the annotation records it (`cpu 100` in "at most what the
/// limits cpu 100, memory 200Gi allow …").
pub fn recorded(np: &Value, resource: &str) -> Option<String> {
    let basis = np["metadata"]["annotations"][BASIS].as_str()?;
    let (_, rest) = basis.split_once("at most what the limits ")?;
    let (list, _) = rest.split_once(" allow")?;
    list.split(", ").find_map(|item| item.strip_prefix(resource)?.strip_prefix(' ')).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn np(basis: &str) -> Value {
        serde_json::json!({ "metadata": { "annotations": { BASIS: basis } } })
    }

    #[test]
    fn the_backstop_is_recognised_and_the_profiles_own_limits_are_read_back() {
        let shared = np("steady state, guaranteed: on-demand prices; shared GPUs counted as Karpenter counts them at launch: physical GPUs until nodes register, capped by the cpu limit 80; at most what the limits cpu 100, memory 200Gi allow at the priciest $/vCPU and $/GiB");
        assert!(cpu_is_backstop(&shared));
        assert_eq!((recorded(&shared, "cpu"), recorded(&shared, "memory")), (Some("100".to_string()), Some("200Gi".to_string())));
        let plain = np("steady state, guaranteed: on-demand prices; at most what the limits memory 64Gi allow at the priciest $/vCPU and $/GiB");
        assert!(!cpu_is_backstop(&plain));
        assert_eq!(recorded(&plain, "cpu"), None);
    }
}
