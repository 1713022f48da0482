// Sign one e-Ticket with the cfe-agent local module and print it.
//
// Usage: java FirmarETicket.java [BASE_URL] [PDF_FILE] [PRINTER]
// (Java 11+ runs the source file directly; or javac it first.)
// Defaults: http://127.0.0.1:18787, ticket.pdf, archivo (the default
// profile's folder printer). JDK only (java.net.http); a real POS would use
// its JSON library instead of the regular expressions below. Exits 1 when
// anything fails.
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class FirmarETicket {
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    static HttpResponse<byte[]> post(String url, String json) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
        return http.send(req, HttpResponse.BodyHandlers.ofByteArray());
    }

    // field returns a top-level string field of a JSON answer, or "".
    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(json);
        return m.find() ? m.group(1) : "";
    }

    public static void main(String[] args) throws Exception {
        String base = args.length > 0 ? args[0] : "http://127.0.0.1:18787";
        String pdfFile = args.length > 1 ? args[1] : "ticket.pdf";
        String printer = args.length > 2 ? args[2] : "archivo";

        // The uuid is the idempotency key: keep it with the sale and resend the
        // same one if the answer is lost, so the receipt is never signed twice.
        // montoBruto 1: precioUnitario is the shelf price, IVA included, as at a
        // till: 2 x 152.50 charges 305.00 (without it the agent adds IVA: 372.10).
        String venta = """
            {"uuid": "%s",
             "adenda": "Gracias por su compra.",
             "cfe": {"idDoc": {"tipoCfe": 101, "formaPago": 1, "montoBruto": 1},
                     "detalles": [{"indicadorFacturacion": 3, "nombreItem": "Yerba mate 1 kg",
                                   "cantidad": 2, "precioUnitario": "152.50"}]}}
            """.formatted(UUID.randomUUID());
        String answer = new String(post(base + "/sign-cfe", venta).body(), "UTF-8");
        String codigo = field(answer, "codigo_respuesta");
        System.out.println("codigo_respuesta " + codigo + " - " + field(answer, "mensaje_respuesta"));
        if (!codigo.equals("00")) {
            System.err.println(answer);
            System.exit(1);
        }
        String uuid = field(answer, "uuid");
        System.out.println("uuid " + uuid);

        HttpResponse<byte[]> pdf = post(base + "/pdf",
                "{\"uuid\": \"" + uuid + "\", \"impresora\": \"" + printer + "\"}");
        String ctype = pdf.headers().firstValue("Content-Type").orElse("");
        if (pdf.statusCode() != 200 || !ctype.startsWith("application/pdf")) {
            System.err.println("no se pudo imprimir: " + pdf.statusCode() + " " + field(new String(pdf.body(), "UTF-8"), "error"));
            System.exit(1);
        }
        Files.write(Path.of(pdfFile), pdf.body());
        System.out.println("impreso en " + printer + "; PDF guardado en " + pdfFile);
    }
}
