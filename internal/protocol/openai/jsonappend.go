package openai

import "github.com/turnpike-gw/turnpike/internal/protocol"

// appendString appends s as a JSON string (see protocol.AppendJSONString).
func appendString(buf []byte, s string) []byte { return protocol.AppendJSONString(buf, s) }
