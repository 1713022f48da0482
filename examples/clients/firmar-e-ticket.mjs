// Sign one e-Ticket with the cfe-agent local module and print it.
//
// Usage: node firmar-e-ticket.mjs [BASE_URL] [PDF_FILE] [PRINTER]
// Defaults: http://127.0.0.1:18787, ticket.pdf, archivo (the default
// profile's folder printer). Node 18+ (global fetch), no packages. Exits 1
// when anything fails.
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";

const [base = "http://127.0.0.1:18787", pdfFile = "ticket.pdf", printer = "archivo"] = process.argv.slice(2);

async function post(path, body) {
  return fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function main() {
  const venta = {
    // The idempotency key: keep it with the sale and resend the same one if
    // the answer is lost, so the receipt is never signed twice.
    // montoBruto 1: precioUnitario is the shelf price, IVA included, as at a
    // till: 2 x 152.50 charges 305.00 (without it the agent adds IVA: 372.10).
    uuid: randomUUID(),
    adenda: "Gracias por su compra.",
    cfe: {
      idDoc: { tipoCfe: 101, formaPago: 1, montoBruto: 1 },
      detalles: [{ indicadorFacturacion: 3, nombreItem: "Yerba mate 1 kg", cantidad: 2, precioUnitario: "152.50" }],
    },
  };
  const answer = await (await post("/sign-cfe", venta)).json();
  console.log("codigo_respuesta", answer.codigo_respuesta, "-", answer.mensaje_respuesta);
  if (answer.codigo_respuesta !== "00") {
    for (const e of answer.errores ?? []) console.error("  ", `${e.campo}:`, e.mensaje);
    return 1;
  }
  console.log("uuid", answer.uuid);

  const resp = await post("/pdf", { uuid: answer.uuid, impresora: printer });
  if (resp.status !== 200 || !(resp.headers.get("content-type") ?? "").startsWith("application/pdf")) {
    console.error("no se pudo imprimir:", resp.status, (await resp.json()).error);
    return 1;
  }
  await writeFile(pdfFile, Buffer.from(await resp.arrayBuffer()));
  console.log(`impreso en ${printer}; PDF guardado en ${pdfFile}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("error:", err.message);
    process.exit(1);
  },
);
