package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	// The AWS API package registers the karpenter.k8s.aws/* labels as well known (pkg/apis/v1/labels.go init);
	// without it the instance-gpu-* requirements silently stop filtering.
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awsoptions "github.com/aws/karpenter-provider-aws/pkg/operator/options"
	instancefilter "github.com/aws/karpenter-provider-aws/pkg/providers/instance/filter"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
)

func init() {
	if os.Getenv("GPUPLAN_ORACLE_VERBOSE") == "2" {
		// Karpenter's own logs, for debugging a run (forecast.go).
		log.SetLogger(zap.New(zap.UseDevMode(true)))
		return
	}
	log.SetLogger(logging.NopLogger)
}

// The report, in gpuplan's JSON schema (src/simulate/report.rs).
type report struct {
	Region        string            `json:"region"`
	NodeClaims    []nodeClaimReport `json:"nodeclaims"`
	Pending       []pendingPod      `json:"pending"`
	NodePools     []nodePoolReport  `json:"nodepools"`
	USDPerHour    float64           `json:"usd_per_hour"`
	PriceEstimate bool              `json:"price_estimate"`
	// Static replicas whose launch failed (not in gpuplan's schema: the harness compares only nodeclaims and pending).
	Unlaunched []string `json:"unlaunched,omitempty"`
}

type nodeClaimReport struct {
	Name          string   `json:"name"`
	NodePool      string   `json:"nodepool"`
	InstanceType  string   `json:"instance_type"`
	CapacityType  string   `json:"capacity_type"`
	Zone          string   `json:"zone"`
	USDPerHour    float64  `json:"usd_per_hour"`
	PriceEstimate bool     `json:"price_estimate"`
	Candidates    []string `json:"candidates"`
	Pods          []string `json:"pods"`
	// A static NodePool's replica (gpuplan's `"static": true`): launched up front, whatever the pods.
	Static bool `json:"static,omitempty"`
}

type pendingPod struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

type nodePoolReport struct {
	Name       string `json:"name"`
	Weight     int64  `json:"weight"`
	NodeClaims int    `json:"nodeclaims"`
	// A static NodePool's spec.replicas (gpuplan's `replicas`).
	Replicas *int64 `json:"replicas,omitempty"`
}

// options: Karpenter's and the AWS provider's defaults (their own flag sets; reading either from a context without
// them panics), with the NodeOverlay gate as asked.
func withOptions(ctx context.Context, nodeOverlay bool) (context.Context, error) {
	fs := &coreoptions.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	core := &coreoptions.Options{}
	core.AddFlags(fs)
	aws := &awsoptions.Options{}
	aws.AddFlags(fs)
	gates := fmt.Sprintf("NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=%t,StaticCapacity=false,CapacityBuffer=false", nodeOverlay)
	argv := []string{"--cluster-name=gpuplan-conformance", "--feature-gates=" + gates}
	if err := core.Parse(fs, argv...); err != nil {
		return nil, err
	}
	if err := aws.Parse(fs, argv...); err != nil {
		return nil, err
	}
	ctx = coreoptions.ToContext(ctx, core)
	return awsoptions.ToContext(ctx, aws), nil
}

type unavailable struct{ typ, zone, capacity string }

func (u unavailable) matches(t, z, c string) bool {
	m := func(p, s string) bool { ok, _ := path.Match(p, s); return ok }
	return m(u.typ, t) && m(u.zone, z) && m(u.capacity, c)
}

type priceInfo struct {
	usd      float64
	estimate bool
}

// Built instance types, by catalog, NodeClass and unavailable offerings: `oracle batch` runs many cases in one
// process and most share them (building 1,400 types is most of a small case's time). They are not mutated after
// being built (launch copies them; overlays copy on write).
var (
	typeCache    = map[string][]*cloudprovider.InstanceType{}
	catalogCache = map[string]*catalog{}
	eniCache     = map[string]map[string]eniLimit{}
)

