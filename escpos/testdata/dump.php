<?php
// Lists the commands escpos-tools' parser finds in an ESC/POS file, one JSON
// object a line: the command's class and its fields (arguments, the data of
// data commands such as GS ( k), which the parser keeps private. It reads
// them by reflection and interprets nothing itself.
//
// Usage: php dump.php ESCPOS_TOOLS_DIR FILE
require_once $argv[1] . '/vendor/autoload.php';

use ReceiptPrintHq\EscposTools\Parser\Parser;

function fields($obj)
{
    $out = array('class' => (new ReflectionClass($obj))->getShortName());
    for ($c = new ReflectionClass($obj); $c; $c = $c->getParentClass()) {
        foreach ($c->getProperties() as $p) {
            if ($p->isStatic() || $p->getName() == 'context' || $p->getName() == 'stack') {
                continue;
            }
            $p->setAccessible(true);
            $v = $p->getValue($obj);
            if (is_object($v)) {
                $v = fields($v);
            } elseif (is_string($v)) {
                $v = base64_encode($v);
            } elseif (is_array($v)) {
                continue;
            }
            if (!array_key_exists($p->getName(), $out)) {
                $out[$p->getName()] = $v;
            }
        }
    }
    return $out;
}

$parser = new Parser();
$parser->addFile(fopen($argv[2], 'rb'));
foreach ($parser->getCommands() as $cmd) {
    echo json_encode(fields($cmd)), "\n";
}
