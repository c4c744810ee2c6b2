// The official Anthropic SDK against the gateway's /v1/messages surface, once
// per upstream channel kind. The SDK takes the origin and appends /v1/messages.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import * as env from '../lib/env.js';

function client(key = env.apiKey) {
  return new Anthropic({ apiKey: key, baseURL: env.gatewayURL, maxRetries: 0, timeout: env.timeoutMs });
}

const tools = [{ name: env.WEATHER_TOOL.name, description: env.WEATHER_TOOL.description, input_schema: env.WEATHER_TOOL.schema }];
const hello = [{ role: 'user', content: env.HELLO_PROMPT }];
const weather = [{ role: 'user', content: env.WEATHER_PROMPT }];

function textOf(message) {
  return message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
}

/** Checks that err is the SDK's typed error with the messages error envelope. */
function assertTyped(err, Type, status) {
  assert.ok(err instanceof Type, `got ${err.constructor.name}: ${err.message}`);
  assert.equal(err.status, status);
  assert.equal(err.error?.type, 'error', 'the body is the messages error envelope');
  assert.equal(typeof err.error?.error?.type, 'string', 'the envelope names an error type');
  return true;
}

describe('Anthropic SDK', { skip: env.skip }, () => {
  for (const model of env.models) {
    describe(`via ${model}`, () => {
      test('messages.create returns a message with text, stop reason and usage', async () => {
        const msg = await client().messages.create({ model, max_tokens: 64, messages: hello });
        assert.equal(msg.type, 'message');
        assert.equal(msg.role, 'assistant');
        assert.equal(msg.model, model, 'the client-facing model name is echoed');
        assert.ok(msg.id, 'the message has an id');
        assert.equal(msg.content[0]?.type, 'text');
        env.assertHello(textOf(msg), model);
        assert.equal(msg.stop_reason, 'end_turn');
        env.assertUsage(msg.usage.input_tokens, msg.usage.output_tokens);
      });

      test('messages.stream emits text events that add up to the final message', async () => {
        const stream = client().messages.stream({ model, max_tokens: 64, messages: hello });
        let text = '';
        let deltas = 0;
        stream.on('text', (delta) => { text += delta; deltas++; });
        const msg = await stream.finalMessage();
        env.assertHello(text, model);
        assert.equal(textOf(msg), text);
        assert.ok(deltas >= 2, `the answer arrives in several text deltas (got ${deltas})`);
        assert.equal(msg.stop_reason, 'end_turn');
        env.assertUsage(msg.usage.input_tokens, msg.usage.output_tokens, 'stream usage');
      });

      test('system prompt, history and sampling parameters reach the upstream', async () => {
        for (const sampling of env.SAMPLING) {
          const msg = await client().messages.create({
            model,
            system: env.SYSTEM_PROMPT,
            max_tokens: env.SETTINGS.maxTokens,
            temperature: sampling.temperature,
            top_p: sampling.topP,
            stop_sequences: env.SETTINGS.stop,
            messages: [
              { role: 'user', content: 'Hi' },
              { role: 'assistant', content: 'Hello!' },
              { role: 'user', content: env.SETTINGS_PROMPT },
            ],
          });
          env.assertSettings(textOf(msg), sampling);
        }
      });

      test('an inline base64 image reaches the upstream', async () => {
        const msg = await client().messages.create({
          model, max_tokens: 64,
          messages: [{ role: 'user', content: [
            { type: 'text', text: env.IMAGE_PROMPT },
            { type: 'image', source: { type: 'base64', media_type: env.IMAGE_MIME, data: env.IMAGE_BASE64 } },
          ] }],
        });
        env.assertImage(textOf(msg));
      });

      test('an upstream server error raises a 5xx APIError', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        await assert.rejects(client().messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: env.FAIL_PROMPT }] }), (err) => {
          assert.ok(err instanceof Anthropic.InternalServerError, `got ${err.constructor.name}: ${err.message}`);
          env.assertUpstreamFailure(err.status);
          assert.equal(err.error?.type, 'error', 'the body is the messages error envelope');
          return true;
        });
      });

      test('a stream is relayed as it arrives, not buffered', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        const stream = client().messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: env.SLOW_PROMPT }] });
        const times = [];
        stream.on('text', (delta) => { if (delta) times.push(performance.now()); });
        const msg = await stream.finalMessage();
        env.assertHello(textOf(msg), model);
        env.assertNotBuffered(times);
      });

      test('a Bearer token (authToken) is accepted instead of x-api-key', async () => {
        const bearer = new Anthropic({ apiKey: null, authToken: env.apiKey, baseURL: env.gatewayURL, maxRetries: 0, timeout: env.timeoutMs });
        const msg = await bearer.messages.create({ model, max_tokens: 64, messages: hello });
        env.assertHello(textOf(msg), model);
      });

      test('a tool use round trip ends in an answer that uses the tool result', async () => {
        const first = await client().messages.create({ model, max_tokens: 128, tools, messages: weather });
        assert.equal(first.stop_reason, 'tool_use');
        const uses = first.content.filter((b) => b.type === 'tool_use');
        assert.equal(uses.length, 1, 'one tool_use block');
        assert.equal(uses[0].name, env.WEATHER_TOOL.name);
        assert.ok(uses[0].id, 'the tool_use block has an id');
        env.assertWeatherArgs(uses[0].input);

        const second = await client().messages.create({
          model, max_tokens: 128, tools,
          messages: [
            ...weather,
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0].id, content: JSON.stringify(env.WEATHER_RESULT) }] },
          ],
        });
        assert.equal(second.stop_reason, 'end_turn');
        env.assertWeatherAnswer(textOf(second));
      });

      test('a streamed tool use is assembled into the final message', async () => {
        const msg = await client().messages.stream({ model, max_tokens: 128, tools, messages: weather }).finalMessage();
        assert.equal(msg.stop_reason, 'tool_use');
        const uses = msg.content.filter((b) => b.type === 'tool_use');
        assert.equal(uses.length, 1, 'one tool_use block');
        assert.equal(uses[0].name, env.WEATHER_TOOL.name);
        env.assertWeatherArgs(uses[0].input);
      });

      test('a bad key raises AuthenticationError', async () => {
        await assert.rejects(client(env.badKey).messages.create({ model, max_tokens: 16, messages: hello }),
          (err) => assertTyped(err, Anthropic.AuthenticationError, 401));
      });

      test('max_tokens 0 raises BadRequestError', async () => {
        await assert.rejects(client().messages.create({ model, max_tokens: 0, messages: hello }),
          (err) => assertTyped(err, Anthropic.BadRequestError, 400));
      });
    });
  }

  test('models.list answers in the messages shape and lists every model', async () => {
    const ids = [];
    for await (const m of client().models.list()) {
      assert.equal(m.type, 'model');
      ids.push(m.id);
    }
    for (const model of env.models) assert.ok(ids.includes(model), `${model} is listed in ${JSON.stringify(ids)}`);
  });
});
