package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
)

type pingOptions struct {
	Server   string // the SERVER argument
	Count    int
	Interval time.Duration
	JSON     bool
}

func newPingCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &pingOptions{}
	cmd := &cobra.Command{
		Use:   "ping SERVER",
		Short: "Measure a server's round-trip time with MCP pings",
		Long: `Start one server and send it MCP pings (the protocol's "ping" request, which
runs no tool), one after another, and report each round trip and the minimum,
median and maximum. The time to start the server is reported on its own.

Exits 1 when a ping fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Server = args[0]
			return runPing(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().IntVarP(&o.Count, "count", "c", 10, "how many pings (1 to 10000)")
	cmd.Flags().DurationVar(&o.Interval, "interval", 0, "wait `DURATION` between pings")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// pingJSON is the stable --json shape of a ping run; durations are in
// microseconds.
type pingJSON struct {
	Server    string  `json:"server"`
	StartUS   int64   `json:"startMicros"`
	Count     int     `json:"count"`
	MinUS     int64   `json:"minMicros"`
	MedianUS  int64   `json:"medianMicros"`
	MaxUS     int64   `json:"maxMicros"`
	RoundTrip []int64 `json:"roundTripMicros"`
}

func runPing(ctx context.Context, g *globalOptions, o *pingOptions, s *streams) error {
	server := o.Server
	if o.Count < 1 || o.Count > 10000 {
		return usageError(fmt.Errorf("--count %d: want 1 to 10000", o.Count))
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	began := time.Now()
	m, err := startOne(ctx, st, server)
	if err != nil {
		return err
	}
	defer m.Close()
	started := time.Since(began)
	out := pingJSON{Server: server, StartUS: started.Microseconds(), RoundTrip: make([]int64, 0, o.Count)}
	if !o.JSON {
		fmt.Fprintf(s.Out, "started %s in %s\n", server, roundDur(started))
	}
	for i := range o.Count {
		if i > 0 && o.Interval > 0 {
			select {
			case <-time.After(o.Interval):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		d, err := m.Ping(ctx, server)
		if err != nil {
			return withCode(exitError, err)
		}
		out.RoundTrip = append(out.RoundTrip, d.Microseconds())
		if !o.JSON {
			fmt.Fprintf(s.Out, "ping %d: %s\n", i+1, micros(d.Microseconds()))
		}
	}
	out.Count = len(out.RoundTrip)
	out.MinUS, out.MedianUS, out.MaxUS = spread(out.RoundTrip)
	if o.JSON {
		return writeJSON(s, out)
	}
	fmt.Fprintf(s.Out, "%s: min %s, median %s, max %s\n", nounCount(out.Count, "ping"), micros(out.MinUS), micros(out.MedianUS), micros(out.MaxUS))
	return nil
}

// roundDur shows a duration to three significant figures or so.
func roundDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// micros shows a count of microseconds as ping's lines do, so that the
// summary's figures read exactly as the lines they come from.
func micros(v int64) string { return roundDur(time.Duration(v) * time.Microsecond) }

// spread is the minimum, median and maximum of a non-empty sample; the
// median of an even count is the mean of the middle two.
func spread(v []int64) (lo, median, hi int64) {
	sorted := slices.Sorted(slices.Values(v))
	n := len(sorted)
	median = sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return sorted[0], median, sorted[n-1]
}
