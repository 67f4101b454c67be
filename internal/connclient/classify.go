package connclient

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"csbench/internal/h1wire"
	"csbench/internal/h2wire"
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

	// Idle: a drop (never an error).
	causeUnexpected = "unexpected_data" // the server sent something unasked on an idle connection

	// HTTP/2 (idle -http 2).
	causeALPNNotH2   = "alpn_not_h2"  // TLS: the server did not choose h2 by ALPN (refused it, or chose another)
	causeHTTP1Answer = "http1_answer" // cleartext: the server answered the HTTP/2 preface in HTTP/1
	causeGoaway      = "goaway"       // GOAWAY before the response's end, or (a drop) during the hold
	causeRSTStream   = "rst_stream"   // RST_STREAM on the request's stream before the response's end
)

// Classify maps an error from dialing, writing or reading to one of the
// cause names above. It looks through wrapping (net.OpError,
// os.SyscallError, fmt.Errorf %w) with errors.Is.
func Classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, h2wire.ErrALPNNotH2):
		return causeALPNNotH2
	case errors.Is(err, h2wire.ErrHTTP1Answer):
		return causeHTTP1Answer
	case errors.Is(err, h2wire.ErrGoaway):
		return causeGoaway
	case errors.Is(err, h2wire.ErrRSTStream):
		return causeRSTStream
	case errors.Is(err, h2wire.ErrUnexpectedData):
		return causeUnexpected
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
	case errors.Is(err, h1wire.ErrBadResponse), errors.Is(err, h2wire.ErrBadResponse):
		return causeBadResponse
	case errors.Is(err, h1wire.ErrServerClose):
		return causeServerClose
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return causeTimeout
	}
	return causeOther
}
