package main

// The cloud a forecast runs against: EC2 as the AWS provider sees it (github.com/aws/karpenter-provider-aws v1.14.1
// pkg/cloudprovider/cloudprovider.go), at gpuplan's catalog prices, with the trace's shortages, and a fake clock.

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/samber/lo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
)

// simClock is the fake clock every controller reads (k8s.io/utils/clock/testing FakeClock), with two changes that
// keep a run single-threaded and deterministic: Sleep does not advance time (nodeclaim/lifecycle/controller.go sleeps
// a second after a patch "to read our own writes", which a fake client does not need), and After first lets the
// world advance to the deadline (disruption/validation.go waits 15 s between computing a command and validating it;
// in a real cluster pods and nodes change meanwhile, and so they do here) and then returns a fired channel.
type simClock struct {
	*clocktesting.FakeClock
	advance func(d time.Duration)
}

func (c *simClock) Sleep(time.Duration) {}

func (c *simClock) After(d time.Duration) <-chan time.Time {
	if c.advance != nil {
		c.advance(d)
	} else {
		c.Step(d)
	}
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

// iceTTL is how long the AWS provider keeps an offering unavailable after an insufficient-capacity error
// (pkg/cache/cache.go UnavailableOfferingsTTL, 3 minutes).
const iceTTL = 3 * time.Minute

type shortage struct {
	typ, zone, capacity string
	from, until         time.Time
}

type instance struct {
	claim      *karpv1.NodeClaim
	launchedAt time.Time
	// goneAt: the instance is terminated from then on (Delete called, or reclaimed after a spot interruption).
	goneAt *time.Time
}

// forecastCloud is the cloudprovider.CloudProvider of a forecast run: Create launches as the oracle's simulate does
// (world.create: the launch filters, the 60-type cut, the capacity type, the cheapest available offering) on the
// NodePool's types with the offerings an insufficient-capacity error marked unavailable (the provider's
// UnavailableOfferings cache); an offering in a trace shortage fails the launch, is marked, and the next is tried, as
// CreateFleet's overrides do.
type forecastCloud struct {
	w         *world
	ctx       context.Context
	clk       *simClock
	nodePools map[string]*karpv1.NodePool
	classes   map[string]*awsv1.EC2NodeClass // by NodePool
	its       map[string][]*cloudprovider.InstanceType
	shortages []shortage
	drifts    map[string]time.Time // NodePool -> drifted from
	ice       map[string]time.Time // type/zone/capacity -> unavailable until
	instances map[string]*instance // by provider ID
	order     []string             // provider IDs in launch order
	count     int
}

var _ cloudprovider.CloudProvider = (*forecastCloud)(nil)

func iceKey(t, z, c string) string { return t + "/" + z + "/" + c }

func (c *forecastCloud) inShortage(t, z, ct string) bool {
	now := c.clk.Now()
	for _, s := range c.shortages {
		if s.typ == t && s.zone == z && s.capacity == ct && !now.Before(s.from) && now.Before(s.until) {
			return true
		}
	}
	return false
}

// withICE is a NodePool's types with the offerings in the unavailable-offerings cache marked unavailable (copies: the
// built types are shared).
func (c *forecastCloud) withICE(list []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
	now := c.clk.Now()
	active := map[string]bool{}
	for k, until := range c.ice {
		if now.Before(until) {
			active[k] = true
		}
	}
	if len(active) == 0 {
		return list
	}
	out := make([]*cloudprovider.InstanceType, len(list))
	for i, it := range list {
		touched := false
		for _, o := range it.Offerings {
			if active[iceKey(it.Name, o.Zone(), o.CapacityType())] {
				touched = true
				break
			}
		}
		if !touched {
			out[i] = it
			continue
		}
		cp := &cloudprovider.InstanceType{Name: it.Name, Requirements: it.Requirements, Capacity: it.Capacity, DynamicResources: it.DynamicResources, Overhead: it.Overhead}
		for _, o := range it.Offerings {
			if active[iceKey(it.Name, o.Zone(), o.CapacityType())] {
				o2 := *o
				o2.Available = false
				cp.Offerings = append(cp.Offerings, &o2)
			} else {
				cp.Offerings = append(cp.Offerings, o)
			}
		}
		out[i] = cp
	}
	return out
}

func (c *forecastCloud) Create(ctx context.Context, nc *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	pool := nc.Labels[karpv1.NodePoolLabelKey]
	np, ok := c.nodePools[pool]
	if !ok {
		return nil, fmt.Errorf("no NodePool %q", pool)
	}
	for {
		types := c.withICE(c.its[np.Name])
		l, it, err := c.w.create(c.ctx, nc, types)
		if err != nil {
			return nil, cloudprovider.NewInsufficientCapacityError(err)
		}
		if c.inShortage(l.InstanceType, l.Zone, l.CapacityType) {
			c.ice[iceKey(l.InstanceType, l.Zone, l.CapacityType)] = c.clk.Now().Add(iceTTL)
			continue
		}
		c.count++
		name := fmt.Sprintf("i-%08d", c.count)
		claim, _ := replicaObjects(nc, c.classes[pool], it, l, name)
		claim.Name = nc.Name
		claim.UID = nc.UID
		claim.Status.NodeName = ""
		claim.Status.Conditions = nil
		claim.Status.ProviderID = fmt.Sprintf("aws:///%s/%s", l.Zone, name)
		claim.Status.ImageID = "ami-gpuplan"
		c.instances[claim.Status.ProviderID] = &instance{claim: claim.DeepCopy(), launchedAt: c.clk.Now()}
		c.order = append(c.order, claim.Status.ProviderID)
		return claim, nil
	}
}

func (c *forecastCloud) Delete(_ context.Context, nc *karpv1.NodeClaim) error {
	inst, ok := c.instances[nc.Status.ProviderID]
	if !ok || inst.goneAt != nil && !c.clk.Now().Before(*inst.goneAt) {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s terminated", nc.Status.ProviderID))
	}
	now := c.clk.Now()
	inst.goneAt = &now
	return nil
}

func (c *forecastCloud) Get(_ context.Context, providerID string) (*karpv1.NodeClaim, error) {
	inst, ok := c.instances[providerID]
	if !ok || inst.goneAt != nil && !c.clk.Now().Before(*inst.goneAt) {
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", providerID))
	}
	return inst.claim.DeepCopy(), nil
}

func (c *forecastCloud) List(context.Context) ([]*karpv1.NodeClaim, error) {
	var out []*karpv1.NodeClaim
	for _, id := range c.order {
		if inst := c.instances[id]; inst.goneAt == nil || c.clk.Now().Before(*inst.goneAt) {
			out = append(out, inst.claim.DeepCopy())
		}
	}
	return out, nil
}

func (c *forecastCloud) GetInstanceTypes(_ context.Context, np *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return c.withICE(c.its[np.Name]), nil
}

// IsDrifted: a trace Drift event says the NodePool's NodeClass (or AMI) changed at a moment; the nodes launched
// before it no longer match (the AWS provider's cloudprovider.go IsDrifted compares the NodeClass's hash and AMIs).
func (c *forecastCloud) IsDrifted(_ context.Context, nc *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	at, ok := c.drifts[nc.Labels[karpv1.NodePoolLabelKey]]
	inst := c.instances[nc.Status.ProviderID]
	if ok && inst != nil && inst.launchedAt.Before(at) && !c.clk.Now().Before(at) {
		return "NodeClassDrift", nil
	}
	return "", nil
}
func (c *forecastCloud) RepairPolicies() []cloudprovider.RepairPolicy { return nil }
func (c *forecastCloud) Name() string                                 { return "aws" }
func (c *forecastCloud) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&awsv1.EC2NodeClass{}}
}

