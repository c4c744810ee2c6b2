// A server-sent-events reader for fetch() bodies. EventSource cannot send a
// POST body, so the playground reads the stream itself.

/**
 * SSEParser splits text chunks into events. Chunks may cut a line or an
 * event anywhere; push keeps the remainder until the rest arrives.
 */
export class SSEParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buf = "";
    this.data = [];
    this.event = "";
  }

  push(text) {
    this.buf += text;
    let nl;
    while ((nl = this.buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buf.slice(0, nl);
      const sepLen = this.buf.startsWith("\r\n", nl) ? 2 : 1;
      // A lone \r at the very end may be the first half of \r\n.
      if (sepLen === 1 && this.buf[nl] === "\r" && nl === this.buf.length - 1) break;
      this.buf = this.buf.slice(nl + sepLen);
      this.line(line);
    }
  }

  line(line) {
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
  }

  dispatch() {
    if (this.data.length) this.onEvent({ event: this.event || "message", data: this.data.join("\n") });
    this.data = [];
    this.event = "";
  }

  /** end flushes an event that was not followed by a blank line. */
  end() {
    if (this.buf) this.line(this.buf);
    this.buf = "";
    this.dispatch();
  }
}

/**
 * readChatStream reads an OpenAI-style chat stream and calls onDelta with
 * each piece of answer text. It resolves with the usage of the final chunk
 * (or null). A stream-level error object is thrown.
 */
export async function readChatStream(body, onDelta) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let usage = null;
  let failure = null;
  let done = false;
  const parser = new SSEParser(({ data }) => {
    if (done || failure) return;
    if (data.trim() === "[DONE]") {
      done = true;
      return;
    }
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (chunk.error) {
      failure = new Error(chunk.error.message || "the stream failed");
      return;
    }
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
    if (delta && typeof delta.content === "string" && delta.content) onDelta(delta.content);
  });
  for (;;) {
    const { value, done: eof } = await reader.read();
    if (eof) break;
    parser.push(value);
    if (failure) break;
  }
  parser.end();
  if (failure) throw failure;
  return usage;
}
