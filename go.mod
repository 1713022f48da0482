module github.com/cfe-agent/cfe-agent

go 1.26.8

require (
	github.com/gorilla/mux v1.8.1
	github.com/shopspring/decimal v1.6.0
)

require (
	github.com/beevik/etree v1.8.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.1 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
