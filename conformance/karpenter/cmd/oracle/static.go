package main

// Static NodePools (spec.replicas): their nodes are launched by the static provisioning controller whatever the pods,
// and the provisioner's scheduler then sees them as existing nodes. The oracle does what those two do:
//
//   - sigs.k8s.io/karpenter v1.14.1 pkg/controllers/static/provisioning/controller.go Reconcile: the number to launch is
//     NodePoolState.ReserveNodeCount(np, limits.nodes, replicas - running) (here nothing runs yet), and each replica is
//     a NodeClaim of scheduling.NewNodeClaimTemplate(np) with no pods, created through Provisioner.CreateNodeClaims;
//   - pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go ToNodeClaim: IsStaticNodeClaim, so no
//     instance-type requirement is added ("For static we let cloudprovider.Create()") and no resources are requested;
//   - aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/cloudprovider.go Create: every instance type of the
//     NodeClass (overlaid by the NodePool's NodeOverlays when the gate is on), then pkg/providers/instance/instance.go
//     Create (the oracle's create: the launch filters, truncation, capacity type, cheapest offering), and
//     instanceToNodeClaim for the launched NodeClaim's labels, capacity and allocatable;
//   - pkg/controllers/nodeclaim/lifecycle (launch.go PopulateNodeClaimDetails, registration.go, initialization.go): the
//     Node carries the provider's labels under the NodeClaim's, the NodeClaim's taints (startup taints are gone once
//     initialized), and the registered and initialized labels;
//   - pkg/controllers/state/cluster.go UpdateNodeClaim and UpdateNode register both, and the provisioner passes
//     cluster.DeepCopyNodes().Active() to NewTopology and NewScheduler (provisioner.go Schedule, NewScheduler); the
//     scheduler tries them first (scheduler.go add: addToExistingNode, existingnode.go CanAdd) and reports them in
//     Results.ExistingNodes.

