// The search page of `trustindex serve` (serve/page.py): plain JavaScript, no framework, no build step.
// render.js (loaded first) draws; this file holds the state (the URL), the token, the API calls and the keys.
"use strict";

const TOKEN_KEY = "trustindex.token"; // sessionStorage: this tab only, gone when it closes; never in a URL

// ---------------------------------------------------------------- the token and the API

function token() {
  return window.sessionStorage.getItem(TOKEN_KEY) || "";
}

class NeedToken extends Error {}

async function api(path, body) {
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const init = { headers, credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  if (r.status === 401) throw new NeedToken("this server wants a bearer token");
  let data = null;
  try {
    data = await r.json();
  } catch (_e) {
    throw new Error(`${path} answered ${r.status} without JSON`);
  }
  if (!r.ok) throw new Error(data && typeof data.error === "string" ? data.error : `${path} answered ${r.status}`);
  return data;
}

const pending = new Map(); // what to retry once a token is typed: name -> function

function askForToken(name, retry) {
  pending.set(name, retry);
  $("token-form").hidden = false;
  $("token").focus();
}

// ---------------------------------------------------------------- the URL is the state

function readURL() {
  const p = new URLSearchParams(window.location.search);
  const targets = [];
  for (const t of p.getAll("target")) {
    const i = t.indexOf("=");
    if (i > 0 && i < t.length - 1) targets.push([t.slice(0, i), t.slice(i + 1)]);
  }
  const k = Number.parseInt(p.get("k") || "", 10);
  return { q: p.get("q") || "", k: Number.isFinite(k) && k > 0 ? k : 5, strict: p.get("strict") === "1", targets };
}

function writeURL(state, push) {
  const p = new URLSearchParams();
  p.set("q", state.q);
  p.set("k", String(state.k));
  for (const [c, v] of state.targets) p.append("target", `${c}=${v}`);
  if (state.strict) p.set("strict", "1");
  const url = `${window.location.pathname}?${p.toString()}`;
  if (push) window.history.pushState(null, "", url);
  else window.history.replaceState(null, "", url);
}

let chosen = []; // [component, version] pairs, in the order picked

function formState() {
  const k = Number.parseInt($("k").value, 10);
  return { q: $("q").value.trim(), k: Number.isFinite(k) && k > 0 ? k : 5, strict: $("strict").checked, targets: chosen };
}

function fillForm(state) {
  $("q").value = state.q;
  $("k").value = String(state.k);
  $("strict").checked = state.strict;
  chosen = state.targets.slice();
  drawTargets();
}

function drawTargets() {
  const list = $("targets");
  list.replaceChildren();
  chosen.forEach(([c, v], n) => {
    const remove = el("button", { type: "button", class: "remove", "aria-label": `Remove target ${c}=${v}` }, "×");
    remove.addEventListener("click", () => {
      chosen.splice(n, 1);
      drawTargets();
    });
    list.append(el("li", { class: "chip", "data-target": `${c}=${v}` }, el("code", {}, `${c}=${v}`), remove));
  });
}

// ---------------------------------------------------------------- the target picker (/v1/versions)

let components = [];

function fillPicker(versions) {
  components = Array.isArray(versions.components) ? versions.components : [];
  const select = $("component");
  select.replaceChildren(el("option", { value: "" }, "(choose a component)"));
  for (const c of components) {
    select.append(el("option", { value: c.component }, `${c.component} (${c.documents} docs)`));
  }
  fillVersions();
}

// A picker offers what a target is: a version (0.23, 0.31.0, current), not the ranges pages state (>= 0.22)
const PLAIN_VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_-]*$/;

