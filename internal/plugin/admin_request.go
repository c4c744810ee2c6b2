package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// maxJSONBody bounds JSON bodies: a source (2 MiB) grows when escaped.
const maxJSONBody = 3*MaxSourceBytes + 64<<10

func badRequest(format string, args ...any) *Error {
	return errorf(http.StatusBadRequest, "invalid_request", format, args...)
}

// readJSON decodes the body as one object whose members are all in allowed
// into dst (a struct with matching json tags).
func readJSON(w http.ResponseWriter, r *http.Request, dst any, allowed ...string) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return badRequest("the request body must be a JSON object")
	}
	var unknown []string
	for name := range members {
		if !slices.Contains(allowed, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return badRequest("unknown field %s; allowed fields are %s", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return badRequest("%s has the wrong type; want %s", te.Field, te.Type)
		}
		return badRequest("the request body is not valid JSON")
	}
	return nil
}

// uploadBody is the JSON form of an upload.
type uploadBody struct {
	Source   string `json:"source"`
	Activate bool   `json:"activate"`
	Enabled  *bool  `json:"enabled"`
	Force    bool   `json:"force"`
}

// readUpload reads either form of an upload: multipart with a `file` (and
// optional `icon`) plus option fields, or a JSON object.
func readUpload(w http.ResponseWriter, r *http.Request) (UploadRequest, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		var b uploadBody
		if err := readJSON(w, r, &b, "source", "activate", "enabled", "force"); err != nil {
			return UploadRequest{}, err
		}
		return UploadRequest{Source: b.Source, Activate: b.Activate, Enabled: b.Enabled, Force: b.Force}, nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxSourceBytes+MaxIconBytes+64<<10)
	if err := r.ParseMultipartForm(4 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return UploadRequest{}, err
		}
		return UploadRequest{}, badRequest("the multipart body could not be read")
	}
	defer r.MultipartForm.RemoveAll()
	src, err := formFile(r, "file", MaxSourceBytes)
	if err != nil {
		return UploadRequest{}, err
	}
	if src == nil {
		return UploadRequest{}, badRequest("the multipart field file (the plugin.js) is required")
	}
	icon, err := formFile(r, "icon", MaxIconBytes)
	if err != nil {
		return UploadRequest{}, err
	}
	req := UploadRequest{Source: string(src), Icon: icon}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"activate", &req.Activate}, {"force", &req.Force}} {
		if *f.dst, err = formBool(r, f.name, false); err != nil {
			return UploadRequest{}, err
		}
	}
	enabled, err := formBool(r, "enabled", true)
	req.Enabled = &enabled
	return req, err
}

func formFile(r *http.Request, name string, max int64) ([]byte, error) {
	f, _, err := r.FormFile(name)
	if errors.Is(err, http.ErrMissingFile) {
		return nil, nil
	}
	if err != nil {
		return nil, badRequest("the multipart field %s could not be read", name)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, badRequest("the multipart field %s could not be read", name)
	}
	if int64(len(data)) > max {
		return nil, invalid(manifest.Problems{{Path: name, Message: fmt.Sprintf("is larger than %d bytes", max)}})
	}
	return data, nil
}

func formBool(r *http.Request, name string, def bool) (bool, error) {
	s := strings.TrimSpace(r.FormValue(name))
	if s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest("%s must be true or false, got %q", name, s)
	}
	return b, nil
}
