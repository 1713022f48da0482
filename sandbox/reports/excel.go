package reports

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Kinds of export cell.
const (
	kindText     = "texto"
	kindInt      = "entero"
	kindDate     = "fecha"
	kindDateTime = "fechaHora"
	kindAmount   = "importe"
)

// exportRow is one issued CFE with its parsed signed XML.
type exportRow struct {
	rec *data.CFERecord
	doc *cfe.CFE
}

// exportColumn is a column of the Excel export. value answers a string
// (text), an int64 (integer), a cfe.Date (date), a time.Time (date and
// time), a *decimal.Decimal (amount) or nil (empty cell).
type exportColumn struct {
	name, title, kind string
	value             func(x exportRow) any
}

func amount(d *decimal.Decimal) any {
	if d == nil {
		return nil
	}
	return d
}

func (x exportRow) receptor() *cfe.Receptor {
	if x.doc.Receptor == nil {
		return &cfe.Receptor{}
	}
	return x.doc.Receptor
}

func textOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// exportColumns are the columns the Excel export offers, in catalog order.
var exportColumns = []exportColumn{
	{"id", "Id", kindInt, func(x exportRow) any { return x.rec.ID }},
	{"fechaEmision", "Fecha de emisión", kindDate, func(x exportRow) any { return x.rec.FchEmis }},
	{"fechaFirma", "Fecha de firma", kindDateTime, func(x exportRow) any { return x.rec.TmstFirma }},
	{"tipoCfe", "Tipo", kindInt, func(x exportRow) any { return int64(x.rec.Type) }},
	{"tipoNombre", "Tipo de CFE", kindText, func(x exportRow) any { return x.rec.Type.Name() }},
	{"serie", "Serie", kindText, func(x exportRow) any { return x.rec.Serie }},
	{"numero", "Número", kindInt, func(x exportRow) any { return x.rec.Nro }},
	{"receptorTipoDocumento", "Tipo de documento del receptor", kindInt, func(x exportRow) any {
		if t := x.receptor().TipoDocRecep; t != 0 {
			return int64(t)
		}
		return nil
	}},
	{"receptorDocumento", "Documento del receptor", kindText, func(x exportRow) any {
		r := x.receptor()
		return textOrNil(r.DocRecep + r.DocRecepExt)
	}},
	{"receptorNombre", "Receptor", kindText, func(x exportRow) any { return textOrNil(x.receptor().RznSocRecep) }},
	{"moneda", "Moneda", kindText, func(x exportRow) any { return x.doc.Totales.Currency() }},
	{"tipoCambio", "Tipo de cambio", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.TpoCambio) }},
	{"montoNoGravado", "No gravado (exento)", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntNoGrv) }},
	{"montoExportacion", "Exportación y asimiladas", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntExpoyAsim) }},
	{"netoIvaTasaMinima", "Neto IVA tasa mínima", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntNetoIvaTasaMin) }},
	{"netoIvaTasaBasica", "Neto IVA tasa básica", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntNetoIVATasaBasica) }},
	{"netoIvaOtra", "Neto IVA otra tasa", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntNetoIVAOtra) }},
	{"ivaTasaMinima", "IVA tasa mínima", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntIVATasaMin) }},
	{"ivaTasaBasica", "IVA tasa básica", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntIVATasaBasica) }},
	{"ivaOtra", "IVA otra tasa", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntIVAOtra) }},
	{"total", "Total", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntTotal) }},
	{"montoPagar", "Monto a pagar", kindAmount, func(x exportRow) any { return amount(x.doc.Totales.MntPagar) }},
	{"estado", "Estado", kindText, func(x exportRow) any { return issuing.SummaryOf(x.rec).Estado }},
	{"anulado", "Anulado", kindText, func(x exportRow) any {
		if x.rec.CancelledBy != 0 {
			return "Sí"
		}
		return "No"
	}},
	{"codigoSeguridad", "Código de seguridad", kindText, func(x exportRow) any { return x.rec.CodSeguridad }},
	{"origen", "Origen", kindText, func(x exportRow) any { return x.rec.Origin }},
}

