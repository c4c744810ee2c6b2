// A synthetic plugin for files, SSE submits (snapshot mode) and artifacts.
export const meta = {
  apiVersion: 1,
  key: "filer",
  name: "Filer",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: ["filer-v1"],
  fetchMode: "per_task",
  auth: "api_key",
  submitResponseTypes: ["json", "sse"],
  routes: [
    { method: "POST", path: "/filer/v1/jobs", type: "submit", decode: "decodeSubmit", render: "renderTask" },
    { method: "GET", path: "/filer/v1/jobs/:task_id", type: "query", render: "renderTask" },
  ],
};

function fieldsOf(body) {
  const out = {};
  for (const k of Object.keys(body.fields || {})) out[k] = body.fields[k][0];
  return out;
}

export const native = {
  decodeSubmit(ctx) {
    if (ctx.body.kind === "json") return { kind: "submit", model: ctx.body.value.model, requestBody: ctx.body.value };
    if (ctx.body.kind === "multipart") {
      const rb = fieldsOf(ctx.body);
      rb.refs = ctx.body.files.map((f) => f.ref);
      if (rb.spec) rb.spec = JSON.parse(rb.spec);
      return { kind: "submit", model: rb.model, requestBody: rb };
    }
    throw new Error("JSON or multipart body required");
  },
  renderTask(ctx, task) {
    return { id: task.task_id, status: task.status, data: task.data, url: task.result_url || null };
  },
};

// requestBody.spec is the descriptor's body (or parts) verbatim, so each
// test states exactly what the plugin asks the host to send.
export function buildSubmitRequest(ctx) {
  const rb = ctx.requestBody;
  const d = { url: ctx.baseUrl + "/submit", headers: { Authorization: ctx.authHeader, "X-Files": JSON.stringify(ctx.files) } };
  if (rb.mode === "multipart") {
    d.bodyType = "multipart";
    d.parts = rb.spec;
  } else if (rb.mode === "sse") {
    d.responseType = "sse";
    d.body = { prompt: "stream" };
  } else {
    d.body = rb.spec;
  }
  return d;
}

export function parseSubmitEvent(ctx, event, previous) {
  const chunk = JSON.parse(event.data);
  if (chunk.fail) throw new Error("provider stream failure");
  if (chunk.large) return { state: { doc: "x".repeat(1048577) }, done: false };
  const state = Object.assign({ doc: "", events: [] }, previous || {});
  state.doc = state.doc + (chunk.part || "");
  state.events = state.events.concat([event.event + "/" + event.id]);
  return { state: state, done: chunk.done === true };
}

export function parseSubmitResponse(ctx, resp) {
  if (resp.body && resp.body.doc !== undefined) return { taskId: "sse-job", taskData: resp.body };
  return { taskId: resp.body.id, taskData: { id: resp.body.id } };
}

export function buildQueryRequest(ctx) {
  return { url: ctx.baseUrl + "/jobs/" + ctx.taskId, method: "GET", headers: { Authorization: ctx.authHeader } };
}

export function parseTaskResult(ctx, body) {
  return { status: body.status === "done" ? "SUCCESS" : "IN_PROGRESS", url: body.url };
}

// Artifacts: a video on the vendor (credentialed) and a poster on a CDN
// (credentialless), whose address the vendor gave in the task data.
export function listArtifacts(ctx) {
  if (ctx.status !== "SUCCESS") return [];
  return [
    { key: "video.mp4", type: "video", mimeType: "video/mp4" },
    { key: "poster", type: "image" },
  ];
}

export function buildContentRequest(ctx) {
  if (ctx.artifactKey === "poster") {
    return { url: ctx.data.poster, credentialless: true, method: ctx.clientRequest.method };
  }
  const headers = { Authorization: ctx.authHeader };
  for (const k of Object.keys(ctx.clientRequest.headers)) headers[k] = ctx.clientRequest.headers[k];
  return { url: ctx.baseUrl + "/content/" + ctx.upstreamTaskId + "/" + ctx.artifactKey, method: ctx.clientRequest.method, headers: headers };
}
