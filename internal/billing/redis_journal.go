package billing

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// moveScript: KEYS epoch, the user's three keys, the key's three keys
// (redis_legacy.go), journal, journal set; ARGV epoch, delta, force (0/1),
// hasToken (0/1), entry key, journal record, node. It moves the user and
// (limited) key by delta and records the move in the node's journal, all
// or nothing; results as takeScript's.
var moveScript = redis.NewScript(epochCheck + balanceLib + `
local u = bget(KEYS[2], KEYS[3], KEYS[4])
if not u then return -1 end
local t = false
if ARGV[4] == '1' then
  t = bget(KEYS[5], KEYS[6], KEYS[7])
  if not t then return -2 end
end
local d = tonumber(ARGV[2])
if d < 0 and ARGV[3] ~= '1' then
  if tonumber(u) < -d then return -3 end
  if t and t ~= 'unlimited' and tonumber(t) < -d then return -4 end
end
bmove(KEYS[2], KEYS[3], KEYS[4], u, d)
if t then bmove(KEYS[5], KEYS[6], KEYS[7], t, d) end
redis.call('HSET', KEYS[8], ARGV[5], ARGV[6])
redis.call('SADD', KEYS[9], ARGV[7])
return 0
`)

// undoScript: KEYS epoch, the user's three keys, the key's three keys,
// journal; ARGV epoch, entry key, undo (0/1), delta, hasToken (0/1). It
// removes the journal record and, when asked and the record was still
// there, takes its move back from the balances Redis holds (a balance not
// loaded reads the database, which never had the move). Returns 1 when it
// removed the record.
var undoScript = redis.NewScript(epochCheck + balanceLib + `
if redis.call('HDEL', KEYS[8], ARGV[2]) == 0 then return 0 end
if ARGV[3] == '1' then
  local d = -tonumber(ARGV[4])
  local u = bget(KEYS[2], KEYS[3], KEYS[4])
  if u then bmove(KEYS[2], KEYS[3], KEYS[4], u, d) end
  if ARGV[5] == '1' then
    local t = bget(KEYS[5], KEYS[6], KEYS[7])
    if t then bmove(KEYS[5], KEYS[6], KEYS[7], t, d) end
  end
end
return 1
`)

var _ Journal = (*redisBalances)(nil)

// Journals belong to an epoch like the balances they record moves of: a
// journal of a lost epoch describes balances that no longer exist.
func (r *redisBalances) journalKey(e, node string) string { return r.prefix + e + ":journal:" + node }

func (r *redisBalances) journalSet(e string) string { return r.prefix + e + ":journals" }

func (r *redisBalances) MoveFor(ctx context.Context, node, entryKey string, p Payer, tokenID, delta int64, force bool) error {
	return r.moveRecorded(ctx, node, entryKey, p, tokenID, delta, force, nil)
}

// payerField is a journal record's first field: the user, and after a
// colon the team whose shared balance moved. A record without the team is
// one of the user's own balance, as every release before teams wrote it.
func payerField(p Payer) string {
	f := strconv.FormatInt(p.UserID, 10)
	if p.team() {
		f += ":" + strconv.FormatInt(p.TeamID, 10)
	}
	return f
}

func parsePayer(f string) (Payer, error) {
	user, team, hasTeam := strings.Cut(f, ":")
	var p Payer
	var err error
	if p.UserID, err = strconv.ParseInt(user, 10, 64); err != nil || !hasTeam {
		return p, err
	}
	p.TeamID, err = strconv.ParseInt(team, 10, 64)
	return p, err
}

// moveRecorded is MoveFor whose journal record also carries the item that
// will store the move (a settle and its usage row), so that whoever sweeps
// this node after it died writes the item instead of undoing the move: what
// the node answered is charged.
func (r *redisBalances) moveRecorded(ctx context.Context, node, entryKey string, p Payer, tokenID, delta int64, force bool, it *store.BillingItem) error {
	record := payerField(p) + " " + strconv.FormatInt(tokenID, 10) + " " + strconv.FormatInt(delta, 10)
	if it != nil {
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		record += " " + string(b)
	}
	return r.runMove(ctx, p, tokenID, func(e string) (int, error) {
		j := r.journalFor(e, node, p)
		keys := append(r.scriptKeys(r.payerKeys(e, p), r.tokenKeys(e, tokenID)), j.hash, j.set)
		return moveScript.Run(ctx, r.rdb, keys, e, delta, b2s(force), b2s(tokenID != 0), entryKey, record, node).Int()
	})
}

