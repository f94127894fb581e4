// Package approver lets a person approve the calls of a running
// `mcphost serve` from another terminal: serve holds a Broker (the gate's
// host.Asker), `mcphost approve` holds a Conn, and they speak over a Unix
// socket in the state directory.
//
// # Who may connect
//
// Each serve has its own socket (SocketPath: serve-PID.sock) in the
// sockets' directory of the state directory (SocketDir), mode 0700, and the
// socket is itself mode 0600; every connection's peer user is read from the
// kernel (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD) and
// one from another user, or one whose user cannot be told, is refused with
// an error line. A serve owns its socket by an flock on the lock file beside
// it: a socket file left by a serve that died is removed (by the next serve
// that starts), a live one is never taken over (ErrBusy).
//
// An approver reaches every serve of the person through a Mux: it connects
// to each socket of the directory, and to new ones as they appear (Watch),
// marks each question with the serve that asked it, and sends each answer
// to that serve.
//
// # The protocol
//
// Newline-delimited JSON objects of at most MaxLine bytes, each with a
// "type". Both sides open with a hello carrying Version; a peer speaking
// another version, a malformed line, an unknown member in an approver's
// line, or a line that is too long ends the connection with an error line
// saying what was wrong.
//
//	approver → serve  {"type":"hello","version":1}
//	serve → approver  {"type":"hello","version":1,"label":"…","pid":123}
//	serve → approver  {"type":"question","id":"…","server":"…","tool":"…","title":"…","description":"…",
//	                   "trusted":false,"tier":"T3","class":"unknown","reasons":[{"code":"…","text":"…"}],
//	                   "arguments":"{…}","scopes":["once","args","session"],"changed":true,"changedFields":["…"],
//	                   "definition":"…","nonce":"…"}
//	approver → serve  {"type":"answer","id":"…","argsHash":"…","approve":true,"scope":"once","reason":"…",
//	                   "via":"web","passkey":{"expires":"…","response":{…}}}
//	serve → approver  {"type":"withdrawn","id":"…","why":"…"}    the call no longer waits
//	serve → approver  {"type":"rejected","id":"…","message":"…"} the answer approved nothing
//	serve → approver  {"type":"error","message":"…"}             the connection ends
//
// An answer is bound to one call: its id must name a waiting question and
// its argsHash must be ArgsHash of that question's exact argument text, or
// it approves nothing (rejected) and the call keeps waiting. Its scope is
// clamped to the question's scopes. "arguments" in an answer are edited
// arguments: the gate decides the edited call again and asks again if it
// must, so an edit approves nothing by itself.
//
// # Which way an answer came
//
// An answer is recorded as given in `mcphost approve`, or on the approval
// page when it says "via":"web": both are the person's own programs on the
// socket, so that word is taken as said. An approval that carries a
// "passkey" proof counts as the page's with a passkey only when the serve
// verifies it itself (Options.Passkeys): a WebAuthn assertion, with user
// verification, by an enrolled passkey, of the challenge made of the
// question's Binding (client, server, tool, "definition", the arguments'
// hash), the question's own "nonce" — made by serve for that question
// alone — and the proof's expiry. A proof that does not verify approves
// nothing (rejected), and the call keeps waiting.
//
// Everything in a question except its id came from an MCP server (or the
// person's rules) and is untrusted: serve bounds every string, and the
// approver sanitizes before it draws (ui/dialog does).
//
// # Queueing and disconnects
//
// Every question goes to every connected approver, and to each approver
// that connects while it waits; the first bound answer wins and the others
// see it withdrawn. When an approver disconnects, its questions still wait
// for the others; when the last one disconnects, every waiting call is
// refused at once (ErrNoApprover), because no one is left to ask. Ask with
// no approver connected refuses at once too: serve checks Waiting first and
// refuses with advice instead.
package approver
