//! The git-style unified diff of two trees.

use std::path::Path;

use similar::TextDiff;

use crate::emit::{ChangeKind, changes};
use crate::layout::OutputTree;

/// A git-style unified diff (`diff --git` lines, `new file mode` / `deleted file mode`, 3 lines of context) of
/// every changed file, paths prefixed with `a/<out_label>/` and `b/<out_label>/`. Empty when nothing changes.
pub fn render_unified(old: &OutputTree, new: &OutputTree, out_label: &str) -> String {
    let mut s = String::new();
    for change in changes(old, new) {
        let p = slash(&Path::new(out_label).join(&change.path));
        let (a_text, b_text) = (
            old.files.get(&change.path).map_or("", String::as_str),
            new.files.get(&change.path).map_or("", String::as_str),
        );
        let (a, b) = (format!("a/{p}"), format!("b/{p}"));
        s.push_str(&format!("diff --git {a} {b}\n"));
        let (a, b) = match change.kind {
            ChangeKind::Added => {
                s.push_str("new file mode 100644\n");
                ("/dev/null".to_owned(), b)
            }
            ChangeKind::Removed => {
                s.push_str("deleted file mode 100644\n");
                (a, "/dev/null".to_owned())
            }
            ChangeKind::Modified => (a, b),
        };
        let diff = TextDiff::from_lines(a_text, b_text);
        s.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        );
    }
    s
}

pub(super) fn slash(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
