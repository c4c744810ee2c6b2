// The official OpenAI SDK against the gateway's /v1 surface, once per
// upstream channel kind.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import * as env from '../lib/env.js';

function client(key = env.apiKey) {
  return new OpenAI({ apiKey: key, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
}

const tools = [{
  type: 'function',
  function: { name: env.WEATHER_TOOL.name, description: env.WEATHER_TOOL.description, parameters: env.WEATHER_TOOL.schema },
}];

const hello = [{ role: 'user', content: env.HELLO_PROMPT }];
const weather = [{ role: 'user', content: env.WEATHER_PROMPT }];

/** Assembles a streamed answer: text, tool calls by index, finish reason, usage. */
async function collect(stream) {
  const out = { text: '', calls: [], finish: null, usage: null, usageChunks: 0, chunks: 0 };
  for await (const chunk of stream) {
    out.chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) {
      out.usage = chunk.usage;
      out.usageChunks++;
    }
    for (const choice of chunk.choices ?? []) {
      out.text += choice.delta?.content ?? '';
      for (const tc of choice.delta?.tool_calls ?? []) {
        const call = (out.calls[tc.index] ??= { id: '', name: '', args: '' });
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name += tc.function.name;
        if (tc.function?.arguments) call.args += tc.function.arguments;
      }
      if (choice.finish_reason) out.finish = choice.finish_reason;
    }
  }
  return out;
}

describe('OpenAI SDK', { skip: env.skip }, () => {
  for (const model of env.models) {
    describe(`via ${model}`, () => {
      test('chat.completions.create returns the answer, finish reason and usage', async () => {
        const res = await client().chat.completions.create({ model, messages: hello, max_tokens: 64 });
        assert.equal(res.object, 'chat.completion');
        assert.equal(res.model, model, 'the client-facing model name is echoed');
        assert.equal(res.choices.length, 1);
        assert.equal(res.choices[0].message.role, 'assistant');
        env.assertHello(res.choices[0].message.content, model);
        assert.equal(res.choices[0].finish_reason, 'stop');
        env.assertUsage(res.usage.prompt_tokens, res.usage.completion_tokens);
        assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
      });

      test('a streamed completion assembles the same content and ends with usage', async () => {
        const stream = await client().chat.completions.create({
          model, messages: hello, max_tokens: 64, stream: true, stream_options: { include_usage: true },
        });
        const got = await collect(stream);
        env.assertHello(got.text, model);
        assert.equal(got.finish, 'stop');
        assert.ok(got.chunks >= 2, `the answer arrives in several chunks (got ${got.chunks})`);
        assert.ok(got.usage, 'include_usage yields a usage chunk');
        env.assertUsage(got.usage.prompt_tokens, got.usage.completion_tokens, 'stream usage');
      });

      test('a stream is relayed as it arrives, not buffered', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        const stream = await client().chat.completions.create({
          model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: env.SLOW_PROMPT }],
        });
        const times = [];
        let text = '';
        for await (const chunk of stream) {
          const delta = chunk.choices?.[0]?.delta?.content;
          if (delta) {
            times.push(performance.now());
            text += delta;
          }
        }
        env.assertHello(text, model);
        env.assertNotBuffered(times);
      });

      test('a stream without include_usage carries no usage chunk', async () => {
        const got = await collect(await client().chat.completions.create({ model, messages: hello, max_tokens: 64, stream: true }));
        env.assertHello(got.text, model);
        assert.equal(got.usageChunks, 0, 'usage is sent only when stream_options.include_usage asks for it');
      });

      test('system prompt, history and sampling parameters reach the upstream', async () => {
        for (const sampling of env.SAMPLING) {
          const res = await client().chat.completions.create({
            model,
            max_tokens: env.SETTINGS.maxTokens,
            temperature: sampling.temperature,
            top_p: sampling.topP,
            stop: env.SETTINGS.stop,
            messages: [
              { role: 'system', content: env.SYSTEM_PROMPT },
              { role: 'user', content: 'Hi' },
              { role: 'assistant', content: 'Hello!' },
              { role: 'user', content: env.SETTINGS_PROMPT },
            ],
          });
          env.assertSettings(res.choices[0].message.content, sampling);
        }
      });

      test('an inline base64 image reaches the upstream', async () => {
        const res = await client().chat.completions.create({
          model, max_tokens: 64,
          messages: [{ role: 'user', content: [
            { type: 'text', text: env.IMAGE_PROMPT },
            { type: 'image_url', image_url: { url: `data:${env.IMAGE_MIME};base64,${env.IMAGE_BASE64}` } },
          ] }],
        });
        env.assertImage(res.choices[0].message.content);
      });

      test('an upstream server error raises InternalServerError', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        await assert.rejects(client().chat.completions.create({ model, messages: [{ role: 'user', content: env.FAIL_PROMPT }] }), (err) => {
          assert.ok(err instanceof OpenAI.InternalServerError, `got ${err.constructor.name}: ${err.message}`);
          env.assertUpstreamFailure(err.status);
          assert.ok(err.error?.message, 'the error carries a message');
          return true;
        });
      });

      test('a tool call round trip ends in an answer that uses the tool result', async () => {
        const first = await client().chat.completions.create({ model, messages: weather, tools, max_tokens: 128 });
        const msg = first.choices[0].message;
        assert.equal(first.choices[0].finish_reason, 'tool_calls');
        assert.equal(msg.tool_calls?.length, 1, 'one tool call');
        const call = msg.tool_calls[0];
        assert.equal(call.type, 'function');
        assert.equal(call.function.name, env.WEATHER_TOOL.name);
        assert.ok(call.id, 'the tool call has an id');
        env.assertWeatherArgs(call.function.arguments);

        const second = await client().chat.completions.create({
          model, tools, max_tokens: 128,
          messages: [...weather, msg, { role: 'tool', tool_call_id: call.id, content: JSON.stringify(env.WEATHER_RESULT) }],
        });
        assert.equal(second.choices[0].finish_reason, 'stop');
        env.assertWeatherAnswer(second.choices[0].message.content);
      });

      test('a streamed tool call assembles name and arguments', async () => {
        const stream = await client().chat.completions.create({ model, messages: weather, tools, max_tokens: 128, stream: true });
        const got = await collect(stream);
        assert.equal(got.finish, 'tool_calls');
        assert.equal(got.calls.length, 1, 'one tool call');
        assert.ok(got.calls[0].id, 'the streamed tool call has an id');
        assert.equal(got.calls[0].name, env.WEATHER_TOOL.name);
        env.assertWeatherArgs(got.calls[0].args);
      });

      test('models.retrieve finds the model', async () => {
        const m = await client().models.retrieve(model);
        assert.equal(m.id, model);
        assert.equal(m.object, 'model');
      });

      test('a bad key raises AuthenticationError', async () => {
        await assert.rejects(client(env.badKey).chat.completions.create({ model, messages: hello }), (err) => {
          assert.ok(err instanceof OpenAI.AuthenticationError, `got ${err.constructor.name}: ${err.message}`);
          assert.equal(err.status, 401);
          return true;
        });
      });

      test('malformed input raises BadRequestError', async () => {
        await assert.rejects(client().chat.completions.create({ model, messages: 'not a list' }), (err) => {
          assert.ok(err instanceof OpenAI.BadRequestError, `got ${err.constructor.name}: ${err.message}`);
          assert.equal(err.status, 400);
          assert.ok(err.error?.message, 'the error carries a message');
          return true;
        });
      });
    });
  }

  test('models.list lists every model, also across pages of the iterator', async () => {
    const ids = [];
    for await (const m of client().models.list()) ids.push(m.id);
    for (const model of env.models) assert.ok(ids.includes(model), `${model} is listed in ${JSON.stringify(ids)}`);
  });

  test('models.list also answers under /v1beta/openai', async () => {
    const c = new OpenAI({ apiKey: env.apiKey, baseURL: `${env.gatewayURL}/v1beta/openai`, maxRetries: 0, timeout: env.timeoutMs });
    const ids = [];
    for await (const m of c.models.list()) ids.push(m.id);
    for (const model of env.models) assert.ok(ids.includes(model), `${model} is listed in ${JSON.stringify(ids)}`);
  });

  test('models.retrieve of a missing model raises NotFoundError with code model_not_found', async () => {
    await assert.rejects(client().models.retrieve(env.missingModel), (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, `got ${err.constructor.name}: ${err.message}`);
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      return true;
    });
  });

  test('chat with a model no channel serves raises a typed 4xx error', async () => {
    await assert.rejects(client().chat.completions.create({ model: env.missingModel, messages: hello }), (err) => {
      assert.ok(err instanceof OpenAI.APIError, `got ${err.constructor.name}: ${err.message}`);
      assert.ok(err.status >= 400 && err.status < 500, `status ${err.status} is a client error`);
      return true;
    });
  });
});
