package client

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxUpdatedURI bounds the URI of a resource update that is passed on; a
// longer one names nothing the host subscribed to.
const maxUpdatedURI = 2048

// CanSubscribe reports whether a server offers resource subscriptions
// (resources/subscribe).
func (m *Manager) CanSubscribe(server string) bool {
	return m.capable(server, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil && c.Resources.Subscribe })
}

// SubscribeResource asks a server to say when the resource uri changes;
// each change is published as an EventResourceUpdated. The subscription
// belongs to the current connection: after a restart it must be made
// again.
func (m *Manager) SubscribeResource(ctx context.Context, server, uri string) error {
	if !m.CanSubscribe(server) {
		return fmt.Errorf("server %q does not offer resource subscriptions", server)
	}
	cs, err := m.session(server)
	if err != nil {
		return err
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return fmt.Errorf("subscribe to a resource of %q: %w", server, err)
	}
	return nil
}

// UnsubscribeResource ends a subscription made with SubscribeResource. A
// server that is not ready has none to end.
func (m *Manager) UnsubscribeResource(ctx context.Context, server, uri string) error {
	cs, err := m.session(server)
	if err != nil {
		return nil
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return fmt.Errorf("unsubscribe from a resource of %q: %w", server, err)
	}
	return nil
}

// onResourceUpdated publishes a server's notifications/resources/updated.
func (s *server) onResourceUpdated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req.Params == nil || req.Params.URI == "" || len(req.Params.URI) > maxUpdatedURI {
		return
	}
	s.m.publish(Event{Kind: EventResourceUpdated, Server: s.spec.Name, URI: req.Params.URI})
}
