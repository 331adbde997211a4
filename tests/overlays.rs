//! `overlay` blocks (issue 19 item 2: NodeOverlays as profile input): what Karpenter does with a NodeOverlay, as the
//! solver, the rendered output, `simulate` and the errors see it. Karpenter semantics cited per test
//! (kubernetes-sigs/karpenter v1.14.1).

use std::path::Path;
use std::process::Command;

use gpuplan::compile::{compile, Compilation, CompileError, CompileOptions};
use gpuplan::solve::PoolPlan;

const CLUSTER: &str = "cluster \"c\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\n";

/// An on-demand pool of single-GPU A10G/L4 types: g6.xlarge ($0.8048/h) is the cheapest at list price, g5.xlarge
/// ($1.006/h) second.
fn pool_with(overlay: &str) -> String {
    format!("{CLUSTER}pool \"infer\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"A10G\" \"L4\"; per-node max=1; }}\n    max-accelerators 4\n{overlay}}}\n")
}

const G5_DISCOUNT: &str = "    overlay \"g5-discount\" {\n        price-adjustment \"-40%\"\n        require \"karpenter.k8s.aws/instance-family\" \"In\" \"g5\"\n    }\n";

fn compile_dir(dir: &Path, profile: &str) -> Result<Compilation, CompileError> {
    std::fs::write(dir.join("p.kdl"), profile).unwrap();
    compile(&CompileOptions { profiles: vec![dir.to_path_buf()], catalogs_dir: dir.join("none"), templates_dir: None })
}

fn solve(profile: &str) -> Compilation {
    let dir = tempfile::tempdir().unwrap();
    match compile_dir(dir.path(), profile) {
        Ok(c) => c,
        Err(CompileError::Profiles { diagnostics }) => panic!("{}", gpuplan::diagnostic::render_plain(&diagnostics)),
        Err(e) => panic!("{e}"),
    }
}

/// (code, location, message, help) of a profile that must not compile.
fn rejected(profile: &str) -> Vec<(String, String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    match compile_dir(dir.path(), profile) {
        Err(CompileError::Profiles { diagnostics }) => diagnostics.iter().map(|d| (d.code.to_string(), d.location.clone(), d.message.clone(), d.help.clone().unwrap_or_default())).collect(),
        Ok(_) => panic!("compiled: {profile}"),
        Err(e) => panic!("{e}"),
    }
}

fn pool<'a>(c: &'a Compilation, name: &str) -> &'a PoolPlan {
    c.plan.clusters.iter().flat_map(|c| &c.pools).find(|p| p.name == name).unwrap_or_else(|| panic!("no pool {name}"))
}

fn generated<'a>(c: &'a Compilation, file: &str) -> &'a str {
    c.generated.iter().find(|g| g.path.to_string_lossy().ends_with(file)).map(|g| g.text.as_str()).unwrap_or_else(|| panic!("no {file}"))
}

