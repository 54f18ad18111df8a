package fixtureparity

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/routing"
)

// volumesPath is where a Deployment's volumes are, as Flatten prints the path.
const volumesPath = "spec.template.spec.volumes"

// A pod's volume names are its own: only its mounts use them. Two renderers of one operand
// name the same volume differently (CAO's v4-0-config-system-session is HyperShift's
// session-secret), and compared by name each would be missing on one side and extra on the
// other. pairVolumes pairs them by what they are instead, first to last:
//
//  1. the same name on both sides;
//  2. the same object mounted: the fixture's ConfigMap or Secret and the placed one are a pair
//     (or the same name);
//  3. the same file read or written in them: a flag of a container of the same name
//     ("--audit-log-path=...") or a field of a paired configuration document
//     ("oauthConfig.masterCA") that names a file on both sides, in a volume each side mounts.
//
// A volume two candidates claim, on either side, stays unpaired.

// volumeSide is what pairVolumes reads of one side's Deployment.
type volumeSide struct {
	// objects maps each volume to the ConfigMap or Secret it mounts ("" for none).
	objects map[string]string
	// mounts are the containers' mounts, by container.
	mounts map[string][]mount
	// flags maps "container --flag" to the absolute path it names.
	flags map[string]string
}

type mount struct{ volume, path string }

// readVolumeSide reads the volumes, mounts and path flags of a Deployment.
func readVolumeSide(obj map[string]any) volumeSide {
	s := volumeSide{objects: map[string]string{}, mounts: map[string][]mount{}, flags: map[string]string{}}
	spec := mapAt(obj, "spec", "template", "spec")
	for _, v := range listAt(spec, "volumes") {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if name == "" {
			continue
		}
		object, _ := mapAt(vm, "secret")["secretName"].(string)
		if cm, ok := mapAt(vm, "configMap")["name"].(string); ok {
			object = cm
		}
		s.objects[name] = object
	}
	for _, c := range listAt(spec, "containers") {
		cm, _ := c.(map[string]any)
		container, _ := cm["name"].(string)
		for _, m := range listAt(cm, "volumeMounts") {
			mm, _ := m.(map[string]any)
			volume, _ := mm["name"].(string)
			at, _ := mm["mountPath"].(string)
			if _, sub := mm["subPath"]; !sub && volume != "" && path.IsAbs(at) {
				s.mounts[container] = append(s.mounts[container], mount{volume, path.Clean(at)})
			}
		}
		var words []string
		for _, field := range []string{"command", "args"} {
			for _, w := range listAt(cm, field) {
				if ws, ok := w.(string); ok {
					words = append(words, strings.Fields(ws)...)
				}
			}
		}
		for _, w := range words {
			flag, value, ok := strings.Cut(w, "=")
			value = strings.Trim(value, `"'`)
			if ok && strings.HasPrefix(flag, "--") && path.IsAbs(value) {
				s.flags[container+" "+flag] = path.Clean(value)
			}
		}
	}
	return s
}

// holding returns the volume of the deepest mount, of any container or of the one named,
// whose directory holds file.
func (s volumeSide) holding(container, file string) string {
	var volume, at string
	for c, ms := range s.mounts {
		if container != "" && c != container {
			continue
		}
		for _, m := range ms {
			if strings.HasPrefix(file, strings.TrimSuffix(m.path, "/")+"/") && len(m.path) > len(at) {
				volume, at = m.volume, m.path
			}
		}
	}
	return volume
}

