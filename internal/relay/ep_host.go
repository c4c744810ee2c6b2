package relay

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/tidwall/gjson"
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
	model := requestModel(c.r.Header.Get("Content-Type"), raw)
	if model == "" && c.ep.defaultModel != nil {
		model = c.ep.defaultModel(c.rl)
	}
	if model != "" && c.rl.Hosts.ServeProtocol(c.w, c.r, c.ep.hostProtocol, model, raw) {
		return true, nil
	}
	c.r.Body = io.NopCloser(bytes.NewReader(raw))
	return false, nil
}

// requestModel reads the model of a JSON or multipart body, or "".
func requestModel(contentType string, raw []byte) string {
	mt, params, _ := mime.ParseMediaType(contentType)
	if !strings.HasPrefix(mt, "multipart/") {
		return gjson.GetBytes(raw, "model").String()
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return ""
		}
		if part.FormName() == "model" && part.FileName() == "" {
			v, _ := io.ReadAll(io.LimitReader(part, 512))
			return strings.TrimSpace(string(v))
		}
	}
}
