package host

import "fmt"

// elisionMarker stands in the history for a tool result compaction
// removed. It invites the model to call the tool again only when that is
// safe: the call was a read or an idempotent write (decide's retry rule:
// from a trusted server, definition unchanged). Any other call may have
// changed something, and running it again would do it twice.
func (l *Loop) elisionMarker(info callInfo, callID string, size int) string {
	again := "do not repeat: it changed something"
	if l.repeatable[callID] {
		again = "call the tool again if you need it"
	}
	return fmt.Sprintf("[mcphost: removed the output of %s (call %s, %d bytes) to save context; %s]", quoteName(info.ref), Defang(callID, true), size, again)
}

// noteRepeatable records whether the call the model made under callID may
// be repeated safely. A model may reuse an id: one call under it that may
// not be repeated makes the id not repeatable for good.
func (l *Loop) noteRepeatable(callID string, ok bool) {
	if l.repeatable == nil {
		l.repeatable = map[string]bool{}
	}
	if prev, seen := l.repeatable[callID]; seen && !prev {
		return
	}
	l.repeatable[callID] = ok
}