import (
	"context"
	"fmt"
	"math"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// staticReplica is one launched replica: its Node's name (the scheduler tries existing nodes in name order) and its
// report line.
type staticReplica struct {
	node   string
	report nodeClaimReport
}

// staticPool is a static NodePool the oracle launches replicas for, with the instance types its NodeClass offers.
type staticPool struct {
	np    *karpv1.NodePool
	class *awsv1.EC2NodeClass
}

// launchStatic launches every static NodePool's replicas and registers them in cluster as initialized Nodes with
// their NodeClaims. Pools come in gpuplan's order (weight, then name descending: the order it tries them in), and node
// names sort in that order, standing in for the EC2 private DNS names that order real nodes. A replica whose launch
// fails is not created (the controller retries later); the error is its report's reason.
func (w *world) launchStatic(ctx context.Context, cluster *state.Cluster, pools []staticPool, its map[string][]*cloudprovider.InstanceType) ([]staticReplica, []string, error) {
	var out []staticReplica
	var failed []string
	for p, sp := range pools {
		np := sp.np
		limit, ok := np.Spec.Limits[resources.Node]
		nodeLimit := lo.Ternary(ok, limit.Value(), int64(math.MaxInt64))
		count := cluster.NodePoolState.ReserveNodeCount(np.Name, nodeLimit, lo.FromPtr(np.Spec.Replicas))
		for k := int64(1); k <= count; k++ {
			claim := scheduling.NewNodeClaimTemplate(np).ToNodeClaim()
			l, it, err := w.create(ctx, claim, its[np.Name])
			// provisioner.go CreateNodeClaims releases the reservation whether or not the launch succeeded.
			cluster.NodePoolState.ReleaseNodeCount(np.Name, 1)
			if err != nil {
				failed = append(failed, fmt.Sprintf("NodePool %s replica %d: %v", np.Name, k, err))
				continue
			}
			name := fmt.Sprintf("static-%03d-%s-%04d", p, np.Name, k)
			nc, node := replicaObjects(claim, sp.class, it, l, name)
			cluster.UpdateNodeClaim(nc)
			if err := cluster.UpdateNode(ctx, node); err != nil {
				return nil, nil, fmt.Errorf("static replica %s: %w", name, err)
			}
			l.NodePool = np.Name
			l.Static = true
			out = append(out, staticReplica{node: name, report: *l})
		}
	}
	return out, failed, nil
}

// replicaObjects is the launched NodeClaim and its registered, initialized Node.
func replicaObjects(claim *karpv1.NodeClaim, class *awsv1.EC2NodeClass, it *cloudprovider.InstanceType, l *nodeClaimReport, name string) (*karpv1.NodeClaim, *corev1.Node) {
	providerID := fmt.Sprintf("aws:///%s/i-%s", l.Zone, name)
	labels := instanceLabels(it, l.Zone, l.CapacityType)
	if l.CapacityType == karpv1.CapacityTypeReserved {
		for _, o := range it.Offerings.Available() {
			if o.CapacityType() == karpv1.CapacityTypeReserved && o.Zone() == l.Zone {
				labels[cloudprovider.ReservationIDLabel] = o.ReservationID()
				labels[awsv1.LabelCapacityReservationType] = o.Requirements.Get(awsv1.LabelCapacityReservationType).Any()
				labels[awsv1.LabelCapacityReservationInterruptible] = o.Requirements.Get(awsv1.LabelCapacityReservationInterruptible).Any()
				break
			}
		}
	}
	// EFA is advertised only when requested (a static NodeClaim requests nothing) or the NodeClass configures network
	// interfaces (instance.go getEFACountForInstance).
	keep := func(n corev1.ResourceName, v resource.Quantity) bool {
		return !resources.IsZero(v) && (n != awsv1.ResourceEFA || class.NetworkInterfaces() != nil)
	}
	// launch.go PopulateNodeClaimDetails: the NodeClaim's own labels win over the provider's.
	labels = lo.Assign(labels, claim.Labels)
	nc := claim.DeepCopy()
	nc.Name = name
	nc.UID = types.UID("nodeclaim-" + name)
	nc.Labels = labels
	nc.Status.ProviderID = providerID
	nc.Status.Capacity = lo.PickBy(it.Capacity, keep)
	nc.Status.Allocatable = lo.PickBy(it.Allocatable(), keep)
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeInitialized)
	nc.Status.NodeName = name
	// registration.go syncNode: the NodeClaim's labels and taints, the hostname kubelet sets, the registered label;
	// initialization.go: the initialized label once startup taints are gone.
	nodeLabels := lo.Assign(labels, map[string]string{
		corev1.LabelHostname:           name,
		karpv1.NodeRegisteredLabelKey:  "true",
		karpv1.NodeInitializedLabelKey: "true",
	})
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nodeLabels, UID: types.UID("node-" + name), CreationTimestamp: metav1.Unix(1_700_000_000, 0)},
		Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: karpscheduling.Taints(nil).Merge(claim.Spec.Taints)},
		Status:     corev1.NodeStatus{Capacity: nc.Status.Capacity, Allocatable: nc.Status.Allocatable, Phase: corev1.NodeRunning},
	}
	return nc, node
}

// instanceLabels is what karpenter-provider-aws pkg/cloudprovider/cloudprovider.go instanceToNodeClaim labels a
// launched instance with: the type's single-valued requirements but the reservation ones, zone, zone ID (the
// oracle's subnets carry the zone's name as its ID: simulate.go), capacity type and tenancy (v1.14.1's EC2NodeClass
// has no tenancy field: every instance has the default one). A reserved instance's reservation labels are the
// caller's.
func instanceLabels(it *cloudprovider.InstanceType, zone, capacityType string) map[string]string {
	labels := map[string]string{}
	for key, req := range it.Requirements {
		if req.Len() == 1 && !lo.Contains([]string{cloudprovider.ReservationIDLabel, awsv1.LabelCapacityReservationType, awsv1.LabelCapacityReservationInterruptible}, key) {
			labels[key] = req.Values()[0]
		}
	}
	labels[corev1.LabelTopologyZone] = zone
	labels[awsv1.LabelTopologyZoneID] = zone
	labels[karpv1.CapacityTypeLabelKey] = capacityType
	labels[awsv1.LabelInstanceTenancy] = "default"
	return labels
}
