<?php
// The vendor SDK's autoloader without Composer (the test copies this file to
// the SDK's vendor/autoload.php): Debian's Guzzle and PSR-7 packages, and
// PSR-4 for Bluetech\Sdk\ → src/.
require_once '/usr/share/php/GuzzleHttp/autoload.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Bluetech\\Sdk\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/../src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