/// Karpenter orders a NodePool's types by their cheapest offering after overlays (pkg/cloudprovider/types.go
/// `OrderByPrice` over `InstanceTypeStore.ApplyAll`; `AdjustedPrice`: -40% scales by 0.6), so g5.xlarge at
/// $1.006 × 0.6 = $0.6036 now ranks before g6.xlarge at $0.8048. The bill is EC2's: every worst-case price stays the
/// list (on-demand) price, and the bound is the limit at the priciest admitted type's list price.
#[test]
fn a_price_overlay_makes_the_pool_launch_the_discounted_type_and_keeps_the_bound_at_list_price() {
    let plain = solve(&pool_with(""));
    assert_eq!(pool(&plain, "infer").candidates[0].name, "g6.xlarge");
    let c = solve(&pool_with(G5_DISCOUNT));
    let p = pool(&c, "infer");
    let first = &p.candidates[0];
    assert_eq!((first.name.as_str(), first.overlay.as_deref()), ("g5.xlarge", Some("overlay g5-discount (price-adjustment -40%)")));
    assert!((first.usd_per_accelerator_hour - 0.6036).abs() < 1e-9, "{first:?}");
    let catalog = gpuplan::catalog::Catalog::load(Path::new("none"), "us-east-1").unwrap();
    for cand in p.candidates.iter() {
        let list = catalog.get(&cand.name).and_then(|t| t.on_demand.as_ref()).unwrap().usd_per_hour;
        assert_eq!((cand.usd_per_hour, cand.ceiling_usd_per_hour), (list, list), "{} keeps its list price in the cost figures", cand.name);
    }
    // Each node at its list price plus its EBS volumes (`catalog::ebs`).
    let priciest = p.candidates.iter().map(|c| c.ceiling_usd_per_hour).fold(0.0, f64::max) + p.node_storage_usd_per_hour;
    assert!((p.worst_case_usd_per_hour - 4.0 * priciest).abs() < 0.005, "{} vs 4 × {priciest} (to the cent)", p.worst_case_usd_per_hour);
    assert!(p.candidates.iter().any(|c| c.name == "g5.2xlarge" && c.ceiling_usd_per_hour > 1.2), "the discounted g5.2xlarge is admitted and bounded at its list $1.212");
}

/// The NodeOverlay is scoped to the pool's NodePools (an unscoped overlay applies to every compatible NodePool:
/// pkg/controllers/nodeoverlay/controller.go `getOverlaidOfferings`), and the kustomization's prerequisites name the
/// feature gate without which Karpenter ignores it.
#[test]
fn a_pool_overlay_renders_one_nodeoverlay_scoped_to_every_nodepool_of_the_pool_and_names_the_gate() {
    let profile = format!("{CLUSTER}pool \"llm\" preset=\"inference-spot\" {{\n    gpu {{ name \"A10G\" \"L4\"; per-node max=1; }}\n    max-accelerators 4\n{G5_DISCOUNT}}}\npool \"other\" preset=\"inference-on-demand\" {{\n    gpu {{ name \"L4\"; per-node max=1; }}\n    max-accelerators 2\n}}\n");
    let c = solve(&profile);
    let overlay = generated(&c, "nodeoverlay-g5-discount.yaml");
    assert!(overlay.contains("  - key: karpenter.sh/nodepool\n    operator: In\n    values:\n    - llm-on-demand\n    - llm-spot\n"), "{overlay}");
    assert!(overlay.contains("priceAdjustment: -40%") && overlay.contains("- g5\n"), "{overlay}");
    assert_eq!(c.generated.iter().filter(|g| g.kind == "NodeOverlay").count(), 1);
    let kustomization = &c.output_tree().files[Path::new("c/kustomization.yaml")];
    assert!(kustomization.contains("Karpenter feature gate NodeOverlay=true (settings.featureGates.nodeOverlay; off by default: turn it on): overlay blocks: g5-discount"), "{kustomization}");
    // The other pool's ranking is untouched.
    assert!(pool(&c, "other").candidates.iter().all(|c| c.overlay.is_none()));
}

/// A block inside a `tier` applies to that tier's NodePool only.
#[test]
fn a_tier_overlay_is_scoped_to_that_tier_alone() {
    let profile = format!("{CLUSTER}pool \"x\" preset=\"tiered\" {{\n    gpu {{ name \"A10G\" \"L4\"; per-node max=1; }}\n    max-accelerators 4\n    tier \"a\" capacity=\"on-demand\" {{\n{G5_DISCOUNT}    }}\n    tier \"b\" capacity=\"spot\" {{ }}\n}}\n");
    let c = solve(&profile);
    assert!(generated(&c, "nodeoverlay-g5-discount.yaml").contains("    values:\n    - x-a\n  - key"));
    assert_eq!(pool(&c, "x-a").candidates[0].name, "g5.xlarge");
    assert!(pool(&c, "x-b").candidates.iter().all(|c| c.overlay.is_none()));
}

