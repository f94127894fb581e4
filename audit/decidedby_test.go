package audit

import "testing"

// TestDecidedByWords: every way of saying who decided a call is the log's
// word, letter for letter, and its methods read back what made it.
func TestDecidedByWords(t *testing.T) {
	for _, c := range []struct {
		by       DecidedBy
		want     string
		rule     string
		byRule   bool
		approved bool
		scope    string
	}{
		{ByTier, "auto", "", false, false, ""},
		{ByRule("no-deletes"), "rule:no-deletes", "no-deletes", true, false, ""},
		{ByRule(""), "rule:", "", true, false, ""},
		{ByPerson("session"), "user:session", "", false, true, "session"},
		{ByPersonDenial, "user", "", false, false, ""},
		{ByHeadless, "headless", "", false, false, ""},
		{BySchema, "input-schema", "", false, false, ""},
		{ByStaleAnswer, "stale-answer", "", false, false, ""},
		{"", "", "", false, false, ""},
	} {
		if c.by.Auto() != (c.want == "auto") || c.by.PersonDenied() != (c.want == "user") {
			t.Errorf("%q: Auto %v, PersonDenied %v", c.by, c.by.Auto(), c.by.PersonDenied())
		}
		rule, byRule := c.by.Rule()
		if c.by.String() != c.want || rule != c.rule || byRule != c.byRule || c.by.PersonApproved() != c.approved || c.by.Scope() != c.scope {
			t.Errorf("%q: String %q, Rule (%q, %v), PersonApproved %v, Scope %q; want %q, (%q, %v), %v, %q",
				c.by, c.by.String(), rule, byRule, c.by.PersonApproved(), c.by.Scope(), c.want, c.rule, c.byRule, c.approved, c.scope)
		}
	}
}
