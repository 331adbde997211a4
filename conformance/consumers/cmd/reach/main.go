// Command reach answers, for every NodePool and DaemonSet in the YAML files it is given, whether Kubernetes'
// DaemonSet controller would run that DaemonSet's pod on a node the NodePool launches: the decision is
// k8s.io/kubernetes pkg/controller/daemon `NodeShouldRunDaemonPod` (the template's tolerations plus the ones the
// controller adds to every daemon pod, required node affinity and nodeSelector, NoSchedule/NoExecute taints).
//
// The node is built the way it appears once Karpenter registered it and the NVIDIA GPU Operator labelled it:
// the NodePool template's labels, `karpenter.sh/nodepool`, and its taints and startupTaints (a daemon that removes a
// startup taint must tolerate it too); on nodes whose NodePool limits `nvidia.com/gpu`, the operator's state labels
// `nvidia.com/gpu.deploy.<operand>=true` unless the template already sets them (NVIDIA/gpu-operator v26.7.0
// controllers/state_manager.go addGPUStateLabels honours a preset value).
//
// Usage: reach FILE… — prints one JSON line per (nodepool, daemonset), sorted.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/daemon"
)

// The GPU Operator's state labels for container workloads (controllers/state_manager.go gpuStateLabels).
var operandLabels = []string{
	"nvidia.com/gpu.deploy.driver",
	"nvidia.com/gpu.deploy.gpu-feature-discovery",
	"nvidia.com/gpu.deploy.container-toolkit",
	"nvidia.com/gpu.deploy.device-plugin",
	"nvidia.com/gpu.deploy.dcgm",
	"nvidia.com/gpu.deploy.dcgm-exporter",
	"nvidia.com/gpu.deploy.node-status-exporter",
	"nvidia.com/gpu.deploy.operator-validator",
	"nvidia.com/gpu.deploy.mig-manager",
}

// nodePool holds the fields of a karpenter.sh/v1 NodePool that shape its nodes.
type nodePool struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Limits   map[string]any `json:"limits"`
		Template struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Taints        []corev1.Taint `json:"taints"`
				StartupTaints []corev1.Taint `json:"startupTaints"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type verdict struct {
	NodePool  string `json:"nodepool"`
	DaemonSet string `json:"daemonset"`
	Runs      bool   `json:"runs"`
}

func main() {
	pools, sets, err := read(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "reach:", err)
		os.Exit(2)
	}
	var out []verdict
	logger := klog.Background()
	for _, p := range pools {
		node := nodeOf(p)
		for _, ds := range sets {
			runs, _ := daemon.NodeShouldRunDaemonPod(logger, node, ds)
			out = append(out, verdict{NodePool: p.Metadata.Name, DaemonSet: ds.Name, Runs: runs})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NodePool != out[j].NodePool {
			return out[i].NodePool < out[j].NodePool
		}
		return out[i].DaemonSet < out[j].DaemonSet
	})
	enc := json.NewEncoder(os.Stdout)
	for _, v := range out {
		if err := enc.Encode(v); err != nil {
			os.Exit(2)
		}
	}
}

func nodeOf(p nodePool) *corev1.Node {
	labels := map[string]string{"karpenter.sh/nodepool": p.Metadata.Name, "kubernetes.io/os": "linux"}
	for k, v := range p.Spec.Template.Metadata.Labels {
		labels[k] = v
	}
	if _, nvidia := p.Spec.Limits["nvidia.com/gpu"]; nvidia {
		labels["nvidia.com/gpu.present"] = "true"
		for _, l := range operandLabels {
			if labels[l] == "" {
				labels[l] = "true"
			}
		}
	}
	taints := append(append([]corev1.Taint{}, p.Spec.Template.Spec.Taints...), p.Spec.Template.Spec.StartupTaints...)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: p.Metadata.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
	}
}

func read(files []string) ([]nodePool, []*appsv1.DaemonSet, error) {
	var pools []nodePool
	var sets []*appsv1.DaemonSet
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, nil, err
		}
		dec := yaml.NewYAMLOrJSONDecoder(fh, 4096)
		for {
			var raw map[string]any
			if err := dec.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, nil, fmt.Errorf("%s: %w", f, err)
			}
			if raw == nil {
				continue
			}
			data, _ := json.Marshal(raw)
			switch raw["kind"] {
			case "NodePool":
				var p nodePool
				if err := json.Unmarshal(data, &p); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				pools = append(pools, p)
			case "DaemonSet":
				ds := &appsv1.DaemonSet{}
				if err := json.Unmarshal(data, ds); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				sets = append(sets, ds)
			}
		}
		fh.Close()
	}
	return pools, sets, nil
}
