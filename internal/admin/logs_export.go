package admin

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// exportFlushRows is how many rows an export writes between two flushes to
// the client: the answer reaches it as it is read, and the gateway never
// holds more than one page of rows.
const exportFlushRows = 500

// exportCSVHeader is the header line of a CSV export.
var exportCSVHeader = []string{"id", "type", "user_id", "token_id", "channel_id", "model", "prompt_tokens",
	"completion_tokens", "quota", "latency_ms", "request_id", "created_at", "other"}

// exportLogs streams the window's rows oldest first as CSV or JSON lines
// (CONTRACT §20), with the filters and the visibility of GET /api/logs.
func (a *API) exportLogs(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "jsonl"
	}
	if format != "csv" && format != "jsonl" {
		return badField("format", "must be csv or jsonl")
	}
	f, err := logFilter(r, p)
	if err != nil {
		return err
	}
	win, err := a.window(r)
	if err != nil {
		return err
	}
	f.Since, f.Until = win.Since, win.Until
	admin := p.AtLeast(store.RoleAdmin)
	name := "usage-" + win.Since.Format("20060102T150405Z") + "." + format
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	bw := bufio.NewWriterSize(w, 64<<10)
	rc := http.NewResponseController(w)
	row := a.exportRow(format, bw, admin)
	n := 0
	err = a.d.Store.Logs().Each(r.Context(), f, func(l store.UsageLog) error {
		if err := row(l); err != nil {
			return err
		}
		if n++; n%exportFlushRows == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
			_ = rc.Flush()
		}
		return nil
	})
	if err != nil {
		// The status line is gone once a row was written: the client
		// sees a cut answer, and the log says why.
		a.log.WarnContext(r.Context(), "usage export ended early", "rows", n, "err", err)
		if n > 0 {
			return nil
		}
		return err
	}
	return bw.Flush()
}

// exportRow writes one row in format; a plain user's rows lose the
// members only administrators read.
func (a *API) exportRow(format string, bw *bufio.Writer, admin bool) func(store.UsageLog) error {
	if format == "jsonl" {
		enc := json.NewEncoder(bw)
		return func(l store.UsageLog) error {
			if !admin {
				l.Other = userOther(l.Other)
			}
			return enc.Encode(l)
		}
	}
	cw := csv.NewWriter(bw)
	_ = cw.Write(exportCSVHeader) // into the buffer: its error is the first flush's
	rec := make([]string, len(exportCSVHeader))
	return func(l store.UsageLog) error {
		if !admin {
			l.Other = userOther(l.Other)
		}
		rec = append(rec[:0], strconv.FormatInt(l.ID, 10), l.Type, strconv.FormatInt(l.UserID, 10), strconv.FormatInt(l.TokenID, 10),
			strconv.FormatInt(l.ChannelID, 10), l.Model, strconv.Itoa(l.PromptTokens), strconv.Itoa(l.CompletionTokens),
			strconv.FormatInt(l.Quota, 10), strconv.FormatInt(l.LatencyMS, 10), l.RequestID, l.CreatedAt.Format(time.RFC3339Nano), string(l.Other))
		if err := cw.Write(rec); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}
}
