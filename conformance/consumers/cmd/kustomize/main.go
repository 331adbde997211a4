// Command kustomize builds each given out/<cluster>/ directory with kustomize's own build
// (sigs.k8s.io/kustomize/api/krusty, what `kubectl kustomize`, Argo CD's repo-server and Flux's kustomize-controller
// run on a directory with a kustomization.yaml) and compares the result with the files: the same set of objects
// (by apiVersion, kind, namespace, name) with the same content, as kubectl reads the files (sigs.k8s.io/yaml).
// It then checks the gitops/ objects of each directory: the Argo CD Application's source path and the Flux
// Kustomization's path must be directories of the repository (-repo) that kustomize builds, and the Flux
// Kustomization's sourceRef must name a GitRepository written beside it.
//
// One JSON line per directory and per gitops object: {"dir","file","kind","name","objects","ok","errors"}.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/conformance/consumers/internal/apiserver"
)

type result struct {
	Dir     string   `json:"dir"`
	File    string   `json:"file,omitempty"`
	Kind    string   `json:"kind,omitempty"`
	Name    string   `json:"name,omitempty"`
	Path    string   `json:"path,omitempty"`
	Objects int      `json:"objects"`
	OK      bool     `json:"ok"`
	Errors  []string `json:"errors"`
}

func main() {
	repo := flag.String("repo", ".", "the repository root the gitops paths are relative to")
	flag.Parse()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for _, dir := range flag.Args() {
		r := result{Dir: dir, Errors: []string{}}
		n, errs := compare(*repo, dir)
		r.Objects, r.Errors = n, append(r.Errors, errs...)
		r.OK = len(r.Errors) == 0
		check(enc.Encode(r))
		gitops, _ := filepath.Glob(filepath.Join(dir, "gitops", "*.yaml"))
		sort.Strings(gitops)
		objs := map[string]map[string]any{}
		var order []string
		for _, f := range gitops {
			data, err := os.ReadFile(f)
			check(err)
			docs, err := apiserver.SplitYAML(data)
			check(err)
			for _, d := range docs {
				var o map[string]any
				check(yaml.Unmarshal(d.JSON, &o))
				key := f + "#" + fmt.Sprint(d.Index)
				objs[key] = o
				order = append(order, key)
			}
		}
		for _, key := range order {
			enc.Encode(checkGitops(*repo, key, objs[key], objs))
		}
	}
}

type id struct{ apiVersion, kind, namespace, name string }

func (i id) String() string {
	return fmt.Sprintf("%s %s %s/%s", i.apiVersion, i.kind, i.namespace, i.name)
}

func idOf(o map[string]any) id {
	s := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	meta, _ := o["metadata"].(map[string]any)
	return id{s(o, "apiVersion"), s(o, "kind"), s(meta, "namespace"), s(meta, "name")}
}

// build runs kustomize's build on dir: krusty with kubectl's default options (`kubectl kustomize`, Argo CD's
// kustomize 5.8.1), or, with root set, Flux's (github.com/fluxcd/pkg/kustomize SecureBuild, as kustomize-controller
// runs it on the source artifact's root and the Kustomization's path: no file outside root, no remote bases).
func build(dir string) (map[id]map[string]any, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return objects(resMap)
}

func fluxBuild(root, dir string) (map[id]map[string]any, error) {
	resMap, err := fluxkustomize.SecureBuild(root, dir, false)
	if err != nil {
		return nil, err
	}
	return objects(resMap)
}

func objects(resMap resmap.ResMap) (map[id]map[string]any, error) {
	built := map[id]map[string]any{}
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, err
		}
		// Round-trip through JSON so that numbers compare as the files' do.
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		var o map[string]any
		if err := json.Unmarshal(b, &o); err != nil {
			return nil, err
		}
		built[idOf(o)] = o
	}
	return built, nil
}

// compare builds dir (kubectl's way and Flux's, with the repository as root) and compares each with its YAML files
// (kustomization.yaml and gitops/ excepted).
func compare(repo, dir string) (int, []string) {
	built, err := build(dir)
	if err != nil {
		return 0, []string{"kustomize build: " + err.Error()}
	}
	n, errs := compareWith("kustomize build", dir, built)
	fluxBuilt, err := fluxBuild(mustAbs(repo), mustAbs(dir))
	if err != nil {
		return n, append(errs, "flux kustomize build: "+err.Error())
	}
	_, fluxErrs := compareWith("flux kustomize build", dir, fluxBuilt)
	return n, append(errs, fluxErrs...)
}

