// A synthetic guardrail plugin: it blocks a code name, redacts the word
// "secret" (offsets in JavaScript string indices), throws on "boom" and
// loops forever on "spin".
export const meta = {
  apiVersion: 1,
  kind: "guardrail",
  key: "acme-guard",
  name: "Acme Guard",
  version: "1.0.0",
  author: { name: "Turnpike tests" },
  description: "Synthetic guardrail"
};

export function checkRequest(ctx) {
  if (ctx.text.includes("boom")) throw new Error("plugin exploded");
  if (ctx.text.includes("spin")) { for (;;) {} }
  if (ctx.text.includes("falcon")) return { action: "block", reason: "code name " + ctx.stage + " " + ctx.model };
  const i = ctx.text.indexOf("secret");
  if (i >= 0) return { action: "redact", reason: "word", redactions: [{ start: i, end: i + 6, replacement: "[gone]" }] };
  return { action: "allow" };
}
