// Shared settings and checks for the compatibility tests. Every test reads the
// gateway from the environment so the same files run against the Go harness
// (internal/compat) and against any running gateway.
import assert from 'node:assert/strict';

/** Gateway origin without a trailing slash, e.g. http://127.0.0.1:3000. */
export const gatewayURL = (process.env.TURNPIKE_URL ?? '').replace(/\/+$/, '');
/** A valid API key of the gateway. */
export const apiKey = process.env.TURNPIKE_KEY ?? '';
/** A key the gateway must refuse. */
export const badKey = process.env.TURNPIKE_BAD_KEY || 'sk-turnpike-compat-not-a-key';
/** One model per upstream channel kind; every SDK test runs once per model. */
export const models = (process.env.TURNPIKE_MODELS || 'up-openai,up-anthropic,up-gemini')
  .split(',').map((s) => s.trim()).filter(Boolean);
/** A model name no channel serves. */
export const missingModel = 'turnpike-compat-no-such-model';

// With TURNPIKE_FAKES=1 the models are served by the deterministic fake
// upstreams of internal/compat, so answers and usage are checked exactly;
// otherwise (a real provider behind the gateway) only their shape is.
export const fakes = process.env.TURNPIKE_FAKES === '1';
const FAKE_USAGE = { input: 21, output: 9 };

/** Reason to skip everything when no gateway is configured, else false. */
export const skip = gatewayURL && apiKey ? false : 'set TURNPIKE_URL and TURNPIKE_KEY to run the compatibility tests';

/** Per-request time limit; the fakes answer in milliseconds. */
export const timeoutMs = Number(process.env.TURNPIKE_TIMEOUT_MS || 20000);

export const HELLO_PROMPT = 'Say hello.';
export const WEATHER_PROMPT = 'What is the weather in Paris? Use the get_weather tool.';
export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather of a city',
  schema: {
    type: 'object',
    properties: { city: { type: 'string', description: 'City name' } },
    required: ['city'],
  },
};
/** What the client's tool "returns"; the final answer must use it. */
export const WEATHER_RESULT = { city: 'Paris', forecast: 'sunny', temp_c: 21 };

/** The upstream kind a fake model stands for: up-openai -> openai. */
export function kindOf(model) {
  return model.replace(/^up-/, '');
}

/** Checks a plain answer to HELLO_PROMPT. */
export function assertHello(text, model) {
  assert.equal(typeof text, 'string', 'answer text is a string');
  if (fakes) {
    assert.equal(text, `Hello from the ${kindOf(model)} upstream.`);
  } else {
    assert.ok(text.trim().length > 0, 'answer text is not empty');
  }
}

/** Checks the answer given after the tool result was sent back. */
export function assertWeatherAnswer(text) {
  assert.equal(typeof text, 'string', 'final answer is text');
  if (fakes) {
    // The fakes answer "Weather report: <tool result>", so the result's
    // values must have reached the upstream intact.
    assert.match(text, /^Weather report: /);
    assert.match(text, /sunny/);
    assert.match(text, /21/);
  } else {
    assert.ok(text.trim().length > 0, 'final answer is not empty');
  }
}

/** Checks the tool-call arguments the model produced. */
export function assertWeatherArgs(args) {
  const parsed = typeof args === 'string' ? JSON.parse(args) : args;
  if (fakes) {
    assert.deepEqual(parsed, { city: 'Paris' });
  } else {
    assert.equal(typeof parsed.city, 'string');
  }
}

/** Checks reported token usage; with the fakes it must be exactly theirs. */
export function assertUsage(input, output, where = 'usage') {
  if (fakes) {
    assert.deepEqual({ input, output }, FAKE_USAGE, `${where}: the upstream's usage is passed on unchanged`);
  } else {
    assert.ok(input > 0 && output > 0, `${where}: input and output token counts are positive`);
  }
}

// Parameter mapping: a system prompt, a three-turn history ("Hi", "Hello!",
// SETTINGS_PROMPT) and sampling parameters, which the fakes echo back exactly
// as they received them. Temperature and top_p go in separate requests: the
// gateway documents that it drops top_p when both are sent to an
// Anthropic-type channel, because newer models refuse the pair.
export const SYSTEM_PROMPT = 'Be terse.';
export const SETTINGS_PROMPT = 'Echo the settings.';
export const SETTINGS = { maxTokens: 77, stop: ['END'] };
/** The two sampling variants each settings test sends. */
export const SAMPLING = [{ temperature: 0.5 }, { topP: 0.9 }];

