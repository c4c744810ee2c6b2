package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestAStopDuringStartUpIsNotAFailure(t *testing.T) {
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		code int
		says string
	}{
		{"a stop signal arrived", stopped, 0, "stopped during start-up"},
		{"the start really failed", context.Background(), 1, "database is gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := startFailed(tc.ctx, &out, errors.New("database is gone")); code != tc.code || !strings.Contains(out.String(), tc.says) {
				t.Fatalf("code %d, said %q", code, out.String())
			}
		})
	}
}
