module github.com/cfe-agent/cfe-agent

go 1.26.8

require (
	github.com/beevik/etree v1.8.1
	github.com/russellhaering/goxmldsig v1.6.1
	github.com/shopspring/decimal v1.6.0
	software.sslmate.com/src/go-pkcs12 v0.7.4
)

require (
	github.com/jonboulle/clockwork v0.5.0 // indirect
	golang.org/x/crypto v0.11.0 // indirect
)
