package connclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/connresult"
)

// Burst mode (Phase 4): -conns connects issued at once, as fast as one
// thread can call connect(), against the server's listen backlog. The
// sockets are non-blocking and watched by one epoll set on one thread (no
// goroutine per pending connect); each carries one GET with Connection:
// close once connected, and is done when the server's response and FIN
// have come. A connection whose final ACK the server dropped (accept queue
// full: ListenOverflows) looks established to the client; its request
// waits for the server's SYN-ACK retransmission, 1 s, 3 s, 7 s ... after the
// SYN, which shows as steps in the response latency (Steps). Sockets close
// with SO_LINGER=0 so the burst leaves no TIME_WAIT on the client.

type bconn struct {
	t0        time.Time
	connected bool
	head      []byte // the first bytes of the response
}

type burst struct {
	cfg          *config
	res          *connresult.BurstResult
	connect, lat connresult.Histogram
	errors       map[string]uint64
	status       map[int]uint64
	epfd         int
	conns        map[int32]*bconn
	req          []byte
	buf          [4096]byte
}

func runBurst(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	started := time.Now()
	res := &connresult.BurstResult{Header: newHeader(cfg, started), Path: cfg.path, ConnsTarget: cfg.conns,
		Errors: map[string]uint64{}, StatusCodes: map[string]uint64{}}
	b := &burst{cfg: cfg, res: res, errors: map[string]uint64{}, status: map[int]uint64{},
		conns: make(map[int32]*bconn, cfg.conns), req: buildCloseRequest(cfg.target.String(), cfg.path)}
	// epoll_wait blocks its thread: keep this goroutine on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		fmt.Fprintf(stderr, "error: epoll_create1: %v\n", err)
		return err
	}
	b.epfd = epfd
	defer syscall.Close(epfd)
	b.issue(ctx)
	res.IssueS = round(time.Since(started).Seconds(), 6)
	b.wait(ctx, started.Add(cfg.timeout))
	for fd := range b.conns { // no response within the timeout
		res.ConnsNeverUp++
		cause := causeTimeout
		if ctx.Err() != nil {
			cause = causeCanceled
		}
		b.fail(fd, syscall.Errno(0), cause)
	}
	res.ConnectLatencyP50 = connresult.QuantileMs(&b.connect, 0.50)
	res.ConnectLatencyP99 = connresult.QuantileMs(&b.connect, 0.99)
	res.ConnectLatencyMax = connresult.QuantileMs(&b.connect, 1)
	res.LatencyP50Ms = connresult.QuantileMs(&b.lat, 0.50)
	res.LatencyP90Ms = connresult.QuantileMs(&b.lat, 0.90)
	res.LatencyP99Ms = connresult.QuantileMs(&b.lat, 0.99)
	res.LatencyMaxMs = connresult.QuantileMs(&b.lat, 1)
	addCounts(res.Errors, b.errors)
	addStatus(res.StatusCodes, b.status)
	res.Histograms = map[string]*connresult.Dump{"connect": b.connect.Dump(), "latency": b.lat.Dump()}
	return finishDoc(ctx, &res.Header, res, stdout, stderr)
}

// issue opens every socket and calls connect() on it, back to back.
func (b *burst) issue(ctx context.Context) {
	family := syscall.AF_INET
	var sa syscall.Sockaddr
	ap := b.cfg.target
	if ap.Addr().Is4() {
		sa = &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	var local syscall.Sockaddr
	if src := b.cfg.source; src.IsValid() {
		if src.Is4() {
			local = &syscall.SockaddrInet4{Addr: src.As4()}
		} else {
			local = &syscall.SockaddrInet6{Addr: src.As16()}
		}
	}
	for i := 0; i < b.cfg.conns && ctx.Err() == nil; i++ {
		b.res.ConnsAttempted++
		fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			b.count(os.NewSyscallError("socket", err))
			continue
		}
		err = syscall.SetsockoptLinger(fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0})
		if err == nil && local != nil {
			if err = syscall.SetsockoptInt(fd, syscall.IPPROTO_IP, clientsys.IPBindAddressNoPort, 1); err == nil {
				err = syscall.Bind(fd, local)
			}
		}
		t0 := time.Now()
		if err == nil {
			err = syscall.Connect(fd, sa)
			if err == syscall.EINPROGRESS {
				err = nil
			}
		}
		if err == nil {
			err = syscall.EpollCtl(b.epfd, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLOUT, Fd: int32(fd)})
		}
		if err != nil {
			syscall.Close(fd)
			b.count(os.NewSyscallError("connect", err))
			continue
		}
		b.conns[int32(fd)] = &bconn{t0: t0}
	}
}

