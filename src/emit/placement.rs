//! Part of the emit stage: what `gpuplan diff --pods` prints, the diff of out/ beside the placement changes of the
//! pods ([`crate::simulate::placement_diff`]), so a reviewer sees both in one output.

use std::path::PathBuf;

use crate::layout::OutputTree;
use crate::simulate::placement_diff::{self, PlacementChange};

use super::diff::{DiffFormat, ReviewContext, render_diff, render_review};

/// The diff from `old` to `new` in `format`, followed by the placement changes of the pods read from `pods`;
/// without placement, the diff alone. JSON stays one document: the object changes and the placement changes side
/// by side (`{"objects": …, "placement": …}`).
pub fn render_with_placement(
    old: &OutputTree,
    new: &OutputTree,
    format: DiffFormat,
    placement: Option<(&[PlacementChange], &[PathBuf])>,
    review: &ReviewContext,
) -> serde_json::Result<String> {
    let diff = match (format, &review.drift) {
        (DiffFormat::Markdown, _) => render_review(old, new, review),
        (DiffFormat::Json, Some(drift)) => {
            let mut objects = super::diff::semantic_changes(old, new);
            super::diff::drift_review::attach(&mut objects, drift.clone());
            serde_json::to_string_pretty(&objects)? + "\n"
        }
        _ => render_diff(old, new, format),
    };
    Ok(match (placement, format) {
        (Some((changes, _)), DiffFormat::Json) => {
            let objects: serde_json::Value = serde_json::from_str(&diff)?;
            let both = serde_json::json!({ "objects": objects, "placement": changes });
            serde_json::to_string_pretty(&both)? + "\n"
        }
        (Some((changes, pods)), DiffFormat::Markdown) => with_placement_table(diff, &placement_diff::render_markdown(changes, pods)),
        (Some((changes, pods)), _) => diff + &placement_diff::render(changes, pods),
        (None, _) => diff,
    })
}

/// The placement table goes inside the comment, before its footer (the `<sub>` line), not after it.
fn with_placement_table(diff: String, table: &str) -> String {
    match diff.rfind("\n<sub>") {
        Some(at) => format!("{}{table}{}", &diff[..at], &diff[at..]),
        None => diff + table,
    }
}