function versionOrder(a, b) {
  const pa = a.split(/[.+_-]/);
  const pb = b.split(/[.+_-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    const c = nx && ny ? Number(x) - Number(y) : nx !== ny ? (nx ? 1 : -1) : x.localeCompare(y);
    if (c) return c;
  }
  return 0;
}

function fillVersions() {
  const c = components.find((x) => x.component === $("component").value);
  const plain = ((c && c.constraints) || []).filter((v) => PLAIN_VERSION.test(v)).sort(versionOrder);
  const list = $("versions");
  list.replaceChildren(...plain.map((v) => el("option", { value: v })));
  $("version").value = plain.length ? plain[plain.length - 1] : "";
}

function addTarget() {
  const c = $("component").value;
  const v = $("version").value.trim();
  if (!c || !v) {
    say("Choose a component and a version first.", "error");
    return;
  }
  chosen = chosen.filter(([x]) => x !== c); // one version per component, as the API takes them
  chosen.push([c, v]);
  drawTargets();
}

// ---------------------------------------------------------------- wiring

let generation = 0; // a slow answer to an older query never overwrites a newer one

async function runSearch(state) {
  if (!state.q) {
    $("results").replaceChildren();
    say("");
    return;
  }
  const mine = ++generation;
  say("Searching…", "busy");
  document.body.dataset.state = "busy";
  const body = { query: state.q, k: state.k, strict: state.strict };
  if (state.targets.length) body.targets = Object.fromEntries(state.targets);
  try {
    const r = await api("/v1/search", body);
    if (mine !== generation) return;
    drawResponse(r);
    say(`${r.hits.length} hit${r.hits.length === 1 ? "" : "s"} for “${r.query}”`, "done");
  } catch (e) {
    if (mine !== generation) return;
    if (e instanceof NeedToken) askForToken("search", () => runSearch(state));
    $("results").replaceChildren();
    say(e.message, "error");
  } finally {
    if (mine === generation) {
      document.body.dataset.state = "idle";
      document.body.dataset.answered = String(mine); // how many searches this page has shown: a hook for tests
    }
  }
}

async function loadPanels() {
  try {
    const [snap, sources, versions] = await Promise.all([api("/v1/snapshot"), api("/v1/sources"), api("/v1/versions")]);
    drawSnapshot(snap, sources);
    fillPicker(versions);
    $("forget-token").hidden = !token();
    document.body.dataset.panels = "ready";
  } catch (e) {
    if (e instanceof NeedToken) askForToken("panels", loadPanels);
    else say(e.message, "error");
  }
}

function moveFocus(step) {
  const cards = [...document.querySelectorAll("article.hit")];
  if (!cards.length) return;
  const at = cards.indexOf(document.activeElement);
  const next = at < 0 ? (step > 0 ? 0 : cards.length - 1) : Math.min(cards.length - 1, Math.max(0, at + step));
  cards[next].focus();
}

function onKey(e) {
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
  if (e.key === "/" && !typing) {
    e.preventDefault();
    $("q").focus();
    $("q").select();
  } else if (!typing && (e.key === "j" || e.key === "ArrowDown")) {
    e.preventDefault();
    moveFocus(1);
  } else if (!typing && (e.key === "k" || e.key === "ArrowUp")) {
    e.preventDefault();
    moveFocus(-1);
  } else if (e.key === "Enter" && e.target instanceof HTMLElement && e.target.matches("article.hit")) {
    const a = e.target.querySelector("a.page");
    if (a) a.click();
  }
}

function start() {
  $("search").addEventListener("submit", (e) => {
    e.preventDefault();
    const state = formState();
    writeURL(state, true);
    runSearch(state);
  });
  $("component").addEventListener("change", fillVersions);
  $("add-target").addEventListener("click", addTarget);
  $("version").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      addTarget();
    }
  });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const t = $("token").value.trim();
    $("token").value = "";
    if (!t) return;
    window.sessionStorage.setItem(TOKEN_KEY, t);
    $("token-form").hidden = true;
    say("");
    const retries = [...pending.values()];
    pending.clear();
    for (const retry of retries) retry();
  });
  $("forget-token").addEventListener("click", () => {
    window.sessionStorage.removeItem(TOKEN_KEY);
    $("forget-token").hidden = true;
    say("The token is forgotten in this tab.", "done");
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => {
    const state = readURL();
    fillForm(state);
    runSearch(state);
  });
  const state = readURL();
  fillForm(state);
  loadPanels();
  if (state.q) runSearch(state);
}

document.addEventListener("DOMContentLoaded", start);
