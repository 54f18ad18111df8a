package references_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/references"
)

const (
	refHCP            = "clusters-example"
	refAuthNS         = "openshift-authentication"
	refAuthOperatorNS = "openshift-authentication-operator"
)

var (
	refGKConfigMap      = schema.GroupKind{Kind: "ConfigMap"}
	refGKSecret         = schema.GroupKind{Kind: "Secret"}
	refGKServiceAccount = schema.GroupKind{Kind: "ServiceAccount"}
	refGKService        = schema.GroupKind{Kind: "Service"}
	refGKRole           = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}
	refGKClusterRole    = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	refGKPriorityClass  = schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}
	refGKDeployment     = schema.GroupKind{Group: "apps", Kind: "Deployment"}
)

// refMoved is what the hosted name mapping does to a namespaced object.
func refMoved(ns, name string) references.Renamed {
	return references.Renamed{Namespace: refHCP, Name: ns + "--" + name}
}

// refRenames is a hosted plan: objects moved into the HCP namespace, one aliased to an
// existing HCP object, a ClusterRole that became a Role, and objects left where they are.
var refRenames = references.RenameMap{
	{Kind: refGKConfigMap, Namespace: refAuthNS, Name: "audit"}:                                refMoved(refAuthNS, "audit"),
	{Kind: refGKConfigMap, Namespace: refAuthNS, Name: "trusted-ca"}:                           refMoved(refAuthNS, "trusted-ca"),
	{Kind: refGKSecret, Namespace: refAuthNS, Name: "v4-0-config-system-session"}:              refMoved(refAuthNS, "v4-0-config-system-session"),
	{Kind: refGKSecret, Namespace: refAuthNS, Name: "v4-0-config-system-serving-cert"}:         {Namespace: refHCP, Name: "oauth-server-crt"},
	{Kind: refGKSecret, Namespace: refAuthNS, Name: "pull-secret"}:                             {Namespace: refHCP, Name: "pull-secret"},
	{Kind: refGKServiceAccount, Namespace: refAuthNS, Name: "oauth-openshift"}:                 refMoved(refAuthNS, "oauth-openshift"),
	{Kind: refGKServiceAccount, Namespace: refAuthOperatorNS, Name: "authentication-operator"}: refMoved(refAuthOperatorNS, "authentication-operator"),
	{Kind: refGKServiceAccount, Namespace: "openshift-monitoring", Name: "prometheus-k8s"}:     {Namespace: "openshift-monitoring", Name: "prometheus-k8s"},
	{Kind: refGKService, Namespace: "openshift-oauth-apiserver", Name: "api"}:                  refMoved("openshift-oauth-apiserver", "api"),
	{Kind: refGKService, Namespace: refAuthNS, Name: "oauth-openshift"}:                        refMoved(refAuthNS, "oauth-openshift"),
	{Kind: refGKRole, Namespace: refAuthNS, Name: "oauth-openshift"}:                           refMoved(refAuthNS, "oauth-openshift"),
	{Kind: refGKClusterRole, Name: "system:openshift:oauth-servercert-trust"}:                  {Kind: "Role", Namespace: refHCP, Name: "--system:openshift:oauth-servercert-trust"},
	{Kind: refGKPriorityClass, Name: "system-cluster-critical"}:                                {Name: "system-cluster-critical"},
	{Kind: refGKDeployment, Namespace: refAuthNS, Name: "oauth-openshift"}:                     refMoved(refAuthNS, "oauth-openshift"),
}

