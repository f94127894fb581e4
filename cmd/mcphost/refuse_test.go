package main

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestRefusalEscapesLookAlikes: a blocked call of a tool with a look-alike
// name names the allow rule with the raw name, escaped so that the letter
// shows ($'…\u0435…' for the shell, \u0435 in JSON), and the flag, read
// back by a shell, is the rule that lets the call run.
func TestRefusalEscapesLookAlikes(t *testing.T) {
	srv := lookServer(t)
	const ref = "look/d\u0435lete_all"
	code, _, errOut := runCLI(t, "call", "--server", srv, "--trust", "look", ref)
	const flag = `--allow $'look/d\u0435lete_all'`
	if code != exitBlocked || !strings.Contains(errOut, "run it again with --yes to approve this one call, or allow it with a rule ("+flag+")") {
		t.Fatalf("call: exit %d, the refusal does not name --yes and the escaped rule:\n%s", code, errOut)
	}
	if m := regexp.MustCompile(`[^\x0a\x20-\x7e→]`).FindString(errOut); m != "" {
		t.Errorf("call printed %+q raw:\n%s", m, errOut)
	}

	// --json keeps the names exactly as sent; the approval's rule and flag
	// are written to be read, so their look-alike letter is escaped.
	code, out, _ := runCLI(t, "call", "--json", "--server", srv, "--trust", "look", ref)
	approve := regexp.MustCompile(`(?s)"approve": \{.*?\n  \}`).FindString(out)
	if code != exitBlocked || !strings.Contains(approve, `"rule": "look/d\u0435lete_all"`) || nonASCII.MatchString(approve) {
		t.Errorf("call --json: exit %d, the rule is not there with its letter escaped:\n%s", code, out)
	}
	var res struct {
		Approve struct {
			Rule json.RawMessage
			Flag string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var rule string
	if err := json.Unmarshal(res.Approve.Rule, &rule); err != nil || rule != ref {
		t.Fatalf("rule %s decodes to %q (%v), want the raw name %q", res.Approve.Rule, rule, err, ref)
	}

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to read the flag back")
	}
	word, _ := strings.CutPrefix(res.Approve.Flag, "--allow ")
	read, err := exec.Command(bash, "-c", "printf %s "+word).Output()
	if err != nil || string(read) != ref {
		t.Fatalf("the shell reads %s as %q (%v), want %q", word, read, err, ref)
	}
	code, out, _ = runCLI(t, "explain", "--headless", "--server", srv, "--trust", "look", "--allow", string(read), ref)
	if code != 0 || !regexp.MustCompile(`verdict: +ALLOW`).MatchString(out) {
		t.Errorf("with the rule it names, explain --headless: exit %d:\n%s", code, out)
	}
}

// TestRefusalOfAPoisonedTool: an allow rule never lifts a poisoned
// description, so the refusal offers none, even with one given; it offers
// --yes.
func TestRefusalOfAPoisonedTool(t *testing.T) {
	srv := lookServer(t)
	code, _, errOut := runCLI(t, "call", "--server", srv, "--trust", "look", "--allow", "look/sum_numbers", "look/sum_numbers", `{"a": 1, "b": 2}`)
	if code != exitBlocked || !strings.Contains(errOut, "no allow rule lifts this (the tool's description gives the model orders): run it again with --yes") {
		t.Fatalf("call: exit %d:\n%s", code, errOut)
	}
	if strings.Contains(errOut, "--allow") {
		t.Errorf("the refusal offers an allow rule, which cannot lift it:\n%s", errOut)
	}
}
