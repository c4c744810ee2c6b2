// Package openai converts the OpenAI-style Chat Completions wire format to and
// from the gateway IR: requests, regular responses, chat.completion.chunk
// streams, the error dialect, and the model-list bodies served under /v1.
//
// Conversions that are deliberately not one-to-one:
//   - system and developer messages are all hoisted into Request.System,
//     because the other formats only have a top-level system prompt;
//   - consecutive tool messages become one RoleTool message;
//   - a file_id travels as Media.URL with the "openai-file:" prefix;
//   - upstream requests leave out top_k, metadata and assistant reasoning,
//     which the API rejects or ignores, and always ask for stream usage;
//   - max_tokens is sent as max_completion_tokens to the reasoning model
//     families that refuse the older name.
//
// The codec is pure: it never performs I/O beyond the EventSink it is handed,
// and it imports nothing from the module except internal/ir and the Codec
// interface it implements.
package openai
