package relay

import (
	"context"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// setBalance tops the test user up (or down) to exactly b.
func (e *env) setBalance(b int64) {
	e.t.Helper()
	if _, err := e.billing.Credit(context.Background(), billing.Credit{UserID: e.user.ID, Delta: b - e.balance(), Note: "test"}); err != nil {
		e.t.Fatal(err)
	}
}

// TestReservationHoldsOutputAtTheReasoningPrice: how much of the output
// will be reasoning is unknown before the call, so a reasoning price above
// the output price is what the hold counts every output token at; the bill
// then splits them as reported.
func TestReservationHoldsOutputAtTheReasoningPrice(t *testing.T) {
	body := `{"model":"gpt-4o-mini","max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`
	const hold = 1000 * 10 / 2 // 1,000 output tokens at 10 $/M × 500,000 units/$
	cases := []struct {
		name    string
		balance int64
		status  int
	}{
		{"the hold at the reasoning price fits", hold + 10, 200},
		// At the output price the hold would be 500 and the call admitted.
		{"the hold at the reasoning price does not fit", hold - 10, 402},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("gpt-4o-mini", store.ModelPrice{OutputPerMTok: 1, ReasoningPerMTok: 10})
			f := &fakeOpenAI{usage: `{"prompt_tokens":5,"completion_tokens":10,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":4}}`}
			e.channel("main", newFake(t, f).URL, nil)
			e.setBalance(tc.balance)
			resp := e.post("/v1/chat/completions", testKey, body)
			got := readAll(resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d body %s, want %d", resp.StatusCode, got, tc.status)
			}
			if tc.status != 200 {
				if f.calls() != 0 {
					t.Fatal("the upstream was called for a refused request")
				}
				return
			}
			// 6 output tokens at 1 $/M and 4 reasoning at 10 $/M: 46 / 2 = 23.
			row, _ := e.lastConsume()
			if row.Quota != 23 || e.balance() != tc.balance-23 {
				t.Fatalf("charged %d, balance %d; want 23 and %d", row.Quota, e.balance(), tc.balance-23)
			}
		})
	}
}

// TestReservationAndBillUseTheTierTheInputReaches: a prompt counted past a
// tier's threshold is reserved at the tier's input price, and the bill is
// priced at the tier the reported input reaches.
func TestReservationAndBillUseTheTierTheInputReaches(t *testing.T) {
	long := strings.Repeat("hello ", 1000) // about 1,000 tokens
	body := `{"model":"gpt-4o-mini","max_tokens":1,"messages":[{"role":"user","content":"` + long + `"}]}`
	counted := tokenize.Messages("gpt-4o-mini", [][]string{{long}})
	if counted <= 500 {
		t.Fatalf("prompt counted %d tokens; the test needs more than 500", counted)
	}
	hold := int64(counted * 10) // 20 $/M above 500 tokens × 500,000 units/$; the one output token is free
	price := store.ModelPrice{InputPerMTok: 10, Tiers: []store.PriceTier{{AboveInputTokens: 500, InputPerMTok: 20}}}
	cases := []struct {
		name    string
		balance int64
		usage   string
		status  int
		charged int64
	}{
		{"reported input past the threshold", hold + 10, `{"prompt_tokens":501,"completion_tokens":1,"total_tokens":502}`, 200, 5010},
		{"reported input at the threshold", hold + 10, `{"prompt_tokens":500,"completion_tokens":1,"total_tokens":501}`, 200, 2500},
		// At the base input price the hold would be half and the call admitted.
		{"the hold at the tier price does not fit", hold - 10, "", 402, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("gpt-4o-mini", price)
			f := &fakeOpenAI{usage: tc.usage}
			e.channel("main", newFake(t, f).URL, nil)
			e.setBalance(tc.balance)
			resp := e.post("/v1/chat/completions", testKey, body)
			got := readAll(resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d body %s, want %d", resp.StatusCode, got, tc.status)
			}
			if tc.status != 200 {
				if f.calls() != 0 {
					t.Fatal("the upstream was called for a refused request")
				}
				return
			}
			if row, _ := e.lastConsume(); row.Quota != tc.charged {
				t.Fatalf("charged %d, want %d", row.Quota, tc.charged)
			}
		})
	}
}
