package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// On a SQLite file the write-ahead log is copied into the database
// (checkpointed) by a goroutine of the store's own, not by the connection
// that commits. SQLite's automatic checkpoint runs inside the commit that
// takes the WAL past its threshold, so the billing writer, whose commits
// are nearly all of a gateway's, paid every checkpoint and waited for its
// syncs. A checkpoint copies each page once however many frames of it the
// WAL holds, and a billing batch rewrites the same few pages (the last
// leaf of each index), so checkpointing a longer WAL less often copies
// less: at 4,000 pages instead of 1,000 the writer used about 9 % less CPU
// a call, but done in the commit it held one batch up for over a second
// on a busy disk (docs/PERFORMANCE.md, "Round four, fourth pass: CPU").
// Here the commit only counts the frames it wrote; past checkpointPages a
// PASSIVE checkpoint runs on another connection of the pool, which copies
// what no reader still needs and never waits for the writer, nor the
// writer for it. SQLite's own checkpoint stays as a backstop at
// autocheckpointPages (sqlitePragmas), for a WAL that grows faster than
// this goroutine empties it.
const (
	checkpointPages     = 4000
	autocheckpointPages = 4 * checkpointPages
)

// checkpointTimeout bounds one checkpoint; an unfinished one leaves the
// rest of the WAL to the next.
const checkpointTimeout = time.Minute

// walCheckpointer runs the store's checkpoints, one at a time.
type walCheckpointer struct {
	db    *sql.DB
	pages int64 // frames between checkpoints

	mu      sync.Mutex    // guards what follows; held for moments only
	pending int64         // frames committed since the last checkpoint began
	running chan struct{} // closed when the running checkpoint ends; nil when none runs
	catchUp bool          // the WAL may not have started over since the last checkpoint (see run)
	gap     int           // commits from one catch-up to the next
	skip    int           // commits still to come before the next catch-up
	runs    int           // checkpoints run (tests)
	longest int64         // the most frames a checkpoint found in the WAL (tests)
}

// maxCatchUpGap bounds the commits between two catch-ups.
const maxCatchUpGap = 64

func newWALCheckpointer(db *sql.DB, pages int64) *walCheckpointer {
	return &walCheckpointer{db: db, pages: pages}
}

// committed counts the frames the connection has written to the WAL since
// it was last asked (its commits, and any statement run on it outside a
// transaction of the store), and starts a checkpoint when none is running
// and either the frames not yet checkpointed pass the threshold or a
// catch-up is due (see run).
func (c *walCheckpointer) committed(conn *sql.Conn) {
	frames := framesWritten(conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending += frames
	if c.running != nil || c.pending == 0 || c.pending < c.pages && !c.catchUpDue() {
		return
	}
	since := c.pending
	c.pending, c.running = 0, make(chan struct{})
	go c.run(since, c.running)
}

// catchUpDue counts a commit towards the next catch-up and reports whether
// it is due.
func (c *walCheckpointer) catchUpDue() bool {
	if !c.catchUp {
		return false
	}
	if c.skip > 0 {
		c.skip--
		return false
	}
	return true
}

// framesWritten is the WAL frames conn wrote since it was last asked.
func framesWritten(conn *sql.Conn) int64 {
	var frames int
	_ = conn.Raw(func(dc any) error {
		if st, ok := dc.(sqlite.DBStatus); ok {
			frames, _, _ = st.Status(sqlite.DBStatusCacheWrite, true)
		}
		return nil
	})
	return int64(frames)
}

// run makes one checkpoint of a WAL that had since frames committed to it
// after the last one began. The WAL starts over from its beginning only
// when a write begins after a checkpoint copied all of it and while no
// reader is in it; a checkpoint outrun by a batch of the billing writer
// (one that began while it copied), or a reader at the wrong moment, lets
// the file grow on, by a threshold each time, up to SQLite's own
// checkpoint in the commit at autocheckpointPages. So after a checkpoint
// at the threshold the next commit starts a catch-up: it copies only the
// frames since, and starting just after a commit it has the pause until
// the writer's next batch to finish in. A catch-up that finds no more
// frames in the WAL than were committed since the last checkpoint sees
// that the WAL started over, and ends them; otherwise the next waits for
// twice as many commits, so that a writer that never pauses (whose batches
// every catch-up would copy again) makes few.
func (c *walCheckpointer) run(since int64, done chan struct{}) {
	log, whole, err := c.checkpoint()
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(done)
	c.running = nil
	c.runs++
	c.longest = max(c.longest, log)
	switch {
	case err != nil:
		c.pending += since // the next commit tries again
	case since >= c.pages:
		c.catchUp, c.gap, c.skip = true, 1, 0
	case whole && log <= since:
		c.catchUp = false
	default:
		c.gap = min(2*c.gap, maxCatchUpGap)
		c.skip = c.gap - 1
	}
}

// checkpoint runs one PASSIVE checkpoint and reports the frames it found
// in the WAL and whether it copied them all. One that found another
// checkpoint under way (SQLite's own, in a commit) copied nothing; one
// that left frames a reader still needed is not whole.
func (c *walCheckpointer) checkpoint() (log int64, whole bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
	defer cancel()
	var busy, copied int64
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		return 0, false, err
	}
	return log, busy == 0 && copied == log, nil
}

// wait returns once no checkpoint is running.
func (c *walCheckpointer) wait() {
	c.mu.Lock()
	done := c.running
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}

// stats are the checkpoints run so far and the most frames one found.
func (c *walCheckpointer) stats() (runs int, longest int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs, c.longest
}
