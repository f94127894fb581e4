package client

import (
	"context"
	"fmt"
	"time"
)

// Ping sends one MCP ping to a ready server and returns the time until its
// answer. It bypasses the gate: a ping runs no tool.
func (m *Manager) Ping(ctx context.Context, server string) (time.Duration, error) {
	l, err := m.liveConn(server)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := l.session.Ping(ctx, nil); err != nil {
		return 0, fmt.Errorf("ping %q: %w", server, err)
	}
	return time.Since(start), nil
}
