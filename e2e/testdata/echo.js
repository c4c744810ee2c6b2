// A small plugin that the browser tests install from a fake marketplace.
// Its key and routes differ from the Acme plugin's, so both can be live.
export const meta = {
  apiVersion: 1,
  key: "echo",
  name: "Echo Images",
  version: "0.3.0",
  author: { name: "Turnpike tests" },
  description: { en: "Returns what it is given; for marketplace tests" },
  models: ["echo-img"],
  fetchMode: "per_task",
  routes: [
    { method: "POST", path: "/echo/v1/images", type: "submit", decode: "decode", render: "created" },
    { method: "GET", path: "/echo/v1/images/:task_id", type: "query", render: "status" },
  ],
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/images", method: "POST", body: ctx.requestBody };
}
export function parseSubmitResponse(ctx, res) { return { taskId: res.body.id }; }
export function buildQueryRequest(ctx) { return { url: ctx.baseUrl + "/v1/images/" + ctx.taskId }; }
export function parseTaskResult(ctx, body) { return { status: body.done ? "SUCCESS" : "IN_PROGRESS" }; }

export const native = {
  decode(ctx) { return { kind: "submit", model: ctx.body.value.model, requestBody: ctx.body.value }; },
  created(ctx, task) { return { id: task.task_id }; },
  status(ctx, task) { return { id: task.task_id, status: task.status }; },
};
