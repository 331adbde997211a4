package main

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/status"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// staticCloudProvider answers GetInstanceTypes from the types built for each NodePool; state.NewCluster and the
// NodeOverlay controller need a cloudprovider.CloudProvider (sigs.k8s.io/karpenter pkg/cloudprovider/types.go). The core
// fake is not used: its init() rebinds cloudprovider.ReservationIDLabel, which the AWS provider sets to its own label.
type staticCloudProvider struct {
	types map[string][]*cloudprovider.InstanceType
}

var _ cloudprovider.CloudProvider = (*staticCloudProvider)(nil)

func (c *staticCloudProvider) Create(context.Context, *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	return nil, fmt.Errorf("not supported offline")
}
func (c *staticCloudProvider) Delete(context.Context, *karpv1.NodeClaim) error { return nil }
func (c *staticCloudProvider) Get(context.Context, string) (*karpv1.NodeClaim, error) {
	return nil, fmt.Errorf("not supported offline")
}
func (c *staticCloudProvider) List(context.Context) ([]*karpv1.NodeClaim, error) { return nil, nil }
func (c *staticCloudProvider) GetInstanceTypes(_ context.Context, np *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return c.types[np.Name], nil
}
func (c *staticCloudProvider) IsDrifted(context.Context, *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	return "", nil
}
func (c *staticCloudProvider) RepairPolicies() []cloudprovider.RepairPolicy { return nil }
func (c *staticCloudProvider) Name() string                                 { return "gpuplan-conformance" }
func (c *staticCloudProvider) GetSupportedNodeClasses() []status.Object     { return nil }
