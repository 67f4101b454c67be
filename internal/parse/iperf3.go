package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Iperf3Result is what the iperf3 client printed with -J for a TCP test
// (`iperf3 -c HOST -p PORT -t SECONDS -P N [-R] -J`).
//
// "Sender" and "Receiver" are the two ends of the data flow, not client and
// server: without -R the client sends, with -R (Reverse) the server sends and
// the client receives. In both cases iperf3's end.sum_sent is the sender's
// count and end.sum_received the receiver's, because the client gets the
// server's figures over the control connection. The retransmits of the
// sending host are in sum_sent either way; the sender's cwnd and RTT are
// not sent back, so under -R they are nil here (iperf3 prints 0s).
type Iperf3Result struct {
	Version string // "iperf 3.12"
	// Error is iperf3's "error" field, verbatim, when it reported a failure
	// (ParseIperf3 then also returns a *ToolError). iperf3 3.12 -J exits 0
	// on such a failure: the runner must look here, not at the exit status.
	Error string

	StartTime      time.Time // start.timestamp.timesecs, UTC
	Protocol       string    // "TCP"
	NumStreams     int       // -P
	Reverse        bool      // -R
	DurationS      float64   // -t as asked
	OmitS          float64   // -O
	BlockSizeBytes int

	// Whole-run sums; nil when iperf3 printed none (a failed run).
	ReceiverBitsPerSecond *float64 // end.sum_received.bits_per_second: the figure to quote
	SenderBitsPerSecond   *float64 // end.sum_sent.bits_per_second
	ReceiverBytes         *uint64
	SenderBytes           *uint64
	ReceiverSeconds       *float64 // the measured interval, slightly over DurationS
	SenderSeconds         *float64
	Retransmits           *int64 // end.sum_sent.retransmits, counted by the sending host

	// end.cpu_utilization_percent. "Host" is the client, "remote" the server.
	HostCPUTotalPercent    *float64
	HostCPUUserPercent     *float64
	HostCPUSystemPercent   *float64
	RemoteCPUTotalPercent  *float64
	RemoteCPUUserPercent   *float64
	RemoteCPUSystemPercent *float64

	SenderCongestion   string // "cubic", "bbr", ...; "" when not printed
	ReceiverCongestion string

	Streams   []Iperf3Stream   // end.streams, one per -P stream
	Intervals []Iperf3Interval // intervals[].sum, one per -i period
}

// Iperf3Stream is one stream's whole-run figures (end.streams[i]).
type Iperf3Stream struct {
	Socket                int
	SenderBitsPerSecond   *float64
	ReceiverBitsPerSecond *float64
	SenderBytes           *uint64
	ReceiverBytes         *uint64
	Retransmits           *int64
	// The sender's TCP_INFO figures; nil under -R, where the sender is the
	// server and iperf3 prints 0s for them.
	MaxSndCwndBytes *int64
	MinRTTUs        *int64
	MeanRTTUs       *int64
	MaxRTTUs        *int64
}

// Iperf3Interval is one reporting period of the whole test (intervals[i].sum),
// as measured by the client: the sender without -R, the receiver with it.
type Iperf3Interval struct {
	StartS        float64
	EndS          float64
	Bytes         uint64
	BitsPerSecond float64
	Retransmits   *int64 // only on the sending side
	Omitted       bool   // inside -O, not counted in the sums
}

