package scheduler_test

import (
	"context"
	"fmt"
	"time"

	"github.com/topolayer/topolayer/internal/mom/scheduler"
)

// An operator gets its initial run when added; then a burst of changes (two of them to the
// same object) becomes one run with the distinct causes.
func Example() {
	finished := make(chan struct{}, 10)
	s, err := scheduler.New(scheduler.Options{
		Debounce:           200 * time.Millisecond,
		Cooldown:           10 * time.Millisecond,
		MutationsPerMinute: 600,
		MaxConcurrent:      2,
		Observer: func(e scheduler.Event) {
			if e.Type == scheduler.RunFinished {
				finished <- struct{}{}
			}
		},
	}, func(_ context.Context, operator string, causes []scheduler.Cause) scheduler.Outcome {
		fmt.Printf("run %s: %d causes\n", operator, len(causes))
		for _, c := range causes {
			fmt.Printf("  %s %s/%s\n", c.Resource, c.Namespace, c.Name)
		}
		return scheduler.Outcome{Mutations: 1, Digest: "v1"}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Add("cluster-network-operator") // schedules the initial run

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- s.Start(ctx) }()
	<-finished // the initial run

	for _, name := range []string{"network-config", "tls", "network-config"} {
		s.Notify("cluster-network-operator", scheduler.Cause{Resource: "configmaps", Namespace: "openshift-network-operator", Name: name})
	}
	<-finished // the run for the burst

	cancel()
	fmt.Println("stopped:", <-stopped)
	fmt.Println("runs:", s.Status("cluster-network-operator").Runs)
	// Output:
	// run cluster-network-operator: 0 causes
	// run cluster-network-operator: 2 causes
	//   configmaps openshift-network-operator/network-config
	//   configmaps openshift-network-operator/tls
	// stopped: <nil>
	// runs: 2
}