// typeCacheLimit bounds typeCache (entries of about 1,400 built types each).
const typeCacheLimit = 24

type world struct {
	key         string
	cat         *catalog
	eni         map[string]eniLimit
	unavailable []unavailable
	// prices by type, capacity type and zone, as gpuplan bills them (reserved: on-demand price).
	prices map[string]priceInfo
}

func (w *world) priceKey(t, ct, zone string) string { return t + "/" + ct + "/" + zone }

func (w *world) isUnavailable(t, z, c string) bool {
	for _, u := range w.unavailable {
		if u.matches(t, z, c) {
			return true
		}
	}
	return false
}

// instanceTypes builds the types a NodePool's EC2NodeClass sees, as the AWS provider does: NewInstanceType through the
// default resolver (pkg/providers/instancetype/types.go), and offerings as pkg/providers/instancetype/offering/
// base_resolver.go (on-demand and spot: one per zone of the NodeClass's subnets, available when the type is offered in
// the zone, priced, and not unavailable) and reserved_capacity_resolver.go (one per capacity reservation).
func (w *world) instanceTypes(ctx context.Context, nc *awsv1.EC2NodeClass) []*cloudprovider.InstanceType {
	spec, _ := json.Marshal(nc.Spec)
	key := w.key + "\x00" + string(spec)
	if its, ok := typeCache[key]; ok {
		return its
	}
	its := w.buildInstanceTypes(ctx, nc)
	// Bounded: generated NodeClasses (kubelet settings, unavailable offerings, five catalog slices) rarely repeat, and
	// an unbounded cache grew one batch process of 2,500 cases past 12 GB. The default class's entries are rebuilt
	// after a reset, which costs a few milliseconds.
	if len(typeCache) >= typeCacheLimit {
		typeCache = map[string][]*cloudprovider.InstanceType{}
	}
	typeCache[key] = its
	return its
}

