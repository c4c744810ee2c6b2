package books

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// RowFinding names one usage row (or one call of the ledger without a
// row) behind a difference, so an operator can look it up.
type RowFinding struct {
	Table     string `json:"table"`        // usage_logs
	ID        int64  `json:"id,omitempty"` // the row's id; 0 for a call without a row
	RequestID string `json:"request_id,omitempty"`
	Field     string `json:"field"`        // quota
	RowValue  *int64 `json:"row_value"`    // what the row says; null when it is missing
	Ledger    *int64 `json:"ledger_value"` // what the ledger charged; null for a row of no call
	LedgerKey string `json:"ledger_key,omitempty"`
	Message   string `json:"message"`
}

type acctID struct {
	token bool
	id    int64
}

type callEnd struct {
	key  string
	used int64
}

// explainRows names, for each account whose ledger and usage rows
// disagree, the consume rows whose charge no call of the ledger has (an
// altered or extra row) and the calls no row records (an altered or
// missing row). It reads the window again, for those accounts only, and
// only when the books disagree.
func explainRows(ctx context.Context, st store.Store, w store.Window, rep *Report) error {
	wanted := map[acctID]bool{}
	for _, d := range rep.Differences {
		if d.Check == CheckLedgerRows || d.Check == CheckCallsRows {
			wanted[acctOf(d)] = true
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	ends := map[acctID][]callEnd{}
	err := st.Books().EachEntry(ctx, w.Since, func(e store.LedgerEntry) error {
		hold, _, isHold := store.HoldOf(e.Key)
		if !e.CreatedAt.Before(w.Until) || !isHold || strings.HasPrefix(hold, store.TaskHoldPrefix) || e.Kind != store.LedgerSettle {
			return nil
		}
		for _, a := range []acctID{{false, e.UserID}, {true, e.TokenID}} {
			if wanted[a] {
				ends[a] = append(ends[a], callEnd{hold, e.Used})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rows := map[acctID][]store.UsageLog{}
	err = st.Books().EachLog(ctx, w, []string{store.LogConsume}, func(l store.UsageLog) error {
		if bytes.Contains(l.Other, []byte(`"surface":"task"`)) {
			return nil
		}
		for _, a := range []acctID{{false, l.UserID}, {true, l.TokenID}} {
			if wanted[a] {
				rows[a] = append(rows[a], l)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range rep.Differences {
		d := &rep.Differences[i]
		if a := acctOf(*d); wanted[a] {
			d.Rows = matchRows(ends[a], rows[a])
			for _, f := range d.Rows {
				d.Message += "; " + f.Message
			}
		}
	}
	return nil
}

func acctOf(d Difference) acctID {
	if d.Account == "token" {
		return acctID{true, d.TokenID}
	}
	return acctID{false, d.UserID}
}

// matchRows pairs each row with a call the ledger charged the same amount,
// and names what is left: a row beside a call is a row altered, a row
// alone is extra, a call alone has lost its row.
func matchRows(ends []callEnd, rows []store.UsageLog) []RowFinding {
	byAmount := map[int64][]callEnd{}
	for _, e := range ends {
		byAmount[e.used] = append(byAmount[e.used], e)
	}
	var extra []store.UsageLog
	for _, r := range rows {
		if es := byAmount[r.Quota]; len(es) > 0 {
			byAmount[r.Quota] = es[1:]
			continue
		}
		extra = append(extra, r)
	}
	var lost []callEnd
	for _, e := range ends { // in the ledger's order
		if es := byAmount[e.used]; len(es) > 0 && es[0].key == e.key {
			byAmount[e.used] = es[1:]
			lost = append(lost, e)
		}
	}
	out := []RowFinding{}
	for len(extra) > 0 || len(lost) > 0 {
		f := RowFinding{Table: "usage_logs", Field: "quota"}
		switch {
		case len(extra) > 0 && len(lost) > 0:
			r, e := extra[0], lost[0]
			f.ID, f.RequestID, f.RowValue, f.Ledger, f.LedgerKey = r.ID, r.RequestID, &r.Quota, &e.used, e.key
			f.Message = fmt.Sprintf("usage_logs row %d (request %s) is altered: its quota is %d, the ledger charged %d for that call (%s)",
				r.ID, r.RequestID, r.Quota, e.used, e.key)
			extra, lost = extra[1:], lost[1:]
		case len(extra) > 0:
			r := extra[0]
			f.ID, f.RequestID, f.RowValue = r.ID, r.RequestID, &r.Quota
			f.Message = fmt.Sprintf("usage_logs row %d (request %s, quota %d) records no call of the ledger", r.ID, r.RequestID, r.Quota)
			extra = extra[1:]
		default:
			e := lost[0]
			f.Ledger, f.LedgerKey = &e.used, e.key
			f.Message = fmt.Sprintf("the ledger charged %d for call %s but no usage row records it", e.used, e.key)
			lost = lost[1:]
		}
		out = append(out, f)
	}
	return out
}
