package synth

import (
	"fmt"
	"slices"

	"github.com/topolayer/topolayer/contract"
)

// Shape is one kind of mutation of a mix, with its share of every 100 mutations.
type Shape struct {
	// Name describes the shape in reports.
	Name string
	// PerHundred is how many of every 100 mutations have this shape.
	PerHundred int
	// make returns mutation i of the directory, the ord-th of its shape.
	make func(i, ord int) contract.Mutation
}

// Mix is a named composition of synthetic output directories: which shapes, and how many of
// every 100 mutations each has.
type Mix struct {
	name     string
	shapes   []Shape
	schedule []int // the shapes unrolled into 100 slots (indexes into shapes)
}

// newMix returns the mix of shapes, whose PerHundred sum to 100, interleaved so that every
// prefix of a directory has a similar mix.
func newMix(name string, shapes []Shape) Mix {
	m := Mix{name: name, shapes: shapes, schedule: make([]int, 0, 100)}
	left := make([]int, len(shapes))
	for i, s := range shapes {
		left[i] = s.PerHundred
	}
	for len(m.schedule) < 100 {
		for i := range shapes {
			if left[i] > 0 {
				m.schedule = append(m.schedule, i)
				left[i]--
			}
		}
	}
	return m
}

// Name names the mix in reports.
func (m Mix) Name() string { return m.name }

// Shapes returns the shapes of the mix, in order (a copy, the caller's to change).
func (m Mix) Shapes() []Shape { return slices.Clone(m.shapes) }

// Output returns n synthetic mutations of the mix as an output directory, deterministically:
// the same n gives the same bytes. Mutation i is in the class the CAO corpus would put it in.
func (m Mix) Output(n int) *contract.OutputDir {
	out := &contract.OutputDir{
		HasControllerResults: true,
		ControllerResults: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
			{ControllerName: "synthetic-Controller", Status: contract.ControllerSucceeded},
		}},
		Mutations: make([]contract.Mutation, 0, n),
	}
	ords := make([]int, len(m.shapes))
	for i := range n {
		shape := m.schedule[i%100]
		out.Mutations = append(out.Mutations, m.shapes[shape].make(i, ords[shape]))
		ords[shape]++
	}
	return out
}

// Write writes m.Output(n) to dir, which must not exist or be empty.
func (m Mix) Write(dir string, n int) error {
	if err := contract.WriteOutputDir(dir, m.Output(n), contract.WriteOptions{}); err != nil {
		return fmt.Errorf("write %d synthetic mutations (%s) to %s: %w", n, m.name, dir, err)
	}
	return nil
}

// CAO is the mix modelled on the CAO minimal-cluster case (45 of its 75 mutations are
// events, 17 ApplyStatus/Update of cluster-scoped operator objects, the rest creates of
// namespaced and cluster-scoped objects), with every other action of the contract
// represented.
func CAO() Mix {
	return newMix("cao", []Shape{
		{Name: "Create core/events (namespaced)", PerHundred: 44, make: event},
		{Name: "ApplyStatus operator.openshift.io/authentications (cluster-scoped)", PerHundred: 12, make: applyStatus},
		{Name: "Update operator.openshift.io/authentications (cluster-scoped)", PerHundred: 3, make: update},
		{Name: "UpdateStatus config.openshift.io/clusteroperators (cluster-scoped)", PerHundred: 2, make: updateStatus},
		{Name: "Create apps/deployments with references (namespaced)", PerHundred: 6, make: deployment},
		{Name: "Create core/configmaps (namespaced)", PerHundred: 5, make: configMap},
		{Name: "Create core/secrets (namespaced)", PerHundred: 3, make: secret},
		{Name: "Create core/serviceaccounts (namespaced)", PerHundred: 3, make: serviceAccount},
		{Name: "Create core/services (namespaced)", PerHundred: 3, make: service},
		{Name: "Create networking.k8s.io/networkpolicies (namespaced)", PerHundred: 5, make: networkPolicy},
		{Name: "Create rbac roles + rolebindings (namespaced)", PerHundred: 4, make: roleOrBinding},
		{Name: "Create rbac clusterroles + clusterrolebindings (cluster-scoped)", PerHundred: 4, make: clusterRoleOrBinding},
		{Name: "Apply core/configmaps (namespaced)", PerHundred: 2, make: applyConfigMap},
		{Name: "Patch (JSON patch) config.openshift.io/clusteroperators (cluster-scoped)", PerHundred: 1, make: jsonPatch},
		{Name: "Patch (merge patch) core/configmaps (namespaced)", PerHundred: 1, make: mergePatch},
		{Name: "PatchStatus (merge patch) operator.openshift.io/authentications (cluster-scoped)", PerHundred: 1, make: patchStatus},
		{Name: "Delete rbac clusterroles (cluster-scoped)", PerHundred: 1, make: deleteClusterRole},
	})
}

