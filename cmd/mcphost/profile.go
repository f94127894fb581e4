package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes a CPU profile of the whole run to the file named by
// MCPHOST_CPUPROFILE and a heap profile at the end to the file named by
// MCPHOST_MEMPROFILE. They are for measuring mcphost itself (see the
// README's Performance section), not for users, so they are not flags.
// With neither set it does nothing but read two variables.
func startProfiles(getenv func(string) string, stderr io.Writer) (stop func()) {
	cpu, mem := getenv("MCPHOST_CPUPROFILE"), getenv("MCPHOST_MEMPROFILE")
	if cpu == "" && mem == "" {
		return func() {}
	}
	if mem != "" {
		// The default rate samples one allocation per 512 KiB, too coarse
		// for a run that allocates a few MiB in all.
		runtime.MemProfileRate = 4096
	}
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "mcphost: warning: MCPHOST_CPUPROFILE: %v\n", err)
		} else {
			cpuFile = f
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			_ = cpuFile.Close()
		}
		if mem == "" {
			return
		}
		f, err := os.Create(mem)
		if err == nil {
			runtime.GC() // the profile shows live objects as of the last GC
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "mcphost: warning: MCPHOST_MEMPROFILE: %v\n", err)
		}
	}
}
