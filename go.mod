module github.com/cfe-agent/cfe-agent

go 1.26.8

require github.com/shopspring/decimal v1.6.0

require (
	github.com/beevik/etree v1.8.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/phin1x/go-ipp v1.6.1
	github.com/phpdave11/gofpdi v1.0.14-0.20211212211723-1f10f9844311 // indirect
	github.com/pkg/errors v0.8.1 // indirect
	github.com/signintech/gopdf v0.33.0
	github.com/spf13/cobra v1.10.1 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/image v0.47.0
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	rsc.io/qr v0.2.0
)
