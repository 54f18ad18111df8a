//go:build linux

package podrun

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Follower runs the pod template of a Deployment as a kubelet and the Deployment
// controller do together: the current template's container runs, and when the template
// changes (a new revision rolls out), the running process stops and the new one starts.
type Follower struct {
	mu      sync.Mutex
	starts  int
	lastErr error
	done    chan struct{}
}

// Follow reads the Deployment through get every period until ctx ends, running its
// template's container with o (o.Template is replaced by the Deployment's). A start that
// fails (a volume missing, say) is retried on the next read, as a kubelet retries.
func Follow(ctx context.Context, o Options, get func(context.Context) (*appsv1.Deployment, error), period time.Duration) *Follower {
	f := &Follower{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		var pod *Pod
		var running *appsv1.Deployment
		defer func() {
			if pod != nil {
				pod.Stop(10 * time.Second)
			}
		}()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			d, err := get(ctx)
			switch {
			case err != nil:
				f.record(0, err)
			case running == nil || !equality.Semantic.DeepEqual(running.Spec.Template, d.Spec.Template) || podExited(pod):
				if pod != nil {
					pod.Stop(10 * time.Second)
					pod = nil
				}
				o.Template = d.Spec.Template
				running = d
				started := 0
				if pod, err = Start(ctx, o); err != nil {
					running = nil // retried on the next read
				} else {
					started = 1
				}
				f.record(started, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return f
}

// podExited reports whether a started process has exited (and should be started again).
func podExited(p *Pod) bool {
	if p == nil {
		return false
	}
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

func (f *Follower) record(starts int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts += starts
	f.lastErr = err
}

// Starts returns how many times a process was started, and the last error reading the
// Deployment or starting its container (nil once one runs).
func (f *Follower) Starts() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts, f.lastErr
}

// Done is closed when the follower has stopped (its ctx ended) and its process with it.
func (f *Follower) Done() <-chan struct{} { return f.done }
