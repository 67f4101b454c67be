package connclient

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"csbench/internal/connresult"
	"csbench/internal/h1wire"
)

// The event-loop engine of lowrate (cleartext): one event loop per CPU the
// process may use (GOMAXPROCS, or -loops), each a goroutine locked to its
// thread that owns a share of the connections and of the schedule, as wrk
// does in C. A loop waits in epoll_pwait2 (nanosecond timeout) for the next
// due time or an event on its sockets, registered once, edge-triggered;
// reads and writes are non-blocking syscalls on the bare fds, the request is
// precomputed, responses are parsed incrementally (h1wire.Parser) from one
// read buffer per loop, and nothing is allocated per request.
//
// Schedule: request i (global) is due at start + i/rps and belongs to loop
// i mod loops. A due request takes the connection of its loop that has been
// idle longest (a FIFO, so with every connection idle the requests go round
// robin); when every connection of the loop is busy it waits, counted once
// in requests_late_pool_busy (the pool was too small, not the server too
// slow), and is sent on the next connection to come free: its latency
// still counts from its due time. The loop's requests are sent in due
// order, so the waiting ones are just a range of the schedule: no queue.
//
// A connection that fails (an error, a timeout, a response without
// keep-alive) is closed and leaves the pool; requests go on over the
// others, and fail as conn_closed at their due time only once the loop has
// no connection left. A connection closed by the server while idle leaves
// the pool too, counted in connection_drops.

// timerfd_create's clock and flags (the loop's timer without
// epoll_pwait2; clientsys's Sleeper makes its timerfd the same way).
const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

// sysEpollPwait2 is epoll_pwait2's number, the same on every architecture
// (Linux 5.11); the syscall package does not name it.
const sysEpollPwait2 = 441

// Connection states in a loop.
const (
	connIdle = iota
	connBusy
	connDead
)

// epollET is EPOLLET as the uint32 an EpollEvent holds (the syscall
// package declares it negative).
const epollET = 1 << 31

// Marks in an epoll event's data for what is not a connection.
const (
	markWake  = -1 // the loop's wake pipe (interrupt)
	markTimer = -2 // the timerfd (only without epoll_pwait2)
)

// engineReadBuf is one loop's read buffer: a read that fills it is followed
// by another, a shorter one drained the socket.
const engineReadBuf = 64 << 10

// engineSpec is what every loop of one run shares.
type engineSpec struct {
	req      []byte
	rps      int
	n        int64         // requests scheduled over all loops
	duration time.Duration // of the schedule, cut into tenths (connresult.Tenths)
	timeout  time.Duration // of each response, from its send
	drainEnd time.Duration // > 0: no request is sent after start + drainEnd
}

// engine is one run of the schedule over fds.
type engine struct {
	spec    engineSpec
	base    time.Time // the loops' clock counts nanoseconds from base
	startNs int64     // when request 0 is due, on that clock
	loops   []*evloop
	stop    atomic.Bool
	// closeAt: when the schedule is over before it, the connections stay
	// open until then (-close-late); zero: closed at once. loopsDone, if
	// set, is called when the loops have ended, before that wait.
	closeAt   time.Time
	loopsDone func()

	mu     sync.Mutex // orders interrupt and close: no write to a closed fd
	closed bool
}

// econn is one connection of a loop.
type econn struct {
	fd         int32
	state      uint8
	wrOff      int32 // bytes of the request written
	prev, next int32 // the loop's busy list, in send order (-1: none)
	due, sent  int64 // of the request in flight, on the loop's clock
	p          h1wire.Parser
}

