// Typed errors of the OpenAI SDK on the endpoints other than chat: an
// unknown model, a bad key, bad input, and a user without quota.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import * as env from '../lib/env.js';

function client(key = env.apiKey) {
  return new OpenAI({ apiKey: key, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
}

const m = env.endpointModel;
const png = () => toFile(Buffer.from(env.IMAGE_BASE64, 'base64'), 'pixel.png', { type: 'image/png' });
const wav = () => toFile(env.wavAudio(), 'hello.wav', { type: 'audio/wav' });
const chatModel = env.models.find((x) => env.kindOf(x) === 'openai') ?? env.models[0];

/** One call per endpoint, with the model to use; `model` is swapped per test. */
const calls = {
  'completions.create': (c, model) => c.completions.create({ model, prompt: 'Say hello' }),
  'embeddings.create': (c, model) => c.embeddings.create({ model, input: 'a text to embed, long enough to cost something' }),
  'images.generate': (c, model) => c.images.generate({ model, prompt: 'A red dot' }),
  'images.edit': async (c, model) => c.images.edit({ model, image: await png(), prompt: 'Make it blue' }),
  'audio.transcriptions.create': async (c, model) => c.audio.transcriptions.create({ model, file: await wav() }),
  'audio.translations.create': async (c, model) => c.audio.translations.create({ model, file: await wav() }),
  'audio.speech.create': (c, model) => c.audio.speech.create({ model, voice: 'alloy', input: 'Hello from the gateway.' }),
  'moderations.create': (c, model) => c.moderations.create({ model, input: 'Hello there.' }),
  'responses.create': (c, model) => c.responses.create({ model, input: env.HELLO_PROMPT }),
  rerank: (c, model) => c.post('/rerank', { body: { model, query: 'turnpike', documents: ['a', 'b'] } }),
  search: (c, model) => c.post('/alpha/search', { body: { model, query: 'turnpike' } }),
};

/** The configured model of each call. */
const modelOf = {
  'completions.create': 'COMPLETIONS', 'embeddings.create': 'EMBEDDINGS', 'images.generate': 'IMAGES', 'images.edit': 'IMAGES',
  'audio.transcriptions.create': 'TRANSCRIPTIONS', 'audio.translations.create': 'TRANSCRIPTIONS', 'audio.speech.create': 'SPEECH',
  'moderations.create': 'MODERATIONS', rerank: 'RERANK', search: 'SEARCH',
};
const model = (name) => (name === 'responses.create' ? chatModel : m(modelOf[name]));
const configured = Object.keys(calls).filter((name) => model(name));

function expectError(cls, status) {
  return (err) => {
    assert.ok(err instanceof cls, `got ${err.constructor.name} ${err.status}: ${err.message}`);
    assert.equal(err.status, status);
    assert.ok(err.error?.message ?? err.message, 'the error carries a message');
    return true;
  };
}

describe('OpenAI SDK typed errors beyond chat', { skip: env.skip }, () => {
  describe('an unknown model raises NotFoundError', () => {
    for (const name of Object.keys(calls).filter((n) => n !== 'search')) {
      test(name, async () => {
        await assert.rejects(calls[name](client(), env.missingModel), (err) => {
          expectError(OpenAI.NotFoundError, 404)(err);
          assert.equal(err.code, 'model_not_found');
          return true;
        });
      });
    }
  });

  describe('a bad key raises AuthenticationError', () => {
    for (const name of configured) {
      test(name, async () => {
        await assert.rejects(calls[name](client(env.badKey), model(name)), expectError(OpenAI.AuthenticationError, 401));
      });
    }
    test('responses.retrieve', async () => {
      await assert.rejects(client(env.badKey).responses.retrieve('resp_x'), expectError(OpenAI.AuthenticationError, 401));
    });
  });

  describe('bad input raises BadRequestError', { skip: env.needs('RERANK', 'MODERATIONS', 'COMPLETIONS', 'EMBEDDINGS', 'SPEECH', 'IMAGES', 'TRANSCRIPTIONS') }, () => {
    const bad = {
      'rerank without documents': (c) => c.post('/rerank', { body: { model: m('RERANK'), query: 'turnpike' } }),
      'rerank with empty documents': (c) => c.post('/rerank', { body: { model: m('RERANK'), query: 'turnpike', documents: [] } }),
      'rerank with an empty query': (c) => c.post('/rerank', { body: { model: m('RERANK'), query: ' ', documents: ['a'] } }),
      'moderation without input': (c) => c.moderations.create({ model: m('MODERATIONS') }),
      'completion without prompt': (c) => c.completions.create({ model: m('COMPLETIONS') }),
      'embedding of an empty text': (c) => c.embeddings.create({ model: m('EMBEDDINGS'), input: '' }),
      'speech without input': (c) => c.audio.speech.create({ model: m('SPEECH'), voice: 'alloy' }),
      'image edit without an image': (c) => c.images.edit({ model: m('IMAGES'), prompt: 'Make it blue' }),
      'transcription without a file': (c) => c.audio.transcriptions.create({ model: m('TRANSCRIPTIONS') }),
    };
    for (const [name, call] of Object.entries(bad)) {
      test(name, async () => {
        await assert.rejects(call(client()), expectError(OpenAI.BadRequestError, 400));
      });
    }
  });

  describe('a user without quota gets 402 (APIError) or 429 (RateLimitError)', {
    skip: !process.env.TURNPIKE_BROKE_KEY && 'set TURNPIKE_BROKE_KEY (a key whose user has no quota left)',
  }, () => {
    // Endpoints whose reservation is clearly above the broke user's 1 unit.
    const costly = ['completions.create', 'embeddings.create', 'images.generate', 'images.edit', 'audio.transcriptions.create',
      'audio.speech.create', 'responses.create'].filter((n) => configured.includes(n));
    for (const name of costly) {
      test(name, async () => {
        await assert.rejects(calls[name](client(process.env.TURNPIKE_BROKE_KEY), model(name)), (err) => {
          assert.ok(err instanceof OpenAI.APIError, `got ${err.constructor.name}: ${err.message}`);
          env.assertOutOfQuota(err, OpenAI.RateLimitError);
          return true;
        });
      });
    }
  });
});