// wait drives every socket until it is done or the deadline.
func (b *burst) wait(ctx context.Context, deadline time.Time) {
	events := make([]syscall.EpollEvent, 256)
	for len(b.conns) > 0 && ctx.Err() == nil {
		ms := time.Until(deadline).Milliseconds()
		if ms <= 0 {
			return
		}
		n, err := syscall.EpollWait(b.epfd, events, int(min(ms, 100)))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			if c := b.conns[ev.Fd]; c != nil {
				b.step(ev.Fd, c)
			}
		}
	}
}

// step moves one socket on: connected -> request written -> response read.
func (b *burst) step(fd int32, c *bconn) {
	now := time.Now()
	if !c.connected {
		soerr, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err == nil && soerr != 0 {
			err = syscall.Errno(soerr)
		}
		if err != nil {
			b.fail(fd, err, "")
			return
		}
		c.connected = true
		b.res.ConnsEstablished++
		b.connect.Record(now.Sub(c.t0).Microseconds())
		if n, err := syscall.Write(int(fd), b.req); err != nil || n != len(b.req) {
			if err == nil {
				err = syscall.EAGAIN
			}
			b.fail(fd, err, "")
			return
		}
		if err := syscall.EpollCtl(b.epfd, syscall.EPOLL_CTL_MOD, int(fd), &syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: fd}); err != nil {
			b.fail(fd, err, "")
		}
		return
	}
	for {
		n, err := syscall.Read(int(fd), b.buf[:])
		if n > 0 {
			if len(c.head) < 16 {
				c.head = append(c.head, b.buf[:min(n, 16-len(c.head))]...)
			}
			continue
		}
		if err == syscall.EAGAIN || err == syscall.EINTR {
			return
		}
		if err != nil {
			b.fail(fd, err, "")
			return
		}
		// EOF: the response is complete.
		status := parseStatus(c.head)
		if status == 0 {
			b.fail(fd, nil, causeBadResponse)
			return
		}
		b.status[status]++
		d := now.Sub(c.t0)
		b.lat.Record(d.Microseconds())
		b.res.Steps.Add(d)
		b.res.ConnsCompleted++
		b.drop(fd)
		return
	}
}

// parseStatus reads NNN of "HTTP/1.x NNN", or 0.
func parseStatus(head []byte) int {
	if len(head) < 12 || !bytes.HasPrefix(head, []byte("HTTP/1.")) {
		return 0
	}
	n, err := strconv.Atoi(string(head[9:12]))
	if err != nil {
		return 0
	}
	return n
}

func (b *burst) drop(fd int32) {
	syscall.Close(int(fd)) // also removes it from the epoll set
	delete(b.conns, fd)
}

// fail accounts the socket fd as failed with err (or cause) and closes it.
func (b *burst) fail(fd int32, err error, cause string) {
	if cause == "" {
		cause = Classify(os.NewSyscallError("socket", err))
	}
	b.errors[cause]++
	b.res.ConnsFailed++
	b.drop(fd)
}

// count accounts a connect that never got a socket in the epoll set.
func (b *burst) count(err error) {
	b.errors[Classify(err)]++
	b.res.ConnsFailed++
}
