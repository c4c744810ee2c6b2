package anthropic

import (
	"net/http"
	"net/url"
	"time"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var _ protocol.ModelCatalog = Codec{}

// ListModels renders GET /v1/models as one complete page.
func (Codec) ListModels(ids []string, about protocol.ModelAbout, _ url.Values, _ http.Header) ([]byte, error) {
	return EncodeModelList(ids, about.Created), nil
}

// DescribeModel renders GET /v1/models/{model}: the list entry itself.
func (Codec) DescribeModel(id string, about protocol.ModelAbout) []byte {
	return EncodeModel(id, about.Created)
}

// ModelID is the name itself: messages clients name models by their id.
func (Codec) ModelID(name string) string { return name }

type wireModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

type wireModelList struct {
	Data    []wireModel `json:"data"`
	HasMore bool        `json:"has_more"`
	FirstID *string     `json:"first_id"`
	LastID  *string     `json:"last_id"`
}

// EncodeModelList renders GET /v1/models in the messages-native list shape,
// as one complete page. The gateway knows no display names, so the id serves
// as one; created is reported as every model's created_at (RFC 3339).
func EncodeModelList(ids []string, created time.Time) []byte {
	out := wireModelList{Data: make([]wireModel, 0, len(ids))}
	at := created.UTC().Format(time.RFC3339)
	for _, id := range ids {
		out.Data = append(out.Data, entry(id, at))
	}
	if n := len(ids); n > 0 {
		out.FirstID, out.LastID = &ids[0], &ids[n-1]
	}
	b, err := marshal(out)
	if err != nil { // only strings and bools; cannot fail
		return []byte(`{"data":[],"has_more":false,"first_id":null,"last_id":null}`)
	}
	return b
}

// EncodeModel renders one model as its list entry, for GET /v1/models/{model}.
func EncodeModel(id string, created time.Time) []byte {
	b, err := marshal(entry(id, created.UTC().Format(time.RFC3339)))
	if err != nil { // only strings; cannot fail
		return []byte(`{}`)
	}
	return b
}

// entry is one model of the list; the id serves as its display name.
func entry(id, createdAt string) wireModel {
	return wireModel{Type: "model", ID: id, DisplayName: id, CreatedAt: createdAt}
}