func (w *world) buildInstanceTypes(ctx context.Context, nc *awsv1.EC2NodeClass) []*cloudprovider.InstanceType {
	nc = nc.DeepCopy()
	// The NodeClass's subnets: one per catalog zone (status is written by the controller, not in manifests).
	nc.Status.Subnets = nil
	for _, z := range w.cat.Zones {
		nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: "subnet-" + z, Zone: z, ZoneID: z})
	}
	// Capacity reservations are account state; gpuplan assumes a class that selects any holds one for every type the
	// catalog lists as reservable, in every zone of the type (src/simulate/instances.rs offerings).
	nc.Status.CapacityReservations = nil
	if len(nc.Spec.CapacityReservationSelectorTerms) > 0 {
		for _, t := range w.cat.InstanceTypes {
			if !lo.Contains(t.CapacityTypes, "reserved") {
				continue
			}
			for _, z := range t.Zones {
				nc.Status.CapacityReservations = append(nc.Status.CapacityReservations, awsv1.CapacityReservation{
					ID: fmt.Sprintf("cr-%x", len(nc.Status.CapacityReservations)+1), InstanceType: t.Name, AvailabilityZone: z,
					InstanceMatchCriteria: "targeted", OwnerID: "012345678901", ReservationType: awsv1.CapacityReservationTypeDefault,
					State: awsv1.CapacityReservationStateActive,
				})
			}
		}
	}
	resolver := instancetype.NewDefaultResolver(w.cat.Region)
	allZones := sets.New(w.cat.Zones...)
	var out []*cloudprovider.InstanceType
	for i := range w.cat.InstanceTypes {
		t := &w.cat.InstanceTypes[i]
		it := resolver.Resolve(ctx, t.info(w.eni), t.Zones, nc)
		itZones := sets.New(it.Requirements.Get(corev1.LabelTopologyZone).Values()...)
		for _, zone := range sets.List(allZones) {
			for _, ct := range it.Requirements.Get(karpv1.CapacityTypeLabelKey).Values() {
				if ct == karpv1.CapacityTypeReserved {
					continue
				}
				var p *price
				if ct == karpv1.CapacityTypeSpot {
					if sp, ok := t.Spot[zone]; ok {
						p = &sp
					}
				}
				if p == nil {
					p = t.OnDemand
				}
				price := 0.0
				if p != nil {
					price = p.USDPerHour
					w.prices[w.priceKey(t.Name, ct, zone)] = priceInfo{p.USDPerHour, w.cat.estimate(*p)}
				}
				it.Offerings = append(it.Offerings, &cloudprovider.Offering{
					Requirements: karpscheduling.NewRequirements(
						karpscheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
						karpscheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
						karpscheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
						karpscheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
						karpscheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
						karpscheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, zone),
					),
					Price:     price,
					Available: p != nil && itZones.Has(zone) && !w.isUnavailable(t.Name, zone, ct),
				})
			}
		}
		for _, cr := range nc.Status.CapacityReservations {
			if cr.InstanceType != t.Name || t.OnDemand == nil {
				continue
			}
			w.prices[w.priceKey(t.Name, karpv1.CapacityTypeReserved, cr.AvailabilityZone)] = priceInfo{t.OnDemand.USDPerHour, w.cat.estimate(*t.OnDemand)}
			it.Offerings = append(it.Offerings, &cloudprovider.Offering{
				Requirements: karpscheduling.NewRequirements(
					karpscheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeReserved),
					karpscheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, cr.AvailabilityZone),
					karpscheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpIn, cr.ID),
					karpscheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpIn, string(cr.ReservationType)),
					karpscheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpIn, fmt.Sprintf("%t", cr.Interruptible)),
					karpscheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, cr.AvailabilityZone),
				),
				// reserved_capacity_resolver.go: on-demand price / 10,000,000 ("free", relative order kept).
				Price:     t.OnDemand.USDPerHour / 10_000_000.0,
				Available: itZones.Has(cr.AvailabilityZone) && !w.isUnavailable(t.Name, cr.AvailabilityZone, karpv1.CapacityTypeReserved),
				// How many instances a reservation holds is account state gpuplan does not model: effectively unbounded.
				ReservationCapacity: 1 << 20,
			})
		}
		out = append(out, it)
	}
	return out
}

// defaultRequests is the API server's defaulting of container requests from limits (k8s.io/kubernetes
// pkg/apis/core/v1/defaults.go SetDefaults_Pod): a pod read from YAML has not been through it.
func defaultRequests(spec *corev1.PodSpec) {
	fix := func(cs []corev1.Container) {
		for i := range cs {
			for k, v := range cs[i].Resources.Limits {
				if cs[i].Resources.Requests == nil {
					cs[i].Resources.Requests = corev1.ResourceList{}
				}
				if _, ok := cs[i].Resources.Requests[k]; !ok {
					cs[i].Resources.Requests[k] = v.DeepCopy()
				}
			}
		}
	}
	fix(spec.Containers)
	fix(spec.InitContainers)
}

// prepared is what simulate and forecast both start from: the inputs, the world (catalog, prices, unavailable
// offerings), the options context, and the NodePools with the instance types their NodeClasses offer (overlaid).
type prepared struct {
	in                     *inputs
	w                      *world
	ctx                    context.Context
	gate                   bool
	nodePools, staticPools []*karpv1.NodePool
	its                    map[string][]*cloudprovider.InstanceType
}

