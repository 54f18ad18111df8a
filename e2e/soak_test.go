package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/topolayer/topolayer/namespaces"
)

// EnvSoak turns the soak test on: its value is how long to soak, e.g. TOPOLAYER_SOAK=10m.
const EnvSoak = "TOPOLAYER_SOAK"

// soakSample is one reading of the process's runtime metrics.
type soakSample struct {
	at         time.Duration
	goroutines float64
	heapInuse  float64
}

// median of the values f picks from samples.
func median(samples []soakSample, f func(soakSample) float64) float64 {
	vs := make([]float64, 0, len(samples))
	for _, s := range samples {
		vs = append(vs, f(s))
	}
	slices.Sort(vs)
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)/2]
}

// snapshot returns what topolayer wrote in namespace (objects labelled with an operator),
// keyed by resource/name, without the fields every write changes.
func snapshot(t *testing.T, dyn dynamic.Interface, namespace string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, gvr := range hcpResources {
		list, err := dyn.Resource(gvr).Namespace(namespace).List(t.Context(), metav1.ListOptions{LabelSelector: namespaces.LabelOperator})
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range list.Items {
			if o.GetLabels()["topolayer.dev/status"] != "" {
				continue // status objects record each run
			}
			obj := o.DeepCopy().Object
			unstructured.RemoveNestedField(obj, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(obj, "metadata", "managedFields")
			out[gvr.Resource+"/"+o.GetName()] = obj
		}
	}
	return out
}

// TestSoak runs `topolayer run` with both sample operators on the hosted environment for
// $TOPOLAYER_SOAK (e.g. 10m) while the inputs churn at random, bounded (two ConfigMaps,
// values from small sets, a change every 0.2–2s). After a warm-up (the first fifth, at most
// 2 minutes), the median number of goroutines and of heap bytes in use over the last
// minute stays within 10% of the median over the minute after the warm-up; once the churn
// stops and the runs settle, a fresh `topolayer run` changes nothing: the state is what a
// fresh run produces. Skipped unless TOPOLAYER_SOAK is set.
func TestSoak(t *testing.T) {
	v := os.Getenv(EnvSoak)
	if v == "" {
		t.Skipf("soak test: set %s to a duration (e.g. %s=10m, or `make soak`) to run it", EnvSoak, EnvSoak)
	}
	soak, err := time.ParseDuration(v)
	if err != nil || soak < 3*time.Minute {
		t.Fatalf("%s=%q: want a duration of at least 3m", EnvSoak, v)
	}
	ctx := t.Context()
	h := newHostedSample(t)
	args := append([]string{"--config", demoConfig(t, "hosted-demo.yaml", nil)}, hostedKubeconfigFlags(h.kubeDir)...)
	p := startRun(t, args...) // the fresh run after the churn runs with the same arguments
	eventually(t, "the first runs", func(context.Context) (bool, error) {
		return p.runs(t, sampleOp)["start"] >= 1 && p.runs(t, auditOp)["start"] >= 1, nil
	})

	// Churn: a bounded set of objects and values, changed at random.
	churn := func(rng *rand.Rand) error {
		name, key, value := "sample-settings", "replicas", strconv.Itoa(1+rng.IntN(5))
		if rng.IntN(2) == 0 {
			name, key, value = "audit-policy", "policy", []string{"Default", "WriteRequestBodies", "AllRequestBodies", "None"}[rng.IntN(4)]
		}
		if rng.IntN(10) == 0 { // now and then the object goes away and comes back
			err := h.guestCS.CoreV1().ConfigMaps("openshift-config").Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				err = nil
			}
			return err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openshift-config"}, Data: map[string]string{key: value}}
		_, err := h.guestCS.CoreV1().ConfigMaps("openshift-config").Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, err = h.guestCS.CoreV1().ConfigMaps("openshift-config").Create(ctx, cm, metav1.CreateOptions{})
		}
		return err
	}
	warmUp := min(soak/5, 2*time.Minute)
	start := time.Now()
	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 1))
	var samples []soakSample
	changes := 0
	nextSample := start
	for elapsed := time.Duration(0); elapsed < soak; elapsed = time.Since(start) {
		if err := churn(rng); err != nil {
			t.Fatalf("churn: %v", err)
		}
		changes++
		if time.Now().After(nextSample) {
			f := p.metrics(t)
			if f == nil {
				t.Fatal("the metrics endpoint is down")
			}
			s := soakSample{at: elapsed, goroutines: sum(f, "go_goroutines", nil), heapInuse: sum(f, "go_memstats_heap_inuse_bytes", nil)}
			if s.goroutines == 0 || s.heapInuse == 0 {
				t.Fatal("the metrics endpoint serves no go_goroutines or go_memstats_heap_inuse_bytes")
			}
			samples = append(samples, s)
			nextSample = nextSample.Add(5 * time.Second)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200*time.Millisecond + time.Duration(rng.IntN(1800))*time.Millisecond):
		}
	}
	var base, last []soakSample
	for _, s := range samples {
		switch {
		case s.at >= warmUp && s.at < warmUp+time.Minute:
			base = append(base, s)
		case s.at >= soak-time.Minute:
			last = append(last, s)
		}
	}
	f := p.metrics(t)
	t.Logf("soak: %s, %d input changes, %v runs of %s and %v of %s (failed: %v)", soak, changes,
		sum(f, "topolayer_operator_runs_total", map[string]string{"operator": sampleOp}), sampleOp,
		sum(f, "topolayer_operator_runs_total", map[string]string{"operator": auditOp}), auditOp,
		sum(f, "topolayer_operator_runs_total", map[string]string{"result": "Failed"}))
	for _, s := range samples {
		if s.at%time.Minute < 5*time.Second {
			t.Logf("  at %6s: %4.0f goroutines, %6.1f MiB heap in use", s.at.Round(time.Second), s.goroutines, s.heapInuse/(1<<20))
		}
	}
	for _, m := range []struct {
		name string
		f    func(soakSample) float64
	}{
		{"goroutines", func(s soakSample) float64 { return s.goroutines }},
		{"heap in use (bytes)", func(s soakSample) float64 { return s.heapInuse }},
	} {
		b, l := median(base, m.f), median(last, m.f)
		t.Logf("%s: median %.0f after the warm-up, %.0f in the last minute (%+.1f%%)", m.name, b, l, 100*(l-b)/b)
		if l > 1.1*b {
			t.Errorf("%s grew by more than 10%%: %.0f → %.0f", m.name, b, l)
		}
	}

	// The churn stops; once settled, a fresh topolayer run changes nothing. Settling may take
	// minutes: a churn that returns to earlier values is taken for an oscillation, and the
	// operators' runs are damped (up to 10m; see docs/reliability.md).
	stopped := time.Now()
	waitLong(t, "the scheduler idle after the churn", 11*time.Minute, schedulerIdle(t, p))
	t.Logf("settled %s after the churn stopped", time.Since(stopped).Round(time.Second))
	before := snapshot(t, h.mgmtDyn, h.hcpNS)
	p.stop(t)
	fresh := startRun(t, args...)
	eventually(t, "the fresh run's first runs", func(context.Context) (bool, error) {
		return fresh.runs(t, sampleOp)["start"] >= 1 && fresh.runs(t, auditOp)["start"] >= 1, nil
	})
	settle(t, fresh, sampleOp, auditOp)
	after := snapshot(t, h.mgmtDyn, h.hcpNS)
	if len(before) == 0 {
		t.Fatal("no objects of the operators found")
	}
	for k, o := range after {
		if !reflect.DeepEqual(before[k], o) {
			t.Errorf("%s differs after a fresh run:\nsoaked: %v\nfresh:  %v", k, before[k], o)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s is gone after a fresh run", k)
		}
	}
	t.Logf("final state: %d objects, equal to a fresh run's", len(after))
}
