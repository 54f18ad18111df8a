package manager

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
)

// inputEnv reads an operator's environment from its gathered inputs (config.InputEnvVar):
// the variables set, and the names of those left unset because their object, their field
// or its value is absent or empty, as Kubernetes leaves a variable whose source is
// optional and absent. The files of the File and Directory forms are written under dir.
func inputEnv(vars []config.InputEnvVar, objs []*contract.InputObject, dir string) (env map[string]string, unset []string, err error) {
	for i, v := range vars {
		value, ok, err := inputValue(v.ValueFrom, objs)
		if err != nil {
			return nil, nil, fmt.Errorf("envFromInputs[%d] (%s): %w", i, v.Name, err)
		}
		if !ok {
			unset = append(unset, v.Name)
			continue
		}
		if v.As == config.InputEnvFile || v.As == config.InputEnvDirectory {
			if value, err = writeEnvFile(dir, v, value); err != nil {
				return nil, nil, fmt.Errorf("envFromInputs[%d] (%s): %w", i, v.Name, err)
			}
		}
		if env == nil {
			env = map[string]string{}
		}
		env[v.Name] = value
	}
	return env, unset, nil
}

// inputValue is the value of one field of one input, and whether it is set (not absent,
// not empty).
func inputValue(f config.InputField, objs []*contract.InputObject) (string, bool, error) {
	r := f.Input
	name := r.Name
	if nf := r.NameFrom; nf != nil {
		holder := findInput(objs, nf.Object())
		if holder == nil {
			return "", false, nil
		}
		n, ok, err := fieldValue(holder, nf.FieldPath)
		if err != nil || !ok {
			return "", false, err
		}
		name = n
	}
	r.Name, r.NameFrom = name, nil
	obj := findInput(objs, r)
	if obj == nil {
		return "", false, nil
	}
	return fieldValue(obj, f.FieldPath)
}

// findInput returns the input r names, or nil.
func findInput(objs []*contract.InputObject, r config.InputObjectRef) *contract.InputObject {
	for _, o := range objs {
		if o.Group == r.Group && o.Resource == r.Resource && o.Namespace == r.Namespace && o.Object.GetName() == r.Name {
			return o
		}
	}
	return nil
}

// fieldValue reads one field of an input (a field path: the contract's JSONPath without
// "$."): a string as it is, another scalar in JSON, a Secret's data decoded. Absent and
// empty are not set; an object or a list is an error.
func fieldValue(o *contract.InputObject, fieldPath string) (string, bool, error) {
	where := contract.Identity{Group: o.Group, Resource: o.Resource, Namespace: o.Namespace, Name: o.Object.GetName()}
	ev, err := contract.ParseJSONPath("$." + fieldPath)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", where, err)
	}
	v, err := ev(context.Background(), o.Object.Object)
	if err != nil {
		if strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "out of bounds") {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s: %s: %w", where, fieldPath, err)
	}
	var s string
	switch t := v.(type) {
	case nil:
		return "", false, nil
	case string:
		s = t
	case map[string]any, []any:
		return "", false, fmt.Errorf("%s: %s: an object or a list, not a value", where, fieldPath)
	default:
		data, err := json.Marshal(t)
		if err != nil {
			return "", false, fmt.Errorf("%s: %s: %w", where, fieldPath, err)
		}
		s = string(data)
	}
	if o.Group == "" && o.Resource == "secrets" && strings.HasPrefix(fieldPath, "data") {
		data, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", false, fmt.Errorf("%s: %s: not base64: %w", where, fieldPath, err)
		}
		s = string(data)
	}
	return s, s != "", nil
}

// writeEnvFile writes the value of a File or Directory variable under dir/env and returns
// the path the variable holds: the file, or the directory holding it.
func writeEnvFile(dir string, v config.InputEnvVar, value string) (string, error) {
	base, err := filepath.Abs(filepath.Join(dir, "env"))
	if err != nil {
		return "", err
	}
	file, held := filepath.Join(base, v.Name), filepath.Join(base, v.Name)
	if v.As == config.InputEnvDirectory {
		held = filepath.Join(base, v.Name+".d")
		file = filepath.Join(held, "value")
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(value), 0o600); err != nil {
		return "", err
	}
	return held, nil
}
