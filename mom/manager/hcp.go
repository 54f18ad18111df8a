package manager

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
	"github.com/topolayer/topolayer/internal/translate"
)

// profile is the HostedControlPlane the hypershift profile reads, as the Manager last read
// it, and the operators' engines built with it: one value, replaced whole when the object
// changes (setProfile), so that every run plans with one decision.
type profile struct {
	// hcp is what the profile reads; nil when the topology has no HostedControlPlane or its
	// profiles do not read it (topology.Topology.ReadsHostedControlPlane).
	hcp *hosted.HostedControlPlane
	// err says why the HostedControlPlane cannot be read (deleted, a field of the wrong
	// type): while it is set, runs apply nothing rather than plan with a wrong profile.
	err error
	// engines are the operators' engines, by name, built with hcp.
	engines map[string]translate.Engine
}

// errProfile marks runs refused because the profile cannot read the HostedControlPlane.
var errProfile = errors.New("the hypershift profile cannot read the HostedControlPlane")

// refusal is the error of a run that the profile refuses to plan: nil when it can.
func (p *profile) refusal() error {
	if p.err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w; nothing is applied until it can", errProfile, p.err)
}

// currentProfile returns the profile runs plan with now.
func (m *Manager) currentProfile() *profile {
	m.profileMu.RLock()
	defer m.profileMu.RUnlock()
	return m.profile
}

// newProfile builds the operators' engines with hcp (nil: the topology as configured).
func (m *Manager) newProfile(hcp *hosted.HostedControlPlane) (*profile, error) {
	topo := m.topo
	if hcp != nil {
		var err error
		if topo, err = m.topo.WithHostedControlPlane(hcp); err != nil {
			return nil, err
		}
	}
	p := &profile{hcp: hcp, engines: map[string]translate.Engine{}}
	for name, st := range m.ops {
		e, err := topo.Engine(name, st.outputs)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", name, err)
		}
		p.engines[name] = e
	}
	return p, nil
}

// hostedControlPlaneChanged reads what the profile reads of u, the topology's
// HostedControlPlane as the informer has it now (nil: deleted), and when that differs from
// what the runs plan with, replaces the profile and returns true: every operator runs again
// (TriggerHostedControlPlane), since any of them may place a workload the profile edits. A
// HostedControlPlane that cannot be read refuses the runs until it can (errProfile), and its
// status objects say why.
func (m *Manager) hostedControlPlaneChanged(u *unstructured.Unstructured) bool {
	if !m.topo.ReadsHostedControlPlane() {
		return false
	}
	id, _ := m.topo.HostedControlPlane()
	var next *profile
	var h *hosted.HostedControlPlane
	var err error
	if u == nil {
		err = fmt.Errorf("the HostedControlPlane %s/%s was deleted", id.Namespace, id.Name)
	} else {
		h, err = hosted.ParseHostedControlPlane(u)
	}
	if err == nil {
		next, err = m.newProfile(h)
	}
	cur := m.currentProfile()
	if err != nil {
		if cur.err != nil && cur.err.Error() == err.Error() {
			return false
		}
		m.log.Error(err, "the hypershift profile cannot read the HostedControlPlane: nothing is applied until it can", "object", id.String())
		next = &profile{hcp: cur.hcp, err: err, engines: cur.engines}
	} else if cur.err == nil && cur.hcp.Equal(h) {
		return false
	} else {
		m.log.Info("the HostedControlPlane the hypershift profile reads changed: every operator runs again", "object", id.String())
	}
	m.profileMu.Lock()
	m.profile = next
	m.profileMu.Unlock()
	return true
}

// hostedControlPlaneCause is the cause of the runs a change of the HostedControlPlane
// starts.
func (m *Manager) hostedControlPlaneCause() scheduler.Cause {
	id, _ := m.topo.HostedControlPlane()
	return scheduler.Cause{Cluster: m.topo.Home(), Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Name: id.Name}
}

// isHostedControlPlaneCause tells the causes of a change of a HostedControlPlane apart.
func isHostedControlPlaneCause(c scheduler.Cause) bool {
	gvr := hosted.HostedControlPlaneGVR()
	return c.Group == gvr.Group && c.Resource == gvr.Resource && c.Name != ""
}
