// Package pdf renders the printed representation of a signed CFE
// ("representación impresa", Formato de los CFE v24) as a PDF.
//
// It owns the layouts (Estandar on A4, Rollo and Rollo58 for thermal rolls,
// and custom templates built on them), the content DGI prescribes and its
// order, the Sello Digital (QR code and security code recomputed from the
// signed XML), the watermark of documents printed outside production, the
// preview of a document not yet issued (RenderPreview, marked PreviewText),
// and the number formats (1.234,56, with the currency code on totals).
//
// Rendering reads only the signed XML and Options; it keeps no state but the
// fonts parsed once, and is safe for concurrent use.
package pdf
