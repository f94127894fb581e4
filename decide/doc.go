// Package decide is mcphost's decision engine: before a tool call runs it
// decides whether the call runs silently (Allow), needs a person (Ask) or
// is refused (Deny), and says why.
//
// It is a pure function of its input. It does no I/O, reads no clock,
// uses no randomness and imports no MCP or UI package; conversion from MCP
// types happens in the caller. Besides the standard library it uses
// golang.org/x/text (NFKC) and github.com/mtibben/confusables (Unicode's
// confusables table, UTS #39), both pure, for look-alike names, and its own
// subpackage jsonscan, the JSON scanner it shares with package client
// (standard library only). Rules are
// compiled once with Compile and a *Policy evaluates any number of calls, concurrently, with Decide. Every
// zero value is the most restrictive one: a zero Verdict denies, a zero
// Class is Unknown, a zero Mode is Headless, a zero AutoApprove asks for
// everything.
//
// # Hints, class and tier
//
// A tool's four annotations (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint) are read as true, false or absent. They
// count only when the server is trusted, the "annotations" object exists
// and is well formed, and the tool's definition hash equals its pin (or
// the tool was never pinned). Otherwise the tool is the worst case: not
// read-only, destructive, not idempotent, open-world, class Unknown, tier
// T3. The pin itself is the caller's: mcphost pins every tool the first
// time it lists it, before a model is offered it (package host), so
// Tool.PinnedHash is set for every listed tool and a later change always
// shows here as "definition-changed". Likewise the caller resolves
// argument paths on disk (Input.Bases, Input.Paths), binds project consent
// and handles signals; this package only decides. When they count, absent
// hints take the spec defaults
// (readOnlyHint false, destructiveHint true, idempotentHint false,
// openWorldHint true), and a read-only claim is not believed when
// destructiveHint is also true (reason "contradiction") or when the name
// says the tool writes (reason "name-suggests-write"). An absent
// destructiveHint next to readOnlyHint:true is no contradiction.
//
// A name says the tool writes according to its verb. It is split into
// words at '_', '-', '.', '/', ':', spaces and camelCase boundaries, and
// words are compared without regard to ASCII case. Any strongly destructive
// verb (delete, remove, drop, purge, overwrite, truncate, wipe, kill, exec,
// ...) says it writes wherever it stands. Otherwise the verb stands first
// or last: the first of those two words that is a plain verb decides, a
// write verb (send, update, set, create, write, start, cancel, ...) saying
// it writes and a read verb (get, list, read, search, show, ...) that it
// does not; failing that, the first plain verb among the middle words
// decides ("github_create_issue"). Words that name things as often as
// actions (run, eval, record, diff, report, log, status, query, ...) are
// the verb only when no plain verb is in the name: then one that does not
// write (diff, report) may be the verb and the others its objects, so the
// name says nothing ("run_diff", "eval_report"), and otherwise the first
// that writes says it writes ("run_tests", "observation_record"). So
// "delete_file", "file_delete", "bulkDelete", "get_and_delete" and
// "purge_cache" say they write; "get_update_status", "list_posts",
// "agent_run_show" and "run_diff" do not. A name with characters outside
// ASCII, or with ASCII look-alikes
// ("de1ete"), is checked a second time with each word compared by its
// lower-case confusable skeleton (see Skeleton), so "dеlete_all" with a
// Cyrillic е and the fullwidth "ｄｅｌｅｔｅ" say they write too. A false
// match only costs a confirmation.
//
// The class is Read, Additive (a write that is not destructive),
// Destructive, or Unknown. The tier follows the design's table:
//
//	class        closed world   open world
//	read         T0             T1
//	additive     T0             T1
//	destructive  T2             T3
//	unknown      T3             T3
//
// T0 allows; T1 to T3 ask. Options.AutoApprove can raise T0 to T1:
// ApproveReads for additive writes, ApproveNone for everything.
//
// # Rules
//
// Rules come from the user's own configuration and flags. Each has an
// effect: deny, ask or allow. All deny rules are tried first, then ask,
// then allow; within an effect, rules are tried in the order given to
// Compile, and the first match decides. A deny rule always wins. An ask
// rule makes the call ask and keeps grants from applying. An allow rule
// allows, except that it never lifts a protected path, invalid arguments
// or a definition that changed since it was pinned; and for a server that
// is not trusted it applies only when its server part names the server
// exactly, without wildcards.
//
// A rule is a JSON string or a JSON object. The string form is a tool
// pattern alone:
//
//	"fs/read_*"         every tool of server fs whose name starts with read_
//	"fs"                every tool of server fs (same as "fs/*")
//	"*/delete_*"        delete_ tools of every server
//
// A tool pattern is SERVER/TOOL, split at the first '/'; the tool part may
// itself contain '/'. SERVER is matched against the server's name in the
// configuration, TOOL against the raw tool name, both case-sensitively.
// Deny and ask rules also match TOOL against the name's confusable
// skeleton (NFKC, then Unicode's confusables table; see Skeleton), with
// the pattern's literal parts turned into skeletons the same way: a deny
// rule written for "*/delete*" refuses "dеlete_all" (Cyrillic е),
// "ｄｅｌｅｔｅ" (fullwidth) and "de1ete". Allow rules match the raw name
// only, so a look-alike never gains what the name it imitates was given. In
// each part '*' matches any run of characters, including none and
// including '/', and '?' matches exactly one character; every other
// character matches itself. That is the whole syntax: '[', ']', '{', '}'
// and '\' (classes, alternatives and escapes in other glob dialects) are
// rejected by Compile wherever a pattern is written, so a rule never
// compiles to something other than what it says ("get_[t]ask" is an error,
// not a rule that matches nothing). Neither part may be empty.
//
// The object form adds conditions; all of them must hold:
//
//	{
//	  "id":    "no-recursive-tmp",
//	  "tool":  "fs/write_*",
//	  "args":  {"path": {"prefix": "/srv/"}, "options.recursive": {"equals": true}},
//	  "hints": {"destructive": true},
//	  "class": "destructive"
//	}
//
// Fields, each at most once; any other field is an error:
//
//   - "tool" (required): a tool pattern as above.
//   - "id": a name for the rule, 1 to 64 letters, digits, '-', '_' or '.',
//     unique among rules. Without one the rule is named EFFECT[INDEX]
//     from its spec ("deny[2]"), or SOURCE:EFFECT[INDEX] when two specs
//     would get the same name. Reasons show it as "rule:ID".
//   - "args": an object from argument paths to conditions; see below.
//   - "hints": an object with any of "readOnly", "destructive",
//     "idempotent", "openWorld" set to true or false, compared with the
//     effective hints (after defaults and worst-case substitution). An
//     allow rule may only require the safer value (readOnly true,
//     destructive false, idempotent true, openWorld false); deny and ask
//     rules only the riskier one. Otherwise a server could move a
//     decision toward Allow by dropping a hint, and Compile rejects it.
//   - "class": "read", "additive", "destructive" or "unknown", in that
//     order of risk. For an allow rule it is a ceiling: the call's class
//     is this one or safer. For deny and ask rules it is a floor: this
//     one or riskier.
//   - "evenWhenTainted": true, on an allow rule only: the rule still
//     applies to open-world calls once the session is tainted (see
//     below). Without it, taint suspends the rule for those calls.
//
// # Argument conditions
//
// An argument path is object keys joined with '.' ("path",
// "options.recursive"); keys containing '.' cannot be named. A part that
// is a non-negative integer also indexes an array ("items.0.id"), and a
// name part that meets an array applies to each of its elements, one level
// deep (arrays of arrays are not flattened). Keys match ignoring case, as
// Go's encoding/json does when it fills a struct.
//
// A condition is an object with one or more of these operators, all of
// which must hold:
//
//   - "equals": any JSON value. Strings compare exactly, numbers by value
//     (1e2 equals 100; integers exactly), objects and arrays by canonical
//     form (see Canonical).
//   - "prefix": a non-empty string the value must start with.
//   - "glob": a non-empty pattern over the whole string value, with '*'
//     and '?' as in tool patterns.
//
// "prefix" and "glob" hold only for strings. When the value at the path is
// an array (and "equals" is not itself an array), its elements are tested
// instead.
//
// Conditions fail closed. Every value found at a path is tested, including
// values under duplicate keys and under keys that differ only in case:
// deny and ask rules match when any value satisfies the condition, allow
// rules only when at least one value exists and every one does. A string
// that contains '/' and is not a clean path is tested both as written and
// cleaned ("/srv/../etc" is also "/etc"), with the same any/all rule. A
// path absent from the arguments satisfies no condition, for any effect:
// the call did not pass that argument. Arguments that are not a valid JSON
// object (empty and null mean no arguments) cannot be read, so conditions
// of deny and ask rules hold, those of allow rules do not, and the call
// asks at least (reason "invalid-arguments").
//
// # Protected paths
//
// Options.ProtectedPaths lists the host's own files: its configuration,
// state, token, cache and audit locations and the project's .mcp.json. A
// call whose arguments lead to one asks at tier T3 (reason
// "protected-path"), whatever its class: reads count too, since reading
// the token store is exfiltration. In Headless mode it is denied. No allow
// rule or grant lowers the verdict; a deny rule still refuses.
//
// An argument leads to a protected path when some string in the
// arguments, object keys and strings nested in arrays and objects
// included, or a word of one, names it:
//
//   - as an absolute path, with '\' read as '/', a drive letter ignored,
//     percent-escapes decoded, and "~", "$HOME" and "${HOME}" expanded
//     from Options.Home;
//   - as a relative path joined with one of Input.Bases, the directories
//     the server may resolve it against (its working directory, the
//     directories on its command line, the roots it was offered, the home
//     directory): the whole string, and each word that has a '/' in it;
//   - or through Input.Paths, where the host found the strings lead on the
//     file system once symbolic links of their longest existing prefix
//     are followed (Decide itself does no file system access).
//
// Strings are split into words at whitespace, quotes, and = ; | & ( ) < >
// , : so that command lines, --flag=value options, PATH-style lists and
// file:// URLs are seen. Paths are cleaned lexically, as a server that
// cleans before opening does ("a/../.config" is ".config"), and compared
// ignoring ASCII case. A path counts when it is a protected path or
// inside one; for a call that is not a read, also when it is a directory
// that holds one (moving or deleting "~/.config" reaches the config). A
// read of such a directory lists names, not contents, and does not count:
// listing the project root, which holds .mcp.json, or the home directory
// does not ask for this reason. A read here is a call of class Read, or a
// call of an untrusted server's tool, unchanged since it was pinned, whose
// own annotations would make it a read on a trusted server; such a call
// still asks at T3 for its class, but a grant or an allow rule naming the
// server can then approve it.
// An ordinary relative path such as "notes.txt" is not flagged unless a
// base is itself inside a protected directory.
//
// # Grants, taint and modes
//
// A Grant is a person's approval, bound to the server's identity, the tool
// name and the definition hash (see Grant for the exact matching), and,
// made with NewGrant, to the tier of the question answered: it covers no
// riskier call. It turns Ask into Allow, never Deny into anything; it does
// not apply under an ask rule, a protected path, invalid arguments or a
// changed definition. Once the session is tainted (it has seen both
// private data and outside content) it covers an open-world call only if
// the call is a read and the person gave the grant in that state, with
// the taint warning in front of them (Grant.Tainted). Tier T3 accepts no
// ScopeAlways grant; AllowedScopes lists what a dialog may offer.
//
// An idempotent destructive call of a trusted server's unchanged tool,
// closed world (T2), whose name says nothing of deleting, emptying or
// rolling back, asks at T1 with reason "new-paths" when the host found
// that its arguments name only paths that do not exist yet
// (Input.NewPaths, NewPathsMatter): repeating such a call changes nothing
// more, so what it can lose is what is at the place it writes, and
// nothing is there. A grant given at T1 then covers no call that names
// something that exists.
//
// Taint suspends allow rules the same way: once the session is tainted,
// an open-world call asks (and is denied headless) even when an allow
// rule matches, with reason "tainted-session", unless the rule says
// "evenWhenTainted": true. Closed-world calls are not affected.
//
// # Poisoned descriptions
//
// A tool description is the server's text for the model. PoisonFlags
// flags one that gives the model orders instead of documenting the
// tool: it tells the model how to use another tool ("when using
// send_email, always BCC …"), points it at secrets (~/.ssh, id_rsa, .env,
// .aws/credentials, "the user's credentials"), asks it to keep something
// from the person ("do not tell the user", "don't mention"), or carries
// an instruction block (<IMPORTANT>, <system>, [INST], "ignore previous
// instructions"). Each heuristic that fires adds a reason
// "poisoned-description:NAME" whatever the server's trust. The call then
// asks: its tier is at least T1, and no allow rule applies, since rules
// are written without reading descriptions. A grant still applies,
// because a person gave it in a dialog that showed the flag, and a deny
// rule still refuses. The heuristics are narrow on purpose: none fires on
// any description of the reference servers the tests keep in testdata.
//
// In Headless mode Ask becomes Deny with reason "needs-approval".
//
// A call the person asked for themselves, not the model (Input.ByPerson:
// an @server:uri mention in a chat message), starts from Allow whatever
// its tier, with reason "by-person"; deny rules, ask rules, invalid
// arguments and protected paths still hold it back as they do any call.
//
// Decision.Retry says whether a call whose outcome is unknown may be sent
// again: a read, or a write whose effective idempotentHint is true, from
// a trusted server whose definition is unchanged.
//
// # Lint
//
// Lint checks annotations for server authors: missing, malformed and
// contradictory hints, read-only claims on names that say they write,
// hints that default to the riskier reading, idempotent claims on names
// that add something on every call, meaningless hints, duplicate tool
// names, names with characters outside ASCII ("look-alike-name", an error
// when they imitate ASCII letters) and poisoned descriptions. Each Finding's message says what mcphost will do and how to fix it.
//
// # Reasons
//
// Every decision carries reason codes, stable strings with one sentence
// each for people; ReasonCodes lists them in the order Decide emits them
// and ReasonText gives the sentence. Each is of one of two kinds: a reason
// to ask or refuse, or a fact in the call's favour that lowers its risk
// (read-only, idempotent, closed-world, a grant, by-person, and the allow
// rule that let the call run). Decision.InFavour tells them apart and
// Decision.Split sorts them, so that whoever shows the reasons never lists
// "it only reads" as a reason to ask.
package decide
