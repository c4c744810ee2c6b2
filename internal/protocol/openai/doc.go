// Package openai converts the OpenAI-style Chat Completions wire format to and
// from the gateway IR: requests, regular responses, chat.completion.chunk
// streams, the error dialect, and the model-list bodies served under /v1.
//
// The codec is pure: it never performs I/O beyond the EventSink it is handed,
// and it imports nothing from the module except internal/ir and the Codec
// interface it implements.
package openai
