package guestidentity

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
)

// Rule names what the engine does so that an operand placed on the management cluster acts
// on the guest as its standalone service account: the pod template loses its management API
// token and gets the guest kubeconfig (Mount), the service account exists on the guest, and
// the RBAC of that service account lands on the guest.
const Rule = "hosted/guest-identity"

// The guest kubeconfig of a pod: a Secret volume mounted in every container and init
// container, and KUBECONFIG naming the file. The key is HyperShift's (podspec.KubeconfigKey).
const (
	// KubeconfigVolume names the volume in the pod template.
	KubeconfigVolume = "topolayer-guest-kubeconfig"
	// KubeconfigMountPath is where every container finds it.
	KubeconfigMountPath = "/var/run/secrets/topolayer.dev/guest-kubeconfig"
	// KubeconfigKey is the Secret's key holding the kubeconfig, and the file's name.
	KubeconfigKey = "kubeconfig"
	// KubeconfigEnv is the environment variable client-go's loading rules read.
	KubeconfigEnv = "KUBECONFIG"
	// secretPrefix begins the Secret's name. It holds a '.', which no
	// namespace and so no encoded name's namespace part holds, and hashed names lose.
	secretPrefix = "guest-kubeconfig."
	// secretMode is the Secret volume's file mode, 0640 as HyperShift mounts its
	// service-account kubeconfigs.
	secretMode = 0o640
)

// SecretName returns the name of the kubeconfig Secret of a guest service
// account in the HCP namespace. It cannot be an encoded name: the part before its first "--",
// if any, holds a '.', so it is no namespace, and hashed names hold no '.'. A name too long
// for a Secret ends in a hash of the namespace and name instead.
func SecretName(namespace, serviceAccount string) string {
	name := secretPrefix + namespace + "." + serviceAccount
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(namespace + "/" + serviceAccount))
	return secretPrefix + namespace + "." + hex.EncodeToString(sum[:16])
}

// Mount makes a pod template act as a guest service account: no management API
// token, its own renamed service account on the management cluster, and the guest kubeconfig
// Secret mounted in every container and init container with KUBECONFIG naming the file.
type Mount struct {
	// PodTemplatePath is the path of the pod template in the object (empty for a Pod).
	PodTemplatePath []string `json:"podTemplatePath"`
	// ServiceAccountName is the pod's service account on the management cluster.
	ServiceAccountName string `json:"serviceAccountName"`
	// SecretName is the kubeconfig Secret in the pod's namespace.
	SecretName string `json:"secretName"`
	// WithoutSecrets are Secrets (names in the pod's namespace) that are not written: the
	// pod's volumes of them, and their mounts, are removed.
	WithoutSecrets []string `json:"withoutSecrets,omitempty"`
}

var _ kio.Filter = Mount{}

// Filter implements kio.Filter.
func (f Mount) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		spec, err := yamlnode.LookupCreate(o, append(slices.Clone(f.PodTemplatePath), "spec")...)
		if err != nil {
			return nil, fmt.Errorf("%s: pod spec: %w", Rule, err)
		}
		return o, f.Spec(spec)
	})).Filter(objs)
}

// Spec makes one pod spec act as the guest service account.
func (f Mount) Spec(spec *yaml.RNode) error {
	if err := yamlnode.SetString(spec, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: "false"}, "automountServiceAccountToken"); err != nil {
		return err
	}
	if err := yamlnode.SetString(spec, yaml.NewStringRNode(f.ServiceAccountName).YNode(), "serviceAccountName"); err != nil {
		return err
	}
	if spec.Field("serviceAccount") != nil {
		if err := yamlnode.SetString(spec, yaml.NewStringRNode(f.ServiceAccountName).YNode(), "serviceAccount"); err != nil {
			return err
		}
	}
	if err := removeSecretVolumes(spec, f.WithoutSecrets); err != nil {
		return err
	}
	items, err := mountItems()
	if err != nil {
		return err
	}
	volume, mount, env := items[0].Copy(), items[1], items[2]
	if secretName, _ := yamlnode.Lookup(volume, "secret", "secretName"); utf8.ValidString(f.SecretName) {
		// What the parse of the name quoted as Go quotes it gives, for a valid UTF-8 name.
		secretName.YNode().Value = f.SecretName
	} else if volume, err = parseVolume(f.SecretName); err != nil {
		return err
	}
	if err := upsertNamed(spec, "volumes", volume); err != nil {
		return err
	}
	if err := eachContainer(spec, func(c *yaml.RNode) error {
		if err := upsertNamed(c, "volumeMounts", mount.Copy()); err != nil {
			return err
		}
		return upsertNamed(c, "env", env.Copy())
	}); err != nil {
		return err
	}
	return nil
}