type iperf3Sum struct {
	Socket        int      `json:"socket"`
	Seconds       *float64 `json:"seconds"`
	Bytes         *uint64  `json:"bytes"`
	BitsPerSecond *float64 `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	MaxSndCwnd    *int64   `json:"max_snd_cwnd"`
	MinRTT        *int64   `json:"min_rtt"`
	MeanRTT       *int64   `json:"mean_rtt"`
	MaxRTT        *int64   `json:"max_rtt"`
}

type iperf3JSON struct {
	Start struct {
		Version   string `json:"version"`
		Timestamp struct {
			Timesecs int64 `json:"timesecs"`
		} `json:"timestamp"`
		TestStart *struct {
			Protocol   string  `json:"protocol"`
			NumStreams int     `json:"num_streams"`
			BlkSize    int     `json:"blksize"`
			Omit       float64 `json:"omit"`
			Duration   float64 `json:"duration"`
			Reverse    int     `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Sum struct {
			Start         float64 `json:"start"`
			End           float64 `json:"end"`
			Bytes         uint64  `json:"bytes"`
			BitsPerSecond float64 `json:"bits_per_second"`
			Retransmits   *int64  `json:"retransmits"`
			Omitted       bool    `json:"omitted"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		Streams []struct {
			Sender   *iperf3Sum `json:"sender"`
			Receiver *iperf3Sum `json:"receiver"`
		} `json:"streams"`
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
		CPU         *struct {
			HostTotal    *float64 `json:"host_total"`
			HostUser     *float64 `json:"host_user"`
			HostSystem   *float64 `json:"host_system"`
			RemoteTotal  *float64 `json:"remote_total"`
			RemoteUser   *float64 `json:"remote_user"`
			RemoteSystem *float64 `json:"remote_system"`
		} `json:"cpu_utilization_percent"`
		SenderCongestion   string `json:"sender_tcp_congestion"`
		ReceiverCongestion string `json:"receiver_tcp_congestion"`
	} `json:"end"`
	Error string `json:"error"`
}

// ParseIperf3 reads the JSON that the iperf3 client printed with -J.
//
// When iperf3 reported a failure (its "error" field, e.g. "unable to connect
// to server: Connection refused"), ParseIperf3 returns the result, with Error
// set and whatever else was printed, together with a *ToolError. It also
// fails if the input is not iperf3 JSON, if the test was not TCP, or if a run
// without "error" has no end.sum_sent/sum_received.
func ParseIperf3(r io.Reader) (*Iperf3Result, error) {
	var in iperf3JSON
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return nil, fmt.Errorf("iperf3: not iperf3 -J output: %w", err)
	}

	res := &Iperf3Result{Version: in.Start.Version, Error: in.Error}
	if in.Start.Timestamp.Timesecs != 0 {
		res.StartTime = time.Unix(in.Start.Timestamp.Timesecs, 0).UTC()
	}
	if ts := in.Start.TestStart; ts != nil {
		res.Protocol = ts.Protocol
		res.NumStreams = ts.NumStreams
		res.Reverse = ts.Reverse != 0
		res.DurationS = ts.Duration
		res.OmitS = ts.Omit
		res.BlockSizeBytes = ts.BlkSize
	}
	e := in.End
	if s := e.SumReceived; s != nil {
		res.ReceiverBitsPerSecond, res.ReceiverBytes, res.ReceiverSeconds = s.BitsPerSecond, s.Bytes, s.Seconds
	}
	if s := e.SumSent; s != nil {
		res.SenderBitsPerSecond, res.SenderBytes, res.SenderSeconds = s.BitsPerSecond, s.Bytes, s.Seconds
		res.Retransmits = s.Retransmits
	}
	if c := e.CPU; c != nil {
		res.HostCPUTotalPercent, res.HostCPUUserPercent, res.HostCPUSystemPercent = c.HostTotal, c.HostUser, c.HostSystem
		res.RemoteCPUTotalPercent, res.RemoteCPUUserPercent, res.RemoteCPUSystemPercent = c.RemoteTotal, c.RemoteUser, c.RemoteSystem
	}
	res.SenderCongestion, res.ReceiverCongestion = e.SenderCongestion, e.ReceiverCongestion
	for _, st := range e.Streams {
		var s Iperf3Stream
		if snd := st.Sender; snd != nil {
			s.Socket = snd.Socket
			s.SenderBitsPerSecond, s.SenderBytes, s.Retransmits = snd.BitsPerSecond, snd.Bytes, snd.Retransmits
			if !res.Reverse {
				s.MaxSndCwndBytes, s.MinRTTUs, s.MeanRTTUs, s.MaxRTTUs = snd.MaxSndCwnd, snd.MinRTT, snd.MeanRTT, snd.MaxRTT
			}
		}
		if rcv := st.Receiver; rcv != nil {
			s.Socket = rcv.Socket
			s.ReceiverBitsPerSecond, s.ReceiverBytes = rcv.BitsPerSecond, rcv.Bytes
		}
		res.Streams = append(res.Streams, s)
	}
	for _, iv := range in.Intervals {
		res.Intervals = append(res.Intervals, Iperf3Interval{
			StartS: iv.Sum.Start, EndS: iv.Sum.End, Bytes: iv.Sum.Bytes,
			BitsPerSecond: iv.Sum.BitsPerSecond, Retransmits: iv.Sum.Retransmits,
			Omitted: iv.Sum.Omitted,
		})
	}

	if in.Error != "" {
		return res, &ToolError{Tool: "iperf3", Msg: in.Error}
	}
	if in.Start.TestStart == nil {
		return nil, errors.New("iperf3: no start.test_start: not iperf3 -J client output")
	}
	if res.Protocol != "TCP" {
		return nil, fmt.Errorf("iperf3: protocol %q: only TCP tests are parsed", res.Protocol)
	}
	if res.ReceiverBitsPerSecond == nil || res.SenderBitsPerSecond == nil {
		return nil, errors.New("iperf3: no end.sum_received/sum_sent although iperf3 reported no error")
	}
	if err := iperf3NonNegative(res); err != nil {
		return nil, err
	}
	return res, nil
}

// iperf3NonNegative: every rate, time, count and CPU share iperf3 prints
// is zero or more.
func iperf3NonNegative(r *Iperf3Result) error {
	fs := []field{
		f64("end.sum_received.bits_per_second", r.ReceiverBitsPerSecond),
		f64("end.sum_sent.bits_per_second", r.SenderBitsPerSecond),
		f64("end.sum_received.seconds", r.ReceiverSeconds), f64("end.sum_sent.seconds", r.SenderSeconds),
		i64("end.sum_sent.retransmits", r.Retransmits),
		f64("end.cpu_utilization_percent.host_total", r.HostCPUTotalPercent),
		f64("end.cpu_utilization_percent.host_user", r.HostCPUUserPercent),
		f64("end.cpu_utilization_percent.host_system", r.HostCPUSystemPercent),
		f64("end.cpu_utilization_percent.remote_total", r.RemoteCPUTotalPercent),
		f64("end.cpu_utilization_percent.remote_user", r.RemoteCPUUserPercent),
		f64("end.cpu_utilization_percent.remote_system", r.RemoteCPUSystemPercent),
	}
	for i, s := range r.Streams {
		p := fmt.Sprintf("end.streams[%d].", i)
		fs = append(fs, f64(p+"sender.bits_per_second", s.SenderBitsPerSecond),
			f64(p+"receiver.bits_per_second", s.ReceiverBitsPerSecond), i64(p+"sender.retransmits", s.Retransmits),
			i64(p+"sender.max_snd_cwnd", s.MaxSndCwndBytes), i64(p+"sender.min_rtt", s.MinRTTUs),
			i64(p+"sender.mean_rtt", s.MeanRTTUs), i64(p+"sender.max_rtt", s.MaxRTTUs))
	}
	for i, iv := range r.Intervals {
		p := fmt.Sprintf("intervals[%d].sum.", i)
		fs = append(fs, val(p+"start", iv.StartS), val(p+"end", iv.EndS),
			val(p+"bits_per_second", iv.BitsPerSecond), i64(p+"retransmits", iv.Retransmits))
	}
	return nonNegative("iperf3", fs...)
}
