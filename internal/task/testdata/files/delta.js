// A synthetic plugin submitting through an SSE stream in delta mode: each
// event's data is {changes, done, control?}, passed through to the host, so
// a test scripts exactly what the host must apply.
export const meta = {
  apiVersion: 1,
  key: "delta",
  name: "Delta",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["delta-v1"],
  fetchMode: "per_task",
  auth: "api_key",
  submitResponseTypes: ["sse"],
  requiredCapabilities: ["submit-sse-delta@1"],
  routes: [{ method: "POST", path: "/delta/v1/jobs", type: "submit", decode: "decodeSubmit", render: "renderTask" }],
};

export const native = {
  decodeSubmit(ctx) {
    return { kind: "submit", model: ctx.body.value.model, requestBody: ctx.body.value };
  },
  renderTask(ctx, task) {
    return { id: task.task_id, status: task.status, data: task.data };
  },
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/submit", headers: { Authorization: ctx.authHeader }, body: {}, responseType: "sse" };
}

export function parseSubmitEventDelta(ctx, event, previous) {
  const chunk = JSON.parse(event.data);
  if (previous && previous.doc !== undefined) throw new Error("the result leaked into the control state");
  const n = (previous ? previous.n : 0) + 1;
  let changes = chunk.changes || [];
  if (chunk.repeat) {
    changes = [];
    for (let i = 0; i < chunk.repeat; i++) changes.push({ op: "append", path: ["list"], value: i });
  }
  if (chunk.bigText) changes = [{ op: "appendText", path: ["text"], value: "y".repeat(chunk.bigText) }];
  const state = chunk.bigControl ? { n: n, pad: "z".repeat(chunk.bigControl) } : { n: n };
  return { changes: changes, state: state, done: chunk.done === true };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: "delta-job", taskData: resp.body };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  return { status: "IN_PROGRESS" };
}
