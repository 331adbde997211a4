// Package apiserver validates objects the way kube-apiserver does on create (`kubectl apply` of a new object with
// the default --validate=strict): decoding with strict field validation, defaulting, the registry strategy's
// PrepareForCreate and Validate, then the generic ObjectMeta checks (k8s.io/apiserver pkg/registry/rest/create.go
// BeforeCreate). Custom resources go through k8s.io/apiextensions-apiserver's own code; built-in kinds through
// k8s.io/kubernetes' registry strategies and validation on the internal types (as kubectl-validate does).
//
// Not reproduced: admission (webhooks, NamespaceLifecycle: the namespace need not exist), and anything that needs
// an existing object (transition rules see no oldSelf on create anyway).
package apiserver

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
)

// builtins are the built-in kinds gpuplan writes (or may write), with the strategy kube-apiserver's registry uses
// for them (k8s.io/kubernetes pkg/registry/<group>/<resource>/strategy.go).
var builtins = map[schema.GroupKind]builtin{
	{Group: "policy", Kind: "PodDisruptionBudget"}:          {poddisruptionbudget.Strategy, "poddisruptionbudgets"},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {horizontalpodautoscaler.Strategy, "horizontalpodautoscalers"},
	{Group: "", Kind: "ConfigMap"}:                          {configmap.Strategy, "configmaps"},
	{Group: "", Kind: "Namespace"}:                          {namespace.Strategy, "namespaces"},
}

type builtin struct {
	strategy rest.RESTCreateStrategy
	resource string
}

// crVersion is one served version of a CRD, set up as customresource_handler.go's getOrCreateServingInfoFor does.
type crVersion struct {
	served, namespaced bool
	structural         *structuralschema.Structural
	preserveUnknown    bool
	strategy           rest.RESTCreateStrategy
	resource           string
}

// Server holds the CRDs it knows, by group/kind and version.
type Server struct {
	crds map[schema.GroupKind]map[string]*crVersion
	// Origin says where each CRD came from (for messages).
	Origin map[schema.GroupKind]string
}

func New() *Server {
	return &Server{crds: map[schema.GroupKind]map[string]*crVersion{}, Origin: map[schema.GroupKind]string{}}
}

// AddCRDFile reads a CRD file (one or more documents) and registers every CRD in it. Each CRD is first validated as
// the API server validates a CRD on create (schema structural, CEL rules compile within the cost limits).
func (s *Server) AddCRDFile(path, origin string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	docs, err := SplitYAML(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, doc := range docs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc.JSON, crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		if err := s.addCRD(crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		s.Origin[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = origin
	}
	return nil
}

func (s *Server) addCRD(crd *apiextensionsv1.CustomResourceDefinition) error {
	// Defaults as the API server applies to a CRD on create (apiextensions v1 SetDefaults_*), then the internal
	// version, validated as on create (pkg/apis/apiextensions/validation ValidateCustomResourceDefinition).
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return err
	}
	if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		return fmt.Errorf("CRD %s is not valid: %v", crd.Name, errs.ToAggregate())
	}
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	versions := map[string]*crVersion{}
	for _, v := range crd.Spec.Versions {
		// pkg/apiserver/customresource_handler.go getOrCreateServingInfoFor: structural schema with pruned
		// defaults for pruning/defaulting, NewSchemaValidator for OpenAPI, NewStrategy (CEL at PerCallLimit).
		var internalValidation *apiextensionsinternal.CustomResourceValidation
		var structural *structuralschema.Structural
		if v.Schema != nil {
			internalValidation = &apiextensionsinternal.CustomResourceValidation{}
			if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internalValidation, nil); err != nil {
				return err
			}
			st, err := structuralschema.NewStructural(internalValidation.OpenAPIV3Schema)
			if err != nil {
				return fmt.Errorf("%s %s: not structural: %w", gk, v.Name, err)
			}
			st = st.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(st); err != nil {
				return err
			}
			structural = st
		}
		var props *apiextensionsinternal.JSONSchemaProps
		if internalValidation != nil {
			props = internalValidation.OpenAPIV3Schema
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(props)
		if err != nil {
			return err
		}
		var status *apiextensionsinternal.CustomResourceSubresourceStatus
		var scale *apiextensionsinternal.CustomResourceSubresourceScale
		var statusValidator apiservervalidation.SchemaValidator
		if v.Subresources != nil && v.Subresources.Status != nil {
			status = &apiextensionsinternal.CustomResourceSubresourceStatus{}
			if props != nil && props.Properties != nil {
				if st, ok := props.Properties["status"]; ok {
					statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st)
					if err != nil {
						return err
					}
				}
			}
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			scale = &apiextensionsinternal.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(v.Subresources.Scale, scale, nil); err != nil {
				return err
			}
		}
		namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		gvk := gk.WithVersion(v.Name)
		strategy := customresource.NewStrategy(unstructuredscheme.NewUnstructuredObjectTyper(), namespaced, gvk, validator, statusValidator, structural, status, scale, v.SelectableFields)
		versions[v.Name] = &crVersion{served: v.Served, namespaced: namespaced, structural: structural, preserveUnknown: crd.Spec.PreserveUnknownFields, strategy: strategy, resource: crd.Spec.Names.Plural}
	}
	s.crds[gk] = versions
	return nil
}

