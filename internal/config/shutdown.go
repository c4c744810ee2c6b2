package config

import (
	"fmt"
	"time"
)

// DefaultShutdownGrace is how long calls in flight may finish after a stop
// signal before open streams are ended (CONTRACT §22).
const DefaultShutdownGrace = 30

func init() {
	envVars = append(envVars, envVar{"TURNPIKE_SHUTDOWN_GRACE_SECONDS",
		decimal("TURNPIKE_SHUTDOWN_GRACE_SECONDS", func(c *Config) *float64 { return &c.ShutdownGraceSeconds })})
}

// ShutdownGrace is the grace as a duration; nil settings (zero) take the
// default, so configurations built without Defaults keep it.
func (c *Config) ShutdownGrace() time.Duration {
	if c.ShutdownGraceSeconds == 0 && !c.shutdownGraceSet {
		return DefaultShutdownGrace * time.Second
	}
	return time.Duration(c.ShutdownGraceSeconds * float64(time.Second))
}

func (c *Config) validateShutdown() []string {
	if c.ShutdownGraceSeconds < 0 {
		return []string{fmt.Sprintf("shutdown_grace_seconds (TURNPIKE_SHUTDOWN_GRACE_SECONDS) is %v; it must not be negative", c.ShutdownGraceSeconds)}
	}
	return nil
}
