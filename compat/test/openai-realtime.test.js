// The realtime WebSocket through the gateway: with the official SDK's
// Node client (OpenAIRealtimeWS, on the `ws` package) and with a bare
// socket that sends the key as a subprotocol, as browsers do.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import WebSocket from 'ws';
import * as env from '../lib/env.js';

const model = env.endpointModel('REALTIME');
const hello = {
  type: 'conversation.item.create',
  item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: env.HELLO_PROMPT }] },
};

/**
 * The SDK always dials wss://; a gateway served over plain HTTP gets the
 * same request over a plain TCP connection (ws's createConnection option).
 */
function transport() {
  if (!env.gatewayURL.startsWith('http:')) return {};
  return { createConnection: (opts) => net.connect({ host: opts.host, port: Number(opts.port) }) };
}

/** Resolves with the first event of a type, or rejects on error or after the time limit. */
function next(rt, type) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} event within ${env.timeoutMs} ms`)), env.timeoutMs);
    rt.on(type, (ev) => { clearTimeout(timer); resolve(ev); });
    rt.on('error', (err) => { clearTimeout(timer); reject(err); });
  });
}

/**
 * Opens a bare socket to the gateway and resolves when it is open (with
 * the first message, which may arrive with the upgrade) or refused.
 */
function rawSocket(key, protocols) {
  const url = `${env.gatewayURL.replace(/^http/, 'ws')}/v1/realtime?model=${encodeURIComponent(model)}`;
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const ws = new WebSocket(url, protocols, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, first: new Promise((ok) => ws.once('message', (d) => ok(JSON.parse(d.toString())))) }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      // With this listener ws leaves the refused request open; end it.
      res.on('end', () => { ws.terminate(); resolve({ status: res.statusCode, body }); });
    });
    ws.once('error', reject);
  });
}

describe('realtime', { skip: env.needs('REALTIME'), timeout: 15000 }, () => {
  test('OpenAIRealtimeWS exchanges events and receives two answers with usage', async () => {
    const c = new OpenAI({ apiKey: env.apiKey, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0 });
    const rt = new OpenAIRealtimeWS({ model, options: transport() }, c);
    try {
      await next(rt, 'session.created');
      for (let i = 0; i < 2; i++) {
        let text = '';
        const onDelta = (ev) => { text += ev.delta; };
        rt.on('response.output_text.delta', onDelta);
        const done = next(rt, 'response.done');
        rt.send(hello);
        rt.send({ type: 'response.create' });
        const ev = await done;
        rt.off('response.output_text.delta', onDelta);
        if (env.fakes) assert.equal(text, 'Hello from the realtime upstream.');
        env.assertUsage(ev.response.usage.input_tokens, ev.response.usage.output_tokens, 'response.done usage');
      }
    } finally {
      rt.close();
    }
  });

  test('a bare socket authenticates with the key subprotocol', async () => {
    const { ws, first, status } = await rawSocket('', ['realtime', `openai-insecure-api-key.${env.apiKey}`]);
    assert.ok(ws, `the socket opened (got HTTP ${status})`);
    try {
      assert.equal(ws.protocol, 'realtime', 'the gateway picked the realtime subprotocol, not the key');
      assert.equal((await first).type, 'session.created');
    } finally {
      ws.close();
    }
  });

  test('a bad key is refused with 401 before the upgrade', async () => {
    const { ws, status, body } = await rawSocket(env.badKey);
    ws?.close();
    assert.equal(status, 401);
    assert.ok(JSON.parse(body).error?.message, 'the refusal is an OpenAI error object');
  });

  test('an unknown model is refused with 404 before the upgrade', async () => {
    const url = `${env.gatewayURL.replace(/^http/, 'ws')}/v1/realtime?model=${env.missingModel}`;
    const status = await new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${env.apiKey}` } });
      ws.once('open', () => { ws.close(); resolve(101); });
      ws.once('unexpected-response', (_req, res) => { res.resume(); ws.terminate(); resolve(res.statusCode); });
      ws.once('error', reject);
    });
    assert.equal(status, 404);
  });

  test('a user without quota is refused with 402 or 429', { skip: !process.env.TURNPIKE_BROKE_KEY && 'set TURNPIKE_BROKE_KEY' }, async () => {
    const { ws, status } = await rawSocket(process.env.TURNPIKE_BROKE_KEY);
    ws?.close();
    assert.ok([402, 429].includes(status), `got ${status}`);
  });
});