// Kinds lists the group/kinds the server knows, with their origins.
func (s *Server) Kinds() []string {
	var out []string
	for gk := range s.crds {
		out = append(out, gk.String()+" ("+s.Origin[gk]+")")
	}
	for gk := range builtins {
		out = append(out, gk.String()+" (built in)")
	}
	sort.Strings(out)
	return out
}

// Verdict is the answer for one object.
type Verdict struct {
	File       string   `json:"file"`
	Doc        int      `json:"doc"`
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Name       string   `json:"name"`
	OK         bool     `json:"ok"`
	Skipped    string   `json:"skipped,omitempty"`
	Errors     []string `json:"errors"`
}

// Validate judges one object given as JSON (YAML already converted, as kubectl does with sigs.k8s.io/yaml).
func (s *Server) Validate(data []byte) (v Verdict) {
	v.Errors = []string{}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = utiljson.Unmarshal(data, &head) // best effort, for the report only
	v.APIVersion, v.Kind, v.Name, v.Namespace = head.APIVersion, head.Kind, head.Metadata.Name, head.Metadata.Namespace
	fail := func(format string, args ...any) Verdict {
		v.Errors = append(v.Errors, fmt.Sprintf(format, args...))
		v.OK = false
		return v
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil || head.APIVersion == "" || head.Kind == "" {
		return fail("Object 'Kind' or 'apiVersion' is missing or invalid: %q %q", head.APIVersion, head.Kind)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: head.Kind}
	if gv.Group == "kustomize.config.k8s.io" {
		v.Skipped = "a kustomize build file, never sent to the API server (kustomize reads it: cmd/kustomize)"
		v.OK = true
		return v
	}
	var errs []string
	if b, ok := builtins[gk]; ok {
		errs = s.validateBuiltin(gv.WithKind(head.Kind), b, data)
	} else if versions, ok := s.crds[gk]; ok {
		cv, ok := versions[gv.Version]
		if !ok || !cv.served {
			return fail("no matches for kind %q in version %q", head.Kind, head.APIVersion)
		}
		errs = validateCustom(gv, cv, data)
	} else {
		return fail("no matches for kind %q in group %q (no CRD known)", head.Kind, gv.Group)
	}
	v.Errors = append(v.Errors, errs...)
	v.OK = len(v.Errors) == 0
	return v
}

// requestContext is the context of `kubectl apply` creating the object: the request namespace is the object's, or
// kubectl's default namespace.
// The request info is what the handler chain's WithRequestInfo would fill in for `POST .../<resource>` (declarative
// validation reads it).
func requestContext(gv schema.GroupVersion, resource string, namespaced bool, obj metav1.Object) context.Context {
	ctx := genericapirequest.NewContext()
	ns := metav1.NamespaceNone
	if namespaced {
		ns = obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	ctx = genericapirequest.WithNamespace(ctx, ns)
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIPrefix: "apis", APIGroup: gv.Group, APIVersion: gv.Version,
		Namespace: ns, Resource: resource, Name: obj.GetName(), Path: "/apis/" + gv.String() + "/" + resource,
	})
}

