package gemini

import (
	"encoding/base64"
	"net/http"
	"path"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// extTypes is a fixed table rather than the mime package's, whose answers
// depend on the host's mime.types files.
var extTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".heic": "image/heic",
	".heif": "image/heif", ".pdf": "application/pdf", ".txt": "text/plain",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".mp4": "video/mp4",
}

func mimeFromExt(uri string) string {
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	return extTypes[strings.ToLower(path.Ext(uri))]
}

// parseDataURI splits a base64 data: URI into its MIME type and payload.
func parseDataURI(uri string) (mimeType, data string, ok bool) {
	rest, found := strings.CutPrefix(uri, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return "", "", false
	}
	return strings.TrimSuffix(meta, ";base64"), data, true
}

// sniffMIME guesses a payload's type from its first bytes, for clients that
// sent inline data without saying what it is; the upstream requires a type.
func sniffMIME(b64 string) string {
	head := b64
	if len(head) > 64 {
		head = head[:64]
	}
	raw, err := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
	if err != nil || len(raw) == 0 {
		return "application/octet-stream"
	}
	return strings.SplitN(http.DetectContentType(raw), ";", 2)[0]
}

// mediaWire renders IR media as inlineData (base64 or a data: URI) or as
// fileData (any other URI).
func mediaWire(m *ir.Media) partWire {
	if m.Data != "" {
		mt := m.MIMEType
		if mt == "" {
			mt = sniffMIME(m.Data)
		}
		return partWire{InlineData: &blobWire{MIMEType: mt, Data: m.Data}}
	}
	if mt, data, ok := parseDataURI(m.URL); ok {
		if mt == "" {
			mt = sniffMIME(data)
		}
		return partWire{InlineData: &blobWire{MIMEType: mt, Data: data}}
	}
	mt := m.MIMEType
	if mt == "" {
		mt = mimeFromExt(m.URL)
	}
	return partWire{FileData: &fileDataWire{MIMEType: mt, FileURI: m.URL}}
}
