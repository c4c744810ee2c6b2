package sqlstore

import (
	"encoding/json"
	"strconv"
	"strings"
)

// DumpFormat is the version of the export format (the header's
// turnpike_export); an import refuses any other.
const DumpFormat = 1

// dumpTable is one table an export carries, in the order an import writes
// them: a table comes after those it refers to.
type dumpTable struct {
	name string
	// secretRows drops the table's rows unless secrets are exported: they
	// are nothing but secrets.
	secretRows bool
	// redact replaces the secret columns of a row with placeholders that
	// keep the row loadable (unique columns stay unique and never match a
	// real secret) when secrets are not exported.
	redact func(row map[string]any)
	// secretRow drops one row unless secrets are exported: a row that is
	// nothing but a secret, or a digest one could be checked against.
	secretRow func(row map[string]any) bool
}

// dumpTables is every table an export carries. dumpSkipped is every table it
// leaves out, with why; a test fails when a migrated database has a table in
// neither list, so a new table is never silently lost in a move.
var dumpTables = []dumpTable{
	{name: "orgs"},
	{name: "teams"},
	{name: "users", redact: func(r map[string]any) { r["password_hash"] = "" }},
	{name: "user_groups"},
	{name: "tokens", redact: func(r map[string]any) {
		r["key_hash"] = redactedUnique(r)
		if r["prev_key_hash"] != nil {
			r["prev_key_hash"], r["prev_until"] = nil, nil
		}
	}},
	{name: "channels", redact: func(r map[string]any) {
		r["channel_key"] = ""
		redactChannelSettings(r)
	}},
	{name: "abilities"},
	{name: "model_prices"},
	{name: "model_price_versions"},
	{name: "quota_ledger"},
	{name: "usage_logs"},
	{name: "usage_log_contents"},
	{name: "billing_holds"},
	{name: "traffic_limits"},
	{name: "traffic_notices"},
	{name: "gateway_settings", redact: redactSettingSecret, secretRow: seedMark},
	{name: "user_totp", secretRows: true},
	{name: "user_recovery_codes", secretRows: true},
	{name: "user_identities"},
	{name: "redemptions", redact: func(r map[string]any) { r["code_hash"] = redactedUnique(r) }},
	{name: "audit_log"},
	{name: "plugin_versions"},
	{name: "plugin_state"},
	{name: "plugin_marketplace_sources"},
	{name: "plugin_audit"},
	{name: "tasks"},
	{name: "response_index"},
	{name: "files"},
	{name: "file_chunks"},
	{name: "batches"},
	{name: "batch_lines"},
	{name: "payment_orders"},
	{name: "payment_credits"},
	{name: "plans"},
	{name: "plan_grants"},
	{name: "plan_overflow"},
	{name: "plan_windows"},
	{name: "plan_draws"},
	{name: "plan_events"},
	{name: "mcp_servers", redact: func(r map[string]any) { r["headers"] = "{}" }},
	{name: "mcp_grants"},
	{name: "guardrails"},
}

var dumpSkipped = map[string]string{
	"schema_migrations":           "the target database is migrated by the binary that imports",
	"sessions":                    "console sign-ins end with a move, and their ids are secrets",
	"billing_nodes":               "leases of processes on the old database; without them any node releases their open holds",
	"channel_health":              "cool-downs and probes are learned again from traffic",
	"plugin_runtime":              "a change counter each migrated database starts itself",
	"usage_rollups":               "sums of the usage rows, rebuilt from them after an import (Rollups().Restart)",
	"usage_rollup_backfill":       "the rebuild's watermark, reset by the import",
	"usage_rollups_daily":         "the rollups summed per day, rebuilt with them",
	"usage_books_daily":           "the usage rows' books per day, rebuilt with the rollups",
	"usage_channel_rollups":       "the usage rows per channel key, rebuilt with the rollups",
	"usage_channel_rollups_daily": "the same per day, rebuilt with them",
	"usage_report_daily":          "the daily rollups summed per dimension, rebuilt with them",
	"ledger_rollups_daily":        "the ledger's entries per day, summed again by the import",
}

// redactedUnique stands in for a unique secret column: it keeps the
// column unique, and no key or code hashes to it.
func redactedUnique(r map[string]any) string {
	id, _ := r["id"].(int64)
	return "exported-without-secret:" + strconv.FormatInt(id, 10)
}

// redactSettingSecret drops the signing secret of the alert webhook from
// the notify setting, keeping the rest of it.
func redactSettingSecret(r map[string]any) {
	v, _ := r["value"].(string)
	var m map[string]any
	if json.Unmarshal([]byte(v), &m) != nil {
		return
	}
	if _, ok := m["secret"]; !ok {
		return
	}
	m["secret"] = ""
	if b, err := json.Marshal(m); err == nil {
		r["value"] = string(b)
	}
}

// channelSecretSettings are the members of a channel's settings that hold
// a credential of their own.
var channelSecretSettings = []string{"session_token"}

// redactChannelSettings blanks each value of settings.headers (often a
// second credential) and every other credential member, keeping the
// names so an operator sees what to enter again.
func redactChannelSettings(r map[string]any) {
	v, _ := r["settings"].(string)
	var m map[string]any
	if json.Unmarshal([]byte(v), &m) != nil || m == nil {
		return
	}
	if hs, ok := m["headers"].(map[string]any); ok {
		for name := range hs {
			hs[name] = ""
		}
	}
	for _, k := range channelSecretSettings {
		if _, ok := m[k]; ok {
			m[k] = ""
		}
	}
	if b, err := json.Marshal(m); err == nil {
		r["settings"] = string(b)
	}
}

// seedMark reports a setting that records which seed-file entry was last
// applied: a digest of the entry, which holds raw keys and passwords, so
// it could be checked offline against guesses of them. Without the marks
// the importing gateway applies its seed file once more, which restores
// the seeded keys that an export without secrets cannot carry.
func seedMark(r map[string]any) bool {
	name, _ := r["name"].(string)
	return strings.HasPrefix(name, "seed:") || strings.HasSuffix(name, ".seed")
}

// dumpHeader is the first line of an export.
type dumpHeader struct {
	Format      int    `json:"turnpike_export"`
	Dialect     string `json:"dialect"`
	Schema      int    `json:"schema_version"`
	CreatedAt   string `json:"created_at"`
	WithSecrets bool   `json:"with_secrets"`
}

// dumpLine is every other line: one row of one table.
type dumpLine struct {
	Table string         `json:"table"`
	Row   map[string]any `json:"row"`
}

// DumpCounts says how many rows of each table an export or import moved.
type DumpCounts map[string]int
