package plugin

import (
	"fmt"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
)

// Error is a refusal of the registry that the admin API shows as is: a status,
// a stable code, a message that is safe to show, and for validation or
// conflict failures every problem found.
type Error struct {
	Status   int
	Code     string
	Message  string
	Problems manifest.Problems
}

func (e *Error) Error() string {
	if len(e.Problems) > 0 {
		return e.Message + ": " + e.Problems.Error()
	}
	return e.Message
}

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(problems manifest.Problems) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "plugin_invalid",
		Message: fmt.Sprintf("the plugin is not valid (%d problem(s))", len(problems)), Problems: problems}
}

// conflict refuses an upload that clashes with installed plugins. It is a
// 400 listing every problem, like a validation failure: the contract lists
// pre-flight conflicts among the upload checks.
func conflict(problems manifest.Problems) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "plugin_conflict",
		Message: "the plugin conflicts with installed plugins; resolve the conflict, or repeat the call with force to keep it held back", Problems: problems}
}

func pluginNotFound(key string) *Error {
	return errorf(http.StatusNotFound, "not_found", "plugin %q is not installed", key)
}

func versionNotFound(key, version string) *Error {
	return errorf(http.StatusNotFound, "not_found", "plugin %q has no version %q", key, version)
}
