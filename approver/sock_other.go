//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package approver

import (
	"errors"
	"net"
)

// listen is not available here: the socket's ownership rests on flock and
// Unix file modes.
func listen(string) (*net.UnixListener, func(), error) {
	return nil, nil, errors.New("the approver socket is not supported on this system; answer calls through the client's elicitation, or add allow rules")
}
