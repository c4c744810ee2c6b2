package admin

import (
	"slices"

	"github.com/turnpike-gw/turnpike/internal/books"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// apiOp documents one route. Who may call a route this package registers
// is read from its registration (route); who is only set for the routes
// other packages serve under /api.
type apiOp struct {
	route   string // "METHOD /path", as registered on the mux
	summary string
	who     string
	query   []string // query parameters
	body    schema
	answer  schema
}

// Access levels of the document (x-turnpike-access): public, session (a
// console session of any user), user, admin, root.
const (
	accessPublic  = "public"
	accessSession = "session"
)

// ops is every route under /api (and /healthz, /metrics), plans and teams
// last. The test in internal/app walks the gateway's registered routes and
// fails when one is missing here.
func (d *docSchemas) ops() []apiOp {
	return slices.Concat(d.statusOps(), d.authOps(), d.userOps(), d.tokenOps(), d.channelOps(), d.modelOps(),
		d.guardrailOps(), d.logOps(), d.moneyOps(), d.reportOps(), d.mcpOps(), d.elsewhereOps(), d.pluginOps(),
		d.planOps(), d.teamOps())
}

// statusOps documents the status, health and metrics routes and the document itself.
func (d *docSchemas) statusOps() []apiOp {
	return []apiOp{
		{route: "GET /api/status", summary: "The gateway's version and how the console signs in and shows money",
			answer: object(schema{"status": str, "version": str, "quota_per_usd": integer, "registration": boolean, "oidc": boolean,
				"payments": nullable(object(schema{"provider": str, "currency": str, "min_usd": number, "max_usd": number}))})},
		{route: "GET /healthz", summary: "200 when the database answers, else 503", answer: object(schema{"status": str})},
		{route: "GET /metrics", summary: "Prometheus text format (admin only when metrics_public is false)",
			answer: schema{"type": "string", "contentMediaType": "text/plain"}},
		{route: "GET /api/openapi.json", summary: "This document", answer: schema{"type": "object"}},
	}
}

// authOps documents signing in, one's own account and two-factor sign-in.
func (d *docSchemas) authOps() []apiOp {
	return []apiOp{
		{route: "POST /api/auth/login", summary: "Sign in; sets the session cookie",
			body:   body(nil, []string{"username", "password", "code"}, schema{"username": str, "password": str, "code": str}, "username", "password"),
			answer: ref("User")},
		{route: "POST /api/auth/logout", summary: "End this session", answer: d.success},
		{route: "POST /api/auth/password", summary: "Change one's own password; ends the other sessions",
			body: body(nil, []string{"old", "new"}, schema{"old": str, "new": schema{"type": "string", "minLength": 8}}, "old", "new"), answer: d.success},
		{route: "GET /api/auth/me", summary: "The signed-in user", answer: ref("User")},
		{route: "POST /api/auth/register", summary: "Create an account (when registration is on) and sign in",
			body:   body(nil, []string{"username", "password"}, schema{"username": str, "password": schema{"type": "string", "minLength": 8}}, "username", "password"),
			answer: ref("User")},
		{route: "GET /api/auth/oidc/login", summary: "Redirect to the OpenID Connect provider", answer: schema{}},
		{route: "GET /api/auth/oidc/callback", summary: "The provider's redirect back; signs in and redirects to the console",
			query: []string{"code", "state"}, answer: schema{}},
		{route: "GET /api/auth/oidc/link", summary: "Redirect to the OpenID Connect provider (prompt=login) to link the signed-in account; the callback links it; 403 when another site started it",
			answer: schema{}},
		{route: "DELETE /api/auth/oidc/link", summary: "Unlink the signed-in account from the OpenID Connect provider; 409 when the link is its only way to sign in",
			answer: object(schema{"linked": boolean})},
		{route: "GET /api/auth/oidc/identity", summary: "Whether the signed-in account is linked to the OpenID Connect provider",
			answer: object(schema{"enabled": boolean, "linked": boolean, "linked_at": nullable(schema{"type": "string", "format": "date-time"})})},
		{route: "GET /api/auth/2fa", summary: "Whether two-factor sign-in is on", answer: ref("TOTPStatus")},
		{route: "POST /api/auth/2fa/setup", summary: "Start two-factor set-up: a new secret and its QR code", answer: ref("TOTPSetup")},
		{route: "POST /api/auth/2fa/enable", summary: "Turn two-factor sign-in on with a first code; answers the recovery codes once",
			body: d.codeBody, answer: object(schema{"enabled": boolean, "recovery_codes": strList})},
		{route: "POST /api/auth/2fa/disable", summary: "Turn two-factor sign-in off with a code", body: d.codeBody, answer: d.enabledOnly},
	}
}

// userOps documents the administration of users.
func (d *docSchemas) userOps() []apiOp {
	return []apiOp{
		{route: "GET /api/users", summary: "List users", query: paging, answer: listOf(ref("User"))},
		{route: "POST /api/users", summary: "Create a user",
			body:   body(d.user, append(append([]string{}, userFields...), userLimitFields...), schema{"password": schema{"type": "string", "minLength": 8}, "period": str, "mcp": d.mcpGrant}, "username", "password"),
			answer: ref("User")},
		{route: "GET /api/users/{id}", summary: "One user", answer: ref("User")},
		{route: "PATCH /api/users/{id}", summary: "Change a user",
			body:   body(d.user, append(append([]string{}, userFields...), userLimitFields...), schema{"password": schema{"type": "string", "minLength": 8}, "period": str, "mcp": d.mcpGrant}),
			answer: ref("User")},
		{route: "DELETE /api/users/{id}", summary: "Delete a user", answer: ref("Deleted")},
		{route: "POST /api/users/{id}/quota", summary: "Add (topup) or remove (adjust) quota; answers the new balance",
			body: body(nil, []string{"delta", "note"}, schema{"delta": integer, "note": str}, "delta"), answer: object(schema{"quota": integer})},
		{route: "DELETE /api/users/{id}/2fa", summary: "Turn a user's two-factor sign-in off", answer: d.enabledOnly},
	}
}

// tokenOps documents API keys.
func (d *docSchemas) tokenOps() []apiOp {
	return []apiOp{
		{route: "GET /api/tokens", summary: "List API keys (a user its own)", query: []string{"page", "page_size", "user_id"}, answer: listOf(ref("Token"))},
		{route: "POST /api/tokens", summary: "Create an API key; the answer holds the whole key, once",
			body:   body(d.token, append([]string{"name", "key", "quota", "models", "expires_at", "status", "user_id", "mcp", "response_cache", "log_content"}, tokenLimitFields...), d.limitExtra, "name"),
			answer: ref("Token")},
		{route: "GET /api/tokens/{id}", summary: "One API key (masked)", answer: ref("Token")},
		{route: "PATCH /api/tokens/{id}", summary: "Change an API key",
			body:   body(d.token, append([]string{"name", "quota", "models", "expires_at", "status", "mcp", "response_cache", "log_content"}, tokenLimitFields...), d.limitExtra),
			answer: ref("Token")},
		{route: "DELETE /api/tokens/{id}", summary: "Delete an API key", answer: ref("Deleted")},
		{route: "POST /api/tokens/{id}/rotate", summary: "A new secret for the key, answered once; the old one works for grace_seconds (at most 2592000, 30 days)",
			body: body(nil, []string{"grace_seconds"}, schema{"grace_seconds": schema{"type": "integer", "minimum": 0, "maximum": 2592000}}), answer: ref("Token")},
	}
}

// channelOps documents upstream channels.
func (d *docSchemas) channelOps() []apiOp {
	return []apiOp{
		{route: "GET /api/channels", summary: "List channels", query: paging, answer: listOf(ref("Channel"))},
		{route: "POST /api/channels", summary: "Create a channel",
			body: body(d.channel, channelFields, schema{"key": str}, "name", "type"), answer: ref("Channel")},
		{route: "GET /api/channels/{id}", summary: "One channel (keys masked)", answer: ref("Channel")},
		{route: "PATCH /api/channels/{id}", summary: "Change a channel",
			body: body(d.channel, patchFields, schema{"key": str, "key_states": schema{"type": "object"}}), answer: ref("Channel")},
		{route: "DELETE /api/channels/{id}", summary: "Delete a channel", answer: ref("Deleted")},
		{route: "POST /api/channels/{id}/test", summary: "Send one small request through the channel", query: []string{"model"}, answer: ref("ChannelTest")},
		{route: "GET /api/channels/{id}/upstream-models", summary: "The provider's model list for this channel", answer: object(schema{"models": strList})},
	}
}

// modelOps documents model prices, the price catalogue and pricing groups.
func (d *docSchemas) modelOps() []apiOp {
	return []apiOp{
		{route: "GET /api/models", summary: "List model prices", query: paging, answer: listOf(ref("ModelPrice"))},
		{route: "GET /api/models/{name...}", summary: "One model's price", answer: ref("ModelPrice")},
		{route: "GET /api/models/{name}/history", summary: "Every price version of a model, newest first (also for names with slashes: /api/models/a/b/history)",
			answer: listOf(ref("PriceVersion"))},
		{route: "PUT /api/models/{name...}", summary: "Set a model's price (USD per million tokens, per call, or free)",
			body: body(d.price, priceFields, schema{"tiers": schema{"type": "array", "items": anyObj}, "extra": anyObj, "fallbacks": strList,
				"response_cache": d.responseCache}), answer: ref("ModelPrice")},
		{route: "DELETE /api/models/{name...}", summary: "Delete a model's price", answer: ref("NamedDeleted")},
		{route: "GET /api/models/catalogue", summary: "The gateway's prices as a catalogue (its own export shape)", answer: ref("Catalogue")},
		{route: "POST /api/models/catalogue/preview", summary: "The difference between a price catalogue (url or inline) and the gateway's prices",
			body: d.catalogueBody, answer: ref("CatalogueDiff")},
		{route: "POST /api/models/catalogue/apply", summary: "Apply a catalogue's changes as new price versions (suspicious ones only when accepted)",
			body: d.catalogueBody, answer: ref("CatalogueApplied")},
		{route: "GET /api/groups", summary: "List pricing groups", answer: listOf(ref("Group"))},
		{route: "GET /api/groups/{name}", summary: "One pricing group", answer: ref("Group")},
		{route: "PUT /api/groups/{name}", summary: "Create or change a pricing group",
			body: body(d.group, append([]string{"name", "ratio", "log_content"}, rateFields...), schema{"log_content": d.logContent}), answer: ref("Group")},
		{route: "DELETE /api/groups/{name}", summary: "Delete a group; 409 group_in_use names what still uses it", answer: ref("NamedDeleted")},
	}
}

// guardrailOps documents guardrails (CONTRACT §21).
func (d *docSchemas) guardrailOps() []apiOp {
	return []apiOp{
		{route: "GET /api/guardrails", summary: "List guardrails, in the order they run", query: paging, answer: listOf(d.guardrail)},
		{route: "POST /api/guardrails", summary: "Create a guardrail (pii, secrets, regex, max_input_tokens or plugin); 400 lists every problem",
			body: body(d.guardrail, guardrailFields, nil, "name", "type"), answer: d.guardrail},
		{route: "GET /api/guardrails/{id}", summary: "One guardrail, by id or name", answer: d.guardrail},
		{route: "PATCH /api/guardrails/{id}", summary: "Change a guardrail (members sent replace the stored ones)",
			body: body(d.guardrail, guardrailFields, nil), answer: d.guardrail},
		{route: "DELETE /api/guardrails/{id}", summary: "Delete a guardrail", answer: object(schema{"id": integer, "deleted": boolean})},
		{route: "POST /api/guardrails/dry-run", summary: "Check a sample text with one definition (guardrail), one stored guardrail (name) or every stored one; nothing is stored or sent upstream",
			body: body(nil, []string{"text", "stage", "model", "group", "guardrail", "name"}, schema{"text": str,
				"stage": schema{"type": "string", "enum": []string{"request", "response"}}, "model": str, "group": str,
				"guardrail": body(d.guardrail, guardrailFields, nil), "name": str}, "text"),
			answer: schemaOf[dryRunResult]()},
	}
}

// logOps documents the usage log, the ledger, the cache report and alert settings.
func (d *docSchemas) logOps() []apiOp {
	return []apiOp{
		{route: "GET /api/logs", summary: "Usage log, newest first (a user its own); deep pages by cursor (the previous page's next_cursor); total exact up to 10000 matches (total_exact)",
			query: []string{"page", "page_size", "cursor", "type", "model", "user_id", "token_id", "channel_id", "team_id", "org_id"}, answer: object(schema{
				"items": schema{"type": "array", "items": ref("UsageLog")}, "total": integer, "total_exact": boolean, "next_cursor": integer})},
		{route: "GET /api/logs/export", summary: "The window's usage rows oldest first, streamed as CSV or JSON lines (a user its own)",
			query:  []string{"since", "until", "format", "type", "model", "user_id", "token_id", "channel_id", "team_id", "org_id"},
			answer: schema{"type": "string", "contentMediaType": "application/x-ndjson"}},
		{route: "GET /api/logs/{id}", summary: "One usage row", answer: ref("UsageLog")},
		{route: "GET /api/logs/{id}/content", summary: "The row's kept request and answer (content logging), secrets redacted; its owner and administrators only, 404 when none was kept",
			answer: object(schema{"id": integer, "request": str, "answer": str, "request_truncated": boolean, "answer_truncated": boolean})},
		{route: "GET /api/ledger", summary: "The quota ledger", query: []string{"page", "page_size", "user_id"}, answer: listOf(ref("LedgerEntry"))},
		{route: "GET /api/reports/cache", summary: "Share of prompt tokens read from the providers' caches, by channel, key or model",
			query: []string{"since", "until", "group_by"}, answer: object(schema{
				"items": schema{"type": "array", "items": schemaOf[books.CacheItem]()}, "group_by": str,
				"since": schema{"type": "string", "format": "date-time"}, "until": schema{"type": "string", "format": "date-time"}})},
		{route: "GET /api/settings/notify", summary: "Where alerts go (the secret masked)", answer: ref("Notify")},
		{route: "PUT /api/settings/notify", summary: "Change where alerts go",
			body: body(d.notify, []string{"webhook_url", "secret", "thresholds"}, nil), answer: ref("Notify")},
	}
}

// moneyOps documents redemption codes, card top-ups and the audit log.
func (d *docSchemas) moneyOps() []apiOp {
	return []apiOp{
		{route: "POST /api/redemptions", summary: "Create redemption codes; answers them once",
			body:   body(nil, []string{"quota", "count", "expires_at", "name"}, schema{"quota": integer, "count": integer, "expires_at": schema{"type": []string{"string", "null"}, "format": "date-time"}, "name": str}, "quota"),
			answer: object(schema{"codes": strList})},
		{route: "GET /api/redemptions", summary: "List redemption codes (masked)", query: paging, answer: listOf(ref("Redemption"))},
		{route: "POST /api/user/redeem", summary: "Redeem a code into one's own balance", body: d.codeBody,
			answer: object(schema{"quota": integer, "balance": integer})},
		{route: "POST /api/user/topup", summary: "Buy credit by card: a pending order and its Stripe Checkout Session",
			body:   body(nil, []string{"amount_usd"}, schema{"amount_usd": number}, "amount_usd"),
			answer: object(schema{"id": str, "checkout_url": str})},
		{route: "GET /api/user/topups", summary: "One's own card top-up orders, newest first", query: paging, answer: listOf(ref("PaymentOrder"))},
		{route: "GET /api/payments", summary: "Every card top-up order, newest first", query: []string{"page", "page_size", "user_id"},
			answer: listOf(ref("PaymentOrder"))},
		{route: "POST /api/payments/stripe/webhook", summary: "Stripe's events, verified by Stripe-Signature; a paid checkout credits its order once",
			body: anyObj, answer: object(schema{"received": boolean, "handled": boolean})},
		{route: "GET /api/audit", summary: "The audit log of administrative changes",
			query: []string{"page", "page_size", "user_id", "user", "method", "path", "since", "until"}, answer: listOf(ref("AuditEntry"))},
	}
}

// reportOps documents the margin, usage and reconciliation reports.
func (d *docSchemas) reportOps() []apiOp {
	return []apiOp{
		{route: "GET /api/reports/margin", summary: "Charged against upstream cost over a window, by channel, model, user or token (an administrator's lines by user or token: itself and the users below it)",
			query: []string{"since", "until", "group_by"}, answer: object(schema{"items": schema{"type": "array", "items": ref("MarginItem")}, "group_by": str, "since": str, "until": str})},
		{route: "GET /api/reports/usage", summary: "Usage per user, key, model, channel or team and per hour or day, from the rollups, with cache_hit_ratio (a plain user: its own usage, without upstream_cost_usd)",
			query: []string{"since", "until", "group_by", "granularity"}, answer: object(schema{
				"items": schema{"type": "array", "items": schemaOf[books.UsageItem]()}, "group_by": str, "granularity": str, "since": str, "until": str})},
		{route: "GET /api/reports/reconcile", summary: "Proves, per user and key over a window, ledger = usage rows and balance change = net spend",
			query: []string{"since", "until"}, answer: ref("Reconcile")},
		{route: "POST /api/reports/reconcile/provider", summary: "Compares a channel's rows with the provider's usage export (text/csv: date,model,requests,input_tokens,output_tokens,cost_usd)",
			query: []string{"channel_id"}, body: schema{"type": "string", "contentMediaType": "text/csv"}, answer: ref("ProviderCSV")},
	}
}

// mcpOps documents the registered MCP servers.
func (d *docSchemas) mcpOps() []apiOp {
	return []apiOp{
		{route: "GET /api/mcp/servers", summary: "List the registered MCP servers (headers masked)", query: paging, answer: listOf(ref("MCPServer"))},
		{route: "POST /api/mcp/servers", summary: "Register a Streamable HTTP MCP server: headers write-only, tools null for every tool",
			body: d.mcpServerBody, answer: ref("MCPServer")},
		{route: "GET /api/mcp/servers/{id}", summary: "One MCP server (headers masked)", answer: ref("MCPServer")},
		{route: "PATCH /api/mcp/servers/{id}", summary: "Change an MCP server; headers left out or sent back masked are kept",
			body: d.mcpServerBody, answer: ref("MCPServer")},
		{route: "DELETE /api/mcp/servers/{id}", summary: "Remove an MCP server", answer: ref("Deleted")},
	}
}

// elsewhereOps documents routes other packages (relay, batch, task) serve under
// /api, hence their who.
func (d *docSchemas) elsewhereOps() []apiOp {
	return []apiOp{
		{route: "POST /api/pricing/estimate", who: store.RoleUser,
			summary: "What a chat body (openai, messages or gemini format) would reserve and the range it could be charged, at the caller's group ratio",
			body:    body(nil, []string{"model", "format", "body"}, schema{"model": str, "format": schema{"type": "string", "enum": []string{"openai", "messages", "gemini"}}, "body": anyObj}, "body"),
			answer: object(schema{"model": str, "price_version": integer, "input_tokens": integer, "max_output_tokens": integer,
				"hold_quota": integer, "min_quota": integer, "max_quota": integer, "min_usd": schema{"type": "number"}, "max_usd": schema{"type": "number"}})},
		{route: "GET /api/files", who: store.RoleUser, summary: "The signed-in user's uploaded files (as /v1/files answers them)",
			answer: listOf(anyObj)},
		{route: "GET /api/batches", who: store.RoleUser, summary: "The signed-in user's batches, both forms, with their state and what they hold or cost",
			answer: listOf(anyObj)},
		{route: "GET /api/tasks", who: store.RoleUser, summary: "Tasks (SPEC.md §3); a user its own", query: paging, answer: listOf(anyObj)},
	}
}

// pluginOps documents task plugins and their marketplace, which the plugin
// package serves to root only.
func (d *docSchemas) pluginOps() []apiOp {
	return []apiOp{
		{route: "POST /api/plugin/task", who: store.RoleRoot, summary: "Upload a task plugin (multipart file or JSON source)", body: anyObj, answer: anyObj},
		{route: "GET /api/plugin/task", who: store.RoleRoot, summary: "List task plugins", answer: anyObj},
		{route: "POST /api/plugin/task/dry-run", who: store.RoleRoot, summary: "Run a plugin's hooks on a sample without installing it", body: anyObj, answer: anyObj},
		{route: "GET /api/plugin/task/runtime/status", who: store.RoleRoot, summary: "The plugin runtime: generation, pool, hook timings", answer: anyObj},
		{route: "GET /api/plugin/task/marketplace", who: store.RoleRoot, summary: "The marketplace catalogue", answer: anyObj},
		{route: "GET /api/plugin/task/marketplace/sources", who: store.RoleRoot, summary: "Marketplace sources", answer: anyObj},
		{route: "POST /api/plugin/task/marketplace/sources", who: store.RoleRoot, summary: "Add a marketplace source",
			body: object(schema{"url": str}), answer: anyObj},
		{route: "DELETE /api/plugin/task/marketplace/sources", who: store.RoleRoot, summary: "Remove a marketplace source", query: []string{"url"}, answer: anyObj},
		{route: "POST /api/plugin/task/marketplace/install", who: store.RoleRoot, summary: "Install a plugin from the marketplace",
			body: object(schema{"source": str, "key": str, "version": str, "activate": boolean, "enabled": boolean, "force": boolean}), answer: anyObj},
		{route: "GET /api/plugin/task/{key}", who: store.RoleRoot, summary: "One plugin with its versions", answer: anyObj},
		{route: "GET /api/plugin/task/{key}/source", who: store.RoleRoot, summary: "A plugin version's source", query: []string{"version"},
			answer: schema{"type": "string", "contentMediaType": "text/javascript"}},
		{route: "POST /api/plugin/task/{key}/activate", who: store.RoleRoot, summary: "Make a version the active one", body: object(schema{"version": str, "force": boolean}), answer: anyObj},
		{route: "POST /api/plugin/task/{key}/status", who: store.RoleRoot, summary: "Enable or disable a plugin", body: object(schema{"enabled": boolean, "force": boolean}), answer: anyObj},
		{route: "DELETE /api/plugin/task/{key}", who: store.RoleRoot, summary: "Delete a plugin", answer: anyObj},
		{route: "DELETE /api/plugin/task/{key}/versions/{version}", who: store.RoleRoot, summary: "Delete one version of a plugin", answer: anyObj},
	}
}
