// Command oracle runs Kueue's own scheduler (sigs.k8s.io/kueue v0.19.2, pinned in go.mod) on the Kueue objects and
// queued Jobs `gpuplan simulate` reads, and prints which Workloads it admits with which flavors:
//
//	oracle --manifests F... --pods F...  →  {"workloads":[{"name":"ns/job","admitted":true,"flavors":{"nvidia.com/gpu":"a100"}}]}
//
// Kueue's code end to end: the Job integration's PodSets (pkg/controller/jobs/job), jobframework.ExtractPriority,
// the scheduler cache and queue manager, and scheduler.New(...).Start, which runs scheduling cycles until every
// Workload is admitted or set aside; the oracle stops when the admitted set has not changed for a while. The API
// objects are not defaulted by an API server here, so the CRDs' defaults the scheduler reads are applied by hand
// (queueingStrategy, flavorFungibility, preemption, stopPolicy). Only Jobs are read as workloads.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrl "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	controllerconstants "sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	jobcontroller "sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/workload"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// inputs are the objects read, in input order.
type inputs struct {
	flavors    []*kueue.ResourceFlavor
	cqs        []*kueue.ClusterQueue
	lqs        []*kueue.LocalQueue
	objects    []client.Object // WorkloadPriorityClasses, PriorityClasses, Namespaces
	namespaces map[string]bool
	jobs       []*batchv1.Job
}

type result struct {
	Name     string            `json:"name"`
	Admitted bool              `json:"admitted"`
	Flavors  map[string]string `json:"flavors"`
}

func main() {
	var manifests, pods files
	flag.Var(&manifests, "manifests", "manifest files or directories (Kueue objects)")
	flag.Var(&pods, "pods", "pods files or directories (Jobs)")
	flag.Parse()
	in := &inputs{namespaces: map[string]bool{}}
	for _, p := range append(append([]string{}, manifests...), pods...) {
		if err := read(p, in); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	out, err := run(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string][]result{"workloads": out})
}

// read adds the documents of a file, or of a directory's *.yaml/*.yml files, sorted as gpuplan reads them.
func read(path string, in *inputs) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := filepath.Join(path, e.Name())
			if e.IsDir() || strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
				if err := read(p, in); err != nil {
					return err
				}
			}
		}
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, doc := range splitDocs(data) {
		if err := add(doc, in); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

func splitDocs(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimRight(line, " \t\r") == "---" || strings.HasPrefix(line, "--- ") {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.WriteString(line + "\n")
	}
	return append(docs, cur.Bytes())
}

func add(doc []byte, in *inputs) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil || meta.Kind == "" {
		return nil
	}
	into := func(obj any) error { return yaml.Unmarshal(doc, obj) }
	switch meta.APIVersion + "/" + meta.Kind {
	case "kueue.x-k8s.io/v1beta2/ResourceFlavor":
		o := &kueue.ResourceFlavor{}
		in.flavors = append(in.flavors, o)
		return into(o)
	case "kueue.x-k8s.io/v1beta2/ClusterQueue":
		o := &kueue.ClusterQueue{}
		in.cqs = append(in.cqs, o)
		return into(o)
	case "kueue.x-k8s.io/v1beta2/LocalQueue":
		o := &kueue.LocalQueue{}
		in.lqs = append(in.lqs, o)
		return into(o)
	case "kueue.x-k8s.io/v1beta2/WorkloadPriorityClass":
		o := &kueue.WorkloadPriorityClass{}
		in.objects = append(in.objects, o)
		return into(o)
	case "scheduling.k8s.io/v1/PriorityClass":
		o := &schedulingv1.PriorityClass{}
		in.objects = append(in.objects, o)
		return into(o)
	case "v1/Namespace":
		o := &corev1.Namespace{}
		if err := into(o); err != nil {
			return err
		}
		in.namespaces[o.Name] = true
		in.objects = append(in.objects, o)
	case "batch/v1/Job":
		o := &batchv1.Job{}
		if err := into(o); err != nil {
			return err
		}
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		if o.Labels[controllerconstants.QueueLabel] != "" {
			in.jobs = append(in.jobs, o)
		}
	}
	return nil
}

