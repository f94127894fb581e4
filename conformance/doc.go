// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package-lock.json here)
// against mcphost's client, and against the go-sdk's reference client on the
// same scenarios so that the two scores can be compared.
//
// The client under test is the program in client/, built on mcphost's own
// client package. Every client scenario of the pinned suite is run. Each
// scenario is judged by the checks it records, never by the exit code:
// it passes when no check failed or warned, at least one succeeded, and at
// least as many succeeded as for the reference client. A scenario that
// cannot pass yet is listed in baseline.txt with the reason; the test fails
// when a scenario outside the list fails and when a listed one passes, so
// the list can only shrink.
//
// The suite's newer line, pinned in next/, is run the same way at each
// protocol version it tests (--spec-version 2025-11-25 and 2026-07-28),
// with its own baseline-next.txt, and prints one line per client and
// version: "mcphost 2026-07-28: N/M checks". The client asks for the
// version the suite names in MCP_CONFORMANCE_PROTOCOL_VERSION.
//
// TestServeServerScenarios runs the newer line's server scenarios against
// the go-sdk's reference server directly and through `mcphost serve
// --http` fronting it on stdio, at both versions: through serve a scenario
// must pass no fewer checks than directly, unless baseline-serve.txt lists
// it ("VERSION/scenario reason"); it prints "serve 2025-11-25: N/M checks
// (direct N/M)".
//
// The suite needs Node.js 22, which `npm ci` in this directory installs
// beside it. Without node_modules the test fails and says so; setting
// MCPHOST_SKIP_CONFORMANCE=1 skips it instead, on purpose only.
package conformance
