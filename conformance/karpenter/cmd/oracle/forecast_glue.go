package main

// What a real cluster does around Karpenter in a forecast run, kept as small as the trace allows; each piece names the
// upstream behaviour it stands in for.

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/samber/lo"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/yaml"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination/terminator"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// reclaimDelay: EC2 reclaims a spot instance two minutes after the interruption notice.
const reclaimDelay = 120 * time.Second

type target struct{ node, nodeClaim string }

type workloadState struct {
	key      string
	template *corev1.Pod
	desired  int
	pods     []string // names of its live pods, in creation order
}

type jobState struct {
	key       string
	template  *corev1.Pod
	pods      int
	duration  time.Duration
	names     []string
	startedAt *time.Time
	done      bool
}

type glue struct {
	nextEvent int
	nextPoll  time.Time
	failure   error

	templates map[string]*corev1.Pod
	workloads map[string]*workloadState
	jobs      []*jobState
	owner     map[string]string // pod namespace/name -> workload or Job key
	seq       int
	targets   map[types.UID]target

	lives     map[string]*nodeLife // by NodeClaim name
	lifeOrder []string
	instance  map[string]string // NodeClaim name -> provider ID
	ended     map[string]string
	seenCmds  map[*disruption.Command]bool
	decisions []decision
	pending   map[string]uint64
	reclaims  map[string]time.Time // provider ID -> reclaimed at
	requeues  map[string]time.Time
	joined    map[string]bool // provider IDs whose Node registered
	dss       []*appsv1.DaemonSet
	dsPods    map[string]bool // DaemonSet/node
	errors    int
}

func (r *run) initGlue() error {
	r.templates = map[string]*corev1.Pod{}
	r.workloads = map[string]*workloadState{}
	r.owner = map[string]string{}
	r.targets = map[types.UID]target{}
	r.lives = map[string]*nodeLife{}
	r.instance = map[string]string{}
	r.ended = map[string]string{}
	r.seenCmds = map[*disruption.Command]bool{}
	r.pending = map[string]uint64{}
	r.reclaims = map[string]time.Time{}
	r.joined = map[string]bool{}
	r.requeues = map[string]time.Time{}
	for _, key := range sortedKeys(r.tr.Workloads) {
		p, err := podTemplate(r.tr.Workloads[key])
		if err != nil {
			return fmt.Errorf("workload %s: %w", key, err)
		}
		r.templates[key] = p
		r.workloads[key] = &workloadState{key: key, template: p}
	}
	return nil
}

func podTemplate(raw []byte) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	if err := yaml.Unmarshal(raw, p); err != nil {
		return nil, err
	}
	defaultRequests(&p.Spec)
	return p, nil
}

func splitKey(key string) (string, string) {
	if i := strings.Index(key, "/"); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "default", key
}

// applyEvents applies the trace's events due now.
func (r *run) applyEvents() error {
	now := r.clk.Now()
	for r.nextEvent < len(r.tr.Events) && !at(r.tr.Events[r.nextEvent].At).After(now) {
		e := r.tr.Events[r.nextEvent]
		r.nextEvent++
		switch e.Kind {
		case "replicas":
			w, ok := r.workloads[e.Workload]
			if !ok {
				return fmt.Errorf("replicas event for unknown workload %q", e.Workload)
			}
			w.desired = int(e.Replicas)
		case "job":
			p, err := podTemplate(e.Pod)
			if err != nil {
				return fmt.Errorf("job %s: %w", e.Name, err)
			}
			r.jobs = append(r.jobs, &jobState{key: e.Queue + "/" + e.Name, template: p, pods: int(e.Pods), duration: time.Duration(e.DurationSeconds) * time.Second})
		case "interruption":
			r.interrupt(e)
		case "shortage":
		case "drift":
			// IsDrifted answers from now on; the NodeClaim disruption controller notices it on its next reconcile
			// (drift.go requeues every 5 minutes; the run reconciles every NodeClaim at every moment).
			r.writes++
		default:
			return fmt.Errorf("unknown event kind %q", e.Kind)
		}
	}
	return nil
}