// beforeCreate is what the create handler does after decoding (k8s.io/apiserver pkg/endpoints/handlers/create.go:
// the registry's Store.Create → rest.BeforeCreate), with the system fields the store fills in first.
func beforeCreate(gv schema.GroupVersion, resource string, strategy rest.RESTCreateStrategy, obj runtime.Object) []string {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return []string{err.Error()}
	}
	rest.FillObjectMetaSystemFields(accessor)
	ctx := requestContext(gv, resource, strategy.NamespaceScoped(), accessor)
	if err := rest.BeforeCreate(strategy, ctx, obj); err != nil {
		return statusErrors(err)
	}
	return nil
}

// statusErrors flattens an API error into one line per cause, as kubectl prints them.
func statusErrors(err error) []string {
	if se, ok := err.(apierrors.APIStatus); ok {
		st := se.Status()
		if st.Details != nil && len(st.Details.Causes) > 0 {
			var out []string
			for _, c := range st.Details.Causes {
				out = append(out, fmt.Sprintf("%s: %s", c.Field, c.Message))
			}
			return out
		}
		return []string{st.Message}
	}
	return []string{err.Error()}
}

// validateBuiltin decodes strictly into the versioned type (unknown and duplicate fields are errors, as with
// fieldValidation=Strict: apimachinery runtime/serializer/json uses sigs.k8s.io/json's strict mode), applies the
// scheme's defaults, converts to the internal type and runs the registry strategy.
func (s *Server) validateBuiltin(gvk schema.GroupVersionKind, b builtin, data []byte) []string {
	scheme := legacyscheme.Scheme
	versioned, err := scheme.New(gvk)
	if err != nil {
		return []string{fmt.Sprintf("no matches for kind %q in version %q", gvk.Kind, gvk.GroupVersion())}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, versioned, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return []string{"decoding: " + err.Error()}
	}
	if len(strictErrs) > 0 {
		var out []string
		for _, e := range strictErrs {
			out = append(out, "strict decoding error: "+e.Error())
		}
		return out
	}
	scheme.Default(versioned)
	internal, err := scheme.New(gvk.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return []string{err.Error()}
	}
	if err := scheme.Convert(versioned, internal, nil); err != nil {
		return []string{"conversion: " + err.Error()}
	}
	return beforeCreate(gvk.GroupVersion(), b.resource, b.strategy, internal)
}

// validateCustom is the custom-resource path: customresource_handler.go's schemaCoercingDecoder (unknown fields
// reported by pruning and ObjectMeta coercion, nulls of non-nullable fields dropped), unstructuredDefaulter
// (structural defaulting), then the CR strategy (OpenAPI schema, embedded ObjectMeta, list-type invariants, CEL
// rules at the API server's runtime cost budget).
func validateCustom(gv schema.GroupVersion, cv *crVersion, data []byte) []string {
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return []string{"decoding: " + err.Error()}
	}
	var unknown []string
	objectMeta, foundObjectMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return []string{"decoding metadata: " + err.Error()}
	}
	unknown = append(unknown, metaUnknown...)
	kind, apiVersion := u.GetKind(), u.GetAPIVersion()
	if !cv.preserveUnknown {
		unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, cv.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, cv.structural)
	}
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, cv.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return []string{ferr.Error()}
	}
	unknown = append(unknown, paths...)
	u.SetKind(kind)
	u.SetAPIVersion(apiVersion)
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return []string{err.Error()}
		}
	}
	if len(unknown) > 0 {
		var out []string
		for _, p := range unknown {
			out = append(out, fmt.Sprintf("strict decoding error: unknown field %q", p))
		}
		return out
	}
	structuraldefaulting.Default(u.Object, cv.structural)
	return beforeCreate(gv, cv.resource, cv.strategy, u)
}

// Doc is one YAML document of a file, converted to JSON.
type Doc struct {
	Index int
	JSON  []byte
}

// SplitYAML splits a multi-document YAML stream as kubectl does (k8s.io/apimachinery util/yaml NewYAMLReader) and
// converts each non-empty document to JSON with sigs.k8s.io/yaml (YAML 1.1 scalars, as kubectl reads them).
func SplitYAML(data []byte) ([]Doc, error) {
	var docs []Doc
	for i, chunk := range splitDocuments(data) {
		j, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if t := strings.TrimSpace(string(j)); t == "null" || t == "" {
			continue
		}
		docs = append(docs, Doc{Index: i, JSON: j})
	}
	return docs, nil
}
