package main

import (
	"context"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

func applyOverlays(ctx context.Context, np *karpv1.NodePool, its []*cloudprovider.InstanceType, overlays []*v1alpha1.NodeOverlay) ([]*cloudprovider.InstanceType, error) {
	return its, nil
}
