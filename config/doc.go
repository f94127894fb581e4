// Package config loads mcphost's configuration from the user's config file,
// the project's .mcp.json, and command-line flags, and reports every problem
// with the file, line and column it is about.
//
// It starts no processes and makes no policy decisions: permission rules are
// passed on as written (RuleSpec) for the policy package to compile.
//
// # File format
//
// A config file is one JSON object in the format Claude Desktop uses, so
// existing files work unchanged, plus mcphost's own keys:
//
//	{
//	  "mcpServers": {
//	    "tasks":  {"command": "tasks-server", "args": ["--db", "x.db"], "env": {"K": "v"}, "trust": true},
//	    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "a"}},
//	    "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"}
//	  },
//	  "permissions": {"autoApprove": "additive", "allow": ["tasks/list_*"], "ask": [], "deny": ["*/delete_*"]},
//	  "model": "anthropic:claude-sonnet-4-5"
//	}
//
// Top-level keys: "mcpServers", "permissions", "model", "models",
// "toolSearch" (one of ToolSearchModes; user's config only), "notify" (one
// of NotifyModes; user's config only), "samplingBudget" (the tokens each
// server may spend of the person's model through sampling in one run or
// chat, default DefaultSamplingBudget, 0 refuses sampling; user's config
// only), "telemetry" (an OpenTelemetry export: "endpoint", an OTLP/HTTP
// URL, and "headers", an object of strings that may use ${NAME}; user's
// config only), "askVia" (per tier "T1" … "T3", the channels of
// AskChannels whose answer approves a call, default DefaultAskVia; user's
// config only, narrowed by a managed policy), "serve" ({"auth": {"issuer",
// "audience", "scopes", "clientId", "clientSecret", "approveClientId",
// "approveClientSecret"}}: serve --http as an
// OAuth resource server; user's config only) ("$schema" is accepted for
// editors).
//
// Server keys: "command" (string), "args" (strings), "env" (object of
// strings), "cwd" (string), "type" ("stdio", "http" — also written
// "streamable-http" or "streamableHttp" — or "sse", in any case), "url"
// (http or https),
// "headers" (object of strings), "trust" (boolean), "protocolVersion"
// (a date, default DefaultProtocolVersion, or ProtocolAuto), "tasks" (one
// of TaskModes, default "required"), "startTimeout" and "callTimeout"
// (duration strings such as "30s"; left out, the host's defaults apply),
// "disabled" (boolean), "alwaysLoad" (tool names offered in full even
// while tool search is on; user's config only: a project file's is ignored
// with a warning). Without "type", a server with
// "command" is stdio and one with "url" is http. A server needs exactly one
// of "command" and "url". Server names have 1 to 64 letters, digits, '-',
// '_' and '.', because they become prefixes of tool names; HostName
// ("mcphost", in any case) is reserved.
//
// Permission keys: "autoApprove" (one of AutoApproveLevels), and "allow",
// "ask" and "deny", arrays of rules, each a glob string or an object.
//
// "models" maps a model spec ("anthropic:claude-sonnet-4-5") to its
// settings (ModelSettings): "maxTokens", the output limit, "thinking":
// "off", "adaptive", an effort ("low", "medium", "high", …) or a token
// budget as a number, and "contextWindow", the window in tokens when
// mcphost's table does not know the model. The llm package checks them against the provider.
// Like "model", it is read from the user's own config only.
//
// A null value is the same as leaving the key out. Of duplicate keys the
// last one counts, as in JavaScript, and the others draw a warning — except
// server names: a name defined twice in "mcpServers" is an error naming
// both places (in a project file, both entries are skipped with a
// warning), since rules name servers and the entry kept would inherit the
// rules written for the other.
//
// # Warnings
//
// Unknown keys draw a warning, with a suggestion when the key looks like a
// typo of a known one. Keys that other MCP hosts write and mcphost ignores
// ("autoApprove", "alwaysAllow", "timeout", "description", "transportType",
// "httpUrl", "envFile", "includeTools", "excludeTools" in a server;
// "globalShortcut", "servers", "inputs" at the top level; "defaultMode" in
// "permissions") draw a warning that says what to use instead. None of them
// is honoured: a server entry approving its own tools would let a project
// file approve tools, and "timeout" means seconds to one host and
// milliseconds to another.
//
// # Environment variables
//
// In "args", "env" values, "url" and "headers" values, ${NAME} is replaced by
// the variable's value and ${NAME:-default} by the value or, when the
// variable is unset or empty, the default; "$${" is a literal "${". $NAME
// without braces is left alone, and nothing is ever run. An unset variable
// without a default is an error, except in a disabled server, where the
// reference is kept as written. Server.Vars lists the variables an entry
// uses, and Server.Shown gives the entry with every value that read one as
// written: the form to show wherever others than the person may read it.
//
// An http or sse entry whose URL is plain http to a host that is not this
// machine may not carry credentials (headers, a user and password in the
// URL, values the URL reads from the environment) unless it says
// "allowInsecureHTTP": true, which only the user's own file can.
//
// # Sources and trust
//
// A server in the user's own file or given with --server is consented by
// that act. A project file (.mcp.json in the working directory) may add
// servers but cannot grant trust, add rules, set the auto-approve level or
// choose the model; those keys are ignored with a warning, and its servers
// have Source SourceProject so the caller can ask for consent before
// starting them. A project server's File is the project file's absolute
// path with symbolic links resolved, and a stdio project server's Cwd is
// absolute (the directory the file was found in, or its "cwd" resolved
// against that), so that a consent can be bound to where the entry is and
// what its relative paths mean. Nothing in a project file is an error for
// the loader: an entry with a problem is skipped with a warning, and a file
// that cannot be read or parsed is ignored with one, so that a repository
// cannot stop mcphost (edits of the file are strict, see AddServers). See
// Load for how sources merge.
//
// # Writing and importing
//
// AddServers and RemoveServer change the "mcpServers" of one file and leave
// its other bytes alone; they never write over a file the loader refuses,
// nor write a result it would refuse, and they replace the file atomically.
// ImportFiles and ReadImport find and convert the servers other MCP hosts
// (Claude Desktop, Claude Code, Cursor, VS Code, Codex) have configured;
// trust and approvals are never carried over.
package config
