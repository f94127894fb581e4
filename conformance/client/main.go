// Command client is mcphost's MCP client as the conformance suite sees it.
// The suite runs it as `client <serverURL>` with MCP_CONFORMANCE_SCENARIO
// naming the scenario, and judges what reaches its test server.
//
// Everything goes through mcphost's own client package, configured the way
// the mcphost command configures it, so that the suite measures the client
// that ships rather than a harness written for the suite. Questions from
// servers are answered as `mcphost --elicit defaults` answers them. OAuth
// goes through mcphost's oauth package: a server that asks for
// authorization gets a login (the browser's part played by a program),
// and the scenario then runs again in a session that can only use the
// stored token, as every later mcphost command does.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stderr))
}