// Mixes returns every mix of the package: CAO, then GuestIdentities.
func Mixes() []Mix { return []Mix{CAO(), GuestIdentities()} }

// namespacesUsed are the namespaces the namespaced mutations spread over, as CAO's do.
var namespacesUsed = []string{"openshift-authentication", "openshift-oauth-apiserver", "openshift-config-managed", "openshift-authentication-operator"}

// Output returns n synthetic mutations of the CAO mix: CAO().Output(n).
func Output(n int) *contract.OutputDir { return CAO().Output(n) }

// Write writes Output(n) to dir, which must not exist or be empty.
func Write(dir string, n int) error { return CAO().Write(dir, n) }

func ns(i int) string { return namespacesUsed[i%len(namespacesUsed)] }

func md(action contract.Action, group, version, resource, namespace, name string) contract.Metadata {
	return contract.Metadata{
		Action:                 action,
		ControllerInstanceName: "synthetic-Controller",
		Name:                   name,
		Namespace:              namespace,
		ResourceType:           contract.ResourceType{Group: group, Resource: resource, Version: version},
	}
}

func mutation(class contract.Class, m contract.Metadata, body string, options string) contract.Mutation {
	mu := contract.Mutation{Class: class, Metadata: m, Body: []byte(body)}
	if options != "" {
		mu.Options = []byte(options)
	}
	return mu
}

func event(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("authentication-operator.%016x.%08x", 0x18599d2230299800+i, i*2654435761%0xffffffff)
	body := fmt.Sprintf(`apiVersion: v1
count: 1
eventTime: null
firstTimestamp: "2024-10-14T22:38:20Z"
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: authentication-operator
  namespace: openshift-authentication-operator
kind: Event
lastTimestamp: "2024-10-14T22:38:20Z"
message: 'Status for clusteroperator/authentication changed: Degraded message changed
  from "" to "OAuthServerDeploymentDegraded: waiting for the oauth-openshift deployment
  number %d"'
metadata:
  name: %s
  namespace: %s
reason: OperatorStatusChanged
reportingComponent: ""
reportingInstance: ""
source:
  component: oauth-server
type: Normal
`, i, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "events", n, name), body, "")
}

func conditions(i int) string {
	return fmt.Sprintf(`  conditions:
  - lastTransitionTime: "2024-10-14T22:38:20Z"
    message: 'WellKnownReadyControllerDegraded: need at least 3 kube-apiservers, got %d'
    reason: AsExpected
    status: "False"
    type: WellKnownReadyControllerDegraded
  - lastTransitionTime: "2024-10-14T22:38:20Z"
    reason: AsExpected
    status: "True"
    type: OAuthServerServiceEndpointAccessibleControllerAvailable
  - lastTransitionTime: "2024-10-14T22:38:20Z"
    message: 'the server could not find the requested resource (get routes.route.openshift.io oauth-openshift)'
    reason: SyncError
    status: "True"
    type: OAuthServerRouteEndpointAccessibleControllerDegraded
`, i%7)
}

func applyStatus(i, _ int) contract.Mutation {
	name := fmt.Sprintf("cluster-%d", i)
	body := fmt.Sprintf(`apiVersion: operator.openshift.io/v1
kind: Authentication
metadata:
  name: %s
status:
%s  oauthAPIServer:
    latestAvailableRevision: %d
`, name, conditions(i), i%13)
	m := md(contract.ActionApplyStatus, "operator.openshift.io", "v1", "authentications", "", name)
	m.FieldManager = "WellKnownReadyController-WellKnownReady"
	return mutation(contract.ClassManagement, m, body, "fieldManager: WellKnownReadyController-WellKnownReady\nforce: true\n")
}

func update(i, _ int) contract.Mutation {
	name := fmt.Sprintf("cluster-%d", i)
	body := fmt.Sprintf(`apiVersion: operator.openshift.io/v1
kind: Authentication
metadata:
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
  name: %s
spec:
  logLevel: Normal
  managementState: Managed
  observedConfig:
    oauthServer:
      corsAllowedOrigins:
      - //127\.0\.0\.1(:|$)
      - //localhost(:|$)
      serverArguments:
        audit-log-format:
        - json
        audit-log-maxsize:
        - "%d"
  operatorLogLevel: Normal
`, name, 100+i%5)
	return mutation(contract.ClassManagement, md(contract.ActionUpdate, "operator.openshift.io", "v1", "authentications", "", name), body, "")
}

func updateStatus(i, _ int) contract.Mutation {
	name := fmt.Sprintf("authentication-%d", i)
	body := fmt.Sprintf(`apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata:
  name: %s
spec: {}
status:
%s  relatedObjects:
  - group: operator.openshift.io
    name: cluster
    resource: authentications
  - group: ""
    name: openshift-authentication
    resource: namespaces
`, name, conditions(i))
	return mutation(contract.ClassManagement, md(contract.ActionUpdateStatus, "config.openshift.io", "v1", "clusteroperators", "", name), body, "")
}