// evloop is one event loop and everything it counts; only its goroutine
// touches it while it runs, except the atomics (read by the progress line)
// and errors (under mu).
type evloop struct {
	e      *engine
	id, of int // loop id of `of` loops
	epfd   int
	wake   [2]int // pipe: a byte written to wake[1] interrupts the wait
	timer  int    // timerfd when epoll_pwait2 is missing, else -1
	pwait2 bool

	conns              []econn
	idle               []int32 // FIFO ring of idle connection indexes
	idleHead, idleN    int
	busyHead, busyTail int32
	live               int // connections not dead

	nk    int64 // requests of this loop
	sentK int64 // the loop's requests before sentK are sent (or failed)
	markK int64 // ... and those before markK were checked for pool-busy

	buf    []byte
	events []syscall.EpollEvent
	ts     syscall.Timespec

	sent, completed, failed, poolBusy atomic.Int64

	lat, svc, lag connresult.Histogram
	// own is the lag of the requests that found an idle connection when
	// due: the engine's own lateness, without the waits for a connection.
	own       connresult.Histogram
	tenths    connresult.TenthsRecorder // the 2xx answers by slice of the schedule
	status200 uint64
	status    map[int]uint64
	drops     map[string]uint64
	lastDone  int64 // on the loop's clock; 0: none
	alive     int

	err error         // why the loop stopped before its end (epoll failed)
	cpu time.Duration // the loop thread's CPU time (user + system) while it ran

	mu     sync.Mutex
	errors map[string]uint64
}

// usePwait2 is false when epoll_pwait2 is missing (ENOSYS: Linux < 5.11)
// and the loops wait with a timerfd instead; tests clear it to check that
// path.
var usePwait2 = true

// newEngine splits fds over nloops loops (connection j to loop j mod
// nloops) and registers them. fds are the engine's from here on: it closes
// them, also when newEngine fails.
func newEngine(spec engineSpec, fds []int, nloops int) (*engine, error) {
	nloops = max(1, min(nloops, len(fds)))
	e := &engine{spec: spec}
	for id := 0; id < nloops; id++ {
		l := &evloop{e: e, id: id, of: nloops, epfd: -1, wake: [2]int{-1, -1}, timer: -1, pwait2: usePwait2,
			busyHead: -1, busyTail: -1, status: map[int]uint64{}, drops: map[string]uint64{}, errors: map[string]uint64{},
			tenths: connresult.NewTenthsRecorder(spec.duration)}
		if g := spec.n; g > int64(id) {
			l.nk = (g - int64(id) + int64(nloops) - 1) / int64(nloops)
		}
		e.loops = append(e.loops, l)
	}
	for j, fd := range fds {
		l := e.loops[j%nloops]
		l.conns = append(l.conns, econn{fd: int32(fd), prev: -1, next: -1})
	}
	for _, l := range e.loops {
		if err := l.setup(); err != nil {
			e.close()
			return nil, err
		}
	}
	return e, nil
}

func (l *evloop) setup() error {
	l.idle = make([]int32, len(l.conns))
	l.buf = make([]byte, engineReadBuf)
	l.events = make([]syscall.EpollEvent, 256)
	l.live = len(l.conns)
	var err error
	if l.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		l.epfd = -1
		return os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.Pipe2(l.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		l.wake = [2]int{-1, -1}
		return os.NewSyscallError("pipe2", err)
	}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, l.wake[0],
		&syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: markWake}); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	for i := range l.conns {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | epollET, Fd: int32(i)}
		if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, int(l.conns[i].fd), &ev); err != nil {
			return os.NewSyscallError("epoll_ctl", err)
		}
		l.pushIdle(int32(i))
	}
	if !l.pwait2 {
		if err := l.addTimer(); err != nil {
			return err
		}
	}
	return l.drain()
}

// drain takes the events the sockets have from being added (every one is
// writable, some may be closed) before the schedule, not at its first due
// time: at C1M, 19,600 a loop in 51 processes at once delayed the first
// second's requests by 0.8 s.
func (l *evloop) drain() error {
	for {
		n, err := l.wait(0)
		if err != nil {
			return err
		}
		for i := range l.events[:n] {
			l.handle(&l.events[i])
		}
		if n < len(l.events) {
			return nil
		}
	}
}

// close releases every fd of every loop.
func (e *engine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, l := range e.loops {
		for i := range l.conns {
			if l.conns[i].state != connDead {
				syscall.Close(int(l.conns[i].fd))
				l.conns[i].state = connDead
			}
		}
		for _, fd := range []int{l.epfd, l.wake[0], l.wake[1], l.timer} {
			if fd >= 0 {
				syscall.Close(fd)
			}
		}
		l.epfd, l.wake, l.timer = -1, [2]int{-1, -1}, -1
	}
}

