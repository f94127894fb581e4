package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fixtureArg {
		os.Exit(fixturesMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestConfirmationQuality runs one 200-call session of every set through
// the real gate and servers and checks what must hold whatever the
// workload's weights: every call that can lose data or reaches mcphost's
// own files is asked about; no read of an ordinary path is flagged as
// reaching them (listing the project root, which holds .mcp.json, or the
// home directory, which holds .config, included, from an untrusted server
// too); and with trusted servers no read is asked at T3 for any other
// reason than a protected file, and there are at most 10 prompts per 100
// calls (the seed is fixed, so the count is the same on every run), also
// for an untrusted server the person trusts when the dialog offers it. The
// prompts of a server that stays untrusted are measured (go run
// ./bench/confirm), not tested: every call of it is T3 and each tool is
// asked about at least once.
func TestConfirmationQuality(t *testing.T) {
	e, err := newEnv()
	if err != nil {
		if os.Getenv("MCPHOST_SKIP_INTEROP") == "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(e.tmp) })
	for _, s := range sets {
		t.Run(s.Name, func(t *testing.T) {
			got, err := runSession(context.Background(), e, s, 1, 200)
			if err != nil {
				t.Fatal(err)
			}
			if got.Calls != 200 || got.Risky == 0 || got.Protected == 0 && strings.Contains(strings.Join(s.Servers, ","), "fs") {
				t.Fatalf("the session made %d calls, %d risky, %d protected: the workload is not what it should be", got.Calls, got.Risky, got.Protected)
			}
			if got.RiskyAsked != got.Risky {
				t.Errorf("%d of %d risky calls ran without a question: %q", got.Risky-got.RiskyAsked, got.Risky, got.RiskyUnasked)
			}
			if got.ProtAsked != got.Protected {
				t.Errorf("%d of %d calls reaching mcphost's files were not asked", got.Protected-got.ProtAsked, got.Protected)
			}
			if got.ProtectedReasonOnRead != 0 {
				t.Errorf("%d reads of ordinary paths were flagged protected-path", got.ProtectedReasonOnRead)
			}
			if !s.Untrusted && got.ReadsT3NotProtected != 0 {
				t.Errorf("%d reads asked at T3 for another reason than a protected file, such as %s", got.ReadsT3NotProtected, got.ReadsT3NotProtectedOne)
			}
			if (!s.Untrusted || s.TrustsOnOffer) && per100(got.Prompts, got.Calls) > 10 {
				t.Errorf("%d prompts in %d calls (%.1f per 100), want at most 10 per 100", got.Prompts, got.Calls, per100(got.Prompts, got.Calls))
			}
			if got.Failed > got.Calls/10 {
				t.Errorf("%d of %d calls failed: the workload's arguments do not fit the servers", got.Failed, got.Calls)
			}
		})
	}
}
