// A synthetic plugin that reaches a vendor directly or another gateway
// (peer_api) through that gateway's own native routes for this plugin.
export const meta = {
  apiVersion: 1,
  key: "relay",
  name: "Relay",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["relay-v1"],
  fetchMode: "per_task",
  auth: "api_key",
  upstreams: ["vendor", "peer_api"],
  routes: [
    { method: "POST", path: "/relay/v1/jobs", type: "submit", decode: "decodeSubmit", render: "renderTask" },
    { method: "GET", path: "/relay/v1/jobs/:task_id", type: "query", render: "renderTask" },
  ],
};

export const native = {
  decodeSubmit(ctx) {
    return { kind: "submit", model: ctx.body.value.model, requestBody: ctx.body.value };
  },
  renderTask(ctx, task) {
    return { id: task.task_id, status: task.status, url: task.result_url || null };
  },
};

function peer(ctx) {
  return ctx.upstream.kind === "peer_api";
}

export function buildSubmitRequest(ctx) {
  const headers = { Authorization: ctx.authHeader, "X-Upstream-Kind": ctx.upstream.kind };
  if (peer(ctx)) return { url: ctx.baseUrl + "/relay/v1/jobs", headers: headers, body: ctx.requestBody };
  headers["X-Via"] = ctx.requestHeaders["X-Upstream-Kind"] || "client";
  return { url: ctx.baseUrl + "/v1/jobs", headers: headers, body: { prompt: ctx.requestBody.prompt } };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: resp.body.id };
}

export function buildQueryRequest(ctx) {
  const headers = { Authorization: ctx.authHeader, "X-Upstream-Kind": ctx.upstream.kind };
  if (peer(ctx)) return { url: ctx.baseUrl + "/relay/v1/jobs/" + ctx.taskId, method: "GET", headers: headers };
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: headers };
}

export function parseTaskResult(ctx, body) {
  if (peer(ctx)) return { status: body.status, url: body.url || undefined };
  return { status: body.status === "done" ? "SUCCESS" : "IN_PROGRESS", url: body.url };
}
