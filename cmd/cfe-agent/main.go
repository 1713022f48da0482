// Command cfe-agent is the point-of-sale agent: it signs CFEs offline, serves
// the local REST module, prints, and delivers receipts to the hosted service.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "version" || os.Args[1] == "--version") {
		fmt.Println("cfe-agent", version)
		return
	}
	fmt.Println("cfe-agent", version)
}