// interrupt is the AWS provider's interruption controller on a spot interruption notice
// (pkg/controllers/interruption/controller.go): the spot offering is marked unavailable and the NodeClaim deleted
// (its termination drains the node); EC2 reclaims the instance 120 s after the notice. The oldest ceil(share × n) of
// the n running spot NodeClaims of the type and zone are interrupted (trace.rs Event::Interruption).
func (r *run) interrupt(e traceEvent) {
	r.cloud.ice[iceKey(e.InstanceType, e.Zone, karpv1.CapacityTypeSpot)] = r.clk.Now().Add(iceTTL)
	var hit []string
	for _, name := range r.lifeOrder {
		l := r.lives[name]
		if l.InstanceType != e.InstanceType || l.Zone != e.Zone || l.CapacityType != karpv1.CapacityTypeSpot {
			continue
		}
		if _, gone := r.reclaims[r.instance[name]]; gone {
			continue
		}
		if inst := r.cloud.instances[r.instance[name]]; inst == nil || inst.goneAt != nil {
			continue
		}
		hit = append(hit, name)
	}
	k := min(int(math.Ceil(e.Share*float64(len(hit)))), len(hit))
	if k > 0 {
		// The Timeline records the notice as a decision of its own (reason interrupted, no replacements: the
		// provisioner launches for the evicted pods), as gpuplan's engine does.
		r.decisions = append(r.decisions, decision{At: r.seconds(r.clk.Now()), Reason: endedInterrupted, Nodes: append([]string{}, hit[:k]...), Replacements: []string{}})
	}
	for _, name := range hit[:k] {
		r.noteEnd(name, endedInterrupted)
		r.reclaims[r.instance[name]] = r.clk.Now().Add(reclaimDelay)
		if nc := r.get(name); nc != nil && nc.DeletionTimestamp.IsZero() {
			if err := r.kube.Delete(r.ctx, nc); err != nil && !isNotFound(err) {
				r.noteError("interruption", name, err)
			}
		}
	}
}

// nextTimer is the earliest future moment the glue acts on its own: an instance joining as a Node, a reclaim, a Job
// finishing.
func (r *run) nextTimer() (time.Time, bool) {
	now := r.clk.Now()
	var best time.Time
	found := false
	consider := func(t time.Time) {
		if t.After(now) && (!found || t.Before(best)) {
			best, found = t, true
		}
	}
	for _, id := range r.cloud.order {
		inst := r.cloud.instances[id]
		if inst.goneAt == nil {
			consider(inst.launchedAt.Add(r.startup(inst.claim)))
		}
	}
	for _, t := range r.reclaims {
		consider(t)
	}
	for _, t := range r.requeues {
		consider(t)
	}
	for _, j := range r.jobs {
		if j.startedAt != nil && !j.done {
			consider(j.startedAt.Add(j.duration))
		}
	}
	return best, found
}

// requeue keeps a controller's RequeueAfter as a timer (the nodeclaim disruption controller's consolidateAfter,
// expiration's expireAfter): the run steps to it.
// One timer per controller and object, the latest asked for, as a workqueue keeps one entry per key.
func (r *run) requeue(key string, d time.Duration) {
	if d > 0 {
		r.requeues[key] = r.clk.Now().Add(d)
	} else {
		delete(r.requeues, key)
	}
}

// timerDue: some glue timer or requeue falls at t; requeues up to t are spent.
func (r *run) timerDue(t time.Time) bool {
	due := false
	for _, k := range sortedKeys(r.requeues) {
		if !r.requeues[k].After(t) {
			delete(r.requeues, k)
			due = true
		}
	}
	if due {
		return true
	}
	for _, id := range r.cloud.order {
		inst := r.cloud.instances[id]
		if inst.goneAt == nil && inst.launchedAt.Add(r.startup(inst.claim)).Equal(t) {
			return true
		}
	}
	for _, rt := range r.reclaims {
		if rt.Equal(t) {
			return true
		}
	}
	for _, j := range r.jobs {
		if j.startedAt != nil && !j.done && !j.startedAt.Add(j.duration).After(t) {
			return true
		}
	}
	return false
}

func (r *run) startup(nc *karpv1.NodeClaim) time.Duration {
	s, ok := r.tr.StartupSeconds[nc.Labels[karpv1.NodePoolLabelKey]]
	if !ok {
		s = defaultStartupSeconds
	}
	return time.Duration(s) * time.Second
}

