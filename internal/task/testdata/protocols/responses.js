// A std_responses plugin (claimed under the alias openai_responses) that
// serves all three modes, for the host protocol tests.
export const meta = {
  apiVersion: 1,
  key: "respall",
  name: "Responses, every mode",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["resp-1"],
  fetchMode: "per_task",
  auth: "api_key",
  protocols: [{ name: "openai_responses", supports: ["stream", "sync", "background"] }],
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader }, body: { model: ctx.upstreamModel, prompt: ctx.requestBody.prompt, stream: ctx.requestBody.stream } };
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
  if (body.error) out.reason = body.error;
  return out;
}

export function listArtifacts(task) {
  return task.status === "SUCCESS" ? [{ key: "main", type: "video" }] : [];
}

export function buildContentRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.upstreamTaskId + "/main", method: ctx.clientRequest.method, headers: { Authorization: ctx.authHeader } };
}

function text(ctx) {
  return "video at " + (ctx.artifacts && ctx.artifacts.main ? ctx.artifacts.main.url : "nowhere");
}

export const protocols = {
  openai_responses: {
    decodeRequest(ctx) {
      const req = ctx.body.value;
      if (!req.input) throw new Error("input is required");
      return { kind: "submit", model: ctx.model, requestBody: { prompt: String(req.input), stream: ctx.stream } };
    },
    renderEvents(ctx, task, previousState) {
      const status = task.status;
      if (previousState && previousState.status === status) return { events: [], state: previousState, done: false };
      const events = [{ type: "response.progress", status }];
      if (status === "SUCCESS") events.push({ type: "response.completed", response: { output: [{ type: "message", content: [{ type: "output_text", text: text(ctx) }] }] } });
      if (status === "FAILURE") events.push({ type: "error", code: "task_failed", message: task.fail_reason });
      return { events, state: { status }, done: status === "SUCCESS" || status === "FAILURE" };
    },
    renderFinal(ctx, task) {
      if (task.status !== "SUCCESS" && task.status !== "FAILURE") throw new Error("not finished");
      return { output: [{ type: "message", content: [{ type: "output_text", text: "final " + text(ctx) }] }], metadata: { vendor: "respall" } };
    },
  },
};
