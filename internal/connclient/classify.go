package connclient

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Error causes, the keys of the "errors" object in the result.
const (
	causeAddrNotAvail = "eaddrnotavail" // no free local port / address for the source IP
	causeAddrInUse    = "eaddrinuse"    // bind conflict on the source address
	causeMFile        = "emfile"        // per-process fd limit (RLIMIT_NOFILE)
	causeNFile        = "enfile"        // system-wide fd limit (fs.file-max)
	causeRefused      = "econnrefused"  // RST to the SYN: nothing listening, or backlog policy
	causeReset        = "econnreset"    // RST on an established connection
	causeTimeout      = "etimedout"     // ETIMEDOUT, dial timeout or read/write deadline
	causePipe         = "epipe"         // write after the peer closed
	causeEOF          = "eof"           // peer closed before the whole response arrived
	causeBadResponse  = "bad_response"  // response this client cannot parse
	causeServerClose  = "server_close"  // response said "Connection: close" (idle mode)
	causeConnClosed   = "conn_closed"   // request assigned to a connection that had already failed
	causeCanceled     = "canceled"      // interrupted by SIGINT/SIGTERM
	causeStatus       = "status"        // lowrate: a complete response whose status is not 2xx
	causeOther        = "other"
)

// Classify maps an error from dialing, writing or reading to one of the
// cause names above. It looks through wrapping (net.OpError,
// os.SyscallError, fmt.Errorf %w) with errors.Is.
func Classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return causeAddrNotAvail
	case errors.Is(err, syscall.EADDRINUSE):
		return causeAddrInUse
	case errors.Is(err, syscall.EMFILE):
		return causeMFile
	case errors.Is(err, syscall.ENFILE):
		return causeNFile
	case errors.Is(err, syscall.ECONNREFUSED):
		return causeRefused
	case errors.Is(err, syscall.ECONNRESET):
		return causeReset
	case errors.Is(err, syscall.EPIPE):
		return causePipe
	case errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded):
		return causeTimeout
	case errors.Is(err, context.Canceled), errors.Is(err, net.ErrClosed):
		return causeCanceled
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return causeEOF
	case errors.Is(err, errBadResponse):
		return causeBadResponse
	case errors.Is(err, errServerClose):
		return causeServerClose
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return causeTimeout
	}
	return causeOther
}
