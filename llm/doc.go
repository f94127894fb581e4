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
// Tool names are sent as given, and so are input schemas that every
// provider accepts (a schema keeps its keywords, key order and values;
// only insignificant whitespace may go); a schema over [MaxSchemaBytes] is
// refused before anything is sent. A tool without a schema is sent
// {"type":"object","properties":{}}.
//
// Anthropic: the system prompt is the system parameter; tool calls of an
// assistant message are tool_use blocks; tool results are tool_result blocks
// (tool_use_id, is_error) in a user message; adjacent messages of one role
// are merged and empty ones left out, as the API requires. No text block
// that is empty or only white space is ever sent (the API refuses one, and
// one in the history would fail every later turn). Usage counts cached input
// tokens as input. max_tokens is Request.MaxTokens, else Options.MaxTokens
// ("maxTokens" in the config), else [MaxTokensFor] the model: 32,000 for
// current Claude models, 8,192 for Claude 3.5, 4,096 for Claude 3.
//
// OpenAI and compatible servers: the system prompt is a system message; tool
// calls are the assistant message's tool_calls; each tool result is a message
// of role tool with its tool_call_id, its content prefixed "Error: " when it
// failed (the API has no error flag); text on a tool message follows as a
// user message. Streams ask for a final usage chunk.
// OpenAI gets max_completion_tokens, compatible servers max_tokens, each
// only when set. A call without an id gets "call_<index>"; a finish reason
// of "stop" after tool calls is reported as tool_use.
//
// # Thinking and reasoning
//
// Models that think send their thinking with the answer, and some providers
// require it back, unchanged, with the assistant message that called tools.
// Every turn ends with an EventDone that carries the assistant message as
// the provider sent it (Raw, and RawFrom naming the provider and endpoint);
// a host keeps both in the [Message], and the same model sends Raw back
// instead of rebuilding the message, while any other model ignores it:
//
//   - Anthropic: the content blocks in the order received: thinking blocks
//     with their signatures, redacted_thinking blocks byte for byte, text
//     (white-space-only blocks left out), and complete tool_use blocks.
//   - DeepSeek: reasoning_content. OpenRouter: reasoning_details, the
//     streamed pieces of each entry joined by index. Gemini: each tool
//     call's extra_content (google.thought_signature). Raw is set only when
//     one of these arrived; a plain answer is rebuilt as before.
//
// Visible thinking is emitted as EventThinking, for display only. Raw
// depends on nothing but the message it came with, so a tool list that
// changes between turns leaves the echoed blocks valid.
//
// Options.Thinking ("thinking" in a model's config entry) chooses how much
// a model thinks: Anthropic gets thinking {type: disabled} for "off",
// {type: adaptive} for "adaptive", {type: adaptive} with output_config
// {effort} for an effort, and {type: enabled, budget_tokens} for a number
// (at least 1,024 and below max_tokens). OpenAI and compatible servers get
// reasoning_effort (the effort, or "none" for "off"); a token budget is an
// error there. Unset, nothing is sent and the provider's default holds.
//
// # Limits and schemas
//
// OpenAI accepts at most 128 tools and 1,024-character descriptions. More
// tools fail the turn before anything is sent with a [TooManyToolsError]
// (it matches [ErrConfig]; models with limits implement [ToolLimiter], the
// hook for a host that offers a subset instead); a longer description is cut
// with a marker, and an EventWarning says so once per tool list. Compatible
// servers and Anthropic get descriptions whole.
//
// Both APIs want an object schema at the top level: Anthropic refuses a
// missing "type": "object" and a top-level anyOf, oneOf or allOf; OpenAI
// refuses an object without "properties". Such schemas are normalised for
// every provider: the type and empty properties are added; allOf branches
// are merged; anyOf and oneOf branches are merged with their properties
// optional, the branches kept as text in the schema's description. A tool
// whose top-level type is not an object cannot be offered: it is left out
// and an EventWarning names it. The host's gate validates calls against
// the server's own schema, never the normalised one.
//
// # Stop reasons
//
// Stop reasons are normalised to "end_turn", "tool_use", "max_tokens",
// "stop_sequence", "refusal", "pause_turn" and
// "model_context_window_exceeded"; others pass through unchanged. A turn
// that stops for max_tokens (finish_reason "length") or a full context
// window is cut off ([Truncated]): a tool call still open is dropped, and
// a Chat Completions turn emits no call at all, since its arguments may end
// anywhere; a caller must not run the calls of such a turn. A refusal's
// explanation (Anthropic's stop_details, OpenAI's refusal text) comes in the
// EventDone's Text, not as answer text. pause_turn asks the caller to send
// the message back to continue.
//
// # Errors and retries
//
// An error status from the provider becomes an [*APIError] carrying the
// status, the provider's error type and message, the request id (request-id
// or x-request-id) and a hint: "rate limited by the provider … wait a
// moment and try again" for 429, "check ANTHROPIC_API_KEY" (or
// OPENAI_API_KEY) for 401 and 403. An error event inside a stream is an
// *APIError with StatusCode 0, and so is llama.cpp's older "error:" line. A
// 200 answer with a JSON body is read as a whole answer (a server or proxy
// that does not stream), or as an error when it holds one.
//
// A request that fails before any output arrived (connection error, 408,
// 409, 429, 5xx, or an overloaded_error event at the start of a stream) is
// retried at most [DefaultMaxRetries] times (Options.MaxRetries changes
// that; negative disables), as the providers' SDKs do: an x-should-retry
// header from the server overrides the status; the wait is the server's
// Retry-After-Ms or Retry-After, or else an exponential backoff from half a
// second up to 8 seconds, less up to a quarter at random. When the server
// asks for a wait longer than a minute the error is reported at once and
// says how long it asked for. Once output has been emitted nothing is
// retried. Cancelling the context ends any wait.
//
// A provider key never goes over plain http to a host that is not loopback
// unless Options.AllowPlainHTTP (the --allow-plain-http flag) says so; [New]
// refuses with an error naming the flag.
//
// An event stream is read by the rules of the HTML standard (lines end in
// LF, CRLF or CR; data lines join; the id and retry fields are ignored).
// Every line, a ": keep-alive" comment included, resets the idle bound of
// ten minutes. A line or event over 4 MiB ends the turn with an error, so a
// broken server cannot grow memory without end.
//
// # Ollama's context size
//
// Ollama runs a model with a context of its own choosing (4,096 tokens on
// smaller machines) and silently cuts a longer prompt, system prompt and
// tool definitions first. Its OpenAI-compatible endpoint, which this package
// speaks, has no way to set num_ctx per request (only the native /api/chat
// does, and a num_ctx that changes reloads the model), so the context is
// the server's to set: OLLAMA_CONTEXT_LENGTH when starting it, or PARAMETER
// num_ctx in a Modelfile. After a turn whose request could overflow a
// context, the model asks the server (GET /api/ps) with what context length
// it runs the model, and when the request (estimated at four bytes a token)
// does not fit, emits an EventWarning, once, naming the setting and a size.
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
//	expectTools   object  {"offered": ["…"], "notOffered": ["…"]}: the request
//	                      offers every tool named in offered and none in notOffered
//	expectHistory object  {"contains": "…"}: the text of a message of the request
//	                      before its last contains the string (a continued chat)
//	usage         object  the usage to report for the turn, as [Usage] encodes it
//	                      ({"inputTokens": 1200, "outputTokens": 300}); zero when absent
//	stop          string  the stop reason to report; default "tool_use" when the
//	                      turn has tool calls, else "end_turn"
//	error         string  instead of answering, Stream fails with this message
//	                      (after checking the expectations); excludes text, toolCalls, stop
//
// The tool results a turn's expectations see are those in the request's
// messages after its last assistant message: the answers to the previous
// turn's calls. A failed expectation makes Stream fail with an error that
// matches [ErrScriptExpectation] and shows what the results were; a turn
// that expects results and gets none fails too. expectTools is checked
// whatever the results. When the script is exhausted, Stream fails with an error matching
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
