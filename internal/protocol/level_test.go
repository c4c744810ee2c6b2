package protocol_test

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// A budget refusal names its level (key, user, team, org) inside each
// dialect's error object, and a refusal without one adds nothing.
func TestEveryDialectCarriesTheRefusalLevelInItsErrorObject(t *testing.T) {
	codecs := []struct {
		name   string
		encode func(*ir.Error) []byte
	}{
		{"openai", openai.ChatCodec{}.EncodeError},
		{"messages", anthropic.Codec{}.EncodeError},
		{"alternate-native", gemini.Codec{}.EncodeError},
	}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			e := &ir.Error{Status: 429, Kind: ir.KindRateLimit, Code: "budget_exceeded", Level: "team", Message: "spent"}
			body := c.encode(e)
			if got := gjson.GetBytes(body, "error.level").String(); got != "team" {
				t.Fatalf("level %q in %s", got, body)
			}
			e.Level = ""
			if body := c.encode(e); gjson.GetBytes(body, "error.level").Exists() {
				t.Fatalf("a refusal without a level names one: %s", body)
			}
		})
	}
}
