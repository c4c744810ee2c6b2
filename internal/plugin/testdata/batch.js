// A synthetic batch music plugin used by the registry and admin tests.
export const meta = {
  apiVersion: 1,
  key: "tunebox",
  name: "Tunebox",
  version: "2.1.0",
  author: { name: "Turnpike tests", url: "https://example.com" },
  models: ["tune-1"],
  fetchMode: "batch",
  baseUrl: "https://tunebox.example",
  routes: [
    { method: "POST", path: "/tunebox/submit", type: "submit", decode: "decode", render: "render" }
  ]
};

export function buildSubmitRequest(ctx) { return { url: ctx.baseUrl + "/submit", method: "POST", body: ctx.requestBody }; }
export function parseSubmitResponse(ctx, res) { return { taskId: String(res.body.id) }; }
export function buildBatchQueryRequest(ctx, tasks) { return { url: ctx.baseUrl + "/batch", method: "POST", body: { ids: tasks.map(t => t.taskId) } }; }
export function parseBatchResult(ctx, body) { return body.items.map(i => ({ taskId: i.id, status: "SUCCESS" })); }
export function parseTaskResult(ctx, body) { return { status: "SUCCESS" }; }

export const native = {
  decode(ctx) { return { kind: "submit", model: ctx.body.value.model, requestBody: ctx.body.value }; },
  render(ctx, task) { return { task_id: task.task_id }; }
};