func deployment(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("oauth-openshift-%d", i)
	body := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    operator.openshift.io/spec-hash: 9a8b7c6d5e4f%04d
  labels:
    app: oauth-openshift
  name: %s
  namespace: %s
spec:
  replicas: 3
  selector:
    matchLabels:
      app: oauth-openshift
  template:
    metadata:
      labels:
        app: oauth-openshift
    spec:
      containers:
      - args:
        - --config=/var/config/system/configmaps/v4-0-config-system-cliconfig/v4-0-config-system-cliconfig
        command:
        - oauth-server
        - osinserver
        env:
        - name: HTTP_PROXY
          valueFrom:
            configMapKeyRef:
              key: proxy
              name: v4-0-config-system-proxy-%d
        envFrom:
        - secretRef:
            name: v4-0-config-system-session-%d
        image: quay.io/openshift/oauth-server:latest
        name: oauth-openshift
        ports:
        - containerPort: 6443
          name: https
        resources:
          requests:
            cpu: 10m
            memory: 50Mi
        volumeMounts:
        - mountPath: /var/config/system/secrets/v4-0-config-system-session
          name: v4-0-config-system-session
          readOnly: true
        - mountPath: /var/config/system/configmaps/v4-0-config-system-cliconfig
          name: v4-0-config-system-cliconfig
          readOnly: true
      priorityClassName: system-cluster-critical
      serviceAccountName: oauth-openshift-%d
      volumes:
      - name: v4-0-config-system-session
        secret:
          secretName: v4-0-config-system-session-%d
      - configMap:
          name: v4-0-config-system-cliconfig-%d
        name: v4-0-config-system-cliconfig
`, i%10000, name, n, i, i, i, i, i)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "apps", "v1", "deployments", n, name), body, "")
}

func configMap(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("v4-0-config-system-cliconfig-%d", i)
	body := fmt.Sprintf(`apiVersion: v1
data:
  v4-0-config-system-cliconfig: '{"apiVersion":"osin.config.openshift.io/v1","kind":"OsinServerConfig","servingInfo":{"bindAddress":"0.0.0.0:6443","namedCertificates":[]},"oauthConfig":{"tokenConfig":{"accessTokenMaxAgeSeconds":%d}}}'
kind: ConfigMap
metadata:
  labels:
    app: oauth-openshift
  name: %s
  namespace: %s
`, 86400+i, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "configmaps", n, name), body, "")
}

func secret(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("v4-0-config-system-session-%d", i)
	body := fmt.Sprintf(`apiVersion: v1
data:
  v4-0-config-system-session: eyJzZXNzaW9uU2VjcmV0cyI6W3siYXV0aGVudGljYXRpb24iOiJ%08d
kind: Secret
metadata:
  name: %s
  namespace: %s
type: Opaque
`, i, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "secrets", n, name), body, "")
}

// alternatingClass puts mutation i of a shape on the Management side when i is even, on the
// UserWorkload side when it is odd.
func alternatingClass(i int) contract.Class {
	if i%2 == 1 {
		return contract.ClassUserWorkload
	}
	return contract.ClassManagement
}

func serviceAccount(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("oauth-openshift-%d", i)
	body := fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n  namespace: %s\n", name, n)
	return mutation(alternatingClass(i), md(contract.ActionCreate, "", "v1", "serviceaccounts", n, name), body, "")
}

func service(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("oauth-openshift-%d", i)
	body := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  annotations:
    service.alpha.openshift.io/serving-cert-secret-name: v4-0-config-system-serving-cert
  labels:
    app: oauth-openshift
  name: %s
  namespace: %s
spec:
  ports:
  - name: https
    port: 443
    protocol: TCP
    targetPort: 6443
  selector:
    app: oauth-openshift
  type: ClusterIP
`, name, n)
	return mutation(alternatingClass(i), md(contract.ActionCreate, "", "v1", "services", n, name), body, "")
}

func networkPolicy(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("oauth-server-networkpolicy-%d", i)
	body := fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: %s
  namespace: %s
spec:
  egress:
  - {}
  ingress:
  - ports:
    - port: 6443
      protocol: TCP
  podSelector:
    matchLabels:
      app: oauth-openshift
  policyTypes:
  - Ingress
  - Egress
`, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "networking.k8s.io", "v1", "networkpolicies", n, name), body, "")
}

// roleOrBinding writes Roles and RoleBindings in pairs, as CAO does: the RoleBinding of a
// pair binds the Role of the pair, of the same name and namespace.
func roleOrBinding(_, ord int) contract.Mutation {
	pair := ord / 2
	n := ns(pair)
	name := fmt.Sprintf("system:openshift:oauth-servercert-trust-%d", pair)
	if ord%2 == 0 {
		body := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %s
  namespace: %s
rules:
- apiGroups:
  - ""
  resourceNames:
  - oauth-serving-cert
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
`, name, n)
		return mutation(contract.ClassManagement, md(contract.ActionCreate, "rbac.authorization.k8s.io", "v1", "roles", n, name), body, "")
	}
	body := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %s
  namespace: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %s
