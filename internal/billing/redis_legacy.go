package billing

import "strconv"

// Live balances shared with older releases during a rolling deploy.
//
// Releases before the epochs (schema 131) keep a balance under one name
// without an epoch ("balance:u:ID"), and releases since under the epoch's
// name ("balance:<epoch>:u:ID"). Both only ever move their key by a delta
// (DECRBY, INCRBY) and load it from the database when it is missing. So
// that a node of either kind and a node of this release running on one
// database and one Redis see one balance, this release keeps each balance
// under three keys:
//
//   - E, the epoch's key, which releases since the epochs move;
//   - L, the key without an epoch, which releases before them move;
//   - S, the value this release last wrote to both.
//
// The balance is E + L - S: what this release wrote, plus what older nodes
// of each kind moved since. Each script reads it that way and writes the
// result back to all three, in one atomic step. A missing E (a new epoch,
// or an older node forgot the balance after an administrator's change) or
// a missing L beside an S (a pre-epoch node forgot it) means the database
// decides again: the script drops the other keys and the balance is loaded
// anew. This is the expand step of expand-then-contract: the release after
// the last one that may run beside a pre-epoch node drops L and S.
//
// What stays open while older nodes run: a pre-epoch node cannot
// acknowledge a rebuild (epoch.go), so its moves still queued for the
// database when a rebuild or a reload happens are missing from the
// reloaded balance until the next reload.
const balanceLib = `
local function bget(e, l, s)
  local ev = redis.call('GET', e)
  if not ev then
    redis.call('DEL', l, s)
    return false
  end
  local sv = redis.call('GET', s)
  if not sv then return ev end
  local lv = redis.call('GET', l)
  if not lv then
    redis.call('DEL', e, s)
    return false
  end
  local en, ln, sn = tonumber(ev), tonumber(lv), tonumber(sv)
  if not (en and ln and sn) then
    if ev ~= sv then return ev end
    return lv
  end
  return string.format('%d', en + ln - sn)
end
local function bput(e, l, s, v)
  redis.call('SET', e, v)
  redis.call('SET', l, v)
  redis.call('SET', s, v)
end
local function bmove(e, l, s, v, d)
  if v ~= 'unlimited' then v = string.format('%d', tonumber(v) + d) end
  bput(e, l, s, v)
  return v
end
`

// balanceKeys are a balance's E, L and S keys (see balanceLib); kind is
// "u" for a user, "t" for an API key.
func (r *redisBalances) balanceKeys(e, kind string, id int64) []string {
	n := strconv.FormatInt(id, 10)
	return []string{r.prefix + e + ":" + kind + ":" + n, r.prefix + kind + ":" + n, r.prefix + e + ":s:" + kind + ":" + n}
}

func (r *redisBalances) userKeys(e string, id int64) []string  { return r.balanceKeys(e, "u", id) }
func (r *redisBalances) tokenKeys(e string, id int64) []string { return r.balanceKeys(e, "t", id) }

// teamKeys are a team's shared balance's keys. No release before teams
// moves them, but they keep the three-key shape so every script reads
// every balance alike.
func (r *redisBalances) teamKeys(e string, id int64) []string { return r.balanceKeys(e, "team", id) }

// scriptKeys joins the epoch key and the keys of each balance a script
// touches, in order.
func (r *redisBalances) scriptKeys(balances ...[]string) []string {
	out := make([]string, 0, 1+3*len(balances))
	out = append(out, r.epochKey())
	for _, b := range balances {
		out = append(out, b...)
	}
	return out
}
