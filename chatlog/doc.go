// Package chatlog keeps interactive chats on disk, so that a person can
// continue one later, list them, or export one.
//
// A session is one JSON Lines file, <dir>/<id>.jsonl, by default under
// $XDG_STATE_HOME/mcphost/sessions. Its first line is a "session" record
// (the [Header]: id, working directory, start, and what it ran with: the
// model, its base URL, the servers by name and identity; a "resumed" note
// later says what a continuation ran with instead); every later line is
// one [Record] appended as it happens: a message of the model's
// conversation, a tool call with its decision, outcome and the model's copy
// of its result, or a note (a call about to be sent, with mcphost's id for
// it; the session's taint as it grew; /clear). A
// text longer than [Log.InlineMax] (a large tool result, say) is not kept
// in the line: it goes to <dir>/<id>.d/<sha256>, written atomically, and
// the line keeps a reference with its size.
//
// # What is guaranteed
//
//   - Records are appended, never rewritten: a new file is created with
//     O_EXCL and an existing one is only ever opened with O_APPEND. A file
//     that does not read back cleanly (a line that is not a record, a last
//     line without its newline, a line over [MaxLine]) is reported as a
//     [*CorruptError] and cannot be continued: nothing is added to it.
//   - One record is one write(2) of one line, under a mutex: concurrent
//     appends from several goroutines never interleave within a line.
//   - Reads are bounded: a line over [MaxLine], a file over [MaxFile] or a
//     referenced text over [MaxText] is refused or elided, never read
//     whole; of a call's result (shown in its card; the model's copy is a
//     message) only [MaxResultPreview] bytes are read back; [List] reads
//     only the first 64 KiB (the header and the first prompt) and the
//     last 256 KiB of each file.
//
// What survives a resume: the taint ([Session.Taint], from the notes and
// the calls), and what each call did ([Session.History]): a call the model
// asked for that has no result in the file (mcphost was killed in the
// middle of a turn) is answered from its own record, else, when it was
// started, from the audit log ([Session.Settle]; an intent without an
// outcome is an unknown outcome), and as not run only when it was never
// started. [Session.Calls] names the calls with an unknown outcome for the
// loop. Grants "for the session" are not kept: they end with the process.
//
// Two processes appending to the same session at once are not excluded
// from each other; their lines do not interleave, but the conversation
// they leave is a mix.
package chatlog
