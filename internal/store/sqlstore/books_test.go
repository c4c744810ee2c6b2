package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// The reports read in pages; rows that share a timestamp across a page
// boundary must each be read exactly once.
func TestBooksReadsEveryRowOnceAcrossPages(t *testing.T) {
	st := openSQLite(t)
	old := booksPage
	booksPage = 2
	t.Cleanup(func() { booksPage = old })
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var logs []store.UsageLog
	var entries []store.LedgerEntry
	for i := range 7 {
		created := at.Add(time.Duration(i/3) * time.Second) // three rows per timestamp
		logs = append(logs, store.UsageLog{Type: store.LogConsume, UserID: 1, ChannelID: 3, Model: "m", Quota: int64(i + 1), CreatedAt: created},
			store.UsageLog{Type: store.LogConsume, UserID: 1, ChannelID: 4, Model: "m", Quota: 100, CreatedAt: created.Add(2 * time.Hour)})
		entries = append(entries, store.LedgerEntry{Key: fmt.Sprintf("e%d", i), Kind: store.LedgerTopUp, UserID: 1, Delta: int64(i + 1), CreatedAt: created})
	}
	if err := st.Logs().Insert(ctx, logs); err != nil {
		t.Fatal(err)
	}
	if err := st.Ledger().Apply(ctx, entries); err != nil {
		t.Fatal(err)
	}
	var logSum, entrySum, n int64
	err := st.Books().EachLog(ctx, store.Window{Since: at, Until: at.Add(time.Hour)}, nil, func(l store.UsageLog) error {
		logSum += l.Quota
		n++
		return nil
	})
	if err != nil || n != 7 || logSum != 28 {
		t.Fatalf("logs read %d summing %d (err %v), want 7 summing 28", n, logSum, err)
	}
	n, logSum = 0, 0
	err = st.Books().EachChannelLog(ctx, 3, store.Window{Since: at, Until: at.Add(3 * time.Hour)}, []string{store.LogConsume}, func(l store.UsageLog) error {
		logSum += l.Quota
		n++
		return nil
	})
	if err != nil || n != 7 || logSum != 28 {
		t.Fatalf("the channel's logs read %d summing %d (err %v), want 7 summing 28", n, logSum, err)
	}
	n = 0
	err = st.Books().EachEntry(ctx, at, func(e store.LedgerEntry) error {
		entrySum += e.Delta
		n++
		return nil
	})
	if err != nil || n != 7 || entrySum != 28 {
		t.Fatalf("entries read %d summing %d (err %v), want 7 summing 28", n, entrySum, err)
	}
}