// joinNodes: an instance's kubelet registers its Node once the NodePool's start-up delay has passed, Ready, with the
// NodeClaim's labels and taints (startup taints already removed by the daemons that own them) and the unregistered
// taint that registration removes (sigs.k8s.io/karpenter pkg/test/nodes.go NodeClaimLinkedNode, as kwok does); a
// reclaimed instance is terminated.
func (r *run) joinNodes() error {
	now := r.clk.Now()
	for _, id := range r.cloud.order {
		inst := r.cloud.instances[id]
		if t, ok := r.reclaims[id]; ok && !now.Before(t) && inst.goneAt == nil {
			inst.goneAt = &t
		}
		if inst.goneAt != nil || now.Before(inst.launchedAt.Add(r.startup(inst.claim))) {
			continue
		}
		name := strings.TrimPrefix(id[strings.LastIndex(id, "/")+1:], "")
		if err := r.raw.Get(r.ctx, types.NamespacedName{Name: name}, &corev1.Node{}); err == nil || !apierrors.IsNotFound(err) {
			continue
		}
		if _, joined := r.joined[id]; joined {
			continue
		}
		nc := r.get(inst.claim.Name)
		if nc == nil || nc.Status.ProviderID != id {
			continue
		}
		r.joined[id] = true
		labels := lo.Assign(map[string]string{karpv1.NodeClassLabelKey(nc.Spec.NodeClassRef.GroupKind()): nc.Spec.NodeClassRef.Name}, nc.Labels, map[string]string{corev1.LabelHostname: name})
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: nc.Annotations, UID: types.UID("node-" + name)},
			Spec:       corev1.NodeSpec{ProviderID: id, Taints: append(append([]corev1.Taint{}, nc.Spec.Taints...), karpv1.UnregisteredNoExecuteTaint)},
			Status: corev1.NodeStatus{Capacity: nc.Status.Capacity, Allocatable: nc.Status.Allocatable, Phase: corev1.NodeRunning,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}}},
		}
		if err := r.kube.Create(r.ctx, node); err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
	}
	return nil
}

// controllers: the ReplicaSet controller (replica counts), the Job controller with Kueue's admission, the DaemonSet
// controller, and pod garbage collection (pods bound to a Node that no longer exists).
func (r *run) controllers() error {
	pods := &corev1.PodList{}
	if err := r.raw.List(r.ctx, pods); err != nil {
		return err
	}
	live := map[string]*corev1.Pod{}
	nodes := map[string]bool{}
	nl := &corev1.NodeList{}
	if err := r.raw.List(r.ctx, nl); err != nil {
		return err
	}
	for _, n := range nl.Items {
		nodes[n.Name] = true
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			// pkg/controller/podgc: a pod bound to a missing Node is deleted.
			if err := r.kube.Delete(r.ctx, p); err != nil && !isNotFound(err) {
				return err
			}
			continue
		}
		if p.DeletionTimestamp.IsZero() {
			live[p.Namespace+"/"+p.Name] = p
		}
	}
	for _, key := range sortedKeys(r.workloads) {
		if err := r.scaleReplicas(r.workloads[key], live); err != nil {
			return err
		}
	}
	for _, j := range r.jobs {
		if err := r.runJob(j, live); err != nil {
			return err
		}
	}
	return r.daemonSets(live, nl.Items)
}

func (r *run) newPod(key string, tmpl *corev1.Pod, ownerKind string) (*corev1.Pod, error) {
	ns, name := splitKey(key)
	r.seq++
	p := tmpl.DeepCopy()
	p.ResourceVersion = ""
	p.Namespace = ns
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	p.Name = fmt.Sprintf("%s-%06d", strings.ReplaceAll(name, "/", "-"), r.seq)
	p.UID = types.UID(fmt.Sprintf("pod-%06d", r.seq))
	p.CreationTimestamp = metav1.NewTime(r.clk.Now())
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: strings.ReplaceAll(name, "/", "-"), UID: types.UID(ownerKind + "-" + key), Controller: lo.ToPtr(true)}}
	p.Spec.NodeName = ""
	// kube-scheduler's verdict on a pod no node takes, which makes it provisionable (pkg/utils/pod IsProvisionable).
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}
	if err := r.kube.Create(r.ctx, p); err != nil {
		return nil, err
	}
	r.owner[p.Namespace+"/"+p.Name] = key
	return p, nil
}

