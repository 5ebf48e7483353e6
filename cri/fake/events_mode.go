package fake

import "fmt"

// EventsMode is how the fake's GetContainerEvents answers: runtimes differ
// there, and an agent must cope with each.
type EventsMode string

const (
	// EventsStream streams every change until the client goes (containerd 2).
	EventsStream EventsMode = ""
	// EventsEnd ends every stream as soon as it opens, with no event and
	// no error, as k8s.io/cri-client's fake runtime does.
	EventsEnd EventsMode = "end"
	// EventsUnimplemented answers Unimplemented, as containerd 1.6 does.
	EventsUnimplemented EventsMode = "unimplemented"
)

// ParseEventsMode reads a mode by its name; "stream" is EventsStream.
func ParseEventsMode(s string) (EventsMode, error) {
	switch m := EventsMode(s); m {
	case "stream", EventsStream:
		return EventsStream, nil
	case EventsEnd, EventsUnimplemented:
		return m, nil
	}
	return "", fmt.Errorf("events mode %q: want stream, end or unimplemented", s)
}
