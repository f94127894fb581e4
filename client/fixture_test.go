package client

import (
	"os"
)

// fixtureEnv makes the test binary serve a fixture instead of running tests,
// so subprocess tests need no separate build.
const fixtureEnv = "MCPHOST_CLIENT_TEST_FIXTURE"

func maybeServeFixture() {
	if os.Getenv(fixtureEnv) == "" {
		return
	}
	os.Exit(0) // replaced by fixtures.Main once the fixtures package lands
}
