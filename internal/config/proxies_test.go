package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTrustedProxiesComeFromYAMLAndTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("trusted_proxies: [\"10.0.0.0/8\", \"192.168.1.5\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, func(string) string { return "" })
	if err != nil || !reflect.DeepEqual(cfg.TrustedProxies, []string{"10.0.0.0/8", "192.168.1.5"}) {
		t.Fatalf("from YAML: %v, %v", cfg.TrustedProxies, err)
	}
	env := map[string]string{"TURNPIKE_TRUSTED_PROXIES": " 172.16.0.0/12, fd00::/8,"}
	cfg, err = Load(path, func(k string) string { return env[k] })
	if err != nil || !reflect.DeepEqual(cfg.TrustedProxies, []string{"172.16.0.0/12", "fd00::/8"}) {
		t.Fatalf("from the environment: %v, %v", cfg.TrustedProxies, err)
	}
	if d := Defaults(); len(d.TrustedProxies) != 0 {
		t.Fatalf("trusted by default: %v", d.TrustedProxies)
	}
	env["TURNPIKE_TRUSTED_PROXIES"] = "10.0.0.0/8,nginx"
	if _, err := Load("", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), `"nginx"`) {
		t.Fatalf("a proxy that is not an address: %v", err)
	}
}
