package contract_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
)

// BenchmarkParseObject parses the bodies of 1,000 synthetic mutations into objects; "floor"
// only parses them with kyaml, as hack/bench's parse floor does. Their ratio is what the
// reader's parse costs above the floor.
func BenchmarkParseObject(b *testing.B) {
	out := synth.Output(1000)
	var bodies [][]byte
	for _, m := range out.Mutations {
		if m.Metadata.Action.CarriesObject() {
			bodies = append(bodies, m.Body)
		}
	}
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			for _, body := range bodies {
				if _, err := yaml.Parse(string(body)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("object", func(b *testing.B) {
		for b.Loop() {
			for _, body := range bodies {
				if _, err := contract.ParseObject(body); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
