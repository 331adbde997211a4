package main

// oracle drift: whether the nodes a base NodePool and EC2NodeClass launched drift once the head objects are applied,
// decided by Karpenter v1.14.1's own code:
//   - the objects are defaulted from the CRDs as the API server stores them (k8s.io/apiextensions-apiserver
//     pkg/apiserver/schema/defaulting), then read into Karpenter's types;
//   - a node of the base is the NodeClaim Karpenter creates for it: scheduling.NewNodeClaimTemplate(base).ToNodeClaim()
//     (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go: labels, the NodePool hash
//     annotations), the labels the AWS provider resolves for the launched instance (karpenter-provider-aws
//     pkg/cloudprovider/cloudprovider.go instanceToNodeClaim, from the instance type the provider's own types.go
//     builds), merged as pkg/controllers/nodeclaim/lifecycle/launch.go PopulateNodeClaimDetails merges them, and the
//     EC2NodeClass hash annotations cloudprovider.go Create writes (EC2NodeClass.Hash, EC2NodeClassHashVersion);
//   - the head objects get their hash annotations from the controllers that write them (sigs.k8s.io/karpenter
//     pkg/controllers/nodepool/hash, karpenter-provider-aws pkg/controllers/nodeclass/hash), the live objects' hash
//     versions already set (an applied manifest does not remove the controller's annotations);
//   - the verdict is the Drifted condition the NodeClaim disruption controller sets
//     (pkg/controllers/nodeclaim/disruption/drift.go: static fields, then requirements, then the cloud provider).
//
// Not covered, and so not decided here (gpuplan reports them as not proven): the provider's checks that read AWS
// state (AMI, subnet, security group, capacity reservation and placement group resolution: drift.go isAMIDrifted
// and the rest need the resolved status of the EC2NodeClass and the running instance), and InstanceTypeNotFound
// (checked only an hour after launch, against the cloud provider's current offerings). The cloud provider's
// IsDrifted below is the provider's areStaticFieldsDrifted (pkg/cloudprovider/drift.go), the first of its checks.
//
//	oracle drift --cases FILE --crds DIR [--catalogs DIR] [--region R]   (prints the verdicts as JSON)

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/samber/lo"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	clock "k8s.io/utils/clock/testing"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	nodeclasshash "github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass/hash"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	ncdisruption "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/disruption"
	nodepoolhash "sigs.k8s.io/karpenter/pkg/controllers/nodepool/hash"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)

type driftObjects struct {
	NodePool  json.RawMessage `json:"nodepool"`
	NodeClass json.RawMessage `json:"nodeclass"`
}

type driftNode struct {
	InstanceType  string `json:"instance_type"`
	Zone          string `json:"zone"`
	CapacityType  string `json:"capacity_type"`
	ReservationID string `json:"reservation_id,omitempty"`
}

type driftCase struct {
	ID string `json:"id"`
	// The catalog's region (the --region flag's when empty).
	Region string       `json:"region,omitempty"`
	Base   driftObjects `json:"base"`
	Head   driftObjects `json:"head"`
	Nodes  []driftNode  `json:"nodes"`
}

type driftVerdict struct {
	ID string `json:"id"`
	// Per node, in the order given: the Drifted condition's reason, "" when the node does not drift.
	Reasons []string `json:"reasons"`
	Error   string   `json:"error,omitempty"`
}

func driftMain(argv []string) error {
	var casesPath, crds, catalogs, region string
	for i := 0; i < len(argv); i++ {
		if i+1 >= len(argv) {
			return fmt.Errorf("%s needs a value", argv[i])
		}
		switch argv[i] {
		case "--cases":
			casesPath = argv[i+1]
		case "--crds":
			crds = argv[i+1]
		case "--catalogs":
			catalogs = argv[i+1]
		case "--region":
			region = argv[i+1]
		default:
			return fmt.Errorf("unknown flag %s", argv[i])
		}
		i++
	}
	if casesPath == "" || crds == "" {
		return fmt.Errorf("usage: oracle drift --cases FILE --crds DIR [--catalogs DIR] [--region R]")
	}
	raw, err := os.ReadFile(casesPath)
	if err != nil {
		return err
	}
	var cases []driftCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return err
	}
	d, err := newDrifter(crds, catalogs, region)
	if err != nil {
		return err
	}
	out := make([]driftVerdict, 0, len(cases))
	for _, c := range cases {
		v := driftVerdict{ID: c.ID}
		reasons, err := d.decide(c)
		if err != nil {
			v.Error = err.Error()
		} else {
			v.Reasons = reasons
		}
		out = append(out, v)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(b))
	return nil
}

