// Key restrictions as each official SDK sees them: a key limited to one model
// and a user without quota must get each dialect's typed error (CONTRACT.md
// §6: 403 for a model the key may not use, 402/429 when out of quota).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import * as env from '../lib/env.js';

const limitedKey = process.env.TURNPIKE_LIMITED_KEY ?? '';
const brokeKey = process.env.TURNPIKE_BROKE_KEY ?? '';
const allowed = env.models[0];
const others = env.models.slice(1);

const sdks = {
  OpenAI: {
    async call(key, model) {
      const c = new OpenAI({ apiKey: key, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
      const res = await c.chat.completions.create({ model, max_tokens: 64, messages: [{ role: 'user', content: env.HELLO_PROMPT }] });
      return res.choices[0].message.content;
    },
    async list(key) {
      const c = new OpenAI({ apiKey: key, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
      const ids = [];
      for await (const m of c.models.list()) ids.push(m.id);
      return ids;
    },
    denied: (err) => err instanceof OpenAI.PermissionDeniedError,
  },
  Anthropic: {
    async call(key, model) {
      const c = new Anthropic({ apiKey: key, baseURL: env.gatewayURL, maxRetries: 0, timeout: env.timeoutMs });
      const msg = await c.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: env.HELLO_PROMPT }] });
      return msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    },
    async list(key) {
      const c = new Anthropic({ apiKey: key, baseURL: env.gatewayURL, maxRetries: 0, timeout: env.timeoutMs });
      const ids = [];
      for await (const m of c.models.list()) ids.push(m.id);
      return ids;
    },
    denied: (err) => err instanceof Anthropic.PermissionDeniedError,
  },
  'Google Gen AI': {
    async call(key, model) {
      const c = new GoogleGenAI({ vertexai: false, apiKey: key, httpOptions: { baseUrl: env.gatewayURL, timeout: env.timeoutMs, retryOptions: { attempts: 1 } } });
      const res = await c.models.generateContent({ model, contents: env.HELLO_PROMPT });
      return (res.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? '').join('');
    },
    async list(key) {
      const c = new GoogleGenAI({ vertexai: false, apiKey: key, httpOptions: { baseUrl: env.gatewayURL, timeout: env.timeoutMs, retryOptions: { attempts: 1 } } });
      const ids = [];
      for await (const m of await c.models.list()) ids.push(m.name.replace(/^models\//, ''));
      return ids;
    },
    denied: (err) => err instanceof ApiError && err.status === 403,
  },
};

describe('a key limited to one model', { skip: env.skip || (!limitedKey && 'set TURNPIKE_LIMITED_KEY (a key allowed only the first of TURNPIKE_MODELS)') }, () => {
  for (const [name, sdk] of Object.entries(sdks)) {
    describe(`${name} SDK`, () => {
      test(`reaches ${allowed}`, async () => {
        env.assertHello(await sdk.call(limitedKey, allowed), allowed);
      });

      for (const model of others) {
        test(`is refused ${model} with a typed 403`, async () => {
          await assert.rejects(sdk.call(limitedKey, model), (err) => {
            assert.ok(sdk.denied(err), `got ${err.constructor.name} ${err.status}: ${err.message}`);
            assert.equal(err.status, 403);
            return true;
          });
        });
      }

      test('lists only the allowed model', async () => {
        assert.deepEqual(await sdk.list(limitedKey), [allowed]);
      });
    });
  }
});

describe('a user without quota', { skip: env.skip || (!brokeKey && 'set TURNPIKE_BROKE_KEY (a key whose user has no quota left)') }, () => {
  for (const [name, sdk] of Object.entries(sdks)) {
    for (const model of env.models) {
      test(`${name} SDK via ${model} gets a typed 402 or 429`, async () => {
        await assert.rejects(sdk.call(brokeKey, model), (err) => {
          assert.ok([402, 429].includes(err.status), `got ${err.constructor.name} ${err.status}: ${err.message}`);
          if (err.status === 429 && name !== 'Google Gen AI') {
            assert.equal(err.constructor.name, 'RateLimitError');
          }
          return true;
        });
      });
    }
  }
});
