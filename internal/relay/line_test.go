package relay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (e *env) principal() *auth.Principal {
	p, err := e.relay.Keys.Authenticate(context.Background(), testKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestRunLineChargesTheBatchPriceAndMovesNoMoney(t *testing.T) {
	tests := []struct {
		name      string
		price     store.ModelPrice
		wantQuota int64
	}{
		// 1000 in, 500 out at 0.15/0.60 per Mtok: 0.00045 USD = 225 units.
		{"live price when the model has no batch price", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60}, 225},
		// 1000 × 0.10 + 500 × 0.20 per Mtok: 0.0002 USD = 100 units.
		{"the batch price when the model has one", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60,
			BatchInputPerMTok: 0.10, BatchOutputPerMTok: 0.20}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("gpt-4o-mini", tc.price)
			f := &fakeOpenAI{}
			ch := e.channel("up", newFake(t, f).URL, nil)
			before := e.balance()
			res := e.relay.RunLine(context.Background(), e.principal(), "/v1/chat/completions",
				[]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`), time.Time{}, nil)
			if !res.OK || res.Status != 200 || res.Quota != tc.wantQuota || res.Model != "gpt-4o-mini" || res.ChannelID != ch.ID {
				t.Fatalf("result = %+v (body %s), want OK at %d quota on channel %d", res, res.Body, tc.wantQuota, ch.ID)
			}
			if res.Usage.InputTokens != 1000 || res.Usage.OutputTokens != 500 {
				t.Errorf("usage = %+v", res.Usage)
			}
			if got := gjson.GetBytes(res.Body, "choices.0.message.content").String(); got != "Hello there" {
				t.Errorf("answer = %s", res.Body)
			}
			if f.calls() != 1 || f.auth[0] != "Bearer upstream-secret-up" {
				t.Errorf("upstream calls %d with auth %v", f.calls(), f.auth)
			}
			if after := e.balance(); after != before {
				t.Errorf("balance moved %d → %d; the batch bills its lines", before, after)
			}
			if kinds, _ := e.ledgerKinds(); kinds[store.LedgerReserve]+kinds[store.LedgerSettle]+kinds[store.LedgerRefund] != 0 {
				t.Errorf("ledger entries %v for a line", kinds)
			}
			if rows := append(e.rows(store.LogConsume), e.rows(store.LogError)...); len(rows) != 0 {
				t.Errorf("a line wrote %d usage rows", len(rows))
			}
		})
	}
}

func TestRunLineFailuresAreAnsweredInTheDialectAndFree(t *testing.T) {
	tests := []struct {
		name       string
		upstream   int
		body       string
		wantStatus int
		wantCode   string
	}{
		{"upstream failing after retries", 500, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, 502, ""},
		{"a model the gateway does not serve", 0, `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, "model_not_found"},
		{"a line asking to stream", 0, `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.channel("up", newFake(t, &fakeOpenAI{status: tc.upstream}).URL, nil)
			before := e.balance()
			res := e.relay.RunLine(context.Background(), e.principal(), "/v1/chat/completions", []byte(tc.body), time.Time{}, nil)
			if res.OK || res.Quota != 0 {
				t.Fatalf("failed line = %+v", res)
			}
			if tc.wantStatus == 502 && res.Status < 500 || tc.wantStatus != 502 && res.Status != tc.wantStatus {
				t.Errorf("status %d, want %d", res.Status, tc.wantStatus)
			}
			if !gjson.GetBytes(res.Body, "error.message").Exists() || (tc.wantCode != "" && gjson.GetBytes(res.Body, "error.code").String() != tc.wantCode) {
				t.Errorf("error body = %s", res.Body)
			}
			if strings.Contains(string(res.Body), "upstream-secret") {
				t.Errorf("secret in %s", res.Body)
			}
			if after := e.balance(); after != before {
				t.Errorf("balance moved %d → %d", before, after)
			}
			if rows := append(e.rows(store.LogConsume), e.rows(store.LogError)...); len(rows) != 0 {
				t.Errorf("a failed line wrote %d usage rows", len(rows))
			}
		})
	}
}

func TestRunLineServesEmbeddingsAndMessagesLines(t *testing.T) {
	t.Run("an embeddings line goes through the embeddings surface", func(t *testing.T) {
		e := newEnv(t)
		e.price("emb-small", store.ModelPrice{InputPerMTok: 2})
		f := &fakeEndpoints{}
		e.endpointChannel("main", f, 1, "emb-small")
		before := e.balance()
		res := e.relay.RunLine(context.Background(), e.principal(), "/v1/embeddings", []byte(`{"model":"emb-small","input":["a","b"]}`), time.Time{}, nil)
		// The fake reports 1000 prompt tokens: 1000 × 2 per Mtok = 0.002 USD.
		if !res.OK || res.Quota != 1000 || gjson.GetBytes(res.Body, "object").String() != "list" {
			t.Fatalf("result = %+v body %s", res, res.Body)
		}
		if got := f.last(t); got.path != "/v1/embeddings" || got.json("model").String() != "emb-small-mapped" {
			t.Fatalf("upstream got %s %s", got.path, got.raw)
		}
		if after := e.balance(); after != before {
			t.Errorf("balance moved %d → %d", before, after)
		}
	})
	t.Run("a messages line answers in the messages wire", func(t *testing.T) {
		e := newEnv(t)
		e.channel("up", newFake(t, &fakeOpenAI{}).URL, nil)
		res := e.relay.RunLine(context.Background(), e.principal(), "/v1/messages",
			[]byte(`{"model":"gpt-4o-mini","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`), time.Time{}, nil)
		if !res.OK || res.Quota != 225 || gjson.GetBytes(res.Body, "type").String() != "message" {
			t.Fatalf("result = %+v body %s", res, res.Body)
		}
	})
	t.Run("a responses line goes through the responses surface", func(t *testing.T) {
		e := newEnv(t)
		f := &fakeResponsesAPI{}
		e.responsesChannel("native", f)
		before := e.balance()
		res := e.relay.RunLine(context.Background(), e.principal(), "/v1/responses", []byte(respBody), time.Time{}, nil)
		if !res.OK || res.Quota != chargeFor1000x500 || gjson.GetBytes(res.Body, "id").String() != "resp_up1" {
			t.Fatalf("result = %+v body %s", res, res.Body)
		}
		if got := f.last(t); got.path != "/v1/responses" {
			t.Fatalf("upstream got %s", got.path)
		}
		if after := e.balance(); after != before {
			t.Errorf("balance moved %d → %d", before, after)
		}
	})
}
