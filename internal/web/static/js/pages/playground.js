// Playground: chat with any model the signed-in user may use, through
// /pg/chat/completions (billed to the user, same routing as /v1).
import { h, uid } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead } from "../ui.js";
import { readChatStream } from "../sse.js";
import { t } from "../i18n.js";

const PARAMS = [
  { key: "temperature", min: 0, max: 2, step: 0.1, value: 0.7 },
  { key: "top_p", min: 0, max: 1, step: 0.05, value: 1 },
  { key: "frequency_penalty", min: -2, max: 2, step: 0.1, value: 0 },
  { key: "presence_penalty", min: -2, max: 2, step: 0.1, value: 0 },
];

export async function render(main, ctx) {
  const history = [];
  let controller = null;
  // epoch changes on Clear so a stream cut short by Clear does not write
  // its partial answer into the new conversation.
  let epoch = 0;

  const groupSel = h("select", { id: "pg-group" });
  const modelBox = h("div", {});
  const modelHint = h("span", { class: "hint", id: "pg-model-hint" });
  let modelInput = h("select", { id: "pg-model" });
  const params = PARAMS.map(param);
  const maxTokens = h("input", { id: "pg-max-tokens", type: "number", min: 1, step: 1, value: 512, inputmode: "numeric", "aria-describedby": "pg-max-hint" });

  const messages = h("div", { id: "pg-messages", class: "messages", role: "log", "aria-live": "polite", "aria-label": t("pg.conversation") },
    emptyNote());
  const prompt = h("textarea", { id: "pg-prompt", rows: 3, placeholder: t("pg.prompt"), "aria-describedby": "pg-status" });
  const send = h("button", { type: "submit", class: "primary", id: "pg-send" }, t("pg.send"));
  const stop = h("button", { type: "button", id: "pg-stop", disabled: true, onclick: () => controller && controller.abort() }, t("pg.stop"));
  const clearBtn = h("button", { type: "button", id: "pg-clear", onclick: clearChat }, t("pg.clear"));
  const status = h("span", { id: "pg-status", class: "muted", "aria-live": "polite" });
  const composer = h("form", { class: "composer", "aria-label": t("pg.message") },
    h("label", { for: "pg-prompt", class: "visually-hidden" }, t("pg.message")), prompt,
    h("div", { class: "actions" }, status, h("div", { class: "actions" }, clearBtn, stop, send)));

  main.append(pageHead(t("pg.title"), t("pg.sub")),
    h("div", { class: "playground" },
      h("section", { class: "card", "aria-labelledby": "pg-settings" },
        h("h2", { id: "pg-settings" }, t("pg.settings")),
        h("div", { class: "field" }, h("label", { for: "pg-group" }, t("pg.group")), groupSel),
        h("div", { class: "field" }, h("label", { for: "pg-model" }, t("pg.model")), modelBox, modelHint),
        params.map((p) => p.row),
        h("div", { class: "field" }, h("label", { for: "pg-max-tokens" }, t("pg.maxTokens")), maxTokens,
          h("span", { class: "hint", id: "pg-max-hint" }, t("pg.maxHint")))),
      h("section", { class: "card chat", "aria-label": t("pg.chat") }, messages, composer)));

  prompt.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      composer.requestSubmit();
    }
  });
  composer.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sendTurn();
  });

  await loadGroups();
  groupSel.addEventListener("change", loadModels);
  await loadModels();

  async function loadGroups() {
    const names = new Set([ctx.me.group || "default"]);
    if (ctx.isAdmin) {
      try {
        items(await api("GET", "/api/groups?page_size=1000")).forEach((g) => names.add(g.name));
      } catch { /* the user's own group is enough */ }
    }
    groupSel.replaceChildren(...[...names].map((n) => h("option", { value: n, selected: n === ctx.me.group }, n)));
  }

  async function loadModels() {
    let ids = [];
    try {
      ids = items(await api("GET", `/pg/models${qs({ group: groupSel.value })}`), "data").map((m) => m.id);
    } catch {
      ids = [];
    }
    const previous = modelInput.value;
    if (ids.length) {
      modelInput = h("select", { id: "pg-model", "aria-describedby": "pg-model-hint" }, ids.map((id) => h("option", { value: id, selected: id === previous }, id)));
      modelHint.textContent = `${ids.length} model${ids.length === 1 ? "" : "s"} available.`;
    } else {
      // Without a list, the user can still type a model name they know.
      modelInput = h("input", { id: "pg-model", value: previous || "", placeholder: "model name", required: true, "aria-describedby": "pg-model-hint" });
      modelHint.textContent = t("pg.noModels");
    }
    modelBox.replaceChildren(modelInput);
  }

  function clearChat() {
    if (controller) controller.abort();
    epoch += 1;
    history.length = 0;
    messages.replaceChildren(emptyNote());
    status.textContent = t("pg.cleared");
    prompt.focus();
  }

  function body() {
    const b = { model: modelInput.value.trim(), group: groupSel.value, messages: history.slice(), stream: true,
      stream_options: { include_usage: true } };
    for (const p of params) b[p.key] = Number(p.input.value);
    if (maxTokens.value !== "") b.max_tokens = Number(maxTokens.value);
    return b;
  }

  function validate() {
    if (!modelInput.value.trim()) return ["pg.chooseModel", modelInput];
    if (!prompt.value.trim()) return ["pg.typeMessage", prompt];
    if (maxTokens.value !== "" && (!Number.isInteger(Number(maxTokens.value)) || Number(maxTokens.value) < 1)) return ["pg.badMax", maxTokens];
    return null;
  }

  async function sendTurn() {
    if (controller) return;
    const problem = validate();
    if (problem) {
      status.textContent = t(problem[0]);
      problem[1].focus();
      return;
    }
    messages.querySelector(".empty-note")?.remove();
    const text = prompt.value;
    const turn = epoch;
    prompt.value = "";
    history.push({ role: "user", content: text });
    messages.append(bubble("user", text));
    const reply = bubble("assistant", "");
    reply.classList.add("streaming");
    reply.setAttribute("aria-busy", "true");
    messages.append(reply);
    const out = reply.querySelector(".body");
    setBusy(true);
    let answer = "";
    try {
      const res = await fetch("/pg/chat/completions", {
        method: "POST", credentials: "same-origin", signal: controller.signal,
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" }, body: JSON.stringify(body()),
      });
      if (!res.ok) throw new Error(await errorText(res));
      const usage = await readChatStream(res.body, (piece) => {
        answer += piece;
        out.textContent = answer;
        messages.scrollTop = messages.scrollHeight;
      });
      history.push({ role: "assistant", content: answer });
      if (usage) reply.append(h("span", { class: "meta" }, `${usage.prompt_tokens ?? "?"} prompt + ${usage.completion_tokens ?? "?"} completion tokens`));
      status.textContent = t("pg.complete");
    } catch (e) {
      if (turn !== epoch) {
        // Cleared mid-stream: the bubble and history are already gone.
      } else if (e.name === "AbortError") {
        // Keep what arrived so the next turn has the context the user saw.
        if (answer) history.push({ role: "assistant", content: answer });
        else history.pop();
        reply.append(h("span", { class: "meta" }, t("pg.stopped")));
        status.textContent = t("pg.stopped");
      } else {
        history.pop();
        reply.remove();
        messages.append(bubble("error", e.message));
        status.textContent = t("pg.failed");
      }
    } finally {
      reply.classList.remove("streaming");
      reply.removeAttribute("aria-busy");
      setBusy(false);
      prompt.focus();
    }
  }

  function setBusy(busy) {
    controller = busy ? new AbortController() : null;
    send.disabled = busy;
    stop.disabled = !busy;
    if (busy) status.textContent = t("pg.streaming");
  }

  return () => controller && controller.abort();
}

function param(p) {
  const id = uid(p.key);
  const out = h("output", { for: id, id: `${id}-out` }, String(p.value));
  const input = h("input", { id, type: "range", min: p.min, max: p.max, step: p.step, value: p.value, "data-param": p.key,
    "aria-describedby": `${id}-out` });
  input.addEventListener("input", () => { out.textContent = input.value; });
  const row = h("div", { class: "field param" }, h("div", { class: "param-head" }, h("label", { for: id }, t(`pg.${p.key}`)), out), input);
  return { key: p.key, input, row };
}

function bubble(role, text) {
  const who = t(`pg.${role === "user" ? "you" : role}`);
  return h("div", { class: `msg ${role}`, role: role === "error" ? "alert" : null }, h("span", { class: "who" }, who), h("span", { class: "body" }, text));
}

function emptyNote() {
  return h("p", { class: "empty empty-note" }, t("pg.empty"));
}

async function errorText(res) {
  const text = await res.text();
  try {
    const e = JSON.parse(text).error;
    if (e && e.message) return e.message;
  } catch { /* not JSON */ }
  return `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`;
}