// defaultExportColumns are the columns of a user who saved no configuration.
var defaultExportColumns = []string{"fechaEmision", "tipoNombre", "serie", "numero", "receptorDocumento", "receptorNombre", "moneda", "total", "estado"}

func columnByName(name string) *exportColumn {
	for i := range exportColumns {
		if exportColumns[i].name == name {
			return &exportColumns[i]
		}
	}
	return nil
}

func columnCatalog() []ColumnInfo {
	out := make([]ColumnInfo, len(exportColumns))
	for i, c := range exportColumns {
		out[i] = ColumnInfo{Nombre: c.name, Titulo: c.title, Tipo: c.kind}
	}
	return out
}

// ExcelRequest is the body of POST /api/v1/cfeemitido/exportarExcel: buscar's
// filter fields, whose user (userId, as in getConfiguracionExportacionCfe)
// gives the columns and the filter fields the request leaves empty, and
// optionally the columns for this export only.
type ExcelRequest struct {
	issuing.CFEFilter
	UserID   int64    `json:"userId,omitempty"`
	Columnas []string `json:"columnas,omitempty"`
}

// errTooMany is the answer when a filter selects more CFEs than an export
// may hold.
func errTooMany(limit int) error {
	return web.Invalid(cfe.FieldError{Campo: "filtro", Mensaje: fmt.Sprintf(
		"selecciona más de %d CFE; acote las fechas o el tipo", limit)})
}

