package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/demo"
)

// The demo's credentials are fixed so the README can show them; demo mode
// is for trying the gateway, not for production.
const (
	demoUser     = auth.DemoUser
	demoPassword = auth.DemoPassword
	demoKey      = auth.DemoKey
	demoModel    = "demo-chat"
	demoDatabase = "sqlite:./data/demo.db"
)

type demoUpstream struct {
	srv  *http.Server
	addr string
}

// startDemo starts the built-in upstream on a loopback port and adds the
// demo channel, user, key and price to the seed.
func startDemo(cfg *config.Config) (*demoUpstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo upstream: %w", err)
	}
	up := &demo.Upstream{Delay: 40 * time.Millisecond}
	d := &demoUpstream{srv: &http.Server{Handler: up.Handler(), ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String()}
	go func() { _ = d.srv.Serve(ln) }()
	unlimited := int64(-1)
	weight := 1
	if cfg.Groups == nil {
		cfg.Groups = map[string]float64{}
	}
	if _, ok := cfg.Groups["default"]; !ok {
		cfg.Groups["default"] = 1
	}
	cfg.Users = append(cfg.Users, config.SeedUser{Username: demoUser, Password: demoPassword, Role: "user", Group: "default", Quota: 50_000_000})
	cfg.Tokens = append(cfg.Tokens, config.SeedToken{Name: "demo-key", User: demoUser, Key: demoKey, Quota: &unlimited})
	// The upstream's port changes each start; the seed upserts the channel
	// by name so the address is kept current.
	cfg.Channels = append(cfg.Channels, config.SeedChannel{Name: "demo", Type: "openai", BaseURL: "http://" + d.addr,
		Key: "demo-upstream-key", Models: []string{demoModel}, Groups: []string{"default"}, Weight: &weight, Status: "enabled"})
	if cfg.Models == nil {
		cfg.Models = map[string]config.SeedPrice{}
	}
	cfg.Models[demoModel] = config.SeedPrice{InputPerMTok: 0.5, OutputPerMTok: 1.5}
	return d, nil
}

func (d *demoUpstream) announce(w io.Writer, addr string) {
	fmt.Fprintf(w, `
Demo mode: a built-in upstream serves model %q.
  Console:  %s/   (log in as %s / %s)
  API key:  %s
  Try it:   curl %s/v1/chat/completions -H "Authorization: Bearer %s" \
              -H "Content-Type: application/json" \
              -d '{"model":"%s","messages":[{"role":"user","content":"Hello"}]}'
`, demoModel, addr, demoUser, demoPassword, demoKey, addr, demoKey, demoModel)
}

// Close stops the demo upstream.
func (d *demoUpstream) Close() { _ = d.srv.Close() }