func compareWith(what, dir string, built map[id]map[string]any) (int, []string) {
	var errs []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	sort.Strings(files)
	fromFiles := map[id]map[string]any{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, []string{err.Error()}
		}
		docs, err := apiserver.SplitYAML(data)
		if err != nil {
			errs = append(errs, f+": "+err.Error())
			continue
		}
		for _, d := range docs {
			var o map[string]any
			if err := json.Unmarshal(d.JSON, &o); err != nil {
				errs = append(errs, f+": "+err.Error())
				continue
			}
			fromFiles[idOf(o)] = o
		}
	}
	for k, want := range fromFiles {
		got, ok := built[k]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: in the files, not in %s (not listed in kustomization.yaml?)", k, what))
			continue
		}
		if !reflect.DeepEqual(got, want) {
			errs = append(errs, fmt.Sprintf("%s: %s differs from the file: %s", k, what, firstDiff("", want, got)))
		}
	}
	for k := range built {
		if _, ok := fromFiles[k]; !ok {
			errs = append(errs, fmt.Sprintf("%s: in %s, not in the files", k, what))
		}
	}
	sort.Strings(errs)
	return len(built), errs
}

func firstDiff(at string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v → %v", at, a, b)
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if !reflect.DeepEqual(x[k], y[k]) {
				return firstDiff(at+"/"+k, x[k], y[k])
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v → %v", at, a, b)
		}
		for i := range x {
			if !reflect.DeepEqual(x[i], y[i]) {
				return firstDiff(fmt.Sprintf("%s/%d", at, i), x[i], y[i])
			}
		}
	}
	return fmt.Sprintf("%s: file %#v, built %#v", at, a, b)
}

// checkGitops checks one object of out/<cluster>/gitops/.
func checkGitops(repo, key string, o map[string]any, all map[string]map[string]any) result {
	i := idOf(o)
	r := result{Dir: filepath.Dir(filepath.Dir(key)), File: strings.SplitN(key, "#", 2)[0], Kind: i.kind, Name: i.name, Errors: []string{}}
	str := func(v any, path ...string) string {
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		s, _ := v.(string)
		return s
	}
	buildable := func(path string) {
		r.Path = path
		// Argo CD: spec.source.path is relative to the repository root (util/app/path); Flux: spec.path likewise,
		// "./" allowed (kustomize-controller controllers/kustomization_controller.go SecureJoin(root, path)).
		full := filepath.Join(repo, filepath.FromSlash(path))
		if strings.HasPrefix(filepath.Clean(path), "..") || filepath.IsAbs(path) {
			r.Errors = append(r.Errors, fmt.Sprintf("path %q leaves the repository", path))
			return
		}
		if st, err := os.Stat(full); err != nil || !st.IsDir() {
			r.Errors = append(r.Errors, fmt.Sprintf("path %q is not a directory of the repository %s", path, repo))
			return
		}
		// The cluster's directory, or its values/ (the add-ons' Helm values, which the Flux Kustomization
		// gpuplan-<cluster>-values applies apart, so that the operator's HelmRelease can depend on it).
		if abs, _ := filepath.Abs(full); abs != mustAbs(r.Dir) && abs != mustAbs(filepath.Join(r.Dir, "values")) {
			r.Errors = append(r.Errors, fmt.Sprintf("path %q is neither the directory this object was written in (%s) nor its values/", path, r.Dir))
		}
		built, err := build(full)
		if err != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("kustomize build %s: %v", path, err))
		}
		if i.kind == "Kustomization" {
			if _, err := fluxBuild(mustAbs(repo), mustAbs(full)); err != nil {
				r.Errors = append(r.Errors, fmt.Sprintf("flux kustomize build %s: %v", path, err))
			}
		}
		r.Objects = len(built)
	}
	switch {
	case i.apiVersion == "argoproj.io/v1alpha1" && i.kind == "Application":
		spec, _ := o["spec"].(map[string]any)
		if src, ok := spec["source"].(map[string]any); ok {
			buildable(str(src, "path"))
		} else if srcs, ok := spec["sources"].([]any); ok && len(srcs) > 0 {
			for _, s := range srcs {
				buildable(str(s, "path"))
			}
		} else {
			r.Errors = append(r.Errors, "no spec.source")
		}
	case strings.HasPrefix(i.apiVersion, "kustomize.toolkit.fluxcd.io/") && i.kind == "Kustomization":
		buildable(str(o, "spec", "path"))
		refKind, refName := str(o, "spec", "sourceRef", "kind"), str(o, "spec", "sourceRef", "name")
		refNamespace := str(o, "spec", "sourceRef", "namespace")
		if refNamespace == "" {
			refNamespace = i.namespace
		}
		found := false
		for _, other := range all {
			j := idOf(other)
			if j.kind == refKind && j.name == refName && j.namespace == refNamespace && strings.HasPrefix(j.apiVersion, "source.toolkit.fluxcd.io/") {
				found = true
			}
		}
		if !found {
			r.Errors = append(r.Errors, fmt.Sprintf("sourceRef %s %s/%s is not among the gitops objects", refKind, refNamespace, refName))
		}
	case strings.HasPrefix(i.apiVersion, "source.toolkit.fluxcd.io/"):
		// A source; checked through the Kustomization that refers to it.
	default:
		r.Errors = append(r.Errors, "not a gitops object this check knows")
	}
	r.OK = len(r.Errors) == 0
	return r
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	check(err)
	return a
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kustomize:", err)
		os.Exit(2)
	}
}
