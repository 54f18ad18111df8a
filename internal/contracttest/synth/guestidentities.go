package synth

import (
	"fmt"

	"github.com/topolayer/topolayer/contract"
)

// eventsPerWorkload is how many events of the GuestIdentities mix name each Deployment.
const eventsPerWorkload = 4

// GuestIdentities is the mix of an operator whose every workload runs as its own service
// account, so that on the hosted topology every one is a guest identity: per account a
// Deployment acting as it (referring to a ConfigMap and a Secret of its own), the
// ServiceAccount, a Role and the RoleBinding granting it to the account, that ConfigMap and
// Secret, and events naming the Deployment. Account k (operand-k) is the k-th of each
// shape, in namespace k of the four the CAO mix spreads over.
func GuestIdentities() Mix {
	return newMix("guest-identities", []Shape{
		{Name: "Create core/events naming a Deployment of the directory (namespaced)", PerHundred: 10 * eventsPerWorkload, make: workloadEvent},
		{Name: "Create apps/deployments, each acting as its own service account (namespaced)", PerHundred: 10, make: workload},
		{Name: "Create core/serviceaccounts, one per Deployment (namespaced)", PerHundred: 10, make: workloadServiceAccount},
		{Name: "Create rbac roles, one per service account (namespaced)", PerHundred: 10, make: workloadRole},
		{Name: "Create rbac rolebindings, one per service account (namespaced)", PerHundred: 10, make: workloadRoleBinding},
		{Name: "Create core/configmaps, one per Deployment (namespaced)", PerHundred: 10, make: workloadConfigMap},
		{Name: "Create core/secrets, one per Deployment (namespaced)", PerHundred: 10, make: workloadSecret},
	})
}

// operand is the name of account k's Deployment, ServiceAccount, Role and RoleBinding.
func operand(k int) string { return fmt.Sprintf("operand-%d", k) }

func workload(_, k int) contract.Mutation {
	n, name := ns(k), operand(k)
	body := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: oauth-openshift
  name: %[1]s
  namespace: %[2]s
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
      containers:
      - args:
        - --config=/var/config/operand.yaml
        env:
        - name: LOG_LEVEL
          valueFrom:
            configMapKeyRef:
              key: logLevel
              name: %[1]s-config
        envFrom:
        - secretRef:
            name: %[1]s-session
        image: quay.io/openshift/operand:latest
        name: operand
        resources:
          requests:
            cpu: 10m
            memory: 50Mi
        volumeMounts:
        - mountPath: /var/config
          name: config
          readOnly: true
      serviceAccountName: %[1]s
      volumes:
      - configMap:
          name: %[1]s-config
        name: config
`, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "apps", "v1", "deployments", n, name), body, "")
}

func workloadServiceAccount(_, k int) contract.Mutation {
	n, name := ns(k), operand(k)
	body := fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n  namespace: %s\n", name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "serviceaccounts", n, name), body, "")
}

func workloadRole(_, k int) contract.Mutation {
	n, name := ns(k), operand(k)
	body := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %[1]s
  namespace: %[2]s
rules:
- apiGroups:
  - ""
  resourceNames:
  - %[1]s-config
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
`, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "rbac.authorization.k8s.io", "v1", "roles", n, name), body, "")
}

func workloadRoleBinding(_, k int) contract.Mutation {
	n, name := ns(k), operand(k)
	body := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[1]s
  namespace: %[2]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %[1]s
subjects:
- kind: ServiceAccount
  name: %[1]s
  namespace: %[2]s
`, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "rbac.authorization.k8s.io", "v1", "rolebindings", n, name), body, "")
}

func workloadConfigMap(_, k int) contract.Mutation {
	n, name := ns(k), operand(k)+"-config"
	body := fmt.Sprintf("apiVersion: v1\ndata:\n  logLevel: Normal\n  operand.yaml: 'replicas: %d'\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", k, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "configmaps", n, name), body, "")
}

func workloadSecret(_, k int) contract.Mutation {
	n, name := ns(k), operand(k)+"-session"
	body := fmt.Sprintf("apiVersion: v1\ndata:\n  session: c2Vzc2lvbi0%08d\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\ntype: Opaque\n", k, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "secrets", n, name), body, "")
}

// workloadEvent is event ord of the mix: its involvedObject is Deployment ord/eventsPerWorkload.
func workloadEvent(i, ord int) contract.Mutation {
	k := ord / eventsPerWorkload
	n, deployment := ns(k), operand(k)
	name := fmt.Sprintf("%s.%016x", deployment, 0x18599d2230299800+i)
	body := fmt.Sprintf(`apiVersion: v1
count: 1
eventTime: null
firstTimestamp: "2024-10-14T22:38:20Z"
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: %s
  namespace: %s
kind: Event
lastTimestamp: "2024-10-14T22:38:20Z"
message: 'Scaled up replica set %s-%d to 2'
metadata:
  name: %s
  namespace: %s
reason: ScalingReplicaSet
reportingComponent: ""
reportingInstance: ""
source:
  component: deployment-controller
type: Normal
`, deployment, n, deployment, ord%eventsPerWorkload, name, n)
	return mutation(contract.ClassManagement, md(contract.ActionCreate, "", "v1", "events", n, name), body, "")
}
