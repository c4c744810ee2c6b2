package archtest

// Rules is docs/ARCHITECTURE.md's dependency map. Tests are held to the
// importer rules too, with one stated exception: any package's tests may
// open a real SQL store (sqlstore), because the store conformance suites and
// the handler tests run against SQLite rather than against fakes.
var Rules = []Rule{
	{Name: "codecs translate between ir and a wire format only", Subject: "internal/protocol/...",
		MayImport: []string{"internal/ir", "internal/protocol", "internal/protocol/sse"}},
	{Name: "ir is a leaf", Subject: "internal/ir", MayImport: []string{}},
	{Name: "config is a leaf", Subject: "internal/config", MayImport: []string{}},
	{Name: "obs is a leaf", Subject: "internal/obs", MayImport: []string{}},
	{Name: "apijson is a leaf", Subject: "internal/apijson", MayImport: []string{}},
	{Name: "guardfetch is a leaf", Subject: "internal/guardfetch", MayImport: []string{}},
	{Name: "clientaddr is a leaf", Subject: "internal/clientaddr", MayImport: []string{}},
	{Name: "only app wires the relay", Subject: "internal/relay/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only app wires the admin API", Subject: "internal/admin/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only app wires the task service", Subject: "internal/task/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "the task core never imports its HTTP surface", Subject: "internal/task/taskhttp", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "the task test kit serves tests only", Subject: "internal/task/tasktest", ImportedOnlyBy: []string{}, TestsMayImport: true},
	{Name: "only app wires files and batches", Subject: "internal/batch/...", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only app knows which store", Subject: "internal/store/sqlstore",
		ImportedOnlyBy: []string{"internal/app", "internal/store/storetest", "internal/task/tasktest"}, TestsMayImport: true},
	{Name: "only app wires the MCP gateway", Subject: "internal/mcpgw", ImportedOnlyBy: []string{"internal/app"}},
	{Name: "only plugin runs JavaScript", Subject: "internal/plugin/jsrt", ImportedOnlyBy: []string{"internal/plugin"}},
}
