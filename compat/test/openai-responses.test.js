// The official OpenAI SDK's Responses API through the gateway: relayed to a
// channel that speaks it (OpenAI) and converted for one that speaks only
// chat (Anthropic).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import * as env from '../lib/env.js';

function client(key = env.apiKey) {
  return new OpenAI({ apiKey: key, baseURL: `${env.gatewayURL}/v1`, maxRetries: 0, timeout: env.timeoutMs });
}

const tools = [{
  type: 'function', name: env.WEATHER_TOOL.name, description: env.WEATHER_TOOL.description,
  parameters: env.WEATHER_TOOL.schema, strict: false,
}];

/** Reads a streamed response: event types in order, text, call arguments, the final response. */
async function collect(stream) {
  const out = { types: [], text: '', args: '', final: null, seq: [] };
  for await (const ev of stream) {
    out.types.push(ev.type);
    if (typeof ev.sequence_number === 'number') out.seq.push(ev.sequence_number);
    if (ev.type === 'response.output_text.delta') out.text += ev.delta;
    if (ev.type === 'response.function_call_arguments.delta') out.args += ev.delta;
    if (ev.type === 'response.completed') out.final = ev.response;
  }
  return out;
}

const openaiModel = env.models.find((x) => env.kindOf(x) === 'openai');
const anthropicModel = env.models.find((x) => env.kindOf(x) === 'anthropic');
const cases = [['an OpenAI-type channel (relayed)', openaiModel], ['an Anthropic-type channel (converted)', anthropicModel]]
  .filter(([, model]) => model);

