// The account area of cfe-sandbox: a static page that uses the service's own
// public API with the user's JWT. The JWT lives in sessionStorage (this tab
// only, gone when it closes); the refresh token is not kept. Nothing from the
// API is ever parsed as HTML: text goes in with textContent, charts are built
// with createElementNS.
"use strict";

const TOKEN_KEY = "cfe-sandbox-jwt";
const SVG = "http://www.w3.org/2000/svg";

const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  companies: [],
  company: null, // idEmpresa
  charts: null,  // {diaria, mensual}
  view: 0,       // bumped at each change of section, company or session
};

// stale reports whether a load started in view v was overtaken by a newer
// one, whose answer must not be overwritten.
const stale = (v) => v !== state.view;

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.append(c);
  return e;
}

function say(text, ok) {
  const m = $("mensaje");
  m.textContent = text;
  m.className = ok ? "ok" : "error";
  m.hidden = false;
}

function quiet() {
  $("mensaje").hidden = true;
}

// apiError is an answer of the API that is not a success.
class apiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// api calls the service with the session's JWT and returns the response, or
// throws apiError with the service's Spanish message and field details.
async function api(method, path, body) {
  const headers = {};
  if (state.token) headers.Authorization = "Bearer " + state.token;
  const opts = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  if (r.ok) return r;
  let msg = "Error " + r.status;
  try {
    const j = await r.json();
    msg = j.error || msg;
    if (Array.isArray(j.details) && j.details.length > 1) {
      msg += ": " + j.details.map((d) => d.campo + " " + d.mensaje).join("; ");
    }
  } catch (e) {
    // not JSON: keep the status
  }
  if (r.status === 401 && path !== "/api/auth/login") {
    endSession();
    msg = "La sesión terminó (" + msg + "). Ingrese de nuevo.";
  }
  throw new apiError(r.status, msg);
}

function withCompany(path) {
  const sep = path.includes("?") ? "&" : "?";
  return path + sep + "idEmpresa=" + encodeURIComponent(state.company);
}

// ----- session -----

function endSession() {
  state.token = null;
  state.companies = [];
  state.company = null;
  sessionStorage.removeItem(TOKEN_KEY);
  clearData();
  show();
}

// clearData removes what the page shows of a company, so that nothing of one
// session or company is seen in another while it loads.
function clearData() {
  state.charts = null;
  hideNewKey();
  for (const id of ["claves-lista", "cfes-lista"]) $(id).tBodies[0].replaceChildren();
  for (const id of ["grafica-diaria", "grafica-mensual", "total-diaria", "total-mensual"]) $(id).replaceChildren();
  $("desde").value = "";
  $("hasta").value = "";
}

async function login(ev) {
  ev.preventDefault();
  quiet();
  try {
    const r = await api("POST", "/api/auth/login", { username: $("usuario").value, secret: $("clave").value });
    const tok = await r.json();
    state.token = tok.token;
    sessionStorage.setItem(TOKEN_KEY, tok.token);
    $("clave").value = "";
    await loadCompanies();
    if (!location.hash) location.hash = "#comprobantes";
    show();
  } catch (e) {
    say(e.message, false);
  }
}

async function logout() {
  try {
    await api("POST", "/api/auth/revoke");
  } catch (e) {
    // the session may have ended already
  }
  endSession();
  say("Sesión cerrada.", true);
}

async function loadCompanies() {
  const r = await api("GET", "/api/v1/usuario/empresas");
  state.companies = await r.json();
  const sel = $("empresa");
  sel.replaceChildren();
  for (const c of state.companies) {
    sel.append(el("option", { value: String(c.idEmpresa), textContent: c.razonSocial + " (" + c.ruc + ")" }));
  }
  if (!state.companies.some((c) => String(c.idEmpresa) === String(state.company))) {
    state.company = state.companies.length ? state.companies[0].idEmpresa : null;
  }
  sel.value = String(state.company);
  const several = state.companies.length > 1;
  $("empresa-elegir").hidden = !several;
  const one = state.companies[0];
  $("empresa-nombre").textContent = !several && one ? one.razonSocial + " · RUC " + one.ruc : "";
}

// ----- navigation -----

function section() {
  return location.hash === "#claves" ? "claves" : "comprobantes";
}

