// Package crds finds the CustomResourceDefinitions gpuplan's output is applied against, in the pinned upstream
// modules' own files (a module download holds the repository's files at that version). The versions are the ones
// go.mod requires: this package only names the module and the paths inside it.
package crds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Source is one upstream module and the CRD files it ships.
type Source struct {
	Module string
	// Paths inside the module: files, or directories (every *.yaml in them).
	Paths []string
	// Embedded names the directory under gpuplan's src/crds/ that copies some of these files.
	Embedded string
}

// Sources are the CRDs of every kind gpuplan writes (and a few it may write: the Flux HelmRelease and its sources).
var Sources = []Source{
	// aws/karpenter-provider-aws pkg/apis/crds: the CRDs its Helm chart (charts/karpenter-crd) installs, NodePool,
	// NodeClaim and NodeOverlay (karpenter.sh) included.
	{Module: "github.com/aws/karpenter-provider-aws", Paths: []string{"pkg/apis/crds"}, Embedded: "karpenter"},
	// prometheus-operator example/prometheus-operator-crd: the CRDs of the operator's bundle.yaml.
	{Module: "github.com/prometheus-operator/prometheus-operator", Paths: []string{"example/prometheus-operator-crd"}, Embedded: "prometheus-operator"},
	// argo-cd manifests/crds/application-crd.yaml, as installed by manifests/install.yaml.
	{Module: "github.com/argoproj/argo-cd/v3", Paths: []string{"manifests/crds/application-crd.yaml", "manifests/crds/appproject-crd.yaml"}, Embedded: "argo-cd"},
	// Each Flux controller's config/crd/bases, as `flux install` applies them.
	{Module: "github.com/fluxcd/kustomize-controller", Paths: []string{"config/crd/bases"}, Embedded: "flux"},
	{Module: "github.com/fluxcd/source-controller", Paths: []string{"config/crd/bases"}, Embedded: "flux"},
	{Module: "github.com/fluxcd/helm-controller", Paths: []string{"config/crd/bases"}, Embedded: "flux"},
	// kubernetes-sigs/kueue config/components/crd/bases: the kinds gpuplan writes for `queue` blocks (its other CRDs,
	// Workload, Cohort, MultiKueue…, are no kind gpuplan writes).
	{Module: "sigs.k8s.io/kueue", Paths: []string{"config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml", "config/components/crd/bases/kueue.x-k8s.io_localqueues.yaml", "config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml"}, Embedded: "kueue"},
	// kedacore/keda config/crd/bases: the ScaledObject gpuplan writes for a workload that scales to zero or on a
	// trigger, and the TriggerAuthentication its triggers may reference (the release's keda-*-crds.yaml bundles them).
	{Module: "github.com/kedacore/keda/v2", Paths: []string{"config/crd/bases/keda.sh_scaledobjects.yaml", "config/crd/bases/keda.sh_triggerauthentications.yaml"}, Embedded: "keda"},
}

// Fallbacks are CRDs no module on the proxy serves; they are read from gpuplan's own copy (src/crds/<path>).
// NVIDIA/gpu-operator: proxy.golang.org answers 403 Forbidden "This module version is not available." for
// v26.7.0 (and every version but v1.11.1); see README.md. EKS Auto Mode's NodeClass has no published CRD at all:
// gpuplan's schema is written from the EKS User Guide (src/crds/README.md).
var Fallbacks = []string{"eks/eks.amazonaws.com_nodeclasses.yaml", "gpu-operator/nvidia.com_clusterpolicies.yaml"}

// File is one CRD file found upstream.
type File struct {
	Module, Version string
	// Rel is the path inside the module; Path the file on disk.
	Rel, Path string
	Embedded  string
}

type downloaded struct {
	Path, Version, Dir, Error string
}

// Find downloads (or finds in the module cache) the pinned modules and lists their CRD files. moduleDir is
// conformance/consumers (where go.mod is); `go mod download` checks each module against go.sum.
func Find(moduleDir string) ([]File, error) {
	args := []string{"mod", "download", "-json"}
	for _, s := range Sources {
		args = append(args, s.Module)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("go mod download: %v: %s", err, stderr.String())
	}
	dirs := map[string]downloaded{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var d downloaded
		if err := dec.Decode(&d); err != nil {
			return nil, err
		}
		if d.Error != "" {
			return nil, fmt.Errorf("%s@%s: %s (is it still required in go.mod? `go mod tidy` drops modules only read for files)", d.Path, d.Version, d.Error)
		}
		dirs[d.Path] = d
	}
	var files []File
	for _, s := range Sources {
		d, ok := dirs[s.Module]
		if !ok {
			return nil, fmt.Errorf("go mod download did not report %s", s.Module)
		}
		for _, p := range s.Paths {
			full := filepath.Join(d.Dir, p)
			st, err := os.Stat(full)
			if err != nil {
				return nil, err
			}
			var names []string
			if st.IsDir() {
				entries, err := os.ReadDir(full)
				if err != nil {
					return nil, err
				}
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".yaml") {
						names = append(names, filepath.Join(p, e.Name()))
					}
				}
			} else {
				names = []string{p}
			}
			sort.Strings(names)
			for _, n := range names {
				files = append(files, File{Module: s.Module, Version: d.Version, Rel: n, Path: filepath.Join(d.Dir, n), Embedded: s.Embedded})
			}
		}
	}
	return files, nil
}
