// A std_video plugin (claimed under the alias openai_video) for the host
// protocol tests: a per_task vendor with a video artifact.
export const meta = {
  apiVersion: 1,
  key: "vidco",
  name: "Vidco",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["vid-1"],
  fetchMode: "per_task",
  auth: "api_key",
  protocols: ["openai_video"],
};

function request(ctx) {
  if (ctx.body.kind === "json") return ctx.body.value;
  if (ctx.body.kind !== "multipart") throw new Error("JSON or multipart body required");
  const req = {};
  for (const k of Object.keys(ctx.body.fields)) req[k] = ctx.body.fields[k][0];
  return req;
}

export function buildSubmitRequest(ctx) {
  const body = { model: ctx.upstreamModel, prompt: ctx.requestBody.prompt, decodedFor: ctx.requestBody.upstream, op: ctx.action };
  body.files = ctx.files.map((f) => f.ref);
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader }, body };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: resp.body.id };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  const statuses = { queued: "QUEUED", running: "IN_PROGRESS", done: "SUCCESS", failed: "FAILURE" };
  const out = { status: statuses[body.status] || "UNKNOWN" };
  if (body.progress !== undefined) out.progress = body.progress;
  if (body.error) out.reason = body.error;
  return out;
}

export function listArtifacts(task) {
  if (task.status !== "SUCCESS") return [];
  return [{ key: "poster", type: "image", mimeType: "image/png" }, { key: "main", type: "video", mimeType: "video/mp4" }];
}

export function buildContentRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.upstreamTaskId + "/" + ctx.artifactKey, method: ctx.clientRequest.method, headers: { Authorization: ctx.authHeader } };
}

export const protocols = {
  openai_video: {
    decodeRequest(ctx) {
      const req = request(ctx);
      if (!req.prompt) throw new Error("prompt is required");
      return { kind: "submit", model: ctx.model, requestBody: { prompt: req.prompt, upstream: ctx.upstreamModel || null } };
    },
    render(ctx, task) {
      const out = { id: "vendor-id", task_id: task.task_id, object: "thing", status: "weird", progress: "n/a", seconds: "8" };
      if (ctx.requestBody) out.prompt = ctx.requestBody.prompt;
      if (ctx.artifacts) out.download = ctx.artifacts.main.url;
      return out;
    },
  },
};