// scaleReplicas is the ReplicaSet controller (k8s.io/kubernetes pkg/controller/replicaset/replica_set.go
// manageReplicas): create the missing pods; on scale-down delete the surplus ranked by getPodsToDelete →
// controller.ActivePodsWithRanks (pkg/controller/controller_utils.go Less): unassigned before assigned, pending
// before running, more pods of the set on the same node first, then the newest.
func (r *run) scaleReplicas(w *workloadState, live map[string]*corev1.Pod) error {
	ns, _ := splitKey(w.key)
	w.pods = lo.Filter(w.pods, func(n string, _ int) bool { return live[ns+"/"+n] != nil })
	for len(w.pods) < w.desired {
		p, err := r.newPod(w.key, w.template, "ReplicaSet")
		if err != nil {
			return err
		}
		w.pods = append(w.pods, p.Name)
		live[p.Namespace+"/"+p.Name] = p
	}
	if len(w.pods) <= w.desired {
		return nil
	}
	pods := lo.Map(w.pods, func(n string, _ int) *corev1.Pod { return live[ns+"/"+n] })
	onNode := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			onNode[p.Spec.NodeName]++
		}
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
			return a.Spec.NodeName == ""
		}
		if onNode[a.Spec.NodeName] != onNode[b.Spec.NodeName] {
			return onNode[a.Spec.NodeName] > onNode[b.Spec.NodeName]
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return b.CreationTimestamp.Before(&a.CreationTimestamp)
		}
		return a.Name > b.Name
	})
	for _, p := range pods[:len(pods)-w.desired] {
		if err := r.kube.Delete(r.ctx, p); err != nil && !isNotFound(err) {
			return err
		}
		delete(live, p.Namespace+"/"+p.Name)
	}
	w.pods = lo.Filter(w.pods, func(n string, _ int) bool { return live[ns+"/"+n] != nil })
	return nil
}

// runJob: Kueue admits a Job whole on arrival, in arrival order, with no quota held back (the oracle's stand-in:
// Kueue's own scheduler is judged in conformance/kueue); the Job controller keeps `pods` pods (recreating an evicted
// one); the Job runs `duration` from the moment all its pods run, then its pods go away.
func (r *run) runJob(j *jobState, live map[string]*corev1.Pod) error {
	if j.done {
		return nil
	}
	ns, _ := splitKey(j.key)
	j.names = lo.Filter(j.names, func(n string, _ int) bool { return live[ns+"/"+n] != nil })
	now := r.clk.Now()
	if j.startedAt != nil && !now.Before(j.startedAt.Add(j.duration)) {
		j.done = true
		for _, n := range j.names {
			if err := r.kube.Delete(r.ctx, live[ns+"/"+n]); err != nil && !isNotFound(err) {
				return err
			}
			delete(live, ns+"/"+n)
		}
		return nil
	}
	for len(j.names) < j.pods {
		p, err := r.newPod(j.key, j.template, "Job")
		if err != nil {
			return err
		}
		j.names = append(j.names, p.Name)
		live[p.Namespace+"/"+p.Name] = p
	}
	if j.startedAt == nil && lo.EveryBy(j.names, func(n string) bool { return live[ns+"/"+n].Spec.NodeName != "" }) {
		j.startedAt = &now
	}
	return nil
}

// daemonSets is the DaemonSet controller: one pod per node the DaemonSet's pod tolerates and selects, bound directly.
func (r *run) daemonSets(live map[string]*corev1.Pod, nodes []corev1.Node) error {
	if r.dsPods == nil {
		r.dsPods = map[string]bool{}
	}
	for _, ds := range r.dss {
		tmpl := &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: ds.Spec.Template.Spec}
		defaultRequests(&tmpl.Spec)
		for i := range nodes {
			n := &nodes[i]
			key := ds.Name + "/" + n.Name
			if r.dsPods[key] || !n.DeletionTimestamp.IsZero() {
				continue
			}
			if karpscheduling.Taints(lo.Reject(n.Spec.Taints, func(t corev1.Taint, _ int) bool { return t.MatchTaint(&karpv1.UnregisteredNoExecuteTaint) })).ToleratesPod(tmpl) != nil {
				continue
			}
			if karpscheduling.NewLabelRequirements(n.Labels).Compatible(karpscheduling.NewStrictPodRequirements(tmpl)) != nil {
				continue
			}
			r.dsPods[key] = true
			p := tmpl.DeepCopy()
			p.Namespace = lo.Ternary(ds.Namespace == "", "default", ds.Namespace)
			p.Name = ds.Name + "-" + n.Name
			p.UID = types.UID("ds-" + key)
			p.CreationTimestamp = metav1.NewTime(r.clk.Now())
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: lo.ToPtr(true)}}
			p.Spec.NodeName = n.Name
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
			if err := r.kube.Create(r.ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
	}
	return nil
}

