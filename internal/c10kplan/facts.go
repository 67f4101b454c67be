package c10kplan

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"csbench/internal/kv"
)

// Unlimited stands for an fd limit of "unlimited".
const Unlimited = 1_000_000_000

// Num is a fact that was read, or could not be (an empty sysctl as a
// non-root user, a missing file): "unreadable" in JSON, never 0.
type Num struct {
	V     int64
	Known bool
}

func known(v int64) Num { return Num{V: v, Known: true} }

// MarshalJSON prints the number or "unreadable".
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Known {
		return []byte(`"unreadable"`), nil
	}
	return []byte(strconv.FormatInt(n.V, 10)), nil
}

// UnmarshalJSON reads a number or "unreadable".
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == `"unreadable"` {
		*n = Num{}
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("want a number or \"unreadable\", got %s", b)
	}
	*n = known(v)
	return nil
}

func (n Num) String() string {
	if !n.Known {
		return "unreadable"
	}
	return strconv.FormatInt(n.V, 10)
}

// Host is what c10k_facts_script printed on one host.
type Host struct {
	FDHard         Num `json:"fd_hard"`
	FDSoft         Num `json:"fd_soft"`
	Somaxconn      Num `json:"somaxconn"`
	SynBacklog     Num `json:"tcp_max_syn_backlog"`
	Syncookies     Num `json:"tcp_syncookies"`
	PortLo         Num `json:"port_lo"`
	PortHi         Num `json:"port_hi"`
	TWReuse        Num `json:"tcp_tw_reuse"`
	FilesOpen      Num `json:"files_open"` // fs.file-nr, first field
	FilesMax       Num `json:"files_max"`  // fs.file-nr, third field
	MemAvailableKB Num `json:"mem_available_kb"`
	// TCPMemPressure and TCPMemMax: net.ipv4.tcp_mem's second and third
	// fields (pages; global, not per namespace), and the page size in KiB.
	TCPMemPressure Num `json:"tcp_mem_pressure_pages"`
	TCPMemMax      Num `json:"tcp_mem_max_pages"`
	PageKB         Num `json:"page_kb"`
	// CPUs its processes may use (nproc); facts read before it was
	// recorded have none, which is not a fact that went unread.
	CPUs Num `json:"cpus"`
	// Unreadable names the facts that could not be read.
	Unreadable []string `json:"unreadable"`
}

// Ports is the size of the ephemeral port range, when it was read.
func (h *Host) Ports() Num {
	if !h.PortLo.Known || !h.PortHi.Known {
		return Num{}
	}
	return known(h.PortHi.V - h.PortLo.V + 1)
}

// ParseFacts reads the KEY=VALUE lines of c10k_facts_script.
func ParseFacts(text string) Host {
	m := kv.ParseString(text, "=")
	h := Host{Unreadable: []string{}}
	field := func(key string, i int) Num {
		f := strings.Fields(m[key])
		if i >= len(f) {
			h.Unreadable = append(h.Unreadable, key)
			return Num{}
		}
		if f[i] == "unlimited" {
			return known(Unlimited)
		}
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || v < 0 {
			h.Unreadable = append(h.Unreadable, key)
			return Num{}
		}
		return known(v)
	}
	// recorded: the facts name key (facts read before it was recorded
	// have none: not unread).
	recorded := func(key string) bool { _, ok := m[key]; return ok }
	h.FDHard = field("fd_hard", 0)
	h.FDSoft = field("fd_soft", 0)
	h.Somaxconn = field("net.core.somaxconn", 0)
	h.SynBacklog = field("net.ipv4.tcp_max_syn_backlog", 0)
	h.Syncookies = field("net.ipv4.tcp_syncookies", 0)
	h.PortLo = field("net.ipv4.ip_local_port_range", 0)
	if h.PortLo.Known {
		h.PortHi = field("net.ipv4.ip_local_port_range", 1)
	}
	h.TWReuse = field("net.ipv4.tcp_tw_reuse", 0)
	h.FilesOpen = field("fs.file-nr", 0)
	if h.FilesOpen.Known {
		h.FilesMax = field("fs.file-nr", 2)
	}
	h.MemAvailableKB = field("mem_available_kb", 0)
	// Facts read before these were recorded have none: not unread.
	if recorded("net.ipv4.tcp_mem") {
		if h.TCPMemPressure = field("net.ipv4.tcp_mem", 1); h.TCPMemPressure.Known {
			h.TCPMemMax = field("net.ipv4.tcp_mem", 2)
		}
	}
	if recorded("pagesize") {
		if b := field("pagesize", 0); b.Known {
			h.PageKB = known(b.V / 1024)
		}
	}
	if recorded("cpus") {
		h.CPUs = field("cpus", 0)
	}
	return h
}

// ReadFacts reads a facts file.
func ReadFacts(path string) (Host, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Host{}, err
	}
	return ParseFacts(string(b)), nil
}

// MarshalIndent is the JSON of any plan document, with a final newline.
func MarshalIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
