package apply

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/namespaces"
)

// AccountReader is a Target that can read a service account of its cluster and says which
// operator it writes for, so that a token Secret is written only for an account that is the
// operator's there. ClusterTarget is one.
type AccountReader interface {
	// ServiceAccount returns the live service account; nil, nil when there is none.
	ServiceAccount(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error)
	// WritesFor is the operator whose objects the target writes (Options.Operator).
	WritesFor() string
}

// ServiceAccount implements AccountReader with the target's client (as the identity it writes).
func (t *ClusterTarget) ServiceAccount(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	sa, err := t.client.Resource(corev1.SchemeGroupVersion.WithResource("serviceaccounts")).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return sa, err
}

// WritesFor implements AccountReader.
func (t *ClusterTarget) WritesFor() string { return t.opts.Operator }

// checkTokenAccounts refuses a plan that writes a Secret of type
// kubernetes.io/service-account-token for an account that is not the operator's on the
// Secret's cluster: neither written by the plan itself nor written there by topolayer for
// this operator (its operator label). The cluster's token controller would fill the Secret
// with that account's token, and the operator reads its Secrets: declaring an account in the
// output-resources is not owning it (translate's check, offline, can only see the
// declarations). Targets that cannot read accounts are not asked.
func checkTokenAccounts(ctx context.Context, plan *plans.Plan, targets map[string]Target) error {
	writtenAccounts := map[objectKey]bool{}
	for _, i := range applyEntries(plan) {
		e := plan.Entries[i]
		id := e.Target.Identity
		if id.Group == "" && id.Resource == "serviceaccounts" && e.Mutation.Metadata.Action != contract.ActionDelete && !e.Mutation.Metadata.Action.IsStatus() {
			writtenAccounts[keyOf(e.Target.Cluster, contract.Identity{Resource: "serviceaccounts", Namespace: id.Namespace, Name: id.Name})] = true
		}
	}
	var errs []string
	for _, i := range applyEntries(plan) {
		e := plan.Entries[i]
		id := e.Target.Identity
		if id.Group != "" || id.Resource != "secrets" || e.Object == nil || e.Mutation.Metadata.Action.IsStatus() ||
			e.Object.Object["type"] != check.SecretTypeServiceAccountToken {
			continue
		}
		account := e.Object.GetAnnotations()[check.AnnotationServiceAccountName]
		if writtenAccounts[keyOf(e.Target.Cluster, contract.Identity{Resource: "serviceaccounts", Namespace: id.Namespace, Name: account})] {
			continue
		}
		reader, ok := targets[e.Target.Cluster].(AccountReader)
		if !ok {
			continue
		}
		sa, err := reader.ServiceAccount(ctx, id.Namespace, account)
		if err != nil {
			return fmt.Errorf("entry %d: %s: read service account %s/%s on the %s cluster: %w", i, e.Source, id.Namespace, account, e.Target.Cluster, err)
		}
		field := "metadata.annotations[" + check.AnnotationServiceAccountName + "]"
		switch {
		case sa == nil:
			errs = append(errs, fmt.Sprintf("entry %d: %s: %s: %s: service account %s/%s does not exist on the %s cluster and the plan does not write it",
				i, e.Source, policy.RuleServiceAccountToken, field, id.Namespace, account, e.Target.Cluster))
		case sa.GetLabels()[namespaces.LabelOperator] != reader.WritesFor() || reader.WritesFor() == "":
			owner := sa.GetLabels()[namespaces.LabelOperator]
			errs = append(errs, fmt.Sprintf("entry %d: %s: %s: %s: service account %s/%s on the %s cluster is not operator %q's (%s): declaring an account is not owning it; its token would be handed to the operator",
				i, e.Source, policy.RuleServiceAccountToken, field, id.Namespace, account, e.Target.Cluster, reader.WritesFor(), namespaces.DescribeOwner(owner)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
