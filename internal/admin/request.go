package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// maxBody bounds every request body: admin objects are small, and an
// unbounded read would let one client exhaust memory.
const maxBody = 1 << 20

// fields is a decoded JSON object whose members are decoded one by one, so
// that every error can name the member that was wrong.
type fields map[string]json.RawMessage

// readFields reads the request body as one JSON object whose members must
// all be in allowed.
func readFields(w http.ResponseWriter, r *http.Request, allowed ...string) (fields, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	return parseFields(data, allowed)
}

// parseFields decodes data as a single JSON object and rejects members that
// are not in allowed.
func parseFields(data []byte, allowed []string) (fields, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var f fields
	if err := dec.Decode(&f); err != nil || f == nil {
		return nil, badRequest("the request body must be a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badRequest("the request body must hold exactly one JSON object")
	}
	var unknown []string
	for name := range f {
		if !slices.Contains(allowed, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badRequest("unknown field %s; allowed fields are %s", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return f, nil
}

// has reports whether the member was sent at all.
func (f fields) has(name string) bool {
	_, ok := f[name]
	return ok
}

// isNull reports whether the member was sent as null.
func (f fields) isNull(name string) bool {
	return string(bytes.TrimSpace(f[name])) == "null"
}

// get decodes a member into dst when present and reports whether it was.
// null is refused: a client that sends it means something, and silently
// keeping the old value would hide that.
func get[T any](f fields, name string, dst *T) (bool, error) {
	raw, ok := f[name]
	if !ok {
		return false, nil
	}
	if f.isNull(name) {
		return true, badField(name, "must not be null")
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return true, badField(name, "must be %s", describe(dst))
	}
	*dst = v
	return true, nil
}

// getList decodes a list member; null means the empty list.
func getList(f fields, name string, dst *[]string) (bool, error) {
	if f.has(name) && f.isNull(name) {
		*dst = []string{}
		return true, nil
	}
	ok, err := get(f, name, dst)
	if ok && err == nil && *dst == nil {
		*dst = []string{}
	}
	return ok, err
}

func describe(dst any) string {
	switch dst.(type) {
	case *string:
		return "a string"
	case *int, *int64:
		return "an integer"
	case *float64:
		return "a number"
	case *bool:
		return "true or false"
	case *[]string:
		return "a list of strings"
	case *map[string]string:
		return "an object whose values are strings"
	case *map[string]any:
		return "an object"
	}
	return "of the right type"
}

// parseID reads a positive numeric path id.
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("id must be a positive integer, got %q", s)
	}
	return id, nil
}

func pathID(r *http.Request) (int64, error) { return parseID(r.PathValue("id")) }

// queryID reads an optional numeric filter; absent is zero.
func queryID(r *http.Request, name string) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0, badRequest("%s must be a non-negative integer, got %q", name, s)
	}
	return id, nil
}

const (
	defaultPageSize = 20
	maxPageSize     = 1000
	// maxPage keeps (page-1)*page_size far inside every integer the
	// databases take for OFFSET; a larger page would wrap around.
	maxPage = 1_000_000
)

// parsePage reads ?page= and ?page_size=; both are optional.
func parsePage(r *http.Request) (store.Page, error) {
	p := store.Page{Page: 1, PageSize: defaultPageSize}
	q := r.URL.Query()
	for _, it := range []struct {
		name string
		dst  *int
	}{{"page", &p.Page}, {"page_size", &p.PageSize}} {
		s := q.Get(it.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, badRequest("%s must be a positive integer, got %q", it.name, s)
		}
		*it.dst = n
	}
	if p.Page > maxPage {
		return p, badRequest("page must be at most %d, got %d", maxPage, p.Page)
	}
	p.PageSize = min(p.PageSize, maxPageSize)
	return p, nil
}

// pageOf slices an in-memory list the way the store pages its queries.
func pageOf[T any](all []T, p store.Page) []T {
	start := (p.Page - 1) * p.PageSize
	if start >= len(all) || start < 0 {
		return []T{}
	}
	return all[start:min(start+p.PageSize, len(all))]
}

// parseExpiry reads expires_at: null, "" or a non-positive number mean
// never; otherwise an RFC 3339 time or Unix seconds.
func parseExpiry(raw json.RawMessage) (*time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, badField("expires_at", "must be an RFC 3339 time such as 2030-01-02T15:04:05Z, or null")
		}
		return checkExpiry(t)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, badField("expires_at", "must be an RFC 3339 time, Unix seconds, or null")
	}
	if n <= 0 {
		return nil, nil
	}
	if n > maxExpiry.Unix() {
		return nil, badField("expires_at", "is too far in the future")
	}
	return checkExpiry(time.Unix(n, 0))
}

// maxExpiry is the last instant every database and JSON can hold.
var maxExpiry = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

func checkExpiry(t time.Time) (*time.Time, error) {
	t = t.UTC()
	if t.After(maxExpiry) || t.Year() < 1970 {
		return nil, badField("expires_at", "must be between 1970 and 9999")
	}
	return &t, nil
}

// checkName validates a human-chosen name (username, token or channel name).
func checkName(field, s string, maxLen int) error {
	if s == "" || strings.TrimSpace(s) != s {
		return badField(field, "must be non-empty without leading or trailing spaces")
	}
	if len(s) > maxLen {
		return badField(field, "must be at most %d bytes", maxLen)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return badField(field, "must not contain control characters")
		}
	}
	return nil
}

func checkStatus(s string) error {
	if s != store.StatusEnabled && s != store.StatusDisabled {
		return badField("status", "must be %q or %q", store.StatusEnabled, store.StatusDisabled)
	}
	return nil
}
