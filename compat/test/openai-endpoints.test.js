// The official OpenAI SDK against the gateway's endpoints other than chat:
// completions, embeddings, images, audio, moderations, rerank and search.
// Exact answers are checked against the fake upstreams of internal/compat;
// against a real provider only their shape is.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import * as env from '../lib/env.js';

function client(key = env.apiKey) {
  return new OpenAI({ apiKey: key, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
}

const m = env.endpointModel;
/** The fake embedding of the i-th input (see fakeVector in internal/compat). */
const vector = (i) => [0.25 * (i + 1), -0.5, 0.125];

describe('OpenAI SDK completions', { skip: env.needs('COMPLETIONS') }, () => {
  const model = m('COMPLETIONS');
  const text = 'Hello from the openai completions upstream.';

  test('completions.create returns the text, finish reason and usage', async () => {
    const res = await client().completions.create({ model, prompt: 'Say hello', max_tokens: 32 });
    assert.equal(res.object, 'text_completion');
    assert.equal(res.choices.length, 1);
    assert.equal(res.choices[0].finish_reason, 'stop');
    if (env.fakes) assert.equal(res.choices[0].text, text);
    env.assertUsage(res.usage.prompt_tokens, res.usage.completion_tokens);
  });

  test('a streamed completion assembles the text and, unasked, carries no usage chunk', async () => {
    const stream = await client().completions.create({ model, prompt: 'Say hello', max_tokens: 32, stream: true });
    let got = '';
    let finish = null;
    let usageChunks = 0;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      assert.equal(chunk.object, 'text_completion');
      if (chunk.usage) usageChunks++;
      for (const c of chunk.choices) {
        got += c.text ?? '';
        finish = c.finish_reason ?? finish;
      }
    }
    assert.ok(chunks >= 2, `several chunks (got ${chunks})`);
    if (env.fakes) assert.equal(got, text);
    assert.equal(finish, 'stop');
    assert.equal(usageChunks, 0, 'the usage chunk the gateway asked the upstream for is not passed on');
  });

  test('an upstream server error raises InternalServerError', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
    await assert.rejects(client().completions.create({ model, prompt: env.FAIL_PROMPT }), (err) => {
      assert.ok(err instanceof OpenAI.InternalServerError, `got ${err.constructor.name}: ${err.message}`);
      env.assertUpstreamFailure(err.status);
      return true;
    });
  });

  test('a streamed completion with include_usage ends with the usage', async () => {
    const stream = await client().completions.create({
      model, prompt: 'Say hello', max_tokens: 32, stream: true, stream_options: { include_usage: true },
    });
    let usage = null;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    assert.ok(usage, 'a usage chunk arrived');
    env.assertUsage(usage.prompt_tokens, usage.completion_tokens, 'stream usage');
  });
});

describe('OpenAI SDK embeddings', { skip: env.needs('EMBEDDINGS', 'GEMINI_EMBEDDINGS') }, () => {
  for (const [kind, model] of [['an OpenAI-type', m('EMBEDDINGS')], ['a Gemini-type', m('GEMINI_EMBEDDINGS')]]) {
    test(`embeddings.create on ${kind} channel decodes the default base64 answer to floats`, async () => {
      const res = await client().embeddings.create({ model, input: ['first text', 'second text'] });
      assert.equal(res.object, 'list');
      assert.equal(res.data.length, 2);
      res.data.forEach((d, i) => {
        assert.equal(d.index, i);
        assert.ok(Array.isArray(d.embedding), 'the SDK decoded the base64 vector to an array');
        if (env.fakes) assert.deepEqual(d.embedding, vector(i));
      });
      assert.ok(res.usage.prompt_tokens > 0, 'usage.prompt_tokens is positive');
      if (env.fakes && kind === 'an OpenAI-type') assert.equal(res.usage.prompt_tokens, 21, "the upstream's usage is passed on");
    });

    test(`embeddings.create on ${kind} channel answers floats when asked`, async () => {
      const res = await client().embeddings.create({ model, input: 'one text', encoding_format: 'float' });
      assert.equal(res.data.length, 1);
      assert.ok(Array.isArray(res.data[0].embedding));
      if (env.fakes) assert.deepEqual(res.data[0].embedding, vector(0));
    });
  }

  test('the older /engines/{model}/embeddings path takes the model from the URL', async () => {
    const model = m('EMBEDDINGS');
    const res = await client().post(`/engines/${model}/embeddings`, { body: { input: 'one text', encoding_format: 'float' } });
    assert.equal(res.object, 'list');
    if (env.fakes) assert.deepEqual(res.data[0].embedding, vector(0));
  });
});

