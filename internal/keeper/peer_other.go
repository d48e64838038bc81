//go:build !linux

package keeper

import (
	"errors"
	"net"
)

// peerUID is not read outside Linux: there the keeper is not used
// (Supported), so a socket's peer is never trusted on the directory alone.
func peerUID(*net.UnixConn) (int, error) {
	return 0, errors.New("the peer's credentials are read on Linux only")
}
