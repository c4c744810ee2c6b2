package task

import (
	"net/netip"

	"github.com/turnpike-gw/turnpike/internal/guardfetch"
)

// privateAddr is guardfetch.PrivateAddr: the addresses a credentialless
// content request never reaches.
func privateAddr(a netip.Addr) bool { return guardfetch.PrivateAddr(a) }
