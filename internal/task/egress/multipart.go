package egress

import (
	"io"
	"mime/multipart"
	"net/textproto"
	"sync"
)

// multipartBody is a multipart descriptor body ready to stream: every file
// is resolved and within its caps before the first byte is sent, so a
// refused file is a 400 and never a broken upload.
type multipartBody struct {
	parts    []Part
	files    []*File // parallel to parts; nil for value parts
	boundary string
}

// prepareMultipart resolves and charges the files of parts.
func prepareMultipart(parts []Part, b *Budget) (*multipartBody, error) {
	mb := &multipartBody{parts: parts, files: make([]*File, len(parts)), boundary: multipart.NewWriter(io.Discard).Boundary()}
	for i, p := range parts {
		if p.FileRef == "" {
			continue
		}
		f, err := b.take(p.FileRef, 0)
		if err != nil {
			return nil, Errorf("parts[%d]: %s", i, trimDescPrefix(err))
		}
		mb.files[i] = f
	}
	return mb, nil
}

func trimDescPrefix(err error) string {
	if de, ok := err.(*DescriptorError); ok {
		return de.msg
	}
	return err.Error()
}

// contentType is the Content-Type header of the body.
func (mb *multipartBody) contentType() string {
	return "multipart/form-data; boundary=" + mb.boundary
}

// length is the exact body length, computed by writing the framing alone
// and adding the file sizes, so the upstream gets a Content-Length rather
// than a chunked upload some vendors refuse.
func (mb *multipartBody) length() int64 {
	var c countingWriter
	_ = mb.write(&c, func(io.Writer, *File) error { return nil })
	n := c.n
	for _, f := range mb.files {
		if f != nil {
			n += f.Size
		}
	}
	return n
}

// reader streams the body through a pipe: files are copied from their
// source as the upstream reads, never assembled in memory.
func (mb *multipartBody) reader() io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(mb.write(pw, copyFile))
	}()
	return pr
}

// write emits the whole body, with content written by fill for each file.
func (mb *multipartBody) write(w io.Writer, fill func(io.Writer, *File) error) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(mb.boundary); err != nil {
		return err
	}
	for i, p := range mb.parts {
		f := mb.files[i]
		if f == nil {
			if err := mw.WriteField(p.Name, p.Value); err != nil {
				return err
			}
			continue
		}
		name := p.Filename
		if name == "" {
			name = f.Filename
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+escapeQuotes(p.Name)+`"; filename="`+escapeQuotes(name)+`"`)
		mt := f.MimeType
		if mt == "" {
			mt = "application/octet-stream"
		}
		h.Set("Content-Type", mt)
		pw, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if err := fill(pw, f); err != nil {
			return err
		}
	}
	return mw.Close()
}

// copyFile writes exactly the admitted size of f; a source that changed
// size fails the upload rather than sending something else.
func copyFile(w io.Writer, f *File) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	n, err := io.Copy(w, io.LimitReader(r, f.Size))
	if err == nil && n != f.Size {
		err = io.ErrUnexpectedEOF
	}
	return err
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// encodeMultipart prepares a multipart descriptor body as a stream of known
// length.
func encodeMultipart(parts []Part, b *Budget) (io.Reader, string, error) {
	mb, err := prepareMultipart(parts, b)
	if err != nil {
		return nil, "", err
	}
	return &multipartStream{mb: mb, n: mb.length()}, mb.contentType(), nil
}

// multipartStream starts its writer on the first read, so a request that
// is never sent leaves no goroutine blocked on the pipe.
type multipartStream struct {
	mb   *multipartBody
	n    int64
	once sync.Once
	r    io.ReadCloser
}

func (m *multipartStream) size() int64 { return m.n }

func (m *multipartStream) Read(p []byte) (int, error) {
	m.once.Do(func() { m.r = m.mb.reader() })
	return m.r.Read(p)
}

// Close stops the writer when the transport gives up early.
func (m *multipartStream) Close() error {
	m.once.Do(func() {})
	if m.r != nil {
		return m.r.Close()
	}
	return nil
}
