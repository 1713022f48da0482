#!/usr/bin/env python3
"""Sign one e-Ticket with the cfe-agent local module and print it.

Usage: python3 firmar_e_ticket.py [BASE_URL] [PDF_FILE] [PRINTER]
Defaults: http://127.0.0.1:18787, ticket.pdf, archivo (the default profile's
folder printer). Standard library only. Exits 1 when anything fails.
"""
import json
import sys
import urllib.error
import urllib.request
import uuid

base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:18787"
pdf_file = sys.argv[2] if len(sys.argv) > 2 else "ticket.pdf"
printer = sys.argv[3] if len(sys.argv) > 3 else "archivo"


def post(path, body):
    """POST body as JSON; return (status, content type, bytes)."""
    req = urllib.request.Request(base + path, data=json.dumps(body).encode("utf-8"),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:  # 4xx/5xx still carry a JSON body
        return err.code, err.headers.get("Content-Type", ""), err.read()


venta = {
    # The idempotency key: keep it with the sale and resend the same one if
    # the answer is lost, so the receipt is never signed twice.
    # montoBruto 1: precioUnitario is the shelf price, IVA included, as at a
    # till: 2 x 152.50 charges 305.00 (without it the agent adds IVA: 372.10).
    "uuid": str(uuid.uuid4()),
    "adenda": "Gracias por su compra.",
    "cfe": {
        "idDoc": {"tipoCfe": 101, "formaPago": 1, "montoBruto": 1},
        "detalles": [
            {"indicadorFacturacion": 3, "nombreItem": "Yerba mate 1 kg", "cantidad": 2, "precioUnitario": "152.50"},
        ],
    },
}

status, _, raw = post("/sign-cfe", venta)
answer = json.loads(raw)
print("codigo_respuesta", answer.get("codigo_respuesta"), "-", answer.get("mensaje_respuesta"))
if answer.get("codigo_respuesta") != "00":
    for e in answer.get("errores") or []:
        print("  ", e["campo"] + ":", e["mensaje"], file=sys.stderr)
    sys.exit(1)
print("uuid", answer["uuid"])

status, ctype, pdf = post("/pdf", {"uuid": answer["uuid"], "impresora": printer})
if status != 200 or not ctype.startswith("application/pdf"):
    print("no se pudo imprimir:", status, json.loads(pdf).get("error"), file=sys.stderr)
    sys.exit(1)
with open(pdf_file, "wb") as f:
    f.write(pdf)
print("impreso en", printer + "; PDF guardado en", pdf_file)
