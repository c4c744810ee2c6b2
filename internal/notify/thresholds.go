package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Budget hears a subject's period spending after a charge and sends
// budget_threshold for each threshold (percent of period_quota) reached
// and not yet sent in this period. It is called on the settlement path, so
// it does no I/O: the mark is claimed and the event sent by a worker.
func (n *Notifier) Budget(u ratelimit.BudgetUse) {
	s := n.current()
	if s.WebhookURL == "" || u.Limit <= 0 {
		return
	}
	for _, t := range s.Thresholds {
		if u.Used*100 < int64(t)*u.Limit {
			continue
		}
		mark := fmt.Sprintf("budget:%s:%d:%s:%d:%d", u.Kind, u.ID, u.Period, u.Start.Unix(), t)
		if _, seen := n.claimed.LoadOrStore(mark, struct{}{}); seen {
			continue
		}
		period, start, threshold, used := u.Period, u.Start.UTC(), t, u.Used
		n.enqueue(delivery{mark: mark, build: func(ctx context.Context) ([]byte, error) {
			return n.event(ctx, "budget_threshold", u.Kind, u.ID, threshold, used, u.Limit, &period, &start)
		}})
	}
}

// Spent notes that a user (and key) was charged, so the balance checker
// looks at them soon. It costs a map insert when alerts are configured and
// nothing otherwise.
func (n *Notifier) Spent(userID, tokenID int64) {
	if !n.enabled() || len(n.current().Thresholds) == 0 {
		return
	}
	n.mu.Lock()
	n.dirty[subjectKey{store.SubjectUser, userID}] = struct{}{}
	if tokenID != 0 {
		n.dirty[subjectKey{store.SubjectToken, tokenID}] = struct{}{}
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// BalanceLoop checks the balances of charged subjects, at most every
// settle delay (so the billing writer has applied the charges), and
// reloads the settings now and then so a change on another node is seen.
func (n *Notifier) BalanceLoop(ctx context.Context) {
	const settle = 500 * time.Millisecond
	reload := time.NewTicker(10 * time.Second)
	defer reload.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-reload.C:
			if err := n.reload(ctx); err != nil && ctx.Err() == nil {
				n.log.Warn("alert settings could not be reloaded", "err", err)
			}
		case <-n.kick:
			select {
			case <-ctx.Done():
				return
			case <-time.After(settle):
			}
			n.mu.Lock()
			batch := n.dirty
			n.dirty = map[subjectKey]struct{}{}
			n.mu.Unlock()
			for k := range batch {
				if err := n.checkBalance(ctx, k); err != nil && ctx.Err() == nil {
					n.log.Warn("balance alert check failed", "kind", k.kind, "id", k.id, "err", err)
				}
			}
		}
	}
}

// checkBalance sends quota_threshold for each threshold a subject's
// spending has reached. For a user, limit is all the quota it was ever
// granted (its initial quota and every top-up) and used all it consumed,
// so a top-up starts a new round of alerts (the mark names the granted
// total). For a key with a quota of its own, limit is what the key has
// used plus what it has left.
func (n *Notifier) checkBalance(ctx context.Context, k subjectKey) error {
	var used, limit int64
	var epoch string
	switch k.kind {
	case store.SubjectUser:
		u, err := n.st.Users().Get(ctx, k.id)
		if err != nil {
			return err
		}
		granted, err := n.traffic.Granted(ctx, k.id)
		if err != nil {
			return err
		}
		used, limit, epoch = u.UsedQuota, granted, fmt.Sprint(granted)
	default:
		t, err := n.st.Tokens().Get(ctx, k.id)
		if err != nil {
			return err
		}
		if t.Quota < 0 {
			return nil
		}
		used, limit, epoch = t.UsedQuota, t.UsedQuota+t.Quota, "key"
	}
	if limit <= 0 {
		return nil
	}
	for _, t := range n.current().Thresholds {
		if used*100 < int64(t)*limit {
			continue
		}
		mark := fmt.Sprintf("quota:%s:%d:%s:%d", k.kind, k.id, epoch, t)
		if _, seen := n.claimed.LoadOrStore(mark, struct{}{}); seen {
			continue
		}
		threshold := t
		n.enqueue(delivery{mark: mark, build: func(ctx context.Context) ([]byte, error) {
			return n.event(ctx, "quota_threshold", k.kind, k.id, threshold, used, limit, nil, nil)
		}})
	}
	return nil
}

// event builds a threshold event, naming the subject.
func (n *Notifier) event(ctx context.Context, kind, subjectKind string, id int64, threshold int, used, limit int64, period *string, start *time.Time) ([]byte, error) {
	name := ""
	if subjectKind == store.SubjectUser {
		if u, err := n.st.Users().Get(ctx, id); err == nil {
			name = u.Username
		}
	} else if t, err := n.st.Tokens().Get(ctx, id); err == nil {
		name = t.Name
	}
	return json.Marshal(thresholdEvent{Event: kind, Subject: subjectRef{Kind: subjectKind, ID: id, Name: name},
		Threshold: threshold, Used: used, Limit: limit, Period: period, PeriodStart: start})
}

// Setting names in the database.
const (
	settingKey = "notify"
	// seedKey holds a digest of the notify section last applied from the
	// file, so a restart with the same file keeps changes made through the
	// admin API, and a changed file wins once.
	seedKey = "notify.seed"
)

// Init applies the file's notify section when it is new or changed since it
// was last applied, then loads the settings.
func (n *Notifier) Init(ctx context.Context, file config.Notify) error {
	if !file.IsZero() {
		b, _ := json.Marshal(file)
		sum := sha256.Sum256(b)
		digest := hex.EncodeToString(sum[:])
		prev, ok, err := n.traffic.Setting(ctx, seedKey)
		if err != nil {
			return err
		}
		if !ok || prev != digest {
			if err := n.traffic.PutSetting(ctx, settingKey, string(b)); err != nil {
				return err
			}
			if err := n.traffic.PutSetting(ctx, seedKey, digest); err != nil {
				return err
			}
		}
	}
	return n.reload(ctx)
}

func (n *Notifier) reload(ctx context.Context) error {
	v, ok, err := n.traffic.Setting(ctx, settingKey)
	if err != nil || !ok {
		return err
	}
	var c config.Notify
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return fmt.Errorf("stored alert settings are unreadable: %w", err)
	}
	n.settings.Store(&c)
	return nil
}

// Settings returns where alerts go, as stored.
func (n *Notifier) Settings(ctx context.Context) (config.Notify, error) {
	if err := n.reload(ctx); err != nil {
		return config.Notify{}, err
	}
	return *n.current(), nil
}

// SetSettings stores where alerts go; every node sees it within seconds.
func (n *Notifier) SetSettings(ctx context.Context, c config.Notify) error {
	if c.Thresholds == nil {
		c.Thresholds = []int{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := n.traffic.PutSetting(ctx, settingKey, string(b)); err != nil {
		return err
	}
	n.settings.Store(&c)
	return nil
}
