package connclient

import (
	"encoding/json"
	"io"
)

// Events connclient prints on stderr, one JSON object a line, beside its
// progress lines for people: a runner waits for these, never for words of a
// progress line. Each line starts with `{"event":"NAME"` (EventPrefix).
const (
	// EventRamp: the connect phase's progress, once a progress interval.
	EventRamp = "ramp"
	// EventHolding: idle: every connection is open and held.
	EventHolding = "holding"
	// EventRunning: lowrate: every connection is open, the schedule starts.
	EventRunning = "running"
	// EventReady: lowrate with -start-file: every connection is open; it
	// waits for the start time in the file.
	EventReady = "ready"
)

// EventPrefix is how the line of event NAME begins: EventPrefix + NAME + `"`.
const EventPrefix = `{"event":"`

// Event is one event line.
type Event struct {
	Event       string   `json:"event"`
	Established int64    `json:"established"`
	Target      int      `json:"target"`
	Failed      int64    `json:"failed"`
	RatePerS    *float64 `json:"rate_per_s,omitempty"` // ramp: connects per second over the last interval
	ElapsedS    float64  `json:"elapsed_s"`
}

// writeEvent prints ev as one line in one write.
func writeEvent(w io.Writer, ev Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	w.Write(append(b, '\n'))
}