async function show() {
  state.view++;
  const logged = Boolean(state.token) && state.company !== null;
  $("ingreso").hidden = logged;
  $("menu").hidden = !logged;
  const current = section();
  for (const id of ["claves", "comprobantes"]) {
    $(id).hidden = !logged || id !== current;
    $("ir-" + id).classList.toggle("activo", id === current);
  }
  if (!logged) {
    $("usuario").focus();
    return;
  }
  try {
    if (current === "claves") await loadKeys();
    else await loadIssued();
  } catch (e) {
    say(e.message, false);
  }
}

// ----- API keys -----

function fmtDate(iso) {
  if (!iso) return "";
  return new Intl.DateTimeFormat("es-UY", { timeZone: "America/Montevideo", dateStyle: "short", timeStyle: "short" }).format(new Date(iso));
}

async function loadKeys() {
  const v = state.view;
  const r = await api("GET", withCompany("/api/v1/apikeys"));
  const keys = await r.json();
  if (stale(v)) return;
  const body = $("claves-lista").tBodies[0];
  body.replaceChildren();
  for (const k of keys) body.append(keyRow(k));
  $("claves-vacio").hidden = keys.length > 0;
}

function keyRow(k) {
  const revoked = k.estado === "revocada";
  const perMinute = el("input", { type: "number", min: 1, className: "por-minuto", value: String(k.limitePorMinuto), disabled: revoked });
  const perHour = el("input", { type: "number", min: 1, className: "por-hora", value: String(k.limitePorHora), disabled: revoked });
  perMinute.setAttribute("aria-label", "Límite por minuto de " + k.nombre);
  perHour.setAttribute("aria-label", "Límite por hora de " + k.nombre);
  const save = el("button", { type: "button", className: "guardar-limites", textContent: "Guardar límites", disabled: revoked });
  save.addEventListener("click", () => saveLimits(k, perMinute, perHour));
  const actions = el("td", {}, save);
  if (!revoked) {
    const revoke = el("button", { type: "button", className: "revocar peligro", textContent: "Revocar" });
    revoke.addEventListener("click", () => {
      if (!revoke.classList.contains("confirmar")) {
        revoke.classList.add("confirmar");
        revoke.textContent = "Confirmar revocación";
        return;
      }
      revokeKey(k);
    });
    actions.append(" ", revoke);
  }
  return el("tr", { "data-id": String(k.id), "data-estado": k.estado, class: revoked ? "revocada" : "" },
    el("td", { className: "nombre", textContent: k.nombre }),
    el("td", { textContent: k.descripcion || "" }),
    el("td", {}, el("code", { textContent: k.prefijo + "…" })),
    el("td", { className: "estado", textContent: revoked ? "revocada " + fmtDate(k.revocada) : "activa" }),
    el("td", { textContent: fmtDate(k.creada) }),
    el("td", {}, perMinute),
    el("td", {}, perHour),
    actions);
}

async function createKey(ev) {
  ev.preventDefault();
  quiet();
  try {
    const r = await api("POST", "/api/v1/apikeys", {
      nombre: $("clave-nombre").value, descripcion: $("clave-descripcion").value, idEmpresa: state.company,
    });
    const created = await r.json();
    // Shown once: the full key is only in this element, never stored.
    $("clave-valor").textContent = created.ApiKey;
    $("clave-nueva").hidden = false;
    $("form-clave").reset();
    // The list first, then the message: a shown message means the list is current.
    await loadKeys();
    say("Se creó la clave «" + created.nombre + "».", true);
  } catch (e) {
    say(e.message, false);
  }
}

function hideNewKey() {
  $("clave-valor").textContent = "";
  $("clave-nueva").hidden = true;
}

async function copyNewKey() {
  try {
    await navigator.clipboard.writeText($("clave-valor").textContent);
    say("Clave copiada al portapapeles.", true);
  } catch (e) {
    say("No se pudo copiar: selecciónela y cópiela a mano.", false);
  }
}

async function revokeKey(k) {
  quiet();
  try {
    await api("POST", "/api/v1/apikeys/" + encodeURIComponent(k.id) + "/revocar");
    // The list first, then the message: a shown message means the list is current.
    await loadKeys();
    say("Se revocó la clave «" + k.nombre + "».", true);
  } catch (e) {
    say(e.message, false);
  }
}

