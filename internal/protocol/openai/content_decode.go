package openai

import (
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// decodeContent reads a message's content: a string, null, or an array of
// parts. allowMedia is false for roles whose content may only be text.
// Empty text is dropped because messages-native upstreams reject empty text
// blocks and it means nothing to any model.
func decodeContent(r gjson.Result, param string, allowMedia bool) ([]ir.Part, error) {
	switch {
	case !present(r):
		return nil, nil
	case r.Type == gjson.String:
		if r.Str == "" {
			return nil, nil
		}
		return []ir.Part{{Kind: ir.PartText, Text: r.Str}}, nil
	case !r.IsArray():
		return nil, wrongType(param, "a string or an array of content parts")
	}
	items := r.Array()
	parts := make([]ir.Part, 0, len(items))
	for i, p := range items {
		part, err := decodePart(p, item(param, i), allowMedia)
		if err != nil {
			return nil, err
		}
		if part.Kind == ir.PartText && part.Text == "" {
			continue
		}
		parts = append(parts, part)
	}
	return parts, nil
}

func decodePart(p gjson.Result, param string, allowMedia bool) (ir.Part, error) {
	if _, err := readObject(p, param); err != nil {
		return ir.Part{}, err
	}
	typ, err := memberString(p.Get("type"), param, "type")
	if err != nil {
		return ir.Part{}, err
	}
	switch typ {
	case "text", "refusal":
		text, err := readString(p.Get(typ), field(param, typ))
		return ir.Part{Kind: ir.PartText, Text: text}, err
	case "image_url", "input_audio", "file":
		if !allowMedia {
			return ir.Part{}, invalid(field(param, "type"), "content part type '%s' is not allowed in this message", typ)
		}
	case "":
		return ir.Part{}, missing(field(param, "type"))
	default:
		return ir.Part{}, invalid(field(param, "type"), "content part type '%s' is not supported", typ)
	}
	var media *ir.Media
	kind := ir.PartFile
	switch typ {
	case "image_url":
		kind = ir.PartImage
		media, err = decodeImageURL(p.Get("image_url"), field(param, "image_url"))
	case "input_audio":
		media, err = decodeInputAudio(p.Get("input_audio"), field(param, "input_audio"))
	default:
		media, err = decodeFile(p.Get("file"), field(param, "file"))
	}
	if err != nil {
		return ir.Part{}, err
	}
	return ir.Part{Kind: kind, Media: media}, nil
}

// decodeImageURL accepts the documented {url, detail} object and also a bare
// URL string, which several clients send.
func decodeImageURL(r gjson.Result, param string) (*ir.Media, error) {
	var raw, detail string
	var err error
	switch {
	case r.Type == gjson.String:
		raw = r.Str
	case r.IsObject():
		if raw, err = optString(r, param, "url"); err != nil {
			return nil, err
		}
		if detail, err = optString(r, param, "detail"); err != nil {
			return nil, err
		}
	default:
		return nil, wrongType(param, "an object")
	}
	if raw == "" {
		return nil, missing(field(param, "url"))
	}
	media, err := mediaFromURL(raw, field(param, "url"))
	if err != nil {
		return nil, err
	}
	media.Detail = detail
	return media, nil
}

func decodeInputAudio(r gjson.Result, param string) (*ir.Media, error) {
	if _, err := readObject(r, param); err != nil {
		return nil, err
	}
	data, err := optString(r, param, "data")
	if err != nil {
		return nil, err
	}
	if data == "" {
		return nil, missing(field(param, "data"))
	}
	format, err := optString(r, param, "format")
	if err != nil {
		return nil, err
	}
	if format == "" {
		return nil, missing(field(param, "format"))
	}
	return &ir.Media{MIMEType: "audio/" + format, Data: data}, nil
}

// decodeFile reads {file_data, file_id, filename}. A file_id has no IR field
// of its own; it travels in Media.URL with the fileIDScheme prefix so this
// codec can send it back as file_id, while other formats see a URL they
// cannot fetch and the upstream rejects it rather than the file vanishing.
func decodeFile(r gjson.Result, param string) (*ir.Media, error) {
	if _, err := readObject(r, param); err != nil {
		return nil, err
	}
	name, err := optString(r, param, "filename")
	if err != nil {
		return nil, err
	}
	data, err := optString(r, param, "file_data")
	if err != nil {
		return nil, err
	}
	id, err := optString(r, param, "file_id")
	if err != nil {
		return nil, err
	}
	var media *ir.Media
	switch {
	case data != "":
		media, err = mediaFromFileData(data, field(param, "file_data"))
	case id != "":
		media = &ir.Media{URL: fileIDScheme + id}
	default:
		err = invalid(field(param, "file_data"), "'%s' or '%s' is required", field(param, "file_data"), field(param, "file_id"))
	}
	if err != nil {
		return nil, err
	}
	media.Name = name
	return media, nil
}

// fileIDScheme marks a Media.URL that is really an uploaded file's id.
const fileIDScheme = "openai-file:"

// mediaFromFileData accepts a data URL or, as clients also send, bare base64;
// bare data is taken as PDF, the only file type Chat Completions accepts.
func mediaFromFileData(data, param string) (*ir.Media, error) {
	if strings.HasPrefix(data, "data:") {
		return mediaFromURL(data, param)
	}
	return &ir.Media{MIMEType: "application/pdf", Data: data}, nil
}

// mediaFromURL keeps remote URLs as they are and splits a data: URL into its
// media type and base64 payload (percent-encoded payloads are re-encoded as
// base64, the form every format wants).
func mediaFromURL(raw, param string) (*ir.Media, error) {
	if !strings.HasPrefix(raw, "data:") {
		return &ir.Media{URL: raw}, nil
	}
	meta, payload, ok := strings.Cut(raw[len("data:"):], ",")
	if !ok {
		return nil, invalid(param, "'%s' is a malformed data URL", param)
	}
	isBase64 := strings.HasSuffix(meta, ";base64")
	meta = strings.TrimSuffix(meta, ";base64")
	mime, _, _ := strings.Cut(meta, ";")
	if !isBase64 {
		plain, err := url.PathUnescape(payload)
		if err != nil {
			return nil, invalid(param, "'%s' is a malformed data URL", param)
		}
		payload = base64.StdEncoding.EncodeToString([]byte(plain))
	}
	if payload == "" {
		return nil, invalid(param, "'%s' has no data", param)
	}
	return &ir.Media{MIMEType: strings.ToLower(strings.TrimSpace(mime)), Data: payload}, nil
}