// now is the loops' clock: monotonic nanoseconds since base.
func (e *engine) now() int64 { return int64(time.Since(e.base)) }

// run drives the schedule, request 0 due at start, and returns when every
// request is answered or failed, or ctx ended. It closes every fd.
func (e *engine) run(ctx context.Context, start time.Time) {
	e.base = time.Now()
	e.startNs = int64(start.Sub(e.base))
	stopWake := context.AfterFunc(ctx, e.interrupt)
	defer stopWake()
	var wg sync.WaitGroup
	for _, l := range e.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.run()
		}()
	}
	wg.Wait()
	if e.loopsDone != nil {
		e.loopsDone()
	}
	if wait := time.Until(e.closeAt); wait > 0 && !e.stop.Load() {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	e.close()
}

// interrupt stops every loop at its next turn.
func (e *engine) interrupt() {
	e.stop.Store(true)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	for _, l := range e.loops {
		syscall.Write(l.wake[1], []byte{1})
	}
}

func (l *evloop) run() {
	// Never unlocked: the thread, whose timer slack is changed, ends with
	// the goroutine.
	runtime.LockOSThread()
	setTimerSlack()
	cpu0 := threadCPU() // the thread may have run other goroutines before
	e := l.e
	for !e.stop.Load() {
		now := e.now()
		l.expire(now)
		l.dispatch(now)
		if l.sentK >= l.nk && l.busyHead < 0 {
			break
		}
		n, err := l.wait(l.nextWake(now))
		if err != nil {
			l.err = err
			break
		}
		for i := range l.events[:n] {
			l.handle(&l.events[i])
		}
	}
	l.end()
	l.cpu = threadCPU() - cpu0
}

// threadCPU is the calling thread's CPU time so far (RUSAGE_THREAD).
func threadCPU() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dueNs is when the loop's k-th request is due.
func (l *evloop) dueNs(k int64) int64 {
	return l.e.startNs + int64(offset(int64(l.id)+k*int64(l.of), l.e.spec.rps))
}

// dueBy is how many of the loop's requests are due at t.
func (l *evloop) dueBy(t int64) int64 {
	g := dueCount(time.Duration(t-l.e.startNs), l.e.spec.rps)
	if g <= int64(l.id) {
		return 0
	}
	return min(l.nk, (g-int64(l.id)+int64(l.of)-1)/int64(l.of))
}

// dueCount is how many events of a schedule at rate are due at t (offset
// <= t).
func dueCount(t time.Duration, rate int) int64 {
	if t < 0 {
		return 0
	}
	r := int64(rate)
	c := int64(t/time.Second)*r + int64(t%time.Second)*r/int64(time.Second)
	for c > 0 && offset(c-1, rate) > t {
		c--
	}
	for offset(c, rate) <= t {
		c++
	}
	return c
}

// dispatch sends every due request it has an idle connection for.
func (l *evloop) dispatch(now int64) {
	spec := &l.e.spec
	if spec.drainEnd > 0 && l.sentK < l.nk && now > l.e.startNs+int64(spec.drainEnd) {
		l.nk = l.sentK // too late to send: the rest is unsent
	}
	for l.sentK < l.nk {
		due := l.dueNs(l.sentK)
		if due > now {
			return
		}
		if l.live == 0 {
			l.addError(causeConnClosed)
			l.failed.Add(1)
			l.sentK++
			continue
		}
		if l.idleN == 0 {
			// Every connection is busy: the due requests wait, each
			// counted once.
			if k, d := max(l.markK, l.sentK), l.dueBy(now); d > k {
				l.poolBusy.Add(d - k)
				l.markK = d
			}
			return
		}
		now = l.send(l.popIdle(), due, l.sentK < l.markK)
		l.sentK++
	}
}

