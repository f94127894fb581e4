package host

import (
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
)

// taskHook returns the receiver of execution n's task events. The moment
// the server creates a task, its id is in the audit log: an outcome record
// closes the intent (the outcome is not known yet: status unknown, detail
// "task created"), and a new intent names the task the gate now follows.
// If mcphost dies while following it, that open intent says which task to
// ask the server about. next, if set, sees every event afterwards.
func (g *Gate) taskHook(a *account, n int, next func(client.TaskEvent)) func(client.TaskEvent) {
	return func(e client.TaskEvent) {
		if e.Kind == client.TaskEventCreated && g.o.Audit != nil {
			rec := g.base(a)
			rec.Kind, rec.Status, rec.TaskID = audit.Outcome, audit.StatusUnknown, e.TaskID
			rec.Attempts = []audit.Attempt{{N: n, Outcome: audit.StatusUnknown, Detail: "task created"}}
			_ = g.o.Audit.Append(rec)
			rec = g.base(a)
			rec.Kind, rec.TaskID = audit.Intent, e.TaskID
			rec.Attempts = []audit.Attempt{{N: n, Detail: "following the task"}}
			_ = g.o.Audit.Append(rec)
		}
		if next != nil {
			next(e)
		}
	}
}

// mayHaveCreatedTask reports whether an execution ran, or may have run, as
// an MCP task: one approval never creates two tasks, so such a call is not
// retried, whatever its class. An unknown outcome of a tool that runs as a
// task may hide a task created before the answer was lost.
func (g *Gate) mayHaveCreatedTask(cr *client.CallResult, spec client.Spec, t *client.Tool) bool {
	if cr.Task != nil {
		return true
	}
	if cr.Outcome != client.OutcomeUnknown {
		return false
	}
	switch t.TaskSupport {
	case client.TaskRequired:
		return true
	case client.TaskOptional:
		return spec.Tasks == client.TasksAuto
	}
	return false
}

// TaskReport is one step of a call's task, as stream-json prints it (the
// "task" member of a "task" event). Strings are the server's, bounded and
// unsanitized.
type TaskReport struct {
	Event   string `json:"event"` // created, status, result
	ID      string `json:"id"`
	Status  string `json:"status"`
	Message string `json:"statusMessage,omitempty"`
	// Note says what mcphost did: "created", "connection lost",
	// "reconnected", "cancel sent", "unknown to the server".
	Note string `json:"note,omitempty"`
}

func reportTask(e client.TaskEvent) *TaskReport {
	return &TaskReport{Event: e.Kind, ID: e.TaskID, Status: e.Status.Status, Message: e.Status.Message, Note: e.Status.Note}
}
