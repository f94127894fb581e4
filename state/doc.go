// Package state is mcphost's durable memory: the "always" grants a person
// gave, the servers a person trusted from inside mcphost, the pinned
// definition hash of every tool, the consents given to servers from
// project-level files, and the head (last seq and hash) of each audit log
// as mcphost last closed it, keyed by the log's absolute path, which shows
// when records were removed from the log's end. It lives in one JSON file, by default
// $XDG_STATE_HOME/mcphost/state.json; the caller passes the path.
//
// Trust written in the person's own configuration or given with --trust is
// not kept here; it stays in their configuration.
//
// # Reading and writing
//
// [Load] reads the file once, for example at start-up. [Update] is the only
// way to change it: it takes an exclusive lock on a sibling lock file
// (state.json.lock), reads the file again, lets the caller change the
// [State], and writes the result atomically: to a temporary file in the
// same directory (mode 0600), synced to disk, renamed over the file, and the
// directory synced. Two mcphost processes that update the file at the same
// time therefore never lose each other's changes, and a crash leaves either
// the old file or the new one, never a mix. The directory is created with
// mode 0700 when missing; an existing one keeps its mode. A symbolic link at
// the path is replaced by a file. The lock file is left in place: removing
// it would let two processes lock different files.
//
// On Linux, macOS and the BSDs the lock is flock(2). Elsewhere it only
// excludes other updates in the same process.
//
// # Errors
//
// A missing file is an empty state. A file mcphost cannot read with
// confidence is never reset or rewritten: [Load] and [Update] return a
// [*CorruptError] (with the line and column of a JSON syntax or type error)
// or, for a file written by a newer mcphost, a [*VersionError]. Files larger
// than [MaxSize] are refused the same way, so a damaged or hostile file
// cannot exhaust memory. Fixing or moving the file is the person's call.
//
// # Format
//
// The file is indented JSON with object keys in sorted order, except that
// "version" comes first; the same state always produces the same bytes.
// Times are UTC, to the second. Hashes are opaque strings; identities are
// the hash of a server's launch command or URL (see the client package).
//
//	{
//	  "version": 1,
//	  "auditHeads": {
//	    "/srv/ci/state/mcphost/audit.jsonl": {
//	      "hash": "71c7…",
//	      "recordedAt": "2026-05-01T10:05:00Z",
//	      "seq": 42
//	    }
//	  },
//	  "consents": {
//	    "/srv/src/notes/.mcp.json#db": {
//	      "choice": "untrusted",
//	      "chosenAt": "2026-05-01T10:02:00Z",
//	      "hash": "5f0c…"
//	    }
//	  },
//	  "grants": [
//	    {
//	      "definitionHash": "9e1d…",
//	      "grantedAt": "2026-05-01T10:00:00Z",
//	      "name": "tasks",
//	      "scope": "always",
//	      "server": "3b7a…",
//	      "tool": "set_status"
//	    }
//	  ],
//	  "pins": {
//	    "3b7a…": {
//	      "set_status": {
//	        "hash": "9e1d…",
//	        "pinnedAt": "2026-05-01T09:58:00Z"
//	      }
//	    }
//	  },
//	  "trust": {
//	    "3b7a…": {
//	      "name": "tasks",
//	      "trustedAt": "2026-05-01T09:59:00Z"
//	    }
//	  }
//	}
//
// A grant has the fields of decide.Grant (its scope is always "always", and
// it has no argsHash) plus the server's configuration name and the time it
// was given; "via", when present, is the channel the person gave it through
// (audit.Channel: "dialog", "approve" …), which the calls it lets run name.
//
// # Versions and unknown fields
//
// "version" is the format's major version, currently [Version]. A file with
// a larger version was written by a newer mcphost that may have changed the
// meaning of fields; it is neither read nor written ([*VersionError]).
// Unknown top-level keys are not an error and are written back unchanged,
// so a later mcphost can add a section without a new version. Unknown
// fields inside a record are ignored and dropped when the file is
// rewritten; a change that an older mcphost must not drop needs a new
// version.
package state
