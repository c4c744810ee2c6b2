// A per_task video plugin bound to a chat provider channel type (openai,
// 1), whose channels may hold several keys: the key tests use it.
export const meta = {
  apiVersion: 1,
  key: "keyed",
  channelTypes: [1],
  name: "Keyed Video",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["keyed-v1"],
  fetchMode: "per_task",
  auth: "api_key",
  allowedHosts: ["cdn.acme.test:8443"],
  usageSchema: {
    seconds: { type: "number", unit: "second", description: "Video per second" },
  },
  routes: [
    { method: "POST", path: "/keyed/v1/videos", type: "submit", decode: "decodeSubmit", render: "renderSubmit", action: "generate" },
    { method: "POST", path: "/keyed/v1/videos/:task_id/extend", type: "submit", decode: "decodeExtend", render: "renderSubmit", action: "extend" },
    { method: "GET", path: "/keyed/v1/videos/:task_id", type: "query", render: "renderTask" },
  ],
};

function jsonBody(ctx) {
  if (!ctx.body || ctx.body.kind !== "json") throw new Error("JSON body required");
  return ctx.body.value;
}

export const native = {
  decodeSubmit(ctx) {
    const body = jsonBody(ctx);
    if (!body.model) throw new Error("model is required");
    return { kind: "submit", model: body.model, requestBody: body };
  },
  decodeExtend(ctx) {
    const body = jsonBody(ctx);
    return { kind: "submit", model: body.model, requestBody: body, originTaskIds: [ctx.params.task_id] };
  },
  renderSubmit(ctx, task) {
    return { id: task.task_id, status: task.status, data: task.data };
  },
  renderTask(ctx, task) {
    const out = { id: task.task_id, status: task.status, progress: task.progress, reason: task.fail_reason };
    if (task.result_url) out.url = task.result_url;
    return out;
  },
  error(ctx, err) {
    return { error: { code: err.code, message: err.message, status: err.httpStatus } };
  },
};

export function buildSubmitRequest(ctx) {
  const body = { model: ctx.upstreamModel, prompt: ctx.requestBody.prompt, seconds: ctx.requestBody.seconds || 5 };
  if (ctx.originTasks) body.extend = ctx.originTasks[0].upstreamTaskId;
  if (ctx.requestBody.target) {
    return { url: ctx.requestBody.target, headers: { Authorization: ctx.authHeader }, body };
  }
  if (ctx.requestBody.explode) throw new Error("cannot build with key " + ctx.apiKey);
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader, "X-Trace": ctx.publicTaskId }, body };
}

export function parseSubmitResponse(ctx, resp) {
  if (resp.body.refuse) return { error: { code: "content_policy", message: resp.body.refuse, httpStatus: 422 } };
  if (resp.body.done) return { taskId: resp.body.id, immediate: { status: "SUCCESS", url: resp.body.url } };
  return { taskId: resp.body.id, taskData: { id: resp.body.id, accepted: true }, state: { polls: 0 } };
}

export function parseSubmitError(ctx, resp) {
  return { code: "vendor_" + resp.statusCode, message: "vendor says: " + (resp.body.message || "no") };
}

export function extractUsage(ctx) {
  return { seconds: Number(ctx.requestBody.seconds || 5) };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body, info) {
  if (body.crash) throw new Error("unreadable answer");
  const statuses = { queued: "QUEUED", running: "IN_PROGRESS", done: "SUCCESS", failed: "FAILURE" };
  const out = { status: statuses[body.status] || "UNKNOWN" };
  if (body.progress !== undefined) out.progress = body.progress;
  if (body.error) out.reason = body.error;
  if (body.url) out.url = body.url;
  if (body.status === "running") out.state = { polls: ((ctx.state && ctx.state.polls) || 0) + 1 };
  return out;
}

export function sanitizeTaskData(body, publicTaskId) {
  if (!body || typeof body !== "object" || Array.isArray(body)) return body;
  const out = {};
  for (const k of Object.keys(body)) out[k] = k === "id" ? publicTaskId : body[k];
  return out;
}

export function extractUsageOnComplete(task, result, data) {
  if (data && data.seconds_used) return { seconds: data.seconds_used };
  return {};
}