func prepare(a args) (*prepared, error) {
	in, err := readInputs(a.Manifests, a.Pods, a.DaemonSets)
	if err != nil {
		return nil, err
	}
	region := a.Region
	if region == "" {
		for _, np := range in.nodePools {
			if c, ok := np.Annotations["gpuplan.dev/catalog"]; ok {
				region = strings.SplitN(c, "@", 2)[0]
				break
			}
		}
	}
	if region == "" {
		region = "us-east-1"
	}
	catalogs := a.Catalogs
	if catalogs == "" {
		catalogs = "catalogs"
	}
	catKey := filepath.Join(catalogs, region+".json")
	cat, ok := catalogCache[catKey]
	if !ok {
		if cat, err = loadCatalog(catalogs, region); err != nil {
			return nil, err
		}
		cat.prices = map[string]priceInfo{}
		catalogCache[catKey] = cat
	}
	eniPath := a.ENILimits
	if eniPath == "" {
		eniPath = filepath.Join(catalogs, "..", "src", "simulate", "eni-limits.tsv")
	}
	eni, ok := eniCache[eniPath]
	if !ok {
		if eni, err = loadENILimits(eniPath); err != nil {
			return nil, err
		}
		if err = addEFAInterfaces(filepath.Join(filepath.Dir(eniPath), "..", "catalog", "efa-interfaces.tsv"), eni); err != nil {
			return nil, err
		}
		eniCache[eniPath] = eni
	}
	w := &world{cat: cat, eni: eni, prices: cat.prices, key: catKey + "\x00" + eniPath + "\x00" + strings.Join(a.Unavailable, ",")}
	for _, u := range a.Unavailable {
		p := strings.Split(u, ":")
		if len(p) != 3 {
			return nil, fmt.Errorf("--unavailable %q: expected TYPE:ZONE:CAPACITY", u)
		}
		w.unavailable = append(w.unavailable, unavailable{p[0], p[1], p[2]})
	}
	gate := len(in.overlays) > 0
	if a.NodeOverlay != nil {
		gate = *a.NodeOverlay
	}
	ctx, err := withOptions(injection.WithControllerName(context.Background(), "provisioner"), gate)
	if err != nil {
		return nil, err
	}

	// provisioner.go NewScheduler: static NodePools are skipped; a NodePool whose NodeClass cannot be resolved gets no
	// instance types (aws cloudprovider.go GetInstanceTypes) and is skipped.
	// Static NodePools get the same instance types, for their replicas' launch (static.go).
	var nodePools, staticPools []*karpv1.NodePool
	its := map[string][]*cloudprovider.InstanceType{}
	byClass := map[string][]*cloudprovider.InstanceType{}
	for _, np := range in.nodePools {
		nc, ok := in.nodeClasses[np.Spec.Template.Spec.NodeClassRef.Name]
		if !ok {
			continue
		}
		if _, ok := byClass[nc.Name]; !ok {
			byClass[nc.Name] = w.instanceTypes(ctx, nc)
		}
		list := byClass[nc.Name]
		np = np.DeepCopy()
		np.UID = types.UID("nodepool-" + np.Name)
		if nodepoolutils.IsStatic(np) {
			staticPools = append(staticPools, np)
		} else {
			nodePools = append(nodePools, np)
		}
		its[np.Name] = list
	}
	nodepoolutils.OrderByWeight(nodePools)
	nodepoolutils.OrderByWeight(staticPools)
	if gate && len(in.overlays) > 0 {
		// cloudprovider.go Create applies the NodePool's overlays to a static NodeClaim's types as to any other.
		if its, err = overlaid(ctx, append(append([]*karpv1.NodePool{}, nodePools...), staticPools...), its, in.overlays); err != nil {
			return nil, err
		}
	}
	// The nodeoverlay controller lists every NodePool, static ones too (controller.go Reconcile), so an overlay in
	// conflict on a static NodePool's types only is dropped everywhere; NewScheduler reads the types of the dynamic
	// NodePools it is given (provisioner.go), the static ones' are for their replicas' launch (static.go).
	return &prepared{in: in, w: w, ctx: ctx, gate: gate, nodePools: nodePools, staticPools: staticPools, its: its}, nil
}

