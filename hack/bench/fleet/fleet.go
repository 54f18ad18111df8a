package fleet

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/contract"
)

const (
	// Namespace holds the inputs.
	Namespace = "bench"
	// OutputNamespace holds the operators' outputs.
	OutputNamespace = "bench-out"
	// SeqAnnotation numbers the workload's changes; an output's data key SeqKey is the
	// highest number among its operator's inputs.
	SeqAnnotation = "bench.topolayer.dev/seq"
	// SeqKey is the output ConfigMap's data key.
	SeqKey = "seq"
	// ObjectsPerKind is how many objects of each kind every operator reads.
	ObjectsPerKind = 3
	// KindsPerOperator is how many of the Kinds each operator reads.
	KindsPerOperator = 5
	// FieldManager is the operators' field manager for their output.
	FieldManager = "bench-operator"
)

// Kind is one input kind.
type Kind struct {
	// GVR is its group, version and resource.
	GVR schema.GroupVersionResource
	// New returns a valid object of the kind, named name in Namespace.
	New func(name string) client.Object
	// NewList returns an empty typed list of the kind.
	NewList func() client.ObjectList
}

var labels = map[string]string{"app": "bench"}

// Kinds are the eight kinds operators draw their inputs from.
var Kinds = []Kind{
	{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"),
		New: func(n string) client.Object {
			return &corev1.ConfigMap{ObjectMeta: meta(n), Data: map[string]string{"k": "v"}}
		},
		NewList: func() client.ObjectList { return &corev1.ConfigMapList{} }},
	{GVR: corev1.SchemeGroupVersion.WithResource("secrets"),
		New: func(n string) client.Object {
			return &corev1.Secret{ObjectMeta: meta(n), Data: map[string][]byte{"k": []byte("v")}}
		},
		NewList: func() client.ObjectList { return &corev1.SecretList{} }},
	{GVR: corev1.SchemeGroupVersion.WithResource("serviceaccounts"),
		New:     func(n string) client.Object { return &corev1.ServiceAccount{ObjectMeta: meta(n)} },
		NewList: func() client.ObjectList { return &corev1.ServiceAccountList{} }},
	{GVR: corev1.SchemeGroupVersion.WithResource("services"),
		New: func(n string) client.Object {
			return &corev1.Service{ObjectMeta: meta(n), Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
		},
		NewList: func() client.ObjectList { return &corev1.ServiceList{} }},
	{GVR: appsv1.SchemeGroupVersion.WithResource("deployments"),
		New: func(n string) client.Object {
			return &appsv1.Deployment{ObjectMeta: meta(n), Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "c", Image: "registry.example/bench:1"}},
				}},
			}}
		},
		NewList: func() client.ObjectList { return &appsv1.DeploymentList{} }},
	{GVR: rbacv1.SchemeGroupVersion.WithResource("roles"),
		New: func(n string) client.Object {
			return &rbacv1.Role{ObjectMeta: meta(n), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
		},
		NewList: func() client.ObjectList { return &rbacv1.RoleList{} }},
	{GVR: rbacv1.SchemeGroupVersion.WithResource("rolebindings"),
		New: func(n string) client.Object {
			return &rbacv1.RoleBinding{ObjectMeta: meta(n), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: n, Namespace: Namespace}}}
		},
		NewList: func() client.ObjectList { return &rbacv1.RoleBindingList{} }},
	{GVR: policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"),
		New: func(n string) client.Object {
			one := intstr.FromInt32(1)
			return &policyv1.PodDisruptionBudget{ObjectMeta: meta(n), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
		},
		NewList: func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} }},
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels, Annotations: map[string]string{SeqAnnotation: "0"}}
}

// ObjectName is the name of the j-th object of every kind.
func ObjectName(j int) string { return fmt.Sprintf("in-%d", j) }

// OperatorName is the name of the i-th operator.
func OperatorName(i int) string { return fmt.Sprintf("op%02d", i) }

// OperatorIndex parses an operator name.
func OperatorIndex(name string) (int, error) {
	var i int
	if _, err := fmt.Sscanf(name, "op%02d", &i); err != nil {
		return 0, fmt.Errorf("operator name %q: %w", name, err)
	}
	return i, nil
}

// OutputName is the name of an operator's output ConfigMap.
func OutputName(operator string) string { return "out-" + operator }

// OperatorKinds returns the indexes in Kinds of what operator i reads: KindsPerOperator
// kinds drawn from a generator seeded with i, so every run of every program agrees.
func OperatorKinds(i int) []int {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	return r.Perm(len(Kinds))[:KindsPerOperator]
}

// Readers returns the operators (of n) that read kind k.
func Readers(n, k int) []int {
	var out []int
	for i := range n {
		for _, kk := range OperatorKinds(i) {
			if kk == k {
				out = append(out, i)
			}
		}
	}
	return out
}

// Seq returns an object's SeqAnnotation as a number (0 when absent or malformed).
func Seq(annotations map[string]string) int64 {
	n, _ := strconv.ParseInt(annotations[SeqAnnotation], 10, 64)
	return n
}

// InputResources are operator i's declared inputs: its objects, by name.
func InputResources(i int) *contract.InputResources {
	in := &contract.InputResources{}
	for _, k := range OperatorKinds(i) {
		gvr := Kinds[k].GVR
		for j := range ObjectsPerKind {
			in.ApplyConfigurationResources.ExactResources = append(in.ApplyConfigurationResources.ExactResources, contract.ExactResourceID{
				ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
				Namespace:              Namespace, Name: ObjectName(j),
			})
		}
	}
	return in
}

// OutputResources are what an operator may write: its output ConfigMap, in the
// Management class.
func OutputResources(operator string) *contract.OutputResources {
	return &contract.OutputResources{ManagementResources: contract.OutputResourceList{
		ExactResources: []contract.ExactResourceID{{
			ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"},
			Namespace:              OutputNamespace, Name: OutputName(operator),
		}},
	}}
}
