package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// printRequest is the body of the local module's POST /pdf.
type printRequest struct {
	UUID      string `json:"uuid"`
	Impresora string `json:"impresora"`
}

// printThroughModule asks the local module at baseURL to print the signed
// CFE uuid on the printer alias. The module's refusal becomes a *cfe.Error
// carrying its Spanish message: ENOTFOUND for 404, EINVALID for 400 and 422,
// EUNAVAILABLE for 503, EINTERNAL otherwise.
func printThroughModule(ctx context.Context, baseURL, uuid, alias string) error {
	body, err := json.Marshal(printRequest{UUID: uuid, Impresora: alias})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/pdf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return cfe.Errorf(cfe.EUNAVAILABLE, "el módulo local no responde: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	var plain apitype.PlainError
	msg := fmt.Sprintf("el módulo local respondió %d", resp.StatusCode)
	if json.Unmarshal(raw, &plain) == nil && plain.Error != "" {
		msg = plain.Error
	}
	code := cfe.EINTERNAL
	switch resp.StatusCode {
	case http.StatusNotFound:
		code = cfe.ENOTFOUND
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		code = cfe.EINVALID
	case http.StatusServiceUnavailable:
		code = cfe.EUNAVAILABLE
	}
	return &cfe.Error{Code: code, Op: "print", Message: msg}
}
