// Sign one e-Ticket with the cfe-agent local module and print it.
//
// Build and run (Mono): mcs FirmarETicket.cs && mono FirmarETicket.exe [BASE_URL] [PDF_FILE] [PRINTER]
// (.NET: add it to a console project.) Defaults: http://127.0.0.1:18787,
// ticket.pdf, archivo (the default profile's folder printer). Uses only
// System.dll (HttpWebRequest), which every .NET has; a real POS would use its
// JSON library instead of the regular expressions below. Exits 1 when
// anything fails.
using System;
using System.IO;
using System.Net;
using System.Text;
using System.Text.RegularExpressions;

public static class FirmarETicket
{
    // Post sends json and returns the status, content type and body; 4xx and
    // 5xx answers carry a JSON body too.
    static int Post(string url, string json, out string contentType, out byte[] body)
    {
        var req = (HttpWebRequest)WebRequest.Create(url);
        req.Method = "POST";
        req.ContentType = "application/json";
        req.Timeout = 30000;
        byte[] data = Encoding.UTF8.GetBytes(json);
        using (var s = req.GetRequestStream()) s.Write(data, 0, data.Length);
        HttpWebResponse resp;
        try { resp = (HttpWebResponse)req.GetResponse(); }
        catch (WebException e) when (e.Response != null) { resp = (HttpWebResponse)e.Response; }
        using (resp)
        using (var ms = new MemoryStream())
        {
            resp.GetResponseStream().CopyTo(ms);
            contentType = resp.ContentType ?? "";
            body = ms.ToArray();
            return (int)resp.StatusCode;
        }
    }

    // Field returns a top-level string field of a JSON answer, or "".
    static string Field(string json, string name)
    {
        var m = Regex.Match(json, "\"" + name + "\":\"((?:[^\"\\\\]|\\\\.)*)\"");
        return m.Success ? Regex.Unescape(m.Groups[1].Value) : "";
    }

    public static int Main(string[] args)
    {
        string baseUrl = args.Length > 0 ? args[0] : "http://127.0.0.1:18787";
        string pdfFile = args.Length > 1 ? args[1] : "ticket.pdf";
        string printer = args.Length > 2 ? args[2] : "archivo";

        // The uuid is the idempotency key: keep it with the sale and resend the
        // same one if the answer is lost, so the receipt is never signed twice.
        // montoBruto 1: precioUnitario is the shelf price, IVA included, as at a
        // till: 2 x 152.50 charges 305.00 (without it the agent adds IVA: 372.10).
        string venta = "{\"uuid\": \"" + Guid.NewGuid() + "\", \"adenda\": \"Gracias por su compra.\", " +
            "\"cfe\": {\"idDoc\": {\"tipoCfe\": 101, \"formaPago\": 1, \"montoBruto\": 1}, " +
            "\"detalles\": [{\"indicadorFacturacion\": 3, \"nombreItem\": \"Yerba mate 1 kg\", " +
            "\"cantidad\": 2, \"precioUnitario\": \"152.50\"}]}}";
        string ctype;
        byte[] raw;
        try
        {
            Post(baseUrl + "/sign-cfe", venta, out ctype, out raw);
            string answer = Encoding.UTF8.GetString(raw);
            string codigo = Field(answer, "codigo_respuesta");
            Console.WriteLine("codigo_respuesta " + codigo + " - " + Field(answer, "mensaje_respuesta"));
            if (codigo != "00")
            {
                Console.Error.WriteLine(answer);
                return 1;
            }
            string uuid = Field(answer, "uuid");
            Console.WriteLine("uuid " + uuid);

            int status = Post(baseUrl + "/pdf", "{\"uuid\": \"" + uuid + "\", \"impresora\": \"" + printer + "\"}",
                out ctype, out raw);
            if (status != 200 || !ctype.StartsWith("application/pdf"))
            {
                Console.Error.WriteLine("no se pudo imprimir: " + status + " " + Field(Encoding.UTF8.GetString(raw), "error"));
                return 1;
            }
            File.WriteAllBytes(pdfFile, raw);
            Console.WriteLine("impreso en " + printer + "; PDF guardado en " + pdfFile);
            return 0;
        }
        catch (WebException e)
        {
            Console.Error.WriteLine("sin conexión con el agente: " + e.Message);
            return 1;
        }
    }
}
