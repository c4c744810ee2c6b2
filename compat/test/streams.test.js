// What each official client sees of CONTRACT §22: a stream the upstream cuts
// off raises an exception (never a clean end), a stream continued on another
// channel ends normally with the whole text, and a repeated request is
// answered from the response cache with identical content and the
// X-Turnpike-Cache header. The OpenAI client is driven twice: on chat
// completions and on the Responses API (client.responses, as Codex CLI
// uses it), which the gateway serves by conversion here. internal/compat (TestOfficialClientsOnStreams)
// runs it against its own gateway and fakes; elsewhere it skips.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import * as env from '../lib/env.js';

const skip = process.env.TURNPIKE_STREAMS === '1' ? env.skip : 'run by internal/compat TestOfficialClientsOnStreams';
const CUT = 'trust-cut';
const FAILOVER = 'trust-failover';
const CACHED = 'trust-cached';
// The fakes' answers: the cut stream delivers PARTIAL then breaks; the
// failover's second channel continues with REST.
const PARTIAL = 'The first half ';
const REST = 'and the second half.';
const prompt = 'Tell me a story.';

const openai = () => new OpenAI({ apiKey: env.apiKey, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
const anthropic = () => new Anthropic({ apiKey: env.apiKey, baseURL: env.gatewayURL, maxRetries: 0, timeout: env.timeoutMs });
const google = () => new GoogleGenAI({ vertexai: false, apiKey: env.apiKey,
  httpOptions: { baseUrl: env.gatewayURL, timeout: env.timeoutMs, retryOptions: { attempts: 1 } } });

// Each client streams model's answer and returns its text, or throws what
// the client library raised.
const streams = {
  async openai(model) {
    let text = '';
    const stream = await openai().chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: prompt }] });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    return text;
  },
  async anthropic(model) {
    const stream = anthropic().messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: prompt }] });
    const msg = await stream.finalMessage();
    return msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  },
  async google(model) {
    let text = '';
    const stream = await google().models.generateContentStream({ model, contents: prompt });
    for await (const chunk of stream) text += chunk.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '';
    return text;
  },
  // The library yields response.failed as a typed event rather than
  // raising it (it raises the error event); a Responses client acts on
  // it as Codex does, and a stream without response.completed is never
  // taken for a whole one.
  async responses(model) {
    let text = '';
    let completed = false;
    const stream = await openai().responses.create({ model, stream: true, store: false, input: prompt });
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.failed') throw new Error(event.response.error.message);
      if (event.type === 'response.completed') completed = true;
    }
    if (!completed) throw new Error('the stream ended without response.completed');
    return text;
  },
};

// Each client asks model once without streaming and returns the text and
// the gateway's cache header.
const answers = {
  async openai(model) {
    const { data, response } = await openai().chat.completions
      .create({ model, messages: [{ role: 'user', content: prompt }] }).withResponse();
    return { text: data.choices[0].message.content, cache: response.headers.get('x-turnpike-cache') };
  },
  async anthropic(model) {
    const { data, response } = await anthropic().messages
      .create({ model, max_tokens: 256, messages: [{ role: 'user', content: prompt }] }).withResponse();
    return { text: data.content.map((b) => b.text).join(''), cache: response.headers.get('x-turnpike-cache') };
  },
  async google(model) {
    const res = await google().models.generateContent({ model, contents: prompt });
    const headers = res.sdkHttpResponse?.headers ?? {};
    return { text: res.text, cache: headers['x-turnpike-cache'] ?? null };
  },
  // store: false: a response the client may fetch or continue by id is
  // never answered from the cache.
  async responses(model) {
    const { data, response } = await openai().responses.create({ model, store: false, input: prompt }).withResponse();
    return { text: data.output_text, cache: response.headers.get('x-turnpike-cache') };
  },
};

describe('Streams you can trust', { skip }, () => {
  for (const client of Object.keys(streams)) {
    describe(`${client} client`, () => {
      test('a stream the upstream cuts off raises an exception', async () => {
        await assert.rejects(streams[client](CUT), (err) => {
          // The client library's own API error, carrying the gateway's
          // message: the dialect's error event, not a dropped connection.
          assert.ok(err instanceof Error, `raised ${err}`);
          assert.match(String(err.message), /broke off/, `${err.constructor.name}: ${err.message}`);
          return true;
        });
      });

      test('a stream continued on another channel ends normally with the whole text', async () => {
        assert.equal(await streams[client](FAILOVER), PARTIAL + REST);
      });

      test('a repeated request is answered from the cache with identical content', async () => {
        const first = await answers[client](CACHED);
        const second = await answers[client](CACHED);
        assert.equal(first.cache, 'miss');
        assert.equal(second.cache, 'hit');
        assert.equal(second.text, first.text);
        assert.ok(first.text.length > 0);
        // A hit streams too, when asked to, with the same text.
        assert.equal(await streams[client](CACHED), first.text);
      });
    });
  }
});
