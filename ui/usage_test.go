package ui

import (
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// A server's sampling adds to the tokens used and to its own figure, but
// not to how full the conversation's context is: the request is not part
// of the conversation.
func TestUsageMeterSampling(t *testing.T) {
	var u usageMeter
	u.add(llm.Usage{InputTokens: 1000, OutputTokens: 200}, false)
	u.add(llm.Usage{InputTokens: 5000, OutputTokens: 3000}, true)
	if got, want := u.status(10000), "tokens 9.2k · sampling 8.0k · context 12%"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
}
