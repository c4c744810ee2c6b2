package taskhttp

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// FuzzProgressPercent reads any stored progress text (plugins write it) as
// an integer in 0–100.
func FuzzProgressPercent(f *testing.F) {
	for _, seed := range []string{"45%", "45", "12.5%", "", "NaN", "-3", "1e400", "Inf%", " 99 % "} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, progress string) {
		for _, status := range []string{task.StatusInProgress, task.StatusSuccess} {
			got := progressPercent(&task.Task{Task: store.Task{Status: status, Progress: progress}})
			if got < 0 || got > 100 || (status == task.StatusSuccess && got != 100) {
				t.Fatalf("progressPercent(%q, %s) = %d", progress, status, got)
			}
		}
	})
}

func TestProgressPercentReadsTheStoredForms(t *testing.T) {
	tests := []struct {
		progress string
		want     int
	}{{"45%", 45}, {"45", 45}, {"12.5%", 12}, {"", 0}, {"NaN", 0}, {"-3", 0}, {"250%", 100}}
	for _, tc := range tests {
		if got := progressPercent(&task.Task{Task: store.Task{Status: task.StatusInProgress, Progress: tc.progress}}); got != tc.want {
			t.Errorf("progressPercent(%q) = %d, want %d", tc.progress, got, tc.want)
		}
	}
}
