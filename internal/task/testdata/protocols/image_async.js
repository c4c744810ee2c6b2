// An asynchronous std_image plugin: the vendor answers with a job id and
// the host waits inside the request through the query hooks.
export const meta = {
  apiVersion: 1,
  key: "imgasync",
  name: "Images, polled",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["img-async"],
  fetchMode: "per_task",
  auth: "api_key",
  protocols: [{ name: "std_image" }],
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader }, body: ctx.requestBody };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: resp.body.id };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  const statuses = { running: "IN_PROGRESS", done: "SUCCESS", failed: "FAILURE" };
  const out = { status: statuses[body.status] || "UNKNOWN" };
  if (body.error) out.reason = body.error;
  return out;
}

export const protocols = {
  std_image: {
    decodeRequest(ctx) {
      return { kind: "submit", model: ctx.model, requestBody: { prompt: ctx.body.value.prompt, op: ctx.operation } };
    },
    render(ctx, task) {
      return { data: task.data.urls.map((u) => ({ url: u })) };
    },
  },
};
