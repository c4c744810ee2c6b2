// Package notify sends the gateway's alerts (CONTRACT.md §10) to a webhook:
// quota and budget thresholds, and channel state changes. Each event is a
// JSON POST signed with X-Turnpike-Signature (HMAC-SHA256 of the body),
// retried with exponential backoff; a threshold event is sent at most once
// per subject, threshold and period on all nodes together, because its
// mark is claimed in the database (a unique key) before it is sent.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// SignatureHeader carries "sha256=<hex HMAC-SHA256 of the body>".
const SignatureHeader = "X-Turnpike-Signature"

// Retries after the first attempt, and the first wait between attempts
// (doubling each time).
const (
	maxRetries     = 5
	defaultBackoff = time.Second
)

// Notifier sends alerts. Its methods are safe for concurrent use and cheap
// when no webhook is configured.
type Notifier struct {
	st      store.Store
	traffic store.TrafficRepo
	log     *slog.Logger
	client  *http.Client

	settings atomic.Pointer[config.Notify]
	backoff  atomic.Int64
	// claimed remembers the threshold marks this process already claimed
	// or saw taken, so 1,000 calls past a threshold ask the database once.
	claimed sync.Map
	queue   chan delivery
	// dirty holds the subjects whose balance may have crossed a threshold
	// since the last check.
	mu    sync.Mutex
	dirty map[subjectKey]struct{}
	kick  chan struct{}
}

type subjectKey struct {
	kind string
	id   int64
}

type delivery struct {
	body []byte
	// build, when set, makes the body in the worker (it may read names
	// from the store), after the mark was claimed.
	build func(ctx context.Context) ([]byte, error)
	// mark, when set, is claimed in the database first; a mark already
	// taken (by any node) means the event was sent.
	mark string
}

// New returns a notifier over st (names and balances) and traffic (marks
// and settings). Start runs its workers.
func New(st store.Store, traffic store.TrafficRepo, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{st: st, traffic: traffic, log: log, client: &http.Client{Timeout: 10 * time.Second},
		queue: make(chan delivery, 1024), dirty: map[subjectKey]struct{}{}, kick: make(chan struct{}, 1)}
	n.backoff.Store(int64(defaultBackoff))
	n.settings.Store(&config.Notify{})
	return n
}

// SetBackoff changes the first wait between attempts (tests shorten it).
func (n *Notifier) SetBackoff(d time.Duration) { n.backoff.Store(int64(d)) }

// SetClient replaces the HTTP client used for deliveries.
func (n *Notifier) SetClient(c *http.Client) { n.client = c }

func (n *Notifier) current() *config.Notify { return n.settings.Load() }

// enabled reports whether alerts can go anywhere.
func (n *Notifier) enabled() bool { return n.current().WebhookURL != "" }

// DeliverLoop sends queued alerts until ctx ends; the app runs two, so one
// slow webhook does not hold back the next alert.
func (n *Notifier) DeliverLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-n.queue:
			n.deliver(ctx, d)
		}
	}
}

// enqueue hands an event to the workers; a full queue drops it with a
// warning rather than stall a request.
func (n *Notifier) enqueue(d delivery) {
	select {
	case n.queue <- d:
	default:
		n.log.Warn("alert queue is full; an alert was dropped")
		if d.mark != "" {
			n.claimed.Delete(d.mark)
		}
	}
}

// deliver claims the event's mark, then POSTs it until it is accepted
// (2xx), the retries are spent, or ctx ends.
func (n *Notifier) deliver(ctx context.Context, d delivery) {
	if d.mark != "" {
		ok, err := n.traffic.ClaimNotice(ctx, d.mark)
		if err != nil {
			n.log.Warn("alert mark could not be claimed; not sent", "mark", d.mark, "err", err)
			n.claimed.Delete(d.mark) // a later call may try again
			return
		}
		if !ok {
			return // sent already, here or by another node
		}
	}
	if d.build != nil {
		body, err := d.build(ctx)
		if err != nil {
			n.log.Warn("alert could not be built; not sent", "mark", d.mark, "err", err)
			return
		}
		d.body = body
	}
	wait := time.Duration(n.backoff.Load())
	for attempt := 0; ; attempt++ {
		err := n.post(ctx, d.body)
		if err == nil {
			return
		}
		if attempt == maxRetries {
			n.log.Warn("alert could not be delivered", "attempts", attempt+1, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (n *Notifier) post(ctx context.Context, body []byte) error {
	s := n.current()
	if s.WebhookURL == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "turnpike-notify")
	req.Header.Set(SignatureHeader, Sign(s.Secret, body))
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return nil
}

// Sign is the signature header's value for body: "sha256=" and the hex
// HMAC-SHA256 of body keyed with secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// ChannelEvent sends channel_down (up false) or channel_up (up true) for a
// channel, or one of its keys (keyIndex; -1 or 0 for a single-key
// channel), now in state (healthy, cooling, auto_disabled, disabled) for
// reason. It returns at once; the delivery is retried in the background.
// It is not deduplicated: call it once per state change you decided.
func (n *Notifier) ChannelEvent(_ context.Context, id int64, name string, keyIndex int, state, reason string, up bool) {
	if !n.enabled() {
		return
	}
	ev := "channel_down"
	if up {
		ev = "channel_up"
	}
	body, _ := json.Marshal(channelEvent{Event: ev, Channel: channelRef{ID: id, Name: name}, KeyIndex: keyIndex, State: state, Reason: reason})
	n.enqueue(delivery{body: body})
}

type channelRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type channelEvent struct {
	Event    string     `json:"event"`
	Channel  channelRef `json:"channel"`
	KeyIndex int        `json:"key_index"`
	State    string     `json:"state"`
	Reason   string     `json:"reason"`
}

type subjectRef struct {
	Kind string `json:"kind"`
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type thresholdEvent struct {
	Event       string     `json:"event"`
	Subject     subjectRef `json:"subject"`
	Threshold   int        `json:"threshold"`
	Used        int64      `json:"used"`
	Limit       int64      `json:"limit"`
	Period      *string    `json:"period"`
	PeriodStart *time.Time `json:"period_start,omitempty"`
}
