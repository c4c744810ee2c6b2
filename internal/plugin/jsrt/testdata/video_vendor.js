// A representative task plugin written for the jsrt tests: it exercises the
// syntax real plugins use (regular expressions with brackets and slashes,
// template literals, shallow copies of frozen inputs, optional chaining,
// labelled loops, generators) without being any published plugin.

const MODELS = ["vv-1", "vv-1-pro"];

const STATUS = {
  queued: "QUEUED",
  running: "IN_PROGRESS",
  done: "SUCCESS",
  failed: "FAILURE",
};

export const meta = {
  apiVersion: 1,
  key: "videovendor",
  name: "Video Vendor",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  models: MODELS,
  fetchMode: "per_task",
  description: { en: "Test vendor", "zh-CN": "测试供应商" },
  icon: "text:VV",
  routes: [
    { method: "POST", path: "/vv/v1/videos", type: "submit", decode: "decodeSubmit", render: "taskCreated" },
    { method: "GET", path: "/vv/v1/videos/:task_id", type: "query", render: "taskStatus" },
  ],
  protocols: ["std_video"],
  requiredCapabilities: ["json-clone@1"],
};

function trimmed(value) {
  return String(value ?? "").trim();
}

function root(ctx) {
  return trimmed(ctx.baseUrl).replace(/\/+$/, "");
}

function authHeaders(ctx) {
  const [ak, sk] = trimmed(ctx.apiKey).split("|");
  if (!sk) return { Authorization: `Bearer ${ak}` };
  const now = utils.unixNow();
  return { Authorization: "Bearer " + utils.jwtSignHS256({ iss: ak, exp: now + 1800, nbf: now - 5 }, sk) };
}

function* words(text) {
  for (const w of text.split(/[\s,;()[\]{}]+/)) if (w) yield w;
}

function sanitizePrompt(prompt) {
  const out = [];
  outer: for (const w of words(prompt)) {
    for (const bad of ["<script>", "</script>"]) if (w.includes(bad)) continue outer;
    out.push(w);
  }
  return out.join(" ");
}

export const native = {
  decodeSubmit(ctx) {
    if (ctx.body?.kind !== "json") throw new Error("JSON body required");
    const body = Object.assign({}, ctx.body.value);
    const model = trimmed(body.model) || MODELS[0];
    if (!MODELS.includes(model)) throw new Error(`unsupported model: ${model}`);
    return { kind: "submit", model, requestBody: body };
  },
  taskCreated: (ctx, task) => ({ id: task.task_id, status: "queued" }),
  taskStatus: (ctx, task) => ({ id: task.task_id, status: task.status, progress: task.progress }),
  error: (ctx, err) => ({ error: { code: err.code, message: err.message } }),
};

export const protocols = {
  std_video: {
    decodeRequest(ctx) {
      const value = ctx.body?.kind === "json" ? ctx.body.value : {};
      return { kind: "submit", model: ctx.model, requestBody: { prompt: sanitizePrompt(trimmed(value.prompt)) } };
    },
    render: (ctx, task) => ({ id: task.task_id, object: "video", status: task.status.toLowerCase() }),
  },
};

export function buildSubmitRequest(ctx) {
  const body = utils.json.clone(ctx.requestBody);
  body.model = ctx.upstreamModel || ctx.model;
  body.request_id = utils.uuid();
  return {
    url: `${root(ctx)}/v1/videos?sig=${utils.hmacSHA256(body.model, "salt").slice(0, 8)}`,
    method: "POST",
    headers: Object.assign({ "Content-Type": "application/json" }, authHeaders(ctx)),
    body,
  };
}

export function parseSubmitResponse(ctx, resp) {
  const id = trimmed(resp.body?.data?.id);
  if (!id) throw new Error("missing task id");
  return { taskId: id, taskData: resp.body, state: { polls: 0 } };
}

export function buildQueryRequest(ctx) {
  return { url: root(ctx) + "/v1/videos/" + encodeURIComponent(ctx.taskId), method: "GET", headers: authHeaders(ctx) };
}

export function parseTaskResult(ctx, body, http) {
  const raw = trimmed(body?.data?.status).toLowerCase();
  const status = STATUS[raw] ?? "UNKNOWN";
  const match = /^(\d{1,3})%$/.exec(trimmed(body?.data?.progress));
  const result = { status, state: { polls: (ctx.state?.polls ?? 0) + 1 } };
  if (match) result.progress = match[1] + "%";
  if (status === "SUCCESS") result.url = body.data.video_url;
  if (status === "FAILURE") result.reason = trimmed(body.data.error) || `upstream status ${http.status}`;
  return result;
}
