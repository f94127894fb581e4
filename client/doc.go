// Package client connects mcphost to MCP servers and keeps an exact record of
// what each one declared.
//
// A [Manager] starts every configured server in parallel (stdio, streamable
// HTTP or SSE, or an in-process transport), bounds each start with a timeout
// so that one slow or broken server never delays the others, restarts
// servers that crash, and follows tools/list_changed notifications. A server
// run by a package launcher (npx, uvx, …) may download its package first and
// gets a longer default start timeout ([DefaultLauncherStartTimeout]); a start
// that times out asks the server's process group to end (SIGTERM) before it
// is killed, so that a launcher can clean up what it downloaded.
//
// The catalog is read from the raw tools/list JSON rather than through the
// SDK's typed decoding, for two reasons: the SDK's annotation type cannot tell
// an absent hint from a false one, and it rejects a whole page when a single
// entry is malformed. Here each tool keeps its hints as true, false or absent,
// a malformed entry is isolated with a [Finding], and listing is bounded in
// pages, tools and description length.
//
// A stdio server runs in its own process group. [Manager.Close] closes each
// server's input, gives it half a second to exit, then sends SIGTERM to its
// group and SIGKILL to what is left a second later, so that a server that
// ignores both, and its children, are gone within 1.5 seconds. On Linux a
// server is also started with a parent-death signal, so that it dies with
// mcphost even when mcphost is killed with SIGKILL.
//
// [Manager.Call] executes one call and classifies its outcome into the failure
// classes of the design (not sent, rejected, throttled, outcome unknown, tool
// error, success). It decides nothing: policy, retries and auditing belong to
// the gate that calls it. A JSON-RPC error carrying the SERVER_STALE signal
// ([StaleCode]) is rejected: the server refused to run the call until it is
// restarted.
//
// A tool whose execution.taskSupport (read as sent, like the hints) is
// "required" is called as an MCP task (tasks.go): the call returns a task,
// whose status is followed by notifications/tasks/status where the
// transport carries them and by tasks/get with backoff otherwise, and whose
// result comes from tasks/result; the server's questions on that request
// reach the same elicitation and sampling handlers. The call's end
// (cancellation, ceiling, idle timeout) sends tasks/cancel. A lost
// connection is not the end of a task: once the server is back, tasks/get
// says what became of it, and the call is never sent again.
//
// A server's protocol version is pinned to [DefaultProtocolVersion] unless
// its Spec names another or [ProtocolAuto]. Under 2026-07-28 the requests
// mcphost sends beside the SDK carry the per-request _meta (and, over HTTP,
// the Mcp-Method and Mcp-Name headers) that the version requires.
//
// An HTTP or SSE server is held to its configured origin (scheme, host and
// port): a redirect elsewhere or a legacy SSE endpoint elsewhere is refused
// with an error naming both origins, so configured headers and tokens never
// leave it, and https is never downgraded. Each answer is read within the
// bound of one stdio message, after decompression and per event on a stream;
// an answer over it fails that call as outcome unknown. An answer that is no
// MCP message is reported with its status, content type and first bytes. A
// server URL is shown and put into errors only through [RedactURL]; a
// streamable HTTP server's errors name Spec.ShownURL, when set, so that
// values its URL read from the environment stay out of them too.
package client
