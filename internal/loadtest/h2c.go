package loadtest

import (
	"flag"
	"net/http"
	"os"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// H2CEnv names the environment variable that tells every child of a run
// with -upstream-h2c to speak HTTP/2 without TLS between proxy and
// upstream: the fake upstream accepts only h2c, the bare proxy's transport
// and the gateway's bench channel (settings.http2 prior_knowledge) speak it.
// Clients still reach both proxies over HTTP/1.1.
const H2CEnv = "TURNPIKE_LOAD_UPSTREAM_H2C"

// registerH2CFlag adds -upstream-h2c to the load tool's flags.
func registerH2CFlag(fs *flag.FlagSet, o *Options) {
	fs.BoolVar(&o.UpstreamH2C, "upstream-h2c", false,
		"proxy and gateway speak HTTP/2 without TLS (h2c, prior knowledge) to the fake upstream, as to a provider over HTTP/2: "+
			"open streams share a few upstream connections instead of one file descriptor each (for -many-conns above ~9,000 under a 20,000 fd limit)")
}

// h2cEnv is the environment a run's children get for o.
func h2cEnv(o Options) []string {
	if !o.UpstreamH2C {
		return nil
	}
	return []string{H2CEnv + "=1"}
}

// upstreamH2C reports a child of a run with -upstream-h2c.
func upstreamH2C() bool { return os.Getenv(H2CEnv) == "1" }

// h2cOnlyServer makes the fake upstream's server accept HTTP/2 without TLS
// only, so a proxy that fell back to HTTP/1 fails the run instead of
// measuring the wrong thing.
func h2cOnlyServer(srv *http.Server) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv.Protocols = &p
}

// baselineTransport is the bare proxy's transport: the gateway's pool
// sizes, and h2c in a run with -upstream-h2c, as the gateway's channel.
func baselineTransport(tr *http.Transport) http.RoundTripper {
	if !upstreamH2C() {
		return tr
	}
	return upstream.H2CTransport(tr)
}

// benchChannelSettings are the bench channel's settings in a gateway child.
func benchChannelSettings() map[string]any {
	if !upstreamH2C() {
		return nil
	}
	return map[string]any{"http2": upstream.HTTP2PriorKnowledge}
}
