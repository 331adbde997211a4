// Command oracle is a drop-in for `gpuplan simulate … --format json` that asks Karpenter v1.14.1's own scheduler
// (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling) with instance types built by the AWS provider's own
// code (github.com/aws/karpenter-provider-aws pkg/providers/instancetype/types.go), and launch filters from
// pkg/providers/instance/filter. Wiring follows sigs.k8s.io/karpenter
// pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go (fake client, state.NewCluster, NewTopology,
// NewScheduler, Solve) and pkg/controllers/provisioning/provisioner.go (NewScheduler, Schedule).
//
//	oracle simulate --manifests F… --pods F… [--daemonsets F…] [--region R] [--catalogs DIR] [--unavailable T:Z:C…] --format json
//	oracle forecast --manifests DIR… --trace trace.json [--region R] [--catalogs DIR]   (forecast.go)
//	oracle drift --cases FILE --crds DIR [--catalogs DIR] [--region R]   (drift.go)
//	oracle batch DIR   (each DIR/<case>/ holds args.json; writes DIR/<case>/oracle.json: one process for many cases)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
)

type args struct {
	Manifests []string `json:"manifests"`
	Pods      []string `json:"pods"`
	// DaemonSets from these files count beside those in Manifests and Pods (gpuplan's --daemonsets).
	DaemonSets  []string `json:"daemonsets,omitempty"`
	Region      string   `json:"region,omitempty"`
	Catalogs    string   `json:"catalogs,omitempty"`
	ENILimits   string   `json:"eni_limits,omitempty"`
	Unavailable []string `json:"unavailable,omitempty"`
	// NodeOverlay feature gate (off by default in Karpenter v1.14.1; gpuplan applies overlays).
	NodeOverlay *bool `json:"node_overlay,omitempty"`
}

func parse(argv []string) (args, error) {
	a := args{}
	var list *[]string
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		take := func() (string, error) {
			if i+1 >= len(argv) {
				return "", fmt.Errorf("%s needs a value", s)
			}
			i++
			return argv[i], nil
		}
		var err error
		switch {
		case s == "--manifests":
			list = &a.Manifests
		case s == "--pods":
			list = &a.Pods
		case s == "--daemonsets":
			list = &a.DaemonSets
		case s == "--no-add-on-daemonsets":
			// gpuplan's add-on DaemonSets are its own model of the charts; the oracle counts only the DaemonSets it
			// is given, so this flag of gpuplan's changes nothing here.
			list = nil
		case s == "--unavailable":
			list = &a.Unavailable
		case s == "--region":
			list = nil
			a.Region, err = take()
		case s == "--catalogs":
			list = nil
			a.Catalogs, err = take()
		case s == "--eni-limits":
			list = nil
			a.ENILimits, err = take()
		case s == "--format":
			list = nil
			var f string
			f, err = take()
			if err == nil && f != "json" {
				err = fmt.Errorf("only --format json is supported")
			}
		case s == "--node-overlay-gate":
			list = nil
			var v string
			v, err = take()
			b := v == "true"
			a.NodeOverlay = &b
		case strings.HasPrefix(s, "--"):
			return a, fmt.Errorf("unknown flag %s", s)
		case list != nil:
			*list = append(*list, s)
		default:
			return a, fmt.Errorf("unexpected argument %q", s)
		}
		if err != nil {
			return a, err
		}
	}
	if len(a.Manifests) == 0 {
		a.Manifests = []string{"out"}
	}
	return a, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: oracle simulate --manifests F… --pods F… [--region R] [--catalogs DIR] [--unavailable T:Z:C…] --format json | oracle batch DIR")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "simulate":
		a, err := parse(os.Args[2:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(2)
		}
		r, err := simulate(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(2)
		}
		out, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(out))
	case "forecast":
		// A replay allocates short-lived copies of every object it reads (the informer cache's deep copies, the
		// disruption controller's state copies): a sparser collector halves its CPU for a few hundred MB more.
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(800)
		}
		// Karpenter creates a provisioning round's NodeClaims in parallel goroutines (pkg/controllers/provisioning/
		// provisioner.go CreateNodeClaims: workqueue.ParallelizeUntil), and the run numbers generateName objects in
		// creation order: one processor runs those goroutines in the order they were started, so the names, and every
		// decision ordered by name, are the same on every run.
		runtime.GOMAXPROCS(1)
		defer profileCPU()()
		if err := forecastMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			pprof.StopCPUProfile()
			os.Exit(2)
		}
	case "drift":
		defer profileCPU()()
		if err := driftMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(2)
		}
	case "batch":
		defer profileCPU()()
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: oracle batch DIR")
			os.Exit(2)
		}
		if err := batch(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			pprof.StopCPUProfile()
			os.Exit(2)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

// batch runs every case directory under dir (sorted) in this one process: args.json in, oracle.json out (or
// oracle.err with the error).
func batch(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	names := []string{}
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		caseDir := filepath.Join(dir, n)
		b, err := os.ReadFile(filepath.Join(caseDir, "args.json"))
		if err != nil {
			continue
		}
		var a args
		if err := json.Unmarshal(b, &a); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		rel := func(ps []string) []string {
			out := make([]string, len(ps))
			for i, p := range ps {
				if filepath.IsAbs(p) {
					out[i] = p
				} else {
					out[i] = filepath.Join(caseDir, p)
				}
			}
			return out
		}
		a.Manifests, a.Pods, a.DaemonSets = rel(a.Manifests), rel(a.Pods), rel(a.DaemonSets)
		r, err := simulate(a)
		if err != nil {
			_ = os.WriteFile(filepath.Join(caseDir, "oracle.err"), []byte(err.Error()+"\n"), 0o644)
			continue
		}
		out, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(filepath.Join(caseDir, "oracle.json"), append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// profileCPU starts a CPU profile into $GPUPLAN_ORACLE_CPUPROFILE when it is set, and returns what stops it.
func profileCPU() func() {
	prof := os.Getenv("GPUPLAN_ORACLE_CPUPROFILE")
	if prof == "" {
		return func() {}
	}
	f, err := os.Create(prof)
	if err != nil || pprof.StartCPUProfile(f) != nil {
		return func() {}
	}
	return pprof.StopCPUProfile
}
