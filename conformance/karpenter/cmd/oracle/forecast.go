package main

// `oracle forecast --manifests DIR… --trace trace.json [--catalogs DIR] [--region R]`: replays one gpuplan forecast
// trace (src/forecast/trace.rs) through Karpenter v1.14.1's own controllers and prints what happened as a Timeline
// (src/forecast/timeline.rs), for tests/conformance/forecast.rs to compare with gpuplan's engine.
//
// Karpenter's code, driven on controller-runtime's fake client (as the oracle's simulate and conformance/kueue do)
// with a fake clock (simClock):
//   - cluster state, kept by its informers (pkg/controllers/state/informer: pod, node, nodeclaim, nodepool), which a
//     client interceptor calls after every write, as the watch would;
//   - the provisioner (pkg/controllers/provisioning/provisioner.go Schedule, CreateNodeClaims), run whenever pods are
//     pending or nodes are deleting (its batcher's 1 s idle window falls inside one step);
//   - the NodeClaim lifecycle (pkg/controllers/nodeclaim/lifecycle: launch through the cloud provider, registration,
//     initialization, and finalization), the NodeClaim disruption conditions (pkg/controllers/nodeclaim/disruption:
//     Consolidatable after consolidateAfter), pod events (pkg/controllers/nodeclaim/podevents), expiration
//     (pkg/controllers/nodeclaim/expiration), node termination with its eviction queue
//     (pkg/controllers/node/termination, terminator);
//   - disruption (pkg/controllers/disruption: Emptiness, Drift, MultiNodeConsolidation, SingleNodeConsolidation with
//     the Balanced policy, budgets, validation's 15 s wait) every 10 s of fake time as its singleton polls, and its
//     orchestration queue (queue.go) until the commands complete.
// The glue a real cluster provides is forecast_glue.go: the instance joining as a Node after the NodePool's start-up
// delay, kube-scheduler, the ReplicaSet and Job controllers, Kueue's admission, pod garbage collection, and the
// interruption controller's reaction to a spot notice.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination/terminator"
	ncdisruption "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/expiration"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/podevents"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/controllers/state/informer"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/state/cost"
	"sigs.k8s.io/karpenter/pkg/state/nodepoolhealth"
)

// pollingPeriod is the disruption singleton's (disruption/controller.go pollingPeriod).
const pollingPeriod = 10 * time.Second

// maxRoundsPerPoll bounds the immediate requeues of one poll (each starts a command for other candidates).
const maxRoundsPerPoll = 1000

// provisionRequeue is the provisioning pod and node controllers' requeue (provisioning/controller.go).
const provisionRequeue = 10 * time.Second

// epoch is second 0 of a trace: its start_unix (readTrace sets it), so budgets' cron schedules (UTC) open at the
// seconds gpuplan's engine opens them.
var epoch = time.Unix(defaultStartUnix, 0).UTC()

type forecastArgs struct {
	args
	Trace string
}

func parseForecast(argv []string) (forecastArgs, error) {
	fa := forecastArgs{}
	rest := []string{}
	for i := 0; i < len(argv); i++ {
		if argv[i] == "--trace" {
			if i+1 >= len(argv) {
				return fa, fmt.Errorf("--trace needs a value")
			}
			fa.Trace = argv[i+1]
			i++
			continue
		}
		rest = append(rest, argv[i])
	}
	a, err := parse(rest)
	if err != nil {
		return fa, err
	}
	if fa.Trace == "" {
		return fa, fmt.Errorf("--trace is required")
	}
	fa.args = a
	return fa, nil
}

func forecastMain(argv []string) error {
	fa, err := parseForecast(argv)
	if err != nil {
		return err
	}
	tr, err := readTrace(fa.Trace)
	if err != nil {
		return err
	}
	pr, err := prepare(fa.args)
	if err != nil {
		return err
	}
	r, err := newRun(pr, tr)
	if err != nil {
		return err
	}
	tl, err := r.replay()
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(tl, "", "  ")
	_, err = fmt.Fprintln(os.Stdout, string(out))
	return err
}

