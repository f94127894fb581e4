//go:build linux

// Package procstat reads what Linux's /proc says of a live process, for the
// benchmark programs that measure mcphost from outside.
package procstat

import (
	"os"
	"strconv"
	"strings"
)

// PeakRSS returns VmHWM, the peak resident set of the live process pid
// alone (not its children), in bytes; ok is false when it cannot be read.
func PeakRSS(pid int) (bytes int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest) // "12345 kB"
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024, true
				}
			}
		}
	}
	return 0, false
}
