//go:build linux

package procstat

import (
	"os"
	"testing"
	"time"
)

func TestCPUTimeCountsWork(t *testing.T) {
	before, ok := CPUTime(os.Getpid())
	if !ok {
		t.Fatal("CPUTime of this process: not ok")
	}
	// Spin until the kernel has counted at least two ticks more.
	x := 0
	for start := time.Now(); ; x++ {
		if x%100000 == 0 {
			now, _ := CPUTime(os.Getpid())
			if now-before >= 20*time.Millisecond {
				break
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("a minute of spinning counted %v of processor time", now-before)
			}
		}
	}
	if _, ok := CPUTime(-1); ok {
		t.Error("CPUTime(-1): ok, want not ok")
	}
}

func TestPeakRSS(t *testing.T) {
	if n, ok := PeakRSS(os.Getpid()); !ok || n <= 0 {
		t.Errorf("PeakRSS of this process = %d, %v; want a positive size", n, ok)
	}
}