async function saveLimits(k, perMinute, perHour) {
  quiet();
  try {
    await api("POST", "/api/v1/apikeys/" + encodeURIComponent(k.id) + "/rate-limit", {
      limitePorMinuto: Number(perMinute.value), limitePorHora: Number(perHour.value),
    });
    // The list first, then the message: a shown message means the list is current.
    await loadKeys();
    say("Se guardaron los límites de «" + k.nombre + "».", true);
  } catch (e) {
    say(e.message, false);
  }
}

// ----- issued CFEs and charts -----

// fmtAmount writes a decimal string (as the API sends it) with two decimals,
// "." between thousands and "," before the decimals, without going through
// floating point.
function fmtAmount(s) {
  let str = String(s);
  const neg = str.startsWith("-");
  if (neg) str = str.slice(1);
  let [int, frac = ""] = str.split(".");
  frac = (frac + "00").slice(0, 2);
  int = int.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return (neg ? "−" : "") + int + "," + frac;
}

async function loadIssued() {
  const v = state.view;
  const [d, m] = await Promise.all([
    api("GET", withCompany("/api/v1/cfeemitido/graficaDiaria")).then((r) => r.json()),
    api("GET", withCompany("/api/v1/cfeemitido/graficaFacturacionMensual")).then((r) => r.json()),
  ]);
  if (stale(v)) return;
  state.charts = { diaria: d, mensual: m };
  const sel = $("moneda");
  const previous = sel.value;
  const currencies = [...new Set([...d.monedas, ...m.monedas])];
  sel.replaceChildren(...currencies.map((c) => el("option", { value: c, textContent: c })));
  sel.value = currencies.includes(previous) ? previous : currencies[0];
  drawCharts();
  if (!$("desde").value) $("desde").value = d.desde;
  if (!$("hasta").value) $("hasta").value = d.hasta;
  await search();
}

function drawCharts() {
  if (!state.charts) return;
  const cur = $("moneda").value;
  drawChart($("grafica-diaria"), $("total-diaria"), state.charts.diaria, cur);
  drawChart($("grafica-mensual"), $("total-mensual"), state.charts.mensual, cur);
}

function amountOf(period, cur) {
  const m = period.montos.find((x) => x.moneda === cur);
  return m || { moneda: cur, cantidad: 0, monto: "0" };
}

function periodLabel(p, daily) {
  if (daily) return p.periodo.slice(8) + "/" + p.periodo.slice(5, 7);
  return p.periodo.slice(5) + "/" + p.periodo.slice(2, 4);
}

// drawChart draws one bar per period of the chart's net amount in cur. The
// bars' geometry uses Number (pixels); every amount shown is the API's string.
function drawChart(box, totalBox, chart, cur) {
  const daily = chart.agrupacion === "dia";
  const W = 720, H = 220, left = 8, right = 8, top = 14, bottom = 26;
  const n = chart.periodos.length;
  const values = chart.periodos.map((p) => Number(amountOf(p, cur).monto));
  const max = Math.max(0, ...values), min = Math.min(0, ...values);
  const span = max - min || 1;
  const plotH = H - top - bottom;
  const y = (v) => top + ((max - v) / span) * plotH;
  const slot = (W - left - right) / n;
  const barW = Math.max(2, slot * 0.7);
  const root = svg("svg", {
    viewBox: `0 0 ${W} ${H}`, role: "img", class: daily ? "diaria" : "mensual",
    "aria-label": (daily ? "Facturación neta por día en " : "Facturación neta por mes en ") + cur,
  });
  root.append(svg("line", { class: "rejilla", x1: left, x2: W - right, y1: top, y2: top }));
  chart.periodos.forEach((p, i) => {
    const a = amountOf(p, cur);
    const v = values[i];
    const y0 = y(0), yv = y(v);
    const rect = svg("rect", {
      class: v < 0 ? "barra negativa" : "barra",
      x: (left + i * slot + (slot - barW) / 2).toFixed(2),
      y: Math.min(y0, yv).toFixed(2),
      width: barW.toFixed(2),
      height: Math.abs(yv - y0).toFixed(2),
      "data-periodo": p.periodo, "data-monto": a.monto, "data-cantidad": a.cantidad, "data-total": p.cantidad,
    }, svg("title", {}, `${p.periodo}: ${fmtAmount(a.monto)} ${cur} (${a.cantidad} en ${cur}, ${p.cantidad} en total)`));
    if (daily) rect.addEventListener("click", () => searchDay(p.periodo));
    root.append(rect);
    const every = daily ? 5 : 1;
    if (i % every === 0 || i === n - 1) {
      root.append(svg("text", { x: (left + i * slot + slot / 2).toFixed(2), y: H - 8, "text-anchor": "middle" }, periodLabel(p, daily)));
    }
  });
  root.append(svg("line", { class: "cero", x1: left, x2: W - right, y1: y(0).toFixed(2), y2: y(0).toFixed(2) }));
  root.append(svg("text", { x: left + 2, y: top - 3 }, fmtAmount(String(max)) + " " + cur));
  box.replaceChildren(root);
  const t = amountOf(chart.totales, cur);
  totalBox.textContent = `Total ${chart.desde} a ${chart.hasta}: ${fmtAmount(t.monto)} ${cur} en ${t.cantidad} comprobantes (${chart.totales.cantidad} en todas las monedas).`;
}

