package decide

import (
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// worstHints is what a tool counts as when its annotations cannot be
// relied on: a destructive, non-idempotent, open-world write.
var worstHints = Hints{ReadOnly: False, Destructive: True, Idempotent: False, OpenWorld: True}

// resolve turns the hints a trusted server declared into effective hints
// and a class, adding the reasons that explain how. It never returns
// Unknown: that class is reserved for annotations that are not believed at all.
func resolve(name string, h Hints, rs *reasonList) (Hints, Class) {
	var eff Hints
	readOnly := h.ReadOnly == True
	if readOnly && h.Destructive == True {
		// The spec says destructiveHint means nothing on a read-only
		// tool; a server that sends both has said two opposite things,
		// and the riskier one is kept.
		rs.add(rContradiction)
		readOnly = false
	}
	if h.ReadOnly == True {
		if _, ok := nameSuggestsWrite(name); ok {
			rs.add(rNameWrite)
			readOnly = false
		}
	}
	if h.ReadOnly == Absent {
		rs.add(rDefReadOnly)
	}
	if readOnly {
		// A read changes nothing, so it cannot destroy anything and
		// repeating it is harmless.
		eff = Hints{ReadOnly: True, Destructive: False, Idempotent: True}
	} else {
		eff.ReadOnly = False
		eff.Destructive = h.Destructive
		if eff.Destructive == Absent {
			rs.add(rDefDestructive)
			eff.Destructive = True
		}
		eff.Idempotent = h.Idempotent
		if eff.Idempotent == Absent {
			rs.add(rDefIdempotent)
			eff.Idempotent = False
		}
	}
	eff.OpenWorld = h.OpenWorld
	if eff.OpenWorld == Absent {
		rs.add(rDefOpenWorld)
		eff.OpenWorld = True
	}
	switch {
	case readOnly:
		return eff, Read
	case eff.Destructive == True:
		return eff, Destructive
	}
	return eff, Additive
}

// tierOf is the tier table of the design: open world raises a call one tier,
// and an unknown class is always elevated.
func tierOf(c Class, openWorld bool) Tier {
	switch c {
	case Read, Additive:
		if openWorld {
			return T1
		}
		return T0
	case Destructive:
		if openWorld {
			return T3
		}
		return T2
	}
	return T3
}

// writeVerbs are name words that say a tool changes state. A false match
// only costs a confirmation; a missed one could let a lying tool run
// silently, so the list is generous.
var writeVerbs = wordSet(
	"add", "append", "apply", "approve", "archive", "assign", "ban", "block", "book", "buy",
	"cancel", "change", "chmod", "chown", "claim", "clear", "click", "close", "comment", "commit",
	"copy", "cp", "create", "decrement", "del", "delete", "deploy", "destroy", "disable", "drop",
	"edit", "email", "emit", "enable", "enqueue", "erase", "eval", "exec", "execute", "fill",
	"fire", "flush", "follow", "fork", "format", "grant", "import", "increment", "insert",
	"install", "invite", "invoke", "kill", "like", "lock", "mark", "merge", "message", "migrate",
	"mkdir", "modify", "move", "mutate", "mv", "new", "notify", "order", "overwrite", "patch",
	"pay", "post", "press", "publish", "purge", "push", "put", "rebase", "reboot", "record",
	"register", "reject", "remove", "rename", "reopen", "replace", "reply", "reset", "restart",
	"restore", "revert", "revoke", "rm", "rmdir", "rollback", "run", "save", "schedule", "sell",
	"send", "set", "shell", "shutdown", "spawn", "star", "start", "stop", "store", "submit",
	"subscribe", "sync", "terminate", "toggle", "touch", "transfer", "trigger", "truncate",
	"unassign", "unblock", "unfollow", "uninstall", "unlink", "unlock", "unsubscribe", "update",
	"upload", "upsert", "wipe", "write",
)

// strongWriteVerbs say a tool destroys something wherever they appear in
// its name: "get_and_delete" writes even though it starts with "get".
var strongWriteVerbs = wordSet(
	"del", "delete", "destroy", "drop", "erase", "exec", "execute", "kill", "overwrite",
	"purge", "remove", "replace", "rm", "rmdir", "shell", "truncate", "uninstall", "unlink", "wipe",
)

// readVerbs are name words that, as the verb of a name, say it reads: the
// rest of the name is the object being read ("get_update_status").
var readVerbs = wordSet(
	"browse", "can", "cat", "check", "compare", "count", "describe", "diff", "download",
	"echo", "explain", "export", "fetch", "find", "get", "grep", "has", "head", "info",
	"inspect", "is", "list", "load", "lookup", "ls", "peek", "ping", "preview", "query",
	"read", "resolve", "retrieve", "scan", "search", "show", "stat", "status", "summarize",
	"tail", "validate", "verify", "view", "whoami",
)

// nounVerbs are words that name things as often as actions: "run" in
// "agent_run_show" is a run being shown, "report" in "eval_report" is the
// report. Such a word is the verb only when no other word can be; one
// that is also in writeVerbs then says the tool writes ("run_tests",
// "observation_record"), one that is not says nothing ("usage_report").
var nounVerbs = wordSet(
	"comment", "commit", "diff", "eval", "log", "message", "order", "post", "query", "record",
	"report", "run", "status",
)

// additiveVerbs are first words of tools that add something new on every
// call, so an idempotentHint of true on them is suspicious.
var additiveVerbs = wordSet(
	"add", "append", "comment", "create", "enqueue", "increment", "insert", "log", "new",
	"post", "publish", "push", "record", "register", "reply", "send", "submit", "upload",
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// verbKind is what one word of a tool name can say about the tool.
type verbKind uint8

const (
	notVerb    verbKind = iota
	readVerb            // a verb that reads: "get", "list", "show"
	writeVerb           // a verb that writes: "update", "send", "set"
	strongVerb          // a verb that destroys, wherever it stands: "delete", "purge"
	nounRead            // a noun that is also a verb that does not write: "diff", "report"
	nounWrite           // a noun that is also a verb that writes: "run", "eval", "record"
)

// verbLists are the word lists a name is read with: as written (ASCII
// lower case) or by skeleton.
type verbLists struct{ write, strong, read, noun map[string]bool }

var plainVerbs = verbLists{writeVerbs, strongWriteVerbs, readVerbs, nounVerbs}

// kind classifies one lower-case word. w does not escape, so a conversion
// from bytes at the call site does not allocate.
func (v *verbLists) kind(w string) verbKind {
	switch {
	case v.strong[w]:
		return strongVerb
	case v.noun[w] && v.write[w]:
		return nounWrite
	case v.noun[w]:
		return nounRead
	case v.write[w]:
		return writeVerb
	case v.read[w]:
		return readVerb
	}
	return notVerb
}

// verbOf reads the verb of a name from the kinds of its words and returns
// the index of the word that says the tool writes, or -1. The rules, in
// order:
//
//  1. a strongly destructive verb anywhere writes ("get_and_delete");
//  2. the verb stands first or last ("delete_task", "task_delete",
//     "agent_run_show"): the first word that is a plain verb there
//     decides, the first word before the last;
//  3. with no plain verb there, the first plain verb of the middle words
//     decides ("github_create_issue");
//  4. with no plain verb anywhere, the words that are nouns as often as
//     verbs: when one of them does not write, it may be the verb and the
//     others its objects ("run_diff", "eval_report"), so the name says
//     nothing; otherwise the first that writes decides ("run_tests").
func verbOf(k []verbKind) int {
	n := len(k)
	if n == 0 {
		return -1
	}
	for i, x := range k {
		if x == strongVerb {
			return i
		}
	}
	ends := [2]int{0, n - 1}
	for j, i := range ends {
		if j == 1 && n == 1 {
			break
		}
		switch k[i] {
		case writeVerb:
			return i
		case readVerb:
			return -1
		}
	}
	for i := 1; i < n-1; i++ {
		switch k[i] {
		case writeVerb:
			return i
		case readVerb:
			return -1
		}
	}
	w := -1
	for i, x := range k {
		switch x {
		case nounRead:
			return -1
		case nounWrite:
			if w < 0 {
				w = i
			}
		}
	}
	return w
}

// NameSuggestsWrite reports whether a tool name says the tool writes, and
// the word of the name that says so. It is the check that makes a trusted
// server's read-only claim unbelievable, exported so that a command can
// name the word.
func NameSuggestsWrite(name string) (word string, ok bool) { return nameSuggestsWrite(name) }

// nameSuggestsWrite reports whether a tool name says the tool writes, and
// which word says so. The name is split into words (see nameWords), which
// are read by verbOf: "delete_file", "file_delete", "bulkDelete",
// "get_and_delete", "purge_cache" and "run_tests" suggest a write, while
// "get_update_status", "list_posts", "agent_run_show", "run_diff" and
// "eval_report" do not.
func nameSuggestsWrite(name string) (string, bool) {
	if w, ok := asciiSuggestsWrite(name); ok || plainSkeleton(name) {
		return w, ok
	}
	return lookAlikeSuggestsWrite(name)
}

// asciiSuggestsWrite is nameSuggestsWrite on the name as written, words
// compared in ASCII lower case.
func asciiSuggestsWrite(name string) (string, bool) {
	var w nameWords
	w.split(name)
	var buf [32]byte
	var kinds [len(w.start)]verbKind
	for i := 0; i < w.n; i++ {
		kinds[i] = plainVerbs.kind(string(w.lower(i, &buf)))
	}
	if i := verbOf(kinds[:w.n]); i >= 0 {
		return w.word(i), true
	}
	return "", false
}

// nameLooksAdditive reports whether the first word of a tool name is one
// that adds something new on every call, and returns that word.
func nameLooksAdditive(name string) (string, bool) {
	var w nameWords
	w.split(name)
	if w.n == 0 {
		return "", false
	}
	var buf [32]byte
	if additiveVerbs[string(w.lower(0, &buf))] {
		return w.word(0), true
	}
	return "", false
}

// nameWords splits a tool name into words without allocating. Words are
// separated by '_', '-', '.', '/', ':' and spaces, and by camelCase
// boundaries: "getHTTPStatus" is "get", "HTTP", "Status". At most the
// first 16 words are kept.
type nameWords struct {
	name  string
	n     int
	start [16]int
	end   [16]int
}

func (w *nameWords) split(name string) {
	w.name = name
	w.n = 0
	begin := -1
	flush := func(i int) {
		if begin >= 0 && w.n < len(w.start) {
			w.start[w.n], w.end[w.n] = begin, i
			w.n++
		}
		begin = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ' ':
			flush(i)
			continue
		case isUpper(c) && begin >= 0:
			prev := name[i-1]
			nextLower := i+1 < len(name) && isLower(name[i+1])
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && nextLower) {
				flush(i)
			}
		}
		if begin < 0 {
			begin = i
		}
	}
	flush(len(name))
}