/** Checks the answer to SETTINGS_PROMPT sent with one SAMPLING variant. */
export function assertSettings(text, sampling) {
  assert.equal(typeof text, 'string', 'answer text is a string');
  if (fakes) {
    assert.equal(text, `Settings: system="${SYSTEM_PROMPT}" turns=3 max_tokens=${SETTINGS.maxTokens} `
      + `temperature=${sampling.temperature ?? '-'} top_p=${sampling.topP ?? '-'} stop=${SETTINGS.stop.join('|')}`);
  } else {
    assert.ok(text.trim().length > 0, 'answer text is not empty');
  }
}

// A 1×1 PNG, sent inline as base64.
export const IMAGE_PROMPT = 'Describe the image.';
export const IMAGE_MIME = 'image/png';
export const IMAGE_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

/** Checks the answer to IMAGE_PROMPT: the image reached the upstream intact. */
export function assertImage(text) {
  assert.equal(typeof text, 'string', 'answer text is a string');
  if (fakes) {
    assert.equal(text, `Image: ${IMAGE_MIME}, ${Buffer.from(IMAGE_BASE64, 'base64').length} bytes.`);
  } else {
    assert.ok(text.trim().length > 0, 'answer text is not empty');
  }
}

// Only the fakes can be asked to fail: they answer 500 in their dialect.
export const FAIL_PROMPT = 'Please fail with a server error.';

/** An upstream failure after retries is 502, 503 or 504 (CONTRACT.md §6). */
export function assertUpstreamFailure(status) {
  assert.ok([502, 503, 504].includes(status), `status ${status} is 502, 503 or 504`);
}

// Only the fakes can be asked to stall: after the first delta of this answer
// they pause for 600 ms, so a gateway that buffers the stream delivers every
// delta at once.
export const SLOW_PROMPT = 'Send a slow stream, please.';

/**
 * Checks that streamed text arrived in pieces over time: the first delta
 * reached the client well before the last one.
 * @param {number[]} times arrival times (ms) of the non-empty text deltas
 */
export function assertNotBuffered(times) {
  assert.ok(times.length >= 2, `several text deltas arrived (got ${times.length})`);
  const spread = times.at(-1) - times[0];
  assert.ok(spread >= 400, `the first delta arrived ${Math.round(spread)} ms before the last; `
    + 'under 400 ms means the gateway held the stream back until the upstream finished');
}

/**
 * The model an endpoint other than chat is tested with, from
 * TURNPIKE_MODEL_<NAME> (the Go harness sets one per endpoint); '' when
 * unset, which skips that endpoint's tests.
 */
export function endpointModel(name) {
  return process.env[`TURNPIKE_MODEL_${name}`] ?? '';
}

/** Skip reason for an endpoint test whose model is not configured. */
export function needs(...names) {
  if (skip) return skip;
  const missing = names.filter((n) => !endpointModel(n));
  return missing.length ? `set ${missing.map((n) => `TURNPIKE_MODEL_${n}`).join(', ')}` : false;
}

/** A short mono 16-bit WAV of silence: 44 header bytes and 800 data bytes. */
export function wavAudio() {
  const data = Buffer.alloc(800);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(8000, 24);
  h.writeUInt32LE(16000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** The audio the fake speech upstream sends: 40000 bytes, byte i = i*7 mod 251. */
export function fakeSpeechAudio() {
  const b = Buffer.alloc(40000);
  for (let i = 0; i < b.length; i++) b[i] = (i * 7) % 251;
  return b;
}

/** Checks an error from a key whose user has no quota left: 402, or 429 as RateLimitError. */
export function assertOutOfQuota(err, RateLimitError) {
  assert.ok([402, 429].includes(err.status), `got ${err.constructor.name} ${err.status}: ${err.message}`);
  if (err.status === 429) assert.ok(err instanceof RateLimitError, `a 429 is a RateLimitError, got ${err.constructor.name}`);
}
