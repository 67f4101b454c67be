package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Nstat is one snapshot of the kernel's network counters, as printed by
// `nstat -a -s -z -j`: -a absolute values (not increments since the last
// call), -s do not read or write nstat's history file, -z include counters
// that are 0, -j JSON. Names are nstat's ("TcpRetransSegs",
// "TcpExtListenOverflows"). nstat leaves out the fields of /proc/net/snmp
// that are not counters (TcpRtoMin, TcpMaxConn, TcpCurrEstab...), so every
// value here only grows until it wraps or the host reboots.
type Nstat map[string]uint64

// TCPHealthCounters are the counters a report shows for a TCP run: drops at
// the listen queue, resets, aborts, retransmissions, timeouts, TIME_WAIT.
var TCPHealthCounters = []string{
	"TcpActiveOpens",
	"TcpPassiveOpens",
	"TcpAttemptFails",
	"TcpEstabResets",
	"TcpRetransSegs",
	"TcpOutRsts",
	"TcpInErrs",
	"TcpExtListenOverflows",
	"TcpExtListenDrops",
	"TcpExtTCPAbortOnData",
	"TcpExtTCPAbortOnClose",
	"TcpExtTCPAbortOnMemory",
	"TcpExtTCPAbortOnTimeout",
	"TcpExtTCPAbortOnLinger",
	"TcpExtTCPAbortFailed",
	"TcpExtTCPTimeouts",
	"TcpExtTCPSynRetrans",
	"TcpExtTCPLostRetransmit",
	"TcpExtTW",
	"TcpExtTWRecycled",
	"TcpExtTWKilled",
	"TcpExtTCPReqQFullDrop",
	"TcpExtTCPReqQFullDoCookies",
	"TcpExtSyncookiesSent",
	"TcpExtSyncookiesFailed",
	"TcpExtTCPBacklogDrop",
	"TcpExtPruneCalled",
	"TcpExtTCPRcvQDrop",
}

// ParseNstat reads the JSON of `nstat -a -s -z -j`: {"kernel": {"Name": N,
// ...}}. It fails on anything else, and on a value that is not a
// non-negative integer.
func ParseNstat(r io.Reader) (Nstat, error) {
	var in map[string]map[string]json.Number
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("nstat: not nstat -j output: %w", err)
	}
	kernel, ok := in["kernel"]
	if !ok {
		return nil, errors.New(`nstat: no "kernel" object: not nstat -j output`)
	}
	n := make(Nstat, len(kernel))
	for name, v := range kernel {
		u, err := strconv.ParseUint(v.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("nstat: %s = %s: not a counter", name, v)
		}
		n[name] = u
	}
	return n, nil
}

// NstatDelta returns after - before for each of names (every counter in both
// snapshots if names is empty). A counter missing from either snapshot is
// missing from the result: this kernel does not count it, which is not 0. A
// counter that went down (the host rebooted, or a 32-bit counter wrapped)
// makes NstatDelta fail, naming it.
func NstatDelta(before, after Nstat, names ...string) (map[string]uint64, error) {
	if len(names) == 0 {
		for name := range after {
			names = append(names, name)
		}
	}
	d := make(map[string]uint64, len(names))
	var down []string
	for _, name := range names {
		b, okb := before[name]
		a, oka := after[name]
		if !okb || !oka {
			continue
		}
		if a < b {
			down = append(down, fmt.Sprintf("%s %d -> %d", name, b, a))
			continue
		}
		d[name] = a - b
	}
	if len(down) > 0 {
		sort.Strings(down)
		return nil, fmt.Errorf("nstat: counters went down between the snapshots (reboot or wrap?): %s", strings.Join(down, ", "))
	}
	return d, nil
}
