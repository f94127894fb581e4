package audit

import (
	"fmt"
	"time"
)

// DefaultSyncDelay is Options.SyncDelay when it is zero.
const DefaultSyncDelay = 20 * time.Millisecond

// ReadClass is the Record.Class of a call that only reads. Its intent is
// not waited for on disk: nothing it does needs undoing or must not be
// repeated, and the gate runs it even when its intent cannot be written.
const ReadClass = "read"

// waitsForDisk reports whether Append returns only once r is on disk: an
// intent of a call that may change something (any class but ReadClass,
// an empty one included), so that after a power failure the call shows as
// open. Every other record is written at once and synced by the next sync
// (see Options.SyncDelay).
func waitsForDisk(r *Record) bool {
	return r.Kind == Intent && r.Class != ReadClass
}

// syncThrough returns once the first gen records this Log wrote are on
// disk, syncing the file unless a sync that covers them is already
// running, in which case it waits for that one. Syncs run without l.mu, so
// records keep being written while the disk works, and one sync covers
// every record written before it started: concurrent intents share it.
// l.mu is held; the file lock is not.
func (l *Log) syncThrough(gen uint64) error {
	for l.synced < gen {
		if l.failed != nil {
			return fmt.Errorf("audit: sync %s: %w", l.path, l.failed)
		}
		if l.closed {
			return ErrClosed // Close syncs what was written
		}
		if l.syncing {
			l.cond.Wait()
			continue
		}
		// Every record counted in l.written was written (its write
		// returned) before this sync starts, so the sync covers it.
		target := l.written
		l.syncing = true
		l.mu.Unlock()
		err := l.opts.Sync(l.f)
		l.mu.Lock()
		l.syncing = false
		l.cond.Broadcast()
		if err != nil {
			if l.failed == nil {
				l.failed = fmt.Errorf("an earlier sync failed, records may be lost: %w", err)
			}
			return fmt.Errorf("audit: sync %s: %w", l.path, err)
		}
		l.synced = max(l.synced, target)
	}
	return nil
}

// syncSoon makes sure a sync starts within Options.SyncDelay for the
// records written so far. l.mu is held.
func (l *Log) syncSoon() {
	if l.timer != nil || l.closed {
		return
	}
	l.timer = time.AfterFunc(l.opts.SyncDelay, l.backgroundSync)
}

// backgroundSync syncs what Append left unsynced. A failure is kept in
// l.failed: every later Append fails, as after a failed sync of an intent.
func (l *Log) backgroundSync() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if l.closed || l.failed != nil {
		return // Close syncs what is left
	}
	_ = l.syncThrough(l.written)
}
