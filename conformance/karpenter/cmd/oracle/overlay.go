package main

// NodeOverlays (karpenter.sh/v1alpha1) through Karpenter's own controller and store
// (sigs.k8s.io/karpenter pkg/controllers/nodeoverlay/controller.go Reconcile: overlays by weight, validation, conflicts;
// store.go ApplyAll), as the overlay decorator applies them to GetInstanceTypes (pkg/cloudprovider/overlay) when the
// NodeOverlay feature gate is on.

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
)

// overlaid returns each NodePool's instance types with the overlays applied.
func overlaid(ctx context.Context, nodePools []*karpv1.NodePool, its map[string][]*cloudprovider.InstanceType, overlays []*v1alpha1.NodeOverlay) (map[string][]*cloudprovider.InstanceType, error) {
	objs := []client.Object{}
	for _, np := range nodePools {
		objs = append(objs, np.DeepCopy())
	}
	for _, o := range overlays {
		objs = append(objs, o.DeepCopy())
	}
	kube := fakecr.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithStatusSubresource(&v1alpha1.NodeOverlay{}).Build()
	cp := &staticCloudProvider{types: its}
	store := nodeoverlay.NewInstanceTypeStore()
	clk := clock.RealClock{}
	ctrl := nodeoverlay.NewController(clk, kube, cp, store, state.NewCluster(clk, kube, cp))
	for i := 0; ; i++ {
		res, err := ctrl.Reconcile(ctx, reconcile.Request{})
		if err != nil {
			return nil, fmt.Errorf("nodeoverlay: %w", err)
		}
		if !res.Requeue || i > 3 {
			break
		}
	}
	out := map[string][]*cloudprovider.InstanceType{}
	for _, np := range nodePools {
		list, err := store.ApplyAll(np.Name, its[np.Name])
		if err != nil {
			return nil, fmt.Errorf("nodeoverlay: %w", err)
		}
		out[np.Name] = list
	}
	return out, nil
}
