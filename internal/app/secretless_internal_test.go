package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// A gateway whose records lack their secrets (an import made without
// them) says so at start instead of starting half-broken in silence.
func TestStartWarnsAboutRecordsLeftWithoutSecrets(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	cfg.RootPassword = "root-password-1"
	cfg.Channels = []config.SeedChannel{{Name: "keyless", Type: "openai", BaseURL: "http://127.0.0.1:9", Models: []string{"m"}}}
	var logs bytes.Buffer
	ctx := context.Background()
	a, err := New(ctx, cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer a.shutdown()
	if _, err := a.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "channels without a provider key") || !strings.Contains(logs.String(), "channels=1") {
		t.Errorf("start log lacks the keyless channel:\n%s", logs.String())
	}
	if _, err := a.sql.DB().Exec("INSERT INTO tokens (user_id, name, key_hash, key_masked, quota, used_quota, models, status, created_at) VALUES (1, 'imported', 'exported-without-secret:9', '', -1, 0, '[]', 'enabled', CURRENT_TIMESTAMP)"); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	a.warnSecretless(ctx)
	if !strings.Contains(logs.String(), "API keys without a secret") || !strings.Contains(logs.String(), "keys=1") {
		t.Errorf("log lacks the imported key:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "users without a password") {
		t.Errorf("warned about users though every user has a password:\n%s", logs.String())
	}
}
