//go:build unix

package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// The billing benchmarks replay what billing.Writer hands the store under
// load: a batch of a few hundred ledger entries (reservations and their
// settlements over a handful of accounts) and about a third as many usage
// log rows, on a file-backed SQLite database as a single node runs it.
const (
	benchEntries  = 300
	benchLogs     = 100
	benchUsers    = 10
	benchTokens   = 30
	benchLogOther = `{"stream":false,"group":"default"}`
)

// cpuMeter sums the process's CPU time (user and system) over the measured
// calls: on a shared machine it varies far less than wall time, and it
// counts the time SQLite spends in system calls.
type cpuMeter struct {
	total time.Duration
	calls int
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (m *cpuMeter) measure(b *testing.B, fn func() error) {
	start := processCPU(b)
	if err := fn(); err != nil {
		b.Fatal(err)
	}
	m.total += processCPU(b) - start
	m.calls++
}

func (m *cpuMeter) report(b *testing.B) {
	if m.calls > 0 {
		b.ReportMetric(float64(m.total.Nanoseconds())/float64(m.calls), "cpu-ns/op")
	}
}

// benchFixture is an opened store with accounts to charge.
type benchFixture struct {
	st     *Store
	users  []int64
	tokens []int64 // tokens[i] belongs to users[i%len(users)]
	seq    int
}

func newBenchFixture(b *testing.B) *benchFixture {
	b.Helper()
	ctx := context.Background()
	st, err := OpenStore(ctx, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	f := &benchFixture{st: st}
	for i := range benchUsers {
		u := &store.User{Username: fmt.Sprintf("u%d", i), PasswordHash: "x", Role: store.RoleUser, Group: "default", Quota: 1 << 40}
		if err := st.Users().Create(ctx, u); err != nil {
			b.Fatal(err)
		}
		f.users = append(f.users, u.ID)
	}
	for i := range benchTokens {
		tok := &store.Token{UserID: f.users[i%benchUsers], Name: fmt.Sprintf("k%d", i), KeyHash: fmt.Sprintf("h%d", i), KeyMasked: "sk-…", Quota: 1 << 40}
		if err := st.Tokens().Create(ctx, tok); err != nil {
			b.Fatal(err)
		}
		f.tokens = append(f.tokens, tok.ID)
	}
	return f
}

// entries returns a fresh batch: every other entry settles the reservation
// before it, as a finished call does.
func (f *benchFixture) entries() []store.LedgerEntry {
	out := make([]store.LedgerEntry, benchEntries)
	for i := range out {
		f.seq++
		tok := i / 2 % benchTokens
		e := store.LedgerEntry{Key: fmt.Sprintf("req-%012d:reserve", f.seq), Kind: store.LedgerReserve,
			UserID: f.users[tok%benchUsers], TokenID: f.tokens[tok], Delta: -1200, TokenDelta: -1200}
		if i%2 == 1 {
			e.Key, e.Kind, e.Delta, e.TokenDelta, e.Used = fmt.Sprintf("req-%012d:settle", f.seq), store.LedgerSettle, 900, 900, 300
		}
		out[i] = e
	}
	return out
}

func (f *benchFixture) logs() []store.UsageLog {
	out := make([]store.UsageLog, benchLogs)
	for i := range out {
		tok := i % benchTokens
		out[i] = store.UsageLog{Type: store.LogConsume, UserID: f.users[tok%benchUsers], TokenID: f.tokens[tok], ChannelID: 1,
			Model: "gpt-4o-mini", PromptTokens: 812, CompletionTokens: 233, Quota: 300, LatencyMS: 41,
			RequestID: fmt.Sprintf("req-%012d", f.seq+i), Other: json.RawMessage(benchLogOther)}
	}
	return out
}

// benchFlushes measures write on a fresh batch from next per iteration,
// making the batch outside the timer, and reports the CPU per flush.
func benchFlushes[T any](b *testing.B, next func() T, write func(context.Context, T) error) cpuMeter {
	ctx := context.Background()
	var cpu cpuMeter
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		batch := next()
		b.StartTimer()
		cpu.measure(b, func() error { return write(ctx, batch) })
	}
	cpu.report(b)
	return cpu
}

func BenchmarkLedgerApplyBatch(b *testing.B) {
	f := newBenchFixture(b)
	benchFlushes(b, f.entries, f.st.Ledger().Apply)
}

func BenchmarkLogInsertBatch(b *testing.B) {
	f := newBenchFixture(b)
	batch := f.logs()
	benchFlushes(b, func() []store.UsageLog { return batch }, f.st.Logs().Insert)
}

// BenchmarkBillingWriteBatch is one writer flush: the ledger entries and
// the usage logs of the same interval, in one transaction as billing.Writer
// stores them through store.BatchWriter.
func BenchmarkBillingWriteBatch(b *testing.B) {
	f := newBenchFixture(b)
	logs := f.logs()
	benchFlushes(b, f.entries, func(ctx context.Context, entries []store.LedgerEntry) error {
		return f.st.WriteBatch(ctx, entries, logs)
	})
}

// benchCalls is the number of finished calls in one writer flush of
// BenchmarkBillingWriteCalls: about what 100 ms brings at 4,000 calls a
// second.
const benchCalls = 400

// calls returns the items benchCalls finished calls queue: each reserves
// (opening its hold) and settles (closing it, with its usage row), as the
// relay's calls do.
func (f *benchFixture) calls() []store.BillingItem {
	out := make([]store.BillingItem, 0, 2*benchCalls)
	now := time.Now().UTC()
	for i := range benchCalls {
		f.seq++
		tok := i % benchTokens
		user := f.users[tok%benchUsers]
		key := fmt.Sprintf("chat-0193a1b2-%04x-7c3d-8e4f-%012x", f.seq>>16, f.seq)
		out = append(out,
			store.BillingItem{
				Entry: &store.LedgerEntry{Key: key + ":reserve", Kind: store.LedgerReserve, UserID: user, TokenID: f.tokens[tok],
					Delta: -1200, TokenDelta: -1200, CreatedAt: now},
				Open: &store.Hold{Key: key, Owner: "bench-node", UserID: user, TokenID: f.tokens[tok], Amount: 1200, CreatedAt: now},
			},
			store.BillingItem{
				Entry: &store.LedgerEntry{Key: key + ":settle", Kind: store.LedgerSettle, UserID: user, TokenID: f.tokens[tok],
					Delta: 900, TokenDelta: 900, Used: 300, CreatedAt: now},
				Log: &store.UsageLog{Type: store.LogConsume, UserID: user, TokenID: f.tokens[tok], ChannelID: 1,
					Model: "gpt-4o-mini", PromptTokens: 812, CompletionTokens: 233, Quota: 300, LatencyMS: 41,
					RequestID: key, Other: json.RawMessage(benchLogOther), CreatedAt: now},
				Close: key,
			})
	}
	return out
}

// BenchmarkBillingWriteCalls is one writer flush of finished calls, as
// billing.Writer hands them to the store under steady load.
func BenchmarkBillingWriteCalls(b *testing.B) {
	f := newBenchFixture(b)
	cpu := benchFlushes(b, f.calls, func(ctx context.Context, items []store.BillingItem) error {
		_, err := f.st.WriteItems(ctx, items)
		return err
	})
	if cpu.calls > 0 {
		b.ReportMetric(float64(cpu.total.Nanoseconds())/float64(cpu.calls*benchCalls), "cpu-ns/call")
	}
}

// BenchmarkBillingWriteCallsEndedNextBatch is BenchmarkBillingWriteCalls
// for calls that outlast a batch: each flush holds this flush's reserves
// and the ends of the previous flush's calls, so no pair is written as one
// (what billing.Writer's pair window avoids for calls shorter than it).
func BenchmarkBillingWriteCallsEndedNextBatch(b *testing.B) {
	f := newBenchFixture(b)
	var ends []store.BillingItem
	next := func() []store.BillingItem {
		var batch, later []store.BillingItem
		for i, it := range f.calls() {
			if i%2 == 0 {
				batch = append(batch, it)
			} else {
				later = append(later, it)
			}
		}
		batch, ends = append(batch, ends...), later
		return batch
	}
	cpu := benchFlushes(b, next, func(ctx context.Context, items []store.BillingItem) error {
		_, err := f.st.WriteItems(ctx, items)
		return err
	})
	if cpu.calls > 0 {
		b.ReportMetric(float64(cpu.total.Nanoseconds())/float64(cpu.calls*benchCalls), "cpu-ns/call")
	}
}