describe('OpenAI SDK images', { skip: env.needs('IMAGES') }, () => {
  const model = m('IMAGES');

  test('images.generate returns n images as b64_json', async () => {
    const res = await client().images.generate({ model, prompt: 'A red dot', n: 2, size: '1024x1024', response_format: 'b64_json' });
    assert.equal(res.data.length, 2);
    for (const img of res.data) {
      if (env.fakes) assert.equal(img.b64_json, env.IMAGE_BASE64);
      else assert.ok(img.b64_json);
    }
  });

  test('images.generate returns URLs by default, with size and quality passed on', async () => {
    const res = await client().images.generate({ model, prompt: 'A wide red dot', size: '1792x1024', quality: 'hd' });
    assert.equal(res.data.length, 1);
    assert.match(res.data[0].url, /^https:\/\//);
  });

  test('images.edit uploads the image as multipart and returns the edit', async () => {
    const image = await toFile(Buffer.from(env.IMAGE_BASE64, 'base64'), 'pixel.png', { type: 'image/png' });
    const res = await client().images.edit({ model, image, prompt: 'Make it blue', response_format: 'b64_json' });
    assert.equal(res.data.length, 1);
    if (env.fakes) {
      assert.equal(res.data[0].b64_json, env.IMAGE_BASE64);
      assert.equal(res.data[0].revised_prompt, 'Make it blue (1 images)', 'the upstream received one image');
    }
  });

  test('images.edit uploads several images (sent as image[]) for gpt-image style edits', async () => {
    const image = await Promise.all(['a.png', 'b.png'].map((name) => toFile(Buffer.from(env.IMAGE_BASE64, 'base64'), name, { type: 'image/png' })));
    const res = await client().images.edit({ model, image, prompt: 'Combine them', response_format: 'b64_json' });
    assert.equal(res.data.length, 1);
    if (env.fakes) assert.equal(res.data[0].revised_prompt, 'Combine them (2 images)', 'the upstream received both images');
  });
});

describe('OpenAI SDK audio', { skip: env.needs('TRANSCRIPTIONS', 'SPEECH') }, () => {
  const model = m('TRANSCRIPTIONS');
  const wav = env.wavAudio();
  const file = () => toFile(wav, 'hello.wav', { type: 'audio/wav' });
  const said = (verb) => `${verb} ${wav.length} bytes of audio/wav.`;

  test('audio.transcriptions.create answers json', async () => {
    const res = await client().audio.transcriptions.create({ model, file: await file() });
    assert.equal(typeof res.text, 'string');
    if (env.fakes) assert.equal(res.text, said('Transcribed'));
  });

  test('audio.transcriptions.create answers verbose_json with duration and segments', async () => {
    const res = await client().audio.transcriptions.create({ model, file: await file(), response_format: 'verbose_json' });
    assert.equal(typeof res.duration, 'number');
    assert.ok(Array.isArray(res.segments));
    if (env.fakes) {
      assert.equal(res.text, said('Transcribed'));
      assert.equal(res.duration, 12.5);
      assert.equal(res.language, 'english');
    }
  });

  test('audio.transcriptions.create passes array fields (timestamp_granularities[]) on', async () => {
    const res = await client().audio.transcriptions.create({
      model, file: await file(), response_format: 'verbose_json', timestamp_granularities: ['segment'],
    });
    assert.equal(res.segments.length, 1);
  });

  test('audio.transcriptions.create answers plain text', async () => {
    const res = await client().audio.transcriptions.create({ model, file: await file(), response_format: 'text' });
    assert.equal(typeof res, 'string', 'a text answer is returned as a string');
    if (env.fakes) assert.equal(res.trim(), said('Transcribed'));
  });

  test('audio.translations.create answers json and verbose_json', async () => {
    const res = await client().audio.translations.create({ model, file: await file() });
    if (env.fakes) assert.equal(res.text, said('Translated'));
    const verbose = await client().audio.translations.create({ model, file: await file(), response_format: 'verbose_json' });
    assert.equal(typeof verbose.duration, 'number');
  });

  test('audio.speech.create streams the audio bytes unchanged', async () => {
    const res = await client().audio.speech.create({ model: m('SPEECH'), voice: 'alloy', input: 'Hello from the gateway.' });
    assert.match(res.headers.get('content-type') ?? '', /^audio\//);
    const audio = Buffer.from(await res.arrayBuffer());
    if (env.fakes) assert.ok(audio.equals(env.fakeSpeechAudio()), `got ${audio.length} bytes, not the upstream's 40000`);
    else assert.ok(audio.length > 0);
  });
});

describe('OpenAI SDK moderations', { skip: env.needs('MODERATIONS', 'DEFAULT_MODERATIONS') }, () => {
  test('moderations.create with a model flags a threat', async () => {
    const model = m('MODERATIONS');
    const res = await client().moderations.create({ model, input: 'I will hurt you.' });
    assert.equal(res.model, model);
    assert.equal(res.results.length, 1);
    if (env.fakes) {
      assert.equal(res.results[0].flagged, true);
      assert.equal(res.results[0].categories.violence, true);
    }
  });

  test('moderations.create without a model uses the default moderation model', async () => {
    const res = await client().moderations.create({ input: ['Hello there.', 'Nice weather.'] });
    assert.equal(res.results.length, 2);
    assert.equal(res.model, m('DEFAULT_MODERATIONS'), 'the upstream received the default model');
    if (env.fakes) assert.deepEqual(res.results.map((r) => r.flagged), [false, false]);
  });
});

describe('rerank and search through client.post', { skip: env.needs('RERANK', 'SEARCH') }, () => {
  test('rerank returns the documents best first with their request indices', async () => {
    const documents = ['apples and pears', 'the turnpike gateway relays calls', 'a toll gateway'];
    const res = await client().post('/rerank', {
      body: { model: m('RERANK'), query: 'turnpike gateway', documents, top_n: 2, return_documents: true },
    });
    assert.equal(res.results.length, 2);
    for (const r of res.results) assert.equal(r.document.text, documents[r.index], 'the index names the document returned');
    if (env.fakes) {
      assert.deepEqual(res.results.map((r) => r.index), [1, 2]);
      assert.deepEqual(res.results.map((r) => r.relevance_score), [1, 0.5]);
    }
  });

  test('search answers on a model whose channel supports it', async () => {
    const res = await client().post('/alpha/search', { body: { model: m('SEARCH'), query: 'turnpike' } });
    assert.ok(Array.isArray(res.results) && res.results.length > 0, 'search results are returned');
    if (env.fakes) assert.equal(res.results[0].title, 'Result for turnpike');
  });

  test('search on a model without a search channel raises BadRequestError', async () => {
    await assert.rejects(client().post('/alpha/search', { body: { model: m('RERANK'), query: 'turnpike' } }), (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `got ${err.constructor.name} ${err.status}: ${err.message}`);
      return true;
    });
  });
});
