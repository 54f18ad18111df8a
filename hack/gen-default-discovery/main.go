package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/hosted/openshiftapi"
)

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func main() {
	to := flag.String("to", "contract/defaultdiscovery", "folder to write the two discovery files to")
	flag.Parse()
	if err := run(*to); err != nil {
		fmt.Fprintln(os.Stderr, "gen-default-discovery:", err)
		os.Exit(1)
	}
}

func run(to string) error {
	crds, err := openshiftapi.PayloadCRDFiles()
	if err != nil {
		return err
	}
	env := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	defer func() { _ = env.Stop() }()

	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	for file, path := range map[string]string{"aggregated-discovery-api.yaml": "/api", "aggregated-discovery-apis.yaml": "/apis"} {
		body, err := get(client, strings.TrimSuffix(cfg.Host, "/")+path)
		if err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
		out, err := yaml.JSONToYAML(body)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, file), out, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", filepath.Join(to, file), len(out))
	}
	return nil
}

func get(client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", aggregatedAccept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	return body, nil
}
