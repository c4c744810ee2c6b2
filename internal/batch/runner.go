package batch

import (
	"context"
	"math/big"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Run modes of a batch: the gateway runs its lines, or a provider's batch
// API does.
const (
	modeGateway  = "gateway"
	modeProvider = "provider"
)

// LineRunner runs one line through the relay's one driver as p, in this
// process (the app adapts relay.RunLine), priced with the price version in
// effect when the batch was admitted, its reservation taken with take.
type LineRunner func(ctx context.Context, p *auth.Principal, endpoint string, body []byte, admitted time.Time, take LineTake) LineResult

// LineResult is a line's answer, and when OK its usage, its charge at the
// batch price and that charge's exact cost (see relay.LineResult).
type LineResult struct {
	Status   int
	Body     []byte
	OK       bool
	Model    string
	Usage    ir.Usage
	Quota    int64
	Cost     *big.Rat
	Reserved int64
}

// defaultConcurrency is settings.batch_concurrency when no channel sets it.
const defaultConcurrency = 4

// rateLimitRetries is how often a line refused by a rate limit is tried
// again (after 1, 2, … seconds) before it counts as failed.
const rateLimitRetries = 5

// leaseFor is how long a node's claim on a batch lasts without renewal;
// another node takes the batch over after it lapses.
const leaseFor = 2 * time.Minute

// runner finds batches that need work and works them, one goroutine per
// batch, under a lease in the database so that one node at a time does.
type runner struct {
	s       *Service
	mu      sync.Mutex
	running map[int64]bool
	// stops are the stop flags of the batches running here, so a cancel
	// taken by this node stops its batch at once; other nodes' cancels are
	// seen by the run's watcher.
	stops map[int64]*atomic.Bool
	wg    sync.WaitGroup
	wake  chan struct{}
}

func newRunner(s *Service) *runner {
	return &runner{s: s, running: map[int64]bool{}, stops: map[int64]*atomic.Bool{}, wake: make(chan struct{}, 1)}
}

// stop stops the run of batch id if it runs in this process.
func (r *runner) stop(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.stops[id]; f != nil {
		f.Store(true)
	}
}

// poke makes the runner look for work now rather than at its next tick.
func (r *runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *runner) run(ctx context.Context) {
	t := time.NewTicker(r.s.Options.PollInterval)
	defer t.Stop()
	var orphansSeen time.Time
	for {
		if time.Since(orphansSeen) >= orphanEvery {
			orphansSeen = time.Now()
			if _, err := r.s.refundOrphans(ctx, orphansSeen); err != nil && ctx.Err() == nil {
				r.s.Logger.Error("batch runner cannot refund the holds of unfinished creates", "err", err)
			}
		}
		r.tick(ctx)
		select {
		case <-ctx.Done():
			r.wg.Wait()
			return
		case <-t.C:
		case <-r.wake:
		}
	}
}

func (r *runner) tick(ctx context.Context) {
	now := time.Now().UnixMilli()
	bs, err := r.s.Batches.Active(ctx, now, 100)
	if err != nil {
		if ctx.Err() == nil {
			r.s.Logger.Error("batch runner cannot list batches", "err", err)
		}
		return
	}
	for _, b := range bs {
		r.mu.Lock()
		busy := r.running[b.ID]
		r.mu.Unlock()
		if busy {
			continue
		}
		ok, err := r.s.Batches.LeaseBatch(ctx, b.ID, r.s.Options.Node, now, now+leaseFor.Milliseconds())
		if err != nil || !ok {
			continue
		}
		r.mu.Lock()
		r.running[b.ID] = true
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.work(ctx, b)
		}()
	}
}

// work carries a batch as far as it can go now: its lines (or one poll of
// its provider batch), its output files, its end and its bill.
func (r *runner) work(ctx context.Context, b *store.Batch) {
	bg := context.WithoutCancel(ctx)
	renewed := make(chan struct{})
	go r.keepLease(ctx, b.ID, renewed)
	defer func() {
		close(renewed)
		// A node that stops gives the batch up at once, so the next one
		// need not wait for the lease to lapse.
		_, _ = r.s.Batches.LeaseBatch(bg, b.ID, r.s.Options.Node, time.Now().UnixMilli(), 0)
		r.mu.Lock()
		delete(r.running, b.ID)
		r.mu.Unlock()
	}()
	switch {
	case b.Mode == modeProvider && (running(b.Status) || b.Status == store.BatchCancelling):
		if !r.s.pollProvider(ctx, b) {
			return
		}
	case running(b.Status):
		if !r.runLines(ctx, b) {
			return
		}
	}
	r.s.finish(ctx, b.PublicID)
}

