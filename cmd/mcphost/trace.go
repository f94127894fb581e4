package main

import (
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/trace"
)

// openTrace opens --trace's file the first time a command loads its setup
// and returns its Tracer; nil without --trace. "-" is standard error; a
// file is appended to.
func openTrace(g *globalOptions, s *streams) (client.Tracer, error) {
	if g.Trace == "" {
		return nil, nil
	}
	if s.trace == nil {
		if g.Trace == "-" {
			// Standard error, as "-" means to most tools; Close leaves it open.
			s.trace = trace.New(s.Err, nil, time.Now)
			return s.trace.Trace, nil
		}
		w, err := trace.Append(g.Trace)
		if err != nil {
			return nil, usageError(err)
		}
		s.trace = w
	}
	return s.trace.Trace, nil
}

// closeTrace closes --trace's file, if a command opened it.
func closeTrace(s *streams) error {
	if s.trace == nil {
		return nil
	}
	err := s.trace.Close()
	s.trace = nil
	return err
}
