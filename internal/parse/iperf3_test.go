package parse

import (
	"errors"
	"strings"
	"testing"
)

func TestParseIperf3OneStream(t *testing.T) {
	// iperf3 -c 127.0.0.1 -p 5299 -t 2 -P 1 -J
	res, err := ParseIperf3(open(t, "iperf3-p1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "iperf 3.12" || res.Error != "" || res.Protocol != "TCP" || res.NumStreams != 1 ||
		res.Reverse || res.DurationS != 2 || res.OmitS != 0 || res.BlockSizeBytes != 131072 {
		t.Errorf("test = %+v", res)
	}
	if !res.StartTime.Equal(utc("2026-11-30T07:19:15Z")) {
		t.Errorf("StartTime = %v", res.StartTime)
	}
	wantFloat(t, "ReceiverBitsPerSecond", res.ReceiverBitsPerSecond, 35658701063.693115, 1e-3)
	wantFloat(t, "SenderBitsPerSecond", res.SenderBitsPerSecond, 35665065740.85833, 1e-3)
	wantFloat(t, "ReceiverSeconds", res.ReceiverSeconds, 2.000483, 1e-9)
	if res.ReceiverBytes == nil || *res.ReceiverBytes != 8916828160 || res.SenderBytes == nil || *res.SenderBytes != 8916828160 {
		t.Errorf("bytes = %v, %v", res.ReceiverBytes, res.SenderBytes)
	}
	if res.Retransmits == nil || *res.Retransmits != 43 {
		t.Errorf("Retransmits = %v, want 43", res.Retransmits)
	}
	wantFloat(t, "HostCPUTotalPercent", res.HostCPUTotalPercent, 98.6396624843701, 1e-9)
	wantFloat(t, "RemoteCPUTotalPercent", res.RemoteCPUTotalPercent, 43.37570970254228, 1e-9)
	wantFloat(t, "HostCPUSystemPercent", res.HostCPUSystemPercent, 97.93165728290323, 1e-9)
	if res.SenderCongestion != "bbr" || res.ReceiverCongestion != "bbr" {
		t.Errorf("congestion = %q, %q", res.SenderCongestion, res.ReceiverCongestion)
	}
	if len(res.Streams) != 1 {
		t.Fatalf("%d streams", len(res.Streams))
	}
	s := res.Streams[0]
	if s.Socket != 5 || s.Retransmits == nil || *s.Retransmits != 43 {
		t.Errorf("stream = %+v", s)
	}
	// The client sent: its TCP_INFO is there. "max_snd_cwnd": 1047728, "mean_rtt": 34.
	if s.MaxSndCwndBytes == nil || *s.MaxSndCwndBytes != 1047728 || s.MeanRTTUs == nil || *s.MeanRTTUs != 34 {
		t.Errorf("stream TCP_INFO = cwnd %v, rtt %v", s.MaxSndCwndBytes, s.MeanRTTUs)
	}
	if len(res.Intervals) != 2 || res.Intervals[0].Retransmits == nil || *res.Intervals[0].Retransmits != 22 {
		t.Errorf("Intervals = %+v", res.Intervals)
	}
}

func TestParseIperf3FourStreams(t *testing.T) {
	// iperf3 -c 127.0.0.1 -p 5299 -t 2 -P 4 -J
	res, err := ParseIperf3(open(t, "iperf3-p4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.NumStreams != 4 || len(res.Streams) != 4 {
		t.Fatalf("NumStreams = %d, %d streams", res.NumStreams, len(res.Streams))
	}
	wantFloat(t, "ReceiverBitsPerSecond", res.ReceiverBitsPerSecond, 40157741260.41237, 1e-3)
	var sum float64
	var retr int64
	sockets := []int{}
	for _, s := range res.Streams {
		sum += *s.ReceiverBitsPerSecond
		retr += *s.Retransmits
		sockets = append(sockets, s.Socket)
	}
	// The streams add up to the sum (the sum is bytes over the longest stream's time).
	if !approx(sum, *res.ReceiverBitsPerSecond, 1e-3**res.ReceiverBitsPerSecond) {
		t.Errorf("streams sum to %v, sum_received %v", sum, *res.ReceiverBitsPerSecond)
	}
	if retr != 14 || *res.Retransmits != 14 {
		t.Errorf("retransmits: streams %d, sum %d; want 14", retr, *res.Retransmits)
	}
	if want := []int{5, 7, 9, 12}; len(sockets) != 4 || sockets[0] != want[0] || sockets[3] != want[3] {
		t.Errorf("sockets = %v, want %v", sockets, want)
	}
	wantFloat(t, "stream 2 receiver", res.Streams[1].ReceiverBitsPerSecond, 10039304260.53335, 1e-3)
	wantFloat(t, "stream 2 sender", res.Streams[1].SenderBitsPerSecond, 10055396374.861319, 1e-3)
}

func TestParseIperf3Reverse(t *testing.T) {
	// iperf3 ... -R -J: the server sends. sum_sent still carries the
	// sender's (server's) retransmits; its cwnd and RTT come back as 0.
	for _, c := range []struct {
		name    string
		streams int
		rcvBps  float64
		retr    int64
	}{
		{"iperf3-p1-reverse.json", 1, 39888962047.670784, 66},
		{"iperf3-p4-reverse.json", 4, 35870421470.029884, 13},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := ParseIperf3(open(t, c.name))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reverse || res.NumStreams != c.streams || len(res.Streams) != c.streams {
				t.Errorf("Reverse = %v, NumStreams = %d, %d streams", res.Reverse, res.NumStreams, len(res.Streams))
			}
			wantFloat(t, "ReceiverBitsPerSecond", res.ReceiverBitsPerSecond, c.rcvBps, 1e-3)
			if res.Retransmits == nil || *res.Retransmits != c.retr {
				t.Errorf("Retransmits = %v, want %d", res.Retransmits, c.retr)
			}
			for _, s := range res.Streams {
				wantNil(t, "MaxSndCwndBytes", s.MaxSndCwndBytes)
				wantNil(t, "MeanRTTUs", s.MeanRTTUs)
				if s.Retransmits == nil {
					t.Error("stream Retransmits = nil under -R")
				}
			}
			// The client receives, so its intervals have no retransmits.
			for _, iv := range res.Intervals {
				wantNil(t, "interval Retransmits", iv.Retransmits)
			}
		})
	}
}

func TestParseIperf3ConnectionRefused(t *testing.T) {
	// iperf3 -c 127.0.0.1 -p 5298 -t 2 -J with nothing on 5298; iperf3
	// 3.12 exited 0.
	res, err := ParseIperf3(open(t, "iperf3-refused.json"))
	var te *ToolError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a *ToolError", err)
	}
	if te.Msg != "unable to connect to server: Connection refused" {
		t.Errorf("Msg = %q", te.Msg)
	}
	if err.Error() != "iperf3 reported: unable to connect to server: Connection refused" {
		t.Errorf("Error() = %q", err.Error())
	}
	if res == nil || res.Error != te.Msg || res.Version != "iperf 3.12" {
		t.Fatalf("res = %+v", res)
	}
	wantNil(t, "ReceiverBitsPerSecond", res.ReceiverBitsPerSecond)
	wantNil(t, "Retransmits", res.Retransmits)
	wantNil(t, "HostCPUTotalPercent", res.HostCPUTotalPercent)
	if len(res.Streams) != 0 {
		t.Errorf("%d streams", len(res.Streams))
	}
}

func TestParseIperf3BadInput(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"text", "Connecting to host 127.0.0.1, port 5299\n", "not iperf3 -J output"},
		{"empty", "", "not iperf3 -J output"},
		{"other json", `{"summary": {}}`, "no start.test_start"},
		{"cut", string(fixture(t, "iperf3-p1.json")[:1500]), "not iperf3 -J output"},
		{"no end", strings.Replace(string(fixture(t, "iperf3-p1.json")), `"sum_received"`, `"sum_received_x"`, 1), "no end.sum_received"},
		{"udp", strings.Replace(string(fixture(t, "iperf3-p1.json")), `"protocol":	"TCP"`, `"protocol":	"UDP"`, 1), `protocol "UDP"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseIperf3(strings.NewReader(c.in))
			wantErrContains(t, err, c.err)
		})
	}
}
