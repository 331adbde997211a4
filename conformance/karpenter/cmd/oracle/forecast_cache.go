package main

// The oracle's read cache. controller-runtime's fake client (pkg/client/fake/client.go Get/List) answers every read
// by marshalling the stored object to JSON and back; Karpenter's disruption controller lists each node's pods on
// every 10 s poll, so a generated day spent most of its CPU in encoding/json. The real operator never reads the API
// server on that path either: its reads come from the manager's informer cache (controller-runtime
// pkg/cache/informer_cache.go), deep copies of typed objects kept current by watch events, with the field indexes
// registered in pkg/operator/operator.go. cachedClient is that cache for the fake API server: every write still goes
// through the fake client (which decides resource versions, finalizers, deletion and the eviction subresource), and
// after each one the written object is read back once and stored typed; Get and List then answer with deep copies,
// in the fake client's order (namespace, then name: client-go testing/fixture.go filterByNamespace), so every
// controller sees exactly what the fake client would have returned.

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// fieldIndex is one field index the operator registers (its object, field and extractor), given to both the fake
// client (field selectors on the slow path) and the cache.
type fieldIndex struct {
	obj   crclient.Object
	field string
	fn    crclient.IndexerFunc
}

// cachedClient serves typed Get and List from memory; everything else goes to the fake client it wraps.
type cachedClient struct {
	crclient.WithWatch
	kinds   map[schema.GroupVersionKind]*kindCache
	indexes map[schema.GroupVersionKind]map[string]crclient.IndexerFunc
}

// kindCache holds one kind's objects, its sorted keys (nil when a write made them stale) and its field indexes
// (field → value → keys).
type kindCache struct {
	typ    reflect.Type
	objs   map[types.NamespacedName]crclient.Object
	sorted []types.NamespacedName
	byIdx  map[string]map[string]map[types.NamespacedName]struct{}
	fns    map[string]crclient.IndexerFunc
	values map[types.NamespacedName]map[string][]string // the index values each object was filed under
}

func newCachedClient(inner crclient.WithWatch, idx []fieldIndex) (*cachedClient, error) {
	c := &cachedClient{WithWatch: inner, kinds: map[schema.GroupVersionKind]*kindCache{}, indexes: map[schema.GroupVersionKind]map[string]crclient.IndexerFunc{}}
	for _, i := range idx {
		gvk, err := apiutil.GVKForObject(i.obj, inner.Scheme())
		if err != nil {
			return nil, err
		}
		if c.indexes[gvk] == nil {
			c.indexes[gvk] = map[string]crclient.IndexerFunc{}
		}
		c.indexes[gvk][i.field] = i.fn
	}
	return c, nil
}

// kind is the cache of typed object obj's kind, or nil when obj is not a typed object of a registered kind (then the
// fake client answers).
func (c *cachedClient) kind(obj runtime.Object) (*kindCache, schema.GroupVersionKind) {
	switch obj.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return nil, schema.GroupVersionKind{}
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, gvk
	}
	if _, isList := obj.(crclient.ObjectList); isList {
		gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	}
	if kc, ok := c.kinds[gvk]; ok {
		return kc, gvk
	}
	proto, err := c.Scheme().New(gvk)
	if err != nil {
		return nil, gvk
	}
	kc := &kindCache{typ: reflect.TypeOf(proto), objs: map[types.NamespacedName]crclient.Object{}, fns: c.indexes[gvk],
		byIdx: map[string]map[string]map[types.NamespacedName]struct{}{}, values: map[types.NamespacedName]map[string][]string{}}
	c.kinds[gvk] = kc
	return kc, gvk
}

// refresh reads obj's kind and key back from the fake client after a write and files the result (or its absence).
func (c *cachedClient) refresh(ctx context.Context, obj crclient.Object) {
	kc, gvk := c.kind(obj)
	if kc == nil {
		return
	}
	key := crclient.ObjectKeyFromObject(obj)
	fresh := reflect.New(kc.typ.Elem()).Interface().(crclient.Object)
	err := c.WithWatch.Get(ctx, key, fresh)
	kc.remove(key)
	if err == nil {
		kc.put(key, fresh)
	} else if !apierrors.IsNotFound(err) {
		panic(fmt.Sprintf("the oracle's cache cannot read back %v %v: %v", gvk, key, err))
	}
}

func (kc *kindCache) remove(key types.NamespacedName) {
	if _, ok := kc.objs[key]; !ok {
		return
	}
	delete(kc.objs, key)
	for field, vals := range kc.values[key] {
		for _, v := range vals {
			delete(kc.byIdx[field][v], key)
		}
	}
	delete(kc.values, key)
	kc.sorted = nil
}

func (kc *kindCache) put(key types.NamespacedName, obj crclient.Object) {
	kc.objs[key] = obj
	vals := map[string][]string{}
	for field, fn := range kc.fns {
		vals[field] = fn(obj)
		for _, v := range vals[field] {
			if kc.byIdx[field] == nil {
				kc.byIdx[field] = map[string]map[types.NamespacedName]struct{}{}
			}
			if kc.byIdx[field][v] == nil {
				kc.byIdx[field][v] = map[types.NamespacedName]struct{}{}
			}
			kc.byIdx[field][v][key] = struct{}{}
		}
	}
	kc.values[key] = vals
	kc.sorted = nil
}

func less(a, b types.NamespacedName) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

