package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
)

// ForClient returns an observer like e whose call spans, consent and
// decision events and taint events also name the person and the OAuth
// client of c (mcphost.person.issuer, mcphost.person.subject,
// mcphost.client.id): serve --http with an issuer, one per client
// session. They are escaped and bounded as names are. Only identifiers go out, never the person's name or email.
// Without a person in c it is e itself.
func (e *Exporter) ForClient(c *audit.Client) host.Observer {
	if c == nil || c.Person == nil {
		return e
	}
	return &personal{Exporter: e, who: []attribute.KeyValue{
		attribute.String("mcphost.person.issuer", name(c.Person.Issuer)),
		attribute.String("mcphost.person.subject", name(c.Person.Subject)),
		attribute.String("mcphost.client.id", name(c.ID)),
	}}
}

// personal is an Exporter that names one person and client.
type personal struct {
	*Exporter
	who []attribute.KeyValue
}

// CallStarted starts the call's span as the Exporter does and puts the
// person on it; the call's state carries them to its events.
func (p *personal) CallStarted(ctx context.Context, callID, server, tool string, args json.RawMessage) context.Context {
	ctx = p.Exporter.CallStarted(ctx, callID, server, tool, args)
	if st := stateOf(ctx); st != nil {
		st.who = p.who
		st.span.SetAttributes(p.who...)
	}
	return ctx
}

// Tainted emits the mcphost.taint event with the person whose session's
// taint grew.
func (p *personal) Tainted(t host.Taint) {
	p.emit(context.Background(), "mcphost.taint", append([]attribute.KeyValue{
		attribute.Bool("open_world", t.OpenWorld), attribute.Bool("private_read", t.PrivateRead)}, p.who...)...)
}
