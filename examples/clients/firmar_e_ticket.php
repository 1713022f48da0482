<?php
// Sign one e-Ticket with the cfe-agent local module and print it.
//
// Usage: php firmar_e_ticket.php [BASE_URL] [PDF_FILE] [PRINTER]
// Defaults: http://127.0.0.1:18787, ticket.pdf, archivo (the default
// profile's folder printer). Needs the curl extension. Exits 1 when anything
// fails.

$base = $argv[1] ?? 'http://127.0.0.1:18787';
$pdfFile = $argv[2] ?? 'ticket.pdf';
$printer = $argv[3] ?? 'archivo';

/** POST $body as JSON; returns [status, content type, body]. */
function post(string $url, array $body): array
{
    $ch = curl_init($url);
    curl_setopt_array($ch, [
        CURLOPT_POST => true,
        CURLOPT_POSTFIELDS => json_encode($body, JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR),
        CURLOPT_HTTPHEADER => ['Content-Type: application/json'],
        CURLOPT_RETURNTRANSFER => true,
        CURLOPT_TIMEOUT => 30,
    ]);
    $raw = curl_exec($ch);
    if ($raw === false) {
        fwrite(STDERR, 'sin conexión con el agente: ' . curl_error($ch) . "\n");
        exit(1);
    }
    $out = [curl_getinfo($ch, CURLINFO_RESPONSE_CODE), (string) curl_getinfo($ch, CURLINFO_CONTENT_TYPE), $raw];
    curl_close($ch);
    return $out;
}

// The uuid is the idempotency key: keep it with the sale and resend the same
// one if the answer is lost, so the receipt is never signed twice.
$b = random_bytes(16);
$b[6] = chr(ord($b[6]) & 0x0f | 0x40);
$b[8] = chr(ord($b[8]) & 0x3f | 0x80);
$uuid = vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));

$venta = [
    // montoBruto 1: precioUnitario is the shelf price, IVA included, as at a
    // till: 2 x 152.50 charges 305.00 (without it the agent adds IVA: 372.10).
    'uuid' => $uuid,
    'adenda' => 'Gracias por su compra.',
    'cfe' => [
        'idDoc' => ['tipoCfe' => 101, 'formaPago' => 1, 'montoBruto' => 1],
        'detalles' => [
            ['indicadorFacturacion' => 3, 'nombreItem' => 'Yerba mate 1 kg', 'cantidad' => 2, 'precioUnitario' => '152.50'],
        ],
    ],
];

[, , $raw] = post("$base/sign-cfe", $venta);
$answer = json_decode($raw, true);
echo 'codigo_respuesta ', $answer['codigo_respuesta'] ?? '?', ' - ', $answer['mensaje_respuesta'] ?? '', "\n";
if (($answer['codigo_respuesta'] ?? '') !== '00') {
    foreach ($answer['errores'] ?? [] as $e) {
        fwrite(STDERR, "   {$e['campo']}: {$e['mensaje']}\n");
    }
    exit(1);
}
echo 'uuid ', $answer['uuid'], "\n";

[$status, $ctype, $pdf] = post("$base/pdf", ['uuid' => $answer['uuid'], 'impresora' => $printer]);
if ($status !== 200 || !str_starts_with($ctype, 'application/pdf')) {
    fwrite(STDERR, "no se pudo imprimir: $status " . (json_decode($pdf, true)['error'] ?? '') . "\n");
    exit(1);
}
file_put_contents($pdfFile, $pdf);
echo "impreso en $printer; PDF guardado en $pdfFile\n";
