package sandbox_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/reports"
)

// exportData is a sandbox whose company Alfa issued an e-Ticket at two IVA
// rates (annulled by a credit note), an e-Factura to DGI with an exempt
// line, and whose company Beta issued an e-Ticket.
type exportData struct {
	*env
	ticket, factura, credit, beta issuing.ComprobanteResponse
	ana, beto, carla              []string // JWT headers
	anaID, carlaID                int64
	alfaCo, betaCo                int64 // company ids
}

// facturaRequest is an e-Factura to DGI with prices without IVA: 3 × 100.00
// at the basic rate and 1 × 50.00 exempt (IndFact 1).
func facturaRequest(uuid string) map[string]any {
	return map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc":    map[string]any{"tipoCfe": 111, "formaPago": 2},
		"receptor": dgiReceptor,
		"detalles": []map[string]any{
			{"indicadorFacturacion": 3, "nombreItem": "Servicio", "cantidad": 3, "precioUnitario": "100.00"},
			{"indicadorFacturacion": 1, "nombreItem": "Libro", "cantidad": 1, "precioUnitario": "50.00"},
		},
	}}
}

func startExportData(t *testing.T, opts ...func(*sandbox.Config)) *exportData {
	e := start(t, opts...)
	d := &exportData{env: e}
	d.ticket = e.emit(ticketRequest("exp-t1"))
	d.factura = e.emit(facturaRequest("exp-f1"))
	d.credit, _ = e.annulOK(d.ticket.ID, today)
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("exp-b1"), "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &d.beta)
	d.ana = bearer(e.login("ana", anaPassword).Token)
	d.beto = bearer(e.login("beto", betoPassword).Token)
	d.carla = bearer(e.login("carla", carlaPassword).Token)
	d.anaID = e.userID(d.ana)
	d.carlaID = e.userID(d.carla)
	d.alfaCo = e.issued(d.ticket.ID).IdEmpresa
	var det issuing.IssuedDetail
	e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(d.beta.ID, 10), nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &det)
	d.betaCo = det.IdEmpresa
	return d
}

// userID reads the caller's own id from their default export configuration.
func (e *env) userID(auth []string) int64 {
	e.t.Helper()
	var cfg reports.ExportConfig
	e.do("GET", "/api/v1/cfeemitido/getConfiguracionExportacionCfe", nil, auth...).expect(e.t, http.StatusOK).decode(e.t, &cfg)
	return cfg.UserID
}

// expectError checks the common error shape of a refusal with status want
// and, when field is not empty, that details name it.
func (r *resp) expectError(t *testing.T, want int, field string) errBody {
	t.Helper()
	r.expect(t, want)
	b := r.errBody(t)
	if b.Error == "" || b.Code == "" {
		t.Errorf("error body %s", r.body)
	}
	if field != "" {
		found := false
		for _, d := range b.Details {
			found = found || d.Campo == field
		}
		if !found {
			t.Errorf("details %+v do not name %q", b.Details, field)
		}
	}
	return b
}

