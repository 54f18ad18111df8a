// Command hosted-embedding is a control-plane-operator in miniature: the way HyperShift's
// control-plane-operator embeds topolayer in the manager it already runs for one hosted
// control plane.
//
// Like the control-plane-operator, it builds one controller-runtime manager on the
// management cluster, with its cache, leader election and events confined to the hosted
// control plane's namespace, and registers its own controllers (here a single one that
// watches the HostedControlPlane). Embedding topolayer is then one call,
// manager.AddToManager, before mgr.Start: topolayer uses that manager's cache, client,
// leader election, event recorder and metrics, and starts no second manager. The guest
// cluster is reached through its kubeconfig, as the control-plane-operator reaches it.
//
// Without --guest-kubeconfig, it reads the guest's kubeconfig as the control-plane-operator's
// components do, from a Secret in the HCP namespace (--guest-kubeconfig-secret, HyperShift's
// service-network-admin-kubeconfig by default): it starts before the guest exists, the
// operators wait (their status objects say Waiting), and the guest side starts when the
// Secret appears and restarts when it changes. A kind the guest does not serve yet is watched
// once its CRD is created, and the operators that read it run then. With --component-status,
// each Deployment the operators place in the HCP namespace is reported to HyperShift as a
// ControlPlaneComponent (--component-name renames the component of a Deployment).
//
// With --in-process, the sample operators are linked into the program (manager.LinkInProcess)
// and run in memory, over the objects topolayer gathers from its caches: no fork, no exec, no
// directory on disk. Their outputs are the same as their binaries' (e2e TestHostedEmbedding).
//
// Usage:
//
//	hosted-embedding --config examples/hosted-demo.yaml \
//	  --management-kubeconfig D/management.kubeconfig --guest-kubeconfig D/guest.kubeconfig
//
//	hosted-embedding --config examples/hosted-demo.yaml --management-kubeconfig D/management.kubeconfig \
//	  --component-status --component-name sample=oauth-openshift   # the guest from its Secret
package main
