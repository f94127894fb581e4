// Package interop tests mcphost's client against MCP servers that nobody on
// the project wrote: the reference servers published on npm as
// @modelcontextprotocol/server-everything (over stdio, streamable HTTP and
// SSE), server-filesystem and server-memory. Their versions are pinned in
// package-lock.json here and installed with `npm ci` in this directory.
//
// The tests hold the client to what these servers really send — tool counts,
// each hint as declared true, declared false or absent — and to what really
// happens when tools are called, so that a change on either side shows up as
// a failing test rather than as a silent change of policy.
//
// The other way round, the official TypeScript SDK client
// (@modelcontextprotocol/sdk, driven by serveclient.mjs) drives the real
// `mcphost serve` over stdio and HTTP (serve_test.go), and the Codex CLI
// (@openai/codex) runs with serve as its only MCP server, against a local
// fake of its model provider (codex_test.go).
//
// Without node_modules the tests fail and say to run `npm ci` in interop/.
// Setting MCPHOST_SKIP_INTEROP=1 skips them instead, on purpose only.
package interop