func simulate(a args) (*report, error) {
	pr, err := prepare(a)
	if err != nil {
		return nil, err
	}
	in, w, ctx, cat, nodePools, staticPools, its := pr.in, pr.w, pr.ctx, pr.w.cat, pr.nodePools, pr.staticPools, pr.its

	uidKeys := map[types.UID]string{}
	for _, p := range in.pods {
		defaultRequests(&p.Spec)
		uidKeys[p.UID] = in.keys[p]
	}
	var dsPods []*corev1.Pod
	for _, ds := range in.daemonSets {
		// provisioner.go getDaemonSetPods.
		p := daemonset.PodForDaemonSet(ds)
		if ds.Spec.Template.Spec.Affinity != nil && ds.Spec.Template.Spec.Affinity.NodeAffinity != nil && ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			if p.Spec.Affinity == nil {
				p.Spec.Affinity = &corev1.Affinity{}
			}
			if p.Spec.Affinity.NodeAffinity == nil {
				p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
			}
			p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		defaultRequests(&p.Spec)
		dsPods = append(dsPods, p)
	}

	r := &report{Region: cat.Region, NodeClaims: []nodeClaimReport{}, Pending: []pendingPod{}, NodePools: []nodePoolReport{}}
	// The cluster state the provisioner reads, with the static NodePools' replicas in it. The fake client indexes pods
	// by node as the operator's cache does (pkg/operator/operator.go IndexField "spec.nodeName"), which
	// cluster.go populateResourceRequests lists by.
	client := fakecr.NewClientBuilder().WithIndex(&corev1.Pod{}, "spec.nodeName", func(o crclient.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}).Build()
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, client, &staticCloudProvider{types: its})
	var statics []staticPool
	for _, np := range staticPools {
		statics = append(statics, staticPool{np: np, class: in.nodeClasses[np.Spec.Template.Spec.NodeClassRef.Name]})
	}
	replicas, failed, err := w.launchStatic(ctx, cluster, statics, its)
	if err != nil {
		return nil, err
	}
	r.Unlaunched = failed
	if len(nodePools) == 0 && len(replicas) == 0 {
		// provisioner.go: ErrNodePoolsNotFound, nothing is scheduled.
		for _, p := range in.pods {
			r.Pending = append(r.Pending, pendingPod{Pod: in.keys[p], Reason: "no NodePool with a resolvable NodeClass"})
		}
		sortPending(r)
		return r, nil
	}

	// provisioner.go Schedule: the options the provisioner passes.
	opts := []scheduling.Options{
		scheduling.DisableReservedCapacityFallback,
		scheduling.NumConcurrentReconciles(int(math.Ceil(float64(coreoptions.FromContext(ctx).CPURequests) / 1000.0))),
		scheduling.MinValuesPolicy(coreoptions.FromContext(ctx).MinValuesPolicy),
	}
	// provisioner.go Schedule: the active state nodes go to NewTopology and NewScheduler. With no dynamic NodePool the
	// provisioner stops at ErrNodePoolsNotFound and kube-scheduler binds pods to the static nodes; the scheduler
	// (which still builds with no templates to "ack pods which can schedule to existing and in-flight capacity",
	// scheduler.go NewScheduler) stands in for that binding.
	stateNodes := cluster.DeepCopyNodes().Active()
	dynamic := lo.PickByKeys(its, lo.Map(nodePools, func(np *karpv1.NodePool, _ int) string { return np.Name }))
	topology, err := scheduling.NewTopology(ctx, client, cluster, stateNodes, nodePools, dynamic, in.pods, opts...)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	s := scheduling.NewScheduler(ctx, client, nodePools, cluster, stateNodes, topology, dynamic, dsPods, events.NewRecorder(&record.FakeRecorder{}), clk, nil, nil, opts...)
	results, err := s.Solve(ctx, in.pods)
	if err != nil {
		return nil, fmt.Errorf("solve: %w", err)
	}
	results = results.TruncateInstanceTypes(ctx, scheduling.MaxInstanceTypes)

	order := map[string]int{}
	for i, np := range nodePools {
		order[np.Name] = i
	}
	type claim struct {
		pool  string
		first string
		pods  []string
		nc    *scheduling.NodeClaim
	}
	var claims []claim
	for _, nc := range results.NewNodeClaims {
		c := claim{pool: nc.NodePoolName, nc: nc}
		for _, p := range nc.Pods {
			c.pods = append(c.pods, uidKeys[p.UID])
		}
		sort.Strings(c.pods)
		if len(c.pods) > 0 {
			c.first = c.pods[0]
		}
		claims = append(claims, c)
	}
	sort.SliceStable(claims, func(i, j int) bool {
		if order[claims[i].pool] != order[claims[j].pool] {
			return order[claims[i].pool] < order[claims[j].pool]
		}
		return claims[i].first < claims[j].first
	})
	counts := map[string]int{}
	// Results.ExistingNodes: the static replicas with the pods placed on them, reported first in their pool, as
	// gpuplan reports a replica (it has no pods of its own to sort by).
	byNode := map[string]*scheduling.ExistingNode{}
	for _, n := range results.ExistingNodes {
		byNode[n.Name()] = n
	}
	for _, rep := range replicas {
		c := rep.report
		if n, ok := byNode[rep.node]; ok {
			for _, p := range n.Pods {
				c.Pods = append(c.Pods, uidKeys[p.UID])
			}
		}
		sort.Strings(c.Pods)
		if c.Pods == nil {
			c.Pods = []string{}
		}
		counts[c.NodePool]++
		c.Name = fmt.Sprintf("%s-%d", c.NodePool, counts[c.NodePool])
		r.NodeClaims = append(r.NodeClaims, c)
		r.USDPerHour += c.USDPerHour
		r.PriceEstimate = r.PriceEstimate || c.PriceEstimate
	}
	for _, c := range claims {
		l, err := w.launch(ctx, c.nc, its[c.pool])
		if err != nil {
			// The launch fails (an insufficient-capacity error): the pods stay pending.
			for _, p := range c.pods {
				r.Pending = append(r.Pending, pendingPod{Pod: p, Reason: "launch: " + err.Error()})
			}
			continue
		}
		counts[c.pool]++
		l.Name = fmt.Sprintf("%s-%d", c.pool, counts[c.pool])
		l.NodePool = c.pool
		l.Pods = c.pods
		r.NodeClaims = append(r.NodeClaims, *l)
		r.USDPerHour += l.USDPerHour
		r.PriceEstimate = r.PriceEstimate || l.PriceEstimate
	}
	r.USDPerHour = math.Round(r.USDPerHour*10_000) / 10_000
	for p, e := range results.PodErrors {
		r.Pending = append(r.Pending, pendingPod{Pod: uidKeys[p.UID], Reason: e.Error()})
	}
	sortPending(r)
	for _, np := range append(nodePools, staticPools...) {
		r.NodePools = append(r.NodePools, nodePoolReport{Name: np.Name, Weight: int64(lo.FromPtr(np.Spec.Weight)), NodeClaims: counts[np.Name], Replicas: np.Spec.Replicas})
	}
	return r, nil
}

