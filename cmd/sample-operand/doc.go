// Command sample-operand is the sample operator's operand: the program its Deployment runs.
// It finds its cluster as every client-go program does (KUBECONFIG, else the pod's in-cluster
// service account) and its namespace from the same configuration (the kubeconfig context's,
// else the pod's), server-side applies the ConfigMap sample-operand-status there with the
// message it serves (MESSAGE) and who wrote it, then keeps it so until it is stopped:
//
//	sample-operand            # apply, then re-apply every --interval until SIGTERM
//	sample-operand --once     # apply once and exit
//
// In the hosted topology its pod mounts the guest kubeconfig topolayer writes, so its write
// lands on the guest cluster, as its standalone service account; standalone, on the one
// cluster. Its RBAC, from the sample operator, lets it write that ConfigMap only.
package main
