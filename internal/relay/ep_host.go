package relay

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// offerToHost lets a task plugin serve the request when it claims the model
// for the endpoint's host protocol. The body is read once; when no plugin
// takes it, the bytes are replayed into the ordinary flow.
func (c *epCall) offerToHost() (served bool, err error) {
	if c.ep.hostProtocol == "" || c.rl.Hosts == nil || c.line != nil {
		return false, nil
	}
	raw, e := readLimited(c.w, c.r, c.rl.Options.BodyLimit)
	if e != nil {
		return false, e
	}
	model, err := requestModel(c.r.Header.Get("Content-Type"), raw)
	if err != nil {
		return false, err
	}
	if model == "" && c.ep.defaultModel != nil {
		model = c.ep.defaultModel(c.rl)
	}
	if model != "" && c.rl.Hosts.ServeProtocol(c.w, c.r, c.ep.hostProtocol, model, raw) {
		return true, nil
	}
	c.r.Body = io.NopCloser(bytes.NewReader(raw))
	return false, nil
}

// requestModel reads the model of a JSON or multipart body, or "". A JSON
// body that names a member twice is refused before a plugin reads it.
func requestModel(contentType string, raw []byte) (string, error) {
	mt, params, _ := mime.ParseMediaType(contentType)
	if !strings.HasPrefix(mt, "multipart/") {
		if _, dup := protocol.CheckMembers(raw); dup != nil {
			return "", dup
		}
		return gjson.GetBytes(raw, "model").String(), nil
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return "", nil
		}
		if part.FormName() == "model" && part.FileName() == "" {
			v, _ := io.ReadAll(io.LimitReader(part, 512))
			return strings.TrimSpace(string(v)), nil
		}
	}
}
