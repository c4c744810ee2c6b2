package admin

import (
	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/books"
	"github.com/turnpike-gw/turnpike/internal/catalogue"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// docSchemas are the schemas that several operations, or an operation and
// the components, share. They are made when a document is asked for and
// dropped with it, not at package initialisation: a gateway serving calls
// never reads them, and as package variables they held about half a
// megabyte for the life of the process.
type docSchemas struct {
	user, token, channel, group, price, notify schema
	// mcpServer shows headers masked; they are write-only.
	mcpServer schema
	// guardrail is a guardrail as stored and answered (CONTRACT §21).
	guardrail schema

	codeBody, success, enabledOnly, catalogueBody schema
	// logContent is a key's or group's log_content (CONTRACT §20); null
	// leaves a key to its group and turns a group's off.
	logContent schema
	// responseCache is a key's or model's response_cache (CONTRACT §22);
	// null turns it off.
	responseCache schema
	// mcpGrant is the mcp member of a key or user: servers by name ("*"
	// for all) or id, and optionally tools; null removes the grant.
	mcpGrant                  schema
	limitExtra, mcpServerBody schema
}

func newDocSchemas() *docSchemas {
	d := &docSchemas{
		user:        schemaOf[userView](),
		token:       schemaOf[tokenView](),
		channel:     schemaOf[channelView](),
		group:       schemaOf[groupView](),
		price:       schemaOf[store.ModelPrice](),
		notify:      schemaOf[notifyView](),
		mcpServer:   schemaOf[mcpServerView](),
		guardrail:   schemaOf[guardrail.Spec](),
		codeBody:    body(nil, []string{"code"}, schema{"code": str}, "code"),
		success:     object(schema{"success": boolean}),
		enabledOnly: object(schema{"enabled": boolean}),
		catalogueBody: body(nil, []string{"url", "catalogue", "models", "max_change_ratio", "accept_suspicious"},
			schema{"url": str, "catalogue": anyObj, "models": strList, "max_change_ratio": schema{"type": "number"}, "accept_suspicious": boolean}),
		logContent:    nullable(object(schema{"enabled": boolean, "max_kb": integer})),
		responseCache: nullable(object(schema{"ttl_seconds": integer, "hit_ratio": number, "max_entry_kb": integer})),
		mcpGrant: nullable(object(schema{"servers": schema{"type": "array", "items": schema{"type": []string{"string", "integer"}}},
			"tools": strList})),
	}
	d.limitExtra = schema{"model_limits": schema{"type": "object"}, "period": str, "mcp": d.mcpGrant, "response_cache": d.responseCache,
		"log_content": d.logContent}
	d.mcpServerBody = body(d.mcpServer, mcpFields, schema{"headers": schema{"type": []string{"object", "null"},
		"additionalProperties": str}, "tools": schema{"type": []string{"array", "null"}, "items": str}})
	return d
}

// components are the named schemas the operations refer to.
func (d *docSchemas) components() map[string]schema {
	return map[string]schema{
		"Error": {"type": "object", "required": []string{"error"}, "properties": schema{
			"error": schema{"type": "object", "required": []string{"code", "message"}, "properties": schema{"code": str, "message": str}}}},
		"User":             d.user,
		"Token":            d.token,
		"Channel":          d.channel,
		"ChannelTest":      schemaOf[testResult](),
		"Group":            d.group,
		"ModelPrice":       d.price,
		"PriceVersion":     schemaOf[store.PriceVersion](),
		"UsageLog":         schemaOf[store.UsageLog](),
		"LedgerEntry":      schemaOf[store.LedgerEntry](),
		"Notify":           d.notify,
		"Deleted":          schemaOf[deleted](),
		"TOTPStatus":       schemaOf[accounts.TOTPStatus](),
		"TOTPSetup":        schemaOf[accounts.TOTPSetup](),
		"Redemption":       schemaOf[accounts.Redemption](),
		"AuditEntry":       schemaOf[accounts.AuditEntry](),
		"PaymentOrder":     schemaOf[orderView](),
		"GroupInUse":       schemaOf[store.GroupUse](),
		"NamedDeleted":     object(schema{"name": str, "deleted": boolean}),
		"MarginItem":       schemaOf[books.MarginItem](),
		"Catalogue":        schemaOf[catalogue.Export](),
		"CatalogueDiff":    schemaOf[catalogue.Diff](),
		"CatalogueApplied": schemaOf[catalogueApplied](),
		"Reconcile":        schemaOf[books.Report](),
		"ProviderCSV":      schemaOf[books.ProviderReport](),
		"MCPServer":        d.mcpServer,
	}
}
