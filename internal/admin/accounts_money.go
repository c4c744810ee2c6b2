package admin

import (
	"errors"
	"fmt"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"net/http"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/auth"
)

const (
	maxRedemptionCount = 1000
	// maxRedemptionQuota keeps a code's value far inside int64 arithmetic
	// on balances however many are redeemed.
	maxRedemptionQuota = int64(1) << 50
)

func (a *API) createRedemptions(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	f, err := readFields(w, r, "quota", "count", "expires_at", "name")
	if err != nil {
		return err
	}
	var quota int64
	count := 1
	var name string
	if _, err := get(f, "quota", &quota); err != nil {
		return err
	}
	if quota <= 0 || quota > maxRedemptionQuota {
		return badField("quota", "must be a positive number of quota units up to %d", maxRedemptionQuota)
	}
	if _, err := get(f, "count", &count); err != nil {
		return err
	}
	if count < 1 || count > maxRedemptionCount {
		return badField("count", "must be 1 to %d", maxRedemptionCount)
	}
	if _, err := get(f, "name", &name); err != nil {
		return err
	}
	if name != "" {
		if err := checkName("name", name, 64); err != nil {
			return err
		}
	}
	exp, err := parseExpiry(f["expires_at"])
	if err != nil {
		return err
	}
	codes, ids, err := a.d.Accounts.Store.CreateRedemptions(r.Context(), name, quota, count, exp, p.UserID)
	if err != nil {
		return err
	}
	accounts.NoteTarget(r.Context(), idsTarget(ids))
	apijson.Write(w, http.StatusOK, map[string][]string{"codes": codes})
	return nil
}

func (a *API) listRedemptions(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	items, total, err := a.d.Accounts.Store.ListRedemptions(r.Context(), p)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, newList(items, total))
	return nil
}

// errRedeem is the one answer to every code that does not pay out.
var errRedeem = errorf(http.StatusBadRequest, "invalid_code", "this code cannot be redeemed")

// redeem adds a code's quota to the caller, once: the database claims the
// code with a conditional update, and only the request that claimed it
// tops up (a recorded topup log row and ledger entry).
func (a *API) redeem(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if p.UserID == 0 {
		return badRequest("sign in as a user to redeem a code; the root token has no balance")
	}
	f, err := readFields(w, r, "code")
	if err != nil {
		return err
	}
	var raw string
	if err := getString(f, "code", &raw); err != nil {
		return err
	}
	// Guesses are counted before the code is looked at, per user and per
	// address, apart from sign-in so they cannot lock the user out.
	th, account := a.d.Throttle.Scoped("redeem"), strconv.FormatInt(p.UserID, 10)
	if err := a.attempt(w, r, th, account); err != nil {
		return err
	}
	code, err := accounts.ParseRedemptionCode(raw)
	if err != nil {
		return errRedeem
	}
	st := a.d.Accounts.Store
	id, quota, err := st.ClaimRedemption(r.Context(), code, p.UserID)
	if errors.Is(err, accounts.ErrBadCode) {
		return errRedeem
	}
	if err != nil {
		return err
	}
	a.attemptSucceeded(r, th, account)
	accounts.NoteTarget(r.Context(), strconv.FormatInt(id, 10))
	c, err := a.d.Billing.Credit(r.Context(), billing.Credit{UserID: p.UserID, Delta: quota, Note: fmt.Sprintf("redemption code %d", id)})
	if err != nil {
		if rerr := st.ReleaseRedemption(r.Context(), id, p.UserID); rerr != nil {
			a.log.Error("redemption: top-up failed and the code could not be released", "id", id, "err", rerr)
		}
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]int64{"quota": quota, "balance": c.Balance})
	return nil
}

// idsTarget names the records a creation made for the audit log: their ids,
// or the first and last of a batch too long to list in the column.
func idsTarget(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	if t := strings.Join(parts, ","); len(t) <= 200 {
		return t
	}
	return parts[0] + ".." + parts[len(parts)-1]
}
