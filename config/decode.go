package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decode decodes a configuration strictly, as sigs.k8s.io/yaml's UnmarshalStrict does (YAML
// with duplicate keys, unknown fields and values of the wrong type are refused), and names the
// fields it refused: every unknown field with its path, as sigs.k8s.io/json finds them, and
// the fields known where it is; else the first value of the wrong type or form
// (locateDecodeError), since sigs.k8s.io/json names that without list indices or map keys.
func decode(data []byte) (TopologyConfig, error) {
	var cfg TopologyConfig
	if err := oneDocument(data); err != nil {
		return cfg, err
	}
	err := yaml.UnmarshalStrict(data, &cfg)
	if err == nil {
		return cfg, nil
	}
	js, jerr := yaml.YAMLToJSON(data)
	if jerr != nil {
		return cfg, err // not YAML: the decoder's own error, with its line, says more
	}
	var probe TopologyConfig
	if strict, fatal := sigsjson.UnmarshalStrict(js, &probe, sigsjson.DisallowUnknownFields); fatal == nil && len(strict) > 0 {
		errs := make(field.ErrorList, 0, len(strict))
		for _, e := range strict {
			errs = append(errs, strictError(e))
		}
		return cfg, errs.ToAggregate()
	}
	if fe := locateDecodeError(js); fe != nil {
		return cfg, fe
	}
	return cfg, err
}

// oneDocument refuses a stream of several YAML documents: the decoder would read the first
// and silently ignore the others. Empty documents (a leading "---", comments) do not count.
func oneDocument(data []byte) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []int // the 1-based numbers of the non-empty documents
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil || (string(bytes.TrimSpace(js)) != "null" && len(bytes.TrimSpace(js)) > 0) {
			docs = append(docs, n)
		}
	}
	if len(docs) > 1 {
		return fmt.Errorf("document %d: a configuration file holds one TopologyConfig document, and this one has %d (documents %v): put each configuration in a file of its own", docs[1], len(docs), docs)
	}
	return nil
}

// strictError turns a strict decoding error of sigs.k8s.io/json into a field error; an
// unknown field lists the fields known where it is.
func strictError(err error) *field.Error {
	fe, ok := err.(sigsjson.FieldError)
	if !ok {
		return field.InternalError(nil, err)
	}
	p := fe.FieldPath()
	parent, name := "", p
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		parent, name = p[:i], p[i+1:]
	}
	detail := err.Error()
	if strings.HasPrefix(detail, "unknown field") {
		detail = "unknown field"
		if t := typeAt(reflect.TypeFor[TopologyConfig](), parent); t != nil {
			names := slices.Sorted(maps.Keys(jsonFields(t)))
			detail += " (known here: " + strings.Join(names, ", ") + ")"
		}
	}
	return &field.Error{Type: field.ErrorTypeForbidden, Field: p, BadValue: name, Detail: detail}
}

// typeAt returns the struct type at a field path such as `operators[0].limits` below t, or
// nil when the path leads elsewhere.
func typeAt(t reflect.Type, path string) reflect.Type {
	deref := func(t reflect.Type) reflect.Type {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return t
	}
	t = deref(t)
	if path == "" {
		return t
	}
	for _, seg := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if t.Kind() != reflect.Struct {
			return nil
		}
		ft, ok := jsonFields(t)[name]
		if !ok {
			return nil
		}
		t = deref(ft)
		for ; rest != ""; _, rest, _ = strings.Cut(rest, "[") {
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
				return nil
			}
			t = deref(t.Elem())
		}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// locateDecodeError finds the field of a configuration (as JSON) that a strict decode
// refused: an unknown field, or a value of the wrong type or form: sigs.k8s.io/json names
// such a field without its list indices and map keys. It returns nil when it finds nothing.
func locateDecodeError(js []byte) *field.Error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil
	}
	return locate(reflect.TypeFor[TopologyConfig](), raw, nil)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// locate returns the first field below p whose value v does not decode into type t.
func locate(t reflect.Type, v any, p *field.Path) *field.Error {
	if v == nil {
		return nil
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		if err := json.Unmarshal(b, reflect.New(t).Interface()); err != nil {
			return field.Invalid(p, shortValue(v), err.Error())
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return locate(t.Elem(), v, p)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return field.Invalid(p, shortValue(v), "must be a mapping")
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok { // encoding/json matches names case-insensitively
				for name, t := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = t, true
						break
					}
				}
			}
			if !ok {
				names := make([]string, 0, len(fields))
				for name := range fields {
					names = append(names, name)
				}
				slices.Sort(names)
				return &field.Error{Type: field.ErrorTypeForbidden, Field: p.Child(k).String(), BadValue: k,
					Detail: "unknown field (known here: " + strings.Join(names, ", ") + ")"}
			}
			if err := locate(ft, m[k], p.Child(k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			return field.Invalid(p, shortValue(v), "must be a list")
		}
		for i, e := range a {
			if err := locate(t.Elem(), e, p.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return field.Invalid(p, shortValue(v), "must be a mapping")
		}
		for _, k := range sortedKeys(m) {
			if err := locate(t.Elem(), m[k], p.Key(k)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return field.Invalid(p, shortValue(v), "must be a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return field.Invalid(p, shortValue(v), "must be true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return field.Invalid(p, shortValue(v), "must be an integer")
		}
		if err := json.Unmarshal([]byte(n), reflect.New(t).Interface()); err != nil {
			return field.Invalid(p, n.String(), fmt.Sprintf("must be an integer that fits in %s", t.Kind()))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return field.Invalid(p, shortValue(v), "must be a number")
		}
	}
	return nil
}

// jsonFields returns the JSON names of a struct's fields and their types, embedded and
// inline structs flattened.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name == "" && ft.Kind() == reflect.Struct && (f.Anonymous || strings.Contains(opts, "inline")) {
			for k, v := range jsonFields(ft) {
				if _, shadowed := out[k]; !shadowed {
					out[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shortValue keeps mappings and lists out of messages.
func shortValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return "<mapping>"
	case []any:
		return "<list>"
	case json.Number:
		return t.String()
	}
	return v
}
