//go:build !linux

package ui

import "time"

// threadCPU is not measured here; the CPU figures then read zero.
func threadCPU() time.Duration { return 0 }
