<?php
// Drives the vendor's PHP SDK (unmodified, from the SDK directory given as
// the first argument) against BT_BASE_URL and prints what it observed as one
// JSON object; the Go test (sdkphp_test.go) asserts on it.
//
//   php scenario.php SDK_DIR login TOKEN_FILE   log in; the tokens go to TOKEN_FILE (the SDK's FileTokenStore)
//   php scenario.php SDK_DIR main TOKEN_FILE    everything else, starting from the stored (by then expired) JWT
//
// Environment: BT_BASE_URL, BT_USER, BT_SECRET, BT_LIMITED_KEY (a company key
// allowed one request a minute), BT_FOREIGN_UUID (the uuid of another
// company's CFE), BT_FOREIGN_COMPANY (that company's idEmpresa), BT_TODAY
// (the service's date, AAAA-MM-DD).

declare(strict_types=1);

[$script, $sdkDir, $phase, $tokenFile] = $argv;
require $sdkDir . '/vendor/autoload.php';

use Bluetech\Sdk\Auth\FileTokenStore;
use Bluetech\Sdk\Client;
use Bluetech\Sdk\Config;
use Bluetech\Sdk\Exceptions\ApiException;
use Bluetech\Sdk\Models\EmitComprobanteRequest;
use GuzzleHttp\Client as GuzzleHttpClient;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Middleware;
use GuzzleHttp\Psr7\HttpFactory;

/** @var array<int, array{request: \Psr\Http\Message\RequestInterface, response: ?\Psr\Http\Message\ResponseInterface}> $history */
$history = [];

function sdk(Config $config, array &$history): Client
{
    $stack = HandlerStack::create();
    $stack->push(Middleware::history($history));
    $factory = new HttpFactory();
    return new Client($config, new GuzzleHttpClient(['handler' => $stack, 'timeout' => 30]), $factory, $factory);
}

/** The paths the SDK called since entry $from of the history. */
function calls(array $history, int $from): array
{
    $out = [];
    foreach (array_slice($history, $from) as $h) {
        $out[] = $h['request']->getMethod() . ' ' . $h['request']->getUri()->getPath() . ' ' . ($h['response'] ? $h['response']->getStatusCode() : 0);
    }
    return $out;
}

/** What an SDK exception carries, with the headers of the answer it came from. */
function failure(callable $call, array &$history): array
{
    try {
        $call();
    } catch (ApiException $e) {
        $last = end($history);
        $headers = [];
        if ($last && $last['response']) {
            foreach (['Retry-After', 'X-RateLimit-Limit-Minute', 'X-RateLimit-Remaining-Minute', 'X-RateLimit-Limit-Hour',
                'X-RateLimit-Remaining-Hour', 'X-Request-Id'] as $h) {
                $headers[$h] = $last['response']->getHeaderLine($h);
            }
        }
        return ['class' => get_class($e), 'status' => $e->getStatusCode(), 'message' => $e->getMessage(),
            'code' => $e->getErrorCode(), 'details' => $e->getDetails(), 'requestId' => $e->getRequestId(), 'headers' => $headers];
    }
    return ['class' => 'none'];
}

function emit(Client $sdk, array $body): array
{
    return get_object_vars($sdk->comprobantes()->emitir(EmitComprobanteRequest::fromArray($body)));
}

/** An emission body as the SDK's models build it. */
function body(string $uuid, array $cfe, int $idEmpresa = 0): array
{
    return ['idEmpresa' => $idEmpresa, 'codComercio' => 'blue001', 'codTerminal' => 'bl-01', 'uuid' => $uuid, 'cfe' => $cfe];
}

$base = getenv('BT_BASE_URL');
$out = [];