// bind is kube-scheduler's stand-in, as Karpenter's own suites bind (pkg/test/expectations ExpectProvisioned →
// ExpectManualBinding): a pending pod goes to the node Karpenter's scheduler placed it on (an existing node, or the
// Node of the NodeClaim it launched for it) once that node is initialized; a pod with no such decision, or whose node
// is gone, goes to the first initialized node (by name) it tolerates, selects and fits on.
func (r *run) bind() error {
	pods := &corev1.PodList{}
	if err := r.raw.List(r.ctx, pods); err != nil {
		return err
	}
	nl := &corev1.NodeList{}
	if err := r.raw.List(r.ctx, nl); err != nil {
		return err
	}
	used := map[string]corev1.ResourceList{}
	var pending []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		if p.Spec.NodeName != "" {
			used[p.Spec.NodeName] = resources.Merge(used[p.Spec.NodeName], resources.RequestsForPods(p))
		} else {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	sort.SliceStable(pending, func(i, j int) bool { return pending[i].UID < pending[j].UID })
	byName := map[string]*corev1.Node{}
	var ready []*corev1.Node
	for i := range nl.Items {
		n := &nl.Items[i]
		byName[n.Name] = n
		if n.DeletionTimestamp.IsZero() && n.Labels[karpv1.NodeInitializedLabelKey] == "true" {
			ready = append(ready, n)
		}
	}
	fits := func(p *corev1.Pod, n *corev1.Node) bool {
		if n == nil || !n.DeletionTimestamp.IsZero() || n.Labels[karpv1.NodeInitializedLabelKey] != "true" {
			return false
		}
		if karpscheduling.Taints(n.Spec.Taints).ToleratesPod(p) != nil {
			return false
		}
		if karpscheduling.NewLabelRequirements(n.Labels).Compatible(karpscheduling.NewStrictPodRequirements(p)) != nil {
			return false
		}
		return resources.Fits(resources.Merge(used[n.Name], resources.RequestsForPods(p)), n.Status.Allocatable)
	}
	for _, p := range pending {
		var chosen *corev1.Node
		wait := false
		if t, ok := r.targets[p.UID]; ok {
			name := t.node
			if t.nodeClaim != "" {
				if nc := r.get(t.nodeClaim); nc != nil && nc.DeletionTimestamp.IsZero() {
					name = nc.Status.NodeName
					wait = name == "" || byName[name] == nil || byName[name].Labels[karpv1.NodeInitializedLabelKey] != "true"
				}
			}
			if fits(p, byName[name]) {
				chosen = byName[name]
			}
		}
		if chosen == nil && !wait {
			chosen, _ = lo.Find(ready, func(n *corev1.Node) bool { return fits(p, n) })
		}
		if chosen == nil {
			continue
		}
		p.Spec.NodeName = chosen.Name
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(r.clk.Now())}}
		if err := r.kube.Update(r.ctx, p); err != nil {
			return fmt.Errorf("binding %s: %w", p.Name, err)
		}
		used[chosen.Name] = resources.Merge(used[chosen.Name], resources.RequestsForPods(p))
		delete(r.targets, p.UID)
		if _, err := r.podEvents.Reconcile(r.ctx, p); err != nil {
			r.noteError("podevents", p.Name, err)
		}
	}
	return nil
}

func (r *run) needsProvisioning() bool {
	pods := &corev1.PodList{}
	if err := r.raw.List(r.ctx, pods); err != nil {
		return true
	}
	if lo.ContainsBy(pods.Items, func(p corev1.Pod) bool { return p.Spec.NodeName == "" && p.DeletionTimestamp.IsZero() }) {
		return true
	}
	return len(r.cluster.DeepCopyNodes().Deleting()) > 0
}

// countPending adds [from, to) to every pending pod's owner.
func (r *run) countPending(from, to time.Time) {
	if !to.After(from) {
		return
	}
	pods := &corev1.PodList{}
	if err := r.raw.List(r.ctx, pods); err != nil {
		return
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" && p.DeletionTimestamp.IsZero() {
			if key, ok := r.owner[p.Namespace+"/"+p.Name]; ok {
				r.pending[key] += uint64(to.Sub(from) / time.Second)
			}
		}
	}
}