func TestExportConfig(t *testing.T) {
	t.Parallel()
	d := startExportData(t)
	e := d.env
	const path = "/api/v1/cfeemitido/getConfiguracionExportacionCfe"
	const save = "/api/v1/cfeemitido/guardarConfiguracionExportacionCfe"
	key := []string{"X-API-Key", keyAlfa}
	uid := strconv.FormatInt(d.anaID, 10)

	t.Run("a user without a saved configuration gets the default", func(t *testing.T) {
		var cfg reports.ExportConfig
		e.do("GET", path+"?userId="+uid, nil, d.ana...).expect(t, http.StatusOK).decode(t, &cfg)
		if !cfg.Predefinida || cfg.UserID != d.anaID || len(cfg.Columnas) == 0 || len(cfg.Disponibles) < len(cfg.Columnas) || cfg.Actualizada != nil {
			t.Errorf("default %+v", cfg)
		}
	})
	t.Run("saved, read back by the user and by the company's key", func(t *testing.T) {
		body := reports.SaveExportConfigRequest{Columnas: []string{"numero", "fechaEmision", "total"},
			Filtros: issuing.CFEFilter{TipoFiltro: 101, FechaFirmaDesde: today}}
		var saved, mine, viaKey reports.ExportConfig
		e.do("POST", save, body, d.ana...).expect(t, http.StatusOK).decode(t, &saved)
		e.do("GET", path, nil, d.ana...).expect(t, http.StatusOK).decode(t, &mine)
		e.do("GET", path+"?userId="+uid, nil, key...).expect(t, http.StatusOK).decode(t, &viaKey)
		for _, c := range []reports.ExportConfig{saved, mine, viaKey} {
			if c.Predefinida || c.Actualizada == nil || strings.Join(c.Columnas, ",") != "numero,fechaEmision,total" ||
				c.Filtros != body.Filtros || c.UserID != d.anaID {
				t.Errorf("configuration %+v", c)
			}
		}
	})
	t.Run("another user's configuration is 403", func(t *testing.T) {
		e.do("GET", path+"?userId="+uid, nil, d.carla...).expectError(t, http.StatusForbidden, "")
		e.do("POST", save, reports.SaveExportConfigRequest{UserID: d.anaID, Columnas: []string{"id"}}, d.carla...).expectError(t, http.StatusForbidden, "")
		// A key reaches only its company's users: Carla is Beta's, 999 nobody.
		e.do("GET", path+"?userId="+strconv.FormatInt(d.carlaID, 10), nil, key...).expectError(t, http.StatusForbidden, "")
		e.do("GET", path+"?userId=999", nil, key...).expectError(t, http.StatusForbidden, "")
		e.do("GET", path+"?userId="+uid, nil, "X-API-Key", keyBeta).expectError(t, http.StatusForbidden, "")
	})
	t.Run("bad input is 400 and changes nothing", func(t *testing.T) {
		for name, c := range map[string]struct {
			method, path string
			body         any
			auth         []string
			field        string
		}{
			"userId not a number": {"GET", path + "?userId=x", nil, d.ana, "userId"},
			"a key needs userId":  {"GET", path, nil, key, "userId"},
			"unknown column":      {"POST", save, reports.SaveExportConfigRequest{Columnas: []string{"total", "precio"}}, d.ana, "columnas[1]"},
			"repeated column":     {"POST", save, reports.SaveExportConfigRequest{Columnas: []string{"total", "total"}}, d.ana, "columnas[1]"},
			"no column":           {"POST", save, reports.SaveExportConfigRequest{}, d.ana, "columnas"},
			"bad filter type":     {"POST", save, reports.SaveExportConfigRequest{Columnas: []string{"id"}, Filtros: issuing.CFEFilter{TipoFiltro: 999}}, d.ana, "filtros.tipoFiltro"},
			"bad filter date":     {"POST", save, reports.SaveExportConfigRequest{Columnas: []string{"id"}, Filtros: issuing.CFEFilter{FechaFirmaDesde: "2026-13-01"}}, d.ana, "filtros.fechaFirmaDesde"},
			"not JSON":            {"POST", save, "{", d.ana, ""},
		} {
			t.Run(name, func(t *testing.T) {
				e.do(c.method, c.path, c.body, c.auth...).expectError(t, http.StatusBadRequest, c.field)
			})
		}
		var cfg reports.ExportConfig
		e.do("GET", path, nil, d.ana...).expect(t, http.StatusOK).decode(t, &cfg)
		if strings.Join(cfg.Columnas, ",") != "numero,fechaEmision,total" {
			t.Errorf("configuration changed by refused requests: %v", cfg.Columnas)
		}
	})
	t.Run("a filter on another company cannot be saved", func(t *testing.T) {
		e.do("POST", save, reports.SaveExportConfigRequest{Columnas: []string{"id"}, Filtros: issuing.CFEFilter{IdEmpresa: d.betaCo}}, d.ana...).
			expectError(t, http.StatusForbidden, "")
	})
	t.Run("no credentials is 401", func(t *testing.T) {
		e.do("GET", path, nil).expectError(t, http.StatusUnauthorized, "")
	})
}

// xlsxCell is a cell as openpyxl reads it.
type xlsxCell struct {
	Type  string `json:"type"` // text, number, date, empty
	Value string `json:"value"`
	Fmt   string `json:"fmt"`
}