// send writes a request due at due on connection c and returns the send
// time; waited says the request was counted in poolBusy.
func (l *evloop) send(c int32, due int64, waited bool) int64 {
	cn := &l.conns[c]
	sent := l.e.now()
	cn.state, cn.due, cn.sent, cn.wrOff = connBusy, due, sent, 0
	cn.p.Reset()
	l.lag.Record((sent - due) / 1000)
	if !waited {
		l.own.Record((sent - due) / 1000)
	}
	l.sent.Add(1)
	l.busyPush(c)
	l.write(c)
	return sent
}

// write goes on writing the request on c; on EAGAIN the rest waits for
// EPOLLOUT.
func (l *evloop) write(c int32) {
	cn := &l.conns[c]
	req := l.e.spec.req
	for int(cn.wrOff) < len(req) {
		n, errno := rawIO(syscall.SYS_WRITE, cn.fd, req[cn.wrOff:])
		switch {
		case n > 0:
			cn.wrOff += int32(n)
		case errno == syscall.EINTR:
		case errno == syscall.EAGAIN:
			return
		default:
			if errno == 0 {
				errno = syscall.EPIPE // a write of 0 bytes: nothing more will go
			}
			l.failConn(c, os.NewSyscallError("write", errno))
			return
		}
	}
}

func (l *evloop) handle(ev *syscall.EpollEvent) {
	switch ev.Fd {
	case markWake:
		var b [8]byte
		syscall.Read(l.wake[0], b[:])
		return
	case markTimer:
		var b [8]byte
		syscall.Read(l.timer, b[:])
		return
	}
	c := ev.Fd
	cn := &l.conns[c]
	readable := ev.Events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLERR|syscall.EPOLLHUP) != 0
	switch cn.state {
	case connBusy:
		if int(cn.wrOff) < len(l.e.spec.req) && ev.Events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			l.write(c)
		}
		if readable && cn.state == connBusy {
			l.read(c)
		}
	case connIdle:
		if readable {
			l.checkIdle(c)
		}
	}
}

// read reads and parses what came on busy connection c.
func (l *evloop) read(c int32) {
	cn := &l.conns[c]
	for {
		n, errno := rawIO(syscall.SYS_READ, cn.fd, l.buf)
		switch {
		case n > 0:
			k, done, perr := cn.p.Feed(l.buf[:n])
			if perr != nil {
				l.failConn(c, perr)
				return
			}
			if done {
				if k < n {
					l.failConn(c, fmt.Errorf("%w: %d unexpected bytes after the response", h1wire.ErrBadResponse, n-k))
					return
				}
				l.complete(c)
				return
			}
			if n < len(l.buf) {
				return // drained: more bytes come with a new edge
			}
		case n == 0:
			if done, err := cn.p.EOF(); done {
				l.complete(c)
			} else {
				l.failConn(c, err)
			}
			return
		case errno == syscall.EINTR:
		case errno == syscall.EAGAIN:
			return
		default:
			l.failConn(c, os.NewSyscallError("read", errno))
			return
		}
	}
}

// rawIO is read(2) or write(2) (trap) on a non-blocking fd, as a raw
// syscall: it never blocks, so the runtime need not know (no P hand-off,
// no scheduler work per call).
func rawIO(trap uintptr, fd int32, b []byte) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(r), 0
}

// complete accounts the response on c: a success for 2xx, an error of
// cause "status" for any other status; the connection goes back to the
// pool unless the response ends it.
func (l *evloop) complete(c int32) {
	cn := &l.conns[c]
	done := l.e.now()
	l.busyRemove(c)
	st := cn.p.Status()
	if st == 200 {
		l.status200++
	} else {
		l.status[st]++
	}
	if st < 200 || st > 299 {
		l.addError(causeStatus)
		l.failed.Add(1)
	} else {
		l.lat.Record((done - cn.due) / 1000)
		l.svc.Record((done - cn.sent) / 1000)
		l.tenths.Record(time.Duration(cn.due-l.e.startNs), time.Duration(done-l.e.startNs))
		l.lastDone = max(l.lastDone, done)
		l.completed.Add(1)
	}
	switch {
	case int(cn.wrOff) < len(l.e.spec.req): // answered before the request was all sent
		l.drop(c, causeBadResponse)
	case !cn.p.KeepAlive():
		l.drop(c, causeServerClose)
	default:
		cn.state = connIdle
		l.pushIdle(c)
	}
	// A request waiting for a connection goes out now, on this one, as wrk
	// sends its next request from the response handler.
	l.dispatch(done)
}

