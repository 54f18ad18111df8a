package podsecurity

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/yamlnode"
)

// evaluator is the Pod Security admission's own evaluator, with its default checks.
var evaluator = func() psapolicy.Evaluator {
	e, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		panic(fmt.Sprintf("pod security evaluator: %v", err))
	}
	return e
}()

// Reason evaluates the pod spec of obj at site (and its template's metadata) against Pod
// Security "restricted" (latest), and returns why it is forbidden, or "".
func Reason(obj map[string]any, site podspec.Site) string {
	var m map[string]any
	if site.HasTemplate {
		m, _ = site.Template.Get(obj).(map[string]any)
	} else if spec, ok := site.Spec.Get(obj).(map[string]any); ok {
		m = map[string]any{"spec": spec}
	}
	where := site.Spec.String()
	var tmpl corev1.PodTemplateSpec
	if m != nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(withoutUncheckedFields(m), &tmpl); err != nil {
			return fmt.Sprintf("%s: decode: %v", where, err)
		}
	}
	var problems []string
	results := evaluator.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &tmpl.ObjectMeta, &tmpl.Spec)
	if agg := psapolicy.AggregateCheckResults(results); !agg.Allowed {
		problems = append(problems, fmt.Sprintf("violates Pod Security %q: %s", psaapi.LevelRestricted, agg.ForbiddenDetail()))
	}
	if tmpl.Spec.NodeName != "" {
		problems = append(problems, fmt.Sprintf("%s.nodeName: %q binds the pod to a node of the shared management cluster", where, tmpl.Spec.NodeName))
	}
	if c := tmpl.Spec.RuntimeClassName; c != nil {
		problems = append(problems, fmt.Sprintf("%s.runtimeClassName: %q picks a runtime handler of the shared management cluster's nodes", where, *c))
	}
	for _, k := range slices.Sorted(maps.Keys(tmpl.Annotations)) {
		if IsRuntimeAnnotation(k) {
			problems = append(problems, fmt.Sprintf("metadata.annotations[%s]: asks the shared management cluster's container runtime for what its handler allows", k))
		}
	}
	if len(problems) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s", where, strings.Join(problems, "; "))
}

// uncheckedContainerFields are the fields of a container no Pod Security check reads (nor the
// nodeName check): the conversion to a pod template, the check's main cost, skips them.
var uncheckedContainerFields = []string{"args", "command", "env", "envFrom", "image", "resources", "volumeMounts"}

// withoutUncheckedFields returns a pod template (an unstructured value) whose containers lack
// uncheckedContainerFields: a shallow copy where it has them, the template itself otherwise.
func withoutUncheckedFields(tmpl map[string]any) map[string]any {
	spec, _ := tmpl["spec"].(map[string]any)
	var outSpec map[string]any
	for _, list := range containerLists {
		l, _ := spec[list].([]any)
		var outList []any
		for i, c := range l {
			cm, _ := c.(map[string]any)
			if !slices.ContainsFunc(uncheckedContainerFields, func(f string) bool { _, ok := cm[f]; return ok }) {
				continue
			}
			if outList == nil {
				outList = slices.Clone(l)
			}
			trimmed := maps.Clone(cm)
			for _, f := range uncheckedContainerFields {
				delete(trimmed, f)
			}
			outList[i] = trimmed
		}
		if outList != nil {
			if outSpec == nil {
				outSpec = maps.Clone(spec)
			}
			outSpec[list] = outList
		}
	}
	if outSpec == nil {
		return tmpl
	}
	out := maps.Clone(tmpl)
	out["spec"] = outSpec
	return out
}

// safeSysctls are the sysctls Pod Security "baseline" (and so "restricted") allows.
var safeSysctls = []string{
	"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
}

// allowedSELinuxTypes are the SELinux types Pod Security allows a pod to ask for.
var allowedSELinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

// containerLists are the pod spec's lists of containers.
var containerLists = []string{"containers", "initContainers", "ephemeralContainers"}

// Filter changes the pod template at PodTemplatePath (empty: the object is a Pod)
// with Edit, given the template's metadata (may be nil) and spec.
type Filter struct {
	PodTemplatePath []string
	Edit            func(meta, spec *yaml.RNode) error
}

// Filter implements kio.Filter.
func (f Filter) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		spec, err := yamlnode.Lookup(o, append(slices.Clone(f.PodTemplatePath), "spec")...)
		if err != nil || spec == nil {
			return o, err
		}
		meta, err := yamlnode.Lookup(o, append(slices.Clone(f.PodTemplatePath), "metadata")...)
		if err != nil {
			return nil, err
		}
		return o, f.Edit(meta, spec)
	})).Filter(objs)
}

