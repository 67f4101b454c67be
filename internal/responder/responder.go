// Package responder is connclient responder: a trivial HTTP/1.1 server to
// measure the client against, cheaper per request than any real server: one event loop (level-triggered
// epoll, raw syscalls, one thread) answers every request head (bytes up to
// an empty line; no method, path or header is looked at) with one fixed
// response of -size bytes, precomputed. It is what "the engine's ceiling
// against a trivial responder" runs against (scripts/engine-bench.sh, and
// BenchmarkEngine in process). One loop, so it serves at most one CPU;
// with -spin it polls without ever sleeping, using that CPU whole, so that
// it is never the side that waits to be woken: against it the client's
// own costs set the pace.
package responder

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Server is the responder; Serve runs its loop.
type Server struct {
	lfd, epfd int
	wake      [2]int
	addr      netip.AddrPort
	resp      []byte // one response
	batch     []byte // responseBatch responses back to back
	conns     []rconn
	buf       []byte
	events    []syscall.EpollEvent
	served    atomic.Int64

	mu     sync.Mutex // orders stop and close: no write to a closed fd
	closed bool
}

// rconn is one connection of the responder, indexed by its fd.
type rconn struct {
	open  bool
	match uint8 // how much of "\r\n\r\n" the stream has ended with
	out   bool  // EPOLLOUT is on (a write was short)
	owed  int   // responses not yet written
	off   int   // bytes of the first owed response already written
}

const responseBatch = 64

// markWake marks the wake pipe's epoll event: not a connection's fd.
const markWake = -1

// responseFor is the fixed response with a body of size bytes.
func responseFor(size int) []byte {
	b := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
		strconv.Itoa(size) + "\r\n\r\n")
	for i := 0; i < size; i++ {
		b = append(b, 'a'+byte(i%26))
	}
	return b
}

// New listens on addr (port 0: any free port).
func New(addr netip.AddrPort, size int) (*Server, error) {
	r := &Server{lfd: -1, epfd: -1, wake: [2]int{-1, -1}, resp: responseFor(size),
		buf: make([]byte, 64<<10), events: make([]syscall.EpollEvent, 256)}
	for i := 0; i < responseBatch; i++ {
		r.batch = append(r.batch, r.resp...)
	}
	family, sa := sockaddrOf(addr)
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	r.lfd = fd
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		r.close()
		return nil, os.NewSyscallError("setsockopt", err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		r.close()
		return nil, fmt.Errorf("bind %v: %w", addr, err)
	}
	if err := syscall.Listen(fd, 4096); err != nil {
		r.close()
		return nil, os.NewSyscallError("listen", err)
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		r.close()
		return nil, os.NewSyscallError("getsockname", err)
	}
	switch a := got.(type) {
	case *syscall.SockaddrInet4:
		r.addr = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *syscall.SockaddrInet6:
		r.addr = netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	if r.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		r.epfd = -1
		r.close()
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.Pipe2(r.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		r.wake = [2]int{-1, -1}
		r.close()
		return nil, os.NewSyscallError("pipe2", err)
	}
	for _, ev := range []syscall.EpollEvent{{Events: syscall.EPOLLIN, Fd: markWake}, {Events: syscall.EPOLLIN, Fd: int32(fd)}} {
		fd := int(ev.Fd)
		if ev.Fd == markWake {
			fd = r.wake[0]
		}
		if err := syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			r.close()
			return nil, os.NewSyscallError("epoll_ctl", err)
		}
	}
	return r, nil
}

// sockaddrOf is addr as a syscall address and its family.
func sockaddrOf(addr netip.AddrPort) (int, syscall.Sockaddr) {
	if addr.Addr().Is4() {
		return syscall.AF_INET, &syscall.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}
	}
	return syscall.AF_INET6, &syscall.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()}
}

// Stop ends Serve (from any goroutine).
func (r *Server) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		syscall.Write(r.wake[1], []byte{1})
	}
}

// Serve answers requests until Stop; it closes everything when it returns.
// With spin it never sleeps: it polls (epoll timeout 0) round after
// round, so no request waits for the responder to be woken.
func (r *Server) Serve(spin bool) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer r.close()
	timeout := ^uintptr(0) // -1: wait for an event
	if spin {
		timeout = 0
	}
	for polls := 0; ; polls++ {
		// A raw wait, as the engine's (evloop.wait): the loop keeps its P
		// and yields it when a signal (sysmon's preemption) ends the wait;
		// spinning, it yields now and then.
		n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(r.epfd), uintptr(unsafe.Pointer(&r.events[0])),
			uintptr(len(r.events)), timeout, 0, 0)
		if errno == syscall.EINTR || (spin && polls%4096 == 0) {
			runtime.Gosched()
		}
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return os.NewSyscallError("epoll_pwait", errno)
		}
		for _, ev := range r.events[:n] {
			switch {
			case ev.Fd == markWake:
				return nil
			case int(ev.Fd) == r.lfd:
				r.accept()
			default:
				r.step(int(ev.Fd), ev.Events)
			}
		}
	}
}