// readyNodePool is a NodePool as the nodepool readiness controller leaves it once its EC2NodeClass is ready
// (pkg/controllers/nodepool/readiness): the provisioner skips a NodePool that is not Ready (provisioner.go NewScheduler).
func readyNodePool(np *karpv1.NodePool, now time.Time) *karpv1.NodePool {
	np = np.DeepCopy()
	np.ResourceVersion = ""
	np.UID = types.UID("nodepool-" + np.Name)
	np.CreationTimestamp = metav1.NewTime(now)
	// Ready is the root of ValidationSucceeded and NodeClassReady (nodepool_status.go StatusConditions).
	np.StatusConditions().SetTrue(karpv1.ConditionTypeValidationSucceeded)
	np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeClassReady)
	return np
}

// sortedKeys of a map, for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	ks := lo.Keys(m)
	sort.Strings(ks)
	return ks
}

// admitted is each NodePool's instance types cut to those its own requirements admit. The scheduler intersects every
// type with the NodePool's template requirements before anything else (scheduling/scheduler.go NewScheduler →
// filterInstanceTypesByRequirements; nodeclaimtemplate.go), and a launch lists only compatible types, so a type the
// NodePool excludes can never be chosen: dropping it up front changes no decision and saves every Schedule and every
// consolidation simulation of a forecast run the work of rejecting ~1,400 types again.
func admitted(pools map[string]*karpv1.NodePool, its map[string][]*cloudprovider.InstanceType) map[string][]*cloudprovider.InstanceType {
	out := map[string][]*cloudprovider.InstanceType{}
	for name, list := range its {
		np, ok := pools[name]
		if !ok {
			continue
		}
		reqs := karpscheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
		out[name] = lo.Filter(list, func(it *cloudprovider.InstanceType, _ int) bool {
			return it.Requirements.Compatible(reqs, karpscheduling.AllowUndefinedWellKnownLabels) == nil && len(it.Offerings.Compatible(reqs)) > 0
		})
	}
	return out
}
