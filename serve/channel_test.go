package serve

import (
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTheAuditNamesTheWayTheAnswerCame: a call a client's form approved is
// recorded as approved through the client's form (elicitation), whether
// the question went as elicitation/create or as an input request; one the
// approver approved, through mcphost approve unless the approver socket
// says the page (with a passkey it verified itself), whatever else its
// answer claimed; one no one could be asked about, headless.
func TestTheAuditNamesTheWayTheAnswerCame(t *testing.T) {
	for _, c := range []struct {
		name     string
		co       *connOpts // nil: no elicitation declared
		approver *approver
		askVia   AskRoute
		ran      bool
		want     audit.Channel
	}{
		{"the form, as an input request", &connOpts{}, nil, "", true, audit.ChannelElicitation},
		{"the form, as elicitation/create", &connOpts{version: "2025-11-25"}, nil, "", true, audit.ChannelElicitation},
		{"the approver, its answer claiming the chat", nil, &approver{waiting: true, claim: audit.ChannelDialog}, "", true, audit.ChannelApprove},
		{"the approver, its answer claiming the host's form", nil, &approver{waiting: true, claim: audit.ChannelElicitation}, "", true, audit.ChannelApprove},
		{"the approver socket's verified passkey", nil, &approver{waiting: true, claim: audit.ChannelWebPasskey}, "", true, audit.ChannelWebPasskey},
		{"the approver, forced, with a form at hand", &connOpts{}, &approver{waiting: true, claim: audit.ChannelDialog}, AskApprover, true, audit.ChannelApprove},
		{"no one", nil, nil, "", false, audit.ChannelHeadless},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := worldOpts{askVia: c.askVia}
			if c.approver != nil {
				o.approver = c.approver
			}
			w := newWorld(t, o)
			var cl *conn
			if c.co != nil {
				cl = w.connectWith(&elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowOnce, "")}}, *c.co)
			} else {
				cl = w.connect(nil)
			}
			res := cl.call(t, "flaky__set_value", `{"key":"k","value":"v"}`)
			if res.IsError == c.ran {
				t.Fatalf("isError %v, want %v: %s", res.IsError, !c.ran, text(res))
			}
			recs := w.outcomes("set_value")
			if len(recs) != 1 || recs[0].Via != c.want {
				t.Fatalf("outcome records %+v; want one via %q", recs, c.want)
			}
			if c.want == audit.ChannelElicitation && (recs[0].Client == nil || recs[0].Client.Name != "test-client") {
				t.Errorf("the record does not name the client whose form answered: %+v", recs[0].Client)
			}
		})
	}
}
