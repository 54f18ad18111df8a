// Package guestidentity is the guest identity of an operand placed on the management
// cluster (Rule): what its pods mount (Mount: the kubeconfig Secret SecretName, key
// KubeconfigKey, at KubeconfigMountPath, no management API token), and, at the I/O edge, the
// kubeconfig Secrets of the guest identities a hosted plan names (plans.Plan.GuestIdentities):
// for each guest service account an operand placed on the management cluster acts as, one
// Secret in the HCP namespace whose kubeconfig authenticates as that service account on the guest. Its user is a bound token the guest's
// TokenRequest API issues (serviceaccounts/token, expirationSeconds from the configuration);
// its server and CA are the guest API server as the pods in the HCP namespace reach it
// (HyperShift's defaults: https://kube-apiserver:6443 and the root-ca ConfigMap's ca.crt in
// the HCP namespace); its context's namespace is the service account's, so that client-go's
// loading rules give the operand its standalone namespace.
//
// Each Secret is marked as topolayer's (label topolayer.dev/operator and
// LabelGuestKubeconfig), owned by the HostedControlPlane like every object topolayer writes
// in the HCP namespace, and records when its token expires and when it is due for refresh
// (AnnotationExpires, AnnotationRefresh): at RefreshFraction of the lifetime the guest
// returned. A Secret of that name without topolayer's marks is someone else's: it is refused,
// never overwritten.
//
// Writer.Ensure writes the Secrets that are missing, due or stale (topolayer apply and every
// run of topolayer run call it after applying a plan); Refresher rewrites each before its
// token expires while nothing else happens: it does not run the operator again.
//
// It does not decide anything about placement: the plan says which identities exist.
//
//	w, err := guestidentity.New(managementConfig, guestConfig, guestidentity.Options{
//		Namespace: "clusters-example", Operator: "sample-operator", Owner: owner,
//		Server: "https://kube-apiserver:6443", CAConfigMap: "root-ca", CAKey: "ca.crt",
//		Expiration: time.Hour,
//	})
//	issued, err := w.Ensure(ctx, plan.GuestIdentities)
//	refresher.Track(issued) // a Refresher started with the manager
package guestidentity
