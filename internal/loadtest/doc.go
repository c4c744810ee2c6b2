// Package loadtest measures the gateway against a bare reverse proxy. It
// re-executes its own binary as three loopback servers — a fast fake
// OpenAI-compatible upstream, an httputil.ReverseProxy baseline and the
// gateway with billing and logging on — so that the CPU time of each proxy
// can be read per process from /proc, then drives the same closed-loop load
// through both proxies and reports throughput, latency, CPU per request
// and, for paced streams, how late chunks arrive.
package loadtest
