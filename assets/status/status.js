"use strict";
(function () {
  var REFRESH_MS = 5000;
  var STATUS_LABELS = { ok: "Funcionando", degraded: "Requiere atención", error: "No puede firmar" };
  var ENVIRONMENTS = { produccion: "producción", sandbox: "sandbox" };
  var DELIVERY = { pendiente: "pendiente", aceptado: "enviado", rechazado: "rechazado" };
  var printer = document.body.dataset.impresora || "";

  function $(id) { return document.getElementById(id); }
  function text(id, value) { $(id).textContent = value === undefined || value === null || value === "" ? "—" : String(value); }
  function el(tag, value, cls) {
    var e = document.createElement(tag);
    if (value !== undefined) e.textContent = value;
    if (cls) e.className = cls;
    return e;
  }
  function dateTime(iso) {
    if (!iso) return "";
    return new Date(iso).toLocaleString("es-UY", { timeZone: "America/Montevideo", dateStyle: "short", timeStyle: "medium" });
  }
  function money(s) {
    var n = Number(s);
    return isNaN(n) ? s : n.toLocaleString("es-UY", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
  function age(seconds) {
    if (!seconds) return "";
    var h = Math.floor(seconds / 3600), m = Math.floor(seconds % 3600 / 60);
    return " (el más antiguo hace " + (h ? h + " h " : "") + m + " min)";
  }

  function show(st) {
    var badge = $("estado");
    badge.dataset.status = st.status;
    badge.textContent = STATUS_LABELS[st.status] || st.status;
    var warnings = $("avisos");
    warnings.replaceChildren();
    (st.warnings || []).forEach(function (w) {
      warnings.appendChild(el("li", w, /no se puede firmar|no puede firmar|no hay/.test(w) ? "error" : ""));
    });
    text("perfil", st.profile);
    text("entorno", ENVIRONMENTS[st.environment] || st.environment);
    text("direccion", st.base_url);
    text("version", st.version);
    text("zona", st.zona_horaria.nombre);
    text("desfase", st.zona_horaria.desfase);
    text("zona-mensaje", st.zona_horaria.mensaje);
    var c = st.certificate;
    text("cert-titular", c && c.subject);
    text("cert-ruc", c && c.ruc);
    text("cert-vence", c && (dateTime(c.expires_at) + " (" + c.days_left + " días)"));
    text("firmados-hoy", st.receipts.signed_today);
    text("ultimo", dateTime(st.receipts.last_signed_at) || "ninguno");
    text("pendientes", st.outbox.pending + age(st.outbox.oldest_pending_age_s));

    var cae = $("cae");
    cae.replaceChildren();
    (st.cae || []).forEach(function (t) {
      var tr = el("tr");
      tr.append(el("td", t.tipo_cfe), el("td", t.nombre), el("td", t.remaining, "num"),
        el("td", t.usable_until || "—"), el("td", (t.warnings || []).join("; ") || "—", t.warnings && t.warnings.length ? "" : "muted"));
      cae.appendChild(tr);
    });

    var recent = $("recientes");
    recent.replaceChildren();
    var rows = st.receipts.recent || [];
    if (!rows.length) {
      var tr = el("tr"), td = el("td", "Todavía no se firmó ningún comprobante.", "muted");
      td.colSpan = 6;
      tr.appendChild(td);
      recent.appendChild(tr);
    }
    rows.forEach(function (r) {
      var tr = el("tr"), button = el("button", "Reimprimir");
      tr.dataset.uuid = r.uuid;
      button.type = "button";
      button.disabled = !printer;
      button.title = printer ? "Imprimir en " + printer : "No hay impresora predeterminada";
      button.addEventListener("click", function () { reprint(r, button); });
      var action = el("td");
      action.appendChild(button);
      tr.append(el("td", r.nombre), el("td", r.serie + "-" + r.numero), el("td", money(r.total), "num"),
        el("td", dateTime(r.firmado_a)), el("td", DELIVERY[r.entrega] || r.entrega), action);
      recent.appendChild(tr);
    });
    text("actualizado", new Date().toLocaleTimeString("es-UY", { timeZone: "America/Montevideo" }));
  }

  function say(message, ok) {
    var m = $("mensaje");
    m.textContent = message;
    m.className = "message " + (ok ? "ok" : "error");
  }

  function reprint(r, button) {
    button.disabled = true;
    fetch("/pdf", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ uuid: r.uuid, impresora: printer })
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (body) {
        if (resp.ok) {
          say("Se envió " + r.nombre + " " + r.serie + "-" + r.numero + " a la impresora " + printer + ".", true);
        } else {
          say("No se pudo reimprimir: " + (body.error || body.mensaje_respuesta || ("error " + resp.status)), false);
        }
      });
    }).catch(function () {
      say("No se pudo reimprimir: el agente no responde.", false);
    }).finally(function () { button.disabled = !printer; });
  }

  function refresh() {
    fetch("/state", { headers: { "Accept": "application/json" }, cache: "no-store" })
      .then(function (resp) { if (!resp.ok) throw new Error(resp.status); return resp.json(); })
      .then(show)
      .catch(function () {
        var badge = $("estado");
        badge.dataset.status = "error";
        badge.textContent = "El agente no responde";
      })
      .finally(function () { setTimeout(refresh, REFRESH_MS); });
  }
  refresh();
})();
