package gemini

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var _ protocol.ModelCatalog = Codec{}

// ListModels answers GET /v1beta/models with working pagination: pageSize
// (default 50, at most 1000) and the opaque pageToken of the page before.
// The last page carries an empty token, except for the official Google
// clients, which get it without one (see EncodeLastModelPage).
func (Codec) ListModels(ids []string, _ protocol.ModelAbout, q url.Values, h http.Header) ([]byte, error) {
	size := 50
	if s := q.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, ir.BadRequest("invalid_page_size", "pageSize must be a non-negative integer")
		}
		if n > 0 {
			size = min(n, 1000)
		}
	}
	if tok, asked := q["pageToken"]; asked && len(tok) == 1 && tok[0] == "" {
		// A client that followed the last page's empty token is past the
		// end: an empty last page stops it instead of starting over.
		return EncodeLastModelPage(nil), nil
	}
	offset := 0
	if tok := q.Get("pageToken"); tok != "" {
		n, err := DecodePageToken(tok)
		if err != nil {
			return nil, ir.BadRequest("invalid_page_token", "pageToken is not valid")
		}
		offset = n
	}
	offset = min(offset, len(ids))
	end := min(offset+size, len(ids))
	infos := make([]ModelInfo, 0, end-offset)
	for _, id := range ids[offset:end] {
		infos = append(infos, ModelInfo{ID: id})
	}
	next := ""
	if end < len(ids) {
		next = EncodePageToken(end)
	}
	if next == "" && FromGoogleClient(h) {
		// The official clients page on until the token is absent, as
		// Google's API leaves it out; everyone else gets SPEC's empty token.
		return EncodeLastModelPage(infos), nil
	}
	return EncodeModelList(infos, next), nil
}

// DescribeModel renders GET /v1beta/models/{model}.
func (Codec) DescribeModel(id string, _ protocol.ModelAbout) []byte {
	return EncodeModel(ModelInfo{ID: id})
}

// ModelID strips the "models/" resource prefix.
func (Codec) ModelID(name string) string { return StripModelPrefix(name) }

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
