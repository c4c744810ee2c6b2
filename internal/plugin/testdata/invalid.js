// Breaks several manifest rules at once: bad key, missing author, unknown
// field, batch mode without its hooks.
export const meta = {
  apiVersion: 1,
  key: "Bad Key!",
  name: "Invalid",
  version: "one",
  models: ["m"],
  fetchMode: "batch",
  endpoints: []
};

export function buildSubmitRequest(ctx) { return { url: "https://x.example" }; }
export function parseSubmitResponse() { return { taskId: "t" }; }