/// A capacity overlay on the pool's GPU resource tells Karpenter each node offers that many (as the blueprints'
/// time-slicing overlays do): gpuplan counts them as the type's units, so the limit is in those units, a cpu limit
/// caps the physical nodes, and gpuplan writes no sharing overlay of its own beside the user's.
#[test]
fn a_capacity_overlay_on_the_gpu_resource_counts_as_units_like_time_slicing() {
    let overlay = "    overlay \"slices\" {\n        weight 10\n        capacity \"nvidia.com/gpu\" \"4\"\n        require \"karpenter.k8s.aws/instance-gpu-count\" \"In\" \"1\"\n    }\n";
    let c = solve(&pool_with(overlay));
    let p = pool(&c, "infer");
    assert!(p.candidates.iter().all(|c| c.units == 4 && c.accelerators == 1), "{:?}", p.candidates.iter().map(|c| (&c.name, c.units)).collect::<Vec<_>>());
    assert_eq!(p.limit, 16, "max-accelerators 4 × 4 units");
    assert!(p.cpu_limit.is_some(), "the cpu backstop bounds the physical nodes while Karpenter counts physical GPUs");
    let overlays: Vec<&str> = c.generated.iter().filter(|g| g.kind == "NodeOverlay").map(|g| g.path.to_str().unwrap()).collect();
    assert_eq!(overlays, vec!["c/nodeoverlay-slices.yaml"]);
    assert!(generated(&c, "nodeoverlay-slices.yaml").contains("nvidia.com/gpu: \"4\""));
    // Lint's cost check reads the same units: GP012 (cost annotation ≠ the rendered NodePool's cost) used to fire here.
    let codes: Vec<&str> = c.findings.iter().map(|f| f.code).collect();
    assert!(!codes.contains(&"GP012"), "{codes:?}");
}

/// The NodeOverlay CRD's rules (x-kubernetes-validations: price vs priceAdjustment, the patterns, restricted keys and
/// resources) and v1alpha1 `RuntimeValidate` (`WellKnownResources`), each a located error at the profile.
#[test]
fn overlay_blocks_refuse_what_karpenter_refuses_with_located_errors() {
    let cases: [(&str, &str, &str); 12] = [
        ("overlay \"o\" { weight 5; }", "E0290", "add price"),
        ("overlay \"o\" { price \"1.0\"; price-adjustment \"-10%\"; }", "E0291", "keep one line"),
        ("overlay \"o\" { price \"-1\"; }", "E0292", "price-adjustment"),
        ("overlay \"o\" { price-adjustment \"-150%\"; }", "E0292", "-30%"),
        ("overlay \"o\" { price-adjustment \"10%\"; }", "E0292", "+10%"),
        ("overlay \"o\" { capacity \"memory\" \"1Gi\"; }", "E0293", "limits"),
        // Below one accelerator the nodes would offer none and every GPU pod would pend (the pool is sized for them).
        ("overlay \"o\" { capacity \"nvidia.com/gpu\" \"0\"; }", "E0293", "at least 1"),
        ("overlay \"o\" { capacity \"nvidia.com/gpu\" \"500m\"; }", "E0293", "at least 1"),
        ("overlay \"o\" { price \"1\"; require \"karpenter.sh/nodepool\" \"In\" \"x\"; }", "E0294", "move the block"),
        ("overlay \"o\" { price \"1\"; require \"karpenter.k8s.aws/instance-famly\" \"In\" \"g5\"; }", "E0294", "karpenter.k8s.aws/instance-family"),
        ("overlay \"o\" { price \"1\"; require \"kubernetes.io/hostname\" \"In\" \"n\"; }", "E0294", ""),
        ("overlay \"o\" { price \"1\"; require \"karpenter.k8s.aws/instance-cpu\" \"Gt\" \"eight\"; }", "E0283", ""),
    ];
    for (line, code, help) in cases {
        let found = rejected(&pool_with(&format!("    {line}\n")));
        let d = found.iter().find(|d| d.0 == code).unwrap_or_else(|| panic!("{line}: no {code} in {found:?}"));
        assert!(d.1.contains(":9:"), "{line}: located on its line: {d:?}");
        assert!(d.3.contains(help), "{line}: {d:?}");
    }
}

