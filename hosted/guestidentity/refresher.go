package guestidentity

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Refresher rewrites tracked kubeconfig Secrets with new tokens when they are due
// (Issued.RefreshAt), independently of the operators: nothing runs again but the token
// request and the write. Failures are retried with backoff until the next success. Its
// timing is the delaying workqueue's, on its clock.
type Refresher struct {
	clock   clock.WithTicker
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	tracked map[string]tracked
	// Refreshed, when set, is called after each refresh, with its result.
	Refreshed func(Issued, error)
}

type tracked struct {
	issued Issued
	writer *Writer
}

// NewRefresher returns a Refresher on clk (nil: the real clock).
func NewRefresher(clk clock.WithTicker) *Refresher {
	if clk == nil {
		clk = clock.RealClock{}
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 2*time.Minute),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "guest-kubeconfigs", Clock: clk},
	)
	return &Refresher{clock: clk, queue: q, tracked: map[string]tracked{}}
}

// Track schedules the refresh of each Secret w wrote or found, replacing what was tracked
// under its name (w refreshes it from then on).
func (r *Refresher) Track(w *Writer, issued []Issued) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, is := range issued {
		key := is.Identity.Secret
		if old, ok := r.tracked[key]; ok && old.issued.RefreshAt.Equal(is.RefreshAt) {
			// Already scheduled for that time; the refresh uses the latest writer (a new
			// guest connection's, when the guest's kubeconfig rotated).
			r.tracked[key] = tracked{issued: old.issued, writer: w}
			continue
		}
		r.tracked[key] = tracked{issued: is, writer: w}
		r.queue.AddAfter(key, is.RefreshAt.Sub(r.clock.Now()))
	}
}

// Due returns when each tracked Secret is next due, by name.
func (r *Refresher) Due() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.tracked))
	for k, t := range r.tracked {
		out[k] = t.issued.RefreshAt
	}
	return out
}

// Start refreshes the Secrets as they fall due until ctx is done.
func (r *Refresher) Start(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx).WithName("guest-identity")
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for {
		key, shutdown := r.queue.Get()
		if shutdown {
			return nil
		}
		r.refresh(ctx, log, key)
	}
}

// refresh writes one due Secret and schedules its next refresh.
func (r *Refresher) refresh(ctx context.Context, log logr.Logger, key string) {
	defer r.queue.Done(key)
	r.mu.Lock()
	t, ok := r.tracked[key]
	r.mu.Unlock()
	if !ok {
		r.queue.Forget(key)
		return
	}
	if now := r.clock.Now(); now.Before(t.issued.RefreshAt) {
		// Tracked again meanwhile with a later time: the queue kept the earlier one.
		r.queue.AddAfter(key, t.issued.RefreshAt.Sub(now))
		return
	}
	is, err := t.writer.Refresh(ctx, t.issued.Identity)
	if r.Refreshed != nil {
		r.Refreshed(is, err)
	}
	if err != nil {
		log.Error(err, "refresh a guest kubeconfig", "object", key, "operator", t.issued.Operator)
		r.queue.AddRateLimited(key)
		return
	}
	log.V(1).Info("guest kubeconfig refreshed", "object", key, "operator", is.Operator, "expires", is.ExpiresAt, "next", is.RefreshAt)
	r.queue.Forget(key)
	r.mu.Lock()
	r.tracked[key] = tracked{issued: is, writer: t.writer}
	r.mu.Unlock()
	r.queue.AddAfter(key, is.RefreshAt.Sub(r.clock.Now()))
}