type drifter struct {
	nodePoolSchema, nodeClassSchema *structuralschema.Structural
	catalogs, region                string
	worlds                          map[string]*world
	kube                            crclient.Client
	// The instance types resolved so far, by region, the class's spec and the type's name.
	types map[string]*cloudprovider.InstanceType
}

func newDrifter(crds, catalogs, region string) (*drifter, error) {
	np, err := structuralFromCRD(filepath.Join(crds, "karpenter.sh_nodepools.yaml"))
	if err != nil {
		return nil, err
	}
	nc, err := structuralFromCRD(filepath.Join(crds, "karpenter.k8s.aws_ec2nodeclasses.yaml"))
	if err != nil {
		return nil, err
	}
	if region == "" {
		region = "us-east-1"
	}
	if catalogs == "" {
		catalogs = "catalogs"
	}
	// The plain object tracker: the field-managed one builds a REST mapper of the whole scheme on every write.
	kube := fakecr.NewClientBuilder().WithScheme(scheme.Scheme).
		WithObjectTracker(clienttesting.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder())).
		WithStatusSubresource(&karpv1.NodeClaim{}, &karpv1.NodePool{}, &awsv1.EC2NodeClass{}).Build()
	return &drifter{nodePoolSchema: np, nodeClassSchema: nc, catalogs: catalogs, region: region, worlds: map[string]*world{}, kube: kube, types: map[string]*cloudprovider.InstanceType{}}, nil
}

// world is the region's catalog, loaded once.
func (d *drifter) world(region string) (*world, error) {
	if region == "" {
		region = d.region
	}
	if w, ok := d.worlds[region]; ok {
		return w, nil
	}
	cat, err := loadCatalog(d.catalogs, region)
	if err != nil {
		return nil, err
	}
	cat.prices = map[string]priceInfo{}
	w := &world{key: region, cat: cat, prices: cat.prices}
	d.worlds[region] = w
	return w, nil
}

// structuralFromCRD reads a CRD's served v1 schema as the API server builds it for defaulting
// (k8s.io/apiextensions-apiserver pkg/apiserver/customresource_handler.go: v1 → internal → structural).
func structuralFromCRD(path string) (*structuralschema.Structural, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != "v1" || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, err
		}
		return structuralschema.NewStructural(internal)
	}
	return nil, fmt.Errorf("%s: no v1 schema", path)
}

