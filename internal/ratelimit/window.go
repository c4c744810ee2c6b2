package ratelimit

import (
	"math"
	"strconv"
	"time"
)

// The per-minute limits use a sliding window counter: the count of the
// current minute plus the previous minute's count weighted by the part of
// it still inside the last 60 s. It needs two integers per limit, is exact
// at minute boundaries to within that interpolation, and works the same in
// memory and in Redis, where both minutes are plain counters.
const window = time.Minute

// ckey names one counter: a subject kind ('t' key, 'u' user, 'm' a key's
// model), its id, the model for 'm', and what is counted ('r' requests,
// 'k' tokens, 'c' concurrent calls). A struct, not a string, so the
// in-memory path builds no key on the hot path.
type ckey struct {
	kind  byte
	what  byte
	id    int64
	model string
}

func (k ckey) String() string {
	s := string(k.kind) + ":" + strconv.FormatInt(k.id, 10)
	if k.model != "" {
		s += ":" + k.model
	}
	return s + ":" + string(k.what)
}

// check is one limit a request must fit under.
type check struct {
	key ckey
	// gauge marks a concurrency limit (held until the call ends); otherwise
	// the check is a per-minute window.
	gauge  bool
	tokens bool // tpm rather than rpm (for headers)
	scope  string
	limit  int64
	cost   int64
}

// reading is what a backend saw of one check when it decided.
type reading struct {
	curr, prev int64
}

// minuteOf is the window index of t and the fraction of it elapsed.
func minuteOf(t time.Time) (int64, float64) {
	ms := t.UnixMilli()
	m := ms / window.Milliseconds()
	return m, float64(ms-m*window.Milliseconds()) / float64(window.Milliseconds())
}

// estimate is the sliding count of the last minute.
func estimate(r reading, frac float64) float64 {
	return float64(r.prev)*(1-frac) + float64(r.curr)
}

// fits reports whether c's cost fits over what r shows.
func fits(c *check, r reading, frac float64) bool {
	if c.gauge {
		return r.curr+c.cost <= c.limit
	}
	return estimate(r, frac)+float64(c.cost) <= float64(c.limit)+1e-9
}

// retryAfter is how long until c would fit, given r seen at frac.
func retryAfter(c *check, r reading, frac float64) time.Duration {
	if c.gauge {
		return time.Second
	}
	room := float64(c.limit - c.cost)
	if room < 0 {
		return window
	}
	var f float64 // fraction of a window from now
	if float64(r.curr) <= room && r.prev > 0 {
		// Within this minute, as the previous one slides out.
		target := 1 - (room-float64(r.curr))/float64(r.prev)
		f = math.Max(target-frac, 0)
	} else {
		// After the roll the current minute becomes the previous one.
		f = 1 - frac
		if r.curr > 0 && float64(r.curr) > room {
			f += 1 - room/float64(r.curr)
		}
	}
	// The interpolation is pessimistic past the roll; by a full window from
	// now every call counted so far has left the last minute.
	return min(time.Duration(f*float64(window)), window)
}

// remaining is what is left of c after its cost was counted.
func remaining(c *check, r reading, frac float64) int64 {
	if c.gauge {
		return max(c.limit-r.curr-c.cost, 0)
	}
	left := float64(c.limit) - estimate(r, frac) - float64(c.cost)
	return max(int64(math.Floor(left+1e-9)), 0)
}
