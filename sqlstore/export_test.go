package sqlstore

import "time"

// SchemaV1 is the first schema, to build stores as older programs made them.
var SchemaV1 = migrations[0].sql

// SetCheckpointTiming shortens the checkpointer's timing for a test, for
// stores opened after the call; the returned func restores it.
func SetCheckpointTiming(idle time.Duration, walBytes int64) (restore func()) {
	oldIdle, oldWAL := checkpointIdle, checkpointWAL
	checkpointIdle, checkpointWAL = idle, walBytes
	return func() { checkpointIdle, checkpointWAL = oldIdle, oldWAL }
}

// Checkpoints is how many checkpoints the store's checkpointer has run.
func (s *Store) Checkpoints() uint64 { return s.cp.runs.Load() }

// WALBytes is what the WAL holds since it started over, and what of that
// no checkpoint has copied.
func (s *Store) WALBytes() (used, pending int64) { return s.walBytes() }
