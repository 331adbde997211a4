// Command hpa replays metric series through Kubernetes v1.37.2's HorizontalPodAutoscaler controller code
// (k8s.io/kubernetes/pkg/controller/podautoscaler) and prints the replicas it sets at each 15 s sync, for
// tests/conformance/hpa.rs to compare with gpuplan's port (src/forecast/draw/hpa.rs).
//
// What runs upstream code: the replica calculator (ReplicaCalculator.GetMetricReplicas for a Pods metric,
// GetExternalPerPodMetricReplicas for KEDA's External AverageValue metrics, with pods in a lister and per-pod values
// from a metrics client) and, on a HorizontalController made by NewHorizontalController, its unexported
// recordInitialRecommendation, normalizeDesiredReplicasWithBehaviors (stabilisation, then the scaling policies) and
// storeScaleEvent, reached by go:linkname. Time is the fake clock of a testing/synctest bubble: each sync sleeps
// 15 s of bubble time, so every time.Now() in that code reads the simulated second.
//
// What this program ports rather than runs (unproven by it): reconcileAutoscaler's glue around those calls (replicas
// above max or below min go straight to the bound; otherwise the largest metric proposal is normalised; a change is
// stored as a scale event), and the controller's own 15 s sync loop (a real controller's resync drifts by the
// reconcile's duration).
//
// Input (stdin): one JSON case per line: {"min","max","kind":"pods"|"external","targets_milli":[..],"initial",
// "behavior":autoscaling/v2 HPABehavior,"totals_milli":[[per metric] per sync]}. Output: one line per case,
// {"replicas":[...]} (the replicas after each sync).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	scalefake "k8s.io/client-go/scale/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/controller/podautoscaler"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
)

//go:linkname recordInitialRecommendation k8s.io/kubernetes/pkg/controller/podautoscaler.(*HorizontalController).recordInitialRecommendation
func recordInitialRecommendation(a *podautoscaler.HorizontalController, currentReplicas int32, key string)

//go:linkname normalizeDesiredReplicasWithBehaviors k8s.io/kubernetes/pkg/controller/podautoscaler.(*HorizontalController).normalizeDesiredReplicasWithBehaviors
func normalizeDesiredReplicasWithBehaviors(a *podautoscaler.HorizontalController, hpa *autoscalingv2.HorizontalPodAutoscaler, key string, currentReplicas, prenormalizedDesiredReplicas, minReplicas int32) int32

//go:linkname storeScaleEvent k8s.io/kubernetes/pkg/controller/podautoscaler.(*HorizontalController).storeScaleEvent
func storeScaleEvent(a *podautoscaler.HorizontalController, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prevReplicas, newReplicas int32)

type input struct {
	Min          int32                                         `json:"min"`
	Max          int32                                         `json:"max"`
	Kind         string                                        `json:"kind"`
	TargetsMilli []int64                                       `json:"targets_milli"`
	Initial      int32                                         `json:"initial"`
	Behavior     autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior"`
	TotalsMilli  [][]int64                                     `json:"totals_milli"`
}

// metrics hands the replica calculator what the pods report: every pod its share of the current total.
type metrics struct {
	perPod   int64
	external int64
	pods     []string
}

func (m *metrics) GetResourceMetric(context.Context, v1.ResourceName, string, labels.Selector, string) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("no resource metrics")
}

func (m *metrics) GetRawMetric(string, string, labels.Selector, labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	info := metricsclient.PodMetricsInfo{}
	for _, p := range m.pods {
		info[p] = metricsclient.PodMetric{Value: m.perPod, Timestamp: time.Now(), Window: time.Minute}
	}
	return info, time.Now(), nil
}

func (m *metrics) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, fmt.Errorf("no object metrics")
}

func (m *metrics) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return []int64{m.external}, time.Now(), nil
}

