package bedrock

import (
	"path"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// imageFormats are the image types Converse accepts, by media type.
var imageFormats = map[string]string{
	"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
}

// documentFormats are the document types Converse accepts, by media type.
var documentFormats = map[string]string{
	"application/pdf":    "pdf",
	"text/csv":           "csv",
	"application/msword": "doc",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.ms-excel": "xls",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
	"text/html":     "html",
	"text/plain":    "txt",
	"text/markdown": "md",
}

// formatsByExt find the format of an s3:// object without a media type.
var formatsByExt = map[string]string{
	".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif", ".webp": "webp",
	".pdf": "pdf", ".csv": "csv", ".doc": "doc", ".docx": "docx", ".xls": "xls", ".xlsx": "xlsx",
	".html": "html", ".htm": "html", ".txt": "txt", ".md": "md",
}

// media builds an image or document block. Converse takes media inline
// (base64, which the IR already holds) or from Amazon S3; data URLs are
// unpacked, and web addresses are refused, since Bedrock does not fetch
// them.
func (e *reqEncoder) media(p ir.Part, param string) (wireBlock, *ir.Error) {
	m := p.Media
	if m == nil {
		return wireBlock{}, badParam(param, "%s: media missing", param)
	}
	mime, src := strings.ToLower(strings.TrimSpace(m.MIMEType)), wireSource{Bytes: m.Data}
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = strings.TrimSpace(mime[:i])
	}
	switch {
	case src.Bytes != "":
	case strings.HasPrefix(m.URL, "data:"):
		dm, data, ok := ir.ParseDataURL(m.URL)
		dm = strings.ToLower(dm)
		if !ok {
			return wireBlock{}, badParam(param+".url", "%s.url: malformed data URL (only base64 data URLs are accepted)", param)
		}
		mime, src.Bytes = dm, data
	case strings.HasPrefix(m.URL, "s3://"):
		src.S3Location = &wireS3Location{URI: m.URL}
	case m.URL != "":
		return wireBlock{}, unsupported(param+".url", "%s.url: Amazon Bedrock takes media inline (base64 data) or from s3://, not from a web address", param)
	default:
		return wireBlock{}, badParam(param, "%s: media needs data or a URL", param)
	}
	format := ""
	if src.Bytes != "" && mime == "" {
		mime = ir.SniffImageType(src.Bytes)
	}
	if mime != "" {
		format = imageFormats[mime]
		if format == "" {
			format = documentFormats[mime]
		}
	} else if src.S3Location != nil {
		format = formatsByExt[strings.ToLower(path.Ext(m.URL))]
	}
	isImage := format == "png" || format == "jpeg" || format == "gif" || format == "webp"
	switch {
	case format == "":
		return wireBlock{}, unsupported(param, "%s: media type %q is not one Amazon Bedrock accepts (png, jpeg, gif, webp images; pdf, csv, doc, docx, xls, xlsx, html, txt, md documents)", param, mime)
	case isImage:
		return wireBlock{Image: &wireImage{Format: format, Source: src}}, nil
	}
	e.documents++
	return wireBlock{Document: &wireDocument{Format: format, Name: e.documentName(m.Name), Source: src}}, nil
}

// documentName makes a name Converse accepts: letters, digits, single
// spaces, hyphens, parentheses and square brackets. Names must differ
// within a request, so each carries its number.
func (e *reqEncoder) documentName(name string) string {
	name = strings.TrimSuffix(name, path.Ext(name))
	var b strings.Builder
	space := false
	for _, r := range name {
		ok := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || strings.ContainsRune("-()[]", r)
		switch {
		case ok:
			b.WriteRune(r)
			space = false
		case !space && b.Len() > 0:
			b.WriteByte(' ')
			space = true
		}
		if b.Len() >= 100 {
			break
		}
	}
	clean := strings.TrimSpace(b.String())
	if clean == "" {
		clean = "document"
	}
	return clean + " (" + strconv.Itoa(e.documents) + ")"
}