func (r *runner) keepLease(ctx context.Context, id int64, done chan struct{}) {
	t := time.NewTicker(leaseFor / 4)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			now := time.Now().UnixMilli()
			_, _ = r.s.Batches.LeaseBatch(ctx, id, r.s.Options.Node, now, now+leaseFor.Milliseconds())
		}
	}
}

// lineRun is one run of a batch's lines: what it needs to run each.
type lineRun struct {
	b *store.Batch
	// admitted is when the batch was admitted, read once: b's record
	// changes (under purse.mu) while lines run.
	admitted time.Time
	p        *auth.Principal
	perr     error
	pr       *progress
	purse    *purse
	stop     *atomic.Bool
	// lost is set when a line's outcome could not be stored: the run is
	// then not over, and the next round runs that line again.
	lost atomic.Bool
}

// runLines runs the lines without an outcome, at most the batch's
// concurrency at a time, until all ran, the batch is cancelled or expires,
// or the process stops. A line whose call was cut by the process stopping
// records nothing and runs again on the next node: its outcome, and so its
// charge, is recorded once.
func (r *runner) runLines(ctx context.Context, b *store.Batch) bool {
	s := r.s
	if err := s.clearPending(ctx, b); err != nil {
		s.Logger.Error("batch tickets left pending not cleared", "batch", b.PublicID, "err", err)
		return false
	}
	pr, err := s.progressOf(ctx, b.ID)
	if err != nil {
		s.Logger.Error("batch progress not read", "batch", b.PublicID, "err", err)
		return false
	}
	run := &lineRun{b: b, admitted: admittedAt(b), pr: pr, purse: s.newPurse(ctx, b, pr.charged), stop: &atomic.Bool{}}
	run.p, run.perr = s.Keys.ForToken(ctx, b.TokenID)
	defer r.registerStop(b.ID, run.stop)()
	watchDone := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		r.watch(ctx, run, watchDone)
	}()
	sem := make(chan struct{}, s.concurrency(b))
	var lines sync.WaitGroup
	err = s.eachLine(ctx, b.InputFileID, func(n int, raw []byte) error {
		if pr.done[n] {
			return nil
		}
		if run.stop.Load() || ctx.Err() != nil {
			return errStop
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return errStop
		}
		if run.stop.Load() {
			<-sem
			return errStop
		}
		lines.Add(1)
		go func() {
			defer func() { <-sem; lines.Done() }()
			r.runOne(ctx, run, n, raw)
		}()
		return nil
	})
	lines.Wait()
	close(watchDone)
	watch.Wait()
	if err != nil && ctx.Err() == nil {
		s.Logger.Error("batch input not read", "batch", b.PublicID, "err", err)
		return false
	}
	if ctx.Err() != nil {
		return false
	}
	r.save(context.WithoutCancel(ctx), run)
	return !run.lost.Load() || time.Now().Unix() >= b.ExpiresAt
}

// registerStop makes a cancel taken by this node stop the run at once,
// until the returned function is called.
func (r *runner) registerStop(id int64, stop *atomic.Bool) func() {
	r.mu.Lock()
	r.stops[id] = stop
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.stops, id)
		r.mu.Unlock()
	}
}

// watch saves the counts as lines finish and stops the run when the batch
// was cancelled (on any node) or expired.
func (r *runner) watch(ctx context.Context, run *lineRun, done chan struct{}) {
	period := min(r.s.Options.PollInterval, time.Second)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Now().Unix() >= run.b.ExpiresAt {
			run.stop.Store(true)
		}
		if !r.save(ctx, run) {
			run.stop.Store(true)
		}
	}
}

// save writes the counts while the batch is in progress; false when it is
// not any more (cancelled).
func (r *runner) save(ctx context.Context, run *lineRun) bool {
	run.purse.mu.Lock()
	defer run.purse.mu.Unlock()
	b := run.b
	b.Completed, b.Failed = int(run.pr.completed.Load()), int(run.pr.failed.Load())
	ok, err := r.s.Batches.SaveBatch(ctx, b)
	if err != nil {
		return true // the database is away; the counts are saved later
	}
	return ok
}

// concurrency is settings.batch_concurrency of the channels that serve
// the batch's models for its group: the smallest one set, else 4.
func (s *Service) concurrency(b *store.Batch) int {
	t := s.Router.Table()
	n := 0
	for _, h := range holdsOf(b) {
		for _, ch := range t.Plan(s.Router.Health, b.Group, h.Model, 1000, nil) {
			v, ok := ch.Settings["batch_concurrency"]
			if !ok {
				continue
			}
			var c int
			switch x := v.(type) {
			case float64:
				c = int(x)
			case int:
				c = x
			case string:
				c, _ = strconv.Atoi(x)
			}
			if c > 0 && (n == 0 || c < n) {
				n = c
			}
		}
	}
	if n == 0 {
		n = defaultConcurrency
	}
	return n
}