subjects:
- kind: ServiceAccount
  name: oauth-openshift-%d
  namespace: openshift-authentication
`, name, n, name, pair)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "rbac.authorization.k8s.io", "v1", "rolebindings", n, name), body, "")
}

// clusterRoleOrBinding writes ClusterRoles and ClusterRoleBindings in pairs, as CAO does:
// the binding of a pair grants the ClusterRole of the pair, of the same name.
func clusterRoleOrBinding(_, ord int) contract.Mutation {
	name := fmt.Sprintf("system:openshift:useroauthaccesstoken-manager-%d", ord/2)
	if ord%2 == 0 {
		body := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %s
rules:
- apiGroups:
  - oauth.openshift.io
  resources:
  - useroauthaccesstokens
  verbs:
  - get
  - list
  - watch
  - delete
`, name)
		return mutation(contract.ClassUserWorkload, md(contract.ActionCreate, "rbac.authorization.k8s.io", "v1", "clusterroles", "", name), body, "")
	}
	body := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %s
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: system:authenticated:oauth
`, name, name)
	return mutation(contract.ClassUserWorkload, md(contract.ActionCreate, "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "", name), body, "")
}

func applyConfigMap(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("audit-%d", i)
	body := fmt.Sprintf(`apiVersion: v1
data:
  policy.yaml: |
    apiVersion: audit.k8s.io/v1
    kind: Policy
    omitStages:
    - RequestReceived
    rules:
    - level: Metadata
      # %d
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
`, i, name, n)
	m := md(contract.ActionApply, "", "v1", "configmaps", n, name)
	m.FieldManager = "audit-policy-controller"
	return mutation(contract.ClassManagement, m, body, "fieldManager: audit-policy-controller\nforce: true\n")
}

func jsonPatch(i, _ int) contract.Mutation {
	name := fmt.Sprintf("authentication-%d", i)
	body := "- op: test\n  path: /status/conditions/3/type\n  value: SomethingDegraded\n- op: remove\n  path: /status/conditions/3\n"
	m := md(contract.ActionPatch, "config.openshift.io", "v1", "clusteroperators", "", name)
	m.PatchType = contract.PatchTypeJSON
	return mutation(contract.ClassManagement, m, body, "")
}

func mergePatch(i, _ int) contract.Mutation {
	n := ns(i)
	name := fmt.Sprintf("v4-0-config-system-trusted-ca-bundle-%d", i)
	m := md(contract.ActionPatch, "", "v1", "configmaps", n, name)
	m.PatchType = contract.PatchTypeMerge
	return mutation(contract.ClassManagement, m, fmt.Sprintf(`{"metadata":{"labels":{"config.openshift.io/inject-trusted-cabundle":"true","n":"%d"}}}`, i), "")
}

func patchStatus(i, _ int) contract.Mutation {
	name := fmt.Sprintf("cluster-patched-%d", i)
	m := md(contract.ActionPatchStatus, "operator.openshift.io", "v1", "authentications", "", name)
	m.PatchType = contract.PatchTypeMerge
	m.FieldManager = "status-patcher"
	return mutation(contract.ClassManagement, m, fmt.Sprintf(`{"status":{"readyReplicas":%d}}`, i%3), "fieldManager: status-patcher\n")
}

func deleteClusterRole(i, _ int) contract.Mutation {
	name := fmt.Sprintf("system:openshift:obsolete-%d", i)
	return mutation(contract.ClassUserWorkload, md(contract.ActionDelete, "rbac.authorization.k8s.io", "v1", "clusterroles", "", name), "apiVersion: rbac.authorization.k8s.io/v1\nkind: DeleteOptions\n", "")
}

// HostedConfig is the hosted configuration the synthetic mix is planned with: the HCP
// clusters-example/example, and for the operator "synthetic" (whose operand is shaped as
// CAO's oauth-openshift) the labels HyperShift reserves that its operand carries, as the
// shipped CAO configuration allows them.
const HostedConfig = `apiVersion: topolayer.dev/v1alpha1
kind: TopologyConfig
topology:
  type: Hosted
  hosted: {namespace: clusters-example, hostedControlPlane: example}
policy:
  operators:
  - name: synthetic
    management:
      labels:
      - {key: app, value: oauth-openshift}
      - {key: hypershift.openshift.io/control-plane-component, value: oauth-openshift}
`