func (r *redisBalances) Written(ctx context.Context, node string, entryKeys []string) error {
	// One round trip for both journals: the entries do not say whose
	// balance they moved.
	pipe := r.rdb.Pipeline()
	for _, j := range r.journals(r.cur(), node) {
		pipe.HDel(ctx, j.hash, entryKeys...)
	}
	_, err := pipe.Exec(ctx)
	return err
}

func (r *redisBalances) Nodes(ctx context.Context) ([]string, error) {
	e := r.cur()
	return r.rdb.SUnion(ctx, r.journalSet(e), r.teamJournalSet(e)).Result()
}

func (r *redisBalances) Reconcile(ctx context.Context, node string, stored func(context.Context, []string) (map[string]bool, error)) (int, error) {
	return r.reconcile(ctx, node, stored, nil)
}

// journalRecord is one parsed journal record.
type journalRecord struct {
	payer          Payer
	tokenID, delta int64
	item           *store.BillingItem // the settle to store, when recorded
	ok             bool
}

func parseRecord(rec string) journalRecord {
	f := strings.SplitN(rec, " ", 4)
	if len(f) < 3 {
		return journalRecord{}
	}
	var jr journalRecord
	var e1, e2, e3 error
	jr.payer, e1 = parsePayer(f[0])
	jr.tokenID, e2 = strconv.ParseInt(f[1], 10, 64)
	jr.delta, e3 = strconv.ParseInt(f[2], 10, 64)
	jr.ok = e1 == nil && e2 == nil && e3 == nil
	if len(f) == 4 {
		var it store.BillingItem
		if json.Unmarshal([]byte(f[3]), &it) == nil && it.Entry != nil {
			jr.item = &it
		}
	}
	return jr
}

// reconcile is Reconcile that first stores, through write, the settles
// the dead node journaled but never wrote (with their reserve, when that
// was lost too): those calls were answered, so they are charged and their
// moves stay. write nil undoes them like any other lost move; write is
// told the epoch whose journal it stores from (see Service.writeAnswered).
func (r *redisBalances) reconcile(ctx context.Context, node string, stored func(context.Context, []string) (map[string]bool, error),
	write func(ctx context.Context, e string, items []store.BillingItem) ([]bool, error)) (int, error) {
	e := r.cur()
	var writeFromE func(context.Context, []store.BillingItem) ([]bool, error)
	if write != nil {
		writeFromE = func(ctx context.Context, items []store.BillingItem) ([]bool, error) { return write(ctx, e, items) }
	}
	undone := 0
	for _, j := range r.journals(e, node) {
		n, err := r.reconcileJournal(ctx, e, node, j, stored, writeFromE)
		undone += n
		if err != nil {
			return undone, err
		}
	}
	return undone, nil
}

// reconcileJournal is reconcile of one of node's journals.
func (r *redisBalances) reconcileJournal(ctx context.Context, e, node string, j journal, stored func(context.Context, []string) (map[string]bool, error),
	write func(context.Context, []store.BillingItem) ([]bool, error)) (int, error) {
	jk := j.hash
	raw, err := r.rdb.HGetAll(ctx, jk).Result()
	if err != nil {
		return 0, err
	}
	if len(raw) == 0 {
		// Nothing pending: forget the node (a record it adds later, were
		// it alive after all, puts it back).
		return 0, r.rdb.SRem(ctx, j.set, node).Err()
	}
	recs := make(map[string]journalRecord, len(raw))
	keys := make([]string, 0, len(raw))
	for k, v := range raw {
		recs[k] = parseRecord(v)
		keys = append(keys, k)
	}
	have, err := stored(ctx, keys)
	if err != nil {
		return 0, err
	}
	if write != nil {
		if err := r.storeAnswered(ctx, node, recs, have, stored, write); err != nil {
			return 0, err
		}
		// Ask again: a settle another sweeper stored meanwhile is not
		// written by this one (false), and must not be undone by it.
		if have, err = stored(ctx, keys); err != nil {
			return 0, err
		}
	}
	if anyToUndo(recs, have) {
		// Before undoing: the node may be alive, with these entries about
		// to be written (see redis_fence.go).
		if err := r.fence(ctx, node); err != nil {
			return 0, err
		}
	}
	return r.settleRecords(ctx, e, jk, recs, have)
}

func anyToUndo(recs map[string]journalRecord, have map[string]bool) bool {
	for k, jr := range recs {
		if !have[k] && jr.ok {
			return true
		}
	}
	return false
}

