package batch

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A line without an output limit is sent with the one its reservation
// assumed, in the field its endpoint reads; a line with one keeps it.
func TestALineWithoutAnOutputLimitGetsTheOneItsReservationAssumed(t *testing.T) {
	cases := []struct {
		name, endpoint, body, field string
		want                        int64
	}{
		{"chat without a limit", "/v1/chat/completions", `{"model":"m","messages":[]}`, "max_completion_tokens", 1024},
		{"chat with max_tokens", "/v1/chat/completions", `{"model":"m","max_tokens":50}`, "max_tokens", 50},
		{"chat with max_completion_tokens", "/v1/chat/completions", `{"model":"m","max_completion_tokens":70}`, "max_completion_tokens", 70},
		{"chat with a limit of another endpoint", "/v1/chat/completions", `{"model":"m","max_output_tokens":5}`, "max_completion_tokens", 1024},
		{"responses without a limit", "/v1/responses", `{"model":"m","input":"hi"}`, "max_output_tokens", 1024},
		{"messages with a limit", "/v1/messages", `{"model":"m","max_tokens":9}`, "max_tokens", 9},
		{"embeddings have no output", "/v1/embeddings", `{"model":"m","input":"x"}`, "max_tokens", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := capLine(c.endpoint, []byte(c.body), 1024)
			if v := gjson.GetBytes(got, c.field).Int(); v != c.want || gjson.GetBytes(got, "model").String() != "m" {
				t.Errorf("%s → %s: %s = %d, want %d", c.body, got, c.field, v, c.want)
			}
			line := `{"custom_id":"a","method":"POST","url":"` + c.endpoint + `","body":` + c.body + `}`
			in := capInputLine(c.endpoint, []byte(line), 1024)
			if v := gjson.GetBytes(in, "body."+c.field).Int(); v != c.want || gjson.GetBytes(in, "custom_id").String() != "a" {
				t.Errorf("input line %s → %s", line, in)
			}
		})
	}
}

// The purse keeps a batch's lines within what it holds: a line reserves
// at least the dearest line so far, more is taken from the balance (a
// tenth of the hold when that fits, else what is short) when the lines
// need it, and once that fails every later line is refused.
func TestThePurseKeepsTheLinesWithinTheHold(t *testing.T) {
	balance := int64(500)
	var asked []int64
	p := &purse{s: &Service{Deps: Deps{Logger: slog.New(slog.DiscardHandler)}}, b: &store.Batch{PublicID: "batch_x"}, held: 1000}
	p.more = func(amount int64) (int64, error) {
		asked = append(asked, amount)
		if amount > balance {
			return 0, errors.New("402")
		}
		balance -= amount
		return amount, nil
	}
	steps := []struct {
		want, granted int64
		charge        int64
		refused       bool
	}{
		// 50 short: a tenth of the hold (100) is taken. The line then
		// costs 1000.
		{want: 1050, granted: 1050, charge: 1000},
		// Reserved at the dearest line so far (1000): 900 short, more
		// than the balance's 400 left, so refused.
		{want: 10, refused: true},
		// Every later line is refused without asking the balance.
		{want: 10, refused: true},
	}
	for i, s := range steps {
		got, err := p.take(s.want)
		if s.refused != (err != nil) || (err == nil && got != s.granted) {
			t.Fatalf("step %d: granted %d, err %v; want %d, refused %v", i+1, got, err, s.granted, s.refused)
		}
		if err == nil {
			p.done(got, s.charge)
		}
	}
	if fmt.Sprint(asked) != "[100 900]" || !p.out() || p.committed != 1000 || p.held != 1100 {
		t.Errorf("asked the balance %v, out %v, committed %d", asked, p.out(), p.committed)
	}
}
