package docs

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/config"
)

// configFields lists the field paths of t as the YAML file spells them, "routing.rules[].match.group",
// descending into topolayer's own types only, but not into the documents of the MOM contract
// (package contract), which the configuration embeds whole and the contract's spec describes.
func configFields(prefix string, t reflect.Type) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			prefix += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || !strings.HasPrefix(t.PkgPath(), "github.com/topolayer/topolayer") || t.PkgPath() == "github.com/topolayer/topolayer/contract" {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" { // inlined
			out = append(out, configFields(prefix, f.Type)...)
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		out = append(out, path)
		out = append(out, configFields(path, f.Type)...)
	}
	return out
}

// TestConfigurationReference: docs/configuration.md names every field of TopologyConfig, in
// backquotes, by its full path.
func TestConfigurationReference(t *testing.T) {
	doc, err := os.ReadFile("configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range configFields("", reflect.TypeFor[config.TopologyConfig]()) {
		if !strings.Contains(string(doc), "`"+path+"`") {
			t.Errorf("docs/configuration.md does not describe `%s`", path)
		}
	}
}