// readXLSX opens an .xlsx with openpyxl (an independent reader) and returns
// the first sheet's title and cells, row by row.
func readXLSX(t *testing.T, body []byte) (string, [][]xlsxCell) {
	t.Helper()
	py := "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import openpyxl").CombinedOutput(); err != nil {
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatalf("python3 with openpyxl is required (CFE_STRICT_TOOLS=1): %v %s", err, out)
		}
		t.Skipf("python3 with openpyxl is not installed (%v); set CFE_STRICT_TOOLS=1 to make this a failure", err)
	}
	f := filepath.Join(t.TempDir(), "export.xlsx")
	if err := os.WriteFile(f, body, 0o600); err != nil {
		t.Fatal(err)
	}
	const script = `
import datetime, json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
ws = wb.worksheets[0]
rows = []
for row in ws.iter_rows():
    out = []
    for c in row:
        v = c.value
        if v is None:
            out.append({"type": "empty", "value": "", "fmt": c.number_format})
        elif isinstance(v, datetime.datetime):
            out.append({"type": "date", "value": v.isoformat(), "fmt": c.number_format})
        elif isinstance(v, bool):
            out.append({"type": "bool", "value": str(v), "fmt": c.number_format})
        elif isinstance(v, (int, float)):
            out.append({"type": "number", "value": repr(v), "fmt": c.number_format})
        else:
            out.append({"type": "text", "value": str(v), "fmt": c.number_format})
    rows.append(out)
print(json.dumps({"title": ws.title, "rows": rows}))
`
	out, err := exec.Command(py, "-c", script, f).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("openpyxl: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got struct {
		Title string       `json:"title"`
		Rows  [][]xlsxCell `json:"rows"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got.Title, got.Rows
}

// issued reads GET /api/v1/cfeemitido/{id}.
func (e *env) issued(id int64) issuing.IssuedDetail {
	e.t.Helper()
	var det issuing.IssuedDetail
	e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(id, 10), nil, "X-API-Key", keyAlfa).expect(e.t, http.StatusOK).decode(e.t, &det)
	return det
}

// xmlValues reads the text of every element of a signed CFE by local name
// (the first occurrence), independently of the cfe package.
func xmlValues(t *testing.T, doc string) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	out := map[string]string{}
	var stack []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tk.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				if _, seen := out[stack[len(stack)-1]]; !seen && strings.TrimSpace(string(tk)) != "" {
					out[stack[len(stack)-1]] = string(tk)
				}
			}
		}
	}
}

func decEq(t *testing.T, what, got, want string) {
	t.Helper()
	g, err1 := decimal.NewFromString(got)
	w, err2 := decimal.NewFromString(want)
	if err1 != nil || err2 != nil || !g.Equal(w) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

func TestExportExcel(t *testing.T) {
	t.Parallel()
	d := startExportData(t)
	e := d.env
	const path = "/api/v1/cfeemitido/exportarExcel"
	cols := []string{"id", "fechaEmision", "fechaFirma", "tipoCfe", "tipoNombre", "serie", "numero", "receptorDocumento",
		"moneda", "netoIvaTasaBasica", "ivaTasaBasica", "montoExportacion", "montoNoGravado", "total", "anulado"}
	e.do("POST", "/api/v1/cfeemitido/guardarConfiguracionExportacionCfe",
		reports.SaveExportConfigRequest{Columnas: cols, Filtros: issuing.CFEFilter{FechaFirmaDesde: today}}, d.ana...).expect(t, http.StatusOK)

	check := func(t *testing.T, r *resp, cols []string, ids []int64) {
		t.Helper()
		r.expect(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" {
			t.Errorf("Content-Type %q", ct)
		}
		title, rows := readXLSX(t, r.body)
		if title != "CFE" || len(rows) != len(ids)+1 {
			t.Fatalf("sheet %q with %d rows, want %d", title, len(rows), len(ids)+1)
		}
		var catalog reports.ExportConfig
		e.do("GET", "/api/v1/cfeemitido/getConfiguracionExportacionCfe", nil, d.ana...).expect(t, http.StatusOK).decode(t, &catalog)
		titles := map[string]string{}
		for _, c := range catalog.Disponibles {
			titles[c.Nombre] = c.Titulo
		}
		for i, c := range cols {
			if rows[0][i].Type != "text" || rows[0][i].Value != titles[c] {
				t.Errorf("header %d: %+v, want %q", i, rows[0][i], titles[c])
			}
		}
		for j, id := range ids {
			det := e.issued(id)
			x := xmlValues(t, det.XmlFirmado)
			row := rows[j+1]
			for i, c := range cols {
				cell := row[i]
				num := func(want string) {
					t.Helper()
					if want == "" {
						if cell.Type != "empty" {
							t.Errorf("CFE %d %s: %+v, want an empty cell", id, c, cell)
						}
						return
					}
					if cell.Type != "number" {
						t.Errorf("CFE %d %s: %+v is not a number", id, c, cell)
						return
					}
					decEq(t, "CFE "+strconv.FormatInt(id, 10)+" "+c, cell.Value, want)
				}
				text := func(want string) {
					t.Helper()
					if cell.Type != "text" || cell.Value != want {
						t.Errorf("CFE %d %s: %+v, want text %q", id, c, cell, want)
					}
				}
				switch c {
				case "id":
					num(strconv.FormatInt(id, 10))
				case "tipoCfe":
					num(x["TipoCFE"])
				case "numero":
					num(x["Nro"])
				case "serie":
					text(x["Serie"])
				case "tipoNombre":
					text(map[int]string{101: "e-Ticket", 102: "Nota de Crédito de e-Ticket", 111: "e-Factura"}[det.TipoCfe])
				case "moneda":
					text(x["TpoMoneda"])
				case "receptorDocumento":
					if x["DocRecep"] == "" {
						num("")
					} else {
						text(x["DocRecep"])
					}
				case "anulado":
					text(map[bool]string{true: "Sí", false: "No"}[id == d.ticket.ID])
				case "fechaEmision":
					if cell.Type != "date" || cell.Value != x["FchEmis"]+"T00:00:00" || cell.Fmt != "yyyy-mm-dd" {
						t.Errorf("CFE %d fechaEmision %+v, want the date %s", id, cell, x["FchEmis"])
					}
				case "fechaFirma":
					// TmstFirma is written with -03:00: its wall time is Montevideo's.
					want := strings.TrimSuffix(x["TmstFirma"], "-03:00")
					if cell.Type != "date" || cell.Value != want {
						t.Errorf("CFE %d fechaFirma %+v, want %s", id, cell, want)
					}
				case "netoIvaTasaBasica":
					num(x["MntNetoIVATasaBasica"])
				case "ivaTasaBasica":
					num(x["MntIVATasaBasica"])
				case "montoExportacion":
					num(x["MntExpoyAsim"])
				case "montoNoGravado":
					num(x["MntNoGrv"])
				case "total":
					num(x["MntTotal"])
					if cell.Fmt != "#,##0.00" {
						t.Errorf("total's number format %q", cell.Fmt)
					}
				default:
					t.Fatalf("column %s not checked", c)
				}
			}
		}
	}

	t.Run("the user's saved columns and filter, with a JWT", func(t *testing.T) {
		check(t, e.do("POST", path, map[string]any{}, d.ana...), cols, []int64{d.ticket.ID, d.factura.ID, d.credit.ID})
	})
	t.Run("the request's filter and columns win, with an API key", func(t *testing.T) {
		few := []string{"numero", "tipoNombre", "total"}
		check(t, e.do("POST", path, map[string]any{"tipoFiltro": 111, "columnas": few}, "X-API-Key", keyAlfa), few, []int64{d.factura.ID})
	})
	t.Run("an API key with a user's configuration", func(t *testing.T) {
		check(t, e.do("POST", path, map[string]any{"userId": d.anaID, "tipoFiltro": 102}, "X-API-Key", keyAlfa), cols, []int64{d.credit.ID})
	})
	t.Run("another company is 403", func(t *testing.T) {
		e.do("POST", path, map[string]any{"idEmpresa": d.betaCo}, d.ana...).expectError(t, http.StatusForbidden, "")
		e.do("POST", path, map[string]any{"userId": d.anaID}, "X-API-Key", keyBeta).expectError(t, http.StatusForbidden, "")
		e.do("POST", path, map[string]any{"userId": d.anaID}, d.carla...).expectError(t, http.StatusForbidden, "")
	})
	t.Run("bad input is 400", func(t *testing.T) {
		e.do("POST", path, map[string]any{"columnas": []string{"nada"}}, d.ana...).expectError(t, http.StatusBadRequest, "columnas[0]")
		e.do("POST", path, map[string]any{"tipoFiltro": 7}, d.ana...).expectError(t, http.StatusBadRequest, "tipoFiltro")
		e.do("POST", path, map[string]any{"fechaFirmaDesde": "ayer"}, "X-API-Key", keyAlfa).expectError(t, http.StatusBadRequest, "fechaFirmaDesde")
		e.do("POST", path, "[]", d.ana...).expectError(t, http.StatusBadRequest, "")
		// Beto has two companies and saved no filter: the company must be named.
		e.do("POST", path, map[string]any{}, d.beto...).expectError(t, http.StatusBadRequest, "idEmpresa")
	})
	t.Run("a key with the configuration of a user who saved another of their companies", func(t *testing.T) {
		// beto acts for Alfa and Beta and saved Beta as his filter: Alfa's key
		// exports Alfa's CFEs with his columns, not a 403 for Beta.
		e.do("POST", "/api/v1/cfeemitido/guardarConfiguracionExportacionCfe",
			reports.SaveExportConfigRequest{Columnas: cols, Filtros: issuing.CFEFilter{IdEmpresa: d.betaCo}}, d.beto...).expect(t, http.StatusOK)
		check(t, e.do("POST", path, map[string]any{"userId": e.userID(d.beto), "tipoFiltro": 111}, "X-API-Key", keyAlfa), cols, []int64{d.factura.ID})
	})
}

func TestAccountingExport(t *testing.T) {
	t.Parallel()
	d := startExportData(t)
	e := d.env
	const path = "/api/v1/ExportacionContable/exportarSistemaContable"

	rowsOf := func(t *testing.T, r *resp) (map[string]int, [][]string) {
		t.Helper()
		r.expect(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		recs, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
		if err != nil || len(recs) == 0 {
			t.Fatalf("CSV %v: %s", err, r.body)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		return col, recs[1:]
	}

	t.Run("the rows of each CFE add up to its totals, with a JWT", func(t *testing.T) {
		col, rows := rowsOf(t, e.do("POST", path, issuing.CFEFilter{}, d.ana...))
		byCFE := map[string][][]string{}
		for _, r := range rows {
			byCFE[r[col["idCfe"]]] = append(byCFE[r[col["idCfe"]]], r)
		}
		if len(byCFE) != 3 {
			t.Fatalf("rows of %d CFEs, want Alfa's 3: %v", len(byCFE), rows)
		}
		for _, id := range []int64{d.ticket.ID, d.factura.ID, d.credit.ID} {
			det := e.issued(id)
			x := xmlValues(t, det.XmlFirmado)
			sign := decimal.NewFromInt(1)
			if det.TipoCfe == 102 {
				sign = decimal.NewFromInt(-1)
			}
			sums := map[string]decimal.Decimal{}
			rates := map[string]string{}
			for _, r := range byCFE[strconv.FormatInt(id, 10)] {
				if r[col["fecha"]] != x["FchEmis"] || r[col["tipoCfe"]] != x["TipoCFE"] || r[col["serie"]] != x["Serie"] ||
					r[col["numero"]] != x["Nro"] || r[col["moneda"]] != x["TpoMoneda"] || r[col["documentoReceptor"]] != x["DocRecep"] {
					t.Errorf("CFE %d row %v does not identify it (%v)", id, r, x)
				}
				rowTotal := decimal.Zero
				for _, c := range []string{"netoGravado", "iva", "exportacion", "noGravado", "otros", "total"} {
					v, err := decimal.NewFromString(r[col[c]])
					if err != nil {
						t.Fatalf("%s %q: %v", c, r[col[c]], err)
					}
					if !strings.Contains(r[col[c]], ".") {
						t.Errorf("%s %q without decimals", c, r[col[c]])
					}
					sums[c+"/"+r[col["tasaIva"]]] = sums[c+"/"+r[col["tasaIva"]]].Add(v)
					sums[c] = sums[c].Add(v)
					if c != "total" {
						rowTotal = rowTotal.Add(v)
					}
				}
				rates[r[col["tasaIva"]]] = r[col["porcentajeIva"]]
				if total, _ := decimal.NewFromString(r[col["total"]]); !total.Equal(rowTotal) {
					t.Errorf("CFE %d row %v: total is not the row's sum %s", id, r, rowTotal)
				}
				if want := map[bool]string{true: "S", false: "N"}[id == d.ticket.ID]; r[col["anulado"]] != want {
					t.Errorf("CFE %d anulado %q, want %q", id, r[col["anulado"]], want)
				}
			}
			want := func(what, elem string) {
				t.Helper()
				v := x[elem]
				if v == "" {
					v = "0"
				}
				w := decimal.RequireFromString(v).Mul(sign)
				if got := sums[what]; !got.Equal(w) {
					t.Errorf("CFE %d: %s adds up to %s, want %s (%s × %s)", id, what, got, w, elem, sign)
				}
			}
			want("total", "MntTotal")
			want("netoGravado/basica", "MntNetoIVATasaBasica")
			want("iva/basica", "MntIVATasaBasica")
			want("netoGravado/minima", "MntNetoIvaTasaMin")
			want("iva/minima", "MntIVATasaMin")
			want("exportacion", "MntExpoyAsim")
			want("noGravado", "MntNoGrv")
			if x["IVATasaBasica"] != "" {
				decEq(t, "porcentajeIva basica", rates["basica"], x["IVATasaBasica"])
			}
		}
	})
	t.Run("filtered, with an API key", func(t *testing.T) {
		col, rows := rowsOf(t, e.do("POST", path, issuing.CFEFilter{TipoFiltro: 111}, "X-API-Key", keyAlfa))
		if len(rows) == 0 {
			t.Fatal("no rows")
		}
		for _, r := range rows {
			if r[col["idCfe"]] != strconv.FormatInt(d.factura.ID, 10) || r[col["tipoDocReceptor"]] != "2" {
				t.Errorf("row %v", r)
			}
		}
	})
	t.Run("another company is 403", func(t *testing.T) {
		e.do("POST", path, issuing.CFEFilter{IdEmpresa: d.alfaCo}, "X-API-Key", keyBeta).expectError(t, http.StatusForbidden, "")
		e.do("POST", path, issuing.CFEFilter{IdEmpresa: d.alfaCo}, d.carla...).expectError(t, http.StatusForbidden, "")
	})
	t.Run("bad input is 400", func(t *testing.T) {
		e.do("POST", path, issuing.CFEFilter{TipoFiltro: 5}, d.ana...).expectError(t, http.StatusBadRequest, "tipoFiltro")
		e.do("POST", path, issuing.CFEFilter{FechaFirmaDesde: "2026-03-05", FechaFirmaHasta: "2026-03-01"}, d.ana...).
			expectError(t, http.StatusBadRequest, "fechaFirmaHasta")
		e.do("POST", path, "no", d.ana...).expectError(t, http.StatusBadRequest, "")
		e.do("POST", path, nil, d.ana...).expectError(t, http.StatusBadRequest, "")
	})
}

func TestExport_Limit(t *testing.T) {
	t.Parallel()
	d := startExportData(t, func(c *sandbox.Config) { c.MaxExportRows = 2 })
	e := d.env
	for _, path := range []string{"/api/v1/cfeemitido/exportarExcel", "/api/v1/ExportacionContable/exportarSistemaContable"} {
		t.Run(path, func(t *testing.T) {
			// Alfa has 3 CFEs, one more than the limit; its one e-Ticket passes.
			b := e.do("POST", path, issuing.CFEFilter{}, "X-API-Key", keyAlfa).expectError(t, http.StatusBadRequest, "filtro")
			if !strings.Contains(b.Details[0].Mensaje, "más de 2 CFE") {
				t.Errorf("message %q", b.Details[0].Mensaje)
			}
			e.do("POST", path, issuing.CFEFilter{TipoFiltro: 101}, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		})
	}
}
