package admin

import (
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/books"
)

// The reports write dollars as json.Number: a string type in Go that
// encoding/json writes as a number, as the document must say.
func TestTheReportsDollarsAreDescribedAsNumbers(t *testing.T) {
	margin, _ := json.Marshal(schemaOf[books.MarginItem]()["properties"].(schema)["charged_usd"])
	if string(margin) != `{"type":"number"}` {
		t.Fatalf("charged_usd schema = %s, want a number", margin)
	}
	usage, _ := json.Marshal(schemaOf[books.Usage]()["properties"].(schema)["cost_usd"])
	if string(usage) != `{"type":["number","null"]}` {
		t.Fatalf("cost_usd schema = %s, want a number or null", usage)
	}
}
