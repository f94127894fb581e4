package client

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// afterQuestions corrects the outcome of a call during which the server
// asked the person for information (elicitation). A JSON-RPC error then
// does not mean the call was rejected before running: the tool ran far
// enough to ask, and failed after the answer (typically because the
// server refused it). Such a call ends as a tool error carrying the
// server's message: never retried, and never reported as "nothing was
// applied".
func afterQuestions(r *CallResult, asked bool) *CallResult {
	var werr *jsonrpc.Error
	if !asked || r.Outcome != OutcomeRejected || !errors.As(r.Err, &werr) {
		return r
	}
	msg := strings.TrimSpace(werr.Message)
	if msg == "" {
		msg = "no message"
	}
	text := "the tool ran and asked for information, then failed (JSON-RPC " + strconv.FormatInt(int64(werr.Code), 10) + "): " + msg
	return &CallResult{
		Outcome: OutcomeToolError,
		Result:  &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}},
		Detail:  "failed after elicitation",
		Err:     r.Err,
	}
}

// questionCount counts a server's elicitation requests.
type questionCount struct{ n atomic.Int64 }

func (q *questionCount) add()        { q.n.Add(1) }
func (q *questionCount) load() int64 { return q.n.Load() }