if ($phase === 'login') {
    $config = new Config($base);
    $config->setTokenStore(new FileTokenStore($tokenFile));
    $tokens = sdk($config, $history)->auth()->loginAndSetToken(getenv('BT_USER'), getenv('BT_SECRET'));
    $out['login'] = ['token' => $tokens->token, 'refresh_token' => $tokens->refresh_token, 'expires_at' => $tokens->expires_at,
        'expires_type' => gettype($tokens->expires_at)];
    echo json_encode($out, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
    exit(0);
}

// Resume from the token store: the JWT has expired, so the first call gets a
// 401, the SDK refreshes at /auth/refresh once and repeats the call.
$config = new Config($base);
$store = new FileTokenStore($tokenFile);
$config->setTokenStore($store);
$stored = $store->load();
$sdk = sdk($config, $history);
$from = count($history);
$companies = $sdk->users()->companies();
$out['after401'] = ['companies' => $companies, 'calls' => calls($history, $from),
    'token_changed' => $config->getToken() !== $stored->token, 'stored_changed' => $store->load()->token !== $stored->token];

// An explicit refresh.
$tokens = $sdk->auth()->exchangeRefreshToken($config->getRefreshToken());
$config->setToken($tokens->token);
$config->setRefreshToken($tokens->refresh_token);
$out['refresh'] = ['token' => $tokens->token, 'refresh_token' => $tokens->refresh_token, 'expires_at' => $tokens->expires_at,
    'expires_type' => gettype($tokens->expires_at), 'companies' => $sdk->referenceData()->companies()];

// Emissions with the SDK's models: idEmpresa 0 (the user has one company),
// empty arrays for what is not used, the hosted names of payment means and
// references.
$line = ['numeroLineaDetalle' => 1, 'indicadorFacturacion' => 3, 'nombreItem' => 'Servicio', 'unidadMedida' => 'N/A',
    'cantidad' => 1, 'precioUnitario' => 100, 'montoItem' => 100];
$out['ticket'] = emit($sdk, body('sdk-ticket-1', [
    'idDoc' => ['tipoCfe' => 101, 'formaPago' => 1],
    'detalles' => [$line],
    'mediosPago' => [['numeroLineaMedioPago' => 1, 'idMedioPago' => 1, 'glosaMedioPago' => 'Efectivo', 'ordenMedioPago' => 1,
        'valorPago' => 122, 'tipoMonedaMedioPago' => 'UYU', 'tipoCambioMedioPago' => 1, 'idCuentaBanco' => 0,
        'titular' => '', 'nomDoc' => '', 'proveedorPos' => '']],
]));
$receptor = ['tipoDocumento' => 2, 'documento' => '214844360018', 'documentoExt' => null, 'codigoPais' => 'UY',
    'razonSocial' => 'Dirección General Impositiva', 'direccion' => 'Fernández Crespo 1534', 'ciudad' => 'Montevideo',
    'departamento' => 'Montevideo', 'pais' => 'Uruguay', 'codigoPostal' => null];
$out['factura'] = emit($sdk, body('sdk-factura-1', [
    'idDoc' => ['tipoCfe' => 111, 'formaPago' => 1],
    'receptor' => $receptor,
    'detalles' => [$line],
]));
$out['nota'] = emit($sdk, body('sdk-nota-1', [
    'idDoc' => ['tipoCfe' => 112, 'formaPago' => 1],
    'receptor' => $receptor,
    'detalles' => [array_merge($line, ['nombreItem' => 'Bonificación del servicio', 'precioUnitario' => 50, 'montoItem' => 50])],
    'referencias' => [['numeroLineaReferencia' => 1, 'tipoDocumentoReferencia' => 111,
        'serieFacturaReferencia' => $out['factura']['Serie'], 'numeroFacturaReferencia' => (int)$out['factura']['Nro'],
        'fechaFacturaReferencia' => getenv('BT_TODAY'), 'tipoMonedaCfeReferencia' => 'UYU',
        'razonReferencia' => 'Bonificación acordada']],
]));

// The error exceptions the SDK maps.
$out['e400'] = failure(fn () => emit($sdk, body('sdk-mala-1', ['idDoc' => ['tipoCfe' => 101, 'formaPago' => 1], 'detalles' => []])), $history);
$out['e403'] = failure(fn () => emit($sdk, body('sdk-ajena-1', ['idDoc' => ['tipoCfe' => 101, 'formaPago' => 1], 'detalles' => [$line]],
    (int)getenv('BT_FOREIGN_COMPANY'))), $history);
$out['e403pdf'] = failure(fn () => $sdk->api()->request('POST', '/api/v1/cfeemitido/pdf', [], ['uuid' => getenv('BT_FOREIGN_UUID')]), $history);
$out['e404'] = failure(fn () => $sdk->api()->request('GET', '/api/v1/cfeemitido/987654321'), $history);
$out['e409'] = failure(fn () => emit($sdk, body('sdk-ticket-1', ['idDoc' => ['tipoCfe' => 101, 'formaPago' => 1],
    'detalles' => [array_merge($line, ['nombreItem' => 'Otro servicio'])]])), $history);

$limitedConfig = new Config($base, getenv('BT_LIMITED_KEY'));
$limitedConfig->setRetryMax(0);
$limited = sdk($limitedConfig, $history);
$out['limited_first'] = $limited->users()->companies();
$out['e429'] = failure(fn () => $limited->users()->companies(), $history);

echo json_encode($out, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
