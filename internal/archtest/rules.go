package archtest

// Rules is docs/ARCHITECTURE.md's dependency map. Tests are held to the
// importer rules too, with one stated exception: any package's tests may
// open a real SQL store (sqlstore), because the store conformance suites and
// the handler tests run against SQLite rather than against fakes.
var Rules = append(append(internalRules, layerRules...), thirdPartyRules...)

// layerRules are the middle layers' order, each layer importing only what
// lies below it: codecs ← adapters (upstream) ← routing ← admission ←
// the surfaces (relay, task, batch, wired only by app) ← app. Beside them,
// providers is the catalog that picks an adapter per channel type (routing
// never sees it: the adapters pull in their SDKs), and the stores of money,
// limits and keys (billing, ratelimit, auth) sit below admission.
var layerRules = []Rule{
	{Name: "adapters build on the codecs only", Subject: "internal/upstream/...",
		MayImport: []string{"internal/ir", "internal/protocol/...", "internal/upstream/..."}},
	{Name: "providers is the catalog of adapters", Subject: "internal/providers", MayImport: []string{"internal/upstream/..."}},
	{Name: "routing plans over the adapter seam, not the adapters", Subject: "internal/routing",
		MayImport: []string{"internal/ir", "internal/store", "internal/upstream"}},
	// guardrail (store and tokenize only) sits below admission: the usage
	// row records what the guardrails did.
	{Name: "admission builds on routing, billing and limits", Subject: "internal/admission",
		MayImport: []string{"internal/ir", "internal/store", "internal/auth", "internal/billing", "internal/ratelimit", "internal/routing", "internal/guardrail", "internal/plans"}},
	{Name: "plans sit below admission", Subject: "internal/plans", MayImport: []string{"internal/store"}},
	{Name: "billing sits below admission", Subject: "internal/billing", MayImport: []string{"internal/ir", "internal/store"}},
	{Name: "ratelimit sits below admission", Subject: "internal/ratelimit", MayImport: []string{"internal/ir", "internal/store"}},
	{Name: "auth sits below admission", Subject: "internal/auth", MayImport: []string{"internal/config", "internal/ir", "internal/store"}},
	{Name: "the store is below everything", Subject: "internal/store", MayImport: []string{}},
	{Name: "only the commands and the test kits start the app", Subject: "internal/app",
		ImportedOnlyBy: []string{"cmd/...", "internal/cli", "internal/loadtest", "internal/testkit"}},
}

// sqlDrivers are the database drivers sqlstore registers.
var sqlDrivers = []string{"github.com/jackc/pgx/v5/...", "github.com/go-sql-driver/mysql/...", "modernc.org/sqlite/..."}

// redisOwners are the packages whose state lives in Redis when several
// nodes share it: the live balances and their journal (billing), the
// traffic counters (ratelimit), cache-affinity pins (routing), the sign-in
// throttle (auth), and kv, which opens the connection and carries the
// change announcements between nodes, and the shared response cache
// (respcache), and the plan windows (plans).
var redisOwners = []string{"internal/billing", "internal/ratelimit", "internal/routing", "internal/auth", "internal/kv",
	"internal/respcache", "internal/plans"}

// thirdPartyRules say which package owns each heavy or stateful outside
// dependency, so that a second SQL path, a second Redis client or the AWS
// SDK pulled into a package that only needs an interface fails here. Tests
// are held to them too: a test that needs raw SQL gets it from
// store/testdb.
var thirdPartyRules = append([]Rule{
	{Name: "only the store speaks SQL", Subject: "database/sql/...", ImportedOnlyBy: []string{"internal/store/..."}},
	{Name: "go-redis only where Redis state lives", Subject: "github.com/redis/go-redis/...", ImportedOnlyBy: redisOwners},
	{Name: "stripe only in payments", Subject: "github.com/stripe/...", ImportedOnlyBy: []string{"internal/payments"}},
	{Name: "the AWS SDK only where Bedrock and S3 live", Subject: "github.com/aws/...",
		// archive/s3bucket: the usage archive and content logs (CONTRACT §20)
		// keep objects in an S3-compatible bucket; the archive job reaches
		// it through its own small interface.
		ImportedOnlyBy: []string{"internal/upstream/bedrock/...", "internal/batch/s3blobs", "internal/archive/s3bucket"}},
	{Name: "sobek only in jsrt", Subject: "github.com/grafana/sobek/...", ImportedOnlyBy: []string{"internal/plugin/jsrt"}},
}, owned("only the store loads SQL drivers", sqlDrivers, "internal/store/...")...)

// owned is one rule per subject, all under one name.
func owned(name string, subjects []string, owners ...string) []Rule {
	var out []Rule
	for _, s := range subjects {
		out = append(out, Rule{Name: name, Subject: s, ImportedOnlyBy: owners})
	}
	return out
}

var internalRules = []Rule{
	{Name: "codecs translate between ir and a wire format only", Subject: "internal/protocol/...",
		MayImport: []string{"internal/ir", "internal/protocol", "internal/protocol/sse"}},
	{Name: "ir is a leaf", Subject: "internal/ir", MayImport: []string{}},
	{Name: "config is a leaf", Subject: "internal/config", MayImport: []string{}},
	{Name: "obs is a leaf", Subject: "internal/obs", MayImport: []string{}},
	{Name: "apijson is a leaf", Subject: "internal/apijson", MayImport: []string{}},
	{Name: "guardfetch is a leaf", Subject: "internal/guardfetch", MayImport: []string{}},
	{Name: "clientaddr is a leaf", Subject: "internal/clientaddr", MayImport: []string{}},
	{Name: "only app wires the relay", Subject: "internal/relay/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only app wires the admin API", Subject: "internal/admin/...", ImportedOnlyBy: []string{"internal/app", "internal/cli"}},
	{Name: "only app wires the task service", Subject: "internal/task/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "the task core never imports its HTTP surface", Subject: "internal/task/taskhttp", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "the task test kit serves tests only", Subject: "internal/task/tasktest", ImportedOnlyBy: []string{}, TestsMayImport: true},
	{Name: "only app wires files and batches", Subject: "internal/batch/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only app and the command line know which store", Subject: "internal/store/sqlstore",
		ImportedOnlyBy: []string{"internal/app", "internal/cli", "internal/store/storetest", "internal/store/sqlitetest", "internal/task/tasktest"}, TestsMayImport: true},
	{Name: "only app wires the MCP gateway", Subject: "internal/mcpgw", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only plugin runs JavaScript", Subject: "internal/plugin/jsrt", ImportedOnlyBy: []string{"internal/plugin"}},
	{Name: "the binary only hands its arguments to the command line", Subject: "cmd/turnpike", MayImport: []string{"internal/cli"}},
	{Name: "the test databases serve tests only", Subject: "internal/store/testdb", ImportedOnlyBy: []string{}, TestsMayImport: true},
	{Name: "the migrated SQLite copies serve tests only", Subject: "internal/store/sqlitetest", ImportedOnlyBy: []string{}, TestsMayImport: true},
	{Name: "the S3 fake serves tests only", Subject: "internal/archive/s3fake", ImportedOnlyBy: []string{}, TestsMayImport: true},
}
