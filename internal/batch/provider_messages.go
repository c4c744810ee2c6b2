package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// pollMessagesProvider carries a Message Batch on a messages-wire channel
// one step: create the provider's message batch from the input, poll it,
// and read its results into line outcomes once it ended.
func (s *Service) pollMessagesProvider(ctx context.Context, b *store.Batch, st providerState, ch *routing.Channel, w providerWire) bool {
	var err error
	if st.BatchID == "" {
		st.BatchID, err = s.createMessagesUpstream(ctx, b, ch, w)
	} else {
		var done bool
		done, err = s.pollMessagesUpstream(ctx, b, &st, w)
		if err == nil && done {
			return true
		}
	}
	s.laterAfter(ctx, b, st, err)
	return false
}

// createMessagesUpstream streams the input file as the provider's
// {"requests":[{custom_id, params}]} body, models mapped for the channel.
func (s *Service) createMessagesUpstream(ctx context.Context, b *store.Batch, ch *routing.Channel, w providerWire) (string, error) {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		first := true
		_, _ = bw.WriteString(`{"requests":[`)
		err := s.eachLine(ctx, b.InputFileID, func(_ int, raw []byte) error {
			l := gjson.ParseBytes(raw)
			params := []byte(l.Get("body").Raw)
			if m := l.Get("body.model").String(); ch.MapModel(m) != m {
				params, _ = sjson.SetBytes(params, "model", ch.MapModel(m))
			}
			id, _ := json.Marshal(l.Get("custom_id").String())
			if !first {
				_ = bw.WriteByte(',')
			}
			first = false
			_, _ = fmt.Fprintf(bw, `{"custom_id":%s,"params":%s}`, id, params)
			return nil
		})
		if err == nil {
			_, _ = bw.WriteString(`]}`)
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return s.postStreamed(ctx, w, "/messages/batches", "application/json", pr, "message batch create")
}

func (s *Service) pollMessagesUpstream(ctx context.Context, b *store.Batch, st *providerState, w providerWire) (bool, error) {
	path := "/messages/batches/" + url.PathEscape(st.BatchID)
	if b.Status == store.BatchCancelling && !st.CancelSent {
		req, err := w.request(ctx, http.MethodPost, path+"/cancel", nil)
		if err != nil {
			return false, err
		}
		if _, err := s.call(req); err != nil {
			return false, err
		}
		st.CancelSent = true
	}
	req, err := w.request(ctx, http.MethodGet, path, nil)
	if err != nil {
		return false, err
	}
	raw, err := s.call(req)
	if err != nil {
		return false, err
	}
	up := gjson.ParseBytes(raw)
	st.Status = up.Get("processing_status").String()
	if st.Status != "ended" {
		b.Completed, b.Failed = int(up.Get("request_counts.succeeded").Int()), int(up.Get("request_counts.errored").Int())
		return false, nil
	}
	lines, price, err := s.providerResultsBasis(ctx, b)
	if err != nil {
		return false, err
	}
	// The results are read from the channel's own address, never from a
	// results_url the answer names: the key goes only where it belongs.
	req, err = w.request(ctx, http.MethodGet, path+"/results", nil)
	if err != nil {
		return false, err
	}
	resp, err := s.client().Do(req)
	if err != nil {
		return false, errorsCause(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("the provider's batch results answered %d", resp.StatusCode)
	}
	model := modelOf(b)
	return true, readLines(resp.Body, func(raw []byte) error {
		l := gjson.ParseBytes(raw)
		n, ok := lines[l.Get("custom_id").String()]
		if !ok {
			return nil
		}
		out := &store.BatchLine{BatchID: b.ID, Line: n, CustomID: l.Get("custom_id").String(), Model: model}
		switch l.Get("result.type").String() {
		case "succeeded":
			msg := l.Get("result.message")
			u := messagesUsage(msg.Get("usage"))
			q, err := s.gate().Quota(price, u, price.CallCost(1), b.Group)
			if err != nil {
				return err
			}
			out.OK, out.Status, out.Body, out.InputTokens, out.OutputTokens, out.Quota = true, 200, msg.Raw, u.InputTokens, u.OutputTokens, q
			out.Cost = price.Cost(u, price.CallCost(1)).RatString()
		case "errored":
			out.Status, out.Body = 400, l.Get("result.error").Raw
			if t := l.Get("result.error.error.type").String(); t == "api_error" || t == "overloaded_error" {
				out.Status = 500
			}
		default:
			return nil // canceled or expired: it never ran
		}
		_, err := s.Batches.PutLine(ctx, out)
		return err
	})
}

// messagesUsage reads a message's usage; the input counts the cached
// tokens too, as the gateway's usage does.
func messagesUsage(u gjson.Result) ir.Usage {
	read, write := int(u.Get("cache_read_input_tokens").Int()), int(u.Get("cache_creation_input_tokens").Int())
	return ir.Usage{InputTokens: int(u.Get("input_tokens").Int()) + read + write, OutputTokens: int(u.Get("output_tokens").Int()),
		CacheReadTokens: read, CacheWriteTokens: write}.NonNegative()
}
