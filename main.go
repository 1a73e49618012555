// Command quak backs up an Ente Photos account to a local folder.
package main

import (
	"os"

	"github.com/quak-photos/quak/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
