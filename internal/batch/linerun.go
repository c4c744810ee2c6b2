package batch

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/obs"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// progress is what a batch's lines did so far.
type progress struct {
	done      map[int]bool
	completed atomic.Int64
	failed    atomic.Int64
	// charged is what the recorded lines were charged.
	charged int64
}

func (s *Service) progressOf(ctx context.Context, id int64) (*progress, error) {
	pr := &progress{done: map[int]bool{}}
	err := s.eachOutcome(ctx, id, func(l *store.BatchLine) {
		pr.done[l.Line] = true
		if l.OK {
			pr.completed.Add(1)
			pr.charged += l.Quota
		} else {
			pr.failed.Add(1)
		}
	})
	return pr, err
}

// eachOutcome calls fn with every recorded line outcome, in line order.
func (s *Service) eachOutcome(ctx context.Context, id int64, fn func(*store.BatchLine)) error {
	after := 0
	for {
		ls, err := s.Batches.Lines(ctx, id, after, 500)
		if err != nil {
			return err
		}
		for _, l := range ls {
			fn(l)
			after = l.Line
		}
		if len(ls) < 500 {
			return nil
		}
	}
}

// runOne runs line n and records its outcome. A line the batch's hold and
// the balance cannot cover fails without running.
func (r *runner) runOne(ctx context.Context, run *lineRun, n int, raw []byte) {
	s, b := r.s, run.b
	line := gjson.ParseBytes(raw)
	customID := line.Get("custom_id").String()
	body := capLine(b.Endpoint, []byte(line.Get("body").Raw), s.Options.DefaultCompletionTokens)
	var res LineResult
	switch {
	case run.perr != nil:
		e := ir.As(run.perr)
		res = LineResult{Status: e.Status, Body: s.codecOf(b).EncodeError(e)}
	case run.purse.out():
		res = LineResult{Status: errLinesOverQuota.Status, Body: s.codecOf(b).EncodeError(errLinesOverQuota)}
	default:
		res = s.runLine(ctx, run, n, body)
	}
	if ctx.Err() != nil {
		return
	}
	model := res.Model
	if model == "" {
		model = gjson.GetBytes(body, "model").String()
	}
	out := &store.BatchLine{BatchID: b.ID, Line: n, CustomID: customID, Model: model, OK: res.OK, Status: res.Status,
		Body: string(res.Body), InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens, Quota: res.Quota}
	if res.OK && res.Cost != nil {
		out.Cost = res.Cost.RatString()
	}
	ok, err := s.Batches.PutLine(context.WithoutCancel(ctx), out)
	if err != nil {
		s.Logger.Error("batch line outcome not stored; it runs again", "batch", b.PublicID, "line", n, "err", err)
		run.lost.Store(true)
		return
	}
	if ok && res.OK {
		run.pr.completed.Add(1)
	} else if ok {
		run.pr.failed.Add(1)
	}
}

// runLine calls the relay for line n, waiting out rate limits: a batch has
// a day, so a line refused for now waits and tries again. Each try takes
// its reservation from the purse and gives back what it did not charge.
func (s *Service) runLine(ctx context.Context, run *lineRun, n int, body []byte) LineResult {
	b := run.b
	lctx := obs.WithRequestID(ctx, b.PublicID+"-"+strconv.Itoa(n))
	try := func() LineResult {
		res := s.Lines(lctx, run.p, b.Endpoint, body, run.admitted, run.purse.take)
		charge := int64(0)
		if res.OK {
			charge = res.Quota
		}
		run.purse.done(res.Reserved, charge)
		return res
	}
	res := try()
	for i := 1; res.Status == 429 && i <= rateLimitRetries && !run.stop.Load(); i++ {
		select {
		case <-time.After(time.Duration(i) * time.Second):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		res = try()
	}
	return res
}
