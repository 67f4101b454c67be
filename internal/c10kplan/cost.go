package c10kplan

import "fmt"

// Cost is the memory per connection a step of the run measured, which the
// plan of a larger step predicts from: each host's MemAvailable before the
// step's clients started and with every connection held, and the kernel's
// TCP buffer pages (/proc/net/sockstat mem) between the same two moments,
// divided by the step's connections. MemAvailable's fall covers all of it
// (the server's and the clients' user space, the kernel's sockets, files
// and buffers); with both ends on one machine the server host's figure is
// the whole.
type Cost struct {
	From  string `json:"from"` // the cell measured
	Conns int64  `json:"connections"`
	// ServerHostKB and ClientHostKB: MemAvailable's fall per connection
	// on the server host and on the client hosts (their sum over hosts,
	// per connection of the whole; 0 when they are the server host).
	ServerHostKB float64 `json:"server_host_kb_per_conn"`
	ClientHostKB float64 `json:"client_host_kb_per_conn"`
	// TCPMemKB: the TCP buffer memory per connection (sockstat mem
	// pages × page size), unknown when the files were not readable.
	TCPMemKB Float `json:"tcp_mem_kb_per_conn"`
}

// Float is a measured figure, or "unreadable".
type Float struct {
	V     float64
	Known bool
}

// MarshalJSON prints the number or "unreadable".
func (f Float) MarshalJSON() ([]byte, error) {
	if !f.Known {
		return []byte(`"unreadable"`), nil
	}
	return []byte(fmt.Sprintf("%.3f", f.V)), nil
}

// UnmarshalJSON reads a number or "unreadable".
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == `"unreadable"` {
		*f = Float{}
		return nil
	}
	_, err := fmt.Sscan(string(b), &f.V)
	f.Known = err == nil
	return err
}

func (c *Cost) basis() string {
	s := fmt.Sprintf("cost measured at %s (MemAvailable fell %.1f KiB a connection on the server host", c.From, c.ServerHostKB)
	if c.ClientHostKB > 0 {
		s += fmt.Sprintf(", %.1f on the client hosts", c.ClientHostKB)
	}
	return s + fmt.Sprintf(", over %d connections)", c.Conns)
}