// mountItems returns the volume (of an empty secret name), volume mount and env var
// that Mount adds, parsed once; callers copy them.
var mountItems = sync.OnceValues(func() ([3]*yaml.RNode, error) {
	var items [3]*yaml.RNode
	var err error
	if items[0], err = parseVolume(""); err != nil {
		return items, err
	}
	if items[1], err = yaml.Parse(fmt.Sprintf("name: %s\nmountPath: %s\nreadOnly: true\n", KubeconfigVolume, KubeconfigMountPath)); err != nil {
		return items, err
	}
	items[2], err = yaml.Parse(fmt.Sprintf("name: %s\nvalue: %s\n", KubeconfigEnv, KubeconfigMountPath+"/"+KubeconfigKey))
	return items, err
})

// parseVolume parses the guest kubeconfig volume of a secret.
func parseVolume(secretName string) (*yaml.RNode, error) {
	return yaml.Parse(fmt.Sprintf("name: %s\nsecret:\n  secretName: %s\n  defaultMode: %d\n", KubeconfigVolume, strconv.Quote(secretName), secretMode))
}

// upsertNamed replaces the element of the list field of n with item's name, or appends item.
func upsertNamed(n *yaml.RNode, field string, item *yaml.RNode) error {
	list, err := n.Pipe(yaml.LookupCreate(yaml.SequenceNode, field))
	if err != nil {
		return fmt.Errorf("%s: %s: %w", Rule, field, err)
	}
	name := yamlnode.FieldString(item, "name")
	elems, err := list.Elements()
	if err != nil {
		return fmt.Errorf("%s: %s: %w", Rule, field, err)
	}
	for i, e := range elems {
		if yamlnode.FieldString(e, "name") == name {
			list.YNode().Content[i] = item.YNode()
			return nil
		}
	}
	return list.PipeE(yaml.Append(item.YNode()))
}

// removeSecretVolumes removes from a pod spec the volumes of the Secrets named, and every
// container's mounts of them.
func removeSecretVolumes(spec *yaml.RNode, secrets []string) error {
	if len(secrets) == 0 {
		return nil
	}
	removed := map[string]bool{}
	if err := removeElements(spec, "volumes", func(v *yaml.RNode) bool {
		name, _ := yamlnode.StringAt(v, "secret", "secretName")
		if slices.Contains(secrets, name) {
			removed[yamlnode.FieldString(v, "name")] = true
			return true
		}
		return false
	}); err != nil || len(removed) == 0 {
		return err
	}
	return eachContainer(spec, func(c *yaml.RNode) error {
		return removeElements(c, "volumeMounts", func(m *yaml.RNode) bool { return removed[yamlnode.FieldString(m, "name")] })
	})
}

// removeElements removes the elements of the sequence n.field for which drop is true; a
// sequence left empty is removed.
func removeElements(n *yaml.RNode, field string, drop func(*yaml.RNode) bool) error {
	list := n.Field(field)
	if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	elems, err := list.Value.Elements()
	if err != nil {
		return fmt.Errorf("%s: %s: %w", Rule, field, err)
	}
	kept := list.Value.YNode().Content[:0]
	for i, e := range elems {
		if !drop(e) {
			kept = append(kept, list.Value.YNode().Content[i])
		}
	}
	list.Value.YNode().Content = kept
	if len(kept) == 0 {
		return n.PipeE(yaml.Clear(field))
	}
	return nil
}

// ownsAccount reports whether the operator owns service account k as

// eachContainer calls edit with every init container and container of a pod spec.
func eachContainer(spec *yaml.RNode, edit func(c *yaml.RNode) error) error {
	for _, list := range []string{"initContainers", "containers"} {
		containers := spec.Field(list)
		if containers == nil {
			continue
		}
		cs, err := containers.Value.Elements()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", Rule, list, err)
		}
		for _, c := range cs {
			if err := edit(c); err != nil {
				return err
			}
		}
	}
	return nil
}
