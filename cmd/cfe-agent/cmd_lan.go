package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/profiles"
)

// maxLANTokens caps "lan token --cantidad".
const maxLANTokens = 100

// newLANCommand is "cfe-agent lan": the LAN mode's helpers.
func newLANCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "lan", Short: "Modo LAN: tokens de las terminales de la red local"}
	var count int
	token := &cobra.Command{
		Use:   "token",
		Short: "Imprime un token nuevo para una terminal de la red local",
		Long: "Imprime un token de terminal nuevo, sacado del generador de números al azar del sistema: " +
			"28 caracteres en 7 grupos de 4 separados por guiones, con dígitos y letras minúsculas " +
			"sin i, l, o ni u (para que ninguno se confunda con otro al escribirlo), 140 bits de azar. " +
			"Cada terminal necesita el suyo: agréguelo a lan.tokens del perfil en config.yaml (o a " +
			"CFE_AGENT_LAN_TOKENS, separados por comas) y configure la terminal para enviarlo como " +
			"«Authorization: Bearer <token>» o «X-CFE-Token: <token>». El agente rechaza al cargar los " +
			"tokens de menos de 128 bits, los de ejemplo y los armados con palabras o datos del perfil. " +
			"No hace falta el agente ni la configuración para generarlo.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 || count > maxLANTokens {
				return fmt.Errorf("--cantidad debe estar entre 1 y %d", maxLANTokens)
			}
			for range count {
				if _, err := fmt.Fprintln(cmd.OutOrStdout(), profiles.NewLANToken()); err != nil {
					return err
				}
			}
			return nil
		},
	}
	token.Flags().IntVarP(&count, "cantidad", "n", 1, "cantidad de tokens a imprimir, uno por línea")
	cmd.AddCommand(token)
	return cmd
}
