package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeOutputResources(t *testing.T) {
	secret := ExactResourceID{ResourceTypeIdentifier: ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: "openshift-authentication", Name: "idp"}
	cm := ExactResourceID{ResourceTypeIdentifier: ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: "openshift-authentication", Name: "cliconfig"}
	own := &OutputResources{ManagementResources: OutputResourceList{ExactResources: []ExactResourceID{cm}, EventingNamespaces: []string{"ns"}}}
	extra := &OutputResources{ManagementResources: OutputResourceList{ExactResources: []ExactResourceID{cm, secret}, EventingNamespaces: []string{"ns"}}}
	tests := []struct {
		name string
		a, b *OutputResources
		want *OutputResources
	}{
		{"both nil", nil, nil, nil},
		{"no supplement", own, nil, own},
		{"only a supplement", nil, extra, extra},
		{"union without repeats", own, extra, &OutputResources{ManagementResources: OutputResourceList{ExactResources: []ExactResourceID{cm, secret}, EventingNamespaces: []string{"ns"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeOutputResources(tt.a, tt.b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got != nil && (got == tt.a || got == tt.b) {
				t.Error("the result shares its pointer with an argument")
			}
		})
	}
	if len(own.ManagementResources.ExactResources) != 1 {
		t.Error("an argument was changed")
	}
}

func TestMergeInputResources(t *testing.T) {
	auth := ExactResourceID{ResourceTypeIdentifier: ResourceTypeIdentifier{Group: "config.openshift.io", Version: "v1", Resource: "authentications"}, Name: "cluster"}
	sel := LabelSelectedResource{ResourceTypeIdentifier: ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: "openshift-config"}
	own := &InputResources{ApplyConfigurationResources: ResourceList{LabelSelectedResources: []LabelSelectedResource{sel}}}
	extra := &InputResources{ApplyConfigurationResources: ResourceList{ExactResources: []ExactResourceID{auth}, LabelSelectedResources: []LabelSelectedResource{sel}}}
	got := MergeInputResources(own, extra)
	want := &InputResources{ApplyConfigurationResources: ResourceList{ExactResources: []ExactResourceID{auth}, LabelSelectedResources: []LabelSelectedResource{sel}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if MergeInputResources(nil, nil) != nil {
		t.Error("two nils merged into something")
	}
}
