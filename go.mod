module github.com/cfe-agent/cfe-agent

go 1.26.8

require (
	github.com/beevik/etree v1.8.1
	github.com/google/uuid v1.6.0
	github.com/gorilla/mux v1.8.1
	github.com/shopspring/decimal v1.6.0
	golang.org/x/sys v0.49.0
)
