package reports

// Choices the interface leaves open ("not shown") about reports and
// exports. Each is described in docs/sandbox.md; change them here and only
// here.
const (
	// maxExportRows bounds the CFEs one Excel or accounting export may hold.
	maxExportRows = 10_000
	// maxZipPDFs bounds the CFEs of one descargarPdfsFiltrados: at about
	// 35 kB and 6 to 40 ms a PDF (BenchmarkPDFZip, BenchmarkRender*), a zip
	// of at most some 17 MB, sent in well under a minute.
	maxZipPDFs = 500
	// headerCFECount tells how many PDFs a zip holds.
	headerCFECount = "X-Cantidad-CFE"
)