// run is one replay: the fake API server, Karpenter's controllers on it, and the glue's own state.
type run struct {
	ctx     context.Context
	clk     *simClock
	raw     crclient.WithWatch // the fake API server, unobserved
	kube    crclient.Client    // the same, with every write reported to the informers
	cluster *state.Cluster
	cloud   *forecastCloud
	tr      *trace

	provisioner  *provisioning.Provisioner
	disruption   *disruption.Controller
	queue        *disruption.Queue
	lifecycle    *lifecycle.Controller
	ncDisruption *ncdisruption.Controller
	expiration   *expiration.Controller
	podEvents    *podevents.Controller
	termination  *termination.Controller
	evictions    *terminator.Queue

	podInformer       *informer.PodController
	nodeInformer      *informer.NodeController
	nodeClaimInformer *informer.NodeClaimController
	nodePoolInformer  *informer.NodePoolController

	names int // generateName suffixes
	// triggered: the provisioner's batcher has a trigger; lastSchedule: when it last ran Schedule.
	triggered    bool
	lastSchedule time.Time
	// quietWrites: the write count after the last disruption poll that did nothing; scheduledBudgets: some NodePool
	// has a disruption budget with a schedule (its windows open with no write).
	quietWrites      int
	scheduledBudgets bool
	writes           int // every write through kube; a settle loop runs until an iteration writes nothing

	glue
}

