package store

import (
	"context"
	"encoding/json"
	"time"
)

// Subject kinds of traffic limits and alerts.
const (
	SubjectUser  = "user"
	SubjectToken = "token"
	SubjectGroup = "group"
)

// LimitRow is the traffic-limit spec of one subject: a user or token (by
// id) or a group (by name). Spec is the JSON the rate limiter owns; the
// store keeps it opaque so a new kind of limit needs no migration.
type LimitRow struct {
	Kind    string
	Subject string
	Spec    json.RawMessage
}

// TrafficRepo keeps what traffic control needs in the database: limit
// specs, the exactly-once marks of alerts, a few runtime settings, and the
// period spending derived from the usage log.
type TrafficRepo interface {
	// Limits returns every stored spec.
	Limits(ctx context.Context) ([]LimitRow, error)
	// PutLimits stores a subject's spec; an empty spec deletes it.
	PutLimits(ctx context.Context, kind, subject string, spec json.RawMessage) error
	// PeriodSpent sums the consumed quota of a user or token since since,
	// and what the kept holds of its batches taken since then still hold
	// (BatchHoldPrefix): a batch holds its reservation against the period
	// budgets until it is billed, and a budget counter loaded afresh (a
	// restart without Redis) must count that share as the one it replaces
	// did, so the batch's settlement corrects it exactly.
	PeriodSpent(ctx context.Context, kind string, id int64, since time.Time) (int64, error)
	// Granted sums every top-up of a user (its initial quota included).
	Granted(ctx context.Context, userID int64) (int64, error)
	// ClaimNotice records key once: it reports true to the one caller (on
	// any node) that recorded it first.
	ClaimNotice(ctx context.Context, key string) (bool, error)
	// Setting reads a named runtime setting; ok is false when it was never set.
	Setting(ctx context.Context, name string) (value string, ok bool, err error)
	// PutSetting writes a named runtime setting.
	PutSetting(ctx context.Context, name, value string) error
}
