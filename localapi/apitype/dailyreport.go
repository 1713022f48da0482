package apitype

// DailyReportRequest is the body of POST /reporte-diario: the technician's
// daily-report commands (cfe-agent reporte, numeros anular, cotizaciones)
// run by the agent that holds the store.
type DailyReportRequest struct {
	// Accion is one of: "reporte" (the signed report of Fecha, SecEnvio),
	// "anular" (void Tipo:Serie:Desde-Hasta with Motivo), "fijar_cotizaciones"
	// (record Cotizaciones), "cotizaciones" (list the rate table).
	Accion       string      `json:"accion"`
	Fecha        string      `json:"fecha,omitempty"`
	SecEnvio     int         `json:"sec_envio,omitempty"`
	Tipo         int         `json:"tipo,omitempty"`
	Serie        string      `json:"serie,omitempty"`
	Desde        int64       `json:"desde,omitempty"`
	Hasta        int64       `json:"hasta,omitempty"`
	Motivo       string      `json:"motivo,omitempty"`
	Cotizaciones []RateQuote `json:"cotizaciones,omitempty"`
}

// RateQuote is one quote of the rate table: the BCU's close of Moneda on
// Fecha, in pesos, and where it came from.
type RateQuote struct {
	Fecha  string `json:"fecha"`
	Moneda string `json:"moneda"`
	Valor  string `json:"valor"`
	Origen string `json:"origen"`
}

// DailyReportResult is the answer of POST /reporte-diario.
type DailyReportResult struct {
	OK bool `json:"ok"`
	// XML is the signed report ("reporte").
	XML string `json:"xml,omitempty"`
	// Resumen is the technician's summary, in Spanish.
	Resumen string `json:"resumen,omitempty"`
	// Cotizaciones is the rate table ("cotizaciones").
	Cotizaciones []RateQuote `json:"cotizaciones,omitempty"`
}
