// Package promtext reads the Prometheus text exposition a /metrics endpoint serves, and adds
// up its samples: what the e2e tests and the benchmarks read of topolayer's and the API
// server's metrics.
package promtext

import (
	"bytes"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse reads the metric families of a text exposition, by name.
func Parse(body []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(body))
}

// Sum adds up the values of the samples of the counter or gauge name whose labels include
// labels (every sample for no labels); 0 when families has no such metric.
func Sum(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var n float64
	for _, m := range families[name].GetMetric() {
		matched := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				matched++
			}
		}
		if matched == len(labels) {
			n += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return n
}
