package cfe

import (
	"strings"
	"testing"
)

func TestDecodeRequest_TextMustBeUTF8AsReceived(t *testing.T) {
	t.Parallel()
	refused := []struct {
		name, body, campo string
	}{
		{"Latin-1 bytes in an item name", "{\"cfe\":{\"idDoc\":{\"tipoCfe\":101},\"detalles\":[{\"nombreItem\":\"Caf\xe9\",\"cantidad\":1,\"precioUnitario\":1}]}}",
			"cfe.detalles[0].nombreItem"},
		{"bytes FF FE in the adenda", "{\"adenda\":\"\xff\xfe\",\"cfe\":{\"idDoc\":{\"tipoCfe\":101}}}", "adenda"},
		{"a lone high surrogate", `{"cfe":{"idDoc":{"tipoCfe":101},"receptor":{"razonSocial":"A\ud800B"}}}`, "cfe.receptor.razonSocial"},
		{"a lone low surrogate", `{"cfe":{"idDoc":{"tipoCfe":101},"detalles":[{},{"nombreItem":"\uDC00"}]}}`, "cfe.detalles[1].nombreItem"},
		{"a high surrogate before a non-surrogate escape", `{"uuid":"\ud83d\u0041","cfe":{}}`, "uuid"},
		{"a high surrogate at the end", `{"cfe":{"emisor":{"ciudad":"x\ud83d"}}}`, "cfe.emisor.ciudad"},
		{"a field name that is not UTF-8", "{\"cfe\":{\"ca\xf1o\":1}}", "cfe.ca\uFFFDo"}, // named as it can be shown
		{"inside a list of objects in a list", `{"cfe":{"detalles":[{"codigosItem":[{"codigo":"x"},{"codigo":"\udfff"}]}]}}`,
			"cfe.detalles[0].codigosItem[1].codigo"},
		{"a hosted-only field the agent ignores", "{\"codComercio\":\"\xc0\",\"cfe\":{}}", "codComercio"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(tc.body))
			if RespuestaOf(err) != RespRechazoValidacion || ErrorCode(err) != EINVALID {
				t.Fatalf("got %v, want a rejection 01", err)
			}
			fields := ErrorFields(err)
			if len(fields) != 1 || fields[0].Campo != tc.campo || !strings.Contains(fields[0].Mensaje, "UTF-8") {
				t.Fatalf("fields %+v, want one naming %q and UTF-8", fields, tc.campo)
			}
		})
	}

	accepted := []struct{ name, body, want string }{
		{"a surrogate pair", `{"adenda":"Gracias \ud83d\ude00","cfe":{}}`, "Gracias 😀"},
		{"an escaped backslash before u", `{"adenda":"C:\\ud800","cfe":{}}`, `C:\ud800`},
		{"plain UTF-8 with accents", `{"adenda":"Añó 1º — ¡gracias!","cfe":{}}`, "Añó 1º — ¡gracias!"},
		{"an escaped non-surrogate", `{"adenda":"\u00f1\u00D1","cfe":{}}`, "ñÑ"},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeRequest(strings.NewReader(tc.body))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if req.Adenda != tc.want {
				t.Fatalf("adenda %q, want %q", req.Adenda, tc.want)
			}
		})
	}
}

func TestDecodeRequest_EveryBadTextFieldIsNamed(t *testing.T) {
	t.Parallel()
	body := "{\"adenda\":\"\xff\",\"cfe\":{\"detalles\":[{\"nombreItem\":\"\\ud800\"},{\"nombreItem\":\"ok\"},{\"descripcion\":\"\xfe\"}]}}"
	_, err := DecodeRequest(strings.NewReader(body))
	var got []string
	for _, f := range ErrorFields(err) {
		got = append(got, f.Campo)
	}
	want := []string{"adenda", "cfe.detalles[0].nombreItem", "cfe.detalles[2].descripcion"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("fields %v, want %v", got, want)
	}
}

func TestNeedsTextWalk(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		`{"a":"plain"}`:             false,
		`{"a":"\u00e9\u0041"}`:      false,
		`{"a":"\ud83d\ude00"}`:      true, // a pair: walked, and found valid
		`{"a":"x\u12"}`:             false,
		"{\"a\":\"\xe9\"}":          true,
		`{"a":"\uDBFF"}`:            true,
		`{"a":"\u0041","b":"\uD8"}`: true,
	} {
		if got := needsTextWalk([]byte(body)); got != want {
			t.Errorf("needsTextWalk(%q) = %v, want %v", body, got, want)
		}
	}
}

func TestCheckUUID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want string // "" when accepted; else a word of the message
	}{
		{"00000000-0000-4000-8000-000000000001", ""},
		{strings.Repeat("a", MaxUUIDLen), ""},
		{strings.Repeat("ñ", MaxUUIDLen), ""}, // characters, not bytes
		{strings.Repeat("a", MaxUUIDLen+1), "64"},
		{strings.Repeat("x", 100), "64"},
		{strings.Repeat("x", 300), "64"},
		{"", "obligatorio"},
		{"venta\n1", "no admitidos"},
		{"venta\x001", "no admitidos"},
		{"venta\uFFFD", "no admitidos"},
		{"venta\xff", "UTF-8"},
	}
	for _, tc := range tests {
		fs := CheckUUID(tc.id)
		switch {
		case tc.want == "" && fs != nil:
			t.Errorf("CheckUUID(%q) = %+v, want accepted", tc.id, fs)
		case tc.want != "" && (len(fs) != 1 || fs[0].Campo != "uuid" || !strings.Contains(fs[0].Mensaje, tc.want)):
			t.Errorf("CheckUUID(%q) = %+v, want one uuid error with %q", tc.id, fs, tc.want)
		}
	}
}

// BenchmarkNeedsTextWalk is what the UTF-8 rule adds to a valid request.
func BenchmarkNeedsTextWalk(b *testing.B) {
	body := []byte(sdkBody)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if needsTextWalk(body) {
			b.Fatal("the SDK body needs a walk")
		}
	}
}