func (w *nameWords) word(i int) string { return w.name[w.start[i]:w.end[i]] }

// lower returns word i in ASCII lower case, in buf. A word longer than buf
// comes back empty: no verb is that long.
func (w *nameWords) lower(i int, buf *[32]byte) []byte {
	s := w.word(i)
	if len(s) > len(buf) {
		return nil
	}
	for j := 0; j < len(s); j++ {
		c := s[j]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf[j] = c
	}
	return buf[:len(s)]
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// verbSkeletons are the verb lists by skeleton, for names that are not
// plain ASCII; built on first use, so that commands which decide nothing
// do not pay for them at start-up.
var verbSkeletons = sync.OnceValue(func() verbLists {
	return verbLists{skeletonSet(writeVerbs), skeletonSet(strongWriteVerbs), skeletonSet(readVerbs), skeletonSet(nounVerbs)}
})

func skeletonSet(words map[string]bool) map[string]bool {
	m := make(map[string]bool, len(words))
	for w := range words {
		m[lookAlikeWord(w)] = true
	}
	return m
}

// lookAlikeSuggestsWrite is nameSuggestsWrite for a name with characters
// outside plain ASCII, or with ASCII that has look-alikes ("de1ete"):
// the name is split into words after NFKC, and each word is compared by
// its lower-case skeleton, so "dеlete_all" (Cyrillic е) and "ｄｅｌｅｔｅ"
// say they write as "delete_all" does. A skeleton that itself holds a
// separator ("‐" becomes "-") is split again.
func lookAlikeSuggestsWrite(name string) (string, bool) {
	verbs := verbSkeletons()
	n := norm.NFKC.String(name)
	var w nameWords
	w.split(n)
	var kinds []verbKind
	var orig []string
	for i := 0; i < w.n; i++ {
		for _, x := range strings.FieldsFunc(lookAlikeWord(w.word(i)), isNameSeparator) {
			kinds = append(kinds, verbs.kind(x))
			orig = append(orig, w.word(i))
		}
	}
	if i := verbOf(kinds); i >= 0 {
		return orig[i], true
	}
	return "", false
}

// undoVerbs are name words that, without destroying by name, empty or
// roll back something as a whole ("clear_cache", "reset_db"): such a tool
// loses more than what is at the paths it names.
var undoVerbs = wordSet("clean", "clear", "empty", "flush", "format", "prune", "reset", "revert", "rollback")

var undoSkeletons = sync.OnceValue(func() map[string]bool { return skeletonSet(undoVerbs) })

// nameLosesMore reports whether a tool's name says it can lose more than
// what it overwrites: a strongly destructive verb (delete, purge, wipe,
// exec, ...) or one that empties or rolls back (clear, reset, ...)
// anywhere in it, as written or by its look-alike skeleton. A name with
// more words than are read counts as one that does.
func nameLosesMore(name string) bool {
	var w nameWords
	w.split(name)
	if w.n == len(w.start) {
		return true
	}
	var buf [32]byte
	for i := 0; i < w.n; i++ {
		x := string(w.lower(i, &buf))
		if strongWriteVerbs[x] || undoVerbs[x] {
			return true
		}
	}
	if plainSkeleton(name) {
		return false
	}
	strong, undo := verbSkeletons().strong, undoSkeletons()
	w = nameWords{}
	w.split(norm.NFKC.String(name))
	for i := 0; i < w.n; i++ {
		for _, x := range strings.FieldsFunc(lookAlikeWord(w.word(i)), isNameSeparator) {
			if strong[x] || undo[x] {
				return true
			}
		}
	}
	return false
}

func isNameSeparator(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r == '/' || r == ':' || r == ' '
}