func TestRewriteReferences(t *testing.T) {
	testCases := map[string]struct {
		input    string
		expected string // "" means unchanged
		changed  []string
		dangling []string
		err      string
	}{
		"deployment": {
			input: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  selector:
    matchLabels:
      app: oauth-openshift
  template:
    metadata:
      labels:
        app: oauth-openshift
    spec:
      serviceAccountName: oauth-openshift
      priorityClassName: system-cluster-critical
      imagePullSecrets:
      - name: pull-secret
      initContainers:
      - name: copy-ca
        image: example.com/oauth:latest
        env:
        - name: CA_BUNDLE
          valueFrom:
            configMapKeyRef:
              name: trusted-ca
              key: ca-bundle.crt
      containers:
      - name: oauth-openshift
        image: example.com/oauth:latest
        env:
        - name: SESSION_SECRET
          valueFrom:
            secretKeyRef:
              name: v4-0-config-system-session
              key: v4-0-config-system-session
        - name: LOG_LEVEL
          value: "2"
        envFrom:
        - configMapRef:
            name: audit
        - secretRef:
            name: v4-0-config-system-session
            optional: true
      volumes:
      - name: audit
        configMap:
          name: audit
      - name: serving-cert
        secret:
          secretName: v4-0-config-system-serving-cert
      - name: bundle
        projected:
          sources:
          - configMap:
              name: trusted-ca
          - secret:
              name: v4-0-config-system-serving-cert
          - serviceAccountToken:
              path: token
`,
			expected: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  selector:
    matchLabels:
      app: oauth-openshift
  template:
    metadata:
      labels:
        app: oauth-openshift
    spec:
      serviceAccountName: openshift-authentication--oauth-openshift
      priorityClassName: system-cluster-critical
      imagePullSecrets:
      - name: pull-secret
      initContainers:
      - name: copy-ca
        image: example.com/oauth:latest
        env:
        - name: CA_BUNDLE
          valueFrom:
            configMapKeyRef:
              name: openshift-authentication--trusted-ca
              key: ca-bundle.crt
      containers:
      - name: oauth-openshift
        image: example.com/oauth:latest
        env:
        - name: SESSION_SECRET
          valueFrom:
            secretKeyRef:
              name: openshift-authentication--v4-0-config-system-session
              key: v4-0-config-system-session
        - name: LOG_LEVEL
          value: "2"
        envFrom:
        - configMapRef:
            name: openshift-authentication--audit
        - secretRef:
            name: openshift-authentication--v4-0-config-system-session
            optional: true
      volumes:
      - name: audit
        configMap:
          name: openshift-authentication--audit
      - name: serving-cert
        secret:
          secretName: oauth-server-crt
      - name: bundle
        projected:
          sources:
          - configMap:
              name: openshift-authentication--trusted-ca
          - secret:
              name: oauth-server-crt
          - serviceAccountToken:
              path: token
`,
			changed: []string{
				"spec.template.spec.serviceAccountName: oauth-openshift -> openshift-authentication--oauth-openshift",
				"spec.template.spec.initContainers[0].env[0].valueFrom.configMapKeyRef.name: trusted-ca -> openshift-authentication--trusted-ca",
				"spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name: v4-0-config-system-session -> openshift-authentication--v4-0-config-system-session",
				"spec.template.spec.containers[0].envFrom[0].configMapRef.name: audit -> openshift-authentication--audit",
				"spec.template.spec.containers[0].envFrom[1].secretRef.name: v4-0-config-system-session -> openshift-authentication--v4-0-config-system-session",
				"spec.template.spec.volumes[0].configMap.name: audit -> openshift-authentication--audit",
				"spec.template.spec.volumes[1].secret.secretName: v4-0-config-system-serving-cert -> oauth-server-crt",
				"spec.template.spec.volumes[2].projected.sources[0].configMap.name: trusted-ca -> openshift-authentication--trusted-ca",
				"spec.template.spec.volumes[2].projected.sources[1].secret.name: v4-0-config-system-serving-cert -> oauth-server-crt",
			},
		},
		"cronjob": {
			input: `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: rotate
  namespace: openshift-authentication
spec:
  schedule: '@daily'
  jobTemplate:
    spec:
      template:
        spec:
          serviceAccountName: oauth-openshift
          containers:
          - name: rotate
            envFrom:
            - configMapRef:
                name: audit
`,
			expected: `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: rotate
  namespace: openshift-authentication
spec:
  schedule: '@daily'
  jobTemplate:
    spec:
      template:
        spec:
          serviceAccountName: openshift-authentication--oauth-openshift
          containers:
          - name: rotate
            envFrom:
            - configMapRef:
                name: openshift-authentication--audit
`,
			changed: []string{
				"spec.jobTemplate.spec.template.spec.serviceAccountName: oauth-openshift -> openshift-authentication--oauth-openshift",
				"spec.jobTemplate.spec.template.spec.containers[0].envFrom[0].configMapRef.name: audit -> openshift-authentication--audit",
			},
		},
		"rolebinding to a role": {
			input: `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: oauth-openshift
subjects:
- kind: ServiceAccount
  name: oauth-openshift
  namespace: openshift-authentication
- kind: ServiceAccount
  name: authentication-operator
  namespace: openshift-authentication-operator
- kind: ServiceAccount
  name: prometheus-k8s
  namespace: openshift-monitoring
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: system:authenticated
`,
			expected: `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: openshift-authentication--oauth-openshift
subjects:
- kind: ServiceAccount
  name: openshift-authentication--oauth-openshift
  namespace: clusters-example
- kind: ServiceAccount
  name: openshift-authentication-operator--authentication-operator
  namespace: clusters-example
- kind: ServiceAccount
  name: prometheus-k8s
  namespace: openshift-monitoring
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: system:authenticated
`,
			changed: []string{
				"roleRef: oauth-openshift -> openshift-authentication--oauth-openshift",
				"subjects[0]: openshift-authentication/oauth-openshift -> clusters-example/openshift-authentication--oauth-openshift",
				"subjects[1]: openshift-authentication-operator/authentication-operator -> clusters-example/openshift-authentication-operator--authentication-operator",
			},
		},
		"rolebinding to a clusterrole that becomes a role": {
			input: `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: oauth-servercert-trust
  namespace: openshift-authentication
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:openshift:oauth-servercert-trust
subjects:
- kind: ServiceAccount
  name: authentication-operator
  namespace: openshift-authentication-operator
`,
			expected: `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: oauth-servercert-trust
  namespace: openshift-authentication
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: --system:openshift:oauth-servercert-trust
subjects:
- kind: ServiceAccount
  name: openshift-authentication-operator--authentication-operator
  namespace: clusters-example
`,
			changed: []string{
				"roleRef: ClusterRole system:openshift:oauth-servercert-trust -> Role --system:openshift:oauth-servercert-trust",
				"subjects[0]: openshift-authentication-operator/authentication-operator -> clusters-example/openshift-authentication-operator--authentication-operator",
			},
		},
		"clusterrolebinding to a clusterrole that becomes a role": {
			input: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:openshift:oauth-servercert-trust
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:openshift:oauth-servercert-trust
subjects:
- kind: ServiceAccount
  name: oauth-openshift
  namespace: openshift-authentication
- kind: ServiceAccount
  name: nobody
`,
			expected: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:openshift:oauth-servercert-trust
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: --system:openshift:oauth-servercert-trust
subjects:
- kind: ServiceAccount
  name: openshift-authentication--oauth-openshift
  namespace: clusters-example
- kind: ServiceAccount
  name: nobody
`,
			changed: []string{
				"roleRef: ClusterRole system:openshift:oauth-servercert-trust -> Role --system:openshift:oauth-servercert-trust",
				"subjects[0]: openshift-authentication/oauth-openshift -> clusters-example/openshift-authentication--oauth-openshift",
			},
			// A cluster-scoped referrer and no namespace in the subject: no namespace to ask.
			dangling: []string{"subjects[1]: ServiceAccount nobody"},
		},
		"role resourceNames follow the rule's resources": {
			input: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  resourceNames:
  - audit
  - trusted-ca
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - pods
  - secrets
  resourceNames:
  - v4-0-config-system-serving-cert
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - pods
  resourceNames:
  - audit
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - serviceaccounts/token
  resourceNames:
  - oauth-openshift
  verbs:
  - create
- apiGroups:
  - apps
  resources:
  - configmaps
  resourceNames:
  - audit
  verbs:
  - get
`,
			expected: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  resourceNames:
  - openshift-authentication--audit
  - openshift-authentication--trusted-ca
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - pods
  - secrets
  resourceNames:
  - oauth-server-crt
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - pods
  resourceNames:
  - audit
  verbs:
  - get
- apiGroups:
  - ""
  resources:
  - serviceaccounts/token
  resourceNames:
  - openshift-authentication--oauth-openshift
  verbs:
  - create
- apiGroups:
  - apps
  resources:
  - configmaps
  resourceNames:
  - audit
  verbs:
  - get
`,
			changed: []string{
				"rules[0].resourceNames[0]: audit -> openshift-authentication--audit",
				"rules[0].resourceNames[1]: trusted-ca -> openshift-authentication--trusted-ca",
				"rules[1].resourceNames[0]: v4-0-config-system-serving-cert -> oauth-server-crt",
				"rules[3].resourceNames[0]: oauth-openshift -> openshift-authentication--oauth-openshift",
			},
		},
		"role resourceNames of several kinds": {
			input: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: openshift-authentication
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  - secrets
  resourceNames:
  - v4-0-config-system-serving-cert
  - unknown
  verbs:
  - get
`,
			expected: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: openshift-authentication
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  - secrets
  resourceNames:
  - oauth-server-crt
  - unknown
  verbs:
  - get
`,
			changed:  []string{"rules[0].resourceNames[0]: v4-0-config-system-serving-cert -> oauth-server-crt"},
			dangling: []string{"rules[0].resourceNames[1]: ConfigMap or Secret openshift-authentication/unknown"},
		},
		"apiservice": {
			input: `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.oauth.openshift.io
spec:
  group: oauth.openshift.io
  version: v1
  service:
    namespace: openshift-oauth-apiserver
    name: api
    port: 443
`,
			expected: `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.oauth.openshift.io
spec:
  group: oauth.openshift.io
  version: v1
  service:
    namespace: clusters-example
    name: openshift-oauth-apiserver--api
    port: 443
`,
			changed: []string{"spec.service: openshift-oauth-apiserver/api -> clusters-example/openshift-oauth-apiserver--api"},
		},
		"webhook configuration": {
			input: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: oauth
webhooks:
- name: by-service.oauth.openshift.io
  clientConfig:
    service:
      namespace: openshift-oauth-apiserver
      name: api
      path: /validate
- name: by-url.oauth.openshift.io
  clientConfig:
    url: https://example.com/validate
`,
			expected: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: oauth
webhooks:
- name: by-service.oauth.openshift.io
  clientConfig:
    service:
      namespace: clusters-example
      name: openshift-oauth-apiserver--api
      path: /validate
- name: by-url.oauth.openshift.io
  clientConfig:
    url: https://example.com/validate
`,
			changed: []string{"webhooks[0].clientConfig.service: openshift-oauth-apiserver/api -> clusters-example/openshift-oauth-apiserver--api"},
		},
		"statefulset": {
			input: `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  serviceName: oauth-openshift
  template:
    spec:
      serviceAccountName: oauth-openshift
`,
			expected: `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  serviceName: openshift-authentication--oauth-openshift
  template:
    spec:
      serviceAccountName: openshift-authentication--oauth-openshift
`,
			changed: []string{
				"spec.serviceName: oauth-openshift -> openshift-authentication--oauth-openshift",
				"spec.template.spec.serviceAccountName: oauth-openshift -> openshift-authentication--oauth-openshift",
			},
		},
		"ingress": {
			input: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  ingressClassName: openshift-default
  tls:
  - hosts:
    - oauth.example.com
    secretName: v4-0-config-system-serving-cert
  rules:
  - host: oauth.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: oauth-openshift
            port:
              number: 443
`,
			expected: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  ingressClassName: openshift-default
  tls:
  - hosts:
    - oauth.example.com
    secretName: oauth-server-crt
  rules:
  - host: oauth.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: openshift-authentication--oauth-openshift
            port:
              number: 443
`,
			changed: []string{
				"spec.tls[0].secretName: v4-0-config-system-serving-cert -> oauth-server-crt",
				"spec.rules[0].http.paths[0].backend.service.name: oauth-openshift -> openshift-authentication--oauth-openshift",
			},
			// IngressClass is cluster-scoped: no namespace.
			dangling: []string{"spec.ingressClassName: IngressClass openshift-default"},
		},
		"route": {
			input: `
apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  host: oauth.example.com
  to:
    kind: Service
    name: oauth-openshift
    weight: 100
  alternateBackends:
  - kind: Service
    name: canary
    weight: 0
`,
			expected: `
apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  host: oauth.example.com
  to:
    kind: Service
    name: openshift-authentication--oauth-openshift
    weight: 100
  alternateBackends:
  - kind: Service
    name: canary
    weight: 0
`,
			changed:  []string{"spec.to: oauth-openshift -> openshift-authentication--oauth-openshift"},
			dangling: []string{"spec.alternateBackends[0]: Service openshift-authentication/canary"},
		},
		"horizontal pod autoscaler": {
			input: `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: oauth-openshift
`,
			expected: `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: openshift-authentication--oauth-openshift
`,
			changed: []string{"spec.scaleTargetRef: oauth-openshift -> openshift-authentication--oauth-openshift"},
		},
		"dangling": {
			input: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  template:
    spec:
      serviceAccountName: unknown
      containers:
      - name: oauth-openshift
      volumes:
      - name: audit
        configMap:
          name: audit
      - name: missing
        secret:
          secretName: missing
`,
			expected: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  template:
    spec:
      serviceAccountName: unknown
      containers:
      - name: oauth-openshift
      volumes:
      - name: audit
        configMap:
          name: openshift-authentication--audit
      - name: missing
        secret:
          secretName: missing
`,
			changed: []string{"spec.template.spec.volumes[0].configMap.name: audit -> openshift-authentication--audit"},
			dangling: []string{
				"spec.template.spec.serviceAccountName: ServiceAccount openshift-authentication/unknown",
				"spec.template.spec.volumes[1].secret.secretName: Secret openshift-authentication/missing",
			},
		},
		"no references": {
			input: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: audit
  namespace: openshift-authentication
  annotations:
    # a comment stays
    example.com/owner: "oauth"
data:
  policy.yaml: |
    rules:
    - level: Metadata
`,
		},
		"absent, null and empty fields are skipped": {
			input: `
apiVersion: v1
kind: Pod
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  serviceAccountName: ""
  imagePullSecrets: []
  containers:
  - name: oauth-openshift
    env:
    - name: A
      value: a
    - name: B
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
  volumes:
  - name: empty
    emptyDir: {}
  - name: null-config
    configMap: null
  - name: no-name
    secret: {}
`,
		},
		"alias cycle": {
			input: `
apiVersion: v1
kind: Pod
metadata:
  name: loop
spec:
  volumes: &v
  - *v
`,
			err: "alias *v refers to a node that contains it",
		},
		"alias bomb": {
			input: `
apiVersion: v1
kind: Pod
metadata:
  name: bomb
spec:
  volumes: &a
  - configMap:
      name: audit
  initContainers: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
  containers: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
  overhead: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
  tolerations: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
  readinessGates: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
`,
			err: "YAML aliases expand the object beyond 100000 nodes",
		},
		"not an object": {
			input: `
- a
- b
`,
			err: "expected an object, found a YAML list",
		},
		"malformed": {
			input: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  template:
    spec:
      serviceAccountName: oauth-openshift
      volumes: oops
`,
			err: "spec/template/spec/volumes",
		},
	}

	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			runRewriteReferences(t, tc.input, tc.expected, tc.changed, tc.dangling, tc.err)
		})
	}
}

