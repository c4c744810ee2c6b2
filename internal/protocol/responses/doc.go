// Package responses converts the OpenAI Responses API (POST /v1/responses)
// to and from the gateway's IR, so that a Responses client can be served by
// a channel that only speaks a chat format. Requests decode into an
// ir.Request plus the fields a Response object echoes back; IR answers and
// IR stream events encode into a Response object and the Responses event
// stream. Channels that speak the Responses API themselves are relayed
// untouched; for them this package only reads usage and ids.
package responses
