// Package llm runs one model turn at a time behind a small interface, so
// that the host's tool loop, and the gate inside it, are the same for every
// provider.
//
// A [Model] streams one turn as [Event] values: text as it arrives, each tool
// call once its arguments are complete, then the usage and a normalised stop
// reason. Nothing here executes a tool; the caller decides what happens to
// each call and sends the results back in the next [Request].
//
// # Providers
//
// [New] takes a spec "provider:model":
//
//	anthropic:<model>          Anthropic Messages API; key ANTHROPIC_API_KEY
//	openai:<model>             OpenAI Chat Completions; key OPENAI_API_KEY
//	ollama:<model>             Ollama's OpenAI-compatible endpoint, http://localhost:11434/v1, no key
//	openai-compatible:<model>  any Chat Completions server (llama.cpp, vLLM, LM Studio,
//	                           OpenRouter); needs --base-url, sends OPENAI_API_KEY if set
//	script:<file>              replays a script file; no network (see below)
//
// Options.APIKey wins over the key variable. The environment is read only
// through Options.Getenv, and only for the two key variables: no variable
// (ANTHROPIC_BASE_URL, OPENAI_BASE_URL among them) can redirect requests or
// add credentials behind the caller's back; only Options.BaseURL moves an
// endpoint. Ollama never receives OPENAI_API_KEY.
//
// The providers speak their wire formats directly, with net/http and
// encoding/json: a JSON POST answered by a server-sent event stream
// (Messages for Anthropic, Chat Completions for the others). The official Go
// SDKs did the same job with far more code: megabytes of the binary, package
// initialisation that ran and paged in memory on every start of every
// command, --version included, and reflective request building on every
// turn. This package uses a small part of either API, keeps the requests and
// events it reads as plain structs, and has no work to do when the program
// starts.
//
// Tool names and input schemas are sent as given (a schema keeps its keywords,
// key order and values; only insignificant whitespace may go); a schema over
// [MaxSchemaBytes] is refused before anything is sent. A tool without a
// schema is sent {"type":"object","properties":{}}.
//
// Anthropic: the system prompt is the system parameter; tool calls of an
// assistant message are tool_use blocks; tool results are tool_result blocks
// (tool_use_id, is_error) in a user message; adjacent messages of one role
// are merged and empty ones left out, as the API requires. Usage counts
// cached input tokens as input.
//
// OpenAI and compatible servers: the system prompt is a system message; tool
// calls are the assistant message's tool_calls; each tool result is a message
// of role tool with its tool_call_id, its content prefixed "Error: " when it
// failed (the API has no error flag); text on a tool message follows as a
// user message. Streams ask for a final usage chunk.
// OpenAI gets max_completion_tokens, compatible servers max_tokens. A call
// without an id gets "call_<index>"; a finish reason of "stop" after tool
// calls is reported as tool_use.
//
// Stop reasons are normalised to "end_turn", "tool_use", "max_tokens",
// "stop_sequence" and "refusal"; others pass through unchanged.
//
// # Errors and retries
//
// An error status from the provider becomes an [*APIError] carrying the
// status, the provider's error type and message, and a hint: "rate limited
// by the provider … wait a moment and try again" for 429, "check
// ANTHROPIC_API_KEY" (or OPENAI_API_KEY) for 401 and 403. An error event
// inside a stream is an *APIError with StatusCode 0.
//
// A request that fails before any output arrived (connection error, 408,
// 409, 429, 5xx) is retried at most [DefaultMaxRetries] times
// (Options.MaxRetries changes that; negative disables), as the providers'
// SDKs do: an x-should-retry header from the server overrides the status;
// the wait is the server's Retry-After-Ms or Retry-After, or else an
// exponential backoff from half a second up to 8 seconds, less up to a
// quarter at random. When the server asks for a wait longer than 30 seconds
// the error is reported at once. Once a stream has started nothing is
// retried, because its text and tool calls have already been emitted.
// Cancelling the context ends any wait.
//
// An event stream is read by the rules of the HTML standard (lines end in
// LF, CRLF or CR; data lines join; comments and the id and retry fields are
// ignored). A line or event over 4 MiB ends the turn with an error, so a
// broken server cannot grow memory without end.
//
// # Script files
//
// The script:<file> provider replays a file of turns so that demos, tests
// and headless runs are reproducible without a network. The file is JSON
// Lines: one JSON object per line, one line per assistant turn. Blank lines
// and lines starting with # are ignored. Each call to Stream plays the next
// turn. A turn has these fields, all optional, but it needs at least one of
// text, toolCalls and error:
//
//	text          string  the assistant's text, streamed in up to three deltas split at spaces
//	toolCalls     array   tool calls, emitted in order after the text, each
//	                        {"name": "server_tool", "args": {…}, "id": "…"}
//	                      name is the provider-safe tool name ([A-Za-z0-9_-]{1,64});
//	                      args is a JSON object, {} when absent; id defaults to
//	                      "call_<turn>_<n>", both counted from 1
//	expectResult  object  {"contains": "…"}: some tool result sent with this
//	                      turn's request contains the string
//	expectError   bool    true: some tool result sent with this turn's request is an
//	                      error; false: none is
//	stop          string  the stop reason to report; default "tool_use" when the
//	                      turn has tool calls, else "end_turn"
//	error         string  instead of answering, Stream fails with this message
//	                      (after checking the expectations); excludes text, toolCalls, stop
//
// The tool results a turn's expectations see are those in the request's
// messages after its last assistant message: the answers to the previous
// turn's calls. A failed expectation makes Stream fail with an error that
// matches [ErrScriptExpectation] and shows what the results were; a turn
// that expects results and gets none fails too. The usage of every turn is
// zero. When the script is exhausted, Stream fails with an error matching
// [ErrScriptExhausted]: a run that asks for more turns than were written
// is a mistake in the script or in the host, not something to paper over.
// Unknown fields are errors, so a misspelt expectation cannot pass
// silently; every error in a file names its line ("demo.jsonl:3: …").
//
// An example, in which the host must feed the file's content back, then
// report the refusal of a write:
//
//	# demo.jsonl
//	{"text": "Let me read the notes.", "toolCalls": [{"name": "files_read", "args": {"path": "notes.txt"}}]}
//	{"expectResult": {"contains": "buy milk"}, "text": "Adding a line.", "toolCalls": [{"name": "files_write", "args": {"path": "notes.txt", "text": "call Bob"}}]}
//	{"expectError": true, "text": "The write was refused, so the notes are unchanged."}
//
// [NewScript] builds the same model from turns in code.
package llm
