// Package host runs tool calls for mcphost. It turns what the client saw
// into the decision engine's terms, holds the Gate that every call passes,
// and runs the model loop, in which each tool call the model makes goes
// through that gate before anything executes.
//
// # The one door
//
// Every operation that reaches a server passes one function, the gate's
// pass (door.go): a tool call (Gate.Call), a resource read
// (Gate.ReadResource), a prompts/get (Gate.GetPrompt) and a subscription
// (Gate.Subscribe) alike. Its steps are written there once: find the
// definition, check the arguments, decide, ask, bind the answer to the
// definition it was given for, grant, write the intent, execute (retrying
// as the design allows), write the outcome, note the taint. The public
// methods only describe their operation — the definition it is decided on
// (the server's own, or a stand-in such as ResourceReadTool), how it is
// executed, what a person's edit must name, whether it may be retried —
// and TestOneDoor fails if a step is written anywhere else.
//
// Each call has one account: its Result, with the definition decided on
// and the server's identity; every audit record of the call is written
// from it. Who decided (DecidedBy) and how it ended (Status) are the audit
// log's own types, audit.DecidedBy and audit.Status, so a result and its
// records say the same words; read DecidedBy with its methods (Auto, Rule,
// PersonApproved, Scope, PersonDenied), never by its text.
//
// # What the gate guarantees
//
// Each guarantee below has a test that fails when the line implementing it
// is removed; scripts/mutants/mutants.txt names the line and the test, and
// `go run ./scripts/mutants` checks them all.
//
//   - Pins on first sight. Every tool is pinned the first time mcphost lists
//     it — at start, after a restart, at every re-list, in every command —
//     through client.Options.OnListing, before the catalog offers it to
//     anyone (Pins). A trusted server's pins are kept in the state file, any
//     other server's for the process. A definition that differs from its
//     pin counts as unannotated until a person accepts it, by approving a
//     call (the question shows what changed) or with `mcphost pin accept`.
//   - A changed definition never reaches the model as sent: the loop offers
//     such a tool by name only, with ChangedToolNote in place of its new
//     description and parameters.
//   - Decide before run: a call runs only on an Allow, or on an Ask that a
//     person approved; the approved scope is clamped to what the tier
//     allows, and an "always" grant is saved in the Store.
//   - Intent before execution: a non-read call runs only after its intent
//     record was appended and synced to the audit log; if that fails, the
//     call does not run. Every execution has one intent before it and one
//     outcome after it, each written (safe from a crash of mcphost) before
//     the call starts or its result is returned; a read's intent and the
//     outcomes reach the disk within the log's SyncDelay (see package audit).
//   - Retries as the design allows: reads at most twice after an unknown
//     outcome, idempotent writes at most once, other writes never; a call
//     that was not sent is sent again once; a rejected call or a tool error
//     never; throttling waits at least the server's Retry-After. Before any
//     retry the definition must be unchanged and no rule may now deny the
//     call; each server has a budget of retries a minute.
//   - An honest status: once any attempt may have reached the server, the
//     call is unknown at best, whatever later attempts report, and the
//     message says how many attempts there were and which may have run.
//   - A stale server is a refusal, not a failure: a tool error whose JSON
//     says "error": "SERVER_STALE", or a JSON-RPC error carrying it (which
//     the client classifies as rejected), is never retried, and its message
//     says how to restart the server (TestStaleToolErrorIsRecognised,
//     TestStaleJSONRPCErrorIsARefusal). The word in other text is not the
//     signal (TestStaleWordInAnErrorIsNotTheSignal).
//   - A blocked call to a changed definition says what changed and how to
//     accept it (ChangeNote), never an allow rule, which cannot lift it.
//     Every blocked call says what would approve it (Result.Approval): the
//     allow rule that matches it, shell-quoted with look-alikes escaped,
//     when a rule can lift the block, and otherwise what can
//     (TestApprovalRuleLifts).
//   - One task per approval: a call that runs as an MCP task (a tool whose
//     execution.taskSupport is "required", or "optional" with "tasks":
//     "auto") names its task in the audit log the moment the server creates
//     it, and is never retried once a task was or may have been created;
//     after a lost connection its outcome comes from tasks/get, and only a
//     server that forgot the task leaves it unknown.
//   - Results go back to the model marked as data, not instructions: every
//     text a server wrote reaches a model only through Quote, between marks
//     the server's text cannot hold.
//
// # The model's context
//
// Past a budget (5% of the model's window, 100 tools of trusted servers,
// or the provider's limit; see Loop.searching) the loop offers the host's
// own SearchToolName instead of every definition. The search is a local
// keyword ranking, bounded against stuffing (see Loop.rank); the tools it
// finds are offered from the next turn on,
// appended after the search tool and the tools always loaded, so the list's
// front never moves. A search runs no server code and is not gated; a
// found tool is gated like any other. A changed tool is matched on its name
// only and described by ChangedToolNote; what any server wrote comes back
// quoted (Quote) on the tool's one line.
//
// Each request is estimated before it is sent. Past 80% of the window the
// oldest large tool results become markers, and when that is not enough
// the earlier turns are summarised by the model (Loop.Compact does it on
// demand); a request that still does not fit fails with ErrContextFull.
// The gate's state (taint, grants, pins) is not part of the history and is
// never compacted; results of calls with an unknown outcome are never
// elided, and a summary names those calls again. An elision marker invites
// a repeat only for a read or an idempotent call.
package host
