use std::fs;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Status};
use gpuplan::emit::gitops::{CommitOptions, CommitOutcome, GitopsError, commit};
use gpuplan::emit::write_tree;
use gpuplan::layout::{HeaderStatus, OutputTree, with_header};

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    repo: Repository,
}

impl Fixture {
    /// A repository with user identity configured; with an initial commit of README.md, notes.txt, staged.txt and
    /// catalogs/snapshot.json unless `empty`.
    fn new(empty: bool) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        let repo = Repository::init(&dir).unwrap();
        {
            let mut cfg = repo.config().unwrap();
            cfg.set_str("user.name", "Test User").unwrap();
            cfg.set_str("user.email", "test@example.com").unwrap();
        }
        let f = Fixture {
            _tmp: tmp,
            dir,
            repo,
        };
        if !empty {
            f.write("README.md", "# infra\n");
            f.write("notes.txt", "notes v1\n");
            f.write("staged.txt", "staged v1\n");
            f.write("catalogs/snapshot.json", "{\"v\":1}\n");
            f.stage(&[
                "README.md",
                "notes.txt",
                "staged.txt",
                "catalogs/snapshot.json",
            ]);
            let mut index = f.repo.index().unwrap();
            let tree = f.repo.find_tree(index.write_tree().unwrap()).unwrap();
            let sig = f.repo.signature().unwrap();
            f.repo
                .commit(Some("HEAD"), &sig, &sig, "initial", &tree, &[])
                .unwrap();
        }
        f
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.dir.join(rel)).unwrap()
    }

    fn stage(&self, paths: &[&str]) {
        let mut index = self.repo.index().unwrap();
        for p in paths {
            index.add_path(Path::new(p)).unwrap();
        }
        index.write().unwrap();
    }

    fn out(&self) -> PathBuf {
        self.dir.join("out")
    }

    fn head(&self) -> Option<Oid> {
        self.repo.head().ok().and_then(|h| h.target())
    }

    fn status(&self, rel: &str) -> Status {
        self.repo.status_file(Path::new(rel)).unwrap()
    }

    fn commit(
        &self,
        tree: &OutputTree,
        opts: &CommitOptions,
    ) -> Result<CommitOutcome, GitopsError> {
        commit(&self.dir, &self.out(), tree, opts)
    }

    /// Paths changed by commit `id` relative to its (only) parent, sorted.
    fn commit_paths(&self, id: Oid) -> Vec<String> {
        let c = self.repo.find_commit(id).unwrap();
        let parent_tree = c.parents().next().map(|p| p.tree().unwrap());
        let diff = self
            .repo
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&c.tree().unwrap()), None)
            .unwrap();
        let mut v: Vec<String> = diff
            .deltas()
            .map(|d| {
                d.new_file()
                    .path()
                    .or(d.old_file().path())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }

    fn blob_at(&self, id: Oid, rel: &str) -> Option<String> {
        let tree = self.repo.find_commit(id).unwrap().tree().unwrap();
        let entry = tree.get_path(Path::new(rel)).ok()?;
        let blob = self.repo.find_blob(entry.id()).unwrap();
        Some(String::from_utf8(blob.content().to_vec()).unwrap())
    }

    fn head_branch(&self) -> String {
        self.repo
            .find_reference("HEAD")
            .unwrap()
            .symbolic_target()
            .unwrap()
            .unwrap()
            .to_owned()
    }
}

fn pool(name: &str, limit: u32, worst: &str) -> String {
    with_header(
        "profiles/llm-inference.kdl",
        &format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\n  annotations:\n    \
             gpuplan.dev/worst-case-usd-per-hour: \"{worst}\"\nspec:\n  limits:\n    nvidia.com/gpu: \"{limit}\"\n"
        ),
    )
}

fn tree_v1() -> OutputTree {
    let mut t = OutputTree::default();
    t.insert("ml-prod/nodepool-spot.yaml", pool("spot", 40, "112.00"));
    t.insert("ml-prod/nodepool-od.yaml", pool("od", 8, "12.80"));
    t.insert(
        "ml-prod/poddisruptionbudget-llm.yaml",
        with_header(
            "profiles/llm-inference.kdl",
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: llm\n  namespace: inference\nspec:\n  minAvailable: 2\n",
        ),
    );
    gpuplan::render::kustomization::add_kustomizations(&mut t, &Default::default());
    t
}

