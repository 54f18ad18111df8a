package namespace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ensure creates the Namespace name through c when c does not find it; a Namespace that is
// there is left as it is. Errors name the namespace and the request that failed.
func Ensure(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, ns); apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Create(ctx, ns); err != nil {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	} else if err != nil {
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	return nil
}