#[test]
fn two_overlays_of_one_name_are_e0295_and_gpu_capacity_on_a_time_sliced_pool_is_e0296() {
    let twice = format!("{CLUSTER}pool \"a\" {{\n    max-accelerators 4\n    overlay \"o\" {{ price \"1\"; }}\n}}\npool \"b\" {{\n    max-accelerators 4\n    overlay \"o\" {{ price \"1\"; }}\n}}\n");
    assert!(rejected(&twice).iter().any(|d| d.0 == "E0295" && d.1.contains(":12:") && d.2.contains("first at")), "{:?}", rejected(&twice));
    let own = pool_with("    time-slicing replicas=4\n    overlay \"infer-1gpu\" { price-adjustment \"-10%\"; }\n");
    assert!(rejected(&own).iter().any(|d| d.0 == "E0295" && d.2.contains("gpuplan's own NodeOverlay for the shared GPUs of NodePool `infer`")), "{:?}", rejected(&own));
    let sliced = pool_with("    time-slicing replicas=4\n    overlay \"o\" { capacity \"nvidia.com/gpu\" \"4\"; }\n");
    assert!(rejected(&sliced).iter().any(|d| d.0 == "E0296" && d.1.contains(":10:")), "{:?}", rejected(&sliced));
}

/// Two overlays at the same weight that both price a type of one NodePool: Karpenter applies the first by name
/// (descending) and marks the other conflicting, applying it nowhere (controller.go
/// `validateAndUpdateInstanceTypeOverrides`, store.go `isOfferingUpdateConflicting`).
#[test]
fn two_overlays_pricing_one_type_at_the_same_weight_are_e0297() {
    let both = "    overlay \"a\" { price-adjustment \"-10%\"; }\n    overlay \"b\" { weight 1; price-adjustment \"-20%\"; }\n";
    assert!(solve(&pool_with(both)).plan.clusters[0].overlays.len() == 2, "different weights do not conflict");
    let tie = "    overlay \"a\" { weight 1; price-adjustment \"-10%\"; }\n    overlay \"b\" { weight 1; price-adjustment \"-20%\"; }\n";
    let found = rejected(&pool_with(tie));
    assert!(found.iter().any(|d| d.0 == "E0297" && d.2.contains("Karpenter applies `b` and ignores `a`")), "{found:?}");
}

/// A price conflict is per offering (store.go keys price updates by the offering's requirements): two overlays of one
/// weight that price other zones of the same types both apply, in Karpenter and in the compile.
#[test]
fn equal_weight_price_overlays_on_different_zones_are_not_e0297() {
    let zone = |name: &str, adjustment: &str, z: &str| format!("    overlay \"{name}\" {{\n        weight 1\n        price-adjustment \"{adjustment}\"\n        require \"topology.kubernetes.io/zone\" \"In\" \"{z}\"\n    }}\n");
    let profile = pool_with(&(zone("a", "-10%", "us-east-1a") + &zone("b", "-20%", "us-east-1b"))).replace("zones \"us-east-1a\"", "zones \"us-east-1a\" \"us-east-1b\"");
    assert_eq!(solve(&profile).plan.clusters[0].overlays.len(), 2);
}

/// Karpenter checks conflicts on every instance type of the NodeClass (controller.go `Reconcile` over
/// `GetInstanceTypes`), not only those the NodePool lists: `a` (g6) and `b` (g6.48xlarge, which a one-GPU pool never
/// lists) both price g6.48xlarge, so Karpenter drops `a`, and with it the discount on g6.xlarge. E0297 names the type.
#[test]
fn equal_weight_overlays_in_conflict_on_a_type_the_pool_does_not_list_are_e0297() {
    let overlays = "    overlay \"a\" {\n        weight 1\n        price-adjustment \"-10%\"\n        require \"karpenter.k8s.aws/instance-family\" \"In\" \"g6\"\n    }\n    overlay \"b\" {\n        weight 1\n        price-adjustment \"-20%\"\n        require \"node.kubernetes.io/instance-type\" \"In\" \"g6.48xlarge\"\n    }\n";
    let found = rejected(&pool_with(overlays));
    assert!(found.iter().any(|d| d.0 == "E0297" && d.2.contains("for g6.48xlarge (not one of the NodePool's types") && d.2.contains("Karpenter applies `b` and ignores `a`")), "{found:?}");
}

