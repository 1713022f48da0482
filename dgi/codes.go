package dgi

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/beevik/etree"
)

// Reason is a code of DGI's tables of rejections and observations (RESP §4)
// with its Glosa, the exact text DGI's XSD enumerates for it (DGITypes.xsd:
// RechazoSobreType, RechazoCFE_DGIType, ObsCFCType, RechazoRepType).
type Reason struct {
	Code  string
	Glosa string
}

// EnvelopeReasons are DGI's reasons for rejecting an envelope (RESP 4.2):
// S01–S08; S20 is a receiver's, not DGI's.
var EnvelopeReasons = map[string]string{
	"S01": "Formato del archivo no es el indicado",
	"S02": "No coincide RUC de Sobre, Certificado, envío o CFE",
	"S03": "Certificado electrónico no es válido",
	"S04": "No cumple validaciones según Formato de sobre",
	"S05": "No coinciden cantidad CFE de carátula y contenido",
	"S06": "No coinciden certificado de sobre y comprobantes",
	"S07": "Sobre enviado supera el tamaño máximo admitido",
	"S08": "Sobre enviado ya existe en los registros de DGI",
}

// CFERejections are DGI's reasons for rejecting a CFE (RESP 4.3: E01–E15),
// with the Glosa of DGITypes.xsd (E05's drops the "(*)" of RESP's table;
// E13's keeps the XSD's double spaces).
var CFERejections = map[string]string{
	"E01": "Tipo y Nº de CFE ya fue reportado como anulado",
	"E02": "Tipo y Nº de CFE ya existe en los registros",
	"E03": "Tipo y Nº de CFE no se corresponden con el CAE",
	"E04": "Firma electrónica no es válida",
	"E05": "No cumple validaciones de Formato comprobantes",
	"E06": "Importe informado en el CFE excede montos habituales",
	"E07": "Fecha Firma de CFE no se corresponde con fecha CAE",
	"E08": "No coincide RUC de CFE y Complemento Fiscal",
	"E09": "RUC emisor y/o tipo de CFE no se corresponden con el CAE",
	"E10": "Tipo de cambio no válido",
	"E11": "Tipo de CAE especial del CFE no se corresponde con el CAE",
	"E12": "Información en Zona de Referencia no existe en los registros",
	"E13": "Tipo de CAE  del CFE  no se corresponde con el CAE utilizado",
	"E14": "Irregularidades detectadas",
	"E15": "Deudor contumaz sin informar situación",
}

// CFCObservations are DGI's observations of a contingency receipt (RESP
// 4.4), with the Glosa of DGITypes.xsd's ObsCFCType. The XSD's list of
// glosas is not in the order of its codes and names C03 "Constancia no
// autorizada según registros" and C09 "Nº de CFC no fue autorizado según
// registros"; each code here takes the XSD text that says what RESP's
// table says.
var CFCObservations = map[string]string{
	"C03": "Constancia no autorizada según registros",
	"C04": "Firma electrónica no es válida",
	"C05": "No cumple validaciones de Formato comprobantes",
	"C06": "Importe informado en el CFE excede montos habituales",
	"C08": "No coincide RUC de CFE y Complemento Fiscal",
	"C09": "Nº de CFC no fue autorizado según registros",
	"C10": "Tipo de cambio no válido",
	"C11": "Tipo de constancia especial del CFC no se corresponde con el constancia",
	"C12": "Información en Zona de Referencia no existe en nuestros registros",
	"C13": "Tipo de constancia del CFC no se corresponde con la constancia",
	"C14": "Irregularidades detectadas",
	"C15": "Deudor contumaz sin informar situación",
}

// ReportRejections are DGI's reasons for rejecting a daily report (RESP
// 4.1: R01–R06).
var ReportRejections = map[string]string{
	"R01": "Formato del archivo no es el indicado",
	"R02": "No coincide RUC en Reporte, Certificado o envío",
	"R03": "Firma o Certificado electrónicos no son válidos",
	"R04": "No cumple validaciones según Formato de Reporte",
	"R05": "La secuencia indicada en el reporte no es correcta",
	"R06": "Fecha recepción no puede ser menor a fecha resumen",
}

// Motivo is one reason of an ACK: a code, DGI's Glosa and an optional
// Detalle.
type Motivo struct {
	Codigo  string
	Glosa   string
	Detalle string
}

