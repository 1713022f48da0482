// Package reports is the emulator's room of reports and exports of the
// issued CFEs (interface §4.3): the dashboard's two charts (graficaDiaria,
// graficaFacturacionMensual), the users' export configurations, the Excel
// export, the accounting CSV (ExportacionContable) and the zip of a filter's
// PDFs (descargarPdfsFiltrados).
//
// It reads the issued CFEs through two narrow interfaces the composition
// root fills with the issuing room's parts (CFEs: issuing.Issued's Select;
// Printer: issuing.Printer's Render), and uses issuing's filter types, so a
// report selects exactly what buscar finds. Amounts are decimals, never
// floats; a CFE's sign in the charts is cfe.SaleSign's.
package reports
