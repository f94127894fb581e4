//go:build !linux

package audit

import "os"

// syncData makes the file durable with (*os.File).Sync.
func syncData(f *os.File) error { return f.Sync() }
