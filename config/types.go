package config

// APIVersion and Kind identify a topolayer configuration file.
const (
	APIVersion = "topolayer.dev/v1alpha1"
	Kind       = "TopologyConfig"
)

// TopologyType chooses where an operator's outputs land.
type TopologyType string

const (
	// Standalone places every class on one cluster, unchanged: the identity placement.
	Standalone TopologyType = "Standalone"
	// Hosted places Configuration and Management in the hosted control plane's namespace on
	// the management cluster and UserWorkload in the guest cluster.
	Hosted TopologyType = "Hosted"
)

// TopologyConfig is the one configuration file of topolayer. Its smallest form is
//
//	apiVersion: topolayer.dev/v1alpha1
//	kind: TopologyConfig
//	topology: {type: Standalone}
type TopologyConfig struct {
	// APIVersion must be topolayer.dev/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind must be TopologyConfig.
	Kind string `json:"kind"`
	// Topology chooses the placement.
	Topology Topology `json:"topology"`
}

// Topology chooses standalone passthrough or a hosted control plane.
type Topology struct {
	// Type is Standalone or Hosted. Default: Standalone.
	Type TopologyType `json:"type,omitempty"`
	// Hosted names the hosted control plane; required when Type is Hosted, forbidden otherwise.
	Hosted *HostedTopology `json:"hosted,omitempty"`
}

// HostedTopology names the hosted control plane whose namespace receives the Configuration
// and Management classes.
type HostedTopology struct {
	// Namespace is the HCP namespace on the management cluster, e.g. clusters-example.
	Namespace string `json:"namespace"`
	// HostedControlPlane is the name of the HostedControlPlane object in Namespace.
	HostedControlPlane string `json:"hostedControlPlane"`
}