/// v1 with the spot limit raised and the PDB removed.
fn tree_v2() -> OutputTree {
    let mut t = tree_v1();
    t.insert("ml-prod/nodepool-spot.yaml", pool("spot", 48, "130.40"));
    t.files
        .remove(Path::new("ml-prod/poddisruptionbudget-llm.yaml"));
    gpuplan::render::kustomization::add_kustomizations(&mut t, &Default::default());
    t
}

fn opts() -> CommitOptions {
    CommitOptions::default()
}

fn committed(outcome: CommitOutcome) -> (Oid, Vec<PathBuf>, String, String, bool) {
    match outcome {
        CommitOutcome::Committed {
            id,
            files,
            message,
            reference,
            worktree_updated,
        } => (
            Oid::from_str(&id).unwrap(),
            files,
            message,
            reference,
            worktree_updated,
        ),
        CommitOutcome::NothingToCommit => panic!("expected a commit"),
    }
}

const V1_PATHS: [&str; 4] = [
    "out/ml-prod/kustomization.yaml",
    "out/ml-prod/nodepool-od.yaml",
    "out/ml-prod/nodepool-spot.yaml",
    "out/ml-prod/poddisruptionbudget-llm.yaml",
];

#[test]
fn commit_makes_one_commit_with_exactly_the_out_files_and_leaves_user_work_alone() {
    let f = Fixture::new(false);
    let before = f.head().unwrap();
    // The user's work in progress: an unstaged edit, an untracked file, a staged edit, a staged new file, and a
    // staged edit with a further unstaged edit on top.
    f.write("notes.txt", "notes v2 (unstaged)\n");
    f.write("untracked.txt", "untracked\n");
    f.write("staged.txt", "staged v2\n");
    f.write("new-staged.txt", "new and staged\n");
    f.stage(&["staged.txt", "new-staged.txt"]);
    f.write("README.md", "# infra v2 staged\n");
    f.stage(&["README.md"]);
    f.write("README.md", "# infra v3 unstaged on top\n");

    let (id, files, message, reference, worktree_updated) =
        committed(f.commit(&tree_v1(), &opts()).unwrap());

    // Exactly one new commit on the checked-out branch, parent = previous HEAD.
    assert_eq!(f.head(), Some(id));
    assert_eq!(reference, f.head_branch());
    assert!(worktree_updated);
    let c = f.repo.find_commit(id).unwrap();
    assert_eq!(c.parent_ids().collect::<Vec<_>>(), vec![before]);
    // Exactly the out/ files.
    assert_eq!(f.commit_paths(id), V1_PATHS);
    assert_eq!(
        files,
        V1_PATHS.iter().map(PathBuf::from).collect::<Vec<_>>()
    );
    // Committed content = tree content; the user's files in the commit are still the old committed versions.
    assert_eq!(
        f.blob_at(id, "out/ml-prod/nodepool-spot.yaml").unwrap(),
        tree_v1().files[Path::new("ml-prod/nodepool-spot.yaml")]
    );
    assert_eq!(f.blob_at(id, "staged.txt").unwrap(), "staged v1\n");
    assert_eq!(f.blob_at(id, "README.md").unwrap(), "# infra\n");
    assert_eq!(f.blob_at(id, "new-staged.txt"), None);
    assert_eq!(c.message().unwrap(), message);
    assert!(
        message.starts_with("gpuplan: ml-prod: 4 added"),
        "{message}"
    );
    assert!(message.contains("\n- NodePool spot: added"), "{message}");

    // The user's work tree and index are exactly as before.
    assert_eq!(f.read("notes.txt"), b"notes v2 (unstaged)\n");
    assert_eq!(f.read("untracked.txt"), b"untracked\n");
    assert_eq!(f.read("staged.txt"), b"staged v2\n");
    assert_eq!(f.read("new-staged.txt"), b"new and staged\n");
    assert_eq!(f.read("README.md"), b"# infra v3 unstaged on top\n");
    assert_eq!(f.status("notes.txt"), Status::WT_MODIFIED);
    assert_eq!(f.status("untracked.txt"), Status::WT_NEW);
    assert_eq!(f.status("staged.txt"), Status::INDEX_MODIFIED);
    assert_eq!(f.status("new-staged.txt"), Status::INDEX_NEW);
    assert_eq!(
        f.status("README.md"),
        Status::INDEX_MODIFIED | Status::WT_MODIFIED
    );
    // The staged README content is still the staged one.
    let index = f.repo.index().unwrap();
    let staged = index.get_path(Path::new("README.md"), 0).unwrap();
    assert_eq!(
        f.repo.find_blob(staged.id).unwrap().content(),
        b"# infra v2 staged\n"
    );
    // Our files are clean.
    for p in V1_PATHS {
        assert_eq!(f.status(p), Status::CURRENT, "{p}");
        let rel = p.strip_prefix("out/").unwrap();
        assert_eq!(
            fs::read_to_string(f.dir.join(p)).unwrap(),
            tree_v1().files[Path::new(rel)]
        );
    }
}