// defaulted decodes raw JSON into out after the CRD's defaults are applied.
func defaulted(raw json.RawMessage, s *structuralschema.Structural, out any) error {
	var u map[string]any
	if err := json.Unmarshal(raw, &u); err != nil {
		return err
	}
	defaulting.Default(u, s)
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func (d *drifter) objects(o driftObjects) (*karpv1.NodePool, *awsv1.EC2NodeClass, error) {
	np := &karpv1.NodePool{}
	if err := defaulted(o.NodePool, d.nodePoolSchema, np); err != nil {
		return nil, nil, fmt.Errorf("nodepool: %w", err)
	}
	nc := &awsv1.EC2NodeClass{}
	if err := defaulted(o.NodeClass, d.nodeClassSchema, nc); err != nil {
		return nil, nil, fmt.Errorf("nodeclass: %w", err)
	}
	// Both kinds are cluster-scoped: the API server stores them without the namespace a manifest may carry.
	np.Namespace, nc.Namespace = "", ""
	return np, nc, nil
}

func (d *drifter) decide(c driftCase) ([]string, error) {
	// The operator's options in the context, as every other command of the oracle runs (simulate.go withOptions).
	ctx, err := withOptions(context.Background(), false)
	if err != nil {
		return nil, err
	}
	baseNP, baseNC, err := d.objects(c.Base)
	if err != nil {
		return nil, fmt.Errorf("base %w", err)
	}
	headNP, headNC, err := d.objects(c.Head)
	if err != nil {
		return nil, fmt.Errorf("head %w", err)
	}
	// The live head objects: the hash versions the controllers wrote earlier are kept by an apply.
	headNP.Annotations = lo.Assign(headNP.Annotations, map[string]string{karpv1.NodePoolHashVersionAnnotationKey: karpv1.NodePoolHashVersion})
	headNC.Annotations = lo.Assign(headNC.Annotations, map[string]string{awsv1.AnnotationEC2NodeClassHashVersion: awsv1.EC2NodeClassHashVersion})
	w, err := d.world(c.Region)
	if err != nil {
		return nil, err
	}
	resolve := func(name string) (*cloudprovider.InstanceType, bool) {
		spec, _ := json.Marshal(baseNC.Spec)
		key := c.Region + "\x00" + string(spec) + "\x00" + name
		if it, ok := d.types[key]; ok {
			return it, true
		}
		it, ok := w.instanceType(ctx, baseNC, name)
		if ok {
			d.types[key] = it
		}
		return it, ok
	}
	// One client for every case (building one is most of a case's work): the case's objects are deleted after it.
	kube := d.kube
	for _, o := range []crclient.Object{headNP, headNC} {
		if err := kube.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	defer func() {
		_ = kube.DeleteAllOf(ctx, &karpv1.NodeClaim{})
		_ = kube.DeleteAllOf(ctx, &karpv1.NodePool{})
		_ = kube.DeleteAllOf(ctx, &awsv1.EC2NodeClass{})
	}()
	cp := &driftCloud{kube: kube}
	if _, err := nodepoolhash.NewController(kube, cp).Reconcile(ctx, headNP); err != nil {
		return nil, fmt.Errorf("nodepool hash: %w", err)
	}
	if _, err := nodeclasshash.NewController(kube, nil).Reconcile(ctx, headNC); err != nil {
		return nil, fmt.Errorf("nodeclass hash: %w", err)
	}
	disruption := ncdisruption.NewController(clock.NewFakeClock(driftNow), kube, cp)
	reasons := make([]string, 0, len(c.Nodes))
	for i, n := range c.Nodes {
		it, ok := resolve(n.InstanceType)
		if !ok {
			return nil, fmt.Errorf("node %d: no instance type %s in the catalog", i, n.InstanceType)
		}
		claim := baseNodeClaim(baseNP, baseNC, it, n, i)
		if os.Getenv("GPUPLAN_DRIFT_DEBUG") == "1" {
			fmt.Fprintf(os.Stderr, "%s node %d labels %v\n", c.ID, i, claim.Labels)
		}
		reason, err := drifted(ctx, kube, disruption, claim)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		reasons = append(reasons, reason)
	}
	return reasons, nil
}

// baseNodeClaim is the NodeClaim of a node the base objects launched on it in zone n.Zone as n.CapacityType.
func baseNodeClaim(np *karpv1.NodePool, nc *awsv1.EC2NodeClass, it *cloudprovider.InstanceType, n driftNode, i int) *karpv1.NodeClaim {
	claim := scheduling.NewNodeClaimTemplate(np).ToNodeClaim()
	claim.Name = fmt.Sprintf("%s-%d", np.Name, i)
	claim.CreationTimestamp = metav1.NewTime(driftNow)
	// pkg/cloudprovider/cloudprovider.go instanceToNodeClaim (static.go instanceLabels), and when reserved the
	// reservation's labels.
	resolved := instanceLabels(it, n.Zone, n.CapacityType)
	if n.CapacityType == karpv1.CapacityTypeReserved {
		resolved[cloudprovider.ReservationIDLabel] = n.ReservationID
		resolved[awsv1.LabelCapacityReservationType] = string(awsv1.CapacityReservationTypeDefault)
		resolved[awsv1.LabelCapacityReservationInterruptible] = "false"
	}
	// pkg/controllers/nodeclaim/lifecycle/launch.go PopulateNodeClaimDetails: the NodeClaim's own labels win.
	claim.Labels = lo.Assign(resolved, claim.Labels)
	claim.Annotations = lo.Assign(claim.Annotations, map[string]string{
		awsv1.AnnotationEC2NodeClassHash:        nc.Hash(nil),
		awsv1.AnnotationEC2NodeClassHashVersion: awsv1.EC2NodeClassHashVersion,
	})
	claim.Status.ProviderID = fmt.Sprintf("aws:///%s/i-%08d", n.Zone, i)
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	return claim
}

var driftNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// drifted creates the claim beside the head objects, runs the NodeClaim disruption controller on it, and returns its
// Drifted reason ("" when it does not drift).
func drifted(ctx context.Context, kube crclient.Client, disruption *ncdisruption.Controller, claim *karpv1.NodeClaim) (string, error) {
	if err := kube.Create(ctx, claim); err != nil {
		return "", err
	}
	stored := &karpv1.NodeClaim{}
	if err := kube.Get(ctx, types.NamespacedName{Name: claim.Name}, stored); err != nil {
		return "", err
	}
	if _, err := disruption.Reconcile(ctx, stored); err != nil {
		return "", fmt.Errorf("nodeclaim disruption: %w", err)
	}
	if err := kube.Get(ctx, types.NamespacedName{Name: claim.Name}, stored); err != nil {
		return "", err
	}
	if cond := stored.StatusConditions().Get(karpv1.ConditionTypeDrifted); cond.IsTrue() {
		return cond.Reason, nil
	}
	return "", nil
}

// driftCloud is the cloud provider the disruption controller asks: IsDrifted is the AWS provider's first check,
// pkg/cloudprovider/drift.go areStaticFieldsDrifted, on the EC2NodeClass the NodePool names
// (cloudprovider.go IsDrifted → resolveNodeClassFromNodePool → isNodeClassDrifted).
type driftCloud struct {
	staticCloudProvider
	kube crclient.Client
}

func (c *driftCloud) IsDrifted(ctx context.Context, claim *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	np := &karpv1.NodePool{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: claim.Labels[karpv1.NodePoolLabelKey]}, np); err != nil {
		return "", crclient.IgnoreNotFound(err)
	}
	nc := &awsv1.EC2NodeClass{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: np.Spec.Template.Spec.NodeClassRef.Name}, nc); err != nil {
		// cloudprovider.go IsDrifted: a NodeClass that cannot be resolved decides nothing.
		return "", crclient.IgnoreNotFound(err)
	}
	classHash, ok1 := nc.Annotations[awsv1.AnnotationEC2NodeClassHash]
	classVersion, ok2 := nc.Annotations[awsv1.AnnotationEC2NodeClassHashVersion]
	claimHash, ok3 := claim.Annotations[awsv1.AnnotationEC2NodeClassHash]
	claimVersion, ok4 := claim.Annotations[awsv1.AnnotationEC2NodeClassHashVersion]
	if !ok1 || !ok2 || !ok3 || !ok4 || classVersion != claimVersion {
		return "", nil
	}
	return lo.Ternary(classHash != claimHash, cloudprovider.DriftReason("NodeClassDrift"), ""), nil
}

func (c *driftCloud) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&awsv1.EC2NodeClass{}}
}

// instanceType is one type of the catalog as the AWS provider builds it for the class (types.go NewInstanceType
// through the default resolver, as world.buildInstanceTypes does for every type): a node's labels need only its own.
func (w *world) instanceType(ctx context.Context, nc *awsv1.EC2NodeClass, name string) (*cloudprovider.InstanceType, bool) {
	t, ok := lo.Find(w.cat.InstanceTypes, func(t catalogType) bool { return t.Name == name })
	if !ok {
		return nil, false
	}
	return instancetype.NewDefaultResolver(w.cat.Region).Resolve(ctx, t.info(w.eni), t.Zones, nc), true
}