async function searchDay(day) {
  $("desde").value = day;
  $("hasta").value = day;
  $("tipo").value = "0";
  try {
    await search();
  } catch (e) {
    say(e.message, false);
  }
}

async function search(ev) {
  if (ev) {
    ev.preventDefault();
    quiet();
  }
  const q = new URLSearchParams({ idEmpresa: String(state.company) });
  if ($("desde").value) q.set("fechaFirmaDesde", $("desde").value);
  if ($("hasta").value) q.set("fechaFirmaHasta", $("hasta").value);
  if ($("tipo").value !== "0") q.set("tipoFiltro", $("tipo").value);
  const v = state.view;
  try {
    const r = await api("GET", "/api/v1/cfeemitido/buscar?" + q.toString());
    const list = await r.json();
    if (stale(v)) return;
    const body = $("cfes-lista").tBodies[0];
    body.replaceChildren(...list.slice().reverse().map(cfeRow));
    $("cfes-vacio").hidden = list.length > 0;
  } catch (e) {
    if (!ev) throw e;
    say(e.message, false);
  }
}

function cfeRow(c) {
  const name = `CFE-${c.tipoCfe}-${c.serie}-${c.nro}.pdf`;
  const link = el("a", { href: "#", className: "pdf", textContent: "PDF", title: "Descargar " + name });
  link.setAttribute("data-uuid", c.uuid);
  link.addEventListener("click", (ev) => {
    ev.preventDefault();
    downloadPDF(c, name, link);
  });
  const estado = c.estado + (c.anula ? " (anula el id " + c.anula + ")" : "");
  return el("tr", { "data-id": String(c.id) },
    el("td", { textContent: fmtDate(c.fechaFirma) }),
    el("td", { textContent: String(c.tipoCfe) }),
    el("td", { textContent: c.serie + "-" + c.nro }),
    el("td", { className: "num", textContent: fmtAmount(c.total) }),
    el("td", { textContent: estado }),
    el("td", {}, link));
}

// downloadPDF asks the service for the CFE's printed representation (it needs
// the JWT, which a plain link cannot carry) and saves it under name.
async function downloadPDF(c, name, link) {
  quiet();
  try {
    const r = await api("POST", "/api/v1/cfeemitido/pdf", { uuid: c.uuid, idEmpresa: state.company });
    const url = URL.createObjectURL(await r.blob());
    const a = el("a", { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    link.setAttribute("data-descargado", "si");
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (e) {
    say("No se pudo obtener el PDF: " + e.message, false);
  }
}

// ----- start -----

document.addEventListener("DOMContentLoaded", async () => {
  $("form-ingreso").addEventListener("submit", login);
  $("form-clave").addEventListener("submit", createKey);
  $("form-buscar").addEventListener("submit", search);
  $("clave-ocultar").addEventListener("click", hideNewKey);
  $("clave-copiar").addEventListener("click", copyNewKey);
  $("salir").addEventListener("click", logout);
  $("moneda").addEventListener("change", drawCharts);
  $("empresa").addEventListener("change", () => {
    state.company = Number($("empresa").value);
    clearData();
    show();
  });
  window.addEventListener("hashchange", () => {
    quiet();
    show();
  });
  if (state.token) {
    try {
      await loadCompanies();
    } catch (e) {
      say(e.message, false);
    }
  }
  show();
});
