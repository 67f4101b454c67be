package connresult

import (
	"bufio"
	"bytes"
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

// WriteEvent prints ev as one line in one write.
func WriteEvent(w io.Writer, ev Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	w.Write(append(b, '\n'))
}

// RampState is the connect phase of several processes, from their event
// lines: each one's last event counted once.
type RampState struct {
	Procs, Reported, Done int     // processes, those that printed an event, those past the ramp
	Established, Target   int64   // summed over the processes that reported
	Failed                int64   // connects given up
	RatePerS              float64 // summed over the last interval of each
}

// ReadRamp sums the last event line of each reader (a process's stderr).
func ReadRamp(rs ...io.Reader) RampState {
	st := RampState{Procs: len(rs)}
	for _, r := range rs {
		var last *Event
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.HasPrefix(line, []byte(EventPrefix)) {
				continue
			}
			var ev Event
			if json.Unmarshal(line, &ev) == nil {
				last = &ev
			}
		}
		if last == nil {
			continue
		}
		st.Reported++
		st.Established += last.Established
		st.Target += int64(last.Target)
		st.Failed += last.Failed
		if last.Event != EventRamp {
			st.Done++
		} else if last.RatePerS != nil {
			st.RatePerS += *last.RatePerS
		}
	}
	return st
}
