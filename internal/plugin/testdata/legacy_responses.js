// A synthetic plugin declaring the marketplace's legacy bare
// "openai_responses" claim; its modes are inferred from the render hooks.
export const meta = {
  apiVersion: 1,
  key: "legacy-resp",
  name: "Legacy Responses",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["legacy-v1"],
  fetchMode: "per_task",
  protocols: ["openai_responses"]
};

export function buildSubmitRequest(ctx) {
  return { url: ctx.baseUrl + "/v1/jobs", method: "POST", body: ctx.requestBody };
}
export function parseSubmitResponse(ctx, res) { return { taskId: res.body.id }; }
export function buildQueryRequest(ctx) { return { url: ctx.baseUrl + "/v1/jobs/" + ctx.taskId }; }
export function parseTaskResult(ctx, body) { return { status: body.status === "done" ? "SUCCESS" : "IN_PROGRESS" }; }

export const protocols = {
  openai_responses: {
    decodeRequest(ctx) { return { kind: "submit", model: ctx.model, requestBody: ctx.body.value }; },
    renderFinal(ctx, task) { return { output: [] }; }
  }
};
