package batch

import (
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// The console's view of a user's files and batches: the same records as
// /v1, for the signed-in user (the session), in the /api wire.

// RegisterConsole mounts GET /api/files and GET /api/batches; principal
// resolves the session (or the root token).
func (s *Service) RegisterConsole(mux *http.ServeMux, principal func(*http.Request) (*auth.Principal, bool)) {
	mux.HandleFunc("GET /api/files", func(w http.ResponseWriter, r *http.Request) {
		p, ok := principal(r)
		if !ok {
			unauthorized(w)
			return
		}
		fs, err := s.Files.ListFiles(r.Context(), p.UserID, "", 200)
		if err != nil {
			s.apiFail(w, err)
			return
		}
		out := make([]fileObject, 0, len(fs))
		for _, f := range fs {
			out = append(out, toFileObject(f))
		}
		_ = apijson.Write(w, http.StatusOK, map[string]any{"items": out, "total": len(out)})
	})
	mux.HandleFunc("GET /api/batches", func(w http.ResponseWriter, r *http.Request) {
		p, ok := principal(r)
		if !ok {
			unauthorized(w)
			return
		}
		var out []consoleBatch
		for _, kind := range []string{"openai", kindMessages} {
			bs, err := s.Batches.ListBatches(r.Context(), p.UserID, kind, "", 100)
			if err != nil {
				s.apiFail(w, err)
				return
			}
			for _, b := range bs {
				out = append(out, toConsoleBatch(b))
			}
		}
		if out == nil {
			out = []consoleBatch{}
		}
		_ = apijson.Write(w, http.StatusOK, map[string]any{"items": out, "total": len(out)})
	})
}

// consoleBatch is a batch as the console lists it: its state and what it
// holds or cost.
type consoleBatch struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Endpoint     string `json:"endpoint"`
	Mode         string `json:"mode"`
	Status       string `json:"status"`
	Total        int    `json:"total"`
	Completed    int    `json:"completed"`
	Failed       int    `json:"failed"`
	Held         int64  `json:"held"`
	Charged      int64  `json:"charged"`
	Billed       bool   `json:"billed"`
	OutputFileID string `json:"output_file_id,omitempty"`
	ErrorFileID  string `json:"error_file_id,omitempty"`
	CreatedAt    int64  `json:"created_at"`
}

func toConsoleBatch(b *store.Batch) consoleBatch {
	c := consoleBatch{ID: b.PublicID, Kind: b.Kind, Endpoint: b.Endpoint, Mode: b.Mode, Status: b.Status, Total: b.Total,
		Completed: b.Completed, Failed: b.Failed, Charged: b.Charged, Billed: b.Billed, OutputFileID: b.OutputFileID,
		ErrorFileID: b.ErrorFileID, CreatedAt: b.CreatedAt}
	if !b.Billed {
		for _, h := range holdsOf(b) {
			c.Held += h.Reserved
		}
	}
	return c
}

func unauthorized(w http.ResponseWriter) {
	apijson.WriteError(w, http.StatusUnauthorized, apijson.Error{Code: "unauthorized", Message: "sign in first"})
}

func (s *Service) apiFail(w http.ResponseWriter, err error) {
	s.Logger.Error("console list failed", "err", err)
	apijson.WriteError(w, http.StatusInternalServerError, apijson.Error{Code: "store_error", Message: "the batches could not be read"})
}