// failConn fails the request in flight on c with err and closes c.
func (l *evloop) failConn(c int32, err error) {
	l.busyRemove(c)
	cause := Classify(err)
	if l.e.stop.Load() {
		cause = causeCanceled
	}
	l.addError(cause)
	l.failed.Add(1)
	l.closeConn(c)
}

// checkIdle looks at an event on idle connection c: the server closed it or
// sent something unasked (c leaves the pool), or nothing (a spurious edge).
func (l *evloop) checkIdle(c int32) {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(l.conns[c].fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
	case err != nil:
		l.drop(c, Classify(os.NewSyscallError("recvfrom", err)))
	case n == 0:
		l.drop(c, causeEOF)
	default:
		l.drop(c, "unexpected_data")
	}
}

// drop takes idle (or just answered) connection c out of the pool, closed.
func (l *evloop) drop(c int32, cause string) {
	if l.conns[c].state == connIdle {
		l.removeIdle(c)
	}
	l.drops[cause]++
	l.closeConn(c)
}

func (l *evloop) closeConn(c int32) {
	syscall.Close(int(l.conns[c].fd))
	l.conns[c].state = connDead
	l.live--
}

// expire fails the requests that have waited -timeout for their response.
func (l *evloop) expire(now int64) {
	for l.busyHead >= 0 && now-l.conns[l.busyHead].sent >= int64(l.e.spec.timeout) {
		l.failConn(l.busyHead, syscall.ETIMEDOUT)
	}
}

// nextWake returns how long the loop may wait for events: until the next
// due request if a connection is idle (or none is left), the oldest
// response's timeout, the drain's end; -1 for no bound.
func (l *evloop) nextWake(now int64) int64 {
	wake := int64(math.MaxInt64)
	if l.sentK < l.nk {
		if l.idleN > 0 || l.live == 0 {
			wake = l.dueNs(l.sentK)
		} else if d := l.e.spec.drainEnd; d > 0 {
			wake = l.e.startNs + int64(d) + 1
		}
	}
	if l.busyHead >= 0 {
		wake = min(wake, l.conns[l.busyHead].sent+int64(l.e.spec.timeout))
	}
	if wake == math.MaxInt64 {
		return -1
	}
	return max(wake-now, 0)
}

// wait waits up to timeout ns (-1: no bound) for events.
//
// The wait is a raw syscall, which the runtime does not see: the loop's
// goroutine keeps its P (its CPU) while it waits, as an event loop in C
// would. Through syscall.Syscall the runtime's sysmon would take the P
// away every 20 µs of waiting and the loop would have to win it back after
// each wake-up, which cost more CPU than the I/O itself. Other goroutines
// (progress, signals, a garbage collection's stop) still run: sysmon
// preempts a P held for 10 ms, its signal ends the wait with EINTR, and
// the loop yields (runtime.Gosched); so does any other signal.
func (l *evloop) wait(timeout int64) (int, error) {
	for {
		var r uintptr
		var errno syscall.Errno
		if l.pwait2 {
			var ts unsafe.Pointer
			if timeout >= 0 {
				l.ts = syscall.NsecToTimespec(timeout)
				ts = unsafe.Pointer(&l.ts)
			}
			r, _, errno = syscall.RawSyscall6(sysEpollPwait2, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])),
				uintptr(len(l.events)), uintptr(ts), 0, 0)
			if errno == syscall.ENOSYS {
				l.pwait2 = false
				if err := l.addTimer(); err != nil {
					return 0, err
				}
				continue
			}
		} else {
			r, errno = l.waitTimer(timeout)
		}
		switch errno {
		case 0:
			return int(r), nil
		case syscall.EINTR:
			runtime.Gosched()
			return 0, nil
		default:
			return 0, os.NewSyscallError("epoll_wait", errno)
		}
	}
}

// addTimer adds a timerfd to the loop's epoll set, for waits shorter than
// epoll_wait's millisecond.
func (l *evloop) addTimer() error {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return os.NewSyscallError("timerfd_create", errno)
	}
	l.timer = int(fd)
	return syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, l.timer, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: markTimer})
}

