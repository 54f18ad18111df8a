package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigUser is the user name of the kubeconfigs an Environment writes: an admin, in the
// system:masters group.
const KubeconfigUser = "admin"

// KubeconfigFile returns the file WriteKubeconfigs writes for the named cluster:
// dir/<cluster>.kubeconfig.
func KubeconfigFile(dir, cluster string) string {
	return filepath.Join(dir, cluster+".kubeconfig")
}

// Kubeconfig returns a kubeconfig for the named cluster, for kubectl or client-go: one
// cluster, one admin user (client certificate), and one context, current, all three named
// after the cluster (the user: KubeconfigUser). Certificates are embedded.
func (e *Environment) Kubeconfig(name string) (*clientcmdapi.Config, error) {
	cfg := e.Config(name)
	if cfg == nil {
		return nil, fmt.Errorf("kubeconfig of %q: no such cluster running (have %v)", name, e.Clusters())
	}
	return kubeconfigFromREST(name, cfg)
}

// kubeconfigFromREST turns an envtest user's client configuration into a kubeconfig.
func kubeconfigFromREST(name string, cfg *rest.Config) (*clientcmdapi.Config, error) {
	if len(cfg.CertData) == 0 || len(cfg.KeyData) == 0 {
		return nil, fmt.Errorf("kubeconfig of %q: the client configuration has no client certificate", name)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[KubeconfigUser] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: KubeconfigUser}
	kc.CurrentContext = name
	return kc, nil
}

// WriteKubeconfigs writes the kubeconfig of every cluster (see Kubeconfig) to
// KubeconfigFile(dir, cluster), creating dir if needed, readable by the owner only:
// management.kubeconfig and guest.kubeconfig, or cluster.kubeconfig.
func (e *Environment) WriteKubeconfigs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, name := range e.Clusters() {
		kc, err := e.Kubeconfig(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := clientcmd.WriteToFile(*kc, KubeconfigFile(dir, name)); err != nil {
			errs = append(errs, fmt.Errorf("kubeconfig of %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
