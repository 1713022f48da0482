// Package escpos renders the printed representation of a signed CFE in
// ESC/POS, the command language of thermal receipt printers (Epson TM-T20 and
// TM-T88, Bixolon, Xprinter, ...), so that the printer draws the text, the QR
// code and the cut itself instead of printing a rasterised PDF.
//
// It owns the encoder (text through a code page the printer has, styles,
// the QR code by the printer's 2D-code command GS ( k or as a raster image
// GS v 0, the cut and the cash drawer pulse), the layout of a receipt on a
// roll of 80 mm (48 or 42 columns) or 58 mm (32 columns), and the printer's
// real-time status bytes (DLE EOT). What a receipt shows, and in which
// order, is pdf.Receipt: the same model as the PDF's Rollo templates.
//
// Rendering keeps no state and is safe for concurrent use.
package escpos
