package gemini

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// ModelInfo is one entry of the alternate-native model list.
type ModelInfo struct {
	ID               string
	Version          string
	DisplayName      string
	Description      string
	InputTokenLimit  int
	OutputTokenLimit int
	// SupportedGenerationMethods defaults to generateContent and countTokens,
	// which SDKs filter on to find chat models.
	SupportedGenerationMethods []string
}

type modelWire struct {
	Name                       string   `json:"name"`
	Version                    string   `json:"version,omitempty"`
	DisplayName                string   `json:"displayName"`
	Description                string   `json:"description,omitempty"`
	InputTokenLimit            int      `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit           int      `json:"outputTokenLimit,omitempty"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

func (m ModelInfo) wire() modelWire {
	id := StripModelPrefix(m.ID)
	w := modelWire{Name: "models/" + id, Version: m.Version, DisplayName: m.DisplayName,
		Description: m.Description, InputTokenLimit: m.InputTokenLimit,
		OutputTokenLimit: m.OutputTokenLimit, SupportedGenerationMethods: m.SupportedGenerationMethods}
	if w.DisplayName == "" {
		w.DisplayName = id
	}
	if w.SupportedGenerationMethods == nil {
		w.SupportedGenerationMethods = []string{"generateContent", "countTokens"}
	}
	return w
}

// EncodeModelList renders {"models":[...],"nextPageToken":"..."}. The token
// is always present and empty on the last page, as SPEC.md names both
// fields of this answer; clients stop paging on an empty token.
func EncodeModelList(models []ModelInfo, nextPageToken string) []byte {
	out := struct {
		Models        []modelWire `json:"models"`
		NextPageToken string      `json:"nextPageToken"`
	}{Models: make([]modelWire, len(models)), NextPageToken: nextPageToken}
	for i, m := range models {
		out.Models[i] = m.wire()
	}
	b, _ := json.Marshal(out)
	return b
}

// EncodeLastModelPage renders a last page the way Google's own API does,
// without nextPageToken: the official Google Gen AI clients follow any token
// that is present, the empty one included, and would page forever.
func EncodeLastModelPage(models []ModelInfo) []byte {
	out := struct {
		Models []modelWire `json:"models"`
	}{Models: make([]modelWire, len(models))}
	for i, m := range models {
		out.Models[i] = m.wire()
	}
	b, _ := json.Marshal(out)
	return b
}

// FromGoogleClient reports whether a request comes from an official Google
// Gen AI SDK, which labels itself in x-goog-api-client and User-Agent.
func FromGoogleClient(h http.Header) bool {
	const label = "google-genai-sdk/"
	return strings.Contains(h.Get("x-goog-api-client"), label) || strings.Contains(h.Get("User-Agent"), label)
}

// EncodeModel renders one model, for GET /v1beta/models/{model}.
func EncodeModel(m ModelInfo) []byte {
	b, _ := json.Marshal(m.wire())
	return b
}

const pageTokenTag = "o:"

// maxPageOffset keeps a decoded offset far from overflow in the caller's
// arithmetic.
const maxPageOffset = 1 << 30

// EncodePageToken makes an opaque token for the list position offset.
func EncodePageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenTag + strconv.Itoa(offset)))
}

// DecodePageToken reads a token from EncodePageToken; empty means the first
// page. Anything else is a 400 naming pageToken.
func DecodePageToken(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, badPageToken()
	}
	digits, ok := strings.CutPrefix(string(raw), pageTokenTag)
	if !ok {
		return 0, badPageToken()
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || n > maxPageOffset {
		return 0, badPageToken()
	}
	return n, nil
}

func badPageToken() *ir.Error {
	return badField("pageToken", "is not a valid page token")
}
