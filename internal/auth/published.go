package auth

import "github.com/turnpike-gw/turnpike/internal/config"

// The demo's credentials are published (README, `turnpike demo`), so
// anyone knows them: a gateway that is not the demo never accepts them
// (CONTRACT §16), even when its database came from a demo run or a seed
// file copied from the README.
const (
	DemoUser     = "demo"
	DemoPassword = "demo-password"
	DemoKey      = "sk-turnpike-demo-key"
)

// MinPasswordLen is the shortest password any account may have.
const MinPasswordLen = config.MinPasswordLen

// AllowDemoKey makes k accept the demo's published key; only `turnpike
// demo` does.
func (k *Keys) AllowDemoKey() { k.demo = true }
