package taskhttp

import (
	"bytes"
	"maps"
	"mime"
	"mime/multipart"
	"net/url"
	"slices"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/task"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// Body kinds of the inbound body union (SPEC §2.6).
const (
	BodyJSON      = "json"
	BodyForm      = "form"
	BodyMultipart = "multipart"
	BodyNone      = "none"
)

// maxMultipartMemory bounds the uploads held in memory while parsing; the
// multipart reader spools the rest to temporary files, which
// decodedBody.Close removes when the request ends.
const maxMultipartMemory = 4 << 20

// decodedBody is the body union plus the uploads it references.
type decodedBody struct {
	Value map[string]any
	Files egress.Files
	form  *multipart.Form
}

// decodeBody reads an inbound body into the union of SPEC §2.6. It never
// fails on an unknown content type with a body: such a body is taken as
// JSON when it parses, which is what clients that omit the header mean.
func decodeBody(contentType string, body []byte) (decodedBody, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return decodedBody{Value: map[string]any{"kind": BodyNone}}, nil
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/x-www-form-urlencoded":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return decodedBody{}, ir.BadRequest("invalid_request", "the form body is not valid: %v", err)
		}
		return decodedBody{Value: map[string]any{"kind": BodyForm, "fields": fieldsOf(vals)}}, nil
	case mt == "multipart/form-data":
		return decodeMultipart(body, params["boundary"])
	}
	v, err := task.DecodeJSON(body)
	if err != nil {
		return decodedBody{}, ir.BadRequest("invalid_request", "the request body is not valid JSON: %v", err)
	}
	return decodedBody{Value: map[string]any{"kind": BodyJSON, "value": v}}, nil
}

func fieldsOf(vals map[string][]string) map[string]any {
	out := make(map[string]any, len(vals))
	for k, vs := range vals {
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		out[k] = arr
	}
	return out
}

func decodeMultipart(body []byte, boundary string) (decodedBody, error) {
	if boundary == "" {
		return decodedBody{}, ir.BadRequest("invalid_request", "the multipart body has no boundary")
	}
	form, err := multipart.NewReader(bytes.NewReader(body), boundary).ReadForm(maxMultipartMemory)
	if err != nil {
		return decodedBody{}, ir.BadRequest("invalid_request", "the multipart body is not valid: %v", err)
	}
	files := egress.Files{}
	var refs []any
	// Fields in name order so ctx.files is the same on every decode.
	for _, field := range slices.Sorted(maps.Keys(form.File)) {
		for i, fh := range form.File[field] {
			f, err := readUpload(fh, field, i)
			if err != nil {
				_ = form.RemoveAll()
				return decodedBody{}, err
			}
			files[f.Ref] = f
			refs = append(refs, fileRefValue(f.FileReference))
		}
	}
	if refs == nil {
		refs = []any{}
	}
	v := map[string]any{"kind": BodyMultipart, "fields": fieldsOf(form.Value), "files": refs}
	return decodedBody{Value: v, Files: files, form: form}, nil
}

// fileRef names the i-th file of a field: the first is request_file:<field>,
// later ones request_file:<field>#<i> (SPEC §2.7).
func fileRef(field string, i int) string {
	if i == 0 {
		return "request_file:" + field
	}
	return "request_file:" + field + "#" + strconv.Itoa(i)
}

func readUpload(fh *multipart.FileHeader, field string, i int) (*egress.File, error) {
	mt := fh.Header.Get("Content-Type")
	if mt == "" {
		mt = "application/octet-stream"
	}
	ref := egress.FileReference{Ref: fileRef(field, i), Field: field, Filename: fh.Filename, MimeType: mt, Size: fh.Size}
	f, err := egress.FromUpload(ref, fh)
	if err != nil {
		return nil, ir.BadRequest("invalid_request", "the uploaded file %q cannot be read", fh.Filename)
	}
	return f, nil
}

func fileRefValue(f egress.FileReference) map[string]any {
	return map[string]any{"ref": f.Ref, "field": f.Field, "filename": f.Filename, "mimeType": f.MimeType, "size": f.Size}
}

// queryValues turns the URL query into name → array of strings.
func queryValues(q url.Values) map[string]any { return fieldsOf(q) }
