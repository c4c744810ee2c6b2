package relay

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxFormFields bounds the number of parts, so a body of thousands of tiny
// parts cannot cost thousands of allocations and temp files.
const maxFormFields = 256

// maxFieldBytes bounds one non-file field; fields are small by nature and are
// always held in memory.
const maxFieldBytes = 1 << 20

// formPart is one part of a multipart body, kept so that every upstream
// attempt can replay it.
type formPart struct {
	name        string
	filename    string
	contentType string
	// data holds a field's value, or a file's bytes while they fit the
	// memory cap.
	data []byte
	// path is the spool file of a file that did not fit in memory.
	path string
	size int64
}

func (p *formPart) isFile() bool { return p.filename != "" }

// form is a parsed multipart/form-data body. close removes its spool files.
type form struct {
	parts []*formPart
}

// field returns the first non-file value named name.
func (f *form) field(name string) (string, bool) {
	for _, p := range f.parts {
		if p.name == name && !p.isFile() {
			return string(p.data), true
		}
	}
	return "", false
}

// file returns the first file part named name.
func (f *form) file(name string) *formPart {
	for _, p := range f.parts {
		if p.name == name && p.isFile() {
			return p
		}
	}
	return nil
}

// hasFile reports whether a file part named name or name[] exists.
func (f *form) hasFile(name string) bool { return f.file(name) != nil || f.file(name+"[]") != nil }

func (f *form) close() {
	for _, p := range f.parts {
		if p.path != "" {
			_ = os.Remove(p.path)
			p.path = ""
		}
	}
}

// isMultipart reports whether the request carries multipart/form-data and
// returns its boundary.
func isMultipart(r *http.Request) (string, bool) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return "", false
	}
	return params["boundary"], true
}

// parseForm reads a multipart body part by part. Files are kept in memory
// while the total stays under memCap and spooled to temp files beyond it, so
// a large upload is never held whole in memory yet can be replayed to the
// next channel. Malformed bodies are 400s; the caller maps a body-limit
// overrun to 413.
func parseForm(body io.Reader, boundary string, memCap int64) (*form, error) {
	if boundary == "" {
		return nil, badForm("the multipart body has no boundary")
	}
	mr := multipart.NewReader(body, boundary)
	f := &form{}
	used := int64(0)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.close()
			return nil, formReadError(err)
		}
		if len(f.parts) >= maxFormFields {
			f.close()
			return nil, badForm("the multipart body has too many parts")
		}
		p, err := readPart(part, memCap-used)
		_ = part.Close()
		if err != nil {
			f.close()
			return nil, err
		}
		if p.path == "" {
			used += int64(len(p.data))
		}
		f.parts = append(f.parts, p)
	}
	if len(f.parts) == 0 {
		return nil, badForm("the multipart body has no parts")
	}
	return f, nil
}

func readPart(part *multipart.Part, memLeft int64) (*formPart, error) {
	name := part.FormName()
	if name == "" {
		return nil, badForm("a multipart part has no form field name")
	}
	p := &formPart{name: name, filename: part.FileName(), contentType: part.Header.Get("Content-Type")}
	if !p.isFile() {
		data, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
		if err != nil {
			return nil, formReadError(err)
		}
		if len(data) > maxFieldBytes {
			return nil, badForm("multipart field " + name + " is too long")
		}
		p.data, p.size = data, int64(len(data))
		return p, nil
	}
	return p, spoolFile(p, part, memLeft)
}

// spoolFile keeps up to memLeft bytes in memory and moves the whole file to
// a temp file once it outgrows them.
func spoolFile(p *formPart, r io.Reader, memLeft int64) error {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, max(memLeft, 0)+1))
	if err != nil {
		return formReadError(err)
	}
	if n <= memLeft {
		p.data, p.size = buf.Bytes(), n
		return nil
	}
	tmp, err := os.CreateTemp("", "turnpike-upload-*")
	if err != nil {
		return &ir.Error{Status: 500, Kind: ir.KindInternal, Code: "internal_error", Message: "the upload could not be stored", Cause: err}
	}
	p.path = tmp.Name()
	written, err := io.Copy(tmp, io.MultiReader(&buf, r))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p.path)
		p.path = ""
		var disk *os.PathError
		if errors.As(err, &disk) {
			return &ir.Error{Status: 500, Kind: ir.KindInternal, Code: "internal_error", Message: "the upload could not be stored", Cause: err}
		}
		return formReadError(err)
	}
	p.size = written
	return nil
}

func badForm(msg string) *ir.Error { return ir.BadRequest("invalid_multipart", "%s", msg) }

// formReadError separates a body over the size limit (413) from a malformed
// one (400).
func formReadError(err error) *ir.Error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLarge()
	}
	return badForm("the multipart body is malformed: " + strings.TrimPrefix(err.Error(), "multipart: "))
}

func tooLarge() *ir.Error {
	return &ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Code: "request_too_large",
		Message: "the request body is larger than the gateway accepts"}
}

// formBody is one replay of a form for an upstream attempt.
type formBody struct {
	io.Reader
	contentType string
	length      int64
	files       []*os.File
}

func (b *formBody) Close() error {
	for _, f := range b.files {
		_ = f.Close()
	}
	return nil
}

// body rebuilds the form for the upstream with each field in overrides
// replaced (the mapped model). It streams spooled files from disk and knows
// its length up front, so the upstream gets a Content-Length and no chunked
// upload.
func (f *form) body(overrides map[string]string) (*formBody, error) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	out := &formBody{contentType: mw.FormDataContentType()}
	var readers []io.Reader
	cut := func() {
		seg := bytes.Clone(head.Bytes())
		head.Reset()
		readers = append(readers, bytes.NewReader(seg))
		out.length += int64(len(seg))
	}
	done := map[string]bool{}
	for _, p := range f.parts {
		if _, err := mw.CreatePart(partHeader(p)); err != nil {
			return nil, err
		}
		cut()
		content, err := p.open(out, overrides, done)
		if err != nil {
			_ = out.Close()
			return nil, err
		}
		readers = append(readers, content.r)
		out.length += content.n
	}
	for name, v := range overrides {
		if !done[name] {
			_ = mw.WriteField(name, v)
		}
	}
	_ = mw.Close()
	cut()
	out.Reader = io.MultiReader(readers...)
	return out, nil
}

type sizedReader struct {
	r io.Reader
	n int64
}

func (p *formPart) open(out *formBody, overrides map[string]string, done map[string]bool) (sizedReader, error) {
	if !p.isFile() {
		v := string(p.data)
		if o, ok := overrides[p.name]; ok && !done[p.name] {
			v = o
			done[p.name] = true
		}
		return sizedReader{strings.NewReader(v), int64(len(v))}, nil
	}
	if p.path == "" {
		return sizedReader{bytes.NewReader(p.data), int64(len(p.data))}, nil
	}
	fh, err := os.Open(p.path)
	if err != nil {
		return sizedReader{}, &ir.Error{Status: 500, Kind: ir.KindInternal, Code: "internal_error", Message: "the upload could not be read back", Cause: err}
	}
	out.files = append(out.files, fh)
	return sizedReader{fh, p.size}, nil
}

func partHeader(p *formPart) textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	disp := "form-data; name=" + quoteParam(p.name)
	if p.isFile() {
		disp += "; filename=" + quoteParam(p.filename)
		ct := p.contentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
	}
	h.Set("Content-Disposition", disp)
	return h
}

// quoteParam quotes a Content-Disposition parameter; quotes, backslashes and
// line breaks cannot break out of it.
func quoteParam(s string) string {
	r := strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")
	return `"` + r.Replace(s) + `"`
}
