// The official OpenAI and Anthropic SDKs against the gateway's files and
// batches: upload, batch create, retrieve until it ends, the output file;
// and Message Batches create, retrieve and results. The batch model is
// served by a channel without a provider batch API, so the gateway runs the
// lines itself.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import * as env from '../lib/env.js';

const model = env.endpointModel('BATCH');

function openai() {
  return new OpenAI({ apiKey: env.apiKey, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
}

function anthropic() {
  return new Anthropic({ apiKey: env.apiKey, baseURL: env.gatewayURL, maxRetries: 0, timeout: env.timeoutMs });
}

/** Polls get until it answers a value done accepts. */
async function until(get, done) {
  const deadline = Date.now() + env.timeoutMs;
  for (;;) {
    const v = await get();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('OpenAI SDK files and batches', { skip: env.needs('BATCH') }, () => {
  test('a batch of chat lines runs to completed with an output file the SDK reads', async () => {
    const client = openai();
    const lines = ['a', 'b'].map((id) => JSON.stringify({ custom_id: `line-${id}`, method: 'POST', url: '/v1/chat/completions',
      body: { model, max_tokens: 32, messages: [{ role: 'user', content: env.HELLO_PROMPT }] } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'batch.jsonl'), purpose: 'batch' });
    assert.equal(file.object, 'file');
    assert.equal(file.purpose, 'batch');
    assert.ok(file.id.startsWith('file-'));
    const got = await client.files.retrieve(file.id);
    assert.equal(got.bytes, file.bytes);

    let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h',
      metadata: { job: 'compat' } });
    assert.equal(batch.object, 'batch');
    assert.equal(batch.metadata.job, 'compat');
    batch = await until(() => client.batches.retrieve(batch.id), (b) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status));
    assert.equal(batch.status, 'completed', JSON.stringify(batch));
    assert.deepEqual(batch.request_counts, { total: 2, completed: 2, failed: 0 });

    const out = await (await client.files.content(batch.output_file_id)).text();
    const results = out.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(results.map((r) => r.custom_id).sort(), ['line-a', 'line-b']);
    for (const r of results) {
      assert.equal(r.response.status_code, 200);
      env.assertHello(r.response.body.choices[0].message.content, 'up-anthropic');
      env.assertUsage(r.response.body.usage.prompt_tokens, r.response.body.usage.completion_tokens);
    }
    const page = await client.batches.list({ limit: 10 });
    assert.ok(page.data.some((b) => b.id === batch.id));
    const deleted = await client.files.del ? await client.files.del(file.id) : await client.files.delete(file.id);
    assert.equal(deleted.deleted, true);
  });

  test('a bad input file fails the batch with the errors of its lines', async () => {
    const client = openai();
    const text = [JSON.stringify({ custom_id: 'x', method: 'GET', url: '/v1/chat/completions', body: { model } }), '{not json'].join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'bad.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.equal(batch.status, 'failed');
    assert.deepEqual(batch.errors.data.map((e) => [e.line, e.code]), [[1, 'invalid_method'], [2, 'invalid_json_line']]);
  });
});

describe('Anthropic SDK message batches', { skip: env.needs('BATCH') }, () => {
  test('a message batch ends and its results are read through results_url', async () => {
    const client = anthropic();
    const params = { model, max_tokens: 32, messages: [{ role: 'user', content: env.HELLO_PROMPT }] };
    let batch = await client.messages.batches.create({ requests: [{ custom_id: 'one', params }, { custom_id: 'two', params }] });
    assert.equal(batch.type, 'message_batch');
    batch = await until(() => client.messages.batches.retrieve(batch.id), (b) => b.processing_status === 'ended');
    assert.equal(batch.processing_status, 'ended');
    assert.equal(batch.request_counts.succeeded, 2);
    assert.ok(batch.results_url.startsWith(env.gatewayURL));
    const seen = [];
    for await (const r of await client.messages.batches.results(batch.id)) {
      assert.equal(r.result.type, 'succeeded');
      assert.equal(r.result.message.type, 'message');
      env.assertHello(r.result.message.content[0].text, 'up-anthropic');
      seen.push(r.custom_id);
    }
    assert.deepEqual(seen.sort(), ['one', 'two']);
  });
});
