package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
)

// statusSubresource is the only subresource the contract records writes to.
const statusSubresource = "status"

// runLog collects the writes of one run, in the order they were made.
type runLog struct {
	mu     sync.Mutex
	writes []contract.Mutation
	events int // events recorded so far, to name the next one
}

func (r *runLog) mutations() []contract.Mutation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}

// forController returns the log one controller writes through.
func (r *runLog) forController(name string, env *fakeEnv) *controllerLog {
	return &controllerLog{run: r, name: name, env: env, seen: map[string]bool{}}
}

// controllerLog records the writes of one controller. Once closed (the controller returned
// or timed out), it drops writes: a reconciler still running past its timeout cannot add
// to the output.
type controllerLog struct {
	run    *runLog
	name   string
	env    *fakeEnv
	closed bool
	seen   map[string]bool // distinct non-event writes, to tell whether a pass changed anything
}

func (w *controllerLog) close() {
	w.run.mu.Lock()
	defer w.run.mu.Unlock()
	w.closed = true
}

// add records one write.
func (w *controllerLog) add(m contract.Mutation) {
	w.run.mu.Lock()
	defer w.run.mu.Unlock()
	if w.closed {
		return
	}
	w.run.writes = append(w.run.writes, m)
	if !m.Identity().IsEvent() {
		md := m.Metadata
		w.seen[fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%s", md.Action, m.Identity(), md.FieldManager, md.PatchType, m.Body, m.Options)] = true
	}
}

// distinctWrites counts the distinct non-event writes so far.
func (w *controllerLog) distinctWrites() int {
	w.run.mu.Lock()
	defer w.run.mu.Unlock()
	return len(w.seen)
}

// nextEvent returns the sequence number of the next event of the run.
func (w *controllerLog) nextEvent() int {
	w.run.mu.Lock()
	defer w.run.mu.Unlock()
	w.run.events++
	return w.run.events
}

// funcs intercepts the fake client's writes: each is recorded as the request the real client
// would have sent, then passed on, and kept only when the fake API server accepted it.
// Reads are not intercepted.
func (w *controllerLog) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			m, err := w.objectWrite(contract.ActionCreate, obj, (&client.CreateOptions{}).ApplyOptions(opts).AsCreateOptions())
			return w.send(m, err, func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			m, err := w.objectWrite(contract.ActionUpdate, obj, (&client.UpdateOptions{}).ApplyOptions(opts).AsUpdateOptions())
			return w.send(m, err, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			m, err := w.patchWrite(false, obj, patch, (&client.PatchOptions{}).ApplyOptions(opts).AsPatchOptions())
			return w.send(m, err, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			m, err := w.applyWrite(contract.ActionApply, obj, (&client.ApplyOptions{}).ApplyOptions(opts).AsPatchOptions())
			return w.send(m, err, func() error { return c.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			m, err := w.deleteWrite(obj, (&client.DeleteOptions{}).ApplyOptions(opts).AsDeleteOptions())
			return w.send(m, err, func() error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.DeleteAllOfOption) error {
			gvk, _ := apiutil.GVKForObject(obj, w.env.scheme)
			return fmt.Errorf("delete collection of %s: the contract records no collection deletes", gvk.Kind)
		},
		SubResourceCreate: func(_ context.Context, _ client.Client, sub string, obj client.Object, _ client.Object, _ ...client.SubResourceCreateOption) error {
			return fmt.Errorf("create %s of %s: the contract records writes to the status subresource only", sub, obj.GetName())
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if sub != statusSubresource {
				return fmt.Errorf("update %s of %s: the contract records writes to the status subresource only", sub, obj.GetName())
			}
			o := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
			m, err := w.objectWrite(contract.ActionUpdateStatus, obj, o.AsUpdateOptions())
			return w.send(m, err, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub != statusSubresource {
				return fmt.Errorf("patch %s of %s: the contract records writes to the status subresource only", sub, obj.GetName())
			}
			o := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
			m, err := w.patchWrite(true, obj, patch, o.AsPatchOptions())
			return w.send(m, err, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if sub != statusSubresource {
				return fmt.Errorf("apply %s: the contract records writes to the status subresource only", sub)
			}
			o := (&client.SubResourceApplyOptions{}).ApplyOpts(opts)
			m, err := w.applyWrite(contract.ActionApplyStatus, obj, o.AsPatchOptions())
			return w.send(m, err, func() error { return c.SubResource(sub).Apply(ctx, obj, opts...) })
		},
	}
}

// send passes a write, recorded as m, on to the fake API server (write) and keeps m when the
// server accepted it. A write that could not be recorded (err) is not sent; a write the server
// rejects is not kept: a real server would not have stored it either.
func (w *controllerLog) send(m contract.Mutation, err error, write func() error) error {
	if err != nil {
		return err
	}
	if err := write(); err != nil {
		return err
	}
	w.add(m)
	return nil
}

// metadata starts the metadata of a write to an object of kind gvk.
func (w *controllerLog) metadata(action contract.Action, gvk schema.GroupVersionKind, namespace, name, generateName string) contract.Metadata {
	return contract.Metadata{
		Action:                 action,
		ControllerInstanceName: w.name,
		Name:                   name,
		GenerateName:           generateName,
		Namespace:              namespace,
		ResourceType:           contract.ResourceType{Group: gvk.Group, Resource: w.env.resourceFor(gvk), Version: gvk.Version},
	}
}

// objectWrite records a request whose body is the whole object: Create, Update and
// UpdateStatus. The body is the object as the client would send it, with its apiVersion and
// kind, marshalled through JSON into YAML.
func (w *controllerLog) objectWrite(action contract.Action, obj client.Object, options any) (contract.Mutation, error) {
	gvk, err := apiutil.GVKForObject(obj, w.env.scheme)
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("%s %s: %w", action, obj.GetName(), err)
	}
	cp := obj.DeepCopyObject()
	cp.GetObjectKind().SetGroupVersionKind(gvk)
	body, err := toYAML(cp)
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("%s %s %s: %w", action, gvk.Kind, obj.GetName(), err)
	}
	opts, err := optionsYAML(options)
	if err != nil {
		return contract.Mutation{}, err
	}
	md := w.metadata(action, gvk, obj.GetNamespace(), obj.GetName(), obj.GetGenerateName())
	return contract.Mutation{Metadata: md, Body: body, Options: opts}, nil
}

// patchWrite records a PATCH: an apply patch becomes Apply or ApplyStatus with the object as
// body; a JSON patch becomes Patch or PatchStatus with the operations as a YAML sequence; a
// merge or strategic-merge patch keeps its raw JSON bytes.
func (w *controllerLog) patchWrite(status bool, obj client.Object, patch client.Patch, po *metav1.PatchOptions) (contract.Mutation, error) {
	gvk, err := apiutil.GVKForObject(obj, w.env.scheme)
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("patch %s: %w", obj.GetName(), err)
	}
	data, err := patch.Data(obj)
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("patch %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	opts, err := optionsYAML(po)
	if err != nil {
		return contract.Mutation{}, err
	}
	action, patchType := contract.ActionPatch, ""
	var body []byte
	switch patch.Type() {
	case types.ApplyPatchType:
		action = contract.ActionApply
		var u map[string]any
		if err := json.Unmarshal(data, &u); err != nil {
			return contract.Mutation{}, fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
		body, err = toYAML(u)
	case types.JSONPatchType:
		patchType = contract.PatchTypeJSON
		body, err = yaml.JSONToYAML(data)
	case types.MergePatchType:
		patchType, body = contract.PatchTypeMerge, data
	case types.StrategicMergePatchType:
		patchType, body = contract.PatchTypeStrategicMerge, data
	default:
		return contract.Mutation{}, fmt.Errorf("patch %s %s: patch type %s is not recorded by the contract", gvk.Kind, obj.GetName(), patch.Type())
	}
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("patch %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	if status {
		action = map[contract.Action]contract.Action{contract.ActionApply: contract.ActionApplyStatus, contract.ActionPatch: contract.ActionPatchStatus}[action]
	}
	md := w.metadata(action, gvk, obj.GetNamespace(), obj.GetName(), "")
	md.FieldManager, md.PatchType = po.FieldManager, patchType
	return contract.Mutation{Metadata: md, Body: body, Options: opts}, nil
}

// applyWrite records a server-side apply of an apply configuration.
func (w *controllerLog) applyWrite(action contract.Action, ac runtime.ApplyConfiguration, po *metav1.PatchOptions) (contract.Mutation, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("%s: %w", action, err)
	}
	var h struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return contract.Mutation{}, fmt.Errorf("%s: %w", action, err)
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil || h.APIVersion == "" || h.Kind == "" {
		return contract.Mutation{}, fmt.Errorf("%s %s: an apply configuration needs an apiVersion and a kind", action, h.Metadata.Name)
	}
	body, err := yaml.JSONToYAML(data)
	if err != nil {
		return contract.Mutation{}, err
	}
	opts, err := optionsYAML(po)
	if err != nil {
		return contract.Mutation{}, err
	}
	md := w.metadata(action, gv.WithKind(h.Kind), h.Metadata.Namespace, h.Metadata.Name, "")
	md.FieldManager = po.FieldManager
	return contract.Mutation{Metadata: md, Body: body, Options: opts}, nil
}

// deleteWrite records a DELETE. Its body is the DeleteOptions the client sends, in the
// object's group and version; the options travel in the body, so there is no options file.
func (w *controllerLog) deleteWrite(obj client.Object, do *metav1.DeleteOptions) (contract.Mutation, error) {
	gvk, err := apiutil.GVKForObject(obj, w.env.scheme)
	if err != nil {
		return contract.Mutation{}, fmt.Errorf("delete %s: %w", obj.GetName(), err)
	}
	do = do.DeepCopy()
	do.TypeMeta = metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: "DeleteOptions"}
	body, err := toYAML(do)
	if err != nil {
		return contract.Mutation{}, err
	}
	md := w.metadata(contract.ActionDelete, gvk, obj.GetNamespace(), obj.GetName(), "")
	return contract.Mutation{Metadata: md, Body: body}, nil
}

// toYAML marshals v through JSON into YAML, as the contract's recorder does.
func toYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(data)
}

// optionsYAML marshals request options; empty options ({}) have no file and return nil.
func optionsYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal options: %w", err)
	}
	if string(data) == "{}" || string(data) == "null" {
		return nil, nil
	}
	return yaml.JSONToYAML(data)
}