// runRewriteReferences rewrites input with refRenames and compares the object, what changed, what
// dangles and the error. An empty expected means the object must come out unchanged, byte
// for byte.
func runRewriteReferences(t *testing.T, input, expected string, changed, dangling []string, wantErr string) {
	t.Helper()
	input = strings.TrimPrefix(input, "\n")
	if expected == "" {
		expected = input
	}
	expected = strings.TrimPrefix(expected, "\n")
	obj, err := yaml.Parse(input)
	if err != nil {
		t.Fatalf("parse input: %v", err)
	}
	gotChanged, gotDangling, err := references.RewriteReferences(obj, refRenames)
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("expected an error containing %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error %q does not contain %q", err, wantErr)
	}
	if diff := cmp.Diff(expected, obj.MustString()); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(changed, gotChanged); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(dangling, gotDangling); diff != "" {
		t.Errorf("dangling (-want +got):\n%s", diff)
	}
}

func TestRewriteReferencesNilObject(t *testing.T) {
	changed, dangling, err := references.RewriteReferences(nil, refRenames)
	if changed != nil || dangling != nil || err != nil {
		t.Fatalf("got %v, %v, %v; want nothing", changed, dangling, err)
	}
}

// TestRewriteReferencesAsksOnce checks that a reference found by several rows of the
// table is asked once per candidate kind and rewritten once: a roleRef whose ClusterRole
// became a Role is not then read again as a reference to a Role.
func TestRewriteReferencesAsksOnce(t *testing.T) {
	obj := yaml.MustParse(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: b
  namespace: ns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: c
`)
	var asked []references.Reference
	r := references.RenamerFunc(func(ref references.Reference) (references.Renamed, bool) {
		asked = append(asked, ref)
		return references.Renamed{Kind: "Role", Namespace: refHCP, Name: "--" + ref.Name}, true
	})
	changed, _, err := references.RewriteReferences(obj, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []references.Reference{{Kind: refGKClusterRole, Name: "c"}}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"roleRef: ClusterRole c -> Role --c"}, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
}

const refBenchDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  replicas: 2
  selector:
    matchLabels:
      app: oauth-openshift
  template:
    metadata:
      labels:
        app: oauth-openshift
    spec:
      serviceAccountName: oauth-openshift
      priorityClassName: system-cluster-critical
      imagePullSecrets:
      - name: pull-secret
      initContainers:
      - name: copy-ca
        image: example.com/oauth:latest
        env:
        - name: CA_BUNDLE
          valueFrom:
            configMapKeyRef:
              name: trusted-ca
              key: ca-bundle.crt
      containers:
      - name: oauth-openshift
        image: example.com/oauth:latest
        args:
        - osinserver
        - --config=/var/config/system/configmaps/v4-0-config-system-cliconfig/v4-0-config-system-cliconfig
        ports:
        - name: https
          containerPort: 6443
        env:
        - name: SESSION_SECRET
          valueFrom:
            secretKeyRef:
              name: v4-0-config-system-session
              key: v4-0-config-system-session
        envFrom:
        - configMapRef:
            name: audit
        readinessProbe:
          httpGet:
            path: /healthz
            port: 6443
            scheme: HTTPS
        volumeMounts:
        - name: audit
          mountPath: /var/run/configmaps/audit
        - name: serving-cert
          mountPath: /var/config/system/secrets/v4-0-config-system-serving-cert
      volumes:
      - name: audit
        configMap:
          name: audit
      - name: serving-cert
        secret:
          secretName: v4-0-config-system-serving-cert
      - name: bundle
        projected:
          sources:
          - configMap:
              name: trusted-ca
          - secret:
              name: v4-0-config-system-serving-cert
`

// BenchmarkRewriteReferences rewrites the references of a typical control-plane
// Deployment. Each iteration works on a fresh copy of the parsed object ("copy" measures
// that copy alone).
func BenchmarkRewriteReferences(b *testing.B) {
	obj := yaml.MustParse(refBenchDeployment)
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = obj.Copy()
		}
	})
	b.Run("rewrite", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			changed, _, err := references.RewriteReferences(obj.Copy(), refRenames)
			if err != nil || len(changed) != 8 {
				b.Fatalf("changed %d references, error %v", len(changed), err)
			}
		}
	})
}