describe('OpenAI SDK responses', { skip: env.skip }, () => {
  for (const [where, model] of cases) {
    describe(`on ${where}`, () => {
      test('responses.create returns the answer text and usage', async () => {
        const res = await client().responses.create({ model, input: env.HELLO_PROMPT });
        assert.equal(res.object, 'response');
        assert.equal(res.status, 'completed');
        assert.equal(res.model, model);
        assert.ok(res.id, 'the response has an id');
        env.assertHello(res.output_text, model);
        env.assertUsage(res.usage.input_tokens, res.usage.output_tokens);
      });

      test('a streamed response yields the documented events in order', async () => {
        const got = await collect(await client().responses.create({ model, input: env.HELLO_PROMPT, max_output_tokens: 64, stream: true }));
        assert.equal(got.types[0], 'response.created');
        assert.equal(got.types.at(-1), 'response.completed');
        for (const t of ['response.output_item.added', 'response.output_text.delta', 'response.output_text.done', 'response.output_item.done']) {
          assert.ok(got.types.includes(t), `a ${t} event arrived (got ${got.types.join(', ')})`);
        }
        assert.deepEqual(got.seq, [...got.seq].sort((a, b) => a - b), 'sequence numbers increase');
        env.assertHello(got.text, model);
        assert.equal(got.final.status, 'completed');
        env.assertUsage(got.final.usage.input_tokens, got.final.usage.output_tokens, 'completed response usage');
      });

      test('instructions, history and sampling parameters reach the upstream', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        for (const sampling of env.SAMPLING) {
          const res = await client().responses.create({
            model, instructions: env.SYSTEM_PROMPT, max_output_tokens: env.SETTINGS.maxTokens,
            temperature: sampling.temperature, top_p: sampling.topP,
            input: [
              { role: 'user', content: 'Hi' },
              { role: 'assistant', content: 'Hello!' },
              { role: 'user', content: env.SETTINGS_PROMPT },
            ],
          });
          assert.equal(res.output_text, `Settings: system="${env.SYSTEM_PROMPT}" turns=3 max_tokens=${env.SETTINGS.maxTokens} `
            + `temperature=${sampling.temperature ?? '-'} top_p=${sampling.topP ?? '-'} stop=-`);
        }
      });

      test('an upstream server error raises InternalServerError', { skip: !env.fakes && 'needs the fake upstreams' }, async () => {
        await assert.rejects(client().responses.create({ model, input: env.FAIL_PROMPT }), (err) => {
          assert.ok(err instanceof OpenAI.InternalServerError, `got ${err.constructor.name}: ${err.message}`);
          env.assertUpstreamFailure(err.status);
          return true;
        });
      });

      test('a tool call round trip ends in an answer that uses the tool result', async () => {
        const first = await client().responses.create({ model, input: env.WEATHER_PROMPT, tools, max_output_tokens: 128 });
        const calls = first.output.filter((o) => o.type === 'function_call');
        assert.equal(calls.length, 1, `one function_call in ${JSON.stringify(first.output)}`);
        assert.equal(calls[0].name, env.WEATHER_TOOL.name);
        assert.ok(calls[0].call_id, 'the call has a call_id');
        env.assertWeatherArgs(calls[0].arguments);

        const second = await client().responses.create({
          model, tools, max_output_tokens: 128,
          input: [
            { role: 'user', content: env.WEATHER_PROMPT },
            ...first.output,
            { type: 'function_call_output', call_id: calls[0].call_id, output: JSON.stringify(env.WEATHER_RESULT) },
          ],
        });
        env.assertWeatherAnswer(second.output_text);
      });

      test('a streamed tool call carries the arguments', async () => {
        const got = await collect(await client().responses.create({ model, input: env.WEATHER_PROMPT, tools, max_output_tokens: 128, stream: true }));
        assert.ok(got.types.includes('response.function_call_arguments.done'), `got ${got.types.join(', ')}`);
        env.assertWeatherArgs(got.args);
        const call = got.final.output.find((o) => o.type === 'function_call');
        assert.equal(call?.name, env.WEATHER_TOOL.name);
      });
    });
  }

  test('responses.retrieve returns a response stored by an OpenAI-type channel', { skip: !openaiModel && 'needs an OpenAI-type model' }, async () => {
    const created = await client().responses.create({ model: openaiModel, input: env.HELLO_PROMPT });
    const got = await client().responses.retrieve(created.id);
    assert.equal(got.id, created.id);
    assert.equal(got.status, 'completed');
    env.assertHello(got.output_text, openaiModel);
  });

  test('responses.retrieve of a response converted for a chat channel (not stored) raises NotFoundError', { skip: !anthropicModel && 'needs an Anthropic-type model' }, async () => {
    const created = await client().responses.create({ model: anthropicModel, input: env.HELLO_PROMPT });
    assert.equal(created.store, false, 'a converted response says it was not stored');
    await assert.rejects(client().responses.retrieve(created.id), (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, `got ${err.constructor.name} ${err.status}: ${err.message}`);
      return true;
    });
  });

  test('responses.compact on an OpenAI-type channel returns the compaction', { skip: !openaiModel && 'needs an OpenAI-type model' }, async () => {
    const res = await client().responses.compact({ model: openaiModel, input: [{ role: 'user', content: env.HELLO_PROMPT }] });
    assert.equal(res.object, 'response.compaction');
    assert.equal(res.output.at(-1).type, 'compaction');
    assert.ok(res.output.at(-1).encrypted_content, 'the compaction item carries its content');
    env.assertUsage(res.usage.input_tokens, res.usage.output_tokens);
  });

  test('responses.compact on a chat-only channel raises BadRequestError', { skip: !anthropicModel && 'needs an Anthropic-type model' }, async () => {
    await assert.rejects(client().responses.compact({ model: anthropicModel, input: env.HELLO_PROMPT }), (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `got ${err.constructor.name} ${err.status}: ${err.message}`);
      return true;
    });
  });

  test('previous_response_id and background on a chat-only channel raise BadRequestError', { skip: !anthropicModel && 'needs an Anthropic-type model' }, async () => {
    for (const extra of [{ previous_response_id: 'resp_earlier' }, { background: true }]) {
      await assert.rejects(client().responses.create({ model: anthropicModel, input: env.HELLO_PROMPT, ...extra }), (err) => {
        assert.ok(err instanceof OpenAI.BadRequestError, `${JSON.stringify(extra)}: got ${err.constructor.name} ${err.status}: ${err.message}`);
        return true;
      });
    }
  });

  test('responses.retrieve returns a streamed response once it completed', { skip: !openaiModel && 'needs an OpenAI-type model' }, async () => {
    let id = '';
    for await (const ev of await client().responses.create({ model: openaiModel, input: env.HELLO_PROMPT, stream: true })) {
      if (ev.type === 'response.created') id = ev.response.id;
    }
    const got = await client().responses.retrieve(id);
    assert.equal(got.id, id);
    env.assertHello(got.output_text, openaiModel);
  });

  test('responses.retrieve of an unknown id raises NotFoundError', async () => {
    await assert.rejects(client().responses.retrieve('resp_turnpike_compat_unknown'), (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, `got ${err.constructor.name} ${err.status}: ${err.message}`);
      return true;
    });
  });

  test('responses.retrieve by another key of another user raises NotFoundError', { skip: !openaiModel || !process.env.TURNPIKE_BROKE_KEY }, async () => {
    const created = await client().responses.create({ model: openaiModel, input: env.HELLO_PROMPT });
    await assert.rejects(client(process.env.TURNPIKE_BROKE_KEY).responses.retrieve(created.id), (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, `got ${err.constructor.name} ${err.status}: ${err.message}`);
      return true;
    });
  });
});
