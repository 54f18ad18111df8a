package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/topolayer/topolayer/contract"
)

// EventRecorder records events with the events API: client-go's events.EventRecorder plus
// AnnotatedEventf. It has the method set of controller-runtime's recorder.EventRecorder (what
// mgr.GetEventRecorder returns since controller-runtime v0.25), so a reconciler whose field
// has that type, or client-go's events.EventRecorder (v0.24), takes it as is. It is defined
// here because the recorder package has no EventRecorder before v0.25, and topolayer builds
// against both.
type EventRecorder interface {
	events.EventRecorder
	// AnnotatedEventf is Eventf with annotations on the recorded event.
	AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any)
}

// EventSource says where a run's events go and what they are about.
//
// The contract routes events by namespace (eventingNamespaces), and a core/v1 Event must live
// in the namespace of the object it is about. So, as library-go's recorder does for
// OpenShift operators, every event is about the operator itself, in its own namespace: the
// object a reconciler passes to Event or Eventf is not recorded.
type EventSource struct {
	// Namespace receives the events. Empty means the first eventingNamespace declared for
	// Management, else for Configuration, else for UserWorkload.
	Namespace string
	// InvolvedObject is what every event is about. The zero value means the operator's
	// Deployment: kind Deployment, named after the operator, in Namespace.
	InvolvedObject corev1.ObjectReference
	// Component is the events' source component; empty means the operator's name.
	Component string
}

// resolvedEventSource is an EventSource with its defaults filled in.
type resolvedEventSource struct {
	namespace string
	involved  corev1.ObjectReference
	component string
}

// eventSource fills in the defaults of o.Events.
func (o *Operator) eventSource() (resolvedEventSource, error) {
	s := resolvedEventSource{namespace: o.Events.Namespace, involved: o.Events.InvolvedObject, component: o.Events.Component}
	if s.namespace == "" {
		for _, c := range []contract.Class{contract.ClassManagement, contract.ClassConfiguration, contract.ClassUserWorkload} {
			if ns := o.OutputResources.ForClass(c).EventingNamespaces; len(ns) > 0 {
				s.namespace = ns[0]
				break
			}
		}
	}
	if s.involved == (corev1.ObjectReference{}) {
		s.involved = corev1.ObjectReference{Kind: "Deployment", Name: o.Name, Namespace: s.namespace}
	}
	if s.involved.Name == "" {
		return s, errors.New("events: the involved object needs a name")
	}
	if s.component == "" {
		s.component = o.Name
	}
	return s, nil
}

// eventSink turns recorded events into Create mutations of core/v1 Events with
// deterministic names: `<involved object>.<now in hex nanoseconds>.<8 hex digits>`, the
// last part hashed from the controller, the event's sequence number, reason and message.
type eventSink struct {
	w     *controllerLog
	src   resolvedEventSource
	clock clock.PassiveClock
}

func (s *eventSink) emit(annotations map[string]string, eventtype, reason, action, message string) {
	now := s.clock.Now()
	seq := s.w.nextEvent()
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s\x00%s", s.w.name, seq, reason, message))
	ts := metav1.NewTime(now)
	ev := &corev1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("%s.%x.%s", s.src.involved.Name, now.UnixNano(), hex.EncodeToString(sum[:4])),
			Namespace:   s.src.namespace,
			Annotations: annotations,
		},
		InvolvedObject: s.src.involved,
		Reason:         reason,
		Message:        message,
		Source:         corev1.EventSource{Component: s.src.component},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
		Type:           eventtype,
		Action:         action,
	}
	body, err := toYAML(ev)
	if err != nil {
		return // an Event always marshals
	}
	md := contract.Metadata{
		Action:       contract.ActionCreate,
		Name:         ev.Name,
		Namespace:    ev.Namespace,
		ResourceType: contract.ResourceType{Group: "", Resource: "events", Version: "v1"},
	}
	s.w.add(contract.Mutation{Metadata: md, Body: body})
}

// eventsRecorder is the events API recorder of controller-runtime managers.
type eventsRecorder struct{ s *eventSink }

var _ EventRecorder = eventsRecorder{}

// Eventf records an event; regarding and related are not recorded (see EventSource).
func (r eventsRecorder) Eventf(_, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.s.emit(nil, eventtype, reason, action, fmt.Sprintf(note, args...))
}

// AnnotatedEventf records an event with annotations.
func (r eventsRecorder) AnnotatedEventf(_, _ runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	r.s.emit(annotations, eventtype, reason, action, fmt.Sprintf(note, args...))
}

// legacyRecorder is the legacy (core/v1) recorder.
type legacyRecorder struct{ s *eventSink }

var _ record.EventRecorder = legacyRecorder{}

// Event records an event; object is not recorded (see EventSource).
func (r legacyRecorder) Event(_ runtime.Object, eventtype, reason, message string) {
	r.s.emit(nil, eventtype, reason, "", message)
}

// Eventf records an event with a formatted message.
func (r legacyRecorder) Eventf(_ runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.s.emit(nil, eventtype, reason, "", fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf records an event with annotations.
func (r legacyRecorder) AnnotatedEventf(_ runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.s.emit(annotations, eventtype, reason, "", fmt.Sprintf(messageFmt, args...))
}