// FuzzRewriteReferences checks that no object makes RewriteReferences panic, that an
// object it rejects comes out unchanged, and that renaming every reference twice over
// renames each once.
func FuzzRewriteReferences(f *testing.F) {
	f.Add(refBenchDeployment)
	f.Add("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  namespace: a\nroleRef:\n  kind: ClusterRole\n  name: r\nsubjects:\n- kind: ServiceAccount\n  name: s\n  namespace: b\n")
	f.Add("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nrules:\n- apiGroups: ['*']\n  resources: ['*']\n  resourceNames: [a, b]\n")
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  volumes: oops\n")
	f.Add("kind: Pod\nspec:\n  volumes:\n  - &v {configMap: {name: a}}\n  - *v\n")
	prefix := references.RenamerFunc(func(ref references.Reference) (references.Renamed, bool) {
		return references.Renamed{Namespace: "h", Name: "x-" + ref.Name}, true
	})
	f.Fuzz(func(t *testing.T, input string) {
		obj, err := yaml.Parse(input)
		if err != nil || obj.IsNil() {
			return
		}
		before, err := obj.String()
		if err != nil {
			return
		}
		changed, _, err := references.RewriteReferences(obj, prefix)
		after := obj.MustString()
		if err != nil {
			if after != before {
				t.Fatalf("rejected object was changed: %v\nbefore:\n%s\nafter:\n%s", err, before, after)
			}
			return
		}
		for _, c := range changed {
			if strings.Contains(c, "x-x-") {
				t.Fatalf("a reference was renamed twice: %s", c)
			}
		}
	})
}
