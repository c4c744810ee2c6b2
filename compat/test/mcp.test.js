// The official MCP TypeScript SDK against the gateway's MCP surface
// (CONTRACT.md §19): it negotiates a protocol version, keeps the sealed
// session id, lists the tools the key is granted under their namespaced
// names, calls one, and is refused a tool outside the grant.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import * as env from '../lib/env.js';

/** A registered MCP server whose "add" tool the key is granted (and only that). */
const server = process.env.TURNPIKE_MCP_SERVER ?? '';
const skip = env.skip || (server ? false : 'set TURNPIKE_MCP_SERVER to a server whose add tool the key is granted');

async function connect(path, key = env.apiKey) {
  const client = new Client({ name: 'turnpike-compat', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${env.gatewayURL}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport, { timeout: env.timeoutMs });
  return { client, transport };
}

describe('MCP gateway (official TypeScript SDK)', { skip }, () => {
  test('connects, lists the granted tools namespaced and calls one', async () => {
    const { client, transport } = await connect('/mcp');
    try {
      assert.ok(transport.sessionId, 'the gateway issued a session id');
      assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION, 'the newest version the SDK speaks is agreed');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), [`${server}__add`], 'only the granted tool is listed');
      const res = await client.callTool({ name: `${server}__add`, arguments: { a: 2, b: 3 } });
      assert.equal(res.isError ?? false, false);
      assert.equal(res.content[0].text, '5');
      await client.ping();
    } finally {
      await client.close();
    }
  });

  test('a server\'s own endpoint names its tools without the prefix', async () => {
    const { client } = await connect(`/mcp/${server}`);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['add']);
      const res = await client.callTool({ name: 'add', arguments: { a: 40, b: 2 } });
      assert.equal(res.content[0].text, '42');
    } finally {
      await client.close();
    }
  });

  test('a tool outside the grant is an InvalidParams error', async () => {
    const { client } = await connect('/mcp');
    try {
      await assert.rejects(client.callTool({ name: `${server}__secret`, arguments: {} }),
        (err) => err instanceof McpError && err.code === ErrorCode.InvalidParams);
    } finally {
      await client.close();
    }
  });

  test('a wrong key cannot connect', async () => {
    await assert.rejects(connect('/mcp', env.badKey));
  });
});
