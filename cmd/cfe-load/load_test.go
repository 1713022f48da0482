package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		want   outcome
	}{
		{"signed", 200,
			`{"codigo_respuesta":"00","mensaje_respuesta":"e-Ticket A-7 firmado","tipo_cfe":101,"serie":"A","numero":7}`,
			outcome{series: series{101, "A"}, numero: 7}},
		{"rejected", 200,
			`{"codigo_respuesta":"96","mensaje_respuesta":"zona horaria incorrecta","errores":[]}`,
			outcome{kind: "codigo_respuesta 96", detail: "zona horaria incorrecta"}},
		{"refused by HTTP", 415, `{"ok":false,"error":"se espera application/json"}`,
			outcome{kind: "HTTP 415", detail: `{"ok":false,"error":"se espera application/json"}`}},
		{"not JSON", 200, `<html>`, outcome{kind: "unreadable answer"}},
		{"signed without a number", 200, `{"codigo_respuesta":"00","tipo_cfe":101,"serie":"A"}`,
			outcome{kind: "signed answer without folio"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judge(tt.status, []byte(tt.body))
			if tt.want.detail == "" && got.kind != "" {
				got.detail = "" // the decoder's wording is not ours to pin
			}
			if got != tt.want {
				t.Errorf("judge = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	ticket := series{101, "A"}
	signedAs := func(n int64, lat int) sample {
		return sample{latency: ms1(lat), answered: true, outcome: outcome{series: ticket, numero: n}}
	}
	// Two connections: numbers 1, 2 and 4 signed (3 never answered), one
	// 503 and one transport failure, which has no answer and so no latency.
	perConn := [][]sample{
		{signedAs(1, 10), signedAs(4, 40), {latency: ms1(5), answered: true, outcome: failed("HTTP 503", "no disponible")}},
		{signedAs(2, 20), {latency: ms1(1), outcome: failed("transport", "connection reset")},
			{latency: ms1(7), answered: true, outcome: failed("HTTP 503", "otra vez")}},
	}
	s := summarize(perConn)
	if s.requests != 6 || s.signed != 3 {
		t.Errorf("requests, signed = %d, %d; want 6, 3", s.requests, s.signed)
	}
	if want := map[string]int{"HTTP 503": 2, "transport": 1}; !maps.Equal(s.errors, want) {
		t.Errorf("errors = %v, want %v", s.errors, want)
	}
	if s.errorSample["HTTP 503"] != "no disponible" {
		t.Errorf("the sample of HTTP 503 is %q, want the first one seen", s.errorSample["HTTP 503"])
	}
	// Answered: 10, 40, 5, 20, 7 ms. Sorted 5 7 10 20 40: ranks 3, 5, 5.
	wantLat := latencyStats{count: 5, p50: ms1(10), p90: ms1(40), p99: ms1(40), max: ms1(40)}
	if s.latency != wantLat {
		t.Errorf("latency = %+v, want %+v", s.latency, wantLat)
	}
	wantNums := []seriesCheck{{series: ticket, count: 3, lowest: 1, highest: 4, missing: 1, firstMissing: []int64{3}}}
	if !reflect.DeepEqual(s.numbers, wantNums) {
		t.Errorf("numbers = %+v, want %+v", s.numbers, wantNums)
	}
	if s.ok() {
		t.Error("ok() with failed requests and a gap")
	}

	clean := summarize([][]sample{{signedAs(2, 1), signedAs(1, 1)}, {signedAs(3, 1)}})
	if !clean.ok() {
		t.Errorf("ok() = false for numbers 1..3 with no error: %+v", clean)
	}
	if gap := summarize([][]sample{{signedAs(1, 1), signedAs(3, 1)}}); gap.ok() {
		t.Error("ok() with a gap and no failed request")
	}
	if empty := summarize(nil); empty.ok() {
		t.Error("ok() for a run that signed nothing")
	}
}

func TestThroughput(t *testing.T) {
	t.Parallel()
	s := &summary{requests: 1500, elapsed: 30 * time.Second}
	if got := s.throughput(); got != 50 {
		t.Errorf("throughput = %v, want 1500/30 = 50", got)
	}
}

func TestBodyTemplate(t *testing.T) {
	t.Parallel()
	const id = "0b4e7c1a-2f3d-4e5a-8b6c-7d8e9f0a1b2c"
	decode := func(t *testing.T, b []byte) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}

	t.Run("replaces the uuid, keeps the rest", func(t *testing.T) {
		tmpl, err := newBodyTemplate(defaultBody)
		if err != nil {
			t.Fatal(err)
		}
		want := decode(t, defaultBody)
		if want["uuid"] == id {
			t.Fatal("the example already has the test's uuid")
		}
		want["uuid"] = id
		if got := decode(t, tmpl.with(id)); !reflect.DeepEqual(got, want) {
			t.Errorf("with(id) = %v, want %v", got, want)
		}
	})
	for body, want := range map[string]string{
		`{"cfe":{"idDoc":{"tipoCfe":101}}}`: `{"uuid":"` + id + `","cfe":{"idDoc":{"tipoCfe":101}}}`,
		`{"uuid":"x"}`:                      `{"uuid":"` + id + `"}`,
		` { } `:                             `{"uuid":"` + id + `"}`,
	} {
		tmpl, err := newBodyTemplate([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := string(tmpl.with(id)); got != want {
			t.Errorf("%s: with(id) = %s, want %s", body, got, want)
		}
	}
	for _, bad := range []string{`[1]`, `null`, `"x"`, `{"a":`, ``} {
		if _, err := newBodyTemplate([]byte(bad)); err == nil {
			t.Errorf("newBodyTemplate(%q) accepted a body that is not a JSON object", bad)
		}
	}
}

// The embedded body is the example the README shows, kept true by the
// issuer's tests.
func TestDefaultBodyIsTheExample(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "e-ticket.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(defaultBody, example) {
		t.Error("cmd/cfe-load/e-ticket.json differs from examples/e-ticket.json: copy it again")
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	good := [][]string{
		nil,
		{"-url", "http://localhost:18787", "-c", "2", "-d", "1s", "-n", "10"},
		{"-url", "http://[::1]:18787/"},
		{"-url", "http://127.0.0.2:1"},
		{"-url", "http://192.168.1.10:18787", "-allow-remote", "-token", "t"},
		{"-agent", "bin/cfe-agent", "-starts", "3", "-settle", "0s"},
		{"-rate", "10", "-c", "4", "-d", "30s"},
		{"-rate", "0.5"},
		{"-agent", "bin/cfe-agent", "-latency-report"},
		{"-agent", "bin/cfe-agent", "-latency-report", "-rates", "5, 20.5", "-c", "2", "-d", "5s", "-floor-n", "10", "-dir", "/var/tmp"},
	}
	for _, args := range good {
		if _, err := parseFlags(args, &bytes.Buffer{}); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	bad := map[string][]string{
		"non-loopback":         {"-url", "http://192.168.1.10:18787"},
		"non-loopback name":    {"-url", "https://example.com"},
		"unspecified address":  {"-url", "http://0.0.0.0:18787"},
		"not http":             {"-url", "ftp://127.0.0.1/"},
		"a path":               {"-url", "http://127.0.0.1:18787/sign-cfe"},
		"no connections":       {"-c", "0"},
		"no duration":          {"-d", "0s"},
		"negative total":       {"-n", "-1"},
		"negative rate":        {"-rate", "-1"},
		"rate not a number":    {"-rate", "NaN"},
		"infinite rate":        {"-rate", "+Inf"},
		"report without agent": {"-latency-report"},
		"report with -rate":    {"-agent", "x", "-latency-report", "-rate", "10"},
		"report with -n":       {"-agent", "x", "-latency-report", "-n", "10"},
		"report with -starts":  {"-agent", "x", "-latency-report", "-starts", "2"},
		"bad rates":            {"-agent", "x", "-latency-report", "-rates", "10,x"},
		"zero rate":            {"-agent", "x", "-latency-report", "-rates", "0"},
		"no floor":             {"-agent", "x", "-latency-report", "-floor-n", "0"},
		"rates without report": {"-rates", "10"},
		"dir without agent":    {"-dir", "/var/tmp"},
		"url with agent":       {"-agent", "x", "-url", "http://127.0.0.1:1"},
		"token with agent":     {"-agent", "x", "-token", "t"},
		"starts without":       {"-starts", "3"},
		"no starts":            {"-agent", "x", "-starts", "0"},
		"extra argument":       {"http://127.0.0.1:1"},
	}
	for name, args := range bad {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: %q accepted", name, args)
		}
	}
}
