//go:build linux

// Package procstat reads what Linux's /proc says of a live process, for the
// benchmark programs that measure mcphost from outside.
package procstat

import (
	"os"
	"strconv"
	"strings"
	"time"
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

// CPUTime returns the processor time the live process pid has used so far,
// user and system, all its threads (not its children), from
// /proc/PID/stat; ok is false when it cannot be read. Linux counts it in
// clock ticks of 10 ms, so a difference is only as fine as that.
func CPUTime(pid int) (d time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count the fields from after its closing one.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// utime and stime are fields 14 and 15; f[0] is field 3.
	if len(f) < 13 {
		return 0, false
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	const userHZ = 100 // what /proc reports in, whatever the kernel's HZ
	return time.Duration(ticks) * (time.Second / userHZ), true
}
