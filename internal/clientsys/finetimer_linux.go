package clientsys

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// fineTimer is a non-blocking timerfd read through the runtime poller, so a
// sleep ends when the kernel timer fires rather than at the next
// millisecond.
type fineTimer struct {
	f   *os.File
	fd  uintptr
	buf [8]byte
}

const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

func newFineTimer() (*fineTimer, error) {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("timerfd_create", errno)
	}
	f := os.NewFile(fd, "timerfd")
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		// Not registered with the poller: a read would block a thread and
		// could not be interrupted.
		f.Close()
		return nil, err
	}
	return &fineTimer{f: f, fd: fd}, nil
}

// sleep arms the timer d from now and waits for it to expire.
func (t *fineTimer) sleep(d time.Duration) error {
	spec := [2]syscall.Timespec{{}, syscall.NsecToTimespec(int64(d))} // interval 0, value d
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, t.fd, 0,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		return os.NewSyscallError("timerfd_settime", errno)
	}
	_, err := t.f.Read(t.buf[:])
	return err
}

// interrupt makes a pending and every later sleep return an error.
func (t *fineTimer) interrupt() { t.f.SetReadDeadline(time.Unix(1, 0)) }

func (t *fineTimer) close() { t.f.Close() }