#[test]
fn second_commit_without_changes_is_nothing_to_commit() {
    let f = Fixture::new(false);
    committed(f.commit(&tree_v1(), &opts()).unwrap());
    let head = f.head();
    assert_eq!(
        f.commit(&tree_v1(), &opts()).unwrap(),
        CommitOutcome::NothingToCommit
    );
    assert_eq!(f.head(), head);
    // Deleting out/ by hand and committing the same tree restores it without a commit.
    fs::remove_dir_all(f.out()).unwrap();
    assert_eq!(
        f.commit(&tree_v1(), &opts()).unwrap(),
        CommitOutcome::NothingToCommit
    );
    assert_eq!(f.head(), head);
    assert!(f.out().join("ml-prod/nodepool-spot.yaml").exists());
    for p in V1_PATHS {
        assert_eq!(f.status(p), Status::CURRENT, "{p}");
    }
}

#[test]
fn compile_then_commit_commits_relative_to_head() {
    let f = Fixture::new(false);
    // `gpuplan compile` wrote out/ already; commit must still commit it.
    write_tree(&f.out(), &tree_v1()).unwrap();
    let (id, files, ..) = committed(f.commit(&tree_v1(), &opts()).unwrap());
    assert_eq!(files.len(), 4);
    assert_eq!(f.commit_paths(id), V1_PATHS);
}

#[test]
fn deleted_outputs_are_committed_as_deletions() {
    let f = Fixture::new(false);
    committed(f.commit(&tree_v1(), &opts()).unwrap());
    let (id, files, message, ..) = committed(f.commit(&tree_v2(), &opts()).unwrap());
    assert_eq!(
        files,
        vec![
            PathBuf::from("out/ml-prod/kustomization.yaml"),
            PathBuf::from("out/ml-prod/nodepool-spot.yaml"),
            PathBuf::from("out/ml-prod/poddisruptionbudget-llm.yaml"),
        ]
    );
    assert_eq!(
        f.blob_at(id, "out/ml-prod/poddisruptionbudget-llm.yaml"),
        None
    );
    assert!(
        !f.out()
            .join("ml-prod/poddisruptionbudget-llm.yaml")
            .exists()
    );
    // Gone from HEAD, index and work tree: git has no status for it at all.
    let st = f
        .repo
        .status_file(Path::new("out/ml-prod/poddisruptionbudget-llm.yaml"));
    assert_eq!(st.unwrap_err().code(), git2::ErrorCode::NotFound);
    let mut so = git2::StatusOptions::new();
    so.include_untracked(true);
    let dirty: Vec<String> = f
        .repo
        .statuses(Some(&mut so))
        .unwrap()
        .iter()
        .filter_map(|e| e.path().ok().map(str::to_owned))
        .collect();
    assert!(dirty.is_empty(), "{dirty:?}");
    assert!(
        f.repo
            .index()
            .unwrap()
            .get_path(Path::new("out/ml-prod/poddisruptionbudget-llm.yaml"), 0)
            .is_none()
    );
    // The message summarises the semantic diff.
    assert!(
        message.starts_with("gpuplan: ml-prod: 2 changed, 1 removed, worst case +$18.40/h\n\n"),
        "{message}"
    );
    assert!(
        message.contains(
            "- NodePool spot: limit nvidia.com/gpu 40→48, worst case (steady state) $/h 112.00→130.40 (+18.40)\n"
        ),
        "{message}"
    );
    assert!(
        message.contains("- PodDisruptionBudget inference/llm: removed\n"),
        "{message}"
    );
    assert!(
        message.contains("Worst case $/h ml-prod: 124.80 → 143.20"),
        "{message}"
    );
}

