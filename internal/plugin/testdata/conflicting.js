// Claims the channel type and the submit route of per_task.js, so it can
// only be stored with force and is held back while acme-video is enabled.
export const meta = {
  apiVersion: 1,
  key: "copycat",
  name: "Copycat",
  version: "0.1.0",
  author: { name: "Turnpike tests" },
  models: ["copy-1"],
  fetchMode: "per_task",
  channelTypes: [1901],
  routes: [
    { method: "POST", path: "/acme/v1/videos", type: "submit", decode: "decode", render: "render" }
  ]
};

export function buildSubmitRequest(ctx) { return { url: ctx.baseUrl + "/x", method: "POST" }; }
export function parseSubmitResponse(ctx, res) { return { taskId: "t" }; }
export function buildQueryRequest(ctx) { return { url: ctx.baseUrl + "/x/" + ctx.taskId }; }
export function parseTaskResult() { return { status: "SUCCESS" }; }

export const native = {
  decode(ctx) { return { kind: "submit", model: "copy-1" }; },
  render(ctx, task) { return {}; }
};
