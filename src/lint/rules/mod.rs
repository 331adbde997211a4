//! One file per lint rule (`gpNNN_<name>.rs`), each with its `RULE` (code, name, summary, scope, check), its check,
//! its messages and help. [`RULES`] lists them: adding a rule is its file, one line here, and its code in
//! [`RuleCode`](super::code::RuleCode).

use super::rule::Rule;

/// Declares each rule's module and lists its `RULE` in [`RULES`], in code order.
macro_rules! rules {
    ($($module:ident),* $(,)?) => {
        $(mod $module;)*

        /// All rules, in code order.
        pub const RULES: &[Rule] = &[$($module::RULE),*];
    };
}

rules! {
    gp000_unknown_allow,
    gp001_gpu_underutilized_consolidation,
    gp002_ami_latest,
    gp003_scheduled_budget_without_always_on,
    gp004_limit_below_largest_node,
    gp005_equal_weights,
    gp006_narrow_spot_pool,
    gp007_missing_gpu_taint,
    gp008_fractional_gpu_type,
    gp009_never_expire_without_drift_budget,
    gp010_reserved_without_selector,
    gp011_budget_exceeded_by_limits,
    gp012_cost_annotation_drift,
    gp013_limit_missing_or_not_string,
    gp014_named_gpu_priced_out,
    gp015_monitoring_without_selector_label,
    gp016_tier_never_receives_pods,
    gp017_device_plugin_unreachable,
    gp018_replica_too_big_for_small_types,
    gp019_efa_mixed_gpu_models,
    gp020_queue_flavor_without_pool,
    gp021_queue_quota_above_limit,
    gp024_scaledobject_and_hpa_on_one_target,
    gp025_scale_to_zero_with_min_available,
    gp026_overlay_selects_no_type,
    gp028_static_pool_price_spread,
    gp032_budget_alert_in_auto_mode,
    gp033_raw_field_filters_types,
    gp034_queue_quota_below_one_node,
    gp035_queue_shares_leave_accelerators_unqueued,
    gp036_wait_for_pods_ready_below_cold_start,
    gp038_blast_radius_above_disruption_budget,
    gp039_cap_above_budget,
    gp042_operator_service_monitor_unconfigured,
    gp050_spot_without_interruption_queue,
    gp051_efa_without_placement_group,
    gp052_daemonset_misses_pool_taint,
}