// waitTimer is wait without epoll_pwait2 (Linux < 5.11): epoll_pwait
// counts milliseconds, so a bounded wait arms the timerfd.
func (l *evloop) waitTimer(timeout int64) (uintptr, syscall.Errno) {
	ms := -1
	if timeout == 0 {
		ms = 0
	} else if timeout > 0 {
		spec := [2]syscall.Timespec{{}, syscall.NsecToTimespec(timeout)}
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(l.timer), 0,
			uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
			return 0, errno
		}
	}
	r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])),
		uintptr(len(l.events)), uintptr(ms), 0, 0)
	return r, errno
}

// end closes the loop's books: requests still in flight (an interruption,
// or the loop's own failure) fail as canceled or with that failure; after a
// whole schedule the connections left are peeked at, those still open
// counted alive.
func (l *evloop) end() {
	if l.e.stop.Load() || l.err != nil {
		for l.busyHead >= 0 {
			l.failConn(l.busyHead, cmp.Or(l.err, context.Canceled))
		}
		return
	}
	for i := range l.conns {
		if l.conns[i].state != connDead {
			l.checkIdle(int32(i))
			if l.conns[i].state != connDead {
				l.alive++
			}
		}
	}
}

func (l *evloop) addError(cause string) {
	l.mu.Lock()
	l.errors[cause]++
	l.mu.Unlock()
}

// The idle FIFO.

func (l *evloop) pushIdle(c int32) {
	l.idle[(l.idleHead+l.idleN)%len(l.idle)] = c
	l.idleN++
}

func (l *evloop) popIdle() int32 {
	c := l.idle[l.idleHead]
	l.idleHead = (l.idleHead + 1) % len(l.idle)
	l.idleN--
	return c
}

// removeIdle takes c out of the FIFO wherever it is (rare: a drop).
func (l *evloop) removeIdle(c int32) {
	k := 0
	for j := 0; j < l.idleN; j++ {
		x := l.idle[(l.idleHead+j)%len(l.idle)]
		if x != c {
			l.idle[(l.idleHead+k)%len(l.idle)] = x
			k++
		}
	}
	l.idleN = k
}

// The busy list, in send order: its head is the oldest request in flight.

func (l *evloop) busyPush(c int32) {
	cn := &l.conns[c]
	cn.prev, cn.next = l.busyTail, -1
	if l.busyTail >= 0 {
		l.conns[l.busyTail].next = c
	} else {
		l.busyHead = c
	}
	l.busyTail = c
}

func (l *evloop) busyRemove(c int32) {
	cn := &l.conns[c]
	if cn.prev >= 0 {
		l.conns[cn.prev].next = cn.next
	} else {
		l.busyHead = cn.next
	}
	if cn.next >= 0 {
		l.conns[cn.next].prev = cn.prev
	} else {
		l.busyTail = cn.prev
	}
	cn.prev, cn.next = -1, -1
}

// setTimerSlack asks for wake-ups on time rather than up to 50 µs late
// (PR_SET_TIMERSLACK, this thread only).
func setTimerSlack() {
	const prSetTimerslack = 29
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
}

// handOver takes the fds out of conns for the engine: each socket's fd is
// duplicated (so the Go runtime's poller, which closes its own fd with the
// net.TCPConn, never sees it again) and the net.TCPConn closed. The socket
// options (-linger0) stay with the socket. A connection whose fd cannot be
// duplicated is closed and counted in drops.
func handOver(conns []held, drops map[string]uint64) []int {
	fds := make([]int, 0, len(conns))
	for _, h := range conns {
		nfd, err := -1, error(nil)
		if cerr := h.rc.Control(func(fd uintptr) {
			r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0)
			if errno != 0 {
				err = os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", errno)
				return
			}
			nfd = int(r)
		}); cerr != nil {
			err = cerr
		}
		h.c.Close()
		if err != nil {
			drops[Classify(err)]++
			continue
		}
		fds = append(fds, nfd)
	}
	return fds
}