// selectRows reads the CFEs f selects, with their parsed XML, refusing more
// than the export limit (Config.MaxExportRows, else maxExportRows) before
// parsing any.
func (x *Exports) selectRows(f issuing.Filter) ([]exportRow, error) {
	limit := x.maxRows
	var recs []*data.CFERecord
	err := x.cfes.Select(f, func(c *data.CFERecord) error {
		if len(recs) == limit {
			return errTooMany(limit)
		}
		recs = append(recs, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows := make([]exportRow, len(recs))
	for i, rec := range recs {
		doc, err := cfe.ParseXML(rec.XML)
		if err != nil {
			return nil, fmt.Errorf("sandbox: parse stored CFE %d: %w", rec.ID, err)
		}
		rows[i] = exportRow{rec: rec, doc: doc}
	}
	return rows, nil
}

// mergeFilter fills the fields f leaves empty from the saved filter.
func mergeFilter(f, saved issuing.CFEFilter) issuing.CFEFilter {
	if f.IdEmpresa == 0 {
		f.IdEmpresa = saved.IdEmpresa
	}
	if f.TipoFiltro == 0 {
		f.TipoFiltro = saved.TipoFiltro
	}
	if f.FechaFirmaDesde == "" {
		f.FechaFirmaDesde = saved.FechaFirmaDesde
	}
	if f.FechaFirmaHasta == "" {
		f.FechaFirmaHasta = saved.FechaFirmaHasta
	}
	return f
}

// HandleExcel is POST /api/v1/cfeemitido/exportarExcel: an .xlsx with
// one sheet "CFE", a header row of column titles and one row per CFE.
func (x *Exports) HandleExcel(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalOf(r)
	var req ExcelRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	if req.UserID < 0 {
		web.WriteError(x.log, w, r, web.Invalid(cfe.FieldError{Campo: "userId", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	if err := web.Invalid(checkColumns("columnas", req.Columnas, false)...); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	cfg := ExportConfig{Columnas: defaultExportColumns}
	if p.Key == nil || req.UserID != 0 {
		user, err := x.configUser(p, req.UserID, req.UserID != 0)
		if err == nil {
			cfg, err = x.loadConfig(user)
		}
		if err != nil {
			web.WriteError(x.log, w, r, err)
			return
		}
	}
	cols := cfg.Columnas
	if len(req.Columnas) > 0 {
		cols = req.Columnas
	}
	saved := cfg.Filtros
	if p.Key != nil {
		// A key acts for its own company: the company a user saved in the
		// configuration (maybe another of theirs) does not apply.
		saved.IdEmpresa = 0
	}
	f, err := mergeFilter(req.CFEFilter, saved).Resolve(p)
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	rows, err := x.selectRows(f)
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	body, err := workbook(cols, rows)
	if err != nil {
		web.WriteError(x.log, w, r, &cfe.Error{Code: cfe.EINTERNAL, Message: "no se pudo generar el archivo Excel", Err: err})
		return
	}
	w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="cfe-%d.xlsx"`, f.Company))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a failure means the client went away
}

// Number formats of the typed cells.
const (
	fmtDate     = "yyyy-mm-dd"
	fmtDateTime = "yyyy-mm-dd hh:mm:ss"
	fmtAmount   = "#,##0.00"
	fmtRate     = "#,##0.000" // TpoCambio has 3 decimals
	sheetName   = "CFE"
)

// rateStyle is the style of the exchange-rate column, an amount with
// TpoCambio's three decimals.
const rateStyle = "tipoCambio"

// workbook writes the .xlsx of rows with columns cols (names already
// checked). Dates are date cells (serial numbers with a date format),
// signing times are in Montevideo's wall time, and amounts are numeric
// cells holding the decimal's exact digits with a number format.
func workbook(cols []string, rows []exportRow) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close() //nolint:errcheck // nothing was opened from disk
	if err := f.SetSheetName("Sheet1", sheetName); err != nil {
		return nil, err
	}
	styles := map[string]int{}
	for kind, numFmt := range map[string]string{kindDate: fmtDate, kindDateTime: fmtDateTime, kindAmount: fmtAmount, rateStyle: fmtRate} {
		id, err := f.NewStyle(&excelize.Style{CustomNumFmt: &numFmt})
		if err != nil {
			return nil, err
		}
		styles[kind] = id
	}
	header, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return nil, err
	}
	for i, name := range cols {
		col := columnByName(name)
		cell, err := excelize.CoordinatesToCellName(i+1, 1)
		if err != nil {
			return nil, err
		}
		if err := f.SetCellStr(sheetName, cell, col.title); err != nil {
			return nil, err
		}
		if err := f.SetCellStyle(sheetName, cell, cell, header); err != nil {
			return nil, err
		}
		for j, row := range rows {
			cell, err := excelize.CoordinatesToCellName(i+1, j+2)
			if err != nil {
				return nil, err
			}
			style := styles[col.kind]
			if name == "tipoCambio" {
				style = styles[rateStyle]
			}
			if err := setCell(f, cell, col.value(row), style); err != nil {
				return nil, fmt.Errorf("column %s, CFE %d: %w", name, row.rec.ID, err)
			}
		}
	}
	if err := f.SetPanes(sheetName, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// setCell writes one typed value. The amount's decimal text goes into the
// cell as is (a numeric cell): no float64 stands between the decimal and
// the file.
func setCell(f *excelize.File, cell string, v any, style int) error {
	var err error
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		err = f.SetCellStr(sheetName, cell, v)
	case int64:
		err = f.SetCellInt(sheetName, cell, v)
	case cfe.Date:
		err = f.SetCellValue(sheetName, cell, time.Date(v.Year, v.Month, v.Day, 0, 0, 0, 0, time.UTC))
	case time.Time:
		wall := v.In(cfe.Montevideo)
		err = f.SetCellValue(sheetName, cell, time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, time.UTC))
	case *decimal.Decimal:
		err = f.SetCellDefault(sheetName, cell, v.String())
	default:
		return fmt.Errorf("unexpected cell value %T", v)
	}
	if err != nil || style == 0 {
		return err
	}
	return f.SetCellStyle(sheetName, cell, cell, style)
}
