module github.com/cfe-agent/cfe-agent

go 1.26.8

require github.com/shopspring/decimal v1.6.0

require github.com/beevik/etree v1.8.1