func (r *Server) accept() {
	for {
		fd, _, err := syscall.Accept4(r.lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		if err != nil {
			return // EAGAIN, or an error of that one connection
		}
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		for fd >= len(r.conns) {
			r.conns = append(r.conns, rconn{})
		}
		r.conns[fd] = rconn{open: true}
		if err := syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			r.drop(fd)
		}
	}
}

// step reads what came on fd, counts the request heads and writes what is
// owed.
func (r *Server) step(fd int, events uint32) {
	c := &r.conns[fd]
	if !c.open {
		return
	}
	if events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		n, errno := rawIO(syscall.SYS_READ, int32(fd), r.buf)
		if n == 0 || (errno != 0 && errno != syscall.EAGAIN && errno != syscall.EINTR) {
			r.drop(fd)
			return
		}
		for _, b := range r.buf[:max(n, 0)] {
			c.match = headMatch(c.match, b)
			if c.match == 4 {
				c.owed++
				c.match = 0
			}
		}
	}
	r.flush(fd, c)
}

// headMatch advances the match of "\r\n\r\n" by byte b.
func headMatch(m uint8, b byte) uint8 {
	switch {
	case b == "\r\n\r\n"[m]:
		return m + 1
	case b == '\r':
		return 1
	default:
		return 0
	}
}

// flush writes the owed responses; a short write waits for EPOLLOUT.
func (r *Server) flush(fd int, c *rconn) {
	size := len(r.resp)
	for c.owed > 0 {
		k := min(c.owed, responseBatch)
		n, errno := rawIO(syscall.SYS_WRITE, int32(fd), r.batch[c.off:k*size])
		if errno == syscall.EINTR {
			continue
		}
		if errno == syscall.EAGAIN {
			break
		}
		if errno != 0 || n <= 0 {
			r.drop(fd)
			return
		}
		done := (c.off + n) / size
		c.owed -= done
		c.off = (c.off + n) % size
		r.served.Add(int64(done))
	}
	if want := c.owed > 0; want != c.out {
		c.out = want
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if want {
			ev.Events |= syscall.EPOLLOUT
		}
		syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_MOD, fd, &ev)
	}
}

func (r *Server) drop(fd int) {
	r.conns[fd] = rconn{}
	syscall.Close(fd)
}

func (r *Server) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for fd := range r.conns {
		if r.conns[fd].open {
			r.drop(fd)
		}
	}
	for _, fd := range []int{r.lfd, r.epfd, r.wake[0], r.wake[1]} {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
	r.lfd, r.epfd, r.wake = -1, -1, [2]int{-1, -1}
}

// Addr is the address the server listens on.
func (r *Server) Addr() netip.AddrPort { return r.addr }

// Served is the number of responses written so far.
func (r *Server) Served() int64 { return r.served.Load() }

// Event is a line the responder prints on stdout: "listening"
// once it accepts, "shutdown" once it has stopped.
type Event struct {
	Event    string `json:"event"`
	Addr     string `json:"addr"`
	PID      int    `json:"pid"`
	Size     int    `json:"size"`
	Spin     bool   `json:"spin"`
	Requests *int64 `json:"requests,omitempty"` // shutdown: responses written
}

// Run serves until ctx ends (SIGINT/SIGTERM).
func Run(ctx context.Context, addr netip.AddrPort, size int, spin bool, stdout, stderr io.Writer) error {
	r, err := New(addr, size)
	if err != nil {
		fmt.Fprintf(stderr, "error: responder: %v\n", err)
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.Encode(Event{Event: "listening", Addr: r.addr.String(), PID: os.Getpid(), Size: size, Spin: spin})
	stopWake := context.AfterFunc(ctx, r.Stop)
	defer stopWake()
	err = r.Serve(spin)
	served := r.served.Load()
	enc.Encode(Event{Event: "shutdown", Addr: r.addr.String(), PID: os.Getpid(), Size: size, Spin: spin, Requests: &served})
	if err != nil {
		fmt.Fprintf(stderr, "error: responder: %v\n", err)
	}
	return err
}

// rawIO is read(2) or write(2) (trap) on a non-blocking fd, as a raw
// syscall: it never blocks, so the runtime need not know (no P hand-off,
// no scheduler work per call). connclient's engine has the same.
func rawIO(trap uintptr, fd int32, b []byte) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(r), 0
}