// containersOf returns every container, init container and ephemeral container of a pod spec.
func containersOf(spec *yaml.RNode) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, list := range containerLists {
		l, err := yamlnode.Lookup(spec, list)
		if err != nil {
			return nil, err
		}
		if l == nil {
			continue
		}
		cs, err := l.Elements()
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// stripHostNamespaces drops hostPID, hostNetwork and hostIPC.
func stripHostNamespaces(_, spec *yaml.RNode) error {
	for _, f := range []string{"hostPID", "hostNetwork", "hostIPC"} {
		if err := yamlnode.ClearIf(spec, f, nil); err != nil {
			return err
		}
	}
	return nil
}

// stripHostPorts drops the hostPort of every container port.
func stripHostPorts(_, spec *yaml.RNode) error {
	cs, err := containersOf(spec)
	if err != nil {
		return err
	}
	for _, c := range cs {
		ports, err := yamlnode.Lookup(c, "ports")
		if err != nil || ports == nil {
			continue
		}
		ps, err := ports.Elements()
		if err != nil {
			return err
		}
		for _, p := range ps {
			if err := yamlnode.ClearIf(p, "hostPort", nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// stripNodeName drops nodeName: the scheduler places control-plane pods.
func stripNodeName(_, spec *yaml.RNode) error { return yamlnode.ClearIf(spec, "nodeName", nil) }

// IsRuntimeAnnotation says whether a pod annotation is addressed to the node's container
// runtime (CRI-O reads io.kubernetes.cri-o.* and the *.crio.io/ and *.cri-o.io/ keys its
// handlers allow: devices, user namespaces, shared memory, CPU and IRQ balancing, CPU quotas
// and power states). A control-plane pod on the shared management cluster asks its nodes for
// none of them: HyperShift's components carry none.
func IsRuntimeAnnotation(key string) bool {
	prefix, _, named := strings.Cut(key, "/")
	return strings.HasPrefix(key, "io.kubernetes.cri-o.") ||
		named && (strings.HasSuffix(prefix, ".crio.io") || prefix == "crio.io" || strings.HasSuffix(prefix, ".cri-o.io") || prefix == "cri-o.io")
}

// stripRuntimeRequests drops what a pod asks of the node's container runtime: its
// runtimeClassName (the handler the management cluster's nodes run it with: HyperShift's
// components use the default) and the annotations the runtime reads (IsRuntimeAnnotation).
func stripRuntimeRequests(meta, spec *yaml.RNode) error {
	if err := yamlnode.ClearIf(spec, "runtimeClassName", nil); err != nil {
		return err
	}
	return dropAnnotations(meta, func(k, _ string) bool { return IsRuntimeAnnotation(k) })
}

// dropAnnotations removes from the pod template metadata meta (nil: none) the annotations
// drop says go, given their key and value.
func dropAnnotations(meta *yaml.RNode, drop func(key, value string) bool) error {
	if meta == nil {
		return nil
	}
	annotations, err := yamlnode.Lookup(meta, "annotations")
	if err != nil || annotations == nil {
		return err
	}
	fields, err := annotations.Fields()
	if err != nil {
		return err
	}
	for _, k := range fields {
		if drop(k, yamlnode.FieldString(annotations, k)) {
			if _, err := annotations.Pipe(yaml.Clear(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// stripPrivilege drops what gives a container more than an unprivileged, non-root process:
// privileged, allowPrivilegeEscalation true, added capabilities (but NET_BIND_SERVICE), a
// procMount other than Default, runAsUser 0, runAsNonRoot false and Windows hostProcess.
func stripPrivilege(_, spec *yaml.RNode) error {
	sc := func(n *yaml.RNode, field string) error {
		for _, f := range []struct {
			name string
			keep func(string) bool
		}{{"runAsUser", yamlnode.Not("0")}, {"runAsNonRoot", yamlnode.Not("false")}} {
			if err := yamlnode.ClearIf(n, f.name, f.keep, field); err != nil {
				return err
			}
		}
		return yamlnode.ClearIf(n, "hostProcess", nil, field, "windowsOptions")
	}
	if err := sc(spec, "securityContext"); err != nil {
		return err
	}
	cs, err := containersOf(spec)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := sc(c, "securityContext"); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			keep func(string) bool
		}{{"privileged", yamlnode.Not("true")}, {"allowPrivilegeEscalation", yamlnode.Not("true")}, {"procMount", yamlnode.Not("Unmasked")}} {
			if err := yamlnode.ClearIf(c, f.name, f.keep, "securityContext"); err != nil {
				return err
			}
		}
		add, err := yamlnode.Lookup(c, "securityContext", "capabilities", "add")
		if err != nil {
			return err
		}
		if add != nil {
			if err := yamlnode.KeepElements(add, func(e *yaml.RNode) bool { return strings.TrimPrefix(e.YNode().Value, "CAP_") == "NET_BIND_SERVICE" }); err != nil {
				return err
			}
			if len(add.YNode().Content) == 0 {
				if err := yamlnode.ClearIf(c, "add", nil, "securityContext", "capabilities"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// stripSecurityOverrides drops the security overrides Pod Security forbids: unsafe sysctls,
// SELinux users, roles and types, Unconfined seccomp and AppArmor profiles (fields and
// annotations), and OpenShift's required-scc annotation, which asks a management cluster that
// is OpenShift for a privileged SCC.
func stripSecurityOverrides(meta, spec *yaml.RNode) error {
	sc := func(n *yaml.RNode) error {
		for _, f := range []struct {
			name string
			keep func(string) bool
			path []string
		}{
			{"user", nil, []string{"securityContext", "seLinuxOptions"}},
			{"role", nil, []string{"securityContext", "seLinuxOptions"}},
			{"type", yamlnode.Not(allowedSELinuxTypes...), []string{"securityContext", "seLinuxOptions"}},
			{"seccompProfile", func(string) bool { return seccompAllowed(n, "securityContext", "seccompProfile") }, []string{"securityContext"}},
			{"appArmorProfile", func(string) bool { return !isUnconfined(n, "securityContext", "appArmorProfile") }, []string{"securityContext"}},
		} {
			if err := yamlnode.ClearIf(n, f.name, f.keep, f.path...); err != nil {
				return err
			}
		}
		return nil
	}
	if err := sc(spec); err != nil {
		return err
	}
	cs, err := containersOf(spec)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := sc(c); err != nil {
			return err
		}
	}
	if sysctls, err := yamlnode.Lookup(spec, "securityContext", "sysctls"); err != nil {
		return err
	} else if sysctls != nil {
		if err := yamlnode.KeepElements(sysctls, func(e *yaml.RNode) bool { return slices.Contains(safeSysctls, yamlnode.FieldString(e, "name")) }); err != nil {
			return err
		}
	}
	return dropAnnotations(meta, func(k, v string) bool {
		switch {
		case k == "openshift.io/required-scc":
			return !slices.Contains([]string{"restricted", "restricted-v2"}, v)
		case strings.HasPrefix(k, "container.apparmor.security.beta.kubernetes.io/"):
			return v != "runtime/default" && !strings.HasPrefix(v, "localhost/")
		case k == "seccomp.security.alpha.kubernetes.io/pod" || strings.HasPrefix(k, "container.seccomp.security.alpha.kubernetes.io/"):
			return v != "runtime/default" && v != "docker/default" && !strings.HasPrefix(v, "localhost/")
		}
		return false
	})
}

func profileType(n *yaml.RNode, path ...string) string {
	t, _ := yamlnode.StringAt(n, append(path, "type")...)
	return t
}

func seccompAllowed(n *yaml.RNode, path ...string) bool {
	t := profileType(n, path...)
	return t == "" || t == string(corev1.SeccompProfileTypeRuntimeDefault) || t == string(corev1.SeccompProfileTypeLocalhost)
}

func isUnconfined(n *yaml.RNode, path ...string) bool {
	return profileType(n, path...) == string(corev1.AppArmorProfileTypeUnconfined)
}

// addRestricted adds what Pod Security "restricted" requires and the operator left unset: the
// pod runs as non-root with the runtime's default seccomp profile, and every container drops
// every capability and cannot escalate its privileges. It sets no field the operator set.
func addRestricted(_, spec *yaml.RNode) error {
	if err := yamlnode.SetIfAbsent(spec, "runAsNonRoot", yamlnode.BoolNode(true), "securityContext"); err != nil {
		return err
	}
	if err := yamlnode.SetIfAbsent(spec, "seccompProfile", yaml.NewMapRNode(&map[string]string{"type": string(corev1.SeccompProfileTypeRuntimeDefault)}), "securityContext"); err != nil {
		return err
	}
	cs, err := containersOf(spec)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := yamlnode.SetIfAbsent(c, "allowPrivilegeEscalation", yamlnode.BoolNode(false), "securityContext"); err != nil {
			return err
		}
		drop, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "securityContext", "capabilities", "drop"))
		if err != nil {
			return err
		}
		elems, err := drop.Elements()
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(elems, func(e *yaml.RNode) bool { return e.YNode().Value == "ALL" }) {
			if err := drop.PipeE(yaml.Append(yaml.NewStringRNode("ALL").YNode())); err != nil {
				return err
			}
		}
	}
	return nil
}

// Edit is one edit of a pod spec that brings it to Pod Security "restricted".
type Edit struct {
	// Name names the edit (a profile's transform is named after it).
	Name string
	// Strips says the edit removes what the operator wrote (Transform.Strips).
	Strips bool
	// Edit changes the pod template's metadata and spec.
	Edit func(meta, spec *yaml.RNode) error
}

// Edits returns the edits that bring a pod spec to Pod Security "restricted", in
// order: drop-host-namespaces, drop-host-ports, drop-node-name, drop-privilege,
// drop-unsafe-security-overrides and drop-runtime-requests strip what only a standalone node
// allows;
// restricted-security-context adds what restricted needs.
func Edits() []Edit {
	return []Edit{
		{"drop-host-namespaces", true, stripHostNamespaces},
		{"drop-host-ports", true, stripHostPorts},
		{"drop-node-name", true, stripNodeName},
		{"drop-privilege", true, stripPrivilege},
		{"drop-unsafe-security-overrides", true, stripSecurityOverrides},
		{"drop-runtime-requests", true, stripRuntimeRequests},
		{"restricted-security-context", false, addRestricted},
	}
}

// HostPathToEmptyDir gives every hostPath volume of a pod template an emptyDir in place of
// the host's directory: the volume keeps its name, so every container's mounts of it still
// resolve, and a directory the operand writes (an audit log, a cache) stays writable beside a
// read-only root filesystem, on the pod's own scratch space rather than the node's.
type HostPathToEmptyDir struct {
	// PodTemplatePath is the path of the pod template in the object.
	PodTemplatePath []string `json:"podTemplatePath"`
}

// Filter implements kio.Filter.
func (f HostPathToEmptyDir) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return Filter{PodTemplatePath: f.PodTemplatePath, Edit: HostPathToEmptyDirEdit}.Filter(objs)
}

// HostPathToEmptyDirEdit is HostPathToEmptyDir as an Edit, for Found.
func HostPathToEmptyDirEdit(_, spec *yaml.RNode) error {
	volumes, err := yamlnode.Lookup(spec, "volumes")
	if err != nil || volumes == nil {
		return err
	}
	elems, err := volumes.Elements()
	if err != nil {
		return err
	}
	for _, v := range elems {
		if v.Field("hostPath") == nil {
			continue
		}
		if err := v.PipeE(yaml.Clear("hostPath")); err != nil {
			return err
		}
		if err := v.PipeE(yaml.SetField("emptyDir", yaml.NewMapRNode(nil))); err != nil {
			return err
		}
	}
	return nil
}

// Found runs Edit on every pod spec package podspec finds in an object (its template's
// metadata, nil when it has none): the strip of the kinds a profile does not name, custom
// resources among them.
type Found struct {
	Edit func(meta, spec *yaml.RNode) error
}

// Filter implements kio.Filter.
func (f Found) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		sites, err := podspec.FindNode(GroupKindOf(o), o.YNode())
		if err != nil {
			return nil, err
		}
		for _, s := range sites {
			spec := s.Spec.Node(o.YNode())
			if spec == nil || spec.Kind != yaml.MappingNode {
				continue
			}
			var meta *yaml.RNode
			if m, ok := s.Metadata(); ok {
				if n := m.Node(o.YNode()); n != nil && n.Kind == yaml.MappingNode {
					meta = yaml.NewRNode(n)
				}
			}
			if err := f.Edit(meta, yaml.NewRNode(spec)); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Spec, err)
			}
		}
		return o, nil
	})).Filter(objs)
}

// GroupKindOf returns the group and kind of an object as its apiVersion and kind say.
func GroupKindOf(o *yaml.RNode) schema.GroupKind {
	return schema.FromAPIVersionAndKind(o.GetApiVersion(), o.GetKind()).GroupKind()
}

var (
	_ kio.Filter = Found{}
	_ kio.Filter = Filter{}
	_ kio.Filter = HostPathToEmptyDir{}
)