func sortPending(r *report) {
	sort.Slice(r.Pending, func(i, j int) bool { return r.Pending[i].Pod < r.Pending[j].Pod })
}

// launch is what the AWS provider does with a NodeClaim (pkg/providers/instance/instance.go Create): the NodeClaim as
// the provisioner creates it (nodeclaimtemplate.go ToNodeClaim), the launch filters (filterInstanceTypes, in its
// order, over every type of the NodePool, as cloudprovider.go Create lists them), truncation to 60 types, the capacity
// type (getCapacityType: reserved, then spot, then on-demand, the first with an available compatible offering), and the
// cheapest such offering (CreateFleet's lowest-price for on-demand; for spot EC2's price-capacity-optimized choice
// depends on live capacity, so only the candidate set is comparable). Ties: type name, then zone (gpuplan's rule).
func (w *world) launch(ctx context.Context, nc *scheduling.NodeClaim, all []*cloudprovider.InstanceType) (*nodeClaimReport, error) {
	l, _, err := w.create(ctx, nc.NodeClaimTemplate.ToNodeClaim(), all)
	return l, err
}

// create launches a NodeClaim as the provider's Create does (see launch), and returns the launched type too.
func (w *world) create(ctx context.Context, claim *karpv1.NodeClaim, all []*cloudprovider.InstanceType) (*nodeClaimReport, *cloudprovider.InstanceType, error) {
	reqs := karpscheduling.NewNodeSelectorRequirementsWithMinValues(claim.Spec.Requirements...)
	// The provider lists fresh instance types for every Create; SpotOfferingFilter replaces an instance type's
	// Offerings slice in place (filter.go: "only safe to mutate the slice"), so launch works on copies.
	types := make([]*cloudprovider.InstanceType, len(all))
	for i, it := range all {
		types[i] = &cloudprovider.InstanceType{Name: it.Name, Requirements: it.Requirements, Offerings: it.Offerings, Capacity: it.Capacity, DynamicResources: it.DynamicResources, Overhead: it.Overhead}
	}
	for _, f := range []instancefilter.Filter{
		instancefilter.CompatibleAvailableFilter(reqs, claim.Spec.Resources.Requests),
		instancefilter.CapacityReservationTypeFilter(reqs),
		instancefilter.CapacityBlockFilter(reqs),
		instancefilter.ReservedOfferingFilter(reqs),
		instancefilter.ExoticInstanceTypeFilter(reqs),
		instancefilter.SpotOfferingFilter(reqs),
	} {
		remaining, _ := f.FilterReject(types)
		if len(remaining) == 0 {
			return nil, nil, fmt.Errorf("all requested instance types were unavailable during launch (%s)", f.Name())
		}
		types = remaining
	}
	types, err := cloudprovider.InstanceTypes(types).Truncate(ctx, reqs, 60)
	if err != nil {
		return nil, nil, err
	}
	capacityType := karpv1.CapacityTypeOnDemand
	for _, ct := range []string{karpv1.CapacityTypeReserved, karpv1.CapacityTypeSpot} {
		if !reqs.Get(karpv1.CapacityTypeLabelKey).Has(ct) {
			continue
		}
		r := karpscheduling.NewRequirements(reqs.Values()...)
		r[karpv1.CapacityTypeLabelKey] = karpscheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct)
		if lo.ContainsBy(types, func(it *cloudprovider.InstanceType) bool { return len(it.Offerings.Available().Compatible(r)) != 0 }) {
			capacityType = ct
			break
		}
	}
	r := karpscheduling.NewRequirements(reqs.Values()...)
	r[karpv1.CapacityTypeLabelKey] = karpscheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType)
	type choice struct {
		typ, zone string
		price     float64
		it        *cloudprovider.InstanceType
	}
	var best *choice
	names := []string{}
	for _, it := range types {
		names = append(names, it.Name)
		for _, o := range it.Offerings.Available().Compatible(r) {
			c := choice{it.Name, o.Zone(), o.Price, it}
			if best == nil || c.price < best.price || (c.price == best.price && (c.typ < best.typ || (c.typ == best.typ && c.zone < best.zone))) {
				best = &c
			}
		}
	}
	if best == nil {
		return nil, nil, fmt.Errorf("no available %s offering", capacityType)
	}
	sort.Strings(names)
	p := w.prices[w.priceKey(best.typ, capacityType, best.zone)]
	usd := best.price // NodeOverlay prices apply
	if capacityType == karpv1.CapacityTypeReserved {
		usd = p.usd // gpuplan bills reserved capacity at the on-demand price
	}
	return &nodeClaimReport{
		InstanceType: best.typ, CapacityType: capacityType, Zone: best.zone,
		USDPerHour: math.Round(usd*10_000) / 10_000, PriceEstimate: p.estimate, Candidates: names,
	}, best.it, nil
}
