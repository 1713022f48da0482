"use strict";
(function () {
  var REFRESH_MS = 5000;
  var printer = document.body.dataset.impresora || "";

  function say(message, ok) {
    var m = document.getElementById("mensaje");
    m.textContent = message;
    m.className = "message " + (ok ? "ok" : "error");
  }

  // Reprint buttons are replaced on every refresh: listen on the document.
  document.addEventListener("click", function (ev) {
    var button = ev.target.closest && ev.target.closest("button[data-uuid]");
    if (button && !button.disabled) reprint(button);
  });

  function reprint(button) {
    var name = button.dataset.nombre;
    button.disabled = true;
    fetch("/pdf", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ uuid: button.dataset.uuid, impresora: printer })
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (body) {
        if (resp.ok) {
          say("Se envió " + name + " a la impresora " + printer + ".", true);
        } else {
          say("No se pudo reimprimir " + name + ": " + (body.error || body.mensaje_respuesta || ("error " + resp.status)), false);
        }
      });
    }).catch(function () {
      say("No se pudo reimprimir " + name + ": el agente no responde.", false);
    }).finally(function () { button.disabled = !printer; });
  }

  // The cashier's choice to fold or unfold the CAE ranges outlives refreshes.
  var caeOpen = null;
  document.addEventListener("toggle", function (ev) {
    if (ev.target.id === "cae-detalle") caeOpen = ev.target.open;
  }, true);

  // refresh fetches the page again (rendered by the agent, with the same
  // formats) and swaps its content in.
  function refresh() {
    fetch("/", { headers: { "Accept": "text/html" }, cache: "no-store" })
      .then(function (resp) { if (!resp.ok) throw new Error(resp.status); return resp.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("contenido");
        if (!fresh) throw new Error("sin contenido");
        var details = fresh.querySelector("#cae-detalle");
        if (details && caeOpen !== null) details.open = caeOpen;
        document.getElementById("contenido").replaceWith(document.adoptNode(fresh));
      })
      .catch(function () {
        var badge = document.getElementById("estado");
        if (badge) {
          badge.dataset.status = "error";
          badge.textContent = "El agente no responde";
        }
      })
      .finally(function () { setTimeout(refresh, REFRESH_MS); });
  }
  setTimeout(refresh, REFRESH_MS);
})();