// String writes the reason for a person: "E04 Firma electrónica no es
// válida: detalle".
func (m Motivo) String() string {
	s := m.Codigo + " " + m.Glosa
	if m.Detalle != "" {
		s += ": " + m.Detalle
	}
	return s
}

// ServiceError is an exception of DGI's web services
// (ExcepcionesServicios.xsd: Respuestas/Respuesta{codigo, descripcion,
// detalle}), e.g. 105 "El sobre con el Id Receptor especificado aún no ha
// sido procesado".
type ServiceError struct {
	Codigo      int
	Descripcion string
	Detalle     string
}

func (e *ServiceError) Error() string {
	s := fmt.Sprintf("DGI respondió %d: %s", e.Codigo, e.Descripcion)
	if e.Detalle != "" {
		s += " (" + e.Detalle + ")"
	}
	return s
}

// Service exception codes this package and the emulator act upon
// (ExcepcionesServicios.xsd).
const (
	ExcMalformed       = 1   // El XML token recibido no está bien formado
	ExcTokenOtherID    = 3   // El Token corresponde a otro IdReceptor
	ExcTokenOtherRUC   = 4   // El Token corresponde a otro RUC
	ExcCertificate     = 5   // Error al validar el Certificado
	ExcNotProcessed    = 13  // Su envío aún no ha sido procesado
	ExcNotAvailable    = 99  // Información aún no disponible
	ExcException       = 100 // El método invocado ha detectado una excepción en su ejecución.
	ExcSecurity        = 101 // Error de Seguridad en la invocación
	ExcNoSuchEnvelope  = 104 // ... o no existe un sobre con dicho Id Receptor para el RUC especificado
	ExcEnvelopePending = 105 // El sobre con el Id Receptor especificado aún no ha sido procesado. Vuelva a consultar luego
)

// ServiceErrorTexts are the descriptions ExcepcionesServicios.xsd gives.
var ServiceErrorTexts = map[int]string{
	ExcMalformed:       "El XML token recibido no está bien formado",
	2:                  "El IdReceptor debe ser un número positivo",
	ExcTokenOtherID:    "El Token corresponde a otro IdReceptor",
	ExcTokenOtherRUC:   "El Token corresponde a otro RUC",
	ExcCertificate:     "Error al validar el Certificado",
	ExcNotProcessed:    "Su envío aún no ha sido procesado",
	ExcNotAvailable:    "Información aún no disponible",
	ExcException:       "El método invocado ha detectado una excepción en su ejecución.",
	ExcSecurity:        "Error de Seguridad en la invocación",
	ExcNoSuchEnvelope:  "El método invocado ha detectado una excepción en su ejecución o no existe un sobre con dicho Id Receptor para el RUC especificado",
	ExcEnvelopePending: "El sobre con el Id Receptor especificado aún no ha sido procesado. Vuelva a consultar luego",
}

// ServiceErrorXML writes DGI's exception document (ExcepcionesServicios.xsd,
// no namespace).
func ServiceErrorXML(code int, detalle string) []byte {
	var b bytes.Buffer
	b.WriteString(`<Respuestas><Respuesta><codigo>` + strconv.Itoa(code) + `</codigo><descripcion>`)
	b.WriteString(escapeString(ServiceErrorTexts[code]))
	b.WriteString(`</descripcion><detalle>`)
	b.WriteString(escapeString(detalle))
	b.WriteString(`</detalle></Respuesta></Respuestas>`)
	return b.Bytes()
}

// readServiceError reads a Respuestas (or Respuesta) element, nil when el is
// not one.
func readServiceError(el *etree.Element) *ServiceError {
	if el.Space != "" && el.NamespaceURI() != "" {
		return nil
	}
	switch el.Tag {
	case "Respuestas":
		r := el.SelectElement("Respuesta")
		if r == nil {
			return nil
		}
		el = r
	case "Respuesta":
	default:
		return nil
	}
	e := &ServiceError{}
	c := el.SelectElement("codigo")
	if c == nil {
		return nil
	}
	n, err := strconv.Atoi(trimXMLSpace(text(c)))
	if err != nil {
		return nil
	}
	e.Codigo = n
	if d := el.SelectElement("descripcion"); d != nil {
		e.Descripcion = trimXMLSpace(text(d))
	}
	if d := el.SelectElement("detalle"); d != nil {
		e.Detalle = trimXMLSpace(text(d))
	}
	return e
}
