// Package cluster starts local Kubernetes API servers for end-to-end tests and the dev
// environment, in either topology: one server for standalone ("cluster"), two for hosted
// ("management" and "guest"). Each server is a real kube-apiserver and etcd started by
// controller-runtime's envtest, from binaries built by hack/envtest-assets.sh (or named by
// KUBEBUILDER_ASSETS).
//
// The guest and the standalone cluster serve the openshift/api payload CRDs. The management
// server serves a minimal HostedControlPlane CRD (hypershift.openshift.io/v1beta1), the
// namespaced shadows of every cluster-scoped payload CRD (package hosted/shadow), and
// schemaless shadows of the built-in cluster-scoped kinds an operator may write on the
// management side; it holds the HCP namespace with its pull secret and HostedControlPlane
// object, named by the topology configuration (clusters-example/example by default).
//
// The main type is Environment:
//
//	env := &cluster.Environment{Topology: config.Hosted, Progress: os.Stderr}
//	if err := env.Start(ctx); err != nil { ... } // both servers, concurrently; CRDs established
//	defer env.Stop()
//	mgmt := env.Config(cluster.Management) // *rest.Config of an admin
//	err := env.WriteKubeconfigs(dir)      // dir/management.kubeconfig, dir/guest.kubeconfig
//
// DevEnv keeps an Environment running in a detached background process that outlives its
// starter, with its kubeconfigs, pid, log and data in one directory: it is the machinery of
// `topolayer-devenv up|down`.
//
// The package does not apply or gather anything, and it downloads nothing itself: the
// binaries come from the assets script, the CRDs from the openshift/api module in the Go
// module cache.
package cluster
