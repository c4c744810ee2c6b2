// Package providers is the catalog of upstream adapters: which adapter
// serves each channel type. It joins the adapters of internal/upstream with
// those that live in packages of their own, so adding a provider is its
// package plus one line here, and no edit to the relay.
package providers

import (
	"golang.org/x/net/http/httpguts"

	"github.com/turnpike-gw/turnpike/internal/upstream"
	"github.com/turnpike-gw/turnpike/internal/upstream/bedrock"
	"github.com/turnpike-gw/turnpike/internal/upstream/cohere"
	"github.com/turnpike-gw/turnpike/internal/upstream/vertex"
)

// own are the adapters with packages of their own.
var own = map[int]upstream.Adapter{
	upstream.TypeCohere: cohere.Adapter{},
	upstream.TypeVertex: vertex.Adapter{},
	upstream.TypeAWS:    bedrock.Adapter{},
}

// For returns the adapter of a channel type; ok is false for a type with no
// chat wire (a task carrier) or an unknown one.
func For(t int) (upstream.Adapter, bool) {
	if a, ok := own[t]; ok {
		return a, true
	}
	return upstream.Builtin(t)
}

// Known reports a channel type the gateway can hold: one with an adapter or
// a task carrier.
func Known(t int) bool {
	_, ok := For(t)
	return ok || upstream.IsTaskCarrier(t)
}

// Validate checks a channel's key and settings for its type when the
// channel is saved. A type claimed by a task plugin (claimed) is accepted
// even when the gateway has no adapter of its own for it.
func Validate(t upstream.Target, claimed bool) error {
	if err := validateCommon(t.Settings); err != nil {
		return err
	}
	if err := upstream.ValidateHTTP2(t); err != nil {
		return err
	}
	a, ok := For(t.Type)
	if !ok {
		if upstream.IsTaskCarrier(t.Type) || claimed {
			return nil
		}
		return upstream.SettingErrorf("type", "%d is not a channel type this gateway knows (see the channel types in the documentation)", t.Type)
	}
	if v, ok := a.(upstream.Validator); ok {
		return v.Validate(t)
	}
	return nil
}

// validateCommon checks the settings every type accepts (CONTRACT §9):
// path_prefix a string, headers an object of header names to strings
// (http2 is checked with the base_url it depends on).
func validateCommon(settings map[string]any) error {
	if v, ok := settings["path_prefix"]; ok {
		if _, isString := v.(string); !isString {
			return upstream.SettingErrorf("settings.path_prefix", "must be a path such as /api/v3")
		}
	}
	v, ok := settings["headers"]
	if !ok {
		return nil
	}
	hs, isObject := v.(map[string]any)
	if !isObject {
		return upstream.SettingErrorf("settings.headers", "must be an object of header names to values")
	}
	for name, val := range hs {
		if !httpguts.ValidHeaderFieldName(name) {
			return upstream.SettingErrorf("settings.headers", "has a name that is not a header name: %q", name)
		}
		s, isString := val.(string)
		if !isString || !httpguts.ValidHeaderFieldValue(s) {
			return upstream.SettingErrorf("settings.headers."+name, "must be a header value (text without line breaks)")
		}
	}
	return nil
}

// HoldsChatKey reports whether channels of type t carry a chat provider's
// key: every type with a chat adapter, derived from the catalog so that a
// type gaining an adapter is covered the day it does. A task plugin that
// lists such a type in channelTypes is only given a channel of it when an
// administrator says so on that channel.
func HoldsChatKey(t int) bool {
	_, ok := For(t)
	return ok
}
