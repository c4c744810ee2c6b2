// A synthetic per_task video plugin used by the registry and admin tests.
export const meta = {
  apiVersion: 1,
  key: "acme-video",
  name: "Acme Video",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["acme-v1", "acme-v1-pro"],
  fetchMode: "per_task",
  description: "Synthetic text to video",
  icon: "text:AV",
  baseUrl: "https://api.acme-video.example/",
  channelTypes: [1901],
  protocols: ["std_video"],
  routes: [
    { method: "POST", path: "/acme/v1/videos", type: "submit", decode: "decodeCreate", render: "created" },
    { method: "GET", path: "/acme/v1/videos/:task_id", type: "query", render: "status" }
  ]
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/videos", method: "POST", body: ctx.requestBody };
}
export function parseSubmitResponse(ctx, res) { return { taskId: res.body.id }; }
export function buildQueryRequest(ctx) { return { url: ctx.baseUrl + "/v1/videos/" + ctx.taskId }; }
export function parseTaskResult(ctx, body) { return { status: body.status === "done" ? "SUCCESS" : "IN_PROGRESS" }; }

export const native = {
  decodeCreate(ctx) { return { kind: "submit", model: ctx.body.value.model, requestBody: ctx.body.value }; },
  created(ctx, task) { return { id: task.task_id }; },
  status(ctx, task) { return { id: task.task_id, status: task.status }; }
};

export const protocols = {
  std_video: {
    decodeRequest(ctx) { return { kind: "submit", model: ctx.model, requestBody: ctx.body.value }; },
    render(ctx, task) { return { id: task.task_id, echo: ctx.echo === undefined ? null : ctx.echo }; }
  }
};
