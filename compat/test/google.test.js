// The official Google Gen AI SDK against the gateway's alternate-native
// surface (/v1beta/models/{model}:{action}), once per upstream channel kind.
// httpOptions.baseUrl replaces the Google endpoint; the SDK appends
// /v1beta/... and sends the key as x-goog-api-key.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI, Type } from '@google/genai';
import * as env from '../lib/env.js';

function client(key = env.apiKey) {
  return new GoogleGenAI({
    vertexai: false,
    apiKey: key,
    httpOptions: { baseUrl: env.gatewayURL, timeout: env.timeoutMs, retryOptions: { attempts: 1 } },
  });
}

const tools = [{
  functionDeclarations: [{
    name: env.WEATHER_TOOL.name,
    description: env.WEATHER_TOOL.description,
    parameters: {
      type: Type.OBJECT,
      properties: { city: { type: Type.STRING, description: 'City name' } },
      required: ['city'],
    },
  }],
}];
const weather = [{ role: 'user', parts: [{ text: env.WEATHER_PROMPT }] }];
const config = { maxOutputTokens: 64 };

function assertGeminiUsage(meta, where) {
  assert.ok(meta, `${where}: usageMetadata is present`);
  env.assertUsage(meta.promptTokenCount, meta.candidatesTokenCount, where);
  assert.equal(meta.totalTokenCount, meta.promptTokenCount + meta.candidatesTokenCount, `${where}: total = prompt + candidates`);
}

/** The text parts of a response (res.text warns when there are function calls). */
function textOf(res) {
  const parts = res.candidates?.[0]?.content?.parts ?? [];
  return parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text).join('');
}

/** Reads a stream of GenerateContentResponse chunks. */
async function collect(stream) {
  const out = { text: '', calls: [], finish: null, usage: null, chunks: 0 };
  for await (const chunk of stream) {
    out.chunks++;
    out.text += textOf(chunk);
    out.calls.push(...(chunk.functionCalls ?? []));
    const fr = chunk.candidates?.[0]?.finishReason;
    if (fr) out.finish = fr;
    if (chunk.usageMetadata) out.usage = chunk.usageMetadata;
  }
  return out;
}

