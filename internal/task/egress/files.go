package egress

import (
	"bytes"
	"io"
	"mime/multipart"
)

// FileReference is what a plugin sees of an uploaded file. Plugins never
// read the bytes; the host resolves the ref when a descriptor uses it.
type FileReference struct {
	Ref      string `json:"ref"`
	Field    string `json:"field"`
	Filename string `json:"filename"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

// File is the content behind a FileReference: Data when it is small
// enough to hold, else the spooled upload (read it through Open).
type File struct {
	FileReference
	Data   []byte
	upload *multipart.FileHeader
}

// FileResolver finds the content of a file reference. Request uploads are
// resolved from memory; later sources (downloads, stored artifacts) can be
// added by other implementations.
type FileResolver interface {
	Resolve(ref string) (*File, bool)
}

// maxHeldUpload is the largest upload kept as bytes; larger ones stay
// where the multipart reader put them (memory or a temporary file) and are
// streamed from there when a descriptor uses them.
const maxHeldUpload = 1 << 20

// defaultMaxFileBytes is MAX_FILE_DOWNLOAD_MB's default, 64 MiB.
const defaultMaxFileBytes = 64 << 20

// Open reads the file's content from the start.
func (f *File) Open() (io.ReadCloser, error) {
	if f.upload == nil {
		return io.NopCloser(bytes.NewReader(f.Data)), nil
	}
	return f.upload.Open()
}

// Budget resolves the files one descriptor uses and enforces the caps:
// each file at most perFile bytes (and at most a placeholder's maxBytes),
// and all files the descriptor uses together at most total.
type Budget struct {
	files   FileResolver
	perFile int64
	total   int64
	used    int64
}

// NewBudget caps files by MAX_FILE_DOWNLOAD_MB (max <= 0: the default)
// per file and in total.
func NewBudget(files FileResolver, max int64) *Budget {
	if max <= 0 {
		max = defaultMaxFileBytes
	}
	return &Budget{files: files, perFile: max, total: max}
}

// budgetOf returns files as a budget, wrapping a plain resolver with the
// default caps.
func budgetOf(files FileResolver) *Budget {
	if b, ok := files.(*Budget); ok {
		return b
	}
	return NewBudget(files, 0)
}

// Resolve implements FileResolver without counting.
func (b *Budget) Resolve(ref string) (*File, bool) {
	if b.files == nil {
		return nil, false
	}
	return b.files.Resolve(ref)
}

// fileError is a descriptor's file use the host refuses: the request's
// fault (a 400 naming the ref), as a DescriptorError so the submit path
// words it like every other refused descriptor.
func fileError(format string, args ...any) error { return Errorf(format, args...) }

// take resolves ref for one use and charges its size: maxBytes > 0 is the
// placeholder's own cap.
func (b *Budget) take(ref string, maxBytes int64) (*File, error) {
	f, ok := b.Resolve(ref)
	if !ok {
		return nil, fileError("file reference %q does not name a file of this request", ref)
	}
	if maxBytes > 0 && f.Size > maxBytes {
		return nil, fileError("file %s is %d bytes, more than its maxBytes %d", ref, f.Size, maxBytes)
	}
	if f.Size > b.perFile {
		return nil, fileError("file %s is %d bytes, more than the %d bytes allowed per file", ref, f.Size, b.perFile)
	}
	if b.used+f.Size > b.total {
		return nil, fileError("file %s brings the files of this request to %d bytes, more than the %d bytes allowed in total", ref, b.used+f.Size, b.total)
	}
	b.used += f.Size
	return f, nil
}

// readAll reads a file whose size the budget already admitted; a file that
// grew or shrank since is refused rather than sent truncated.
func readAll(f *File) ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, fileError("file %s cannot be read", f.Ref)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, f.Size+1))
	if err != nil || int64(len(data)) != f.Size {
		return nil, fileError("file %s cannot be read", f.Ref)
	}
	return data, nil
}

// FromUpload is the file of one uploaded part: its bytes when the upload
// is small enough to hold, else the spooled upload itself, streamed when
// a descriptor uses it.
func FromUpload(ref FileReference, fh *multipart.FileHeader) (*File, error) {
	if fh.Size > maxHeldUpload {
		return &File{FileReference: ref, upload: fh}, nil
	}
	r, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	ref.Size = int64(len(data))
	return &File{FileReference: ref, Data: data}, nil
}

// Files is one request's uploads, keyed by ref.
type Files map[string]*File

// Resolve implements FileResolver.
func (f Files) Resolve(ref string) (*File, bool) {
	file, ok := f[ref]
	return file, ok
}
