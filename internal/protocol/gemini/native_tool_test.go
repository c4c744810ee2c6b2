package gemini

import (
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestEncodeRequestRefusesAnotherProvidersServerTool(t *testing.T) {
	req := &ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}}}},
		Tools: []ir.Tool{{Name: "web_search", Native: json.RawMessage(`{"type":"web_search_20250305","name":"web_search"}`)}}}
	_, err := Generate.EncodeRequest(req)
	e := ir.As(err)
	if err == nil || e.Status != 400 || e.Param != "tools[0]" {
		t.Fatalf("err = %v", err)
	}
}

func TestEncodeRequestRefusesSeveralAnswers(t *testing.T) {
	two := 2
	req := &ir.Request{Model: "m", N: &two, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}}}}}
	_, err := Generate.EncodeRequest(req)
	if e := ir.As(err); err == nil || e.Status != 400 || e.Param != "n" {
		t.Fatalf("err = %v", err)
	}
}
