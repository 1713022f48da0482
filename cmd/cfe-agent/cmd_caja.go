package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/profiles"
)

// newCajaCommand is "cfe-agent caja": the /caja page's helpers.
func newCajaCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "caja", Short: "Página de caja: PIN de supervisor para las notas de crédito"}
	pin := &cobra.Command{
		Use:   "pin",
		Short: "Lee un PIN de supervisor y escribe el valor de caja.supervisor_pin_hash",
		Long: "Lee de la entrada estándar el PIN de supervisor (de 4 a 12 dígitos, en una línea) y escribe su " +
			"hash bcrypt: póngalo en caja.supervisor_pin_hash del perfil en config.yaml (entre comillas simples) " +
			"y reinicie el agente. Con él, la página de caja (/caja) puede emitir notas de crédito pidiendo ese PIN; " +
			"sin él, no las emite. El PIN mismo no se guarda en ningún lado. No hace falta el agente ni la " +
			"configuración para generarlo. Ejemplo: «echo 4821 | cfe-agent caja pin».",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && line == "" {
				return errors.New("escriba el PIN en la entrada estándar, por ejemplo: echo 4821 | cfe-agent caja pin")
			}
			hash, err := profiles.HashPIN(strings.TrimSpace(line))
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), hash)
			return err
		},
	}
	cmd.AddCommand(pin)
	return cmd
}
