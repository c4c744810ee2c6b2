// A synthetic batch-polled music vendor plugin for the task pipeline tests.
export const meta = {
  apiVersion: 1,
  key: "bulk",
  name: "Bulk Music",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["bulk-song"],
  fetchMode: "batch",
  auth: "api_key",
  routes: [
    { method: "POST", path: "/bulk/submit", type: "submit", decode: "decodeSubmit", render: "renderSubmit" },
    { method: "POST", path: "/bulk/fetch", type: "dynamic", decode: "decodeFetch", render: "renderTasks" },
    { method: "GET", path: "/bulk/fetch/:id", type: "query", taskIdParam: "id", render: "renderTask" },
  ],
};

export const native = {
  decodeSubmit(ctx) {
    if (ctx.body.kind === "form") {
      return { kind: "submit", model: "bulk-song", action: "MUSIC", requestBody: { prompt: ctx.body.fields.prompt[0] } };
    }
    return { kind: "submit", model: "bulk-song", action: "MUSIC", requestBody: ctx.body.value };
  },
  decodeFetch(ctx) {
    return { kind: "query", taskIds: ctx.body.value.ids };
  },
  renderSubmit(ctx, task) {
    return { code: "success", data: task.task_id };
  },
  renderTask(ctx, task) {
    return { code: "success", data: { task_id: task.task_id, status: task.status, data: task.data } };
  },
  renderTasks(ctx, tasks) {
    return { code: "success", data: tasks.map((t) => ({ task_id: t.task_id, status: t.status })) };
  },
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/songs", headers: { Authorization: ctx.authHeader }, body: { prompt: ctx.requestBody.prompt } };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: resp.body.data };
}

export function buildBatchQueryRequest(ctx, taskIds) {
  return { url: ctx.baseUrl + "/songs/fetch", headers: { Authorization: ctx.authHeader }, body: { ids: taskIds, n: ctx.tasks.length } };
}

export function parseBatchResult(ctx, body) {
  return body.items.map((it) => ({ taskId: it.id, status: it.status, reason: it.reason || "", data: it }));
}

export function parseTaskResult(ctx, body) {
  return { status: body.status };
}
