// Package clientsys is the Linux plumbing of connclient's client modes: a
// dialer that binds a source IP without choosing a port
// (IP_BIND_ADDRESS_NO_PORT, sys.go), the RLIMIT_NOFILE it raises and
// checks, its VmRSS, TCP_INFO's retransmissions of a connection, how busy
// the CPUs it may use were (cpus.go), and a sleeper that wakes within
// tens of microseconds on a timerfd (sleeper.go).
package clientsys

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"csbench/internal/decimal"
	"csbench/internal/loadplan"
	"csbench/internal/usage"
)

// IPBindAddressNoPort is IP_BIND_ADDRESS_NO_PORT from linux/in.h: with it,
// bind() to a source IP defers choosing the port to connect(), where the
// kernel may reuse a port for different destinations, so many connections
// from one source IP do not run out of ports at bind time.
const IPBindAddressNoPort = 24

// FDReserve is the number of descriptors kept for the runtime, stdio and the
// listener-free rest of the process, on top of one per connection.
const FDReserve = loadplan.FDMargin

// NewDialer returns a dialer that binds to source (if valid) with
// IP_BIND_ADDRESS_NO_PORT set before the bind.
func NewDialer(source netip.Addr, timeout time.Duration) *net.Dialer {
	d := &net.Dialer{Timeout: timeout, KeepAlive: -1}
	if source.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: source.AsSlice(), Zone: source.Zone()}
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, IPBindAddressNoPort, 1)
			}); err != nil {
				return err
			}
			if serr != nil {
				return os.NewSyscallError("setsockopt IP_BIND_ADDRESS_NO_PORT", serr)
			}
			return nil
		}
	}
	return d
}

// RaiseNofile raises the soft RLIMIT_NOFILE to the hard limit and returns
// the resulting limits.
func RaiseNofile() (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("getrlimit RLIMIT_NOFILE: %w", err)
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, 0, fmt.Errorf("setrlimit RLIMIT_NOFILE to %d: %w", rl.Max, err)
		}
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, 0, fmt.Errorf("getrlimit RLIMIT_NOFILE: %w", err)
		}
	}
	return uint64(rl.Cur), uint64(rl.Max), nil
}

// CheckNofile returns a usage error when the hard limit cannot hold conns
// connections plus the reserve.
func CheckNofile(conns int, hard uint64) error {
	need := uint64(conns) + FDReserve
	if hard >= need {
		return nil
	}
	return usage.Errorf("-conns %d needs %d file descriptors (connections + %d) but the hard "+
		"RLIMIT_NOFILE is %d; raise it (as root: ulimit -Hn %d in the launching shell, "+
		"LimitNOFILE=%d for a systemd unit, or a nofile line in /etc/security/limits.conf; "+
		"fs.nr_open caps it) or lower -conns", conns, need, FDReserve, hard, need, need)
}

// RSSMB returns VmRSS from /proc/self/status in MiB, or nil.
func RSSMB() *float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "VmRSS:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseFloat(string(f[1]), 64)
			if err != nil {
				return nil
			}
			v := decimal.Round(kb/1024, 1)
			return &v
		}
	}
	return nil
}

// Retransmitted says whether the kernel has retransmitted anything on the
// connection (TCP_INFO's total_retrans: a SYN, or data after a dropped
// ACK), the mark of a full queue on the way; true when it cannot be read,
// so an unreadable connection counts as before.
func Retransmitted(rc syscall.RawConn) bool {
	var info syscall.TCPInfo
	ok := false
	if err := rc.Control(func(fd uintptr) {
		n := uint32(syscall.SizeofTCPInfo)
		_, _, errno := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&n)), 0)
		ok = errno == 0
	}); err != nil {
		return true
	}
	return !ok || info.Total_retrans > 0
}
