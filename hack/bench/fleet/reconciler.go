package fleet

import (
	"context"
	"fmt"
	"strconv"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/sdk"
)

// Reconciler is every operator's one controller, the same code on both sides of the
// comparison: it lists the operator's kinds in Namespace and applies its output ConfigMap
// with the highest SeqAnnotation among them. The resident operator runs it over a
// controller-runtime cache; the contract operator (Operator) over its inputs.
type Reconciler struct {
	// Client reads the inputs and applies the output.
	Client client.Client
	// Operator is the operator's name (op00 ...).
	Operator string
	// Kinds are the indexes in Kinds of what it reads (OperatorKinds).
	Kinds []int
}

// Reconcile lists the inputs and applies the output.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var seq int64
	for _, k := range r.Kinds {
		list := Kinds[k].NewList()
		if err := r.Client.List(ctx, list, client.InNamespace(Namespace)); err != nil {
			return reconcile.Result{}, fmt.Errorf("list %s: %w", Kinds[k].GVR.Resource, err)
		}
		objs, err := apimeta.ExtractList(list)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("list %s: %w", Kinds[k].GVR.Resource, err)
		}
		for _, o := range objs {
			a, err := apimeta.Accessor(o)
			if err != nil {
				return reconcile.Result{}, fmt.Errorf("list %s: %w", Kinds[k].GVR.Resource, err)
			}
			seq = max(seq, Seq(a.GetAnnotations()))
		}
	}
	cm := corev1ac.ConfigMap(OutputName(r.Operator), OutputNamespace).
		WithData(map[string]string{SeqKey: strconv.FormatInt(seq, 10)})
	if err := r.Client.Apply(ctx, cm, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("apply the output: %w", err)
	}
	return reconcile.Result{}, nil
}

// Operator is the operator named name (op00 ...) as a MOM contract operator built with the
// operator SDK: its Reconciler under the contract, with InputResources and OutputResources.
// Its Command is the benchop binary (the exec runner's side); its InMemory runner is the
// in-process side.
func Operator(name string) (*sdk.Operator, error) {
	i, err := OperatorIndex(name)
	if err != nil {
		return nil, err
	}
	kinds := OperatorKinds(i)
	return &sdk.Operator{
		Name:            name,
		InputResources:  *InputResources(i),
		OutputResources: *OutputResources(name),
		Controllers: []sdk.Controller{{
			Name: name + "-Output",
			New: func(d sdk.Deps) (reconcile.Reconciler, error) {
				return &Reconciler{Client: d.Client, Operator: name, Kinds: kinds}, nil
			},
			Requests: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: OutputNamespace, Name: OutputName(name)}}},
		}},
		MetadataNameKey: contract.NameKeyName,
	}, nil
}