// noteLaunch records a NodeClaim's launch (its instance exists) and the moment it is initialized.
func (r *run) noteLaunch(name string) {
	nc := r.get(name)
	if nc == nil || nc.Status.ProviderID == "" {
		return
	}
	l, ok := r.lives[name]
	if !ok {
		inst := r.cloud.instances[nc.Status.ProviderID]
		if inst == nil {
			return
		}
		l = &nodeLife{ID: name, NodePool: nc.Labels[karpv1.NodePoolLabelKey], InstanceType: nc.Labels[corev1.LabelInstanceTypeStable],
			CapacityType: nc.Labels[karpv1.CapacityTypeLabelKey], Zone: nc.Labels[corev1.LabelTopologyZone], LaunchedAt: r.seconds(inst.launchedAt)}
		r.lives[name] = l
		r.lifeOrder = append(r.lifeOrder, name)
		r.instance[name] = nc.Status.ProviderID
	}
	if l.ReadyAt == nil && nc.StatusConditions().Get(karpv1.ConditionTypeInitialized).IsTrue() {
		s := r.seconds(r.clk.Now())
		l.ReadyAt = &s
	}
}

func (r *run) noteEnd(name, reason string) {
	if _, ok := r.ended[name]; !ok {
		r.ended[name] = reason
	}
}

func (r *run) noteCommand(cmd *disruption.Command) {
	if r.seenCmds[cmd] {
		return
	}
	r.seenCmds[cmd] = true
	reason := strings.ToLower(string(cmd.Reason()))
	d := decision{At: r.seconds(cmd.CreationTimestamp), Reason: reason, Nodes: []string{}, Replacements: []string{}}
	for _, c := range cmd.Candidates {
		d.Nodes = append(d.Nodes, c.NodeClaim.Name)
		r.noteEnd(c.NodeClaim.Name, reason)
	}
	for _, rep := range cmd.Replacements {
		d.Replacements = append(d.Replacements, rep.Name)
	}
	r.decisions = append(r.decisions, d)
}

func (r *run) noteError(what, name string, err error) {
	r.errors++
	if os.Getenv("GPUPLAN_ORACLE_VERBOSE") != "" {
		fmt.Fprintf(os.Stderr, "%ds %s %s: %v\n", r.seconds(r.clk.Now()), what, name, err)
	}
}

func (r *run) timeline() *timeline {
	horizon := at(r.tr.HorizonSeconds)
	tl := &timeline{HorizonSeconds: r.tr.HorizonSeconds, Nodes: []nodeLife{}, PendingPodSeconds: r.pending, Decisions: r.decisions}
	if tl.Decisions == nil {
		tl.Decisions = []decision{}
	}
	for _, name := range r.lifeOrder {
		l := *r.lives[name]
		inst := r.cloud.instances[r.instance[name]]
		if inst != nil && inst.goneAt != nil && !inst.goneAt.After(horizon) {
			s := r.seconds(*inst.goneAt)
			l.TerminatedAt = &s
			if reason, ok := r.ended[name]; ok {
				l.EndedBy = &reason
			}
		}
		tl.Nodes = append(tl.Nodes, l)
	}
	return tl
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// unexported is a struct's unexported field, readable: the two queues keep their work on a channel that
// controller-runtime's source would drain; here the run drains it.
func unexported(v any, field string) reflect.Value {
	f := reflect.ValueOf(v).Elem().FieldByName(field)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// drainPods returns the pods the termination controller queued for eviction since the last call
// (terminator/eviction.go Add → source).
func drainPods(q *terminator.Queue) []*corev1.Pod {
	ch := unexported(q, "source")
	var out []*corev1.Pod
	for {
		v, ok := ch.TryRecv()
		if !ok {
			return out
		}
		out = append(out, v.Interface().(event.TypedGenericEvent[*corev1.Pod]).Object)
	}
}

// drainCommands empties the disruption queue's event channel (its commands are read with GetCommands).
func drainCommands(q *disruption.Queue) {
	ch := unexported(q, "source")
	for {
		if _, ok := ch.TryRecv(); !ok {
			return
		}
	}
}
