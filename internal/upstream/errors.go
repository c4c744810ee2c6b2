package upstream

import (
	"fmt"
	"io"
	"net/http"
)

// SettingError is a channel's key or settings refused when it is saved:
// Field names what to fix ("settings.region", "key").
type SettingError struct {
	Field   string
	Message string
}

func (e *SettingError) Error() string { return e.Field + " " + e.Message }

func settingError(field, format string, args ...any) error {
	return &SettingError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// SettingErrorf is a SettingError for provider packages.
func SettingErrorf(field, format string, args ...any) error {
	return settingError(field, format, args...)
}

// maxListBody bounds a model-list answer.
const maxListBody = 8 << 20

// fetch sends a side request (a model list) and returns its 2xx body; any
// other answer is an error naming the status, never the body, which could
// echo the credentials.
func fetch(t Target, req *http.Request) ([]byte, error) {
	resp, err := NoRedirects(t.HTTP()).Do(req)
	if err != nil {
		return nil, fmt.Errorf("the provider could not be reached: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, fmt.Errorf("the provider answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxListBody))
}

// Fetch is fetch for provider packages.
func Fetch(t Target, req *http.Request) ([]byte, error) { return fetch(t, req) }