describe('Google Gen AI SDK', { skip: env.skip }, () => {
  for (const model of env.models) {
    describe(`via ${model}`, () => {
      test('models.generateContent returns text, finish reason and usage', async () => {
        const res = await client().models.generateContent({ model, contents: env.HELLO_PROMPT, config });
        env.assertHello(textOf(res), model);
        assert.equal(res.candidates?.[0]?.content?.role, 'model');
        assert.equal(res.candidates[0].finishReason, 'STOP');
        assertGeminiUsage(res.usageMetadata, 'usage');
      });

      test('models.generateContentStream yields chunks that add up to the answer', async () => {
        const got = await collect(await client().models.generateContentStream({ model, contents: env.HELLO_PROMPT, config }));
        env.assertHello(got.text, model);
        assert.ok(got.chunks >= 2, `the answer arrives in several chunks (got ${got.chunks})`);
        assert.equal(got.finish, 'STOP');
        assertGeminiUsage(got.usage, 'stream usage');
      });

      test('a stream is relayed as it arrives, not buffered', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        const stream = await client().models.generateContentStream({ model, contents: env.SLOW_PROMPT, config });
        const times = [];
        let text = '';
        for await (const chunk of stream) {
          const delta = textOf(chunk);
          if (delta) {
            times.push(performance.now());
            text += delta;
          }
        }
        env.assertHello(text, model);
        env.assertNotBuffered(times);
      });

      test('models.countTokens counts the prompt', async () => {
        const res = await client().models.countTokens({ model, contents: env.HELLO_PROMPT });
        assert.ok(Number.isInteger(res.totalTokens) && res.totalTokens > 0, `totalTokens ${res.totalTokens} is a positive integer`);
      });

      test('system instruction, history and generation config reach the upstream', async () => {
        for (const sampling of env.SAMPLING) {
          const res = await client().models.generateContent({
            model,
            contents: [
              { role: 'user', parts: [{ text: 'Hi' }] },
              { role: 'model', parts: [{ text: 'Hello!' }] },
              { role: 'user', parts: [{ text: env.SETTINGS_PROMPT }] },
            ],
            config: {
              systemInstruction: env.SYSTEM_PROMPT,
              maxOutputTokens: env.SETTINGS.maxTokens,
              temperature: sampling.temperature,
              topP: sampling.topP,
              stopSequences: env.SETTINGS.stop,
            },
          });
          env.assertSettings(textOf(res), sampling);
        }
      });

      test('an inline base64 image reaches the upstream', async () => {
        const res = await client().models.generateContent({
          model, config,
          contents: [{ role: 'user', parts: [{ text: env.IMAGE_PROMPT }, { inlineData: { mimeType: env.IMAGE_MIME, data: env.IMAGE_BASE64 } }] }],
        });
        env.assertImage(textOf(res));
      });

      test('an upstream server error raises ApiError with a 5xx status', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        await assert.rejects(client().models.generateContent({ model, contents: env.FAIL_PROMPT }), (err) => {
          assert.ok(err instanceof ApiError, `got ${err.constructor.name}: ${err.message}`);
          env.assertUpstreamFailure(err.status);
          return true;
        });
      });

      test('a function call round trip ends in an answer that uses the function response', async () => {
        const first = await client().models.generateContent({ model, contents: weather, config: { ...config, tools } });
        const calls = first.functionCalls ?? [];
        assert.equal(calls.length, 1, 'one function call');
        assert.equal(calls[0].name, env.WEATHER_TOOL.name);
        env.assertWeatherArgs(calls[0].args);
        const modelTurn = first.candidates[0].content;
        assert.equal(modelTurn.role, 'model');

        const response = { name: calls[0].name, response: env.WEATHER_RESULT };
        if (calls[0].id) response.id = calls[0].id;
        const second = await client().models.generateContent({
          model, config: { ...config, tools },
          contents: [...weather, modelTurn, { role: 'user', parts: [{ functionResponse: response }] }],
        });
        assert.equal(second.candidates?.[0]?.finishReason, 'STOP');
        env.assertWeatherAnswer(textOf(second));
      });

      test('a streamed function call arrives whole', async () => {
        const got = await collect(await client().models.generateContentStream({ model, contents: weather, config: { ...config, tools } }));
        assert.equal(got.calls.length, 1, 'one function call');
        assert.equal(got.calls[0].name, env.WEATHER_TOOL.name);
        env.assertWeatherArgs(got.calls[0].args);
      });

      test('a bad key raises ApiError with status 401', async () => {
        await assert.rejects(client(env.badKey).models.generateContent({ model, contents: env.HELLO_PROMPT }), (err) => {
          assert.ok(err instanceof ApiError, `got ${err.constructor.name}: ${err.message}`);
          assert.equal(err.status, 401);
          return true;
        });
      });

      test('malformed input raises ApiError with status 400', async () => {
        await assert.rejects(client().models.generateContent({ model, contents: [{ role: 'user', parts: [] }] }), (err) => {
          assert.ok(err instanceof ApiError, `got ${err.constructor.name}: ${err.message}`);
          assert.equal(err.status, 400);
          return true;
        });
      });
    });
  }

  test('models.list pages through every model', async () => {
    const pager = await client().models.list({ config: { pageSize: 1 } });
    const names = [...pager.page.map((m) => m.name)];
    let pages = 1;
    assert.ok(pager.page.length <= 1, `a page holds at most pageSize models (got ${pager.page.length})`);
    while (pager.hasNextPage() && pages < 100) {
      const page = await pager.nextPage();
      assert.ok(page.length <= 1, `a page holds at most pageSize models (got ${page.length})`);
      names.push(...page.map((m) => m.name));
      pages++;
    }
    for (const model of env.models) {
      assert.ok(names.includes(`models/${model}`), `models/${model} is listed in ${JSON.stringify(names)}`);
    }
    assert.ok(pages >= env.models.length, `pageSize 1 gives at least ${env.models.length} pages (got ${pages})`);
    assert.equal(new Set(names).size, names.length, 'no model appears on two pages');
  });

  test('models.list with the async iterator sees every model', async () => {
    const names = [];
    for await (const m of await client().models.list({ config: { pageSize: 2 } })) names.push(m.name);
    for (const model of env.models) assert.ok(names.includes(`models/${model}`), `models/${model} is listed`);
  });
});
