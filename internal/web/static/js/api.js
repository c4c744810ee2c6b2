// The admin API client. Every failure becomes an ApiError carrying the
// server's own message, so forms can show exactly why a request was refused.

/** ApiError is a refused or failed request. */
export class ApiError extends Error {
  constructor(status, message, code, problems) {
    super(message);
    this.status = status;
    this.code = code || "";
    this.problems = problems || [];
  }
}

const listeners = new Set();
/** onUnauthorized registers a callback for 401 answers (session expired). */
export function onUnauthorized(fn) {
  listeners.add(fn);
}

/**
 * api sends a request and returns the decoded JSON body (null for 204).
 * body may be a plain object (sent as JSON) or FormData (sent as multipart).
 */
export async function api(method, path, body, { quiet401 = false } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, `The server could not be reached (${e.message}).`, "network");
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = errorFrom(res, data, text);
    if (res.status === 401 && !quiet401) listeners.forEach((fn) => fn(err));
    throw err;
  }
  return data;
}

function errorFrom(res, data, text) {
  const e = data && data.error;
  if (e && typeof e === "object") {
    return new ApiError(res.status, e.message || res.statusText, e.code, e.problems);
  }
  if (typeof e === "string") return new ApiError(res.status, e);
  const snippet = (text || "").trim().slice(0, 200);
  return new ApiError(res.status, `HTTP ${res.status} ${res.statusText}${snippet ? `: ${snippet}` : ""}`);
}

/** items accepts either a {items:[…]} listing or a bare array. */
export function items(data, ...keys) {
  if (Array.isArray(data)) return data;
  if (!data || typeof data !== "object") return [];
  for (const k of ["items", ...keys]) {
    if (Array.isArray(data[k])) return data[k];
  }
  return [];
}

/** qs builds a query string from the non-empty members of params. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== "" && v !== null && v !== undefined) p.set(k, v);
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}
