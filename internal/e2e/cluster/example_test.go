package cluster_test

import (
	"context"
	"fmt"
	"log"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// A hosted environment: a management and a guest API server, started together, with the
// HCP namespace of examples/hosted.yaml on the management server. (Not run as a test: it
// needs the API server binaries; package e2e starts its environments in TestMain.)
func ExampleEnvironment() {
	ctx := context.Background()
	cfg, err := config.Load("examples/hosted.yaml")
	if err != nil {
		log.Fatal(err)
	}
	env := &cluster.Environment{Topology: config.Hosted, TopologyConfig: cfg, Progress: os.Stderr}
	if err := env.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer env.Stop()

	management, err := kubernetes.NewForConfig(env.Config(cluster.Management))
	if err != nil {
		log.Fatal(err)
	}
	ns, err := management.CoreV1().Namespaces().Get(ctx, env.HostedControlPlane().Namespace, metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("HCP namespace:", ns.Name)

	// For kubectl: dir/management.kubeconfig and dir/guest.kubeconfig.
	if err := env.WriteKubeconfigs(os.TempDir()); err != nil {
		log.Fatal(err)
	}
}
