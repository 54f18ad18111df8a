package manager

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/mom/scheduler"
)

func TestTriggerOf(t *testing.T) {
	own := scheduler.Cause{Resource: "configmaps", Name: "a", SelfInflicted: true}
	other := scheduler.Cause{Resource: "configmaps", Name: "b"}
	for _, tc := range []struct {
		name   string
		causes []scheduler.Cause
		want   string
	}{
		{"the first run", nil, TriggerStart},
		{"a change", []scheduler.Cause{other}, TriggerChange},
		{"own writes only", []scheduler.Cause{own, own}, TriggerOwnWrites},
		{"own writes and a change", []scheduler.Cause{own, other}, TriggerChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := triggerOf(tc.causes); got != tc.want {
				t.Errorf("triggerOf = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDigestOf(t *testing.T) {
	m := func(resource, name, body string) contract.Mutation {
		return contract.Mutation{Class: contract.ClassManagement, Metadata: contract.Metadata{
			Action: contract.ActionApply, Name: name, Namespace: "ns",
			ResourceType: contract.ResourceType{Version: "v1", Resource: resource},
		}, Body: []byte(body)}
	}
	base := []contract.Mutation{m("configmaps", "a", "x"), m("secrets", "b", "y")}
	for _, tc := range []struct {
		name string
		ms   []contract.Mutation
		same bool
	}{
		{"the same outputs", []contract.Mutation{m("configmaps", "a", "x"), m("secrets", "b", "y")}, true},
		{"another order", []contract.Mutation{m("secrets", "b", "y"), m("configmaps", "a", "x")}, true},
		{"an event more: events differ on every run", append([]contract.Mutation{m("events", "e1", "now")}, base...), true},
		{"a body changed", []contract.Mutation{m("configmaps", "a", "z"), m("secrets", "b", "y")}, false},
		{"a mutation less", base[:1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if same := digestOf(tc.ms) == digestOf(base); same != tc.same {
				t.Errorf("same digest: %v, want %v", same, tc.same)
			}
		})
	}
}
