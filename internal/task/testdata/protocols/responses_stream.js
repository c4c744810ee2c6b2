// A stream-only std_responses plugin for the host protocol tests.
export const meta = {
  apiVersion: 1,
  key: "respstream",
  name: "Responses, stream only",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["resp-s"],
  fetchMode: "per_task",
  auth: "api_key",
  protocols: [{ name: "std_responses", supports: ["stream"] }],
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs", headers: { Authorization: ctx.authHeader }, body: { model: ctx.upstreamModel, prompt: ctx.requestBody.prompt } };
}

export function parseSubmitResponse(ctx, resp) {
  return { taskId: resp.body.id };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  const statuses = { queued: "QUEUED", running: "IN_PROGRESS", done: "SUCCESS", failed: "FAILURE" };
  return { status: statuses[body.status] || "UNKNOWN" };
}

export const protocols = {
  std_responses: {
    decodeRequest(ctx) {
      return { kind: "submit", model: ctx.model, requestBody: { prompt: String(ctx.body.value.input || "") } };
    },
    renderEvents(ctx, task, previousState) {
      const status = task.status;
      if (status === "SUCCESS") {
        const events = previousState ? [{ type: "output", data: "clip " }, { type: "output", data: "ready" }] : [{ type: "output", data: "clip ready" }];
        return { events, state: { status }, done: true };
      }
      if (previousState && previousState.status === status) return { events: [], state: previousState, done: false };
      return { events: [{ type: "progress", message: status.toLowerCase() }], state: { status }, done: false };
    },
  },
};
