package main

import "slices"

// consoleWanted reports whether the command line args (without the program
// name) asks for something that prints: a one-shot command, "serve", help or
// the version. Only the bare start of the agent (the tray, as autostart and
// the Start menu run it) prints nothing: on Windows it then stays off the
// console it was started from, so closing that console does not stop it.
func consoleWanted(args []string) bool {
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "-h" || a == "--help" || a == "-v" || a == "--version"
	}) {
		return true
	}
	root := newRootCommand()
	cmd, rest, err := root.Find(args)
	if err != nil || cmd != root {
		return true
	}
	// A word that is no command makes the root fail: the error must be seen.
	return root.ParseFlags(rest) != nil || root.Flags().NArg() > 0
}