#[test]
fn refuses_on_hand_edit_and_keeps_it_then_force_overrides() {
    let f = Fixture::new(false);
    committed(f.commit(&tree_v1(), &opts()).unwrap());
    let head = f.head();
    let spot = "out/ml-prod/nodepool-spot.yaml";
    let edited = String::from_utf8(f.read(spot))
        .unwrap()
        .replace("\"40\"", "\"64\"");
    f.write(spot, &edited);
    f.write("out/ml-prod/extra-by-hand.yaml", "kind: ConfigMap\n");

    let err = f.commit(&tree_v2(), &opts()).unwrap_err();
    match &err {
        GitopsError::HandEdited { files, .. } => {
            let got: Vec<(PathBuf, HeaderStatus)> =
                files.iter().map(|e| (e.path.clone(), e.status)).collect();
            assert_eq!(
                got,
                vec![
                    (
                        PathBuf::from("ml-prod/extra-by-hand.yaml"),
                        HeaderStatus::NotGenerated
                    ),
                    (
                        PathBuf::from("ml-prod/nodepool-spot.yaml"),
                        HeaderStatus::HandEdited
                    ),
                ]
            );
        }
        other => panic!("expected HandEdited, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("nodepool-spot.yaml")
            && msg.contains("extra-by-hand.yaml")
            && msg.contains("--force"),
        "{msg}"
    );
    // Nothing changed: the edit is kept, no other out/ file was rewritten, no commit.
    assert_eq!(f.read(spot), edited.as_bytes());
    assert_eq!(
        f.read("out/ml-prod/extra-by-hand.yaml"),
        b"kind: ConfigMap\n"
    );
    assert!(
        f.out()
            .join("ml-prod/poddisruptionbudget-llm.yaml")
            .exists()
    );
    assert_eq!(f.head(), head);
    assert_eq!(f.status(spot), Status::WT_MODIFIED);

    // --force overwrites and commits.
    let (id, files, ..) = committed(
        f.commit(
            &tree_v2(),
            &CommitOptions {
                force: true,
                ..opts()
            },
        )
        .unwrap(),
    );
    assert_eq!(f.head(), Some(id));
    assert_eq!(
        f.read(spot),
        tree_v2().files[Path::new("ml-prod/nodepool-spot.yaml")].as_bytes()
    );
    assert!(!f.out().join("ml-prod/extra-by-hand.yaml").exists());
    assert!(files.contains(&PathBuf::from("out/ml-prod/nodepool-spot.yaml")));
    assert!(
        !files.contains(&PathBuf::from("out/ml-prod/extra-by-hand.yaml")),
        "untracked foreign file was never committed"
    );
    assert_eq!(f.status(spot), Status::CURRENT);
}

#[test]
fn first_commit_in_a_repository_without_commits() {
    let f = Fixture::new(true);
    f.write("untracked.txt", "mine\n");
    f.write("staged-first.txt", "staged before the first commit\n");
    f.stage(&["staged-first.txt"]);
    assert!(f.head().is_none());
    let (id, files, _, reference, _) = committed(f.commit(&tree_v1(), &opts()).unwrap());
    assert_eq!(f.head(), Some(id));
    assert_eq!(reference, f.head_branch());
    assert_eq!(f.repo.find_commit(id).unwrap().parent_count(), 0);
    assert_eq!(f.commit_paths(id), V1_PATHS);
    assert_eq!(files.len(), 4);
    assert_eq!(f.status("untracked.txt"), Status::WT_NEW);
    assert_eq!(f.status("staged-first.txt"), Status::INDEX_NEW);
    assert_eq!(f.read("untracked.txt"), b"mine\n");
    // And an empty tree in an empty repository is nothing to commit.
    let g = Fixture::new(true);
    assert_eq!(
        g.commit(&OutputTree::default(), &opts()).unwrap(),
        CommitOutcome::NothingToCommit
    );
    assert!(g.head().is_none());
}

#[test]
fn extra_paths_are_committed_with_out_and_nothing_else() {
    let f = Fixture::new(false);
    f.write("catalogs/snapshot.json", "{\"v\":2}\n");
    f.write("notes.txt", "unrelated edit\n");
    let o = CommitOptions {
        extra_paths: vec![PathBuf::from("catalogs/snapshot.json")],
        ..opts()
    };
    let (id, files, message, ..) = committed(f.commit(&tree_v1(), &o).unwrap());
    let mut expected: Vec<String> = V1_PATHS.iter().map(|s| s.to_string()).collect();
    expected.insert(0, "catalogs/snapshot.json".into());
    assert_eq!(f.commit_paths(id), expected);
    assert_eq!(files.len(), 5);
    assert!(message.contains("\n- catalogs/snapshot.json"), "{message}");
    assert_eq!(f.status("catalogs/snapshot.json"), Status::CURRENT);
    assert_eq!(f.status("notes.txt"), Status::WT_MODIFIED);
    // An unchanged extra path is not part of the next commit; a deleted one is committed as a deletion.
    fs::remove_file(f.dir.join("catalogs/snapshot.json")).unwrap();
    let (id2, files2, ..) = committed(f.commit(&tree_v1(), &o).unwrap());
    assert_eq!(files2, vec![PathBuf::from("catalogs/snapshot.json")]);
    assert_eq!(f.blob_at(id2, "catalogs/snapshot.json"), None);
    // Paths outside the repository are refused.
    let bad = CommitOptions {
        extra_paths: vec![PathBuf::from("../x")],
        ..opts()
    };
    assert!(matches!(
        f.commit(&tree_v1(), &bad),
        Err(GitopsError::InvalidExtraPath { .. })
    ));
}

#[test]
fn explicit_message_is_used() {
    let f = Fixture::new(false);
    let o = CommitOptions {
        message: Some("chore: regenerate GPU capacity".into()),
        ..opts()
    };
    let (id, _, message, ..) = committed(f.commit(&tree_v1(), &o).unwrap());
    assert_eq!(message, "chore: regenerate GPU capacity");
    assert_eq!(
        f.repo.find_commit(id).unwrap().message().unwrap(),
        "chore: regenerate GPU capacity"
    );
}

#[test]
fn branch_not_checked_out_gets_the_commit_and_the_work_tree_is_untouched() {
    let f = Fixture::new(false);
    let main = f.head().unwrap();
    let main_ref = f.head_branch();
    f.write("notes.txt", "wip\n");
    let o = CommitOptions {
        branch: Some("gpuplan/update".into()),
        ..opts()
    };

    let (id, files, _, reference, worktree_updated) = committed(f.commit(&tree_v1(), &o).unwrap());
    assert_eq!(reference, "refs/heads/gpuplan/update");
    assert!(!worktree_updated);
    assert_eq!(files.len(), 4);
    // HEAD, the checked-out branch, the work tree and the index are untouched.
    assert_eq!(f.head(), Some(main));
    assert_eq!(f.head_branch(), main_ref);
    assert!(!f.out().exists());
    assert_eq!(f.read("notes.txt"), b"wip\n");
    assert!(
        f.repo
            .index()
            .unwrap()
            .get_path(Path::new("out/ml-prod/nodepool-spot.yaml"), 0)
            .is_none()
    );
    // The branch was created from HEAD.
    let b = f
        .repo
        .find_reference("refs/heads/gpuplan/update")
        .unwrap()
        .target()
        .unwrap();
    assert_eq!(b, id);
    assert_eq!(
        f.repo
            .find_commit(id)
            .unwrap()
            .parent_ids()
            .collect::<Vec<_>>(),
        vec![main]
    );
    assert_eq!(f.commit_paths(id), V1_PATHS);

    // The next run extends the branch.
    let (id2, files2, ..) = committed(f.commit(&tree_v2(), &o).unwrap());
    assert_eq!(
        f.repo
            .find_commit(id2)
            .unwrap()
            .parent_ids()
            .collect::<Vec<_>>(),
        vec![id]
    );
    assert_eq!(files2.len(), 3);
    assert_eq!(
        f.commit(&tree_v2(), &o).unwrap(),
        CommitOutcome::NothingToCommit
    );
    assert_eq!(f.head(), Some(main));

    // Branch = the checked-out branch behaves like no branch: work tree written, HEAD moves.
    let current = main_ref.strip_prefix("refs/heads/").unwrap().to_owned();
    let o2 = CommitOptions {
        branch: Some(current),
        ..opts()
    };
    let (id3, _, _, reference3, worktree3) = committed(f.commit(&tree_v1(), &o2).unwrap());
    assert_eq!(f.head(), Some(id3));
    assert_eq!(reference3, main_ref);
    assert!(worktree3);
    assert!(f.out().join("ml-prod/nodepool-spot.yaml").exists());

    // Invalid names are refused.
    let bad = CommitOptions {
        branch: Some("no..dots".into()),
        ..opts()
    };
    assert!(matches!(
        f.commit(&tree_v1(), &bad),
        Err(GitopsError::InvalidBranch(_))
    ));
}

#[test]
fn branch_with_hand_edited_committed_output_is_refused() {
    let f = Fixture::new(false);
    let o = CommitOptions {
        branch: Some("gpuplan/update".into()),
        ..opts()
    };
    let (id, ..) = committed(f.commit(&tree_v1(), &o).unwrap());
    // Someone pushes a hand edit to the branch.
    let commit = f.repo.find_commit(id).unwrap();
    let mut idx = git2::Index::new().unwrap();
    idx.read_tree(&commit.tree().unwrap()).unwrap();
    let blob = f.repo.blob(b"# Code generated by gpuplan from x. DO NOT EDIT.\n# gpuplan-digest: sha256:0000\nkind: X\n").unwrap();
    let mut entry = idx
        .get_path(Path::new("out/ml-prod/nodepool-od.yaml"), 0)
        .unwrap();
    entry.id = blob;
    idx.add(&entry).unwrap();
    let tree = f
        .repo
        .find_tree(idx.write_tree_to(&f.repo).unwrap())
        .unwrap();
    let sig = f.repo.signature().unwrap();
    let edited = f
        .repo
        .commit(
            Some("refs/heads/gpuplan/update"),
            &sig,
            &sig,
            "hand edit",
            &tree,
            &[&commit],
        )
        .unwrap();

    let err = f.commit(&tree_v2(), &o).unwrap_err();
    assert!(
        matches!(&err, GitopsError::HandEdited { files, .. } if files.len() == 1 && files[0].path == Path::new("ml-prod/nodepool-od.yaml")),
        "{err}"
    );
    assert_eq!(
        f.repo
            .find_reference("refs/heads/gpuplan/update")
            .unwrap()
            .target(),
        Some(edited)
    );
    let forced = committed(
        f.commit(&tree_v2(), &CommitOptions { force: true, ..o })
            .unwrap(),
    );
    assert_eq!(
        f.repo
            .find_commit(forced.0)
            .unwrap()
            .parent_ids()
            .collect::<Vec<_>>(),
        vec![edited]
    );
}

#[test]
fn detached_head_moves_head_only() {
    let f = Fixture::new(false);
    let main_ref = f.head_branch();
    let main = f.head().unwrap();
    f.repo.set_head_detached(main).unwrap();
    let (id, _, _, reference, _) = committed(f.commit(&tree_v1(), &opts()).unwrap());
    assert_eq!(reference, "HEAD");
    assert!(f.repo.head_detached().unwrap());
    assert_eq!(f.head(), Some(id));
    assert_eq!(
        f.repo.find_reference(&main_ref).unwrap().target(),
        Some(main)
    );
}

#[test]
fn out_dir_outside_the_repository_is_refused() {
    let f = Fixture::new(false);
    let elsewhere = tempfile::tempdir().unwrap();
    let err = commit(&f.dir, &elsewhere.path().join("out"), &tree_v1(), &opts()).unwrap_err();
    assert!(
        matches!(err, GitopsError::OutsideRepository { .. }),
        "{err}"
    );
    // The repository root itself is refused too (it would replace the whole work tree).
    let err = commit(&f.dir, &f.dir, &tree_v1(), &opts()).unwrap_err();
    assert!(
        matches!(err, GitopsError::OutsideRepository { .. }),
        "{err}"
    );
    assert!(!elsewhere.path().join("out").exists());
    // Not a repository at all.
    let err = commit(
        elsewhere.path(),
        &elsewhere.path().join("out"),
        &tree_v1(),
        &opts(),
    )
    .unwrap_err();
    assert!(matches!(err, GitopsError::NotARepository { .. }), "{err}");
}

/// v1 with the on-demand NodePool gone (a renamed pool, or a preset change that renames its NodePools).
fn tree_without_od() -> OutputTree {
    let mut t = tree_v1();
    t.files.remove(Path::new("ml-prod/nodepool-od.yaml"));
    gpuplan::render::kustomization::add_kustomizations(&mut t, &Default::default());
    t
}

/// Deleting a NodePool deletes every node it launched at once, without its disruption budgets (karpenter.sh docs,
/// concepts/disruption "Manual"): `commit` names the NodePool and its limit and changes nothing.
#[test]
fn commit_refuses_a_change_that_removes_a_nodepool_and_names_it() {
    let f = Fixture::new(false);
    let first = committed(f.commit(&tree_v1(), &opts()).unwrap()).0;
    let err = f.commit(&tree_without_od(), &opts()).unwrap_err().to_string();
    assert!(err.contains("removes 1 NodePool(s):\n  NodePool od in cluster ml-prod (limit nvidia.com/gpu 8)"), "{err}");
    assert!(err.contains("pass --allow-removal"), "{err}");
    assert_eq!(f.head(), Some(first), "no commit");
    assert!(f.out().join("ml-prod/nodepool-od.yaml").exists(), "out/ untouched");
}

#[test]
fn commit_removes_a_nodepool_with_allow_removal() {
    let f = Fixture::new(false);
    committed(f.commit(&tree_v1(), &opts()).unwrap());
    let o = CommitOptions { allow_removal: true, ..opts() };
    let (id, ..) = committed(f.commit(&tree_without_od(), &o).unwrap());
    assert_eq!(f.blob_at(id, "out/ml-prod/nodepool-od.yaml"), None);
}

#[test]
fn markdown_diff_warns_about_a_removed_nodepool_with_its_limit() {
    let md = gpuplan::emit::diff::render_markdown(&tree_v1(), &tree_without_od());
    assert!(md.contains("> [!WARNING]\n> This change removes 1 NodePool(s): deleting a NodePool deletes all its nodes at once"), "{md}");
    assert!(md.contains("> - NodePool od in cluster ml-prod (limit nvidia.com/gpu 8)"), "{md}");
}

/// The library's side of `commit --include-inputs`: an input with changes HEAD does not hold (here untracked) is
/// refused by name before anything is written; with `include_inputs` it is committed with out/ in one commit.
#[test]
fn uncommitted_inputs_are_refused_by_name_and_included_on_request() {
    let f = Fixture::new(false);
    f.write("profiles/ml.kdl", "cluster \"ml-prod\" {}\n");
    let before = f.head().unwrap();
    let o = CommitOptions { inputs: vec![PathBuf::from("profiles/ml.kdl")], ..opts() };
    match f.commit(&tree_v1(), &o) {
        Err(e @ GitopsError::UncommittedInputs(_)) => assert!(e.to_string().contains("  profiles/ml.kdl (untracked)"), "{e}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(f.head().unwrap(), before, "nothing committed");
    assert!(!f.dir.join("out").exists(), "out/ not written");
    let (id, files, ..) = committed(f.commit(&tree_v1(), &CommitOptions { include_inputs: true, ..o }).unwrap());
    assert!(files.contains(&PathBuf::from("profiles/ml.kdl")), "{files:?}");
    let mut expected: Vec<String> = V1_PATHS.iter().map(|s| s.to_string()).collect();
    expected.push("profiles/ml.kdl".into());
    assert_eq!(f.commit_paths(id), expected);
}
