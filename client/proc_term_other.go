//go:build !unix

package client

// termProcessGroup does nothing without process groups: closing the
// connection ends the server (the transport signals it, then kills it).
func termProcessGroup(pid int) {}
