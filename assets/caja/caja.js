"use strict";
(function () {
  var PAGE = 20;
  var pageToken = document.body.dataset.pagina || "";
  var lanToken = sessionStorage.getItem("cfe-token") || "";
  var info = { impresora: "", notas_credito: false, motivo: "" };
  var query = null, page = 1, total = 0, shown = {};
  var credit = null; // the receipt a credit note corrects
  var keyed = false;  // the sale form keys in a contingency form
  var corrige = null; // the observed (CE) form a key-in corrects

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function say(message, ok) {
    var m = $("mensaje");
    m.textContent = message;
    m.className = "message " + (ok ? "ok" : "error");
  }

  // Uruguayan formats, written here rather than by the browser's locale:
  // $ 1.234,50 (US$ for dollars), dd/mm/aaaa hh:mm.
  function money(currency, amount) {
    var s = String(amount), neg = s.charAt(0) === "-";
    if (neg) s = s.slice(1);
    var parts = s.split("."), whole = parts[0] || "0", frac = ((parts[1] || "") + "00").slice(0, 2);
    var grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
    var symbol = currency === "UYU" ? "$" : currency === "USD" ? "US$" : currency;
    return symbol + " " + (neg ? "-" : "") + grouped + "," + frac;
  }
  function when(iso) { // "2026-11-28T10:05:09-03:00", already in Montevideo
    var d = iso.slice(0, 10).split("-");
    return d[2] + "/" + d[1] + "/" + d[0] + " " + iso.slice(11, 16);
  }
  function isoDate(text) { // "28/11/2026" → "2026-11-28", or ""
    var m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text.trim());
    if (!m) return "";
    return m[3] + "-" + ("0" + m[2]).slice(-2) + "-" + ("0" + m[1]).slice(-2);
  }
  function uyDate(iso) { var d = iso.split("-"); return d[2] + "/" + d[1] + "/" + d[0]; }
  function decimal(text) { // "1.234,50", "1234.5" or "1234,5" → "1234.50"-like string, or ""
    var s = String(text).trim().replace(/\s/g, "");
    if (s.indexOf(",") >= 0) s = s.replace(/\./g, "").replace(",", ".");
    return /^\d+(\.\d+)?$/.test(s) ? s : "";
  }
  function cents(s) { // a decimal string → integer cents (rounded half up)
    var p = s.split("."), f = ((p[1] || "") + "000").slice(0, 3);
    return parseInt(p[0], 10) * 100 + parseInt(f.slice(0, 2), 10) + (parseInt(f.charAt(2), 10) >= 5 ? 1 : 0);
  }

  // api calls the module with the terminal's token (LAN mode) and reads the
  // answer; a 401 asks for the token.
  function api(path, opts) {
    opts = opts || {};
    var headers = { "Accept": "application/json" };
    for (var k in (opts.headers || {})) headers[k] = opts.headers[k];
    if (lanToken) headers["X-CFE-Token"] = lanToken;
    opts.headers = headers;
    return fetch(path, opts).then(function (resp) {
      if (resp.status === 401) {
        $("acceso").hidden = false;
        throw new Error("Ingrese el token de la terminal.");
      }
      return resp;
    });
  }
  function json(resp) {
    return resp.json().catch(function () { return {}; }).then(function (body) {
      if (!resp.ok) throw new Error(body.error || body.mensaje_respuesta || ("error " + resp.status));
      return body;
    });
  }
  function failed(what) {
    return function (err) { say(what + ": " + (err && err.message ? err.message : "el agente no responde") + ".", false); };
  }

  $("acceso").addEventListener("submit", function (ev) {
    ev.preventDefault();
    lanToken = $("token").value.trim();
    sessionStorage.setItem("cfe-token", lanToken);
    $("acceso").hidden = true;
    start();
  });

  // Tabs.
  $("pestanas").addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-pestana]");
    if (!b) return;
    if (b.dataset.pestana === "contingencia") { startKeyed(null); return; }
    if (b.dataset.pestana === "venta" && keyed) resetSale();
    show(b.dataset.pestana);
  });
  function show(name) {
    var tabs = document.querySelectorAll(".pestana");
    for (var i = 0; i < tabs.length; i++) tabs[i].hidden = tabs[i].id !== name;
    var bs = document.querySelectorAll("#pestanas button");
    var active = name === "venta" && keyed ? "contingencia" : name;
    for (var j = 0; j < bs.length; j++) bs[j].className = bs[j].dataset.pestana === active ? "activa" : "";
  }

  // Search.
  $("busqueda").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var f = new FormData($("busqueda")), q = new URLSearchParams(), bad = "";
    f.forEach(function (v, k) {
      v = String(v).trim();
      if (v === "") return;
      if (k === "desde" || k === "hasta") {
        var iso = isoDate(v);
        if (!iso) { bad = k; return; }
        v = iso;
      }
      q.set(k, v);
    });
    if (bad) { say("La fecha " + bad + " debe escribirse dd/mm/aaaa.", false); return; }
    query = q; page = 1;
    search();
  });
  $("anterior").addEventListener("click", function () { if (page > 1) { page--; search(); } });
  $("siguiente").addEventListener("click", function () { if (page * PAGE < total) { page++; search(); } });

  function search() {
    var q = new URLSearchParams(query || "");
    q.set("pagina", page); q.set("por_pagina", PAGE);
    return api("/comprobantes?" + q.toString()).then(json).then(function (body) {
      total = body.total;
      var pages = Math.max(1, Math.ceil(total / PAGE));
      $("resumen").textContent = total === 0 ? "No se encontró ningún comprobante." :
        (total === 1 ? "1 comprobante" : total.toLocaleString("es-UY").replace(/\s/g, ".") + " comprobantes") +
        (body.limitado ? " (solo los más recientes)" : "") + " — página " + page + " de " + pages;
      $("anterior").disabled = page <= 1;
      $("siguiente").disabled = page >= pages;
      var rows = $("resultados");
      rows.textContent = "";
      shown = {};
      body.comprobantes.forEach(function (c) { shown[c.uuid] = c; rows.appendChild(row(c)); });
      $("mensaje").className = "message"; $("mensaje").textContent = "";
    }).catch(failed("No se pudo buscar"));
  }

  var envios = { pendiente: "pendiente", aceptado: "enviado", rechazado: "rechazado", cuarentena: "dañado (en cuarentena)" };
  var estadosDGI = { pendiente: "pendiente", en_sobre: "en envío", enviado: "enviado, sin respuesta", aceptado: "aceptado",
    rechazado: "rechazado", observado: "observado", desconocido: "sin respuesta confiable" };

  function cell(tr, label, text, cls) {
    var td = el("td", cls, text);
    if (label) td.dataset.label = label;
    tr.appendChild(td);
    return td;
  }
  function row(c) {
    var tr = el("tr");
    tr.dataset.uuid = c.uuid;
    cell(tr, "Comprobante", c.nombre + " " + c.serie + "-" + c.numero, "comprobante");
    cell(tr, "Fecha", when(c.fecha_firma), "fecha nowrap");
    cell(tr, "Cliente", c.receptor ? (c.receptor.nombre + (c.receptor.documento ? " (" + c.receptor.documento + ")" : "")) : "Consumidor final", "cliente");
    cell(tr, "Total", money(c.moneda, c.total), "num total");
    cell(tr, "Envío", envios[c.envio] || c.envio, "envio");
    var dgi = cell(tr, "DGI", "", "dgi");
    if (c.dgi) {
      var st = el("span", "dgi-" + c.dgi.estado, estadosDGI[c.dgi.estado] || c.dgi.estado);
      st.title = c.dgi.explicacion;
      dgi.appendChild(st);
      (c.dgi.motivos || []).forEach(function (m) {
        var d = el("div", "motivo", m.codigo + " " + m.glosa + (m.detalle ? " (" + m.detalle + ")" : "") + ". " + m.significado + " Qué hacer: " + m.que_hacer);
        dgi.appendChild(d);
      });
    } else {
      dgi.textContent = "archivado";
    }
    var acts = cell(tr, "", "", "acciones");
    [["reimprimir", "Reimprimir"], ["pdf", "PDF"], ["xml", "XML"], ["correo", "Correo"]].forEach(function (a) {
      var b = el("button", "", a[1]);
      b.type = "button"; b.dataset.accion = a[0];
      if (a[0] === "correo" && !c.id_servicio) { b.disabled = true; b.title = "Se podrá enviar cuando el comprobante llegue al servicio"; }
      acts.appendChild(b);
    });
    if ((c.tipo_cfe === 201 || c.tipo_cfe === 211) && c.dgi && c.dgi.estado === "observado") {
      var fix = el("button", "", "Corregir");
      fix.type = "button"; fix.dataset.accion = "corregir";
      acts.appendChild(fix);
    }
    if (c.tipo_cfe === 101 || c.tipo_cfe === 111) {
      var nc = el("button", "", "Nota de crédito");
      nc.type = "button"; nc.dataset.accion = "nota";
      acts.appendChild(nc);
    }
    return tr;
  }

  $("resultados").addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-accion]");
    if (!b || b.disabled) return;
    var c = shown[b.closest("tr").dataset.uuid];
    var name = c.nombre + " " + c.serie + "-" + c.numero;
    switch (b.dataset.accion) {
      case "reimprimir": return reprint(b, c, name);
      case "pdf": return download("/caja/pdf?uuid=" + encodeURIComponent(c.uuid), name, "PDF");
      case "xml": return download("/caja/xml?uuid=" + encodeURIComponent(c.uuid), name, "XML");
      case "correo": return mail(c, name);
      case "nota": return startCredit(c, name);
      case "corregir": return startKeyed(c, name);
    }
  });

  function reprint(button, c, name) {
    var printer = $("impresora").value;
    if (!printer) { say("No hay impresora: elija una.", false); return; }
    button.disabled = true;
    api("/pdf", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ uuid: c.uuid, impresora: printer }) })
      .then(function (resp) {
        if (resp.ok) { say("Se envió " + name + " a la impresora " + printer + ".", true); return; }
        return json(resp);
      })
      .catch(failed("No se pudo reimprimir " + name))
      .finally(function () { button.disabled = false; });
  }

  function download(path, name, kind) {
    api(path).then(function (resp) {
      if (!resp.ok) return json(resp);
      var file = (resp.headers.get("Content-Disposition") || "").replace(/^.*filename="?([^"]+)"?.*$/, "$1") || name;
      return resp.blob().then(function (blob) {
        var a = el("a");
        a.href = URL.createObjectURL(blob);
        a.download = file;
        document.body.appendChild(a);
        a.click();
        setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
        say("Se descargó el " + kind + " de " + name + ".", true);
      });
    }).catch(failed("No se pudo descargar el " + kind + " de " + name));
  }

  function mail(c, name) {
    var to = prompt("Correo del cliente para enviarle " + name + ":");
    if (!to) return;
    api("/api/v1/cfeemitido/enviarPdfPorCorreo", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ idCfe: c.id_servicio, destinatarios: [to.trim()] }) })
      .then(json).then(function () { say("Se envió " + name + " a " + to.trim() + ".", true); })
      .catch(failed("No se pudo enviar " + name + " por correo"));
  }

  // Manual sale.
  function addLine(name, qty, price) {
    var frag = $("linea").content.cloneNode(true);
    var line = frag.querySelector(".linea");
    if (name) line.querySelector("[name=l-nombre]").value = name;
    if (qty) line.querySelector("[name=l-cantidad]").value = qty;
    if (price) line.querySelector("[name=l-precio]").value = price;
    $("lineas").appendChild(frag);
    updateTotal();
  }
  $("agregar").addEventListener("click", function () { addLine(); });
  $("lineas").addEventListener("click", function (ev) {
    if (ev.target.classList.contains("quitar")) { ev.target.closest(".linea").remove(); updateTotal(); }
  });
  $("formventa").addEventListener("input", updateTotal);
  function lines() {
    return Array.prototype.map.call(document.querySelectorAll("#lineas .linea"), function (l) {
      return { nombre: l.querySelector("[name=l-nombre]").value.trim(), cantidad: decimal(l.querySelector("[name=l-cantidad]").value),
        precio: decimal(l.querySelector("[name=l-precio]").value), iva: l.querySelector("[name=l-iva]").value };
    });
  }
  function updateTotal() { // prices with IVA included: the total is their sum
    var sum = 0;
    lines().forEach(function (l) { if (l.cantidad && l.precio) sum += Math.round(cents(l.cantidad) * cents(l.precio) / 100); });
    var f = $("formventa"), text = money(credit ? credit.moneda : "UYU", (sum / 100).toFixed(2));
    $("venta-total").textContent = f.elements.sin_iva.checked ? text + " más IVA" : text;
  }
  function kind() { return parseInt($("formventa").querySelector("[name=tipo]:checked").value, 10); }
  function uuid() {
    if (crypto.randomUUID) return crypto.randomUUID();
    var b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
    var h = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }
  var pending = null; // the uuid of a sale sent and not answered: sent again as is (idempotent)

  $("formventa").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var f = $("formventa"), ls = lines();
    for (var i = 0; i < ls.length; i++) {
      if (!ls[i].nombre || !ls[i].cantidad || !ls[i].precio) { say("Complete el nombre, la cantidad y el precio de cada artículo.", false); return; }
    }
    if (ls.length === 0) { say("Agregue al menos un artículo.", false); return; }
    var form = null;
    if (keyed) {
      var fecha = isoDate(f.elements["f-fecha"].value);
      if (!fecha) { say("La fecha del formulario debe escribirse dd/mm/aaaa.", false); return; }
      var nro = parseInt(f.elements["f-numero"].value.trim(), 10);
      if (!(nro > 0)) { say("Escriba el número impreso en el formulario.", false); return; }
      form = { serie: f.elements["f-serie"].value.trim().toUpperCase(), numero: nro, fecha: fecha };
      if (corrige) form.corrige = corrige.uuid;
    }
    var body = { uuid: pending || uuid(), tipo: credit ? credit.tipo_cfe + 1 : keyed ? parseInt(f.elements["f-tipo"].value, 10) : kind(), lineas: ls,
      precios_sin_iva: f.elements.sin_iva.checked, forma_pago: parseInt(f.elements.forma_pago.value, 10),
      impresora: $("impresora").value };
    if (keyed) { body.formulario = form; body.pin = f.elements["f-pin"].value; body.no_imprimir = true; delete body.impresora; }
    if (!credit && f.elements.documento.value.trim()) {
      body.receptor = { tipo_documento: 2, documento: f.elements.documento.value.trim(), nombre: f.elements.nombre.value.trim(),
        direccion: f.elements.direccion.value.trim() };
    }
    if (credit) { body.referencia = { uuid: credit.uuid, razon: f.elements.razon.value.trim() }; body.pin = f.elements.pin.value; }
    pending = body.uuid;
    $("emitir").disabled = true;
    api("/caja/venta", { method: "POST", headers: { "Content-Type": "application/json", "X-CFE-Pagina": pageToken },
      body: JSON.stringify(body) })
      .then(function (resp) {
        if (resp.status === 403 || resp.status === 400 || resp.status === 404 || resp.status === 429) pending = null;
        return json(resp);
      })
      .then(function (res) {
        var s = res.firma;
        if (s.codigo_respuesta !== "00") {
          pending = null;
          var why = (s.errores || []).map(function (e) { return e.campo + ": " + e.mensaje; }).join("; ");
          say("No se emitió: " + s.mensaje_respuesta + (why ? " (" + why + ")" : ""), false);
          return;
        }
        if (keyed) {
          pending = null;
          say("Formulario ingresado: " + s.mensaje_respuesta.replace(/ firmad[oa]$/, "") + " (" + s.serie + "-" + s.numero +
            "). Se envía a DGI; no se imprimió nada. Puede descargar una copia desde la búsqueda.", true);
          startKeyed(null);
          return;
        }

        pending = null;
        // The agent's message agrees with the document's gender ("… firmada"
        // for a Nota de Crédito or an e-Factura): so does the page's.
        var fem = / firmada$/.test(s.mensaje_respuesta);
        var name = s.mensaje_respuesta.replace(/ firmad[oa]$/, "");
        var issued = fem ? " emitida" : " emitido";
        say(res.impreso ? name + issued + (fem ? " e impresa en " : " e impreso en ") + res.impresora + "." :
          name + issued + ". " + (res.error_impresion || "No se imprimió."), res.impreso);
        resetSale();
      })
      .catch(failed("No se pudo emitir"))
      .finally(function () { $("emitir").disabled = false; });
  });
  function resetSale() {
    var f = $("formventa");
    f.reset();
    credit = null; keyed = false; corrige = null;
    $("nota").hidden = true; $("tipos").hidden = false; $("cliente").hidden = false;
    $("formulario").hidden = true; $("corrige-ref").hidden = true;
    $("emitir").disabled = false;
    $("emitir").textContent = "Emitir e imprimir";
    $("lineas").textContent = "";
    addLine();
  }
  $("nota-cancelar").addEventListener("click", resetSale);
  $("formulario-cancelar").addEventListener("click", function () { resetSale(); show("venta"); });

  // Keying in a contingency form (or correcting an observed one, c).
  function startKeyed(c, name) {
    resetSale();
    keyed = true; corrige = c;
    var f = $("formventa");
    $("formulario").hidden = false; $("tipos").hidden = true;
    $("emitir").textContent = "Ingresar formulario";
    if (c) {
      f.elements["f-tipo"].value = String(c.tipo_cfe);
      f.elements["f-serie"].value = c.serie;
      f.elements["f-numero"].value = String(c.numero);
      var ref = $("corrige-ref");
      ref.hidden = false;
      ref.textContent = "Corrige " + name + ", observado por DGI: ingrese el formulario corregido con el mismo número.";
    }
    show("venta");
  }

  function startCredit(c, name) {
    resetSale();
    credit = c;
    $("nota").hidden = false; $("tipos").hidden = true; $("cliente").hidden = true;
    $("nota-ref").textContent = name + " (" + money(c.moneda, c.total) + ")";
    var missing = $("nota-pin-falta");
    missing.hidden = info.notas_credito;
    missing.textContent = info.motivo || "";
    $("emitir").disabled = !info.notas_credito;
    $("emitir").textContent = "Emitir nota de crédito";
    $("lineas").textContent = "";
    (c.items.length ? c.items : ["Devolución"]).forEach(function (n) { addLine(n, "1", ""); });
    show("venta");
  }

  // The day's close.
  $("formcierre").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var day = isoDate($("formcierre").elements.fecha.value);
    if (!day) { say("La fecha del cierre debe escribirse dd/mm/aaaa.", false); return; }
    closeOf(day);
  });
  $("imprimir-cierre").addEventListener("click", function () { window.print(); });
  // The agent prints the close on the chosen printer (the default when
  // none is chosen): ESC/POS text on a thermal printer, the PDF on others.
  $("imprimir-cierre-agente").addEventListener("click", function () {
    var day = isoDate($("formcierre").elements.fecha.value), button = this, printer = $("impresora").value;
    if (!day) { say("La fecha del cierre debe escribirse dd/mm/aaaa.", false); return; }
    button.disabled = true;
    api("/cierre/imprimir", { method: "POST", headers: { "Content-Type": "application/json", "X-CFE-Pagina": pageToken },
      body: JSON.stringify({ fecha: day, impresora: printer }) })
      .then(json)
      .then(function (r) { say("Se envió el cierre del " + uyDate(day) + " a la impresora " + (printer || r.impresora) + ".", true); })
      .catch(failed("No se pudo imprimir el cierre"))
      .finally(function () { button.disabled = false; });
  });
  $("pdf-cierre").addEventListener("click", function () {
    var day = isoDate($("formcierre").elements.fecha.value);
    if (!day) { say("La fecha del cierre debe escribirse dd/mm/aaaa.", false); return; }
    download("/cierre/pdf?fecha=" + encodeURIComponent(day), "cierre del " + uyDate(day), "PDF");
  });
  function table(head, rows, numeric) {
    var t = el("table", "stack"), th = el("thead"), tr = el("tr"), tb = el("tbody");
    head.forEach(function (h, i) { tr.appendChild(el("th", numeric[i] ? "num" : "", h)); });
    th.appendChild(tr); t.appendChild(th);
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (v, i) { cell(row, head[i], v, numeric[i] ? "num" : ""); });
      tb.appendChild(row);
    });
    t.appendChild(tb);
    return t;
  }
  function nets(box, list) {
    list.forEach(function (m) {
      box.appendChild(el("h3", "neto", "Neto en " + m.moneda + ": " + money(m.moneda, m.total)));
      box.appendChild(table(["Medio de pago", "Importe"], m.medios_pago.map(function (p) { return [p.nombre, money(m.moneda, p.total)]; }), [false, true]));
      box.appendChild(table(["IVA", "Neto", "Impuesto"], m.iva.map(function (r) { return [r.tasa, money(m.moneda, r.neto), money(m.moneda, r.impuesto)]; }), [false, true, true]));
    });
  }
  // The day's report to DGI, as /state's dgi.reportes words it.
  var REPORT_STATES = { "": "todavía sin respuesta de DGI", AR: "recibido (AR)", BR: "rechazado (BR)", BA: "rechazado (BA)",
    DR: "procesado (DR)", ER: "con inconsistencias (ER)", FR: "reemplazado por uno posterior (FR)" };
  function reportOf(r) {
    var p = el("p", "cierre-reporte");
    p.id = "cierre-reporte";
    if (r === null) { p.className += " muted"; p.textContent = "Reporte diario a DGI: sin información para este día."; return p; }
    p.dataset.estado = r.estado;
    var text = "Reporte diario a DGI: " + (r.sec_envio === 0 ? "todavía no enviado" :
      "secuencia " + r.sec_envio + ", " + (REPORT_STATES[r.estado] || r.estado));
    if (r.motivos.length > 0) text += ". Motivos: " + r.motivos.map(function (m) { return m.codigo + (m.glosa ? " " + m.glosa : ""); }).join("; ");
    if (r.estado === "BR" || r.estado === "BA" || r.estado === "ER") text += ". El técnico lo corrige y lo reenvía (cfe-agent reporte reenviar).";
    p.textContent = text;
    return p;
  }
  function closeOf(day) {
    api("/cierre?fecha=" + encodeURIComponent(day)).then(json).then(function (c) {
      var box = $("cierre-contenido"), d = c.fecha.split("-");
      box.textContent = "";
      box.appendChild(el("h2", "", "Cierre del " + d[2] + "/" + d[1] + "/" + d[0] + " — " + c.cantidad + (c.cantidad === 1 ? " comprobante" : " comprobantes")));
      c.cajas.forEach(function (k) {
        var sec = el("section", "cierre-caja");
        sec.dataset.serie = k.serie; sec.dataset.sucursal = k.cod_suc;
        sec.appendChild(el("h3", "", "Caja: serie " + k.serie + ", sucursal " + k.cod_suc + " — " + k.cantidad + " comprobantes"));
        var rows = [];
        k.tipos.forEach(function (t) { t.montos.forEach(function (m) { rows.push([t.nombre, String(m.cantidad), money(m.moneda, m.total)]); }); });
        sec.appendChild(table(["Tipo", "Cantidad", "Importe"], rows, [false, true, true]));
        nets(sec, k.neto);
        box.appendChild(sec);
      });
      var all = el("section", "cierre-total");
      all.appendChild(el("h2", "", "Total del día (todas las cajas)"));
      nets(all, c.totales);
      box.appendChild(all);
      box.appendChild(reportOf(c.reporte));
    }).catch(failed("No se pudo leer el cierre"));
  }

  function start() {
    api("/caja/info").then(json).then(function (i) {
      info = i;
      $("perfil").textContent = "Perfil " + i.perfil;
      $("formcierre").elements.fecha.value = uyDate(i.hoy);
      return api("/printers").then(json).then(function (p) {
        var sel = $("impresora");
        sel.textContent = "";
        var names = (p.aliases || []).map(function (x) { return x.name; });
        if (i.impresora && names.indexOf(i.impresora) < 0) names.unshift(i.impresora);
        if (names.length === 0) sel.appendChild(el("option", "", "Sin impresoras")).value = "";
        names.forEach(function (n) {
          var o = el("option", "", n + (n === i.impresora ? " (predeterminada)" : ""));
          o.value = n;
          if (n === i.impresora) o.selected = o.defaultSelected = true;
          sel.appendChild(o);
        });
      }).catch(function () {
        var o = el("option", "", i.impresora || "Sin impresoras"); o.value = i.impresora || ""; $("impresora").appendChild(o);
      });
    }).then(function () {
      // A link (the status page's receipts) may name what to find.
      var from = new URLSearchParams(location.search), f = $("busqueda");
      query = new URLSearchParams();
      ["numero", "serie", "tipo", "texto"].forEach(function (k) {
        var v = from.get(k);
        if (v) { query.set(k, v); f.elements[k].value = v; }
      });
      page = 1;
      return search();
    }).catch(failed("No se pudo abrir la caja"));
  }
  addLine();
  start();
})();
