// Package podrun runs one container of a pod template as a local process, as a kubelet
// would, without one: what the dev environment lacks to show that an operand topolayer
// placed actually serves. It reads the ConfigMaps and Secrets the container mounts from the
// cluster the pod template was placed on, writes them where the mounts say (with their
// items, modes and optional flags; a missing volume that is not optional stops the start,
// as it stops a kubelet; a hostPath volume is a fresh directory, not the host's), resolves
// the container's environment, and runs its command and
// args unchanged in a mount namespace whose top-level directories named by the mounts (/var,
// /run, /tmp) are the written files: the process reads and writes nothing of the host's
// there. An emptyDir mounted at /tmp itself (HyperShift's tmp-dir beside a read-only root
// filesystem) is the exception: /tmp stays the host's, where podrun's own directory and the
// binaries it links are. A container whose securityContext says readOnlyRootFilesystem sees
// those directories read-only, as a kubelet's container sees its image, but for the mounts of
// its emptyDir (and hostPath) volumes: an operand that writes outside its scratch volumes
// fails here as it would on a node.
//
// It is not a container runtime: the process shares the host's network (it listens where
// its own configuration says) and sees the rest of the host's filesystem read-only; the
// command names binaries the image would hold, which Options.Binaries maps to local ones.
// It runs as root of a user namespace mapped to an unprivileged host user that owns the
// written files, as a restricted pod on OpenShift runs with its fsGroup.
//
//	pod, err := podrun.Start(ctx, podrun.Options{
//		Client:    management,             // kubernetes.Interface
//		Namespace: "clusters-example",
//		Template:  deployment.Spec.Template,
//		Binaries:  map[string]string{"oauth-server": "/path/to/oauth-server"},
//		Dir:       t.TempDir(),
//	})
//	defer pod.Stop()
package podrun