func newRun(pr *prepared, tr *trace) (*run, error) {
	r := &run{ctx: pr.ctx, tr: tr}
	r.clk = &simClock{FakeClock: clocktesting.NewFakeClock(epoch)}
	r.clk.advance = r.wait
	// The indexes the operator's cache adds (pkg/operator/operator.go NewOperator: IndexField).
	idx := []fieldIndex{
		{&corev1.Pod{}, "spec.nodeName", func(o crclient.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }},
		{&corev1.Node{}, "spec.providerID", func(o crclient.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }},
		{&karpv1.NodeClaim{}, "status.providerID", func(o crclient.Object) []string { return []string{o.(*karpv1.NodeClaim).Status.ProviderID} }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.group", func(o crclient.Object) []string { return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Group} }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.kind", func(o crclient.Object) []string { return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Kind} }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.name", func(o crclient.Object) []string { return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Name} }},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.group", func(o crclient.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Group}
		}},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.kind", func(o crclient.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Kind}
		}},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.name", func(o crclient.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Name}
		}},
		{&storagev1.VolumeAttachment{}, "spec.nodeName", func(o crclient.Object) []string { return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName} }},
	}
	builder := fakecr.NewClientBuilder()
	for _, i := range idx {
		builder = builder.WithIndex(i.obj, i.field, i.fn)
	}
	// Reads come from a typed cache kept current on every write, as the operator's informer cache serves them
	// (forecast_cache.go): the fake client's JSON round trip on every read was most of a generated day's CPU.
	cached, err := newCachedClient(builder.WithStatusSubresource(&karpv1.NodeClaim{}, &karpv1.NodePool{}, &corev1.Pod{}, &corev1.Node{}).Build(), idx)
	if err != nil {
		return nil, err
	}
	r.raw = cached
	r.kube = interceptor.NewClient(r.raw, interceptor.Funcs{
		Create: func(ctx context.Context, c crclient.WithWatch, obj crclient.Object, opts ...crclient.CreateOption) error {
			// The API server names a generateName object and stamps its creation; the fake client draws a random
			// suffix and stamps nothing, so the run does both, deterministically.
			if obj.GetName() == "" && obj.GetGenerateName() != "" {
				r.names++
				obj.SetName(fmt.Sprintf("%s%05d", obj.GetGenerateName(), r.names))
			}
			// The API server also gives every object a UID; the fake client does not, and Karpenter keys on it
			// (nodeclaim/lifecycle/launch.go caches a launched instance by NodeClaim UID: with none, every NodeClaim
			// launched within the cache's minute got the first one's instance).
			if obj.GetUID() == "" {
				obj.SetUID(types.UID(fmt.Sprintf("%s-%s", strings.ToLower(fmt.Sprintf("%T", obj)[1:]), obj.GetName())))
			}
			if ts := obj.GetCreationTimestamp(); ts.IsZero() {
				obj.SetCreationTimestamp(metav1.NewTime(r.clk.Now()))
			}
			return r.observe(obj, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c crclient.WithWatch, obj crclient.Object, opts ...crclient.UpdateOption) error {
			return r.observe(obj, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c crclient.WithWatch, obj crclient.Object, p crclient.Patch, opts ...crclient.PatchOption) error {
			return r.observe(obj, c.Patch(ctx, obj, p, opts...))
		},
		Delete: func(ctx context.Context, c crclient.WithWatch, obj crclient.Object, opts ...crclient.DeleteOption) error {
			r.terminating(obj)
			return r.observe(obj, c.Delete(ctx, obj, opts...))
		},
		SubResourceCreate: func(ctx context.Context, c crclient.Client, sub string, obj crclient.Object, s crclient.Object, opts ...crclient.SubResourceCreateOption) error {
			if sub == "eviction" {
				r.terminating(obj)
			}
			return r.observe(obj, c.SubResource(sub).Create(ctx, obj, s, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c crclient.Client, sub string, obj crclient.Object, opts ...crclient.SubResourceUpdateOption) error {
			return r.observe(obj, c.SubResource(sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c crclient.Client, sub string, obj crclient.Object, p crclient.Patch, opts ...crclient.SubResourcePatchOption) error {
			return r.observe(obj, c.SubResource(sub).Patch(ctx, obj, p, opts...))
		},
	})

	classes := map[string]*awsv1.EC2NodeClass{}
	pools := map[string]*karpv1.NodePool{}
	for _, np := range append(append([]*karpv1.NodePool{}, pr.nodePools...), pr.staticPools...) {
		pools[np.Name] = np
		r.scheduledBudgets = r.scheduledBudgets || lo.ContainsBy(np.Spec.Disruption.Budgets, func(b karpv1.Budget) bool { return b.Schedule != nil })
		classes[np.Name] = pr.in.nodeClasses[np.Spec.Template.Spec.NodeClassRef.Name]
	}
	r.cloud = &forecastCloud{w: pr.w, ctx: pr.ctx, clk: r.clk, nodePools: pools, classes: classes, its: admitted(pools, pr.its),
		ice: map[string]time.Time{}, instances: map[string]*instance{}}
	r.cloud.drifts = map[string]time.Time{}
	for _, e := range tr.Events {
		if e.Kind == "drift" {
			if _, ok := r.cloud.drifts[e.NodePool]; !ok {
				r.cloud.drifts[e.NodePool] = at(e.At)
			}
		}
		if e.Kind == "shortage" {
			r.cloud.shortages = append(r.cloud.shortages, shortage{e.InstanceType, e.Zone, e.CapacityType, at(e.At), at(e.Until)})
		}
	}
	var cp cloudprovider.CloudProvider = r.cloud
	recorder := events.NewRecorder(&record.FakeRecorder{})
	r.cluster = state.NewCluster(r.clk, r.kube, cp)
	clusterCost := cost.NewClusterCost(r.ctx, cp, r.kube)
	r.podInformer = informer.NewPodController(r.raw, r.cluster)
	r.nodeInformer = informer.NewNodeController(r.raw, r.cluster)
	r.nodeClaimInformer = informer.NewNodeClaimController(r.raw, cp, r.cluster, clusterCost)
	r.nodePoolInformer = informer.NewNodePoolController(r.raw, cp, r.cluster, clusterCost)

	r.provisioner = provisioning.NewProvisioner(r.kube, recorder, cp, r.cluster, r.clk, nil, nil)
	r.queue = disruption.NewQueue(r.kube, recorder, r.cluster, r.clk, r.provisioner)
	r.disruption = disruption.NewController(r.clk, r.kube, r.provisioner, cp, recorder, r.cluster, r.queue, clusterCost)
	r.lifecycle = lifecycle.NewController(r.clk, r.kube, cp, recorder, nodepoolhealth.NewState(), nil)
	r.ncDisruption = ncdisruption.NewController(r.clk, r.kube, cp)
	r.expiration = expiration.NewController(r.clk, r.kube, cp)
	r.podEvents = podevents.NewController(r.clk, r.kube, cp)
	r.evictions = terminator.NewQueue(r.kube, recorder)
	r.termination = termination.NewController(r.clk, r.kube, cp, terminator.NewTerminator(r.clk, r.kube, r.evictions, recorder), recorder)

	for _, name := range sortedKeys(pools) {
		np := readyNodePool(pools[name], r.clk.Now())
		conditions := np.Status.Conditions
		if err := r.kube.Create(r.ctx, np); err != nil {
			return nil, fmt.Errorf("NodePool %s: %w", name, err)
		}
		// Status is a subresource: a create drops it.
		np.Status.Conditions = conditions
		if err := r.kube.Status().Update(r.ctx, np); err != nil {
			return nil, fmt.Errorf("NodePool %s status: %w", name, err)
		}
	}
	for _, ds := range pr.in.daemonSets {
		ds = ds.DeepCopy()
		ds.ResourceVersion = ""
		if err := r.kube.Create(r.ctx, ds); err != nil {
			return nil, fmt.Errorf("DaemonSet %s: %w", ds.Name, err)
		}
	}
	r.dss = pr.in.daemonSets
	if err := r.initGlue(); err != nil {
		return nil, err
	}
	return r, nil
}

func at(s uint64) time.Time { return epoch.Add(time.Duration(s) * time.Second) }

func (r *run) seconds(t time.Time) uint64 { return uint64(t.Sub(epoch) / time.Second) }

// observe is the watch: after a successful write, the informer of the object's kind reconciles it into cluster state
// (pkg/controllers/state/informer).
func (r *run) observe(obj crclient.Object, err error) error {
	if err != nil {
		return err
	}
	r.writes++
	// provisioning/controller.go: the pod controller triggers the provisioner for a provisionable pod, the node
	// controller for a deleting node.
	switch o := obj.(type) {
	case *corev1.Pod:
		r.triggered = r.triggered || o.Spec.NodeName == ""
	case *corev1.Node:
		r.triggered = r.triggered || !o.DeletionTimestamp.IsZero()
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	switch obj.(type) {
	case *corev1.Pod:
		_, _ = r.podInformer.Reconcile(r.ctx, req)
	case *corev1.Node:
		_, _ = r.nodeInformer.Reconcile(r.ctx, req)
	case *karpv1.NodeClaim:
		_, _ = r.nodeClaimInformer.Reconcile(r.ctx, req)
	case *karpv1.NodePool:
		_, _ = r.nodePoolInformer.Reconcile(r.ctx, req)
	}
	return nil
}

// terminating: a bound pod being deleted goes terminating first, which the podevents controller sees
// (nodeclaim/podevents/controller.go: "if this is a newly terminating pod") and stamps the NodeClaim's
// lastPodEventTime, restarting consolidateAfter; the fake client deletes at once, so the run shows it the pod as the
// watch would have.
func (r *run) terminating(obj crclient.Object) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	fresh := &corev1.Pod{}
	if err := r.raw.Get(r.ctx, crclient.ObjectKeyFromObject(p), fresh); err != nil || fresh.Spec.NodeName == "" {
		return
	}
	now := metav1.NewTime(r.clk.Now())
	fresh.DeletionTimestamp = &now
	if _, err := r.podEvents.Reconcile(r.ctx, fresh); err != nil {
		r.noteError("podevents", fresh.Name, err)
	}
}

// replay steps the fake clock from one moment that can change a decision to the next (a trace event, a node joining
// or an instance reclaimed, the disruption poll every 10 s, a Job finishing) up to the horizon, settling the
// controllers at each, and returns the Timeline.
func (r *run) replay() (*timeline, error) {
	horizon := at(r.tr.HorizonSeconds)
	r.nextPoll = epoch
	if err := r.advanceTo(horizon, true); err != nil {
		return nil, err
	}
	return r.timeline(), nil
}

// wait is simClock.After's world: the disruption controller waits d (validation's 15 s) while everything else goes on,
// but not another disruption poll (the singleton is busy in this one).
func (r *run) wait(d time.Duration) {
	if err := r.advanceTo(r.clk.Now().Add(d), false); err != nil {
		r.failure = err
	}
}

func (r *run) advanceTo(until time.Time, poll bool) error {
	for {
		now := r.clk.Now()
		next := r.nextMoment(until, poll)
		r.countPending(now, next)
		r.clk.SetTime(next)
		due := r.nextEvent < len(r.tr.Events) && !at(r.tr.Events[r.nextEvent].At).After(next) || r.timerDue(next)
		if err := r.applyEvents(); err != nil {
			return err
		}
		// A moment only the poll brings, with nothing written since a poll that found nothing to do, and no budget
		// schedule that could open a window meanwhile, changes nothing: Karpenter would compute the same no-op.
		quiet := !due && r.writes == r.quietWrites && !r.scheduledBudgets && !r.needsProvisioning()
		if !quiet {
			if err := r.settle(); err != nil {
				return err
			}
		}
		if poll && !next.Before(r.nextPoll) {
			r.nextPoll = next.Add(pollingPeriod)
			if quiet {
				continue
			}
			commands := len(r.decisions)
			// disruption/controller.go Reconcile: a method that started a command requeues at once
			// (singleton.RequeueImmediately), so the controller runs again in the same moment until one finds nothing.
			for round := 0; round < maxRoundsPerPoll; round++ {
				before := len(r.decisions)
				if _, err := r.disruption.Reconcile(r.ctx); err != nil {
					return fmt.Errorf("disruption at %ds: %w", r.seconds(next), err)
				}
				if r.failure != nil {
					return r.failure
				}
				r.recordCommands()
				if err := r.settle(); err != nil {
					return err
				}
				if len(r.decisions) == before {
					break
				}
			}
			if len(r.decisions) == commands && r.queue.IsEmpty() {
				r.quietWrites = r.writes
			}
		}
		if !next.Before(until) {
			return nil
		}
	}
}

// nextMoment is the earliest of: until, the next trace event, the next disruption poll (when polling), the next glue
// timer.
func (r *run) nextMoment(until time.Time, poll bool) time.Time {
	next := until
	if r.nextEvent < len(r.tr.Events) {
		if t := at(r.tr.Events[r.nextEvent].At); t.Before(next) {
			next = t
		}
	}
	if poll && r.nextPoll.Before(next) {
		next = r.nextPoll
	}
	if t, ok := r.nextTimer(); ok && t.Before(next) {
		next = t
	}
	if now := r.clk.Now(); next.Before(now) {
		next = now
	}
	return next
}

// settle runs every controller until none writes anything more: what a controller manager does between two moments.
func (r *run) settle() error {
	for i := 0; i < 50; i++ {
		before := r.writes
		steps := []func() error{r.reconcileNodeClaims, r.joinNodes, r.reconcileNodes, r.controllers, r.bind, r.provision, r.orchestrate}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
			if r.failure != nil {
				return r.failure
			}
		}
		if r.writes == before {
			return nil
		}
	}
	return nil
}

// reconcileNodeClaims: lifecycle (launch, registration, initialization, finalization), the disruption conditions and
// expiration, for every NodeClaim in name order.
func (r *run) reconcileNodeClaims() error {
	list := &karpv1.NodeClaimList{}
	if err := r.raw.List(r.ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		nc := list.Items[i].DeepCopy()
		name := nc.Name
		if _, err := r.lifecycle.Reconcile(r.ctx, nc); err != nil && !isNotFound(err) {
			r.noteError("lifecycle", name, err)
		}
		r.noteLaunch(name)
		for _, step := range []func(*karpv1.NodeClaim) error{
			func(nc *karpv1.NodeClaim) error {
				res, err := r.ncDisruption.Reconcile(r.ctx, nc)
				r.requeue("disruption/"+name, res.RequeueAfter)
				return err
			},
			func(nc *karpv1.NodeClaim) error {
				deleting := !nc.DeletionTimestamp.IsZero()
				res, err := r.expiration.Reconcile(r.ctx, nc)
				r.requeue("expiration/"+name, res.RequeueAfter)
				if fresh := r.get(name); !deleting && fresh != nil && !fresh.DeletionTimestamp.IsZero() {
					r.noteEnd(name, endedExpired)
				}
				return err
			},
		} {
			fresh := r.get(name)
			if fresh == nil {
				break
			}
			if err := step(fresh); err != nil && !isNotFound(err) {
				r.noteError("nodeclaim", name, err)
			}
		}
	}
	return nil
}

// reconcileNodes: node termination (taint, drain through the eviction queue, instance deletion, finalizer) for every
// deleting Node, then the eviction queue's pods.
func (r *run) reconcileNodes() error {
	list := &corev1.NodeList{}
	if err := r.raw.List(r.ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		n := &list.Items[i]
		if n.DeletionTimestamp.IsZero() {
			continue
		}
		res, err := r.termination.Reconcile(r.ctx, n.DeepCopy())
		r.requeue("termination/"+n.Name, res.RequeueAfter)
		if err != nil && !isNotFound(err) {
			r.noteError("termination", n.Name, err)
		}
	}
	for _, p := range drainPods(r.evictions) {
		if _, err := r.evictions.Reconcile(r.ctx, p); err != nil {
			r.noteError("eviction", p.Name, err)
		}
	}
	return nil
}

// provision is the provisioner's loop body (provisioner.go Reconcile after its batcher): Schedule, then
// CreateNodeClaims; what it decided for each pod is where the kube-scheduler stand-in binds it.
func (r *run) provision() error {
	// The batcher runs Schedule after a trigger; the pod and node controllers requeue a provisionable pod or a
	// deleting node every 10 s (provisioning/controller.go), which triggers again.
	now := r.clk.Now()
	if !r.triggered && (now.Before(r.lastSchedule.Add(provisionRequeue)) || !r.needsProvisioning()) {
		return nil
	}
	r.triggered = false
	r.lastSchedule = now
	results, err := r.provisioner.Schedule(r.ctx)
	if err != nil {
		return fmt.Errorf("provisioner at %ds: %w", r.seconds(r.clk.Now()), err)
	}
	for _, en := range results.ExistingNodes {
		for _, p := range en.Pods {
			r.targets[p.UID] = target{node: en.Name()}
		}
	}
	if len(results.NewNodeClaims) == 0 {
		return nil
	}
	names, err := r.provisioner.CreateNodeClaims(r.ctx, results.NewNodeClaims, provisioning.WithReason("provisioned"))
	for i, nc := range results.NewNodeClaims {
		if i < len(names) && names[i] != "" {
			for _, p := range nc.Pods {
				r.targets[p.UID] = target{nodeClaim: names[i]}
			}
		}
	}
	if err != nil {
		r.noteError("provisioner", "create", err)
	}
	return nil
}

// orchestrate: the disruption queue reconciles each command it holds (queue.go Reconcile: wait for the replacements
// to initialize, then delete the candidates).
func (r *run) orchestrate() error {
	drainCommands(r.queue)
	for _, cmd := range r.queue.GetCommands() {
		r.noteCommand(cmd)
		if len(cmd.Candidates) == 0 {
			continue
		}
		if _, err := r.queue.Reconcile(r.ctx, cmd.Candidates[0].NodeClaim); err != nil {
			r.noteError("disruption queue", cmd.Candidates[0].NodeClaim.Name, err)
		}
	}
	return nil
}

func (r *run) recordCommands() {
	for _, cmd := range r.queue.GetCommands() {
		r.noteCommand(cmd)
	}
}

func (r *run) get(name string) *karpv1.NodeClaim {
	nc := &karpv1.NodeClaim{}
	if err := r.raw.Get(r.ctx, types.NamespacedName{Name: name}, nc); err != nil {
		return nil
	}
	return nc
}