// defaults applies the ClusterQueue CRD's defaults the scheduler reads (an API server would).
func defaults(cq *kueue.ClusterQueue) {
	if cq.Spec.QueueingStrategy == "" {
		cq.Spec.QueueingStrategy = kueue.BestEffortFIFO
	}
	if cq.Spec.FlavorFungibility == nil {
		cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{}
	}
	if cq.Spec.FlavorFungibility.WhenCanBorrow == "" {
		cq.Spec.FlavorFungibility.WhenCanBorrow = kueue.MayStopSearch
	}
	if cq.Spec.FlavorFungibility.WhenCanPreempt == "" {
		cq.Spec.FlavorFungibility.WhenCanPreempt = kueue.TryNextFlavor
	}
	if cq.Spec.Preemption == nil {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{}
	}
	p := cq.Spec.Preemption
	if p.WithinClusterQueue == "" {
		p.WithinClusterQueue = kueue.PreemptionPolicyNever
	}
	if p.ReclaimWithinCohort == "" {
		p.ReclaimWithinCohort = kueue.PreemptionPolicyNever
	}
	if p.BorrowWithinCohort == nil {
		p.BorrowWithinCohort = &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyNever}
	}
	if cq.Spec.StopPolicy == nil {
		none := kueue.None
		cq.Spec.StopPolicy = &none
	}
}

