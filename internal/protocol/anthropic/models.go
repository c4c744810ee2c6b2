package anthropic

import "time"

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
		out.Data = append(out.Data, wireModel{Type: "model", ID: id, DisplayName: id, CreatedAt: at})
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
