// Package componentstatus reports a workload that an operator places in a hosted control
// plane's namespace to HyperShift as a ControlPlaneComponent (hypershift.openshift.io/
// v1beta1): the object, named after the component, in that namespace, whose status says
// whether the component is Available and whether its RolloutComplete, at which version, and
// which resources make it. HyperShift computes the HostedControlPlane's availability and
// version from these objects, so a component topolayer places counts there like its own.
//
// The conditions are derived as HyperShift's control-plane-component framework derives
// them for its own Deployments (support/controlplane-component: the Deployment's Available
// condition; a rollout is complete when every replica is updated, ready and available at
// the observed generation), and then from what the operator says of itself: its
// ClusterOperator's Progressing condition and version, and the result of its last run, hold
// the rollout back.
//
//	c := componentstatus.ForDeployment("oauth-openshift", deployment, componentstatus.Operator{})
//	// c.Available, c.RolloutComplete: the conditions HyperShift reads
package componentstatus
