// Package gemini is the alternate-native codec: the generateContent and
// streamGenerateContent wire format, converted to and from the IR, plus the
// helpers the relay needs for the rest of that surface (countTokens,
// embeddings, the model list and its page tokens).
//
// Decoding accepts both camelCase and snake_case field names, as the REST API
// does; encoding always writes camelCase, which is what the SDKs send.
//
// What does not survive a conversion to another format, and why:
//
//   - safetySettings, labels and similar request knobs are dropped: they only
//     tune one provider's filters, the answer keeps its meaning without them.
//   - Built-in tools (googleSearch, codeExecution, urlContext, ...),
//     cachedContent, non-text responseModalities, speechConfig and
//     responseMimeType values other than text/plain and application/json are
//     kept out of the IR, because they change what the model does. The relay
//     must call [CheckConvertible] before converting a request to another
//     format; it answers 400 naming the field. Same-format passthrough is not
//     affected, as the raw body is forwarded.
//   - includeThoughts has no IR field: any reasoning request encoded for an
//     upstream of this format asks for thoughts, so other formats still see
//     the thinking they asked for.
//
// Thought signatures are opaque tokens that only the provider that minted
// them can verify. Signatures read from an upstream answer of this format are
// tagged in the IR (see sigPrefix) so that, when a client of another format
// replays the turn, the request encoder sends back exactly the signatures the
// provider produced and drops foreign ones that it would reject as corrupt.
// Replayed function calls without any signature get the provider's documented
// validator-skip sentinel, since newer models refuse such history outright.
package gemini
