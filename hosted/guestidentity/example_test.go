package guestidentity_test

import (
	"fmt"
	"time"

	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// The kubeconfig of a guest identity: the guest API server as the HCP namespace's pods reach
// it, its CA, the bound token, and the service account's namespace as the context's.
func ExampleKubeconfig() {
	id := plans.GuestServiceAccount{Namespace: "openshift-sample", Name: "sample", Secret: guestidentity.SecretName("openshift-sample", "sample")}
	data, err := guestidentity.Kubeconfig("https://kube-apiserver:6443", []byte("CA"), id, "TOKEN")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Secret)
	fmt.Print(string(data))
	// Output:
	// guest-kubeconfig.openshift-sample.sample
	// apiVersion: v1
	// clusters:
	// - cluster:
	//     certificate-authority-data: Q0E=
	//     server: https://kube-apiserver:6443
	//   name: guest
	// contexts:
	// - context:
	//     cluster: guest
	//     namespace: openshift-sample
	//     user: system:serviceaccount:openshift-sample:sample
	//   name: guest
	// current-context: guest
	// kind: Config
	// users:
	// - name: system:serviceaccount:openshift-sample:sample
	//   user:
	//     token: TOKEN
}

// A token is refreshed after 80% of the lifetime the guest returned, which may be shorter
// than the one asked for.
func ExampleRefreshTime() {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println(guestidentity.RefreshTime(issued, issued.Add(time.Hour)).Format(time.Kitchen))
	fmt.Println(guestidentity.RefreshTime(issued, issued.Add(10*time.Minute)).Format(time.Kitchen))
	// Output:
	// 12:48AM
	// 12:08AM
}