// tolerances builds podautoscaler.Tolerances{0.1, 0.1} (the default of --horizontal-pod-autoscaler-tolerance): its
// fields are unexported and it has no constructor outside the package, so a struct of the same layout is converted.
func tolerances() podautoscaler.Tolerances {
	t := struct{ scaleDown, scaleUp float64 }{0.1, 0.1}
	return *(*podautoscaler.Tolerances)(unsafe.Pointer(&t))
}

func main() {
	var cases []input
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 64<<20), 64<<20)
	for scanner.Scan() {
		var c input
		if err := json.Unmarshal(scanner.Bytes(), &c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cases = append(cases, c)
	}
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	m := &metrics{}
	controller := podautoscaler.NewHorizontalController(context.Background(), client.CoreV1(), &scalefake.FakeScaleClient{}, client.AutoscalingV2(), nil, m,
		factory.Autoscaling().V2().HorizontalPodAutoscalers(), factory.Core().V1().Pods(), 15*time.Second, 5*time.Minute, 0.1, 5*time.Minute, 30*time.Second)
	// The replicas go to stdout; testing.Main's "PASS" and klog's notes go to stderr.
	out := bufio.NewWriter(os.Stdout)
	os.Stdout = os.Stderr
	// testing/synctest needs a *testing.T: one test, run by the testing package's own Main.
	run := func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			for i, c := range cases {
				replicas := replay(controller, m, fmt.Sprintf("case/%d", i), c)
				line, _ := json.Marshal(map[string][]int32{"replicas": replicas})
				out.Write(append(line, '\n'))
			}
			out.Flush()
		})
	}
	// testing.Main parses its own flags (none given) and exits the process when the test returns.
	os.Args = os.Args[:1]
	testing.Main(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{Name: "HPA", F: run}}, nil, nil)
}

// replay runs one case's syncs, 15 s apart.
func replay(controller *podautoscaler.HorizontalController, m *metrics, key string, c input) []int32 {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	calculator := podautoscaler.NewReplicaCalculator(m, corelisters.NewPodLister(indexer), 5*time.Minute, 30*time.Second)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: &c.Min, MaxReplicas: c.Max, Behavior: c.Behavior.DeepCopy()}}
	current := c.Initial
	var replicas []int32
	for _, totals := range c.TotalsMilli {
		time.Sleep(15 * time.Second)
		recordInitialRecommendation(controller, current, key)
		var desired int32
		switch {
		case current > c.Max:
			desired = c.Max
		case current < c.Min:
			desired = c.Min
		default:
			setPods(indexer, m, current)
			for i, total := range totals {
				proposal := propose(calculator, m, c.Kind, current, total, c.TargetsMilli[i])
				desired = max(desired, proposal)
			}
			desired = normalizeDesiredReplicasWithBehaviors(controller, hpa, key, current, desired, c.Min)
		}
		if desired != current {
			storeScaleEvent(controller, hpa.Spec.Behavior, key, current, desired)
		}
		current = desired
		replicas = append(replicas, current)
	}
	return replicas
}

func propose(calculator *podautoscaler.ReplicaCalculator, m *metrics, kind string, current int32, total, target int64) int32 {
	var proposal int32
	var err error
	if kind == "external" {
		m.external = total
		proposal, _, _, err = calculator.GetExternalPerPodMetricReplicas(current, target, "m", tolerances(), "ns", &metav1.LabelSelector{})
	} else {
		m.perPod = total / int64(current)
		proposal, _, _, err = calculator.GetMetricReplicas(current, target, "m", tolerances(), "ns", labels.Everything(), labels.Everything())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return proposal
}

// setPods puts `current` running pods in the lister, each reporting.
func setPods(indexer cache.Indexer, m *metrics, current int32) {
	for _, o := range indexer.List() {
		indexer.Delete(o)
	}
	m.pods = m.pods[:0]
	for i := int32(0); i < current; i++ {
		name := fmt.Sprintf("p%d", i)
		indexer.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Status: v1.PodStatus{Phase: v1.PodRunning}})
		m.pods = append(m.pods, name)
	}
}
