// A synchronous std_image plugin (claimed under the alias openai_image):
// the vendor answers the submit with the finished images.
export const meta = {
  apiVersion: 1,
  key: "imgsync",
  name: "Images, immediate",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["img-sync"],
  fetchMode: "per_task",
  auth: "api_key",
  protocols: ["openai_image"],
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader }, body: Object.assign({ files: ctx.files.map((f) => f.ref) }, ctx.requestBody) };
}

export function parseSubmitResponse(ctx, resp) {
  if (resp.body.error) return { taskId: resp.body.id, immediate: { status: "FAILURE", reason: resp.body.error } };
  return { taskId: resp.body.id, taskData: { urls: resp.body.urls }, immediate: { status: "SUCCESS" } };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  return { status: "UNKNOWN" };
}

export const protocols = {
  openai_image: {
    decodeRequest(ctx) {
      let req = {};
      if (ctx.body.kind === "json") req = ctx.body.value;
      else for (const k of Object.keys(ctx.body.fields)) req[k] = ctx.body.fields[k][0];
      return { kind: "submit", model: ctx.model, requestBody: { prompt: req.prompt, op: ctx.operation, n: Number(req.n || 1) } };
    },
    render(ctx, task) {
      return { data: task.data.urls.map((u) => ({ url: u })), revised_prompt: "revised " + ctx.requestBody.prompt };
    },
  },
};
