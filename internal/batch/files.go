package batch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// purposes are the file purposes the OpenAI API accepts.
var purposes = map[string]bool{"batch": true, "assistants": true, "fine-tune": true, "vision": true,
	"user_data": true, "evals": true}

// fileObject is the OpenAI file object.
type fileObject struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Bytes     int64  `json:"bytes"`
	CreatedAt int64  `json:"created_at"`
	Filename  string `json:"filename"`
	Purpose   string `json:"purpose"`
	Status    string `json:"status"`
}

func toFileObject(f *store.File) fileObject {
	return fileObject{ID: f.PublicID, Object: "file", Bytes: f.Bytes, CreatedAt: f.CreatedAt, Filename: f.Filename,
		Purpose: f.Purpose, Status: "processed"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// uploadFile streams the multipart file part into the blob store, never
// holding more than a chunk of it.
func (s *Service) uploadFile(w http.ResponseWriter, r *http.Request) {
	p, ok := s.bearer(w, r)
	if !ok {
		return
	}
	max := s.Options.MaxFileBytes
	// The form around the file costs a few hundred bytes; a body far past
	// the limit is refused before a byte of it is stored.
	if r.ContentLength > max+1<<20 {
		s.fail(w, tooLarge(max))
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		s.fail(w, badRequest("invalid_body", "file", "send the file as multipart/form-data with fields file and purpose"))
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		s.fail(w, badRequest("invalid_body", "file", "the multipart body could not be read"))
		return
	}
	f := &store.File{PublicID: newID("file-"), UserID: p.UserID}
	stored := false
	abandon := func() {
		if stored {
			_ = s.Blobs.Delete(context.WithoutCancel(r.Context()), f.PublicID)
		}
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			abandon()
			s.fail(w, badRequest("invalid_body", "file", "the multipart body could not be read"))
			return
		}
		switch part.FormName() {
		case "purpose":
			v, _ := io.ReadAll(io.LimitReader(part, 256))
			f.Purpose = strings.TrimSpace(string(v))
		case "file":
			if stored {
				continue
			}
			f.Filename = part.FileName()
			n, err := s.Blobs.Put(r.Context(), f.PublicID, part, max)
			if errors.Is(err, ErrTooLarge) {
				s.fail(w, tooLarge(max))
				return
			}
			if err != nil {
				s.Logger.ErrorContext(r.Context(), "file not stored", "err", err)
				s.fail(w, &ir.Error{Status: 500, Kind: ir.KindInternal, Code: "file_not_stored", Message: "the file could not be stored; retry"})
				return
			}
			f.Bytes, stored = n, true
		}
		part.Close()
	}
	switch {
	case !stored:
		s.fail(w, badRequest("missing_required_parameter", "file", "file is required"))
		return
	case f.Purpose == "":
		abandon()
		s.fail(w, badRequest("missing_required_parameter", "purpose", "purpose is required"))
		return
	case !purposes[f.Purpose]:
		abandon()
		s.fail(w, badRequest("invalid_value", "purpose", "purpose must be one of batch, assistants, fine-tune, vision, user_data, evals"))
		return
	}
	if f.Filename == "" {
		f.Filename = "upload"
	}
	f.CreatedAt = time.Now().Unix()
	if err := s.Files.InsertFile(r.Context(), f); err != nil {
		abandon()
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toFileObject(f))
}

// ownFile finds a file of p's user; another user's file is not found, so
// its existence is not revealed.
func (s *Service) ownFile(ctx context.Context, p *auth.Principal, id string) (*store.File, error) {
	f, err := s.Files.GetFile(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && f.UserID != p.UserID) {
		return nil, notFound("file", id)
	}
	return f, err
}

func (s *Service) listFiles(w http.ResponseWriter, r *http.Request) {
	p, ok := s.bearer(w, r)
	if !ok {
		return
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	fs, err := s.Files.ListFiles(r.Context(), p.UserID, r.URL.Query().Get("purpose"), limit)
	if err != nil {
		s.fail(w, err)
		return
	}
	data := make([]fileObject, 0, len(fs))
	for _, f := range fs {
		data = append(data, toFileObject(f))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": false})
}

// requestedFile is the caller's file named by the path, or false once the
// refusal (no key, not found, not theirs) is written.
func (s *Service) requestedFile(w http.ResponseWriter, r *http.Request) (*store.File, bool) {
	p, ok := s.bearer(w, r)
	if !ok {
		return nil, false
	}
	f, err := s.ownFile(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	return f, true
}

func (s *Service) getFile(w http.ResponseWriter, r *http.Request) {
	f, ok := s.requestedFile(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, toFileObject(f))
}

// fileContent streams the bytes out chunk by chunk.
func (s *Service) fileContent(w http.ResponseWriter, r *http.Request) {
	f, ok := s.requestedFile(w, r)
	if !ok {
		return
	}
	rc, err := s.Blobs.Open(r.Context(), f.PublicID)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(f.Bytes, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, rc); err != nil {
		s.Logger.WarnContext(r.Context(), "file content cut short", "file", f.PublicID, "err", err)
	}
}

func (s *Service) deleteFile(w http.ResponseWriter, r *http.Request) {
	f, ok := s.requestedFile(w, r)
	if !ok {
		return
	}
	if err := s.Files.DeleteFile(r.Context(), f.PublicID); err != nil {
		s.fail(w, err)
		return
	}
	if err := s.Blobs.Delete(r.Context(), f.PublicID); err != nil {
		s.Logger.WarnContext(r.Context(), "deleted file's bytes not removed", "file", f.PublicID, "err", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": f.PublicID, "object": "file", "deleted": true})
}

// putFile stores bytes the gateway made (a batch's output) as a file of
// userID.
func (s *Service) putFile(ctx context.Context, userID int64, name, purpose string, r io.Reader) (*store.File, error) {
	f := &store.File{PublicID: newID("file-"), UserID: userID, Filename: name, Purpose: purpose, CreatedAt: time.Now().Unix()}
	n, err := s.Blobs.Put(ctx, f.PublicID, r, 1<<62)
	if err != nil {
		return nil, err
	}
	f.Bytes = n
	if err := s.Files.InsertFile(ctx, f); err != nil {
		_ = s.Blobs.Delete(context.WithoutCancel(ctx), f.PublicID)
		return nil, err
	}
	return f, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
