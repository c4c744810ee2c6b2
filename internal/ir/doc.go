// Package ir is the gateway's internal representation of a model call: one
// request, response, stream-event and usage vocabulary that every wire codec
// converts to and from. It imports nothing else from the module, so codecs can
// depend on it without depending on each other.
package ir
