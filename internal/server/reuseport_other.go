//go:build !linux || mips || mipsle || mips64 || mips64le

package server

import (
	"errors"
	"syscall"
)

// ReusePortSupported reports whether Listen can set SO_REUSEPORT here. The lab
// runs on Linux; elsewhere -reuseport is refused rather than half-supported.
const ReusePortSupported = false

func controlReusePort(network, address string, c syscall.RawConn) error {
	return errors.New("SO_REUSEPORT is not supported on this platform")
}
