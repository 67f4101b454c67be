package phase3

import (
	"bufio"
	"csbench/internal/rundir"
	"fmt"
	"os"
	"strconv"
	"strings"

	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// Memory per connection, three ways, at every step (MemoryFigures):
//
//   - server user space: (VmRSS of the server processes with every
//     connection held − VmRSS before the clients started) ÷ connections
//     (server_rss_per_conn_kb);
//   - client user space: the client processes' VmRSS (connclient samples
//     its own: idle at the end of the hold, low-rate half way through the
//     schedule) ÷ connections (client_rss_per_conn_kb); the processes did
//     not exist before, so this includes each one's runtime (a few MB);
//   - kernel: the growth of the TCP socket slab (/proc/slabinfo "TCP",
//     active objects × object size; root only, else unreadable) and of
//     /proc/net/sockstat's TCP mem (pages of socket buffers) between the
//     same two moments, on the server host, ÷ connections
//     (kernel_kb_per_conn). sockstat's mem is the kernel's one counter,
//     the same in every network namespace; with both ends on one machine
//     (netns, local) the slab holds both ends' sockets: the figure is then
//     per connection, both ends. Slab and mem are the whole machine's:
//     other processes' sockets opened or closed meanwhile count too.

// Kernel bases (details "kernel_basis").
const (
	KernelShared = "both_ends_one_kernel" // netns, local: both ends' sockets
	KernelServer = "server_kernel"        // ssh: the server host's kernel
)

// Slab is the TCP line of /proc/slabinfo.
type Slab struct {
	ActiveObjs, ObjSize float64
}

// errUnreadable: the snapshot could not read /proc/slabinfo (not root).
var errUnreadable = fmt.Errorf("unreadable")

// readSlab reads the "TCP" cache of a /proc/slabinfo copy; a file that is
// not slabinfo (the snapshot wrote "unreadable") is errUnreadable.
func readSlab(path string) (Slab, error) {
	f, err := rundir.Open(path)
	if err != nil {
		return Slab{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	head := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "slabinfo - version:") {
			head = true
			continue
		}
		fields := strings.Fields(line)
		if !head || len(fields) < 4 || fields[0] != "TCP" {
			continue
		}
		a, err1 := strconv.ParseFloat(fields[1], 64)
		o, err2 := strconv.ParseFloat(fields[3], 64)
		if err1 != nil || err2 != nil {
			return Slab{}, fmt.Errorf("%s: bad TCP line %q", path, line)
		}
		return Slab{ActiveObjs: a, ObjSize: o}, nil
	}
	if err := sc.Err(); err != nil {
		return Slab{}, err
	}
	if !head {
		return Slab{}, errUnreadable
	}
	return Slab{}, fmt.Errorf("%s: no TCP cache", path)
}

// readPageSize reads the page size the snapshot recorded (getconf PAGESIZE).
func readPageSize(path string) (float64, error) {
	b, err := rundir.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s: page size %q", path, strings.TrimSpace(string(b)))
	}
	return v, nil
}

// measureMemory fills f's client and kernel figures for a cell whose connections n were held
// (n: the server's ESTABLISHED, else the clients' count); shared says both
// ends ran on one machine. It returns notes on what it could not read.
func measureMemory(path func(host, when, ext string) string, clients []*Client, clientHosts []string, n *float64, shared bool,
	f *MemoryFigures, details map[string]any) []string {
	var notes []string
	if len(clients) > 0 {
		t := 0.0
		for _, cl := range clients {
			if cl.ClientRSSMB == nil {
				t = -1
				break
			}
			t += *cl.ClientRSSMB
		}
		if t >= 0 {
			f.ClientVmRSSMB = summary.F(round(t, 1))
			if n != nil && *n > 0 {
				f.ClientRSSPerConnKB = summary.F(round(t*1024 / *n, 1))
			}
		}
	}
	details["kernel_basis"] = KernelServer
	if shared {
		details["kernel_basis"] = KernelShared
	}
	ok := n != nil && *n > 0
	before, errB := hostdata.ReadSockstat(path("server", "before", "sockstat"))
	held, errH := hostdata.ReadSockstat(path("server", "held", "sockstat"))
	page, errP := readPageSize(path("server", "before", "pagesize"))
	if errB == nil && errH == nil {
		b, ok1 := before["TCP.mem"]
		h, ok2 := held["TCP.mem"]
		if ok1 && ok2 {
			f.TCPMemPagesBefore, f.TCPMemPagesHeld = summary.F(b), summary.F(h)
			if ok && errP == nil {
				f.KernelTCPMemKBPerConn = summary.F(round((h-b)*page/1024 / *n, 2))
			}
		}
	}
	sb, errSB := readSlab(path("server", "before", "slabinfo"))
	sh, errSH := readSlab(path("server", "held", "slabinfo"))
	switch {
	case errSB == errUnreadable || errSH == errUnreadable:
		details["kernel_slab"] = "unreadable"
		notes = append(notes, "/proc/slabinfo was unreadable on the server (root only): kernel memory per connection has no slab part")
	case errSB != nil || errSH != nil:
		if !os.IsNotExist(errSB) && !os.IsNotExist(errSH) {
			notes = append(notes, fmt.Sprintf("slabinfo: %v %v", errSB, errSH))
		}
	default:
		f.TCPSlabObjsBefore, f.TCPSlabObjsHeld, f.TCPSlabObjBytes = summary.F(sb.ActiveObjs), summary.F(sh.ActiveObjs), summary.F(sh.ObjSize)
		if ok {
			f.KernelTCPSlabKBPerConn = summary.F(round((sh.ActiveObjs-sb.ActiveObjs)*sh.ObjSize/1024 / *n, 2))
		}
	}
	if a, b := f.KernelTCPMemKBPerConn, f.KernelTCPSlabKBPerConn; a != nil && b != nil {
		f.KernelKBPerConn = summary.F(round(*a+*b, 2))
	}
	// The fourth way (cost.go): MemAvailable's fall, the server host's,
	// and on separate machines the client hosts' summed.
	if fall, err := memFall(path, "server"); err == nil && ok {
		f.HostMemKBPerConn = summary.F(round(fall / *n, 1))
	}
	if !shared && ok {
		t, any := 0.0, false
		for _, l := range clientHosts {
			if fall, err := memFall(path, l); err == nil {
				t, any = t+fall, true
			}
		}
		if any {
			f.ClientHostMemKBPerConn = summary.F(round(t / *n, 1))
		}
	}
	return notes
}