/// The rendered output, read by `gpuplan simulate` as Karpenter's manifests, launches the discounted type: the
/// simulator applies the NodeOverlay the compile wrote (simulate/instances.rs `sim_type`).
#[test]
fn simulate_launches_the_type_the_overlay_discounts_from_the_compiled_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/p.kdl"), pool_with(G5_DISCOUNT)).unwrap();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec:\n  nodeSelector: {gpuplan.dev/pool: infer}\n  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  - {key: gpuplan.dev/pool, operator: Equal, value: infer, effect: NoSchedule}\n  containers:\n  - {name: c, image: x, resources: {requests: {nvidia.com/gpu: 1, cpu: \"1\"}, limits: {nvidia.com/gpu: 1}}}\n";
    std::fs::write(dir.path().join("pod.yaml"), pod).unwrap();
    let catalogs = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).args(args).output().unwrap();
    let out = run(&["compile", "profiles", "--out", "out", "--catalogs", catalogs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["simulate", "--manifests", "out", "--pods", "pod.yaml", "--catalogs", catalogs.to_str().unwrap(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let claim = &report["nodeclaims"][0];
    assert_eq!((claim["instance_type"].as_str(), claim["nodepool"].as_str()), (Some("g5.xlarge"), Some("infer")), "{report:#}");
    // explain says why the order differs from list prices.
    let out = run(&["explain", "--catalogs", catalogs.to_str().unwrap()]);
    let explained = String::from_utf8_lossy(&out.stdout);
    assert!(explained.contains("overlay    g5.xlarge, g5.2xlarge ranked at the price of overlay g5-discount (price-adjustment -40%)"), "{explained}");
}

/// Round trip (issue 19 item 5): an output with overlay blocks (one over both NodePools of an inference-spot pool, one
/// in a tier of a tiered pool), adopted and compiled again, is the same tree byte for byte: each NodeOverlay adopts
/// into the pool or tiers it was scoped to, under its own name.
#[test]
fn adopting_an_output_with_overlay_blocks_and_compiling_reproduces_it_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("original/profiles")).unwrap();
    let profile = format!("profile \"ov\" priority=10\n{CLUSTER}pool \"llm\" preset=\"inference-spot\" {{\n    gpu {{ name \"A10G\" \"L4\"; per-node max=1; }}\n    max-accelerators 4\n    overlay \"g5-edp\" {{\n        weight 20\n        price-adjustment \"-30%\"\n        capacity \"example.com/fpga\" \"2\"\n        require \"karpenter.k8s.aws/instance-family\" \"In\" \"g5\"\n    }}\n}}\npool \"x\" preset=\"tiered\" {{\n    gpu {{ name \"A10G\" \"L4\"; per-node max=1; }}\n    max-accelerators 4\n    tier \"a\" capacity=\"on-demand\" {{\n        overlay \"g6-list\" {{ price \"0.50\"; require \"node.kubernetes.io/instance-type\" \"In\" \"g6.xlarge\"; }}\n    }}\n    tier \"b\" capacity=\"spot\" {{ }}\n}}\n");
    std::fs::write(root.join("original/profiles/ov.kdl"), profile).unwrap();
    let catalogs = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let run = |cwd: &Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(cwd).env("NO_COLOR", "1").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&root.join("original"), &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    run(root, &["adopt", "original/out", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap()]);
    let adopted = std::fs::read_to_string(root.join("profiles/ov.kdl")).unwrap();
    assert_eq!(adopted.matches("overlay \"g5-edp\" {").count(), 2, "one block per tier of llm, same name: {adopted}");
    run(root, &["compile", "--catalogs", catalogs.to_str().unwrap()]);
    let original = gpuplan::emit::read_tree(&root.join("original/out")).unwrap();
    let again = gpuplan::emit::read_tree(&root.join("out")).unwrap();
    assert!(original.files.keys().any(|p| p.ends_with("nodeoverlay-g5-edp.yaml")) && original.files.keys().any(|p| p.ends_with("nodeoverlay-g6-list.yaml")));
    for (path, text) in &original.files {
        assert_eq!(again.files.get(path), Some(text), "{} differs after adopt → compile", path.display());
    }
    assert_eq!(original.files.len(), again.files.len());
}

/// GP026: an overlay whose `require` lines select none of its NodePool's types (here a family the A10G/L4 pool does
/// not admit, and a capacity type it does not launch) changes nothing: a warning at the block, silenced by `allow`.
#[test]
fn gp026_warns_at_an_overlay_that_selects_none_of_its_nodepools_types() {
    for require in ["require \"karpenter.k8s.aws/instance-family\" \"In\" \"p5\"", "require \"karpenter.sh/capacity-type\" \"In\" \"spot\""] {
        let c = solve(&pool_with(&format!("    overlay \"idle\" {{\n        price \"0.10\"\n        {require}\n    }}\n")));
        let found: Vec<_> = c.findings.iter().filter(|f| f.code == "GP026").collect();
        assert_eq!(found.len(), 1, "{require}: {:?}", c.findings.iter().map(|f| f.code).collect::<Vec<_>>());
        assert!(found[0].diagnostic.message.starts_with("overlay `idle` selects none of NodePool `infer`'s 4 instance types"), "{}", found[0].diagnostic.message);
        assert!(found[0].diagnostic.location.contains(":9:"), "{}", found[0].diagnostic.location);
    }
    let quiet = solve(&pool_with("    allow \"GP026\"\n    overlay \"idle\" { price \"0.10\"; require \"karpenter.k8s.aws/instance-family\" \"In\" \"p5\"; }\n"));
    assert!(quiet.findings.iter().all(|f| f.code != "GP026"));
    assert!(solve(&pool_with(G5_DISCOUNT)).findings.iter().all(|f| f.code != "GP026"), "an overlay that selects g5 types is not idle");
}

/// Hand-written NodeOverlays, as Karpenter applies them (controller.go `getOverlaidOfferings`: the overlay's
/// `karpenter.sh/nodepool` and label requirements against each NodePool): one without a NodePool requirement applies to
/// both NodePools and adopts as a block in each, `<name>-<nodepool>` (names are cluster-wide); one scoped to NodePool
/// `a` adopts into `a` only, under its own name. Verified by simulation: no placement changes.
#[test]
fn a_hand_written_overlay_adopts_into_every_pool_it_applies_to_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let class = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: gpu\nspec:\n  amiSelectorTerms:\n  - alias: al2023@v20251023\n  role: KarpenterNodeRole-demo\n  subnetSelectorTerms:\n  - tags: {karpenter.sh/discovery: demo}\n  securityGroupSelectorTerms:\n  - tags: {karpenter.sh/discovery: demo}\n";
    let pool = |name: &str, weight: u32| format!("---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  weight: {weight}\n  limits:\n    nvidia.com/gpu: \"4\"\n  template:\n    metadata:\n      labels: {{team: {name}}}\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}}\n      taints:\n      - {{key: nvidia.com/gpu, effect: NoSchedule}}\n      requirements:\n      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}}\n      - {{key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"1\"]}}\n      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}\n      - {{key: kubernetes.io/arch, operator: In, values: [amd64]}}\n");
    let overlays = "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: g5-edp\nspec:\n  weight: 10\n  requirements:\n  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}\n  priceAdjustment: \"-40%\"\n---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: team-a-fpga\nspec:\n  requirements:\n  - {key: karpenter.sh/nodepool, operator: In, values: [a]}\n  capacity:\n    example.com/fpga: 1\n";
    std::fs::create_dir_all(dir.path().join("karpenter")).unwrap();
    std::fs::write(dir.path().join("karpenter/cluster.yaml"), format!("{class}{}{}{overlays}", pool("a", 20), pool("b", 10))).unwrap();
    let catalogs = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1")
        .args(["adopt", "karpenter", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--set", "CLUSTER_NAME=demo"]).output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["verification"]["changed"].as_u64(), report["verification"]["unexplained"].as_u64()), (Some(0), Some(0)), "{:#}", report["verification"]);
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
    let block = |pool: &str| {
        let start = profile.find(&format!("pool \"{pool}\"")).unwrap();
        let end = profile[start + 1..].find("\npool ").map_or(profile.len(), |e| start + 1 + e);
        profile[start..end].to_string()
    };
    assert!(block("a").contains("overlay \"g5-edp-a\" {") && block("a").contains("overlay \"team-a-fpga\" {"), "{}", block("a"));
    assert!(block("b").contains("overlay \"g5-edp-b\" {") && !block("b").contains("team-a-fpga"), "{}", block("b"));
    assert!(!profile.contains("require \"karpenter.sh/nodepool\""), "gpuplan writes the NodePool scope itself: {profile}");
}

/// Two hand-written overlays of one weight that both price g5.xlarge: Karpenter applies `g5-list` (name descending)
/// and marks `g5-edp` in conflict, applying it nowhere (v1.14.1 pkg/controllers/nodeoverlay/controller.go
/// `validateAndUpdateInstanceTypeOverrides`). adopt skips `g5-edp` with that reason (a block would be E0297), keeps
/// `g5-list`, and the verification finds no placement changed: simulate drops `g5-edp` from the originals too.
#[test]
fn a_hand_written_overlay_karpenter_drops_for_a_conflict_is_skipped_by_adopt_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let class = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: gpu\nspec:\n  amiSelectorTerms:\n  - alias: al2023@v20251023\n  role: KarpenterNodeRole-demo\n  subnetSelectorTerms:\n  - tags: {karpenter.sh/discovery: demo}\n  securityGroupSelectorTerms:\n  - tags: {karpenter.sh/discovery: demo}\n";
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: a\nspec:\n  weight: 20\n  limits:\n    nvidia.com/gpu: \"4\"\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n      taints:\n      - {key: nvidia.com/gpu, effect: NoSchedule}\n      requirements:\n      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}\n      - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"1\"]}\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n      - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n";
    let overlay = |name: &str, requirement: &str, price: &str| format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: {name}\nspec:\n  weight: 10\n  requirements:\n  - {requirement}\n{price}");
    let overlays = overlay("g5-edp", "{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}", "  priceAdjustment: \"-40%\"\n")
        + &overlay("g5-list", "{key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}", "  price: \"5\"\n");
    std::fs::create_dir_all(dir.path().join("karpenter")).unwrap();
    std::fs::write(dir.path().join("karpenter/cluster.yaml"), format!("{class}{pool}{overlays}")).unwrap();
    let catalogs = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let out = Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir.path()).env("NO_COLOR", "1")
        .args(["adopt", "karpenter", "--into", "profiles", "--catalogs", catalogs.to_str().unwrap(), "--format", "json", "--set", "CLUSTER_NAME=demo"]).output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped = report["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s.as_str().unwrap().starts_with("karpenter/cluster.yaml NodeOverlay/g5-edp (Karpenter's nodeoverlay controller finds it in conflict")), "{skipped:?}");
    assert_eq!((report["verification"]["changed"].as_u64(), report["verification"]["unexplained"].as_u64()), (Some(0), Some(0)), "{:#}", report["verification"]);
    let profile = std::fs::read_to_string(dir.path().join("profiles/gpu.kdl")).unwrap();
    assert!(profile.contains("overlay \"g5-list\" {") && !profile.contains("g5-edp"), "{profile}");
}

/// A spot pool (inference-spot: NodePools `infer-spot`, then `infer-on-demand`) over us-east-1a and us-east-1b, with
/// `overlay` in it. At list price g6.xlarge ranks first in `infer-spot` (spot $0.32192), g5.xlarge second ($0.4024).
fn spot_pool_over_two_zones(overlay: &str) -> String {
    pool_with(overlay).replace("zones \"us-east-1a\"", "zones \"us-east-1a\" \"us-east-1b\"").replace("inference-on-demand", "inference-spot")
}

/// Karpenter prices each offering on its own (v1.14.1 pkg/controllers/nodeoverlay/store.go `applyPriceOverlays`) and
/// ranks a type by its cheapest compatible offering (pkg/cloudprovider/types.go `OrderByPrice`): +100% on g6 in
/// us-east-1a leaves its us-east-1b spot offering at $0.32192, so g6.xlarge still ranks first, by an offering no
/// overlay priced. (Applied to the type's highest spot price, as the solver did, it ranked g6.xlarge at $0.64384,
/// behind g5.xlarge.)
#[test]
fn a_spot_overlay_raising_one_zone_leaves_the_type_ranked_by_its_other_zone() {
    let raise = "    overlay \"g6-a\" {\n        price-adjustment \"+100%\"\n        require \"karpenter.k8s.aws/instance-family\" \"In\" \"g6\"\n        require \"topology.kubernetes.io/zone\" \"In\" \"us-east-1a\"\n    }\n";
    let c = solve(&spot_pool_over_two_zones(raise));
    let first = &pool(&c, "infer-spot").candidates[0];
    assert_eq!((first.name.as_str(), first.overlay.as_deref()), ("g6.xlarge", None), "{first:?}");
    assert!((first.usd_per_accelerator_hour - 0.32192).abs() < 1e-9, "{first:?}");
}

/// -40% on g5 in us-east-1b only ranks g5.xlarge by that offering ($0.4024 × 0.6 = $0.24144), before g6.xlarge. The
/// ranking decides which types the price ratio admits, never what they cost: every candidate's expected price stays
/// its list spot price and its ceiling its on-demand price, and the bound is the accelerator budget at the priciest
/// admitted candidate's list ceiling.
#[test]
fn a_spot_overlay_on_one_zone_ranks_by_that_offering_and_the_bound_stays_at_list_price() {
    let discount = "    overlay \"g5-b\" {\n        price-adjustment \"-40%\"\n        require \"karpenter.k8s.aws/instance-family\" \"In\" \"g5\"\n        require \"topology.kubernetes.io/zone\" \"In\" \"us-east-1b\"\n    }\n";
    let c = solve(&spot_pool_over_two_zones(discount));
    let p = pool(&c, "infer-spot");
    let first = &p.candidates[0];
    assert_eq!((first.name.as_str(), first.overlay.as_deref()), ("g5.xlarge", Some("overlay g5-b (price-adjustment -40%)")), "{first:?}");
    assert!((first.usd_per_accelerator_hour - 0.24144).abs() < 1e-9, "{first:?}");
    let catalog = gpuplan::catalog::Catalog::load(Path::new("none"), "us-east-1").unwrap();
    for cand in p.candidates.iter() {
        let t = catalog.get(&cand.name).unwrap();
        assert_eq!((cand.usd_per_hour, cand.ceiling_usd_per_hour), (t.spot["us-east-1b"].usd_per_hour, t.on_demand.as_ref().unwrap().usd_per_hour), "{} keeps its list prices", cand.name);
    }
    let priciest = p.candidates.iter().map(|c| c.ceiling_usd_per_hour).fold(0.0, f64::max) + p.node_storage_usd_per_hour;
    assert!((p.worst_case_usd_per_hour - 4.0 * priciest).abs() < 0.005, "{} vs 4 × {priciest}", p.worst_case_usd_per_hour);
}
