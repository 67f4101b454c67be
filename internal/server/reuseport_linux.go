//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package server

import (
	"os"
	"syscall"
)

// ReusePortSupported reports whether Listen can set SO_REUSEPORT here.
const ReusePortSupported = true

// soReusePort is SO_REUSEPORT from <asm-generic/socket.h>. The frozen syscall
// package lacks it on linux/amd64, 386 and arm, so it is spelled out; the
// value differs on MIPS, which reuseport_other.go excludes.
const soReusePort = 0xf

func controlReusePort(network, address string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, soReusePort, 1)
	}); err != nil {
		return err
	}
	return os.NewSyscallError("setsockopt SO_REUSEPORT", serr)
}
