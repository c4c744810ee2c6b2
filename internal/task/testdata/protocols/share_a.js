// One of two std_video plugins sharing model shared-v, for candidate
// decoding: sharea draws only cats.
export const meta = {
  apiVersion: 1,
  key: "sharea",
  name: "Shared a",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["shared-v"],
  fetchMode: "per_task",
  auth: "api_key",
  protocols: ["std_video"],
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader }, body: { plugin: "sharea", prompt: ctx.requestBody.prompt } };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: resp.body.id };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  return { status: "IN_PROGRESS" };
}

export const protocols = {
  std_video: {
    decodeRequest(ctx) {
      const req = ctx.body.value;
      if (!req.prompt) throw new Error("prompt is required");
      if (req.prompt.indexOf("cat") < 0) throw new Error("sharea draws only cats");
      return { kind: "submit", model: ctx.model, requestBody: { prompt: req.prompt } };
    },
    render(ctx, task) {
      return { plugin: "sharea" };
    },
  },
};
