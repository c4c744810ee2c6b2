package batch

import (
	"context"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// LineTake takes want more from a batch's hold for one of its lines and
// answers what it granted (at least want), or refuses the line.
type LineTake func(want int64) (int64, error)

// purse keeps a running batch within what its tickets hold (CONTRACT §15:
// a batch never spends past its hold). Each line takes its reservation
// from it before anything goes upstream and gives back the difference to
// its charge when it ends; when the lines would need more than the
// tickets hold, the purse takes one more ticket from the balance, and when
// that does not fit either it refuses this line and every later one.
type purse struct {
	s *Service
	b *store.Batch
	// more takes a ticket of amount more from the balance and answers
	// what it holds (Service.addTicket).
	more func(amount int64) (int64, error)
	// mu also guards b, which a ticket taken mid-run changes and the
	// run's watcher saves.
	mu sync.Mutex
	// held is what the tickets hold; committed what the lines charged so
	// far plus what the running ones reserved.
	held, committed int64
	// dearest is the largest charge of a line so far: a line is reserved
	// at least that, so an upstream that answers more than a line's
	// estimate is found out on the first line, not when the hold is spent.
	dearest int64
	refused error
}

// newPurse is b's purse, with charged what its recorded lines cost.
func (s *Service) newPurse(ctx context.Context, b *store.Batch, charged int64) *purse {
	p := &purse{s: s, b: b, held: heldTotal(holdsOf(b)), committed: charged}
	bg := context.WithoutCancel(ctx)
	p.more = func(amount int64) (int64, error) { return s.addTicket(bg, b, "", amount) }
	return p
}

// errLinesOverQuota refuses a line the batch's hold and the balance
// cannot cover.
var errLinesOverQuota = &ir.Error{Status: 402, Kind: ir.KindQuota, Code: "insufficient_quota",
	Message: "the batch's hold is spent and the remaining quota cannot cover this request"}

// take is the purse's LineTake.
func (p *purse) take(want int64) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused != nil {
		return 0, p.refused
	}
	amount := max(want, p.dearest)
	if short := p.committed + amount - p.held; short > 0 {
		got, err := p.grow(short)
		if err != nil {
			p.s.Logger.Info("batch hold spent; its remaining lines fail", "batch", p.b.PublicID, "err", err)
			p.refused = errLinesOverQuota
			return 0, p.refused
		}
		p.held += got
	}
	p.committed += amount
	return amount, nil
}

// grow takes a ticket of at least short from the balance: a tenth of what
// the batch holds when that fits, so a long batch does not take one per
// line, else exactly short.
func (p *purse) grow(short int64) (int64, error) {
	if more := p.held / 10; more > short {
		if got, err := p.more(more); err == nil {
			return got, nil
		}
	}
	return p.more(short)
}

// done ends a line that reserved reserved and was charged charge (0 when
// it failed).
func (p *purse) done(reserved, charge int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.committed += charge - reserved
	p.dearest = max(p.dearest, charge)
}

// out reports whether the purse refused a line: the lines not started
// yet fail without running.
func (p *purse) out() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused != nil
}

// outputFields are the output limit a line of each endpoint may set, the
// first being the one the gateway sets on a line that sets none.
var outputFields = map[string][]string{
	"/v1/chat/completions": {"max_completion_tokens", "max_tokens"},
	"/v1/responses":        {"max_output_tokens"},
	"/v1/messages":         {"max_tokens"},
}

// capInputLine is capLine on the body of an input file's line, for lines
// a provider runs: its answers are bounded by what was held for them too.
func capInputLine(endpoint string, raw []byte, limit int) []byte {
	body := gjson.GetBytes(raw, "body")
	if !body.IsObject() {
		return raw
	}
	capped := capLine(endpoint, []byte(body.Raw), limit)
	if len(capped) == len(body.Raw) {
		return raw
	}
	out, err := sjson.SetRawBytes(raw, "body", capped)
	if err != nil {
		return raw
	}
	return out
}

// capLine sets the output limit the line's reservation assumed (limit) on
// a line body without one, so the upstream cannot answer past what was
// held for it.
func capLine(endpoint string, body []byte, limit int) []byte {
	fields := outputFields[endpoint]
	if len(fields) == 0 {
		return body
	}
	for _, f := range fields {
		if v := gjson.GetBytes(body, f); v.Exists() && v.Int() > 0 {
			return body
		}
	}
	out, err := sjson.SetBytes(body, fields[0], limit)
	if err != nil {
		return body
	}
	return out
}
