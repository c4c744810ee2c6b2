package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// finish ends a batch whose run stopped: an in-progress batch is finalized
// (completed when every line has an outcome, expired otherwise), a
// cancelling one is cancelled; the output and error files are written on
// the way, and a batch that ended is billed. Each step is a conditional
// move, so a node that resumes after a crash carries on where it stopped.
func (s *Service) finish(ctx context.Context, id string) {
	b, err := s.Batches.GetBatch(ctx, id)
	if err != nil {
		return
	}
	now := time.Now().Unix()
	if b.Status == store.BatchInProgress || b.Status == store.BatchValidating {
		if ok, err := s.Batches.MoveBatch(ctx, b.ID, []string{b.Status}, store.BatchFinalizing, now); err != nil || !ok {
			if b, err = s.Batches.GetBatch(ctx, id); err != nil {
				return
			}
		} else {
			b.Status, b.FinalizingAt = store.BatchFinalizing, now
		}
	}
	if b.Status == store.BatchFinalizing || b.Status == store.BatchCancelling {
		if !s.finalize(ctx, b) {
			return
		}
	}
	if terminal(b.Status) && !b.Billed {
		s.bill(ctx, b)
	}
}

// finalize writes the output and error files and moves the batch to its
// end.
func (s *Service) finalize(ctx context.Context, b *store.Batch) bool {
	pr, err := s.progressOf(ctx, b.ID)
	if err != nil {
		return false
	}
	unrun := b.Total - len(pr.done)
	to, reason := store.BatchCompleted, ""
	switch {
	case b.Status == store.BatchCancelling:
		to, reason = store.BatchCancelled, "batch_cancelled"
	case unrun > 0:
		to, reason = store.BatchExpired, "batch_expired"
	}
	if b.Mode == modeProvider {
		// A provider batch ends as its provider's did: one it refused
		// (failed) or cancelled on its own is not an expired one.
		var st providerState
		_ = json.Unmarshal(b.Upstream, &st)
		switch st.Status {
		case store.BatchFailed:
			to, reason = store.BatchFailed, "batch_failed"
		case store.BatchCancelled:
			to, reason = store.BatchCancelled, "batch_cancelled"
		}
	}
	b.Completed, b.Failed = int(pr.completed.Load()), int(pr.failed.Load())
	if b.Completed > 0 && b.OutputFileID == "" {
		f, err := s.writeResults(ctx, b, "output", func(w io.Writer) error { return s.writeOutcomes(ctx, b, w, true) })
		if err != nil {
			s.Logger.Error("batch output not written", "batch", b.PublicID, "err", err)
			return false
		}
		b.OutputFileID = f
	}
	if (b.Failed > 0 || unrun > 0) && b.ErrorFileID == "" {
		f, err := s.writeResults(ctx, b, "error", func(w io.Writer) error {
			if err := s.writeOutcomes(ctx, b, w, false); err != nil {
				return err
			}
			return s.writeUnrun(ctx, b, pr.done, reason, w)
		})
		if err != nil {
			s.Logger.Error("batch errors not written", "batch", b.PublicID, "err", err)
			return false
		}
		b.ErrorFileID = f
	}
	if ok, err := s.Batches.SaveBatch(ctx, b); err != nil || !ok {
		return false
	}
	ok, err := s.Batches.MoveBatch(ctx, b.ID, []string{b.Status}, to, time.Now().Unix())
	if err != nil || !ok {
		return false
	}
	b.Status = to
	return true
}

// writeResults stores what gen writes as a file of the batch's user,
// streamed through a pipe so a large output never sits in memory.
func (s *Service) writeResults(ctx context.Context, b *store.Batch, kind string, gen func(io.Writer) error) (string, error) {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		err := gen(bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	f, err := s.putFile(ctx, b.UserID, b.PublicID+"_"+kind+".jsonl", "batch_output", pr)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return "", err
	}
	return f.PublicID, nil
}

// resultLine is one line of a batch's output or error file.
type resultLine struct {
	ID       string          `json:"id"`
	CustomID string          `json:"custom_id"`
	Response *resultResponse `json:"response"`
	Error    *resultError    `json:"error"`
}

type resultResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

type resultError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeOutcomes writes the recorded outcomes that succeeded (ok) or failed.
func (s *Service) writeOutcomes(ctx context.Context, b *store.Batch, w io.Writer, ok bool) error {
	enc := json.NewEncoder(w)
	var werr error
	err := s.eachOutcome(ctx, b.ID, func(l *store.BatchLine) {
		if l.OK != ok || werr != nil {
			return
		}
		body := json.RawMessage(l.Body)
		if !gjson.Valid(l.Body) {
			body, _ = json.Marshal(l.Body)
		}
		werr = enc.Encode(resultLine{ID: lineID(b, l.Line), CustomID: l.CustomID,
			Response: &resultResponse{StatusCode: l.Status, RequestID: lineID(b, l.Line), Body: body}})
	})
	if werr != nil {
		return werr
	}
	return err
}

// writeUnrun writes the lines that never ran (cancelled or expired).
func (s *Service) writeUnrun(ctx context.Context, b *store.Batch, done map[int]bool, reason string, w io.Writer) error {
	if reason == "" {
		return nil
	}
	msg := map[string]string{"batch_cancelled": "the batch was cancelled before this request ran",
		"batch_expired": "the batch expired before this request ran",
		"batch_failed":  "the provider refused the batch before this request ran"}[reason]
	enc := json.NewEncoder(w)
	return s.eachLine(ctx, b.InputFileID, func(n int, raw []byte) error {
		if done[n] {
			return nil
		}
		return enc.Encode(resultLine{ID: lineID(b, n), CustomID: gjson.GetBytes(raw, "custom_id").String(),
			Error: &resultError{Code: reason, Message: msg}})
	})
}

func lineID(b *store.Batch, n int) string {
	return "batch_req_" + b.PublicID[len("batch_"):] + "_" + itoa(int64(n))
}

// admittedAt is when b was admitted (its holds taken): its lines are priced
// with the price version in effect then. A batch from before holds kept
// the instant counts from the end of its creation second.
func admittedAt(b *store.Batch) time.Time {
	for _, h := range holdsOf(b) {
		if h.AdmittedNS != 0 && h.Model != "" {
			return time.Unix(0, h.AdmittedNS)
		}
	}
	return time.Unix(b.CreatedAt+1, 0)
}