func (kc *kindCache) keys() []types.NamespacedName {
	if kc.sorted == nil {
		kc.sorted = make([]types.NamespacedName, 0, len(kc.objs))
		for k := range kc.objs {
			kc.sorted = append(kc.sorted, k)
		}
		sort.Slice(kc.sorted, func(i, j int) bool { return less(kc.sorted[i], kc.sorted[j]) })
	}
	return kc.sorted
}

func (c *cachedClient) Get(ctx context.Context, key crclient.ObjectKey, obj crclient.Object, opts ...crclient.GetOption) error {
	kc, gvk := c.kind(obj)
	if kc == nil || reflect.TypeOf(obj) != kc.typ {
		return c.WithWatch.Get(ctx, key, obj, opts...)
	}
	o, ok := kc.objs[key]
	if !ok {
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		return apierrors.NewNotFound(gvr.GroupResource(), key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(o.DeepCopyObject()).Elem())
	return nil
}

func (c *cachedClient) List(ctx context.Context, list crclient.ObjectList, opts ...crclient.ListOption) error {
	kc, _ := c.kind(list)
	lo := crclient.ListOptions{}
	lo.ApplyOptions(opts)
	if kc == nil || lo.Limit != 0 || lo.Continue != "" {
		return c.WithWatch.List(ctx, list, opts...)
	}
	keys := kc.keys()
	var reqs fields.Requirements
	if lo.FieldSelector != nil {
		reqs = lo.FieldSelector.Requirements()
	}
	for _, r := range reqs {
		if kc.fns[r.Field] == nil || (r.Operator != selection.Equals && r.Operator != selection.DoubleEquals) {
			return c.WithWatch.List(ctx, list, opts...) // the fake client gives the error
		}
	}
	if len(reqs) > 0 {
		// the first index narrows the keys; every requirement is checked below
		keys = keys[:0:0]
		for k := range kc.byIdx[reqs[0].Field][reqs[0].Value] {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	}
	items := []runtime.Object{}
	for _, k := range keys {
		o := kc.objs[k]
		if lo.Namespace != "" && k.Namespace != lo.Namespace {
			continue
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labelSet(o.GetLabels())) {
			continue
		}
		if !matchesAll(kc.values[k], reqs) {
			continue
		}
		items = append(items, o.DeepCopyObject())
	}
	reflect.ValueOf(list).Elem().Set(reflect.Zero(reflect.TypeOf(list).Elem()))
	return meta.SetList(list, items)
}

type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

func matchesAll(vals map[string][]string, reqs fields.Requirements) bool {
	for _, r := range reqs {
		found := false
		for _, v := range vals[r.Field] {
			found = found || v == r.Value
		}
		if !found {
			return false
		}
	}
	return true
}

func (c *cachedClient) Create(ctx context.Context, obj crclient.Object, opts ...crclient.CreateOption) error {
	err := c.WithWatch.Create(ctx, obj, opts...)
	c.refresh(ctx, obj)
	return err
}

func (c *cachedClient) Update(ctx context.Context, obj crclient.Object, opts ...crclient.UpdateOption) error {
	err := c.WithWatch.Update(ctx, obj, opts...)
	c.refresh(ctx, obj)
	return err
}

func (c *cachedClient) Patch(ctx context.Context, obj crclient.Object, p crclient.Patch, opts ...crclient.PatchOption) error {
	err := c.WithWatch.Patch(ctx, obj, p, opts...)
	c.refresh(ctx, obj)
	return err
}

func (c *cachedClient) Delete(ctx context.Context, obj crclient.Object, opts ...crclient.DeleteOption) error {
	err := c.WithWatch.Delete(ctx, obj, opts...)
	c.refresh(ctx, obj)
	return err
}

// DeleteAllOf and Apply name no single object: nothing in Karpenter v1.14.1's controllers calls them, and the cache
// could not follow them, so they fail loudly rather than leave it stale.
func (c *cachedClient) DeleteAllOf(context.Context, crclient.Object, ...crclient.DeleteAllOfOption) error {
	panic("the oracle's cache does not support DeleteAllOf")
}

func (c *cachedClient) Apply(context.Context, runtime.ApplyConfiguration, ...crclient.ApplyOption) error {
	panic("the oracle's cache does not support Apply")
}

func (c *cachedClient) Status() crclient.SubResourceWriter { return c.SubResource("status") }

func (c *cachedClient) SubResource(sub string) crclient.SubResourceClient {
	return &cachedSubResource{SubResourceClient: c.WithWatch.SubResource(sub), c: c}
}

// cachedSubResource refreshes the parent object after a subresource write (status, or an eviction deleting a pod).
type cachedSubResource struct {
	crclient.SubResourceClient
	c *cachedClient
}

func (s *cachedSubResource) Create(ctx context.Context, obj crclient.Object, sub crclient.Object, opts ...crclient.SubResourceCreateOption) error {
	err := s.SubResourceClient.Create(ctx, obj, sub, opts...)
	s.c.refresh(ctx, obj)
	return err
}

func (s *cachedSubResource) Update(ctx context.Context, obj crclient.Object, opts ...crclient.SubResourceUpdateOption) error {
	err := s.SubResourceClient.Update(ctx, obj, opts...)
	s.c.refresh(ctx, obj)
	return err
}

func (s *cachedSubResource) Patch(ctx context.Context, obj crclient.Object, p crclient.Patch, opts ...crclient.SubResourcePatchOption) error {
	err := s.SubResourceClient.Patch(ctx, obj, p, opts...)
	s.c.refresh(ctx, obj)
	return err
}