// settleRecords removes the records recs of the journal jk and, for each
// whose entry have does not hold, undoes its move; each record at most
// once, also against concurrent callers. It reports how many it undid.
func (r *redisBalances) settleRecords(ctx context.Context, e, jk string, recs map[string]journalRecord, have map[string]bool) (int, error) {
	undone := 0
	for k, jr := range recs {
		undo := !have[k] && jr.ok
		n, err := undoScript.Run(ctx, r.rdb, append(r.scriptKeys(r.payerKeys(e, jr.payer), r.tokenKeys(e, jr.tokenID)), jk),
			e, k, b2s(undo), jr.delta, b2s(jr.tokenID != 0)).Int()
		if err != nil {
			return undone, err
		}
		if n == rStale {
			return undone, errStaleEpoch
		}
		if undo && n == 1 {
			undone++
		}
	}
	return undone, nil
}

// storeAnswered writes each journaled settle that the database lacks,
// preceded by its hold's reserve when that is missing too, and marks what
// it wrote as stored.
func (r *redisBalances) storeAnswered(ctx context.Context, node string, recs map[string]journalRecord, have map[string]bool,
	stored func(context.Context, []string) (map[string]bool, error), write func(context.Context, []store.BillingItem) ([]bool, error)) error {
	unjournaled, err := unjournaledReserves(ctx, recs, have, stored)
	if err != nil {
		return err
	}
	for k, jr := range recs {
		if have[k] || jr.item == nil || !jr.ok {
			continue
		}
		hold, _, _ := cutKind(k)
		var items []store.BillingItem
		if res := lostReserve(node, hold, recs, have, unjournaled, jr); res != nil {
			items = append(items, *res)
		}
		items = append(items, *jr.item)
		written, err := write(ctx, items)
		if err != nil {
			return err
		}
		for i, ok := range written {
			if ok && items[i].Entry != nil {
				have[items[i].Entry.Key] = true
			}
		}
	}
	return nil
}

// unjournaledReserves finds the settles to store whose reserve has no
// journal record and is not in the database: a reserve of nothing (a plan
// paid the call, or its model is free) moves no balance, so it is never
// journaled — one Redis round trip fewer for every such call — and its
// settle must bring it along. Only those, by hold key.
func unjournaledReserves(ctx context.Context, recs map[string]journalRecord, have map[string]bool,
	stored func(context.Context, []string) (map[string]bool, error)) (map[string]bool, error) {
	var ask []string
	for k, jr := range recs {
		if have[k] || jr.item == nil || !jr.ok {
			continue
		}
		hold, _, _ := cutKind(k)
		if rk := hold + ":" + store.LedgerReserve; !hasRecord(recs, rk) && reservedBefore(jr.item.Entry) == 0 {
			ask = append(ask, rk)
		}
	}
	out := map[string]bool{}
	if len(ask) == 0 {
		return out, nil
	}
	there, err := stored(ctx, ask)
	if err != nil {
		return nil, err
	}
	for _, rk := range ask {
		if !there[rk] {
			hold, _, _ := cutKind(rk)
			out[hold] = true
		}
	}
	return out, nil
}

func hasRecord(recs map[string]journalRecord, k string) bool {
	_, ok := recs[k]
	return ok
}

// reservedBefore is what the hold of a settle entry had reserved: the
// settle moves the balance by the reservation less the charge (its Used).
func reservedBefore(settle *store.LedgerEntry) int64 { return settle.Delta + settle.Used }

// lostReserve is the reserve item to write before the settle jr of hold,
// when the reserve died with node: from its journal record, or, for a
// reserve of nothing that was never journaled (unjournaled), made anew.
// nil when the reserve is stored (or is not the settle's to write).
func lostReserve(node, hold string, recs map[string]journalRecord, have, unjournaled map[string]bool, jr journalRecord) *store.BillingItem {
	rk := hold + ":" + store.LedgerReserve
	res, hasRes := recs[rk]
	switch {
	case hasRes && !have[rk] && res.ok:
	case !hasRes && unjournaled[hold]:
		res = journalRecord{payer: jr.payer, tokenID: jr.tokenID}
	default:
		return nil
	}
	now := jr.item.Entry.CreatedAt
	return &store.BillingItem{
		Entry: &store.LedgerEntry{Key: rk, Kind: store.LedgerReserve, UserID: res.payer.UserID, TokenID: res.tokenID,
			Delta: res.delta, TokenDelta: res.delta, CreatedAt: now, TeamID: res.payer.TeamID},
		Open: &store.Hold{Key: hold, Owner: node, UserID: res.payer.UserID, TokenID: res.tokenID, Amount: -res.delta, CreatedAt: now,
			TeamID: res.payer.TeamID},
	}
}
