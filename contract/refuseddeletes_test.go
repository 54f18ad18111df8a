package contract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refusal formats a refused Delete as client-go reports it.
func refusal(ns, resource, name string) string {
	return `an error on the server ("request namespace \"` + ns + `\" does not equal body namespace \"\"") has prevented the request from succeeding (delete ` + resource + ` ` + name + `)`
}

func TestParseRefusedDeletes(t *testing.T) {
	secret := func(ns, name string) RefusedDelete {
		return RefusedDelete{Controller: "c", Identity: Identity{Resource: "secrets", Namespace: ns, Name: name}}
	}
	login := secret("openshift-authentication", "v4-0-config-user-template-login")
	errorTpl := secret("openshift-authentication", "v4-0-config-user-template-error")
	cases := map[string]struct {
		message string
		want    []RefusedDelete
	}{
		"single": {
			message: refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login"),
			want:    []RefusedDelete{login},
		},
		"aggregated in brackets": {
			message: "[" + refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login") + ", " + refusal("openshift-authentication", "secrets", "v4-0-config-user-template-error") + "]",
			want:    []RefusedDelete{login, errorTpl},
		},
		"joined by newlines, among other errors": {
			message: `secret "x" not found` + "\n" + refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login") + "\n" + refusal("openshift-authentication", "secrets", "v4-0-config-user-template-error"),
			want:    []RefusedDelete{login, errorTpl},
		},
		"wrapped, with a provider suffix": {
			message: `sync: ` + refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login") + ` (check the "ingress operator" that is supposed to provide this resource)`,
			want:    []RefusedDelete{login},
		},
		"group resource": {
			message: refusal("openshift-authentication", "deployments.apps", "oauth-openshift"),
			want:    []RefusedDelete{{Controller: "c", Identity: Identity{Group: "apps", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}}},
		},
		"dotted group and name": {
			message: refusal("ns", "routes.route.openshift.io", "a.b"),
			want:    []RefusedDelete{{Controller: "c", Identity: Identity{Group: "route.openshift.io", Resource: "routes", Namespace: "ns", Name: "a.b"}}},
		},
		"another verb":         {message: strings.Replace(refusal("ns", "namespaces", "ns"), "(delete ", "(put ", 1)},
		"a body namespace set": {message: strings.Replace(refusal("ns", "secrets", "a"), `body namespace \"\"`, `body namespace \"ns\"`, 1)},
		"quoted again": {
			message: strings.ReplaceAll(refusal("ns", "secrets", "a"), `\"`, `\\\"`),
		},
		"escaped quote in the namespace": {message: refusal(`a\"b`, "secrets", "a")},
		"quote in the name":              {message: refusal("ns", "secrets", `a"b`)},
		"space in the name":              {message: refusal("ns", "secrets", "a b")},
		"upper-case name":                {message: refusal("ns", "secrets", "A")},
		"no name":                        {message: refusal("ns", "secrets", "")},
		"empty namespace":                {message: refusal("", "secrets", "a")},
		"bad group":                      {message: refusal("ns", "secrets.", "a")},
		"glued to a word":                {message: "x" + refusal("ns", "secrets", "a")},
		"followed by a word":             {message: refusal("ns", "secrets", "a") + "x"},
		"cut short":                      {message: refusal("ns", "secrets", "a")[:140]},
		"garbage":                        {message: "\x00\xff" + refusalHead + refusalHead + refusalMid + ")"},
		"empty":                          {},
		"huge name": {
			message: refusal("ns", "secrets", strings.Repeat("a", 300)),
		},
		"huge input, one refusal at the end": {
			message: strings.Repeat(refusalHead, 1000) + " " + refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login"),
			want:    []RefusedDelete{login},
		},
		"past the size bound": {
			message: strings.Repeat("x", MaxRefusalMessageSize) + " " + refusal("ns", "secrets", "a"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseRefusedDeletes("c", tc.message)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseRefusedDeletes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllerResultsRefusedDeletes(t *testing.T) {
	login := refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login")
	many := strings.Repeat(refusal("ns", "secrets", "a")+"\n", MaxRefusedDeletes+10)
	cases := map[string]struct {
		results *ControllerResults
		want    []RefusedDelete
	}{
		"nil": {},
		"each object once, the first controller's": {
			results: &ControllerResults{ControllerResults: []ControllerResult{
				{ControllerName: "ok", Status: ControllerSucceeded},
				{ControllerName: "a", Status: ControllerFailed, Errors: []ErrorDetails{{Message: login}, {Message: login}}},
				{ControllerName: "b", Status: ControllerFailed, Errors: []ErrorDetails{{Message: login + "\n" + refusal("ns", "configmaps", "c")}}},
			}},
			want: []RefusedDelete{
				{Controller: "a", Identity: Identity{Resource: "secrets", Namespace: "openshift-authentication", Name: "v4-0-config-user-template-login"}},
				{Controller: "b", Identity: Identity{Resource: "configmaps", Namespace: "ns", Name: "c"}},
			},
		},
		"bounded": {
			results: &ControllerResults{ControllerResults: []ControllerResult{{ControllerName: "a", Errors: []ErrorDetails{{Message: many}, {Message: refusal("ns", "secrets", "b")}}}}},
			want:    []RefusedDelete{{Controller: "a", Identity: Identity{Resource: "secrets", Namespace: "ns", Name: "a"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.results.RefusedDeletes()); diff != "" {
				t.Errorf("RefusedDeletes (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseRefusedDeletes checks that any message parses without a panic, within the bound,
// into identities that are valid names, each of which formats back into a refusal that
// parses to itself.
func FuzzParseRefusedDeletes(f *testing.F) {
	f.Add(refusal("openshift-authentication", "secrets", "v4-0-config-user-template-login"))
	f.Add("[" + refusal("ns", "deployments.apps", "a") + ", " + refusal("ns", "secrets", "b") + "]")
	f.Add(refusalHead + refusalMid)
	f.Add("")
	f.Fuzz(func(t *testing.T, message string) {
		got := ParseRefusedDeletes("c", message)
		if len(got) > MaxRefusedDeletes {
			t.Fatalf("%d refusals, more than %d", len(got), MaxRefusedDeletes)
		}
		for _, d := range got {
			id := d.Identity
			if id.Namespace == "" || id.Name == "" || id.Resource == "" || id.Version != "" {
				t.Fatalf("incomplete identity %+v", id)
			}
			gr := id.GroupResource().String()
			again := ParseRefusedDeletes("c", refusal(id.Namespace, gr, id.Name))
			if len(again) != 1 || again[0] != d {
				t.Fatalf("%+v formats into a refusal that parses to %+v", d, again)
			}
		}
	})
}