// pairVolumes returns the fixture volume name of each placed volume that stands for a
// fixture volume of another name. objectNames maps fixture object names to the placed
// objects' names (pairedNames); documents holds the paths each paired configuration
// document names, fixture side first, by the document's pair and field.
func pairVolumes(fixture, placed volumeSide, objectNames map[string]string, documents [2]map[string]string) map[string]string {
	out := map[string]string{}
	taken := map[string]bool{} // placed volumes paired
	done := map[string]bool{}  // fixture volumes paired
	for v := range fixture.objects {
		if _, ok := placed.objects[v]; ok {
			taken[v], done[v] = true, true
		}
	}
	// candidates collects one way of pairing; a volume claimed twice on either side drops out.
	pairUp := func(candidates map[string]string) {
		claims := map[string]int{}
		for _, p := range candidates {
			claims[p]++
		}
		for _, f := range slices.Sorted(maps.Keys(candidates)) {
			p := candidates[f]
			if claims[p] == 1 && !taken[p] && !done[f] {
				out[p] = f
				taken[p], done[f] = true, true
			}
		}
	}
	byObject := map[string]string{}
	for f, object := range fixture.objects {
		if done[f] || object == "" {
			continue
		}
		want := object
		if n, ok := objectNames[object]; ok {
			want = n
		}
		var match []string
		for p, po := range placed.objects {
			if !taken[p] && po == want {
				match = append(match, p)
			}
		}
		if len(match) == 1 {
			byObject[f] = match[0]
		}
	}
	pairUp(byObject)
	byFile := map[string]string{}
	conflict := map[string]bool{}
	claim := func(f, p string) {
		if f == "" || p == "" || done[f] || taken[p] {
			return
		}
		if prev, ok := byFile[f]; ok && prev != p {
			conflict[f] = true
		}
		byFile[f] = p
	}
	for key, file := range fixture.flags {
		if other, ok := placed.flags[key]; ok {
			container, _, _ := strings.Cut(key, " ")
			claim(fixture.holding(container, file), placed.holding(container, other))
		}
	}
	for key, file := range documents[0] {
		if other, ok := documents[1][key]; ok {
			claim(fixture.holding("", file), placed.holding("", other))
		}
	}
	for f := range conflict {
		delete(byFile, f)
	}
	pairUp(byFile)
	return out
}

// documentPaths returns the absolute paths the paired configuration documents name, by
// "pair field", on each side: the fixture's documents and the placed objects'.
func documentPaths(fixtures []Fixture, placed []parity.Object, pairs []Pair) [2]map[string]string {
	out := [2]map[string]string{{}, {}}
	for _, p := range pairs {
		for _, k := range p.Keys {
			if !k.Document {
				continue
			}
			for _, f := range fixtures {
				if f.Kind() == p.Kind && f.Name() == p.FixtureName {
					collectPaths(out[0], p.Name, mapAt(f.Object, "data")[k.Fixture])
				}
			}
			if o := placedObject(placed, p); o != nil {
				collectPaths(out[1], p.Name, mapAt(o.Body, "data")[k.Placed])
			}
		}
	}
	return out
}

// collectPaths adds the string leaves of a document that are absolute paths to out.
func collectPaths(out map[string]string, pair string, value any) {
	for field, v := range Flatten(parseDocument(value)) {
		if s, ok := v.(string); ok && path.IsAbs(s) {
			out[pair+" "+field] = path.Clean(s)
		}
	}
}

// placedObject returns the pair's placed object on the management cluster, nil for none.
func placedObject(placed []parity.Object, p Pair) *parity.Object {
	var obj *parity.Object
	for i := range placed {
		o := &placed[i]
		s := o.Source
		if o.Cluster == routing.ClusterManagement && !o.Deleted && s.Group == p.Placed.Group && s.Resource == p.Placed.Resource &&
			s.Namespace == p.Placed.Namespace && s.Name == p.Placed.Name {
			obj = o
		}
	}
	return obj
}

// renameVolumes moves the placed leaves of each paired volume under the fixture volume's
// name; the volume's own name field keeps its value, so that it compares as different.
func renameVolumes(leaves map[string]any, fixtureName map[string]string) map[string]any {
	if len(fixtureName) == 0 {
		return leaves
	}
	out := make(map[string]any, len(leaves))
	for p, v := range leaves {
		for placedName, f := range fixtureName {
			prefix := volumesPath + "[name=" + placedName + "]"
			if rest, ok := strings.CutPrefix(p, prefix); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				p = volumesPath + "[name=" + f + "]" + rest
				break
			}
		}
		out[p] = v
	}
	return out
}

func mapAt(v any, keys ...string) map[string]any {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func listAt(m map[string]any, key string) []any {
	l, _ := m[key].([]any)
	return l
}