func run(in *inputs) ([]result, error) {
	ctx, cancel := context.WithCancel(ctrl.IntoContext(context.Background(), ctrl.Log))
	defer cancel()
	log := ctrl.FromContext(ctx)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// Every namespace a Job is in exists (with only the label the API server sets), unless given.
	for _, j := range in.jobs {
		if _, given := in.namespaces[j.Namespace]; !given {
			in.namespaces[j.Namespace] = false
		}
	}
	objects := append([]client.Object{}, in.objects...)
	for ns, given := range in.namespaces {
		if !given {
			objects = append(objects, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	}
	for _, o := range objects {
		if n, ok := o.(*corev1.Namespace); ok {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[corev1.LabelMetadataName] = n.Name
		}
	}
	// The cache assumes an admission before its status patch; a patch that failed would make it forget it.
	// The field indexes Kueue's manager registers (pkg/controller/core/indexer), as its own tests' client builder does.
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithStatusSubresource(&kueue.Workload{}).
		WithIndex(&kueue.LocalQueue{}, indexer.QueueClusterQueueKey, indexer.IndexQueueClusterQueue).
		WithIndex(&kueue.Workload{}, indexer.WorkloadQueueKey, indexer.IndexWorkloadQueue).
		WithIndex(&kueue.Workload{}, indexer.WorkloadClusterQueueKey, indexer.IndexWorkloadClusterQueue).
		WithIndex(&kueue.Workload{}, indexer.OwnerReferenceUID, indexer.IndexOwnerUID).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return nil
		}}).Build()
	cqCache := schdcache.New(cl)
	// One preemption-expectations store for the queues and the scheduler, as cmd/kueue/main.go wires them.
	expected := preemptexpectations.New()
	queues := qcache.NewManagerForUnitTests(cl, cqCache, qcache.WithPreemptionExpectations(expected))
	for _, lq := range in.lqs {
		if lq.Namespace == "" {
			lq.Namespace = "default"
		}
		if err := cl.Create(ctx, lq); err != nil {
			return nil, err
		}
		if err := queues.AddLocalQueue(ctx, lq); err != nil {
			return nil, err
		}
	}
	for _, rf := range in.flavors {
		cqCache.AddOrUpdateResourceFlavor(log, rf)
	}
	for _, cq := range in.cqs {
		defaults(cq)
		if err := cqCache.AddClusterQueue(ctx, cq); err != nil {
			return nil, err
		}
		if err := queues.AddClusterQueue(ctx, cq); err != nil {
			return nil, err
		}
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, j := range in.jobs {
		wl, err := workloadFor(ctx, cl, j, i, base)
		if err != nil {
			return nil, fmt.Errorf("job %s/%s: %w", j.Namespace, j.Name, err)
		}
		// What the Workload controller does before queueing (limits as requests, overhead, LimitRanges).
		workload.AdjustResources(ctx, cl, wl)
		if err := cl.Create(ctx, wl); err != nil {
			return nil, err
		}
		// A Workload whose LocalQueue (or its ClusterQueue) does not exist is kept by Kueue but never queued: it
		// stays pending, as the workload controller leaves it.
		if err := queues.AddOrUpdateWorkload(log, wl); err != nil && !errors.Is(err, qcache.ErrLocalQueueDoesNotExistOrInactive) && !errors.Is(err, qcache.ErrClusterQueueDoesNotExist) {
			return nil, fmt.Errorf("workload %s/%s: %w", wl.Namespace, wl.Name, err)
		}
	}
	s := scheduler.New(queues, cqCache, cl, &events.FakeRecorder{}, scheduler.WithPreemptionExpectations(expected))
	go queues.CleanUpOnContext(ctx)
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	admitted := waitStable(ctx, cqCache)
	var out []result
	for _, j := range in.jobs {
		key := j.Namespace + "/" + j.Name
		flavors, ok := admitted[key]
		out = append(out, result{Name: key, Admitted: ok, Flavors: flavors})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// workloadFor is the Workload Kueue's Job integration makes: the Job's PodSets and priority, created in input order
// (a creationTimestamp given on the Job is kept).
func workloadFor(ctx context.Context, cl client.Client, j *batchv1.Job, i int, base time.Time) (*kueue.Workload, error) {
	if j.Spec.Parallelism == nil {
		one := int32(1)
		j.Spec.Parallelism = &one
		if j.Spec.Completions == nil {
			j.Spec.Completions = &one
		}
	}
	podSets, err := (*jobcontroller.Job)(j).PodSets(ctx, cl)
	if err != nil {
		return nil, err
	}
	ref, priority, err := jobframework.ExtractPriority(ctx, cl, j, podSets, nil)
	if err != nil {
		return nil, err
	}
	created := j.CreationTimestamp
	if created.IsZero() {
		created = metav1.NewTime(base.Add(time.Duration(i) * time.Second))
	}
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: j.Name, Namespace: j.Namespace, CreationTimestamp: created, UID: types.UID(fmt.Sprintf("uid-%06d", i))},
		Spec:       kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(j.Labels[controllerconstants.QueueLabel]), PodSets: podSets, Priority: &priority, PriorityClassRef: ref},
	}, nil
}

// waitStable returns the admitted Workloads (namespace/name → resource → flavor) once the set has not changed for
// half a second (the scheduler backs off at most 10ms between cycles: pkg/util/wait).
func waitStable(ctx context.Context, cqCache *schdcache.Cache) map[string]map[string]string {
	var last map[string]map[string]string
	stableSince := time.Now()
	for {
		time.Sleep(50 * time.Millisecond)
		now := admittedIn(ctx, cqCache)
		if fmt.Sprint(now) != fmt.Sprint(last) {
			last, stableSince = now, time.Now()
		}
		if time.Since(stableSince) > 500*time.Millisecond {
			return last
		}
	}
}

func admittedIn(ctx context.Context, cqCache *schdcache.Cache) map[string]map[string]string {
	out := map[string]map[string]string{}
	snap, err := cqCache.Snapshot(ctx)
	if err != nil {
		return out
	}
	for _, cq := range snap.ClusterQueues() {
		for ref, w := range cq.Workloads {
			flavors := map[string]string{}
			if a := w.Obj.Status.Admission; a != nil && len(a.PodSetAssignments) > 0 {
				for r, f := range a.PodSetAssignments[0].Flavors {
					flavors[string(r)] = string(f)
				}
			}
			out[string(ref)] = flavors
		}
	}
	return out
}
