package main

// Reading the inputs `gpuplan simulate` reads (src/simulate/yaml.rs, manifests.rs, pods.rs): NodePools, EC2NodeClasses
// and NodeOverlays from --manifests (files or directories of *.yaml), and Pods, Deployments, StatefulSets, ReplicaSets,
// Jobs and DaemonSets from --pods, expanded into pods the way gpuplan names them (`namespace/name` for a Pod,
// `namespace/name-i` for the i-th replica).

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
)

type inputs struct {
	nodePools   []*karpv1.NodePool
	nodeClasses map[string]*awsv1.EC2NodeClass
	overlays    []*v1alpha1.NodeOverlay
	pods        []*corev1.Pod
	keys        map[*corev1.Pod]string
	daemonSets  []*appsv1.DaemonSet
}

func files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			full := filepath.Join(p, n)
			if st, err := os.Stat(full); err == nil && (st.IsDir() || strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
				sub, err := files([]string{full})
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
			}
		}
	}
	return out, nil
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func documents(paths []string, each func(path string, tm typeMeta, doc []byte) error) error {
	fs, err := files(paths)
	if err != nil {
		return err
	}
	for _, f := range fs {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			var tm typeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if tm.Kind == "" {
				continue
			}
			if err := each(f, tm, doc); err != nil {
				return fmt.Errorf("%s: %s: %w", f, tm.Kind, err)
			}
		}
	}
	return nil
}

func readInputs(manifests, podFiles, daemonSetFiles []string) (*inputs, error) {
	in := &inputs{nodeClasses: map[string]*awsv1.EC2NodeClass{}, keys: map[*corev1.Pod]string{}}
	err := documents(manifests, func(_ string, tm typeMeta, doc []byte) error {
		switch {
		case tm.APIVersion == "karpenter.sh/v1" && tm.Kind == "NodePool":
			np := &karpv1.NodePool{}
			if err := yaml.Unmarshal(doc, np); err != nil {
				return err
			}
			in.nodePools = append(in.nodePools, np)
		case tm.APIVersion == "karpenter.k8s.aws/v1" && tm.Kind == "EC2NodeClass":
			nc := &awsv1.EC2NodeClass{}
			if err := yaml.Unmarshal(doc, nc); err != nil {
				return err
			}
			in.nodeClasses[nc.Name] = nc
		case tm.APIVersion == "karpenter.sh/v1alpha1" && tm.Kind == "NodeOverlay":
			o := &v1alpha1.NodeOverlay{}
			if err := yaml.Unmarshal(doc, o); err != nil {
				return err
			}
			in.overlays = append(in.overlays, o)
		case tm.Kind == "DaemonSet":
			ds := &appsv1.DaemonSet{}
			if err := yaml.Unmarshal(doc, ds); err != nil {
				return err
			}
			in.daemonSets = append(in.daemonSets, ds)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	uid := 0
	add := func(key string, meta metav1.ObjectMeta, spec corev1.PodSpec) {
		uid++
		ns := meta.Namespace
		if ns == "" {
			ns = "default"
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: strings.TrimPrefix(key, ns+"/"), Namespace: ns, Labels: meta.Labels, Annotations: meta.Annotations,
				// Every pod needs its own UID: the scheduler caches per-pod data by UID (scheduler.go cachedPodData).
				UID:               types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", uid)),
				CreationTimestamp: metav1.Unix(1_700_000_000, 0),
			},
			Spec:   *spec.DeepCopy(),
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
		in.pods = append(in.pods, p)
		in.keys[p] = ns + "/" + p.Name
	}
	err = documents(podFiles, func(_ string, tm typeMeta, doc []byte) error {
		replicas := func(r *int32) int {
			if r == nil {
				return 1
			}
			return int(*r)
		}
		expand := func(meta metav1.ObjectMeta, tmpl corev1.PodTemplateSpec, n int) {
			ns := meta.Namespace
			if ns == "" {
				ns = "default"
			}
			m := tmpl.ObjectMeta
			m.Namespace = ns
			for i := 0; i < n; i++ {
				add(fmt.Sprintf("%s/%s-%d", ns, meta.Name, i), m, tmpl.Spec)
			}
		}
		switch tm.Kind {
		case "Pod":
			p := &corev1.Pod{}
			if err := yaml.Unmarshal(doc, p); err != nil {
				return err
			}
			ns := p.Namespace
			if ns == "" {
				ns = "default"
			}
			add(ns+"/"+p.Name, p.ObjectMeta, p.Spec)
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal(doc, d); err != nil {
				return err
			}
			expand(d.ObjectMeta, d.Spec.Template, replicas(d.Spec.Replicas))
		case "StatefulSet":
			d := &appsv1.StatefulSet{}
			if err := yaml.Unmarshal(doc, d); err != nil {
				return err
			}
			expand(d.ObjectMeta, d.Spec.Template, replicas(d.Spec.Replicas))
		case "ReplicaSet":
			d := &appsv1.ReplicaSet{}
			if err := yaml.Unmarshal(doc, d); err != nil {
				return err
			}
			expand(d.ObjectMeta, d.Spec.Template, replicas(d.Spec.Replicas))
		case "Job":
			d := &batchv1.Job{}
			if err := yaml.Unmarshal(doc, d); err != nil {
				return err
			}
			// The Job controller runs min(parallelism, completions) pods at once, as gpuplan reads it.
			pods := replicas(d.Spec.Parallelism)
			if d.Spec.Completions != nil && int(*d.Spec.Completions) < pods {
				pods = int(*d.Spec.Completions)
			}
			expand(d.ObjectMeta, d.Spec.Template, pods)
		case "DaemonSet":
			ds := &appsv1.DaemonSet{}
			if err := yaml.Unmarshal(doc, ds); err != nil {
				return err
			}
			in.daemonSets = append(in.daemonSets, ds)
		}
		return nil
	})
	if err != nil {
		return in, err
	}
	// --daemonsets: only the DaemonSets of those files.
	err = documents(daemonSetFiles, func(_ string, tm typeMeta, doc []byte) error {
		if tm.Kind != "DaemonSet" {
			return nil
		}
		ds := &appsv1.DaemonSet{}
		if err := yaml.Unmarshal(doc, ds); err != nil {
			return err
		}
		in.daemonSets = append(in.daemonSets, ds)
		return nil
	})
	return in, err
}
