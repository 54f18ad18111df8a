package promtext

import "testing"

func TestSum(t *testing.T) {
	families, err := Parse([]byte(`# TYPE requests_total counter
requests_total{verb="GET",code="200"} 3
requests_total{verb="LIST",code="200"} 2
requests_total{verb="LIST",code="500"} 1
# TYPE open gauge
open{verb="WATCH"} 4
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"requests_total", nil, 6},
		{"requests_total", map[string]string{"verb": "LIST"}, 3},
		{"requests_total", map[string]string{"verb": "LIST", "code": "500"}, 1},
		{"requests_total", map[string]string{"verb": "DELETE"}, 0},
		{"open", map[string]string{"verb": "WATCH"}, 4},
		{"absent", nil, 0},
	} {
		if got := Sum(families, tc.name, tc.labels); got != tc.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}
