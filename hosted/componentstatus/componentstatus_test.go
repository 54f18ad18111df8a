package componentstatus

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestForDeployment(t *testing.T) {
	// rolledOut is a Deployment of 2 replicas as the deployment controller leaves it once
	// every pod is ready.
	rolledOut := func() *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "oauth-openshift", Generation: 3},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}},
		}
	}
	operator := Operator{Name: "cao", Version: "4.20.0"}
	for name, tc := range map[string]struct {
		deployment          func(*appsv1.Deployment)
		operator            func(*Operator)
		available, complete metav1.ConditionStatus
		reason, version     string
	}{
		"rolled out": {available: metav1.ConditionTrue, complete: metav1.ConditionTrue, reason: "AsExpected", version: "4.20.0"},
		"no Available condition yet": {
			deployment: func(d *appsv1.Deployment) { d.Status = appsv1.DeploymentStatus{} },
			available:  metav1.ConditionFalse, complete: metav1.ConditionFalse, reason: "WaitingForRolloutComplete",
		},
		"a new generation not observed": {
			deployment: func(d *appsv1.Deployment) { d.Generation = 4 },
			available:  metav1.ConditionTrue, complete: metav1.ConditionFalse, reason: "WaitingForRolloutComplete",
		},
		"one replica not updated": {
			deployment: func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 },
			available:  metav1.ConditionTrue, complete: metav1.ConditionFalse, reason: "WaitingForRolloutComplete",
		},
		"the operator's last run failed": {
			operator:  func(o *Operator) { o.RunError = "run 3 Failed: apply: boom" },
			available: metav1.ConditionTrue, complete: metav1.ConditionFalse, reason: "ReconciliationError",
		},
		"the operator progressing": {
			operator: func(o *Operator) {
				o.Conditions = map[string]OperatorCondition{"Progressing": {Status: "True", Reason: "Rollout"}}
			},
			available: metav1.ConditionTrue, complete: metav1.ConditionFalse, reason: "OperatorProgressing",
		},
		"the operator unavailable: the workload decides": {
			operator: func(o *Operator) {
				o.Conditions = map[string]OperatorCondition{"Available": {Status: "False", Reason: "OAuthServerDown"}}
			},
			available: metav1.ConditionTrue, complete: metav1.ConditionTrue, reason: "AsExpected", version: "4.20.0",
		},
	} {
		t.Run(name, func(t *testing.T) {
			d, op := rolledOut(), operator
			if tc.deployment != nil {
				tc.deployment(d)
			}
			if tc.operator != nil {
				tc.operator(&op)
			}
			c := ForDeployment("oauth-openshift", d, op)
			if c.Available.Status != tc.available || c.RolloutComplete.Status != tc.complete || c.RolloutComplete.Reason != tc.reason || c.Version != tc.version {
				t.Errorf("Available %s (%s), RolloutComplete %s (%s: %s), version %q; want %s, %s (%s), %q",
					c.Available.Status, c.Available.Message, c.RolloutComplete.Status, c.RolloutComplete.Reason, c.RolloutComplete.Message, c.Version,
					tc.available, tc.complete, tc.reason, tc.version)
			}
			if len(c.Resources) != 1 || c.Resources[0] != (Resource{Kind: "Deployment", Group: "apps", Name: "oauth-openshift"}) {
				t.Errorf("resources %v", c.Resources)
			}
		})
	}
}
