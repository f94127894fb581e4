package main

import (
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/trace"
)

// openTrace opens --trace's file the first time a command loads its setup
// and returns its Tracer; nil without --trace.
func openTrace(g *globalOptions, s *streams) (client.Tracer, error) {
	if g.Trace == "" {
		return nil, nil
	}
	if s.trace == nil {
		w, err := trace.Create(g.Trace)
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
