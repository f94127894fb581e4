// Package audit keeps mcphost's audit log: an append-only, hash-chained
// JSON Lines file with one intent record, written before a tool call runs
// (and synced first when the call is not a read), and one outcome record
// after it, linked by session and call id. The gate writes it through a
// Log; "mcphost audit tail" and "mcphost audit verify" read it with Tail
// and Verify.
//
// # Format
//
// Each line is one Record encoded as a compact JSON object (as
// encoding/json writes it, members in the order of the struct fields, empty
// optional fields left out; a record of plain ASCII strings is written by
// a hand-written encoder that gives the same bytes) followed by a newline. The first member is always "v", the last two
// are always "prev" and "hash":
//
//	{"v":1,"seq":7,"time":"2026-03-01T09:30:00.000000000Z","kind":"intent",…,"prev":"<64 hex>","hash":"<64 hex>"}
//
// Never stored: raw arguments or results unless Options.RecordData (by
// default only a SHA-256 and a size are kept, and with it they pass through
// Redact), credential-looking text in attempt details, and the exact values
// listed in Options.Secrets (environment and header values of the
// configured servers). The log cannot recognize every secret by itself: the
// caller must not put tokens or auth headers into other fields.
//
// # What the hash covers
//
// "hash" is the lower-case hex SHA-256 of the exact bytes of the line
// without its "hash" member: take the line without its newline, remove the
// final `,"hash":"<64 hex>"}` (75 bytes) and put back the closing `}`. That
// is every byte of every other member as written, "v", "seq" and "prev"
// included, so each record commits to the whole chain before it. Verify
// never re-encodes a record, so the check does not depend on how
// encoding/json formats things, and a record written by a newer version,
// with fields this one does not know, still verifies. "prev" is the hash of
// the previous record, Genesis (64 zeros) for the first; "seq" is 1 for
// the first record and grows by one per record.
//
// Without a key, the chain detects changes to part of the file; someone who
// can rewrite the file can also rewrite every hash after their change, and
// records removed from the end leave a chain that is whole. Keep the head
// elsewhere to detect that.
//
// # The head, kept elsewhere
//
// A log's head is the seq and hash of its last record (Head). With
// Options.Heads, Close records it outside the log, in a HeadStore keyed by
// the log's absolute path (mcphost keeps it in its state file), and
// CheckHead later tells whether the log still holds that record: a log that
// ends before it, that holds another record at its seq, or whose record
// there was changed, yields a ProblemTail. SaveHead never moves a recorded
// head backwards, nor past a log that no longer holds it, so a cut stays
// visible however many records are written after it, until a person
// records the new end with ResetHead. Records removed while a Log has the
// file open make its next Append fail: other writers only ever append, so
// a file shorter than this Log left it lost records.
//
// # Reading the end
//
// Open, Append (when another process appended), Tail and CheckHead read
// the file backwards from its end, line by line, only as far as they need.
// No record is longer than MaxLine, so a longer line is not read whole: the
// reading stops with an error wrapping ErrLongLine after at most MaxLine
// and a few kilobytes of it, and Open fails (so only reads run) until the
// file is moved aside. Verify reads forward and reports such a line as
// malformed without keeping it.
//
// # Appending from several processes
//
// Several mcphost processes may append to the same file. Each Append
// holds an exclusive flock on the file while it checks its size, reads the
// last record back from the end of the file only when the size is not what
// this Log left it at (another process appended), and writes the new line
// with one write on an O_APPEND descriptor. So seq stays contiguous and
// the chain unbroken whoever writes. The lock is held for that write alone
// and released before Append returns and before any sync, so a process
// stopped between two records (Ctrl-Z, SIGSTOP, a debugger) never holds up
// another's Append. On systems
// without flock (Windows, Solaris, AIX) only appends within one Log are
// serialized.
//
// # What is on disk when
//
// When Append returns, its record is in the file: the write has returned,
// so the kernel holds it and no crash of mcphost can lose it. Surviving a
// power failure or a crash of the system takes a sync (fdatasync on Linux,
// fsync elsewhere), and records differ in when they get one:
//
//   - The intent of a call that is not a read (Class is anything but
//     ReadClass, or empty) is synced before Append returns, with every
//     record written before it. The gate runs such a call only after that,
//     so a call that may have changed something always has an intent on
//     disk: after a power failure it shows as open, never as never asked.
//   - An outcome, and the intent of a read, are synced by the next sync:
//     the next such intent's, a background sync the Log starts at most
//     Options.SyncDelay (DefaultSyncDelay, 20 ms) after the record was
//     written, or Close's. A power failure within that window can lose
//     them: an intent without its outcome then shows as open (nothing
//     went missing unseen but the outcome), and a read, which the gate
//     runs even without an intent and may repeat, can vanish from the log.
//
// A sync runs without the Log's lock and covers every record written
// before it started, so intents appended at once share one sync and
// Appends go on while the disk works. A failed sync, whichever Append or
// background sync ran it, makes every later Append fail.
//
// # A chain kept in a store
//
// Several processes on several machines (replicas of "mcphost serve") can
// append to one chain kept in a database: a Chain, such as the PostgreSQL
// store's. ChainLog completes each record as Log does and hands the store
// its line, built after the head the store holds locked, so the store's
// rows are the lines of a file log, in seq order, and Verify checks them
// (exported as a file) exactly as it checks a file. The store, not the
// process, serialises appends, and a record is durable when its Append
// returns, whatever its kind.
//
// # Crashes
//
// A process that dies, or a disk that fills, in the middle of a write can
// leave the start of a line without its newline. The next Append sees that
// the file does not end with a newline, steps back over the unfinished
// line to the last whole record, and writes a newline and then a record
// that chains to that last whole record. Verify reports the unfinished line
// as a ProblemTruncated at its own line number and checks the chain around
// it, so a crash costs exactly the record that was being written and is
// visible; nothing else is reported. An intent whose outcome was never
// written (the process died during the call) is not a problem: Verify lists
// it in Report.OpenIntents.
package audit
