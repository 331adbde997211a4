// Command validate judges every object in the given YAML files, directories (recursively, *.yaml and *.yml) and
// JSON-lines files (*.jsonl, one object a line) the way kube-apiserver does on create, against the CRDs of the
// pinned upstream modules (go.mod) and the built-in kinds' own validation. It prints one JSON verdict a line:
// {"file","doc","apiVersion","kind","namespace","name","ok","skipped","errors"}.
//
// With -embedded <gpuplan's src/crds>, it instead compares each CRD gpuplan embeds with the upstream file of the same
// name and prints one JSON line per embedded file: {"embedded","upstream","module","version","identical","semantic"}.
//
// With -list, it prints the kinds it knows and where their CRDs come from.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"gpuplan.dev/conformance/consumers/internal/apiserver"
	"gpuplan.dev/conformance/consumers/internal/crds"
)

func main() {
	moduleDir := flag.String("module-dir", ".", "conformance/consumers (where go.mod pins the upstream modules)")
	gpuplanCRDs := flag.String("gpuplan-crds", "", "gpuplan's src/crds (for the CRDs no module serves: see crds.Fallbacks)")
	embedded := flag.Bool("embedded", false, "compare the CRDs under -gpuplan-crds with the upstream files instead of validating")
	list := flag.Bool("list", false, "print the kinds known and their origin")
	flag.Parse()
	files, err := crds.Find(*moduleDir)
	check(err)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	if *embedded {
		check(compareEmbedded(*gpuplanCRDs, files, enc))
		return
	}
	server := apiserver.New()
	for _, f := range files {
		check(server.AddCRDFile(f.Path, f.Module+"@"+f.Version+" "+f.Rel))
	}
	if *gpuplanCRDs != "" {
		for _, rel := range crds.Fallbacks {
			check(server.AddCRDFile(filepath.Join(*gpuplanCRDs, rel), "gpuplan src/crds/"+rel+" (no module served)"))
		}
	}
	if *list {
		for _, k := range server.Kinds() {
			fmt.Fprintln(out, k)
		}
		return
	}
	for _, arg := range flag.Args() {
		for _, path := range walk(arg) {
			data, err := os.ReadFile(path)
			check(err)
			if strings.HasSuffix(path, ".jsonl") {
				for i, line := range bytes.Split(data, []byte("\n")) {
					if len(bytes.TrimSpace(line)) == 0 {
						continue
					}
					v := server.Validate(line)
					v.File, v.Doc = path, i
					check(enc.Encode(v))
				}
				continue
			}
			docs, err := apiserver.SplitYAML(data)
			if err != nil {
				check(enc.Encode(apiserver.Verdict{File: path, OK: false, Errors: []string{err.Error()}}))
				continue
			}
			for _, d := range docs {
				v := server.Validate(d.JSON)
				v.File, v.Doc = path, d.Index
				check(enc.Encode(v))
			}
		}
	}
}

// walk lists a file, or a directory's YAML and JSON-lines files in path order.
func walk(arg string) []string {
	st, err := os.Stat(arg)
	check(err)
	if !st.IsDir() {
		return []string{arg}
	}
	var paths []string
	check(filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// out/<cluster>/values/helm/ holds the add-ons' plain Helm values (helm -f, Argo CD's multi-source $values):
		// no Kubernetes objects, nothing an API server reads.
		if d.IsDir() && d.Name() == "helm" && filepath.Base(filepath.Dir(p)) == "values" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".jsonl")) {
			paths = append(paths, p)
		}
		return nil
	}))
	sort.Strings(paths)
	return paths
}

type comparison struct {
	Embedded  string `json:"embedded"`
	Upstream  string `json:"upstream,omitempty"`
	Module    string `json:"module,omitempty"`
	Version   string `json:"version,omitempty"`
	Identical bool   `json:"identical"`
	Semantic  bool   `json:"semantic"`
	Note      string `json:"note,omitempty"`
}

// compareEmbedded matches each src/crds/<dir>/<file>.yaml with the upstream file of the same base name in the
// module its directory comes from.
func compareEmbedded(root string, files []crds.File, enc *json.Encoder) error {
	if root == "" {
		return fmt.Errorf("-embedded needs -gpuplan-crds")
	}
	var embedded []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			embedded = append(embedded, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(embedded)
	for _, p := range embedded {
		rel, _ := filepath.Rel(root, p)
		c := comparison{Embedded: filepath.ToSlash(rel)}
		for _, fb := range crds.Fallbacks {
			if fb == c.Embedded {
				c.Note = "no pinned module serves it (the fallback the Go validator reads)"
			}
		}
		for _, f := range files {
			if f.Embedded == filepath.Dir(c.Embedded) && filepath.Base(f.Rel) == filepath.Base(c.Embedded) {
				c.Upstream, c.Module, c.Version = f.Rel, f.Module, f.Version
				a, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				b, err := os.ReadFile(f.Path)
				if err != nil {
					return err
				}
				c.Identical = bytes.Equal(a, b)
				var ja, jb any
				if yaml.Unmarshal(a, &ja) == nil && yaml.Unmarshal(b, &jb) == nil {
					c.Semantic = reflect.DeepEqual(ja, jb)
				}
			}
		}
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "validate:", err)
		os.Exit(2)
	}
}
