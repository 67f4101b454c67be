package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Listen opens a TCP listener on addr ("ip:port"). With reusePort the socket
// gets SO_REUSEPORT before bind, so several processes (each listening with
// reusePort) can share the port and the kernel spreads connections across
// them.
//
// Bind errors a user can cause are explained: an address that is not on this
// host, a port already in use, a privileged port.
func Listen(ctx context.Context, addr string, reusePort bool) (net.Listener, error) {
	var lc net.ListenConfig
	if reusePort {
		if !ReusePortSupported {
			return nil, errors.New("-reuseport is not supported on this platform")
		}
		lc.Control = controlReusePort
	}
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, explainListenError(err, addr, reusePort)
	}
	return ln, nil
}

func explainListenError(err error, addr string, reusePort bool) error {
	host, port, _ := net.SplitHostPort(addr)
	switch {
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%w (is %s an address of this host? check `ip -br addr`)", err, host)
	case errors.Is(err, syscall.EADDRINUSE) && reusePort:
		return fmt.Errorf("%w (port %s is held by a socket without SO_REUSEPORT or by another user)", err, port)
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%w (is another server still running? processes can share a port only if every one uses -reuseport)", err)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("%w (port %s is privileged; use a port >= 1024)", err, port)
	}
	return err
}
